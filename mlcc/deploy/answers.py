"""One bounded reader for every answer of the Kubernetes API (docs/deploy.md, "Limits").

An answer is read a chunk at a time from the open response, never whole: at most `limit`
bytes, and never past the request's deadline, so an answer of gigabytes, one that never ends
and one trickled a byte at a time all end within the request's time with a bounded buffer.
JSON is parsed by `mlcc.userfiles.parse_json` (nesting and number bounds), never by the
client's model classes, so an answer of the wrong shape is data to judge, not an exception
deep inside the client.
"""

from __future__ import annotations

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
