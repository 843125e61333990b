#!/usr/bin/env python3
"""Overhead of `mlcc bench` itself: its measured latencies against the delays a local fake
engine applies.

The fake (stdlib, 127.0.0.1, in its own process) waits TTFT before the first chunk, then
streams chunks of several tokens, waiting ITL per token in each, and reports the token count in
the usage event. The script runs the real `mlcc bench` in-process at each concurrency and
prints, for TTFT, ITL and end-to-end latency, the measured p50 and its ratio to the applied
delay (1.00 = no overhead).

    python3 benchmarks/bench_client_overhead.py [--requests 40] [--ttft-ms 50] [--itl-ms 5]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import multiprocessing
import sys
import tempfile
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mlcc.cli import main as mlcc_main

MODEL = "bench/model"
CHUNK_TOKENS = (1, 3, 2, 4, 1, 3, 2, 4, 3, 2)  # tokens per streamed chunk, as speculation does


def handler(ttft_s: float, itl_s: float) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for delay, data in events(ttft_s, itl_s):
                time.sleep(delay)
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")

    return Handler


def events(ttft_s: float, itl_s: float) -> Iterator[tuple[float, bytes]]:
    for index, tokens in enumerate(CHUNK_TOKENS):
        delay = ttft_s if index == 0 else tokens * itl_s
        chunk = {"choices": [{"index": 0, "delta": {"content": "x" * tokens}}]}
        yield delay, b"data: " + json.dumps(chunk).encode() + b"\n\n"
    usage = {"choices": [], "usage": {"completion_tokens": sum(CHUNK_TOKENS)}}
    yield 0.0, b"data: " + json.dumps(usage).encode() + b"\n\ndata: [DONE]\n\n"


def serve(ttft_s: float, itl_s: float, ports: multiprocessing.Queue[int]) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(ttft_s, itl_s))
    server.daemon_threads = True
    ports.put(server.server_address[1])
    server.serve_forever()


@contextlib.contextmanager
def fake_engine(ttft_s: float, itl_s: float) -> Iterator[str]:
    """The fake runs in its own process, so that only the client's overhead is measured."""
    ports: multiprocessing.Queue[int] = multiprocessing.Queue()
    process = multiprocessing.Process(target=serve, args=(ttft_s, itl_s, ports), daemon=True)
    process.start()
    try:
        yield f"http://127.0.0.1:{ports.get(timeout=30)}"
    finally:
        process.terminate()
        process.join()


def bench(url: str, requests: int, concurrency: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as out:
        argv = ["bench", "--url", url, "--model", MODEL, "--requests", str(requests),
                "--concurrency", str(concurrency), "--out", out]  # fmt: skip
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = mlcc_main(argv)
        if code != 0:
            raise RuntimeError(f"mlcc bench exited {code}")
        result: dict[str, Any] = json.loads((Path(out) / "bench.json").read_text())
        return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--ttft-ms", type=float, default=50.0)
    parser.add_argument("--itl-ms", type=float, default=5.0)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    options = parser.parse_args()
    ttft_s, itl_s = options.ttft_ms / 1000, options.itl_ms / 1000
    applied = {
        "ttft_ms": options.ttft_ms,
        "itl_ms": options.itl_ms,
        "e2e_ms": options.ttft_ms + (sum(CHUNK_TOKENS) - 1) * options.itl_ms,
    }
    print(f"applied: TTFT {options.ttft_ms} ms, ITL {options.itl_ms} ms/token, "
          f"{sum(CHUNK_TOKENS)} tokens in {len(CHUNK_TOKENS)} chunks")  # fmt: skip
    print(f"{'concurrency':>11} {'TTFT p50':>9} {'ratio':>6} {'ITL p50':>8} {'ratio':>6} "
          f"{'E2E p50':>8} {'ratio':>6}")  # fmt: skip
    with fake_engine(ttft_s, itl_s) as url:
        for concurrency in options.concurrency:
            run = bench(url, max(1, options.requests), max(1, concurrency))
            cells = []
            for key in ("ttft_ms", "itl_ms", "e2e_ms"):
                measured = run[key]["p50"]
                cells.append(f"{measured:>8.2f} {measured / applied[key]:>6.3f}")
            print(f"{concurrency:>11} " + " ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
