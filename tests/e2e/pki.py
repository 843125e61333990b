"""The local cluster's certificates and keys, made fresh for each cluster with `cryptography`.

One CA signs everything: the API server's serving certificate, the admin client certificate
(group system:masters, which every other component also uses), the API server's client
certificate for the "kubelet" (kwok's server) and that server's own certificate. EC P-256 keys:
generated in microseconds, accepted by every component (the service-account signing key too).
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

LOOPBACK = "127.0.0.1"
# The first address of the service range (--service-cluster-ip-range): the `kubernetes`
# Service's, which the API server puts in its own certificate's names.
SERVICE_IP = "10.0.0.1"
API_SERVER_NAMES = ("localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc")
VALIDITY = datetime.timedelta(days=2)


@dataclass(frozen=True)
class KeyPair:
    cert: Path
    key: Path

    def pem(self) -> tuple[bytes, bytes]:
        return self.cert.read_bytes(), self.key.read_bytes()


@dataclass(frozen=True)
class Pki:
    ca: KeyPair
    api_server: KeyPair
    admin: KeyPair
    kubelet_client: KeyPair  # the API server's identity towards kwok's "kubelet" server
    kubelet_server: KeyPair  # kwok's server, at the nodes' InternalIP
    service_account_key: Path  # private: signs tokens
    service_account_public: Path  # public: verifies them


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _name(common: str, organization: str | None = None) -> x509.Name:
    parts = [x509.NameAttribute(NameOID.COMMON_NAME, common)]
    if organization:
        parts.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
    return x509.Name(parts)


def _write_key(key: ec.EllipticCurvePrivateKey, path: Path) -> None:
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    path.chmod(0o600)


def _builder(subject: x509.Name, issuer: x509.Name, public: ec.EllipticCurvePublicKey) -> Any:
    now = datetime.datetime.now(datetime.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + VALIDITY)
    )


def _write_ca(directory: Path) -> tuple[KeyPair, ec.EllipticCurvePrivateKey, x509.Name]:
    key, name = _key(), _name("mlcc-e2e-ca")
    cert = (
        _builder(name, name, key.public_key())
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(key, hashes.SHA256())
    )
    pair = KeyPair(directory / "ca.crt", directory / "ca.key")
    pair.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    _write_key(key, pair.key)
    return pair, key, name


@dataclass(frozen=True)
class _Issuer:
    key: ec.EllipticCurvePrivateKey
    name: x509.Name
    directory: Path

    def issue(
        self,
        stem: str,
        subject: x509.Name,
        server_names: tuple[str, ...] = (),
        server_ips: tuple[str, ...] = (),
    ) -> KeyPair:
        """A leaf certificate: a server's when it has names, else a client's."""
        key = _key()
        serving = bool(server_names or server_ips)
        usage = ExtendedKeyUsageOID.SERVER_AUTH if serving else ExtendedKeyUsageOID.CLIENT_AUTH
        builder = _builder(subject, self.name, key.public_key()).add_extension(
            x509.ExtendedKeyUsage([usage]), critical=False
        )
        if serving:
            alternatives: list[x509.GeneralName] = [x509.DNSName(n) for n in server_names]
            alternatives += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in server_ips]
            builder = builder.add_extension(
                x509.SubjectAlternativeName(alternatives), critical=False
            )
        cert = builder.sign(self.key, hashes.SHA256())
        pair = KeyPair(self.directory / f"{stem}.crt", self.directory / f"{stem}.key")
        pair.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        _write_key(key, pair.key)
        return pair


def _write_service_account_keys(directory: Path) -> tuple[Path, Path]:
    key = _key()
    private, public = directory / "sa.key", directory / "sa.pub"
    _write_key(key, private)
    public.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return private, public


def write_pki(directory: Path) -> Pki:
    directory.mkdir(parents=True, exist_ok=True)
    ca, ca_key, ca_name = _write_ca(directory)
    issuer = _Issuer(ca_key, ca_name, directory)
    sa_private, sa_public = _write_service_account_keys(directory)
    return Pki(
        ca=ca,
        api_server=issuer.issue(
            "apiserver", _name("kube-apiserver"), API_SERVER_NAMES, (LOOPBACK, SERVICE_IP)
        ),
        admin=issuer.issue("admin", _name("mlcc-e2e-admin", "system:masters")),
        kubelet_client=issuer.issue(
            "apiserver-kubelet-client", _name("kube-apiserver-kubelet-client", "system:masters")
        ),
        kubelet_server=issuer.issue("kubelet", _name("kwok-kubelet"), ("localhost",), (LOOPBACK,)),
        service_account_key=sa_private,
        service_account_public=sa_public,
    )
