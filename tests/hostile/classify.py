"""One hostile case, run the way issue #37's judge runs it: the real `mlcc` in a subprocess, its
clients redirected to fakes on 127.0.0.1 through the environment, under a memory cap and a wall
deadline, and its result put in one class.

Classes, checked in this order (the first that applies):
- `hang`: the process was still running at the deadline (the command's own bound, e.g. its
  `--timeout`, plus `MARGIN_S`); its whole process group is killed.
- `unbounded memory`: a MemoryError, or an allocation failure (the address space is capped at the
  command's measured baseline plus `MEMORY_MARGIN_MIB`, see `memory_cap`).
- `traceback`: "Traceback (most recent call last)" in stdout or stderr, a Python crash ("Fatal
  Python error"), or an end by a signal.
- `accepted-bad` / `wrong figure`: the case's oracle, a predicate over the output and the exit
  code stating what a correct answer must say (a refusal, a "not checked" line) and must not say
  (a figure made from a value that is not one).
- `clean`: none of these.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CLASSES = ("clean", "traceback", "hang", "unbounded memory", "accepted-bad", "wrong figure")
MARGIN_S = 15.0  # past the command's own bound: start-up (imports, the offline program) on 2 cores
MEMORY_MARGIN_MIB = 512  # above the command's measured peak address space
OUTPUT_LIMIT = 4 * 1024 * 1024  # bytes of each stream read back
# Every variable that could send a client to a real outside system, or read the user's files.
CLEARED_PREFIXES = ("AWS_", "HF_", "HUGGING_FACE_", "KUBE", "PULUMI_", "MLCC_")
# The launcher `python -m mlcc` under a cap on the address space: set in the child itself, not in
# a preexec_fn (subprocess's documentation: not safe while the parent runs threads, and the fakes
# are threads), in the case's folder, then the `mlcc` command exactly as `python -m mlcc` runs it.
LAUNCHER = (
    "import os, resource, runpy, sys\n"
    "os.chdir(sys.argv.pop(1))\n"
    "cap = int(sys.argv.pop(1))\n"
    "if cap: resource.setrlimit(resource.RLIMIT_AS, (cap, cap))\n"
    "sys.argv[0] = 'mlcc'\n"
    "runpy.run_module('mlcc', run_name='__main__', alter_sys=True)\n"
)


@dataclass(frozen=True)
class Invocation:
    """One `mlcc` command line, what it reads from the environment, and how long it may take."""

    argv: list[str]  # after `mlcc`
    env: Mapping[str, str]  # added to a cleared environment
    bound_s: float  # the command's own bound (its --timeout, the preflight deadline, ...)
    cwd: Path = REPO


@dataclass(frozen=True)
class Ran:
    code: int | None  # None: killed at the deadline
    signal: int | None  # the signal that ended it, when one did
    stdout: str
    stderr: str
    elapsed_s: float
    peak_mib: int  # the peak address space seen (VmPeak)

    @property
    def output(self) -> str:
        return self.stdout + "\n" + self.stderr


@dataclass(frozen=True)
class Finding:
    kind: str  # "accepted-bad" or "wrong figure"
    why: str


Oracle = Callable[[Ran], Finding | None]


@dataclass(frozen=True)
class Case:
    name: str
    system: str  # hub, aws, kubernetes, prometheus, engine
    command: str  # plan --preflight, verify --wait, verify --prometheus, bench
    serve: Callable[[Path], AbstractContextManager[Invocation]]  # the fakes, then the command
    oracle: Oracle
    xfail: str = ""  # a known non-clean case: why (strict: it must stay non-clean)

    @property
    def id(self) -> str:
        return f"{self.system}/{self.command}/{self.name}"


@dataclass(frozen=True)
class Verdict:
    case: Case
    kind: str  # one of CLASSES
    why: str
    ran: Ran
    lines: list[str] = field(default_factory=list)  # the output lines that show it

    def report(self) -> str:
        shown = "\n".join(f"    | {line}" for line in self.lines[:12])
        ran = self.ran
        head = f"{self.case.id}: {self.kind}: {self.why}"
        facts = f"    (exit {ran.code}, {ran.elapsed_s:.1f} s, peak {ran.peak_mib} MiB)"
        return "\n".join(x for x in (head, facts, shown) if x)


# --- running ---------------------------------------------------------------------------------


def environment(added: Mapping[str, str], home: Path) -> dict[str, str]:
    """The caller's environment without anything that points at a real system, plus `added`."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith(CLEARED_PREFIXES)}
    kept.pop("PYTHONDONTWRITEBYTECODE", None)
    kept["PYTHONPATH"] = str(REPO)  # this checkout's mlcc, whatever is installed
    kept["HOME"] = str(home)  # no ~/.kube/config, ~/.aws, ~/.cache/huggingface of the user
    # glibc reserves 64 MiB of address space per thread arena (up to 8 per core): bounded to a
    # few so that the cap measures what the command allocates, not how many threads it ran.
    kept["MALLOC_ARENA_MAX"] = "2"
    return kept | dict(added)


