"""What `mlcc bench` accepts on its command line: URLs, counts and seconds within bounds a
machine can run (docs/bench.md, "Limits"). Each parser raises ValueError with the message of
the `error: --flag: ...` line."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from mlcc.userfiles.numbers import number
from mlcc.userfiles.numbers import shown as shown
from mlcc.userfiles.numbers import whole_number as whole_number

MAX_REQUESTS = 100_000  # bench.json keeps every request's figures
MAX_CONCURRENCY = 1024  # each request in flight holds a thread and a connection
MAX_TOKENS = 1_000_000
MAX_TIMEOUT_S = 86_400.0  # one day
MAX_PORT = 65_535  # a TCP port is 16 bits (RFC 793)
_UNSAFE_IN_URL = re.compile(r"[\x00-\x20\x7f]")


@dataclass(frozen=True)
class HttpUrl:
    https: bool
    host: str
    port: int | None
    path: str  # without a trailing slash; with the query, if any


def parse_http_url(text: str, allow_query: bool) -> HttpUrl:
    if _UNSAFE_IN_URL.search(text):
        raise ValueError(f"{shown(text)} contains spaces or control characters")
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{shown(text)} is not http://HOST[:PORT][/PATH] or https://...")
    try:
        port = parts.port
    except ValueError:  # not a number, or beyond 65535
        port = -1
    try:
        parts.hostname.encode("idna")  # what the socket will look up
    except UnicodeError:
        raise ValueError(f"{shown(text)} has no valid host name") from None
    if port is not None and not 1 <= port <= MAX_PORT:
        raise ValueError(f"{shown(text)} has no valid port (1 to {MAX_PORT})")
    if parts.fragment or (parts.query and not allow_query):
        raise ValueError(f"{shown(text)} is a base URL: no ?query or #fragment")
    path = parts.path.rstrip("/") + (f"?{parts.query}" if parts.query else "")
    return HttpUrl(parts.scheme == "https", parts.hostname, port, path)


def seconds(text: str, most: float = MAX_TIMEOUT_S) -> float:
    """A finite number of seconds, more than 0 and at most `most`."""
    return number(text, "seconds", 0, most, above=True)
