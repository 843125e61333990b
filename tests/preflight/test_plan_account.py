"""`mlcc plan --preflight` with the account part: refusals are `error: hp:key:` lines with exit
1, a denied call is a warning, the headline shows the account line; never a traceback."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from aws_accounts import Account, account_served, example_account
from fake_hub import TOKEN, FakeHub, HubBehaviour
from local_aws import Reply, error
from program_runs import IMAGE, REPO

from mlcc.cli import main

GATED = {"meta-llama/Llama-3.1-8B-Instruct"}


def plan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stack: str, *extra: str) -> int:
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    argv = ["plan", "--stack", stack, "--out", str(tmp_path / "out"), "--set", f"hp:image={IMAGE}"]
    with FakeHub(HubBehaviour(gated=GATED)) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        return main([*argv, "--preflight", *extra])


def test_a_zero_quota_refuses_the_plan_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = Account(defaults={"ml.g5.12xlarge for cluster usage": 0.0})
    with account_served(monkeypatch, scenario):
        assert plan(tmp_path, monkeypatch, "dev") == 1
    err = capsys.readouterr().err
    (line,) = [x for x in err.splitlines() if x.startswith("error: ")]
    assert line.startswith(
        "error: hp:instanceGroups: SageMaker quota 'ml.g5.12xlarge for cluster usage'"
    )
    assert "--desired-value 1 --region us-east-1" in line
    assert "Traceback" not in err


def test_a_denied_call_is_a_warning_and_the_plan_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with account_served(monkeypatch, example_account()) as aws:
        aws.on("ListServiceQuotas", error("AccessDeniedException", "no", 403), "service-quotas")
        assert plan(tmp_path, monkeypatch, "dev") == 0
    captured = capsys.readouterr()
    assert "grant the IAM action servicequotas:ListServiceQuotas" in captured.err
    assert "Traceback" not in captured.err
    assert "\naccount: quota ml.g5.12xlarge for cluster usage: not checked" in (captured.out)


def test_strict_makes_a_silent_aws_an_error_at_the_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # the per-fetch deadline: 1 s, not 10 (whole seconds: huggingface_hub reads it with int())
    monkeypatch.setenv("HF_HUB_ETAG_TIMEOUT", "1")
    with account_served(monkeypatch, example_account()) as aws:
        answer = aws.scripts[("eks", "DescribeAddonVersions")]
        aws.on("DescribeAddonVersions", lambda r: replace(answer(r), delay_s=30), "eks")
        assert plan(tmp_path, monkeypatch, "dev", "--set", "hp:preflight=strict") == 1
    err = capsys.readouterr().err
    assert (
        "error: hp:kubernetesVersion: not checked: the amazon-sagemaker-hyperpod-inference" in err
    )
    assert "Traceback" not in err


def test_the_memory_check_takes_the_gpu_memory_ec2_reports_in_the_account(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An account whose EC2 reports 16 GiB A10Gs: the models part's figure follows it, and
    both parts share one DescribeInstanceTypes call."""
    smaller = {
        "Name": "A10G",
        "Manufacturer": "NVIDIA",
        "Count": 4,
        "MemoryInfo": {"SizeInMiB": 16384},
    }
    info = {"InstanceType": "g5.12xlarge", "GpuInfo": {"Gpus": [smaller]}}
    with account_served(monkeypatch, example_account()) as aws:
        aws.on("DescribeInstanceTypes", Reply(body={"InstanceTypes": [info]}), "ec2")
        assert plan(tmp_path, monkeypatch, "dev") == 0
    out = capsys.readouterr().out
    assert "14.7 GiB usable per GPU" in out  # 16 GiB x 0.92, not the table's 22888 MiB
    gpu_types = [c.params for c in aws.calls if c.operation == "DescribeInstanceTypes"]
    assert gpu_types.count({"InstanceTypes": ["g5.12xlarge"]}) == 1  # the system nodes' aside
