"""`mlcc plan --preflight` with an HF_HUB_*_TIMEOUT huggingface_hub cannot read: the library's
import would fail on it (the plan said only "the program failed on this configuration:
ValueError: invalid literal ..."). Preflight checks no model then, and says so in one line
naming the variable: a warning under hp:preflight auto, an error under strict."""

from __future__ import annotations

from pathlib import Path

import pytest
from program_runs import IMAGE, REPO

from mlcc.cli import main


def plan(tmp_path: Path, *extra: str) -> int:
    argv = ["plan", "--stack", "dev", "--out", str(tmp_path / "out"), "--set", f"hp:image={IMAGE}"]
    return main([*argv, *extra])


@pytest.mark.parametrize("name", ["HF_HUB_ETAG_TIMEOUT", "HF_HUB_DOWNLOAD_TIMEOUT"])
@pytest.mark.parametrize("given", ["2.5", "abc", "10s", ""])
def test_a_timeout_huggingface_hub_cannot_read_is_one_line_naming_it(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    name: str,
    given: str,
) -> None:
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # never reached
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    monkeypatch.setenv(name, given)
    line = (
        f"{name}: not checked: the models on the Hub ({name}={given!r} is not whole seconds "
        "(huggingface_hub reads it): unset it or set e.g. 10)"
    )
    assert plan(tmp_path, "--preflight") == 0
    assert f"warning: {line}\n" in capsys.readouterr().err
    assert plan(tmp_path, "--preflight", "--set", "hp:preflight=strict") == 1
    assert f"error: {line}\n" in capsys.readouterr().err


def test_without_preflight_the_setting_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("HF_HUB_ETAG_TIMEOUT", "2.5")
    assert plan(tmp_path) == 0
    assert plan(tmp_path, "--preflight", "--set", "hp:preflight=off") == 0
