"""A deadline for a whole request, not for each read.

A socket timeout bounds one read: a server that trickles a byte a second, or an event a second
forever, never trips it. A `Deadline` runs its expiry callbacks (which shut the request's socket
down, so that a read blocked in another thread returns at once) from one watchdog thread when
its time is up, however the server paces its bytes.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import socket
import threading
import time
from collections.abc import Callable


class DeadlineExceeded(Exception):
    def __init__(self, seconds: float) -> None:
        super().__init__(f"no complete answer within {seconds:g} s (--timeout)")


class Deadline:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []
        self._expired = False
        self._finished = False
        _WATCHDOG.watch(self)

    @property
    def expired(self) -> bool:
        """The time is up: the watchdog has run the callbacks, or is about to (a transport's own
        timeout, set to the same seconds, can fire a moment before the watchdog does)."""
        return self._expired or time.monotonic() >= self.at

    def remaining(self) -> float:
        """Seconds left, never below a millisecond (a socket timeout of 0 would not block)."""
        return max(0.001, self.at - time.monotonic())

    def check(self) -> None:
        if self._expired:
            raise DeadlineExceeded(self.seconds)

    def on_expiry(self, callback: Callable[[], None]) -> None:
        """Runs `callback` when the deadline passes (at once if it has passed)."""
        with self._lock:
            if not self._expired:
                self._callbacks.append(callback)
                return
        callback()

    def finish(self) -> None:
        """The request is over: its callbacks must not touch a socket that may be reused."""
        with self._lock:
            self._finished = True
            self._callbacks.clear()

    def expire(self) -> None:
        with self._lock:
            if self._finished:
                return
            self._expired = True
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            with contextlib.suppress(Exception):  # a callback must not stop the watchdog
                callback()


def shut_down(sock: socket.socket | None) -> None:
    """Ends every read and write on `sock` now, from any thread (close() would not wake a read
    blocked in another thread). The plain socket's shutdown: on a TLS socket the TLS one would
    try to exchange close_notify with a server that is not answering."""
    if sock is not None:
        with contextlib.suppress(OSError):
            socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _Watchdog:
    """One daemon thread for every deadline of the process, soonest first."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Deadline]] = []
        self._order = itertools.count()
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None

    def watch(self, deadline: Deadline) -> None:
        with self._wake:
            heapq.heappush(self._heap, (deadline.at, next(self._order), deadline))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="bench-deadlines")
                self._thread.daemon = True
                self._thread.start()
            self._wake.notify()

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._heap:
                    self._wake.wait()
                at, _, deadline = self._heap[0]
                delay = at - time.monotonic()
                if delay > 0:
                    self._wake.wait(delay)
                    continue
                heapq.heappop(self._heap)
            deadline.expire()


_WATCHDOG = _Watchdog()
