"""`mlcc plan` with hostile files and paths: `--diff`, `--out` and what `--out` owns, names with
control characters, `--set` indices. Every case is one clean `error:` line (exit 2), never a
traceback or a hang; FIFOs and permissions run in a subprocess with a timeout."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hostile_files import (
    HOSTILE_FILES,
    Outcome,
    a_folder,
    assert_one_clean_error,
    fifo,
    honours_permission_bits,
    in_process,
    odd_contents,
    run_mlcc,
    too_long,
    written,
)
from hypothesis import given, settings
from program_runs import IMAGE, REPO

from mlcc.cli import main


def plan(capsys: pytest.CaptureFixture[str], *argv: str) -> Outcome:
    """The CLI entry in this process (the working folder is the repository)."""
    code = main(["plan", f"--set=hp:image={IMAGE}", *argv])
    captured = capsys.readouterr()
    return Outcome(code, captured.out, captured.err)


@pytest.fixture(autouse=True)
def in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)


# --- --diff ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(HOSTILE_FILES))
def test_a_hostile_diff_file_is_one_line_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    path = HOSTILE_FILES[kind](tmp_path)
    argv = ("--out", str(tmp_path / "out"), "--diff", str(path))
    # A FIFO must not block the open: it runs in a subprocess, bounded by its timeout.
    outcome = run_mlcc("plan", *argv) if kind == "a FIFO" else plan(capsys, *argv)
    assert_one_clean_error(outcome, naming=f"--diff {str(path)[:60]}")
    assert outcome.code == 2
    assert not (tmp_path / "out").exists()


@settings(max_examples=60)
@given(content=odd_contents)
def test_any_diff_file_content_is_planned_against_or_refused_in_one_line(content: bytes) -> None:
    """Whatever plan.json holds: refused naming --diff, or read (then the unknown stack stops
    the run before the program evaluates, so the case stays fast)."""
    with tempfile.TemporaryDirectory() as folder:
        path = written(Path(folder), "plan.json", content)
        outcome = in_process("plan", "--stack", "nosuchstack", "--diff", str(path))
    assert outcome.code == 2
    assert "Traceback" not in outcome.err
    (line,) = outcome.error_lines
    assert line.isprintable()
    assert f"--diff {path}" in line or "no stack file Pulumi.nosuchstack.yaml" in line


def test_a_diff_file_without_read_permission_is_refused(tmp_path: Path) -> None:
    """Root reads any file: the command runs without root's override of permission bits."""
    base = written(tmp_path, "plan.json", '{"resources": []}')
    base.chmod(0o000)
    assert honours_permission_bits(base)
    argv = ("plan", "--out", str(tmp_path / "out"), "--diff", str(base))
    outcome = run_mlcc(*argv, permission_bits=True)
    assert_one_clean_error(outcome, naming=f"--diff {base}: permission denied")


# --- --out ----------------------------------------------------------------------------------

OUT_CASES: dict[str, Callable[[Path], Path]] = {
    "a FIFO": fifo,
    "a name too long for the file system": too_long,
    "a file": lambda folder: written(folder, "plan.txt", "keep me"),
    "a path through a file": lambda folder: written(folder, "plain", "keep me") / "out",
    "a plan.json that is a FIFO": lambda folder: fifo(a_folder(folder, "out"), "plan.json").parent,
    "a plan.json mlcc did not write": lambda folder: (
        written(a_folder(folder, "out"), "plan.json", '{"mine": true}').parent
    ),
    "a plan.json nested 5000 deep": lambda folder: (
        written(a_folder(folder, "out"), "plan.json", "[" * 5000 + "]" * 5000).parent
    ),
}


@pytest.mark.parametrize("kind", sorted(OUT_CASES))
def test_a_hostile_out_is_one_line_and_nothing_is_touched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    out = OUT_CASES[kind](tmp_path)
    before = sorted((p.name, p.is_file() and p.read_bytes()) for p in tmp_path.rglob("*"))
    # A FIFO must not block the open: it runs in a subprocess, bounded by its timeout.
    fifo_inside = "FIFO" in kind
    argv = ("--out", str(out))
    outcome = (
        run_mlcc("plan", f"--set=hp:image={IMAGE}", *argv) if fifo_inside else plan(capsys, *argv)
    )
    assert_one_clean_error(outcome, naming="--out ")
    assert outcome.code == 2
    assert sorted((p.name, p.is_file() and p.read_bytes()) for p in tmp_path.rglob("*")) == before


def test_an_out_folder_without_write_permission_is_refused_before_the_run(
    tmp_path: Path,
) -> None:
    locked = a_folder(tmp_path, "locked")
    locked.chmod(0o555)
    outcome = run_mlcc("plan", "--out", str(locked / "plan"), permission_bits=True)
    assert_one_clean_error(outcome, naming=f"--out {locked / 'plan'}: no permission to write")
    assert not (locked / "plan").exists()


def manifest_names(out: Path) -> list[str]:
    names: list[str] = json.loads((out / "plan.json").read_text())["manifests"]
    return names


