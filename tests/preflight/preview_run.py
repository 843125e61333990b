"""The model checks' test harness: the fake Hub, a speculative stack, and what preflight says at
`pulumi preview`."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pulumi
import pytest
from aws_accounts import account_served, example_account
from fake_hub import FakeHub
from local_aws import LocalAWS
from program_runs import IMAGE, REPO

from mlcc.cli import main
from mlcc.config import stack as config
from mlcc.preflight import run


def preview(stack: config.StackConfig, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What the program's preflight logs and raises at `pulumi preview` (the models part; the
    account part is tested elsewhere)."""
    logged: list[str] = []
    monkeypatch.setattr(pulumi.log, "warn", lambda message, *a, **k: logged.append(message))
    monkeypatch.setattr(
        pulumi.log, "error", lambda message, *a, **k: logged.append(f"error: {message}")
    )
    monkeypatch.setattr(run, "PARTS", [run.models_part])
    monkeypatch.setattr(run.PROGRAM, "enabled", True)
    with contextlib.suppress(pulumi.RunError):  # its lines were logged as errors
        run.check_before_deploy(stack)
    return logged


def hub_served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    """The fake Hub, reached the way users redirect huggingface_hub, with a fresh cache."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    with FakeHub() as served:
        monkeypatch.setenv("HF_ENDPOINT", served.url)
        yield served


def speculative_stack(algorithm: str, target: str, draft: str, **more: str) -> config.Parsed:
    """A one-endpoint stack of `target` speculating with `draft`; `more` adds hp: keys."""
    values = {"aws:region": "us-east-1", "aws-native:region": "us-east-1"}
    keys = {
        "model": target,
        "speculativeAlgorithm": algorithm,
        "speculativeModel": draft,
        "maxModelLen": "8192",
        **more,
    }
    values |= {f"hp:{k}": v for k, v in keys.items()}
    return config.parse(values, stack="t", secret_keys={"hp:hfToken"})


def aws_served(monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalAWS]:
    """An account that passes the account checks, reached through AWS_ENDPOINT_URL."""
    with account_served(monkeypatch, example_account()) as fake:
        yield fake


def plan_dev(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *extra: str) -> int:
    """`mlcc plan` of the dev stack on a prebuilt image, with `extra` arguments."""
    monkeypatch.chdir(REPO)
    argv = ["plan", "--stack", "dev", "--out", str(tmp_path / "out"), "--set", f"hp:image={IMAGE}"]
    return main([*argv, *extra])
