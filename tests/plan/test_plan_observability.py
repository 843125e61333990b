"""`mlcc plan --out` and hp:observability: the importable files, the headline, off unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from grafana_foundation_sdk.models.dashboard import Dashboard
from program_runs import IMAGE, REPO

from mlcc.cli import main

DASHBOARD = Path("observability/dashboard.json")
RULES = Path("observability/alert-rules.yaml")


def plan(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["plan", f"--set=hp:image={IMAGE}", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(autouse=True)
def in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)


def test_the_files_are_written_listed_and_the_same_every_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    code, printed, _ = plan(
        capsys, "--stack", "multi", "--set=observability=file", "--out", str(out)
    )
    assert code == 0
    assert "observability: file: files only" in printed
    listed = json.loads((out / "plan.json").read_text())["observability"]
    assert listed == [str(RULES), str(DASHBOARD)]  # sorted
    document = json.loads((out / DASHBOARD).read_text())
    assert Dashboard.from_json(document).uid == "hp-multi-speculation"
    groups = yaml.safe_load((out / RULES).read_text())["groups"]
    assert [g["name"] for g in groups] == ["llama-eagle3.speculation", "qwen-ngram.speculation"]
    first = {p: (out / p).read_bytes() for p in (DASHBOARD, RULES)}
    assert plan(capsys, "--stack", "multi", "--set=observability=file", "--out", str(out))[0] == 0
    assert {p: (out / p).read_bytes() for p in (DASHBOARD, RULES)} == first


def test_off_writes_no_file_and_removes_only_its_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert plan(capsys, "--set=observability=file", "--out", str(out))[0] == 0
    mine = out / "observability" / "notes.md"
    mine.write_text("mine")
    code, printed, _ = plan(capsys, "--out", str(out))
    assert code == 0 and "observability:" not in printed
    assert "observability" not in json.loads((out / "plan.json").read_text())
    assert not (out / DASHBOARD).exists() and not (out / RULES).exists()
    assert mine.read_text() == "mine"


def test_a_file_in_the_way_stops_the_plan_before_writing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    (out / "observability").mkdir(parents=True)
    (out / DASHBOARD).write_text("my dashboard")
    code, _, err = plan(capsys, "--set=observability=file", "--out", str(out))
    assert code == 2
    assert f"--out {out / DASHBOARD}: not written by `mlcc plan`" in err
    assert (out / DASHBOARD).read_text() == "my dashboard"
    assert not (out / "plan.json").exists()


def test_the_headline_says_where_the_rules_go(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    value = '--set=observability={"target":"amp","ampWorkspace":"ws-abc-123"}'
    code, printed, _ = plan(capsys, value, "--out", str(tmp_path))
    assert code == 0
    assert (
        "observability: amp: AMP rule groups namespace hp-dev-speculation in workspace " in printed
    )
    assert "ws-abc-123" in printed
