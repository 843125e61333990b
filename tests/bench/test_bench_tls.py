"""HTTPS endpoints, such as the operator's load balancer with its self-signed certificate."""

from __future__ import annotations

import json
import ssl
from pathlib import Path

import pytest
from bench_fake_engine import EngineBehaviour, FakeEngine

from mlcc.cli import main

# A self-signed certificate for 127.0.0.1, valid for a century, made once with
# `openssl req -x509 -newkey rsa:2048 -nodes -days 36500 -subj /CN=mlcc-bench-test
#  -addext subjectAltName=IP:127.0.0.1`. Its key protects nothing but these tests.
TLS_DIR = Path(__file__).parent / "tls"


@pytest.fixture
def self_signed() -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(TLS_DIR / "test-only-cert.pem", TLS_DIR / "test-only-key.pem")
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
