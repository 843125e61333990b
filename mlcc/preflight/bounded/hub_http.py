"""huggingface_hub's HTTP client for preflight: a deadline, a size limit and no compression.

The library retries a failed or timed-out request with a 60 s timeout and backoff
(`file_download._ETAG_RETRY_TIMEOUT`, `http_backoff`), so every request runs under the fetch's
deadline, which its transport enforces: each request's timeout is cut to the time left, and a
request started after the deadline fails at once with `DeadlineExceeded`, which the library does
not retry (it retries `ConnectError`, `TimeoutException`, `RemoteProtocolError` and
`NetworkError` only).

Every answer is read through a counter: one above MAX_ANSWER_BYTES (by its Content-Length, or by
the bytes that arrive) fails with `AnswerTooLarge`. Requests ask for `Accept-Encoding: identity`
(preflight's answers are small), and an answer compressed anyway fails with
`CompressedAnswer`: a decompressed answer could be a thousand times its size on the wire.

The library's log of each retry stays off the terminal: `last_attempt` gives a thread's last
failed attempt for the one line preflight prints.
"""

from __future__ import annotations

import contextvars
import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx2
from huggingface_hub.utils import logging as hub_logging

from mlcc.engine_contract.values import printable

# The largest answer preflight reads from the Hub: a config.json, a safetensors index (a
# checkpoint of 100k tensors lists them in about 10 MB) or the file metadata of a repository.
MAX_ANSWER_BYTES = 32 * 1024 * 1024
_CHUNK = 64 * 1024

_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "preflight_deadline", default=None
)


class DeadlineExceeded(httpx2.RequestError):
    """The fetch's deadline has passed (not a TimeoutException, so nothing retries it)."""


class AnswerTooLarge(httpx2.RequestError):
    """An answer above MAX_ANSWER_BYTES (nothing retries it)."""


class CompressedAnswer(httpx2.RequestError):
    """An answer with a Content-Encoding preflight did not ask for (nothing retries it)."""


class _Counted(httpx2.SyncByteStream):
    def __init__(self, inner: httpx2.SyncByteStream, request: httpx2.Request) -> None:
        self._inner, self._request = inner, request

    def __iter__(self) -> Iterator[bytes]:
        seen = 0
        for chunk in self._inner:
            seen += len(chunk)
            if seen > MAX_ANSWER_BYTES:
                raise AnswerTooLarge(too_large(), request=self._request)
            yield chunk

    def close(self) -> None:
        self._inner.close()


def too_large() -> str:
    return f"answered more than {MAX_ANSWER_BYTES >> 20} MiB"


class DeadlineTransport(httpx2.BaseTransport):
    def __init__(self) -> None:
        self._inner = httpx2.HTTPTransport()

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        deadline = _deadline.get()
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise DeadlineExceeded("the deadline passed", request=request)
            request.extensions["timeout"] = {
                k: left if v is None else min(v, left)
                for k, v in {
                    "connect": None,
                    "read": None,
                    "write": None,
                    "pool": None,
                    **request.extensions.get("timeout", {}),
                }.items()
            }
        request.headers["Accept-Encoding"] = "identity"
        response = self._inner.handle_request(request)
        encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
        declared = response.headers.get("Content-Length", "").strip()
        problem: httpx2.RequestError | None = None
        if encoding not in ("", "identity"):
            problem = CompressedAnswer(
                f"answered compressed ({encoding[:20]}) although asked not to", request=request
            )
        elif declared.isdigit() and int(declared) > MAX_ANSWER_BYTES:
            problem = AnswerTooLarge(too_large(), request=request)
        if problem is not None:
            response.close()
            raise problem
        assert isinstance(response.stream, httpx2.SyncByteStream)
        response.stream = _Counted(response.stream, request)
        return response

    def close(self) -> None:
        self._inner.close()


def time_left() -> float | None:
    """Seconds left before the fetch's deadline (None: no deadline is set)."""
    deadline = _deadline.get()
    return None if deadline is None else deadline - time.monotonic()


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    token = _deadline.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _deadline.reset(token)


class _LastAttempts(logging.Handler):
    """huggingface_hub retries with its own backoff (huggingface_hub/utils/_http.py,
    http_backoff) and logs each failed attempt to stderr. Preflight says the outcome in one
    line instead, with the last attempt's reason (kept per thread): "connection refused" says
    more than "no answer in time"."""

    _SAID = " thrown while requesting "

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.reasons: dict[int | None, str] = {}

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if self._SAID in message:
            self.reasons[record.thread] = message.split(self._SAID)[0].strip("'")


LAST_ATTEMPTS = _LastAttempts()
# The library sets up its logger (a stderr handler) when it is imported: replace that after.
_hub_log = hub_logging.get_logger("huggingface_hub")
for _handler in list(_hub_log.handlers):
    _hub_log.removeHandler(_handler)
_hub_log.addHandler(LAST_ATTEMPTS)
_hub_log.setLevel(logging.WARNING)
_hub_log.propagate = False


def last_attempt(thread: int | None) -> str | None:
    """Why the thread's last request to the Hub failed, as huggingface_hub logged it."""
    reason = printable(LAST_ATTEMPTS.reasons.get(thread) or "")
    return reason if len(reason) <= 160 else reason[:160] + "..."
