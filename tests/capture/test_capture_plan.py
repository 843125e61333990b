"""`mlcc plan` shows hp:capture: a line per capturing endpoint and an unpriced cost line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from program_runs import IMAGE, REPO

from mlcc.cli import main
from mlcc.plan.capture import lines as capture_lines
from mlcc.plan.cost_report import headline_lines


def plan(
    tmp_path: Path,
    *sets: str,
    monkeypatch: pytest.MonkeyPatch,
    stack: str = "dev",
) -> int:
    monkeypatch.chdir(REPO)
    argv = ["plan", "--stack", stack, "--out", str(tmp_path), "--set", f"hp:image={IMAGE}"]
    for assignment in sets:
        argv += ["--set", assignment]
    return main(argv)


def test_the_plan_names_endpoint_bucket_sampling_and_retention(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    given = "hp:capture={samplingPercent: 10, retentionDays: 14}"
    assert plan(tmp_path, given, monkeypatch=monkeypatch) == 0
    out = " ".join(capsys.readouterr().out.split())  # the lines wrap at 100 columns
    assert (
        "endpoint hp-dev (inference): vllm" in out
        and "capture: SageMaker endpoint tier, 10% of requests, into "
        "s3://hp-capture-capture-mock/hp-dev/<hash>/sme/, kept 14 days"
        in out
    )
    assert (
        "S3 storage of endpoint hp-dev's captured traffic (10% of requests, kept 14 days): "
        "price unknown (billed per GB-month and per request; no sourced S3 price in the "
        "snapshot), not in the total" in out
    )
    cost = json.loads((tmp_path / "plan.json").read_text())["cost"]
    assert cost["capture"] == [
        "S3 storage of endpoint hp-dev's captured traffic (10% of requests, kept 14 days)"
    ]


def test_a_raw_data_capture_shows_without_a_retention(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = "hp:dataCapture={s3Uri: 's3://mine/x', loadBalancer: {enabled: true}}"
    assert plan(tmp_path, raw, monkeypatch=monkeypatch) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert (
        "capture: load balancer tier, into s3://mine/x/<hash>/alb/, retention not set by this stack"
        in out
    )
    assert "captured traffic" not in out
    assert json.loads((tmp_path / "plan.json").read_text())["cost"]["capture"] == []


def test_kubernetes_only_mode_refuses_it_naming_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code = plan(tmp_path, "hp:capture=true", monkeypatch=monkeypatch, stack="kubernetes")
    err = capsys.readouterr().err
    assert code == 1
    assert "hp:capture: creates an S3 bucket and IAM for the captured traffic" in err
    assert "Traceback" not in err


def test_the_line_of_each_tier_combination() -> None:
    spec = {
        "dataCapture": {
            "s3Uri": "s3://b/e",
            "sagemakerEndpoint": {"enabled": True, "initialSamplingPercentage": 5},
            "modelPod": {"enabled": True},
            "loadBalancer": {"enabled": False},
        }
    }
    text = " ".join(" ".join(capture_lines(spec, [])).split())
    assert text == (
        "capture: SageMaker endpoint and model pod tiers, 5% of requests, 100% of requests, "
        "into s3://b/e/<hash>/{sme,pod}/, retention not set by this stack"
    )
    assert capture_lines({}, []) == []
    assert capture_lines({"dataCapture": {"s3Uri": "s3://b/e"}}, []) == [
        "  capture: no tier enabled"
    ]


def test_the_cost_line_without_a_plan() -> None:
    document = {"region": "us-east-1", "lines": [], "capture": ["S3 storage of endpoint a's x"]}
    text = " ".join(" ".join(headline_lines(document)).split())
    assert "S3 storage of endpoint a's x: price unknown" in text
