"""Hostile files and paths, and the real command line run on them with a bounded time.

Each maker writes one kind of file a user might hand to `--diff`, `--out`, `--baseline`,
`--prompts`, `--kubeconfig` or `--project-dir` and returns its path. `run_mlcc` runs
`python -m mlcc ...` in a subprocess with a timeout (a hang fails the test instead of the
suite); `in_process` runs the same command line through `mlcc.cli.main` in the test's process,
for the cases that cannot block and whose subject is not the process. Root reads and writes
every file whatever its permission bits (the capabilities CAP_DAC_OVERRIDE and
CAP_DAC_READ_SEARCH), so with `permission_bits=True` a command started as root runs without
those two (dropped from its bounding set before exec, prctl(2) PR_CAPBSET_DROP): a file with
mode 000 is then truly unreadable to it, as to any other user.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from mlcc.cli import main

REPO = Path(__file__).resolve().parent.parent
TIMEOUT_S = 60
LONG_NAME = "n" * 300  # above the 255 bytes a file name may have on Linux file systems


@dataclass(frozen=True)
class Outcome:
    code: int
    out: str
    err: str

    @property
    def error_lines(self) -> list[str]:
        return [line for line in self.err.splitlines() if line.strip()]


def run_mlcc(
    *argv: str, cwd: Path = REPO, permission_bits: bool = False, timeout: float = TIMEOUT_S
) -> Outcome:
    """`python -m mlcc argv...`; a run past `timeout` raises subprocess.TimeoutExpired.
    `permission_bits`: the command is held to files' permission bits, even when run as root."""
    as_root = os.geteuid() == 0
    completed = subprocess.run(
        [sys.executable, "-m", "mlcc", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
        preexec_fn=_without_permission_override if permission_bits and as_root else None,
    )
    return Outcome(completed.returncode, completed.stdout, completed.stderr)


def in_process(*argv: str, cwd: Path = REPO) -> Outcome:
    """`mlcc argv...` as `mlcc.cli.main` in this process, in `cwd` as `run_mlcc` runs it; an
    exception escapes (and fails the test) where the command would print a traceback."""
    out, err = io.StringIO(), io.StringIO()
    previous = Path.cwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(argv))
    except SystemExit as usage_error:  # argparse's own refusals exit 2
        assert isinstance(usage_error.code, int), usage_error
        code = usage_error.code
    finally:
        os.chdir(previous)
    return Outcome(code, out.getvalue(), err.getvalue())


PR_CAPBSET_DROP = 24  # <linux/prctl.h>
CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 1, 2  # <linux/capability.h>


def _without_permission_override() -> None:
    """In the child before exec: root's override of permission bits leaves the bounding set,
    so the exec'd command keeps every other power of root but obeys mode bits."""
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def run_python(code: str, *, permission_bits: bool = False) -> subprocess.CompletedProcess[str]:
    """`python -c code` (with the repository importable), held to permission bits if asked."""
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
        preexec_fn=_without_permission_override if permission_bits and os.geteuid() == 0 else None,
    )


def honours_permission_bits(path: Path) -> bool:
    """Whether a command run with permission_bits=True is refused reading `path` (a check
    that the simulation holds, so a test never passes for the wrong reason)."""
    outcome = subprocess.run(
        [sys.executable, "-c", f"open({str(path)!r}).close()"],
        capture_output=True,
        check=False,
        preexec_fn=_without_permission_override if os.geteuid() == 0 else None,
    )
    return outcome.returncode != 0


def fifo(folder: Path, name: str = "fifo") -> Path:
    path = folder / name
    os.mkfifo(path)
    return path


def too_long(folder: Path) -> Path:
    return folder / LONG_NAME


def a_folder(folder: Path, name: str = "a-folder") -> Path:
    path = folder / name
    path.mkdir()
    return path


def written(folder: Path, name: str, content: bytes | str) -> Path:
    path = folder / name
    if isinstance(content, str):
        content = content.encode()
    path.write_bytes(content)
    return path


def not_utf8(folder: Path) -> Path:
    return written(folder, "latin1.json", b'{"label": "caf\xe9"}')


def deep_json(folder: Path, depth: int = 5000) -> Path:
    return written(folder, "deep.json", "[" * depth + "]" * depth)


def huge_number(folder: Path, key: str = "label") -> Path:
    return written(folder, "digits.json", f'{{"{key}": {"7" * 5000}}}')


HOSTILE_FILES: dict[str, Callable[[Path], Path]] = {
    "a FIFO": fifo,
    "a name too long for the file system": too_long,
    "a folder": a_folder,
    "invalid UTF-8": not_utf8,
    "JSON nested 5000 deep": deep_json,
    "a 5000-digit number": huge_number,
    "a path through a file": lambda folder: written(folder, "plain", "x") / "below",
    "nothing there": lambda folder: folder / "missing.json",
}


def assert_one_clean_error(outcome: Outcome, *, naming: str) -> None:
    """Refused with exit 1 or 2, one `error:` line that names the file, and no traceback."""
    assert outcome.code in (1, 2), outcome
    assert "Traceback" not in outcome.err, outcome.err
    assert len(outcome.error_lines) == 1, outcome.err
    (line,) = outcome.error_lines
    assert "error: " in line and naming in line, line
    assert line.isprintable(), line


# --- odd contents -----------------------------------------------------------------------

_FRAGMENTS = [
    "[" * 3000,
    "]" * 10,
    "{",
    '"resources": ',
    '"label": ',
    "9" * 4400,
    "-" + "1" * 5000,
    "1e999999",
    "NaN",
    "-Infinity",
    "\ufeff",
    "\x00",
    "\x1b[2J",
    "\u202e",
    "\ud800",
    '"\\ud800"',
    "null",
    "true",
    '"x"',
    ", ",
    ": ",
    "\n",
]

odd_json_text = st.lists(st.sampled_from(_FRAGMENTS) | st.text(max_size=20), max_size=12).map(
    "".join
)
odd_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
# Bytes as a file may hold them: random, JSON-looking text with hostile fragments, real JSON.
odd_contents = st.one_of(
    st.binary(max_size=200),
    odd_json_text.map(lambda text: text.encode("utf-8", "surrogatepass")),
    odd_values.map(lambda value: json.dumps(value).encode()),
)
