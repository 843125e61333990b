"""The I/O of a run: streaming HTTP requests, C at a time, a progress line, and the Prometheus
scrapes before and after."""

from __future__ import annotations

import dataclasses
import http.client
import json
import socket
import ssl
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TextIO
from urllib.parse import urlsplit

from mlcc.bench.prometheus import ExpositionError, Sample, merge, parse_exposition
from mlcc.bench.stream import LineSplitter, RequestResult, StreamTimer, error_message

# (API path, request body, mark_sent) -> the response body, piece by piece, as it arrives.
# A sender whose client does work of its own before the request leaves (SigV4 signing) calls
# mark_sent() when it does leave, so that the latencies are the server's, not the client's.
StreamSender = Callable[[str, dict[str, Any], Callable[[], None]], Iterator[bytes]]


class RequestError(Exception):
    """One request failed; the message says why (status and the server's error message)."""


class TargetError(Exception):
    """The endpoint cannot be benchmarked at all (unreachable, wrong model)."""


class MetricsUnavailable(Exception):
    pass


class HttpTarget:
    def __init__(self, base_url: str, timeout_s: float, verify_tls: bool = True) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise TargetError(f"--url must be http://HOST[:PORT] or https://..., not {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port
        self._base_path = parts.path.rstrip("/")
        self._timeout_s = timeout_s
        self._tls = tls_context(verify_tls)

    def _connection(self) -> http.client.HTTPConnection:
        if self._https:
            return http.client.HTTPSConnection(
                self._host, self._port, timeout=self._timeout_s, context=self._tls
            )
        return http.client.HTTPConnection(self._host, self._port, timeout=self._timeout_s)

    def stream(
        self, path: str, body: dict[str, Any], mark_sent: Callable[[], None]
    ) -> Iterator[bytes]:
        """A new connection per request: a reused one would leave the server's first write
        after an idle pause to Nagle's algorithm and the client's delayed ACK (up to 40 ms)."""
        del mark_sent  # connecting is part of the latency a client sees
        connection = self._connection()
        try:
            connection.request(
                "POST",
                self._base_path + path,
                json.dumps(body).encode(),
                {"Content-Type": "application/json", "Accept": "text/event-stream"},
            )
            response = connection.getresponse()
            if response.status != 200:
                raise RequestError(f"HTTP {response.status}: {_body_message(response.read())}")
            while piece := response.read1(65536):
                yield piece
        finally:
            connection.close()

    def get(self, path: str) -> tuple[int, bytes]:
        connection = self._connection()
        try:
            connection.request("GET", self._base_path + path)
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()


def tls_context(verify: bool) -> ssl.SSLContext:
    """The operator's load balancer may present a self-signed certificate: --insecure."""
    context = ssl.create_default_context()
    if not verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


def _body_message(raw: bytes) -> str:
    try:
        return error_message(json.loads(raw))
    except (json.JSONDecodeError, UnicodeDecodeError):
        return raw.decode("utf-8", "replace").strip()[:200] or "(empty body)"


def describe(error: object) -> str:
    if isinstance(error, socket.timeout | TimeoutError):
        return "timed out"
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    if isinstance(error, socket.gaierror):
        return f"unknown host ({error.strerror})"
    if isinstance(error, http.client.RemoteDisconnected | http.client.IncompleteRead):
        return "the server closed the connection"
    return str(error) or type(error).__name__


def check_target(target: HttpTarget, model: str) -> None:
    """Fail early, with one reason, when the URL does not answer or does not serve `model`.
    A server without `/v1/models` is not judged here: its requests will say what is wrong."""
    try:
        status, raw = target.get("/v1/models")
    except (OSError, http.client.HTTPException) as error:
        raise TargetError(f"cannot reach {target.base_url}: {describe(error)}") from None
    if status != 200:
        return
    try:
        served = [entry["id"] for entry in json.loads(raw)["data"]]
    except (ValueError, KeyError, TypeError):
        return
    if served and model not in served:
        raise TargetError(
            f"model {model!r} is not served at {target.base_url}; "
            f"use --model with one of: {', '.join(map(str, served))}"
        )


def timed_request(
    send: StreamSender,
    path: str,
    body: dict[str, Any],
    clock: Callable[[], float] = time.perf_counter,
) -> RequestResult:
    sent_at = [clock()]
    splitter, timer = LineSplitter(), StreamTimer()
    pieces = send(path, body, lambda: sent_at.__setitem__(0, clock()))
    try:
        for piece in pieces:
            arrived = clock() - sent_at[0]
            for line in splitter.feed(piece):
                timer.feed(line, arrived)
            # After [DONE] the body is still read to its end: closing a socket with unread
            # bytes resets the connection under the server's feet.
        for line in splitter.flush():
            timer.feed(line, clock() - sent_at[0])
    except RequestError as error:
        return RequestResult(ok=False, error=str(error))
    except (OSError, http.client.HTTPException) as error:
        return RequestResult(ok=False, error=describe(error))
    finally:
        close = getattr(pieces, "close", None)
        if close is not None:
            close()
    return dataclasses.replace(timer.result(), sent_at=sent_at[0])


class Progress:
    """One progress line: rewritten in place on a terminal, a line per tenth otherwise."""

    def __init__(self, total: int, out: TextIO | None = None) -> None:
        self._total, self._out = total, out or sys.stderr
        self._done = self._failed = 0
        self._lock = threading.Lock()
        self._tty = self._out.isatty()
        self._step = max(1, total // 10)

    def update(self, result: RequestResult) -> None:
        with self._lock:
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


def run_concurrently(
    work: Sequence[Callable[[], RequestResult]], concurrency: int, progress: Progress
) -> tuple[list[RequestResult], float]:
    """Runs every request, at most `concurrency` at once; returns them in order and the wall
    time from the first send to the last output token."""

    def tracked(job: Callable[[], RequestResult]) -> RequestResult:
        result = job()
        progress.update(result)
        return result

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        results = list(pool.map(tracked, work))
    progress.finish()
    return results, _last_token_at(results, default=time.perf_counter()) - start


def _last_token_at(results: Sequence[RequestResult], default: float) -> float:
    """The run ends with its last output token, not with the closing of its last stream."""
    ends = [r.sent_at + r.e2e_s for r in results if r.sent_at is not None and r.e2e_s is not None]
    return max(ends, default=default)


def scrape(urls: Sequence[str], verify_tls: bool = True, timeout_s: float = 10.0) -> list[Sample]:
    """Every URL's samples, kept apart by URL so that counters from several pods add up."""
    context = tls_context(verify_tls)
    return merge({url: _scrape_one(url, context, timeout_s) for url in urls})


def _scrape_one(url: str, context: ssl.SSLContext, timeout_s: float) -> list[Sample]:
    try:
        with urllib.request.urlopen(url, timeout=timeout_s, context=context) as response:
            text = response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        raise MetricsUnavailable(f"{url} answered HTTP {error.code}") from None
    except (OSError, ValueError, http.client.HTTPException) as error:
        reason = describe(getattr(error, "reason", error))
        raise MetricsUnavailable(f"cannot read {url}: {reason}") from None
    try:
        return parse_exposition(text)
    except ExpositionError as error:
        raise MetricsUnavailable(f"{url}: {error}") from None
