"""`mlcc verify` with hostile files: `--kubeconfig` and `--project-dir`. One clean `error:` line
naming the file, never a traceback or a hang (a FIFO runs in a subprocess with a timeout, as does
a file unreadable by permission; the rest run in this process)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile_files import (
    HOSTILE_FILES,
    Outcome,
    assert_one_clean_error,
    honours_permission_bits,
    in_process,
    run_mlcc,
)
from hostile_files import written as write_file


def verify(kind: str, *argv: str) -> Outcome:
    """A FIFO could block the open: that case runs in a subprocess, bounded by its timeout."""
    return run_mlcc("verify", *argv) if kind == "a FIFO" else in_process("verify", *argv)


@pytest.mark.parametrize("kind", sorted(HOSTILE_FILES))
def test_a_hostile_kubeconfig_is_one_line_naming_it(tmp_path: Path, kind: str) -> None:
    kubeconfig = HOSTILE_FILES[kind](tmp_path)
    outcome = verify(kind, "--stack", "dev", "--kubeconfig", str(kubeconfig))
    assert_one_clean_error(outcome, naming=f"from kubeconfig {str(kubeconfig)[:60]}")
    assert outcome.code == 1
    assert "write it with: aws eks update-kubeconfig" in outcome.err


def test_an_unreadable_kubeconfig_is_refused(tmp_path: Path) -> None:
    kubeconfig = write_file(tmp_path, "config", "apiVersion: v1\nkind: Config\n")
    kubeconfig.chmod(0o000)
    assert honours_permission_bits(kubeconfig)
    argv = ("verify", "--stack", "dev", "--kubeconfig", str(kubeconfig))
    outcome = run_mlcc(*argv, permission_bits=True)
    assert_one_clean_error(outcome, naming=f"kubeconfig {kubeconfig}: permission denied")


@pytest.mark.parametrize("kind", ["a FIFO", "a name too long for the file system", "invalid UTF-8"])
def test_a_hostile_project_dir_is_a_usage_error(tmp_path: Path, kind: str) -> None:
    project = HOSTILE_FILES[kind](tmp_path)
    outcome = verify(kind, "--stack", "dev", "--project-dir", str(project))
    assert_one_clean_error(outcome, naming=str(project)[:60])
    assert outcome.code == 2
