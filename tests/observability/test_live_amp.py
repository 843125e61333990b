"""`mlcc verify --amp-workspace`: queries signed with SigV4 (service `aps`) by botocore, sent to
a local fake of the workspace reached through AWS_ENDPOINT_URL_AMP, which checks the signature
by computing it again from the request it received."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from fleet import endpoint
from prometheus_fake import PrometheusFake
from test_live_hostile import healthy

from mlcc.cli.verify import live as verify_live
from mlcc.prometheus.amp import AmpSetupError, workspace_source

KEY, SECRET, REGION, WORKSPACE = (
    "AKIDEXAMPLE",
    "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
    "eu-west-1",
    "ws-1a2b3c",
)


def sigv4_refusal(request: BaseHTTPRequestHandler) -> str | None:
    """Why the request's SigV4 signature is not the one botocore computes for it, or None."""
    authorization = request.headers.get("Authorization", "")
    date = request.headers.get("X-Amz-Date", "")
    scope = f"Credential={KEY}/{date[:8]}/{REGION}/aps/aws4_request"
    if not authorization.startswith(f"AWS4-HMAC-SHA256 {scope}, SignedHeaders="):
        return f"not a SigV4 authorization for aps in {REGION}: {authorization!r}"
    host = request.headers["Host"]
    again = AWSRequest(method="GET", url=f"http://{host}{request.path}")
    again.headers["X-Amz-Date"] = date
    again.context["timestamp"] = date
    signer = SigV4Auth(Credentials(KEY, SECRET), "aps", REGION)
    canonical = signer.canonical_request(again)
    expected = signer.signature(signer.string_to_sign(again, canonical), again)
    if authorization.rsplit("Signature=", 1)[-1] != expected:
        return "the signature does not match"
    return None


@pytest.fixture
def amp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[PrometheusFake]:
    fake = PrometheusFake(healthy, check=sigv4_refusal).start()
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.setenv("AWS_ENDPOINT_URL_AMP", fake.url)
    yield fake
    fake.stop()


def live_line(workspace: str) -> str:
    args = argparse.Namespace(window_minutes=5, acceptance_floor=None)
    source = workspace_source(workspace, fallback_region=None)
    found = verify_live.live_checks(args, source, "team", [endpoint("hp", "vllm", True)], 5.0)
    return found["hp"].line


def test_signed_queries_reach_the_workspace_and_read_the_figures(amp: PrometheusFake) -> None:
    assert live_line(WORKSPACE) == (
        "PASS live: acceptance 60.0%, mean accepted length 2.80, 40.0 output tokens/s over the "
        f"last 5 min (AMP workspace {WORKSPACE})"
    )
    assert amp.queries and all("[300s]" in q or "offset 300s" in q for q in amp.queries)


def test_a_wrong_secret_is_refused_by_the_workspace_in_one_line(
    amp: PrometheusFake, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
    assert live_line(WORKSPACE) == (
        "FAIL live: cannot check the live figures over the last 5 min: Prometheus refused the "
        f"query: HTTP 403 (AMP workspace {WORKSPACE})"
    )


def test_without_credentials_or_with_a_bad_workspace_it_says_so(
    amp: PrometheusFake, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(AmpSetupError, match="must be a workspace ID"):
        workspace_source("https://example.com/ws", None)
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(AmpSetupError, match=r"^no AWS credentials to sign AMP queries with"):
        workspace_source(WORKSPACE, None)
    monkeypatch.delenv("AWS_REGION")
    with pytest.raises(AmpSetupError, match=r"^no AWS region for the AMP workspace"):
        workspace_source(WORKSPACE, None)


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        ("AWS_PROFILE", "nowhere", "AWS_PROFILE='nowhere': The config profile (nowhere) could not"),
        (
            "AWS_METADATA_SERVICE_TIMEOUT",
            "abc",
            "AWS_METADATA_SERVICE_TIMEOUT='abc' is not a value botocore accepts: fix or unset it",
        ),
    ],
)
def test_an_aws_setting_botocore_refuses_is_one_line_naming_it(
    amp: PrometheusFake, monkeypatch: pytest.MonkeyPatch, variable: str, value: str, said: str
) -> None:
    monkeypatch.setenv(variable, value)
    if variable == "AWS_METADATA_SERVICE_TIMEOUT":  # read only when credentials are looked up
        monkeypatch.delenv("AWS_ACCESS_KEY_ID")
        monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    monkeypatch.delenv("AWS_EC2_METADATA_DISABLED")
    with pytest.raises(AmpSetupError) as refused:
        workspace_source(WORKSPACE, None)
    assert said in str(refused.value) and "\n" not in str(refused.value)
