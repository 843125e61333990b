"""`mlcc optimize` with a hostile stack file: one clean `error:` line naming it, before any AWS
call, never a traceback or a hang; `--apply` rewrites the file in one step, keeping its mode."""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hostile_files import a_folder, assert_one_clean_error, fifo, in_process, run_mlcc, written
from test_optimize_cli import STACK_FILE

from mlcc.cli.optimize.apply import write_stack_keys
from mlcc.cli.optimize.output import print_job_report

STACK_FILES: dict[str, Callable[[Path], Path]] = {
    "a FIFO": lambda project: fifo(project, "Pulumi.dev.yaml"),
    "a folder": lambda project: a_folder(project, "Pulumi.dev.yaml"),
    "invalid UTF-8": lambda project: written(project, "Pulumi.dev.yaml", b"config:\n  a: \xff\n"),
    "YAML nested 5000 deep": lambda project: written(
        project, "Pulumi.dev.yaml", "config:\n  hp:x: " + "[" * 5000 + "]" * 5000 + "\n"
    ),
}


@pytest.mark.parametrize("kind", sorted(STACK_FILES))
@pytest.mark.parametrize("mode", [("--goal", "latency"), ("--apply", "top")])
def test_a_hostile_stack_file_is_one_usage_line(
    tmp_path: Path, kind: str, mode: tuple[str, str]
) -> None:
    stack = STACK_FILES[kind](tmp_path)
    env_free_of_aws = ("--region", "us-east-1")
    argv = ("optimize", "--stack", "dev", *mode, *env_free_of_aws)
    # A FIFO could block the open: it runs in a subprocess, bounded by its timeout.
    outcome = run_mlcc(*argv, cwd=tmp_path) if kind == "a FIFO" else in_process(*argv, cwd=tmp_path)
    assert_one_clean_error(outcome, naming="Pulumi.dev.yaml")
    assert outcome.code == 2
    assert os.path.lexists(stack)


def test_apply_writes_through_a_symlink_and_keeps_the_files_mode(tmp_path: Path) -> None:
    real = written(a_folder(tmp_path, "stacks"), "Pulumi.dev.yaml", STACK_FILE)
    real.chmod(0o640)
    link = tmp_path / "Pulumi.dev.yaml"
    link.symlink_to(real)
    write_stack_keys(link, {"speculativeNumTokens": 5})
    assert link.is_symlink() and "hp:speculativeNumTokens: 5" in real.read_text()
    assert real.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in real.parent.iterdir()] == ["Pulumi.dev.yaml"]  # no temporary left


def test_the_services_reasons_are_printed_with_control_characters_escaped() -> None:
    out = io.StringIO()
    response = {
        "AIRecommendationJobName": "job\x1b[2J",
        "AIRecommendationJobStatus": "Failed",
        "FailureReason": "bad\ninput\u202e",
    }
    print_job_report(response, out, as_json=False)
    assert out.getvalue() == "job\\x1b[2J: Failed: bad\\ninput\\u202e\n"
