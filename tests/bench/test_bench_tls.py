"""HTTPS endpoints, such as the operator's load balancer with its self-signed certificate."""

from __future__ import annotations

import datetime
import ipaddress
import json
import ssl
from pathlib import Path

import pytest
from bench_fake_engine import EngineBehaviour, FakeEngine
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from mlcc.cli import main


@pytest.fixture(scope="module")
def self_signed(tmp_path_factory: pytest.TempPathFactory) -> ssl.SSLContext:
    """A server context with a self-signed certificate for 127.0.0.1, made for this run (no
    key is kept in the repository)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "mlcc-bench-test")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    folder = tmp_path_factory.mktemp("tls")
    (folder / "cert.pem").write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    (folder / "key.pem").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(folder / "cert.pem", folder / "key.pem")
    return context


def bench(url: str, out: Path, *extra: str) -> int:
    return main(["bench", "--url", url, "--model", "fake/model", "--requests", "2",
                 "--out", str(out), *extra])  # fmt: skip


def test_self_signed_certificate_is_refused_in_one_line(
    self_signed: ssl.SSLContext, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeEngine(EngineBehaviour(), tls=self_signed) as engine:
        assert bench(engine.url, tmp_path) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"mlcc bench: error: cannot reach {engine.url}: ")
    assert "CERTIFICATE_VERIFY_FAILED" in err and err.count("\n") == 1


def test_insecure_accepts_it_for_requests_and_metrics(
    self_signed: ssl.SSLContext, tmp_path: Path
) -> None:
    with FakeEngine(EngineBehaviour(), tls=self_signed) as engine:
        assert bench(engine.url, tmp_path, "--insecure") == 0
    run = json.loads((tmp_path / "bench.json").read_text())
    assert run["completed"] == 2
    assert run["speculative"]["source"] == "vllm counters"