def run_cli(invocation: Invocation, home: Path, cap_bytes: int = 0) -> Ran:
    home.mkdir(parents=True, exist_ok=True)
    out_path, err_path = home / "stdout", home / "stderr"
    deadline_s = invocation.bound_s + MARGIN_S
    where = str(invocation.cwd)
    command = [sys.executable, "-c", LAUNCHER, where, str(cap_bytes), *invocation.argv]
    started = time.monotonic()
    with out_path.open("wb") as out, err_path.open("wb") as err:
        pid = _spawn(command, environment(invocation.env, home), out.fileno(), err.fileno())
        status, peak_kib = _wait(pid, started + deadline_s)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)  # what it started and left (an exec plugin)
    elapsed = time.monotonic() - started
    code: int | None = None
    ended_by: int | None = None
    if status is not None:
        if os.WIFSIGNALED(status):
            ended_by = os.WTERMSIG(status)
        else:
            code = os.waitstatus_to_exitcode(status)
    return Ran(code, ended_by, _read(out_path), _read(err_path), elapsed, peak_kib // 1024)


def _spawn(command: list[str], env: dict[str, str], out: int, err: int) -> int:
    """A new session (its process group is killed whole at the deadline), stdin empty."""
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_DUP2, out, 1),
        (os.POSIX_SPAWN_DUP2, err, 2),
    ]
    return os.posix_spawn(command[0], command, env, file_actions=actions, setsid=True)


def _wait(pid: int, deadline: float) -> tuple[int | None, int]:
    """The wait status (None: killed at the deadline) and the peak address space in KiB."""
    peak = 0
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status, peak
        peak = max(peak, _vm_peak_kib(pid))
        if time.monotonic() > deadline:
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None, peak
        time.sleep(0.02)


def _vm_peak_kib(pid: int) -> int:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    found = re.search(r"^VmPeak:\s+(\d+) kB", text, re.MULTILINE)
    return int(found[1]) if found else 0


def _read(path: Path) -> str:
    with path.open("rb") as stream:
        return stream.read(OUTPUT_LIMIT).decode("utf-8", "replace")


_BASELINES: dict[str, int] = {}


def memory_cap(control: Case, workdir: Path) -> int:
    """The command's peak address space in a run of its healthy `control` case without a cap,
    plus MEMORY_MARGIN_MIB: an answer read whole past a few hundred MiB fails the allocation
    instead of growing until the machine swaps. Measured once per command for this process and
    the processes its parent started (pytest-xdist's workers share it through a file)."""
    if control.command not in _BASELINES:
        _BASELINES[control.command] = _shared_baseline(control, workdir)
    return (_BASELINES[control.command] + MEMORY_MARGIN_MIB) * 1024 * 1024


def _shared_baseline(control: Case, workdir: Path) -> int:
    key = re.sub(r"\W+", "-", control.command)
    path = Path(tempfile.gettempdir()) / f"mlcc-hostile-baseline-{os.getppid()}-{key}"
    with path.open("a+") as shared:
        fcntl.flock(shared, fcntl.LOCK_EX)  # one process measures, the others wait and read
        shared.seek(0)
        if recorded := shared.read().strip():
            return int(recorded)
        with control.serve(workdir / "baseline") as invocation:
            ran = run_cli(invocation, workdir / "baseline")
        verdict = classify(control, ran)
        assert verdict.kind == "clean", "the healthy control is not clean:\n" + verdict.report()
        shared.write(str(ran.peak_mib))
        return ran.peak_mib


