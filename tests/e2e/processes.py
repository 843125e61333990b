"""The local cluster's processes: started in their own process group, logging to a file each,
ready when their health endpoint answers, killed with their whole group."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

STOP_GRACE_S = 5.0
PROBE_TIMEOUT_S = 2.0
LOG_TAIL_LINES = 25


class ComponentFailed(RuntimeError):
    """A component exited, or did not turn ready in time: its name and its log's tail."""


def free_port() -> int:
    """A port nothing listens on now (the kernel's choice; the component binds it soon after)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class Component:
    name: str
    process: subprocess.Popen[bytes]
    log: Path

    @classmethod
    def start(cls, name: str, argv: Sequence[str], log: Path, cwd: Path) -> Component:
        with log.open("ab") as output:
            process = subprocess.Popen(
                list(argv),
                stdout=output,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=cwd,
                start_new_session=True,  # its own process group: stop() ends all it started
            )
        return cls(name, process, log)

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        try:
            text = self.log.read_text(encoding="utf-8", errors="replace")
        except OSError as error:
            return f"(no log: {error})"
        return "\n".join(text.splitlines()[-lines:])

    def failure(self, what: str) -> ComponentFailed:
        return ComponentFailed(
            f"{self.name} {what}; the last lines of {self.log}:\n{self.log_tail()}"
        )

    def wait_ready(self, probe: Callable[[], bool], timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            code = self.process.poll()
            if code is not None:
                raise self.failure(f"exited with code {code} before it was ready")
            if probe():
                return
            if time.monotonic() > deadline:
                raise self.failure(f"was not ready within {timeout_s:g} s")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.process.poll() is not None:
            return
        _signal_group(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            _signal_group(self.process.pid, signal.SIGKILL)
            self.process.wait(STOP_GRACE_S)


def _signal_group(pid: int, sent: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):  # it ended on its own
        os.killpg(pid, sent)  # start_new_session: the group's id is the process's


def http_ok(url: str, context: ssl.SSLContext | None = None) -> Callable[[], bool]:
    """A probe: does `url` answer 200?"""

    def probe() -> bool:
        try:
            with urllib.request.urlopen(url, timeout=PROBE_TIMEOUT_S, context=context) as answer:
                return int(answer.status) == 200
        except (OSError, urllib.error.URLError):
            return False

    return probe


def client_tls(ca: Path, cert: Path | None = None, key: Path | None = None) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(ca))
    if cert is not None and key is not None:
        context.load_cert_chain(str(cert), str(key))
    return context


def insecure_tls() -> ssl.SSLContext:
    """For a component's own health port, served with a self-signed certificate it makes up."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context
