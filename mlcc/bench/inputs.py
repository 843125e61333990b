"""What `mlcc bench` accepts on its command line: URLs, counts and seconds within bounds a
machine can run (docs/bench.md, "Limits"). Each parser raises ValueError with the message of
the `error: --flag: ...` line."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

MAX_REQUESTS = 100_000  # bench.json keeps every request's figures
MAX_CONCURRENCY = 1024  # each request in flight holds a thread and a connection
MAX_TOKENS = 1_000_000
MAX_TIMEOUT_S = 86_400.0  # one day
MAX_PORT = 65_535  # a TCP port is 16 bits (RFC 793)
_SHOWN = 40
_UNSAFE_IN_URL = re.compile(r"[\x00-\x20\x7f]")
_INTEGER = re.compile(r"([+-]?)([0-9]+)")


@dataclass(frozen=True)
class HttpUrl:
    https: bool
    host: str
    port: int | None
    path: str  # without a trailing slash; with the query, if any


def shown(text: str) -> str:
    """The user's text in an error line: quoted, control characters escaped, cut when long."""
    return repr(text if len(text) <= _SHOWN else text[:_SHOWN] + "...")


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


def whole_number(text: str, most: int) -> int:
    """An integer from 1 to `most`, written in decimal digits."""
    match = _INTEGER.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{shown(text)} is not a whole number")
    sign, digits = match.groups()
    if sign == "-" or len(digits.lstrip("0")) > len(str(most)) or not 1 <= int(digits) <= most:
        raise ValueError(f"{shown(text)} must be from 1 to {most:,}")
    return int(digits)


def seconds(text: str, most: float = MAX_TIMEOUT_S) -> float:
    """A finite number of seconds, more than 0 and at most `most`."""
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{shown(text)} is not a number of seconds") from None
    if not math.isfinite(value) or not 0 < value <= most:
        raise ValueError(f"{shown(text)} must be more than 0 and at most {most:g} seconds")
    return value
