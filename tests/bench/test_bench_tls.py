"""HTTPS endpoints, such as the operator's load balancer with its self-signed certificate."""

from __future__ import annotations

import json
import shutil
import ssl
import subprocess
from pathlib import Path

import pytest
from bench_fake_engine import EngineBehaviour, FakeEngine

from mlcc.cli import main

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")


@pytest.fixture
def self_signed(tmp_path: Path) -> ssl.SSLContext:
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
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
