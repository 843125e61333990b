"""HTTP for `mlcc bench`: the streamed completions, the models check and the metrics scrapes,
each a request whose whole answer must arrive before its `Deadline` (mlcc/bench/client/deadline.py).

Each request gets its own connection: a reused one would leave the server's first write after
an idle pause to Nagle's algorithm and the client's delayed ACK (up to 40 ms). Answers are read
up to a size limit, so a server that streams without end cannot fill the memory either.
"""

from __future__ import annotations

import functools
import http.client
import json
import socket
import ssl
from collections.abc import Callable, Iterator
from typing import Any

from mlcc.bench.client.deadline import Deadline, DeadlineExceeded, shut_down
from mlcc.bench.client.stream import error_message
from mlcc.bench.inputs import HttpUrl, parse_http_url
from mlcc.bench.prometheus import ExpositionError, Sample, merge, parse_exposition
from mlcc.engine_contract.values import printable

MAX_ERROR_BODY_BYTES = 64 * 1024
MAX_MODELS_BYTES = 4 * 1024 * 1024
MAX_METRICS_BYTES = 64 * 1024 * 1024  # vLLM's /metrics is a few hundred kB
READ_SIZE = 65536
PROBE_TIMEOUT_S = 30.0  # the models check and each metrics scrape: at most this, or --timeout


class RequestError(Exception):
    """One request failed; the message says why (status and the server's error message)."""


class TargetError(Exception):
    """The endpoint cannot be benchmarked at all (unreachable, wrong model)."""


class MetricsUnavailable(Exception):
    pass


def tls_context(verify: bool) -> ssl.SSLContext:
    """The operator's load balancer may present a self-signed certificate: --insecure."""
    context = ssl.create_default_context()
    if not verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


def connect(
    url: HttpUrl, deadline: Deadline, tls: ssl.SSLContext | None
) -> http.client.HTTPConnection:
    """A connection whose socket the deadline shuts down, wherever the request then is
    (connecting, the TLS handshake, the headers, the body). `tls` is for an https URL only."""
    connection: http.client.HTTPConnection
    if url.https:
        connection = http.client.HTTPSConnection(
            url.host, url.port, timeout=deadline.remaining(), context=tls
        )
    else:
        connection = http.client.HTTPConnection(url.host, url.port, timeout=deadline.remaining())
    deadline.on_expiry(lambda: shut_down(connection.sock))  # connecting, the TLS handshake
    try:
        connection.connect()
        # The socket itself: http.client drops `connection.sock` when it hands a response
        # without a length over to the response object, which goes on reading from it.
        sock = connection.sock
        deadline.on_expiry(lambda: shut_down(sock))
        deadline.check()  # expired while connecting, before there was a socket to shut down
    except BaseException:
        connection.close()
        raise
    return connection


def read_limited(response: http.client.HTTPResponse, limit: int, what: str) -> bytes:
    body = response.read(limit + 1)
    if len(body) > limit:
        raise RequestError(f"{what} is larger than {limit // 1024} KiB")
    return body


class HttpTarget:
    def __init__(self, base_url: str, timeout_s: float, verify_tls: bool = True) -> None:
        try:
            self._url = parse_http_url(base_url, allow_query=False)
        except ValueError as error:
            raise TargetError(f"--url: {error}") from None
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        # Loading the system's certificates takes a while: only for https.
        self._tls = tls_context(verify_tls) if self._url.https else None

    def stream(
        self,
        path: str,
        body: dict[str, Any],
        mark_sent: Callable[[], None],
        deadline: Deadline,
    ) -> Iterator[bytes]:
        del mark_sent  # connecting is part of the latency a client sees
        connection = connect(self._url, deadline, self._tls)
        try:
            connection.request(
                "POST",
                self._url.path + path,
                json.dumps(body).encode(),
                {"Content-Type": "application/json", "Accept": "text/event-stream"},
            )
            response = connection.getresponse()
            if response.status != 200:
                raw = response.read(MAX_ERROR_BODY_BYTES)
                raise RequestError(f"HTTP {response.status}: {body_message(raw)}")
            while piece := response.read1(READ_SIZE):
                yield piece
        finally:
            connection.close()

    def get(self, path: str, limit: int = MAX_MODELS_BYTES) -> tuple[int, bytes]:
        deadline = Deadline(min(self.timeout_s, PROBE_TIMEOUT_S))
        return get(self._url, path, deadline, self._tls, limit)


def get(
    url: HttpUrl, path: str, deadline: Deadline, tls: ssl.SSLContext | None, limit: int
) -> tuple[int, bytes]:
    """Status and body of a GET, whole before the deadline (else DeadlineExceeded)."""
    try:
        connection = connect(url, deadline, tls)
        try:
            connection.request("GET", url.path + path)
            response = connection.getresponse()
            body = read_limited(response, limit, "the answer")
        finally:
            connection.close()
    except (OSError, http.client.HTTPException) as error:
        deadline.check()  # a socket shut down by the deadline fails in many ways
        if isinstance(error, TimeoutError):  # set to the time left: the deadline, a bit early
            raise DeadlineExceeded(deadline.seconds) from None
        raise
    finally:
        deadline.finish()
    deadline.check()  # an answer cut short by the deadline (a bare EOF) is no answer
    return response.status, body


def body_message(raw: bytes) -> str:
    try:
        return error_message(json.loads(raw))
    except (ValueError, RecursionError):  # not JSON (or not UTF-8), or nested too deep
        return raw.decode("utf-8", "replace").strip()[:200] or "(empty body)"


def describe(error: object) -> str:
    if isinstance(error, DeadlineExceeded):
        return str(error)
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
    except (OSError, http.client.HTTPException, DeadlineExceeded, RequestError) as error:
        raise TargetError(f"cannot reach {target.base_url}: {describe(error)}") from None
    if status != 200:
        return
    try:
        served = [entry["id"] for entry in json.loads(raw)["data"]]
    except (ValueError, KeyError, TypeError, RecursionError):
        return
    if served and model not in served:
        names = ", ".join(printable(str(name))[:200] for name in served[:20])
        raise TargetError(
            f"model {model!r} is not served at {target.base_url}; use --model with one of: {names}"
        )


def scrape(urls: list[str], timeout_s: float, verify_tls: bool = True) -> list[Sample]:
    """Every URL's samples, kept apart by URL so that counters from several pods add up."""
    make_tls = functools.cache(lambda: tls_context(verify_tls))  # once, for the first https URL
    return merge({url: _scrape_one(url, timeout_s, make_tls) for url in urls})


def _scrape_one(url: str, timeout_s: float, make_tls: Callable[[], ssl.SSLContext]) -> list[Sample]:
    try:
        parsed = parse_http_url(url, allow_query=True)
        tls = make_tls() if parsed.https else None
        status, raw = get(parsed, "", Deadline(timeout_s), tls, MAX_METRICS_BYTES)
    except (OSError, ValueError, http.client.HTTPException, DeadlineExceeded) as error:
        raise MetricsUnavailable(f"cannot read {url}: {describe(error)}") from None
    except RequestError as error:
        raise MetricsUnavailable(f"{url}: {error}") from None
    if status != 200:
        raise MetricsUnavailable(f"{url} answered HTTP {status}")
    try:
        return parse_exposition(raw.decode("utf-8", "replace"))
    except ExpositionError as error:
        raise MetricsUnavailable(f"{url}: {error}") from None
