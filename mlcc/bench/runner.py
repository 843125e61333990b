"""A run: streaming requests, C at a time, each within its deadline, and a progress line.

Every request runs in a daemon thread of its own. Its transport shuts its socket down when its
`Deadline` passes; should a transport block where no socket can be reached (botocore before the
answer's headers), the run stops waiting for it a moment later and counts it as timed out, so
no server can hold a run past `--timeout` per request. Ctrl-C ends the run with the requests
finished so far: they are returned, not lost.
"""

from __future__ import annotations

import contextlib
import dataclasses
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from mlcc.bench.client.deadline import Deadline, DeadlineExceeded
from mlcc.bench.client.stream import LineSplitter, RequestResult, StreamError, StreamTimer
from mlcc.bench.client.transport import RequestError, describe

# (API path, request body, mark_sent, deadline) -> the response body, piece by piece, as it
# arrives. A sender whose client does work of its own before the request leaves (SigV4 signing)
# calls mark_sent() when it does leave, so that the latencies are the server's, not the
# client's. A sender ends its reads when the deadline passes (Deadline.on_expiry).
StreamSender = Callable[[str, dict[str, Any], Callable[[], None], Deadline], Iterator[bytes]]
# How long past its deadline a request is waited for before the run gives up on it.
GRACE_S = 2.0
INTERRUPTED = "interrupted (Ctrl-C) before the end of its stream"


def timed_request(
    send: StreamSender,
    path: str,
    body: dict[str, Any],
    timeout_s: float,
    clock: Callable[[], float] = time.perf_counter,
) -> RequestResult:
    deadline = Deadline(timeout_s)
    sent_at = [clock()]
    max_tokens = body.get("max_tokens")
    splitter = LineSplitter()
    timer = StreamTimer(max_tokens if type(max_tokens) is int else None)
    failure: str | None = None
    timed_out = False  # a socket timeout is the deadline too: it is set to the time left
    pieces = send(path, body, lambda: sent_at.__setitem__(0, clock()), deadline)
    try:
        for piece in pieces:
            arrived = clock() - sent_at[0]
            for line in splitter.feed(piece):
                timer.feed(line, arrived)
            if deadline.expired:  # what the socket still held when it was shut down: unread
                break
            # After [DONE] the body is still read to its end (or to the deadline): closing a
            # socket with unread bytes resets the connection under the server's feet.
        for line in splitter.flush():
            timer.feed(line, clock() - sent_at[0])
    except (RequestError, StreamError) as error:
        failure = str(error)
    except Exception as error:  # the transport's own: sockets, HTTP, urllib3 under botocore
        failure, timed_out = describe(error), isinstance(error, TimeoutError)
    finally:
        deadline.finish()
        _close(pieces)
    if (deadline.expired or timed_out) and not timer.done:  # however the stream was cut
        return RequestResult(ok=False, error=str(DeadlineExceeded(timeout_s)))
    if failure is not None and not timer.done:
        return RequestResult(ok=False, error=failure)
    return dataclasses.replace(timer.result(), sent_at=sent_at[0])


def _close(pieces: Iterator[bytes]) -> None:
    close = getattr(pieces, "close", None)
    if close is not None:
        with contextlib.suppress(Exception):  # a transport failing to close is no figure
            close()


class Progress:
    """One progress line: rewritten in place on a terminal, a line per tenth otherwise."""

    def __init__(self, total: int, out: TextIO | None = None) -> None:
        self._total, self._out = total, out or sys.stderr
        self._done = self._failed = 0
        self._tty = self._out.isatty()
        self._step = max(1, total // 10)

    def update(self, result: RequestResult) -> None:
        self._done += 1
        self._failed += not result.ok
        line = f"bench: {self._done}/{self._total} requests done, {self._failed} failed"
        if self._tty:
            self._out.write("\r" + line)
        elif self._done % self._step == 0 or self._done == self._total:
            self._out.write(line + "\n")
        self._out.flush()

    def finish(self) -> None:
        if self._tty:
            self._out.write("\n")


@dataclass(frozen=True)
class RunOutcome:
    results: list[RequestResult]  # the requests sent, in order
    wall_s: float  # from the first send to the last output token
    interrupted: bool


def run_concurrently(
    work: Sequence[Callable[[], RequestResult]],
    concurrency: int,
    progress: Progress,
    timeout_s: float,
) -> RunOutcome:
    """Runs every request, at most `concurrency` at once, each given up on `GRACE_S` after its
    `timeout_s`; on Ctrl-C returns the requests sent so far (those in flight as failed)."""
    finished: queue.SimpleQueue[tuple[int, RequestResult]] = queue.SimpleQueue()
    results: dict[int, RequestResult] = {}
    running: dict[int, float] = {}  # index -> when to give up on it
    start = time.perf_counter()
    interrupted = False
    try:
        for index, job in enumerate(work):
            while len(running) >= concurrency:
                _collect(finished, running, results, progress, timeout_s)
            running[index] = time.monotonic() + timeout_s + GRACE_S
            _start(index, job, finished)
        while running:
            _collect(finished, running, results, progress, timeout_s)
    except KeyboardInterrupt:
        interrupted = True
        results |= dict.fromkeys(running, RequestResult(ok=False, error=INTERRUPTED))
    progress.finish()
    ordered = [results[index] for index in sorted(results)]
    return RunOutcome(ordered, _last_token_at(ordered, time.perf_counter()) - start, interrupted)


def _start(
    index: int,
    job: Callable[[], RequestResult],
    finished: queue.SimpleQueue[tuple[int, RequestResult]],
) -> None:
    def work() -> None:
        try:
            result = job()
        except Exception as error:  # one request's failure, not the run's
            result = RequestResult(ok=False, error=f"{type(error).__name__}: {error}"[:200])
        finished.put((index, result))

    threading.Thread(target=work, name=f"bench-request-{index}", daemon=True).start()


def _collect(
    finished: queue.SimpleQueue[tuple[int, RequestResult]],
    running: dict[int, float],
    results: dict[int, RequestResult],
    progress: Progress,
    timeout_s: float,
) -> None:
    """Waits for one request to end, or for the first one past its time to be given up."""
    wait = min(running.values()) - time.monotonic()
    try:
        index, result = finished.get(timeout=max(wait, 0.0))
    except queue.Empty:
        now = time.monotonic()
        late = [index for index, give_up_at in running.items() if give_up_at <= now]
        for index in late:
            del running[index]
            results[index] = RequestResult(ok=False, error=str(DeadlineExceeded(timeout_s)))
            progress.update(results[index])
        return
    if running.pop(index, None) is not None:  # not one given up on before
        results[index] = result
        progress.update(result)


def _last_token_at(results: Sequence[RequestResult], default: float) -> float:
    """The run ends with its last output token, not with the closing of its last stream."""
    ends = [r.sent_at + r.e2e_s for r in results if r.sent_at is not None and r.e2e_s is not None]
    return max(ends, default=default)
