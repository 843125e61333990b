"""Hostile answers of the local Kubernetes API (fake_kube_api.Behaviour.custom): floods, endless
logs and lines, lists of thousands, pages that repeat, 410 Gone, 429 with Retry-After, bodies
that are not JSON, headers that never end. Each route counts the bytes it sent, so a test can
prove the client stopped reading (bounded memory) from the outcome, not from timings."""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

Route = Callable[[BaseHTTPRequestHandler, str, dict[str, str], int], bool]


@dataclass
class Sent:
    """Bytes sent by the hostile routes, per route name."""

    bytes: dict[str, int] = field(default_factory=dict)

    def add(self, name: str, count: int) -> None:
        self.bytes[name] = self.bytes.get(name, 0) + count


def send(
    handler: BaseHTTPRequestHandler,
    code: int,
    body: bytes,
    content_type: str = "application/json",
    headers: Iterable[tuple[str, str]] = (),
) -> None:
    handler.send_response(code)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(body)))
    for name, value in headers:
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(body)


def stream(
    handler: BaseHTTPRequestHandler,
    chunks: Iterable[bytes],
    sent: Sent,
    name: str,
    content_type: str = "application/json",
) -> None:
    """A chunked answer of `chunks` (endless ones too) until the client stops reading."""
    handler.send_response(200)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()
    try:
        for chunk in chunks:
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            sent.add(name, len(chunk))
        handler.wfile.write(b"0\r\n\r\n")
    except OSError:  # the client closed the connection: what a bounded reader does
        pass
    handler.close_connection = True


def is_watch(path: str, query: dict[str, str]) -> bool:
    return path.endswith("/inferenceendpointconfigs") and query.get("watch") == "true"


def is_log(path: str) -> bool:
    return path.endswith("/log")


def watch_lines(endpoint: dict[str, Any], versions: Iterable[str]) -> Iterable[bytes]:
    for version in versions:
        shown = json.loads(json.dumps(endpoint))
        shown["metadata"]["resourceVersion"] = version
        yield json.dumps({"type": "MODIFIED", "object": shown}).encode() + b"\n"


def flooding_watch(endpoint: dict[str, Any], sent: Sent, *, same_version: bool) -> Route:
    """Every watch floods MODIFIED events: of the version asked for (nothing changed), or each
    with a new version."""

    def route(h: BaseHTTPRequestHandler, path: str, query: dict[str, str], _i: int) -> bool:
        if not is_watch(path, query):
            return False
        asked = query.get("resourceVersion", "0")
        versions = itertools.repeat(asked) if same_version else (f"v{n}" for n in itertools.count())
        stream(h, watch_lines(endpoint, versions), sent, "watch")
        return True

    return route


def silent_watch(seconds: float) -> Route:
    """Every watch opens and sends nothing for `seconds` (whatever its timeoutSeconds says)."""

    def route(h: BaseHTTPRequestHandler, path: str, query: dict[str, str], _i: int) -> bool:
        if not is_watch(path, query):
            return False
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        time.sleep(seconds)
        h.close_connection = True
        return True

    return route


def endless(chunk: bytes) -> Iterable[bytes]:
    return itertools.repeat(chunk)


def route_of(answers: dict[str, Route]) -> Route:
    """The first of several routes that answers."""

    def route(h: BaseHTTPRequestHandler, path: str, query: dict[str, str], i: int) -> bool:
        return any(r(h, path, query, i) for r in answers.values())

    return route


def trickled_headers(seconds: float, stop: threading.Event) -> Route:
    """Every answer's status line and headers sent a byte every `seconds`, and never ending
    (until `stop`): no socket read of the client ever waits long enough to time out."""

    def route(h: BaseHTTPRequestHandler, _path: str, _q: dict[str, str], _i: int) -> bool:
        head = itertools.chain([b"HTTP/1.1 200 OK\r\n"], itertools.repeat(b"X-Slow: yes\r\n"))
        try:
            for byte in (bytes([b]) for chunk in head for b in chunk):
                if stop.wait(seconds):
                    break
                h.wfile.write(byte)
                h.wfile.flush()
        except OSError:  # the client closed the connection
            pass
        h.close_connection = True
        return True

    return route
