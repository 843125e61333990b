"""One instant query of the Prometheus HTTP API (`GET /api/v1/query`), bounded in time and size.

Every failure is one `QueryFailed` line saying what went wrong: no answer within the deadline
(the whole request, not each read), an HTTP error, an answer over MAX_ANSWER_BYTES, one that is
not JSON or not the API's `{"status": "success", "data": {"resultType": "vector", ...}}`, a
sample that is not `[time, "number"]`, or one evaluated at another time than asked (a cache or
proxy answering an old query: stale).
"""

from __future__ import annotations

import http.client
import json
import math
import ssl
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass

MAX_ANSWER_BYTES = 1024 * 1024  # a sum() over one endpoint is a few hundred bytes
STALE_AFTER_S = 60.0  # an answer evaluated this far from the time asked is not this query's
_CHUNK = 64 * 1024

# Signs a GET of `url` (the AMP workspace's SigV4), returning the headers to send.
Signer = Callable[[str], Mapping[str, str]]


class QueryFailed(Exception):
    """One line: why the query gave no usable answer."""


@dataclass(frozen=True)
class Source:
    """Where to ask: the API root (`http://host:9090`, `https://aps-workspaces.../workspaces/ws-
    ...`) and, for AMP, the signer."""

    url: str
    signer: Signer | None = None
    shown: str = ""  # how lines name it

    @property
    def name(self) -> str:
        return self.shown or self.url


@dataclass(frozen=True)
class Sample:
    labels: Mapping[str, str]
    value: float  # finite or not: the caller decides what a NaN means


def instant_query(source: Source, expr: str, at: float, timeout_s: float) -> list[Sample]:
    """The query's instant vector at time `at` (Unix seconds)."""
    query = urllib.parse.urlencode({"query": expr, "time": f"{at:.3f}"})
    url = f"{source.url.rstrip('/')}/api/v1/query?{query}"
    headers = dict(source.signer(url)) if source.signer else {}
    status, body = _get(url, headers, timeout_s)
    document = _json(body, status)
    if status != 200 or document.get("status") != "success":
        reason = document.get("error") or f"HTTP {status}"
        raise QueryFailed(f"Prometheus refused the query: {_short(str(reason))}")
    return _vector(document.get("data"), at)


def _get(url: str, headers: Mapping[str, str], timeout_s: float) -> tuple[int, bytes]:
    parsed = urllib.parse.urlsplit(url)
    deadline = time.monotonic() + timeout_s
    connection: http.client.HTTPConnection
    if parsed.scheme == "https":
        context = ssl.create_default_context()
        connection = http.client.HTTPSConnection(parsed.netloc, timeout=timeout_s, context=context)
    elif parsed.scheme == "http":
        connection = http.client.HTTPConnection(parsed.netloc, timeout=timeout_s)
    else:
        raise QueryFailed(f"not an http(s) URL: {_short(url)}")
    try:
        path = parsed.path + (f"?{parsed.query}" if parsed.query else "")
        connection.request("GET", path, headers={**headers, "Accept": "application/json"})
        _left(deadline, timeout_s)
        response = connection.getresponse()
        chunks: list[bytes] = []
        size = 0
        while chunk := _read(connection, response, deadline, timeout_s):
            size += len(chunk)
            if size > MAX_ANSWER_BYTES:
                raise QueryFailed(f"the answer is larger than {MAX_ANSWER_BYTES // 1024} KiB")
            chunks.append(chunk)
        return response.status, b"".join(chunks)
    except TimeoutError:
        raise QueryFailed(f"no answer within {timeout_s:g} s") from None
    except (OSError, http.client.HTTPException, ValueError) as error:
        reason = str(error) or type(error).__name__
        raise QueryFailed(f"cannot reach it: {_short(reason)}") from None
    finally:
        connection.close()


def _read(
    connection: http.client.HTTPConnection,
    response: http.client.HTTPResponse,
    deadline: float,
    timeout_s: float,
) -> bytes:
    left = _left(deadline, timeout_s)
    if connection.sock is not None:
        connection.sock.settimeout(left)  # a server that drips bytes still meets the deadline
    return response.read1(_CHUNK)


def _left(deadline: float, timeout_s: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise QueryFailed(f"no answer within {timeout_s:g} s")
    return left


def _json(body: bytes, status: int) -> dict[str, object]:
    try:
        document = json.loads(body.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        head = body[:60].decode("utf-8", "replace")
        raise QueryFailed(f"the answer (HTTP {status}) is not JSON: {_short(head)}") from None
    if not isinstance(document, dict):
        raise QueryFailed(f"the answer (HTTP {status}) is not a JSON object")
    return document


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _vector(data: object, at: float) -> list[Sample]:
    if not isinstance(data, dict) or data.get("resultType") != "vector":
        kind = data.get("resultType") if isinstance(data, dict) else None
        raise QueryFailed(f"the answer is not an instant vector (resultType {kind!r})")
    result = data.get("result")
    if not isinstance(result, list):
        raise QueryFailed("the answer's result is not a list")
    return [_sample(item, at) for item in result]


def _sample(item: object, at: float) -> Sample:
    if not isinstance(item, dict):
        raise QueryFailed("a sample of the answer is not an object")
    labels, pair = item.get("metric", {}), item.get("value")
    if not isinstance(labels, dict) or not all(isinstance(v, str) for v in labels.values()):
        raise QueryFailed("a sample's labels are not strings")
    if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[1], str)):
        raise QueryFailed('a sample is not [time, "value"]')
    when, text = pair
    if isinstance(when, bool) or not isinstance(when, int | float) or not math.isfinite(when):
        raise QueryFailed("a sample's time is not a number")
    if abs(float(when) - at) > STALE_AFTER_S:
        raise QueryFailed(f"the answer is stale: evaluated {abs(float(when) - at):.0f} s off")
    try:
        if len(text) > 40:  # a float Prometheus writes is at most 24 characters
            raise ValueError(text)
        value = float(text)
    except ValueError:
        raise QueryFailed(f"a sample's value is not a number: {_short(text)}") from None
    return Sample(dict(labels), value)


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= 120 else flat[:117] + "..."
