"""A command a user's configuration names, run with a deadline and bounded output: the
kubeconfig's exec plugin (mlcc/deploy/kubeconfig/), the AWS config's `credential_process`
(mlcc/preflight/bounded/credential_process.py).

The command starts in a session of its own (`start_new_session`), so that its whole process
group can be stopped at once (`os.killpg`, SIGKILL): the command and whatever it forked. Its
stdout is read up to `stdout_max` bytes (one more stops it), its stderr keeps only its last
`stderr_keep` bytes (the message is at the end), both a chunk at a time, never past the
deadline. Once the command itself has exited, children of it that still hold its stdout or
stderr open get `LINGER_S` to close them, then are stopped: what was read is the answer.
A process group still running when this process exits is stopped too (atexit), so an abandoned
run leaves nothing behind.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Literal

CHUNK_BYTES = 64 * 1024
LINGER_S = 0.5  # after the command exited, for its children to close its pipes
_POLL_S = 0.05  # how often a run whose pipes stay open checks that the command still runs

_running: set[int] = set()  # the process groups of runs under way
_running_lock = threading.Lock()


@dataclass(frozen=True)
class Finished:
    """The command ran to its end: its exit code (negative: killed by that signal), its stdout
    and the tail of its stderr (empty when stderr was not captured)."""

    code: int
    stdout: bytes
    stderr_tail: bytes


class Stopped(Exception):
    """The command was stopped: it ran past its deadline or printed more than `stdout_max`."""

    def __init__(self, why: Literal["deadline", "stdout"], stderr_tail: bytes) -> None:
        super().__init__(why)
        self.why = why
        self.stderr_tail = stderr_tail


def run_bounded(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: str | None,
    timeout_s: float,
    stdout_max: int,
    stderr_keep: int,
    interactive: bool = False,
) -> Finished:
    """Run `argv`; Finished, or Stopped, or OSError when it cannot be started (not found, no
    permission, not an executable). `interactive`: stdin and stderr are the terminal's, as the
    kubernetes client runs an exec plugin when its stdout is a terminal."""
    deadline = time.monotonic() + timeout_s
    process = subprocess.Popen(
        list(argv),
        # Not interactive, nobody can answer a prompt: stdin is empty (the client's is ours).
        stdin=None if interactive else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=None if interactive else subprocess.PIPE,
        cwd=cwd,
        env=dict(env),
        start_new_session=True,
    )
    with _running_lock:
        _running.add(process.pid)
    try:
        stdout, stderr, why = _read(process, deadline, stdout_max, stderr_keep)
        if why is None and not _exited(process.pid, max(deadline - time.monotonic(), 0.0)):
            why = "deadline"  # it closed its pipes but runs on
    finally:
        # The group's leader is not reaped before this kill (`_exited` waits with WNOWAIT), so
        # the group id is still its own. What it left running in its group is stopped too.
        _kill_group(process.pid)
        code = process.wait()
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()
        with _running_lock:
            _running.discard(process.pid)
    if why is not None:
        raise Stopped(why, bytes(stderr))
    return Finished(code, bytes(stdout), bytes(stderr))


def _read(
    process: subprocess.Popen[bytes], deadline: float, stdout_max: int, stderr_keep: int
) -> tuple[bytearray, bytearray, Literal["deadline", "stdout"] | None]:
    """Both pipes read until they close, the deadline passes, or stdout is too long."""
    stdout, stderr = bytearray(), bytearray()
    selector = selectors.DefaultSelector()
    pipes: dict[int, tuple[IO[bytes], bytearray]] = {}
    for pipe, sink in ((process.stdout, stdout), (process.stderr, stderr)):
        if pipe is not None:
            selector.register(pipe, selectors.EVENT_READ)
            pipes[pipe.fileno()] = (pipe, sink)
    exited_at: float | None = None
    try:
        while selector.get_map():
            now = time.monotonic()
            if now >= deadline:
                return stdout, stderr, "deadline"
            if exited_at is None and _exited(process.pid, 0.0):
                exited_at = now
            if exited_at is not None and now - exited_at >= LINGER_S:
                break  # the command is gone; what its children still hold is not waited for
            for key, _ in selector.select(min(deadline - now, _POLL_S)):
                pipe, sink = pipes[key.fd]
                chunk = os.read(key.fd, CHUNK_BYTES)
                if not chunk:
                    selector.unregister(pipe)
                    continue
                sink += chunk
                if sink is stdout and len(stdout) > stdout_max:
                    return stdout, stderr, "stdout"
                if sink is stderr and len(stderr) > stderr_keep:
                    del stderr[:-stderr_keep]
    finally:
        selector.close()
    return stdout, stderr, None


def _exited(pid: int, wait_s: float) -> bool:
    """Whether the command has exited, waiting up to `wait_s`; it is left unreaped (WNOWAIT),
    so that its process group id stays its own until `_kill_group`."""
    until = time.monotonic() + wait_s
    while True:
        try:
            found = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return True
        if found is not None:
            return True
        if time.monotonic() >= until:
            return False
        time.sleep(min(_POLL_S, max(until - time.monotonic(), 0.0)))


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # nothing of it is left
        os.killpg(pgid, signal.SIGKILL)


@atexit.register
def _stop_runs_under_way() -> None:
    """Runs abandoned by a thread that was given up on are stopped when this process exits."""
    with _running_lock:
        for pgid in _running:
            _kill_group(pgid)
