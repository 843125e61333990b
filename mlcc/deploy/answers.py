"""One bounded reader for every answer of the Kubernetes API (docs/deploy.md, "Limits"), and
the deadline of every request (`within`, at most MAX_UNFINISHED of them left running).

An answer is read a chunk at a time from the open response, never whole: at most `limit`
bytes, and never past the request's deadline, so an answer of gigabytes, one that never ends
and one trickled a byte at a time all end within the request's time with a bounded buffer.
JSON is parsed by `mlcc.userfiles.parse_json` (nesting and number bounds), never by the
client's model classes, so an answer of the wrong shape is data to judge, not an exception
deep inside the client.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from mlcc.userfiles.reading import parse_json

CHUNK_BYTES = 64 * 1024
# A Kubernetes object nests about 15 levels (managedFields' fieldsV1 the deepest).
MAX_ANSWER_DEPTH = 100


class Response(Protocol):
    """What the reader needs of urllib3's HTTPResponse."""

    def read1(self, amt: int | None = None) -> bytes: ...
    def release_conn(self) -> None: ...
    def close(self) -> None: ...


class AnswerError(Exception):
    """The answer is unusable (too large, too slow, not JSON); the message is one clause."""


class DeadlineExceeded(AnswerError):
    def __init__(self, seconds: float) -> None:
        super().__init__(f"no complete answer within {seconds:g} s")


MAX_UNFINISHED = 4  # request threads given up at their deadline and still running


class Unfinished:
    """The requests given up at their deadline whose threads still run: a server that trickles
    its headers a byte at a time keeps each one (and its socket) until it has sent them all. At
    most `most` of them; past it, no request is sent until one ends (one line, which the wait
    treats as a failure that may heal), so a long wait against such a server holds a bounded
    number of threads and sockets."""

    def __init__(self, most: int = MAX_UNFINISHED) -> None:
        self.most = most
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def admit(self) -> None:
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()]
            if len(self._threads) >= self.most:
                raise AnswerError(
                    f"the Kubernetes API has not finished {len(self._threads)} earlier requests: "
                    "none is sent until one of them ends (each was given up at its deadline)"
                )

    def add(self, thread: threading.Thread) -> None:
        with self._lock:
            self._threads.append(thread)

    def alive(self) -> int:
        with self._lock:
            return sum(t.is_alive() for t in self._threads)


def within(
    seconds: float,
    request: Callable[..., Any],
    *args: Any,
    unfinished: Unfinished | None = None,
    **kwargs: Any,
) -> Any:
    """`request(...)`, or DeadlineExceeded once it has run `seconds` (twice for connect + read).

    The client's timeouts bound each socket operation, not the answer: a server trickling its
    headers a byte at a time would hold a request forever. The request runs in a daemon thread,
    given up at the deadline and counted in `unfinished` until it ends (AnswerError, before
    anything is sent, when `unfinished` holds its most already).
    """
    if unfinished is not None:
        unfinished.admit()
    result: list[Any] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            result.append(request(*args, **kwargs))
        except BaseException as error:  # re-raised in the caller's thread
            failure.append(error)

    worker = threading.Thread(target=run, daemon=True, name="kubernetes-request")
    worker.start()
    worker.join(2 * seconds)
    if worker.is_alive():
        if unfinished is not None:
            unfinished.add(worker)
        raise DeadlineExceeded(2 * seconds)
    if failure:
        raise failure[0]
    return result[0]


def size(limit: int) -> str:
    return f"{limit // (1024 * 1024)} MiB" if limit >= 1024 * 1024 else f"{limit // 1024} KiB"


def read_bounded(
    response: Response,
    limit: int,
    deadline: float,
    *,
    cut: bool = False,
    clock: Callable[[], float] = time.monotonic,
    seconds: float = 0.0,
) -> tuple[bytes, bool]:
    """(the body, whether it was cut at `limit`). More than `limit` bytes is AnswerError unless
    `cut`; `deadline` passed (by `clock`) is DeadlineExceeded (`seconds`: the time it allowed).
    The connection is closed when the body was not read to its end."""
    chunks: list[bytes] = []
    total = 0
    finished = False
    try:
        while True:
            if clock() > deadline:
                raise DeadlineExceeded(seconds)
            chunk = response.read1(CHUNK_BYTES)
            if not chunk:
                finished = True
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                if not cut:
                    raise AnswerError(f"the answer is larger than {size(limit)}")
                break
    finally:
        if finished:
            response.release_conn()
        else:
            response.close()
    body = b"".join(chunks)
    return (body[:limit], True) if total > limit else (body, False)


def json_object(body: bytes) -> dict[str, Any]:
    """The JSON object `body` holds, or AnswerError saying why it is none."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        raise AnswerError(f"the answer is not UTF-8 (byte {error.start})") from None
    problem, value = parse_json(text, MAX_ANSWER_DEPTH)
    if problem is not None:
        raise AnswerError(f"the answer {problem}")
    if not isinstance(value, dict):
        raise AnswerError(f"the answer is JSON {type(value).__name__}, not an object")
    return value
