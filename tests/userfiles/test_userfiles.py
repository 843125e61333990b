"""mlcc.userfiles on its own: the limits its callers rely on, and the writer's promises."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hostile_files import fifo, odd_contents, run_python, written
from hypothesis import given

from mlcc.userfiles import (
    MAX_READ_BYTES,
    UserFileError,
    check_writable_folder,
    ensure_folder,
    read_json,
    read_text,
    write_text,
)
from mlcc.userfiles.reading import depth_of, parse_json


def test_a_huge_sparse_file_is_refused_by_its_size_without_reading_it(tmp_path: Path) -> None:
    path = tmp_path / "sparse.json"
    with path.open("wb") as file:
        file.truncate(MAX_READ_BYTES + 1)
    with pytest.raises(UserFileError, match=r"--diff .*sparse.json: is too large \("):
        read_text(path, "--diff")


def test_a_device_is_not_a_file() -> None:
    with pytest.raises(UserFileError, match="/dev/zero: is a device, not a file"):
        read_text(Path("/dev/zero"))


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("[" * 65 + "]" * 65, "is nested deeper than 64 levels"),
        ("[" * 100_000, "is nested deeper than 64 levels"),
        ("-" + "1" * 101, "holds a number of 101 digits (at most 100)"),
        ("{'a': 1}", "is not JSON (Expecting property name enclosed in double quotes at line 1"),
        ("\ufeff{}", "is not JSON (Unexpected UTF-8 BOM"),
    ],
)
def test_json_beyond_the_limits_is_refused_with_the_reason(text: str, reason: str) -> None:
    problem, value = parse_json(text)
    assert value is None and problem is not None and problem.startswith(reason)


def test_json_within_the_limits_reads_back() -> None:
    value = {"a": [[[1]]], "b": 10**99, "c": float("inf")}
    assert parse_json(json.dumps(value)) == (None, value)
    assert depth_of(value) == 4 and depth_of(3) == 0


@given(content=odd_contents)
def test_any_content_is_a_value_or_one_refusal_line(
    tmp_path_factory: pytest.TempPathFactory, content: bytes
) -> None:
    path = written(tmp_path_factory.mktemp("odd"), "input.json", content)
    try:
        read_json(path, "--input")
    except UserFileError as error:
        line = str(error)
        assert line.startswith(f"--input {path}: ") and line.isprintable() and "\n" not in line


def test_the_writer_replaces_in_one_step_and_keeps_the_mode(tmp_path: Path) -> None:
    target = written(tmp_path, "plan.json", "old")
    target.chmod(0o600)
    write_text(target, "new\r\n")
    assert target.read_bytes() == b"new\r\n" and target.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.json"]


def test_the_writer_never_replaces_a_fifo_or_a_folder(tmp_path: Path) -> None:
    pipe = fifo(tmp_path)
    with pytest.raises(UserFileError, match="is a FIFO \\(named pipe\\), not a file"):
        write_text(pipe, "x", "--out")
    (tmp_path / "folder").mkdir()
    with pytest.raises(UserFileError, match="is a folder, not a file"):
        write_text(tmp_path / "folder", "x", "--out")
    assert pipe.is_fifo() and (tmp_path / "folder").is_dir()


def test_a_name_too_long_and_a_file_on_the_way_are_refused_by_the_folder_checks(
    tmp_path: Path,
) -> None:
    with pytest.raises(UserFileError, match="the name is too long for the file system"):
        ensure_folder(tmp_path / ("n" * 300), "--out")
    file = written(tmp_path, "file", "x")
    with pytest.raises(UserFileError, match="a part of the path is a file, not a folder"):
        check_writable_folder(file / "below", "--out")
    check_writable_folder(tmp_path / "a" / "b", "--out")
    assert (tmp_path / "a" / "b").is_dir() and not os.listdir(tmp_path / "a" / "b")


def test_a_read_only_file_is_not_replaced(tmp_path: Path) -> None:
    """A rename would replace it whatever its mode: the writer refuses as an open would. Root
    may write anything, so the writer runs without root's override of permission bits."""
    target = written(tmp_path, "Pulumi.dev.yaml", "config: {}\n")
    target.chmod(0o444)
    code = (
        "from pathlib import Path\n"
        "from mlcc.userfiles import UserFileError, write_text\n"
        "try:\n"
        f"    write_text(Path({str(target)!r}), 'replaced')\n"
        "except UserFileError as error:\n"
        "    print(error)\n"
    )
    printed = run_python(code, permission_bits=True)
    assert (
        printed.stdout == f"{target}: cannot write it: permission denied (the file is read-only)\n"
    )
    assert target.read_text() == "config: {}\n"