def test_out_removes_only_the_manifests_its_last_plan_wrote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert plan(capsys, "--stack", "multi", "--out", str(out)).code == 0
    multi = manifest_names(out)
    assert sorted(p.name for p in (out / "manifests").iterdir()) == sorted(multi)
    mine = [written(out / "manifests", "README.txt", "mine"), written(out, "notes.md", "mine")]
    mine.append(written(out / "manifests", "99-configmap-extra.yaml", "kind: ConfigMap\n"))
    assert plan(capsys, "--stack", "dev", "--out", str(out)).code == 0
    dev = manifest_names(out)
    assert set(multi) - set(dev), "the multi stack has manifests the dev stack does not"
    present = sorted(p.name for p in (out / "manifests").iterdir())
    assert present == sorted([*dev, "README.txt", "99-configmap-extra.yaml"])
    assert all(path.read_text().startswith(("mine", "kind: ConfigMap")) for path in mine)


def test_a_file_in_the_way_of_a_manifest_stops_the_plan_before_writing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = tmp_path / "first"
    assert plan(capsys, "--out", str(first)).code == 0
    name = manifest_names(first)[0]
    out = tmp_path / "out"
    (out / "manifests").mkdir(parents=True)
    users = written(out / "manifests", name, "my own edit\n")
    outcome = plan(capsys, "--out", str(out))
    assert_one_clean_error(outcome, naming=f"--out {users}: not written by `mlcc plan`")
    assert users.read_text() == "my own edit\n"
    assert not (out / "plan.json").exists()


# --- names with control characters ----------------------------------------------------------


def test_control_characters_in_paths_are_escaped_in_every_printed_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = tmp_path / "base\x1b[2J"
    assert plan(capsys, "--out", str(base)).code == 0
    out = tmp_path / "new\nline\u202e"
    outcome = plan(
        capsys, "--set", "speculativeNumTokens=3", "--out", str(out), "--diff", str(base)
    )
    assert outcome.code == 0, outcome.err
    printed = outcome.out.splitlines()
    assert all(line.isprintable() for line in printed)
    assert f"changes against {tmp_path}/base\\x1b[2J: 0 to create, 1 to change" in outcome.out
    assert f"wrote {tmp_path}/new\\nline\\u202e/plan.json" in outcome.out
    missing = tmp_path / "gone\x07"
    outcome = plan(capsys, "--out", str(out), "--diff", str(missing))
    assert_one_clean_error(outcome, naming=f"--diff {tmp_path}/gone\\x07: no plan.json there")


# --- --set indices --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("index", "message"),
    [
        ("9" * 5000, "is too large (at most 9 digits)"),
        ("1" + "0" * 12, "is too large (at most 9 digits)"),
        ("999999999", "index 999999999 is past the end of a list of 1"),
        ("-1", "not a config path"),
        ("\u0663", "not a config path"),  # an Arabic-Indic three: not an ASCII digit
        (" 0", "not a config path"),
    ],
)
def test_an_absurd_set_index_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], index: str, message: str
) -> None:
    outcome = plan(capsys, "--set", f"hp:instanceGroups[{index}].instanceCount=1")
    assert_one_clean_error(outcome, naming="--set hp:instanceGroups[")
    assert outcome.code == 2 and message in outcome.err
    assert len(outcome.err) < 400


def test_a_fifo_as_the_stack_file_is_refused_without_blocking(tmp_path: Path) -> None:
    """`mlcc bench --stack` and `mlcc verify` read a project folder's stack files the same way."""
    (tmp_path / "Pulumi.yaml").write_bytes((REPO / "Pulumi.yaml").read_bytes())
    stack = fifo(tmp_path, "Pulumi.dev.yaml")
    outcome = run_mlcc("verify", "--stack", "dev", "--project-dir", str(tmp_path))
    assert_one_clean_error(outcome, naming=f"{stack}: is a FIFO (named pipe), not a file")
    assert outcome.code == 2
    assert os.path.exists(stack)


def test_a_link_at_a_manifest_is_replaced_never_followed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert plan(capsys, "--out", str(out)).code == 0
    elsewhere = written(tmp_path, "precious.txt", "not a manifest\n")
    first = out / "manifests" / manifest_names(out)[0]
    first.unlink()
    first.symlink_to(elsewhere)
    assert plan(capsys, "--out", str(out)).code == 0
    assert not first.is_symlink() and first.read_text().startswith("apiVersion:")
    assert elsewhere.read_text() == "not a manifest\n"


def test_a_plan_json_from_before_the_manifest_list_still_owns_its_manifests(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert plan(capsys, "--stack", "multi", "--out", str(out)).code == 0
    document = json.loads((out / "plan.json").read_text())
    multi = document.pop("manifests")
    (out / "plan.json").write_text(json.dumps(document))  # as an older mlcc wrote it
    mine = written(out / "manifests", "00-mine.yaml", "kind: Mine\n")
    assert plan(capsys, "--stack", "dev", "--out", str(out)).code == 0
    present = {p.name for p in (out / "manifests").iterdir()}
    assert present == {*manifest_names(out), mine.name}
    assert set(multi) - present, "the multi stack's extra manifests were removed"


@pytest.mark.parametrize("segment", [".a", "[0]", '["x.y"]'])
def test_a_set_path_deeper_than_a_value_may_nest_is_one_short_usage_line(
    capsys: pytest.CaptureFixture[str], segment: str
) -> None:
    outcome = plan(capsys, "--set", f"hp:tags{segment * 5000}=1")
    assert_one_clean_error(outcome, naming="--set hp:tags")
    assert outcome.code == 2 and "a path of more than 32 segments" in outcome.err
    assert len(outcome.err) < 400
