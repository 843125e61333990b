"""A local fake of the Prometheus query API (and of an AMP workspace behind SigV4) that answers
each query with a scripted, possibly hostile, answer: a status, a body, a delay, a drip."""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Answer:
    body: bytes
    status: int = 200
    delay_s: float = 0.0  # before the headers
    drip_s: float = 0.0  # between body bytes (a server that never finishes in time)


def vector(value: str | None, at: float | None = None, **labels: str) -> Answer:
    """An instant vector answer: one sample (`value` as Prometheus writes it), or none."""
    result = [] if value is None else [{"metric": labels, "value": [at or time.time(), value]}]
    document = {"status": "success", "data": {"resultType": "vector", "result": result}}
    return Answer(json.dumps(document).encode())


# query text -> the answer; the queries' time parameter is kept for checks
Script = Callable[[str, float], Answer]


@dataclass
class PrometheusFake:
    script: Script
    check: Callable[[BaseHTTPRequestHandler], str | None] = lambda _: None  # refusal reason
    queries: list[str] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> PrometheusFake:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                refused = fake.check(self)
                if refused is not None:
                    self._send(Answer(json.dumps({"message": refused}).encode(), status=403))
                    return
                parsed = urllib.parse.urlsplit(self.path)
                params = urllib.parse.parse_qs(parsed.query)
                query = params.get("query", [""])[0]
                fake.queries.append(query)
                self._send(fake.script(query, float(params.get("time", ["0"])[0])))

            def _send(self, answer: Answer) -> None:
                time.sleep(answer.delay_s)
                try:
                    self.send_response(answer.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(answer.body)))
                    self.end_headers()
                    if answer.drip_s:
                        for byte in answer.body:
                            self.wfile.write(bytes([byte]))
                            self.wfile.flush()
                            time.sleep(answer.drip_s)
                    else:
                        self.wfile.write(answer.body)
                except (BrokenPipeError, ConnectionResetError):
                    return  # the client gave up, as it should

            def log_message(self, *args: object) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
