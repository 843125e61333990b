"""The Hub client's own environment, as preflight meets it: a variable huggingface_hub cannot
start with, and the library's retry chatter, each become one line that names the cause."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from aws_accounts import account_served, example_account
from program_runs import IMAGE, REPO

from mlcc.cli import main


def closed_port() -> int:
    """A port nothing listens on: connections to it are refused at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def plan_argv(tmp_path: Path) -> list[str]:
    out = str(tmp_path / "out")
    return ["plan", "--stack", "dev", "--out", out, "--set", f"hp:image={IMAGE}", "--preflight"]


@pytest.mark.parametrize("variable", ["HF_HUB_ETAG_TIMEOUT", "HF_HUB_DOWNLOAD_TIMEOUT"])
def test_a_timeout_huggingface_hub_cannot_read_is_named_not_a_crash(
    tmp_path: Path, variable: str
) -> None:
    """In a fresh process the library reads these with int() on import: '0.5' stops it."""
    env = {
        **os.environ,
        variable: "0.5",
        "HF_HUB_OFFLINE": "1",
        "HF_HUB_CACHE": str(tmp_path / "cache"),
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{closed_port()}",
        "AWS_ACCESS_KEY_ID": "x",
        "AWS_SECRET_ACCESS_KEY": "y",
    }
    ran = subprocess.run(
        [sys.executable, "-m", "mlcc", *plan_argv(tmp_path)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    assert "Traceback" not in ran.stderr
    lines = [line for line in ran.stderr.splitlines() if line.startswith(f"warning: {variable}")]
    assert lines == [
        f"warning: {variable}: not checked: the models on the Hub ({variable}='0.5' is not "
        "whole seconds (huggingface_hub reads it): unset it or set e.g. 10)"
    ]


def test_a_hub_that_refuses_connections_is_said_once_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """huggingface_hub retries a refused connection with its own backoff and logs each try:
    none of that reaches the user, only one line per model with the last attempt's reason."""
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{closed_port()}")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_ETAG_TIMEOUT", "2")
    with account_served(monkeypatch, example_account()):
        assert main(plan_argv(tmp_path)) == 0
    err = capsys.readouterr().err
    assert "Retrying in" not in err and "thrown while requesting" not in err
    models = ("warning: hp:model: not checked", "warning: hp:speculativeModel: not checked")
    hub_lines = [line for line in err.splitlines() if line.startswith(models)]
    assert len(hub_lines) == 2, err  # the target and the draft
    for line in hub_lines:
        assert "in time; last attempt: " in line or "within 2 s; last attempt: " in line
        assert "Connection refused" in line