# --- classing --------------------------------------------------------------------------------

TRACEBACK = "Traceback (most recent call last)"
CRASH = re.compile(r"Fatal Python error|Segmentation fault|core dumped")
MEMORY = re.compile(
    r"MemoryError|Cannot allocate memory|std::bad_alloc|out of memory|can.t start new thread"
)


def classify(case: Case, ran: Ran) -> Verdict:
    lines = ran.output.splitlines()
    if ran.code is None and ran.signal is None:
        return Verdict(case, "hang", f"still running after {ran.elapsed_s:.1f} s", ran, lines[-8:])
    if MEMORY.search(ran.output):
        return Verdict(
            case, "unbounded memory", "an allocation failed", ran, _around(lines, MEMORY)
        )
    if TRACEBACK in ran.output or CRASH.search(ran.output) or ran.signal is not None:
        why = f"ended by signal {ran.signal}" if ran.signal is not None else "a traceback"
        shown = _around(lines, re.compile(re.escape(TRACEBACK) + "|" + CRASH.pattern))
        return Verdict(case, "traceback", why, ran, shown or lines[-12:])
    finding = case.oracle(ran)
    if finding is not None:
        return Verdict(case, finding.kind, finding.why, ran, _relevant(lines))
    return Verdict(case, "clean", "", ran)


def _around(lines: list[str], pattern: re.Pattern[str]) -> list[str]:
    for index, line in enumerate(lines):
        if pattern.search(line):
            return lines[index : index + 12]
    return []


def _relevant(lines: list[str]) -> list[str]:
    """The lines a reader of a wrong answer looks at first: errors, warnings, verdicts, figures."""
    marks = re.compile(r"error|warning|not checked|FAIL|PASS|preflight|unknown|quota|\$|%")
    return [line for line in lines if marks.search(line)][:12] or lines[-12:]


def run_case(case: Case, control: Case) -> Verdict:
    """`case` under the memory cap measured with `control`, the same command answered well."""
    with tempfile.TemporaryDirectory(prefix="mlcc-hostile-") as scratch:
        cap = memory_cap(control, Path(scratch))
        with case.serve(Path(scratch) / "case") as invocation:
            ran = run_cli(invocation, Path(scratch) / "case", cap)
        return classify(case, ran)


# --- oracles ---------------------------------------------------------------------------------


def says(*texts: str, exit_codes: tuple[int, ...] = ()) -> Oracle:
    """Accepted-bad unless each text is in the output (and the exit code is one of
    `exit_codes`, when given)."""

    def oracle(ran: Ran) -> Finding | None:
        missing = [t for t in texts if t not in ran.output]
        if missing:
            return Finding("accepted-bad", f"the output does not say {missing[0]!r}")
        if exit_codes and ran.code not in exit_codes:
            return Finding("accepted-bad", f"exit {ran.code}, not one of {exit_codes}")
        return None

    return oracle


def says_one_of(*texts: str) -> Oracle:
    def oracle(ran: Ran) -> Finding | None:
        if any(t in ran.output for t in texts):
            return None
        return Finding("accepted-bad", f"the output says none of {list(texts)!r}")

    return oracle


def never(*patterns: str, kind: str = "wrong figure") -> Oracle:
    """`kind` (a wrong figure, unless told) when a regular expression matches a line of the
    output."""
    compiled = [re.compile(p) for p in patterns]

    def oracle(ran: Ran) -> Finding | None:
        for line in ran.output.splitlines():
            for pattern in compiled:
                if pattern.search(line):
                    return Finding(kind, f"{pattern.pattern!r} in {line.strip()!r}")
        return None

    return oracle


def all_of(*oracles: Oracle) -> Oracle:
    def oracle(ran: Ran) -> Finding | None:
        return next((f for o in oracles if (f := o(ran)) is not None), None)

    return oracle
