"""A fake OpenAI-compatible engine on 127.0.0.1 that streams with known timings and chunking and
exports the engines' speculative metrics, so tests can compare `mlcc bench` with the truth.

Each request is answered as: wait `ttft_s`, send the first chunk (one token, from prefill), then
for each later chunk wait `token_interval_s` per token in it and send it. With speculation a
later chunk of n tokens is one verify step that accepted n - 1 of `drafts_per_step` drafts.

It can also be hostile (`EngineBehaviour.hostile`, by path): accept and never answer, trickle
the status line or the body a byte at a time, stream events without end, end streams without
`[DONE]`, report impossible usage, or serve counters from a list of expositions, one a scrape.
Every hostile answer stops when the test's `with` ends.
"""

from __future__ import annotations

import contextlib
import json
import socket
import ssl
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


@dataclass
class EngineBehaviour:
    model: str = "fake/model"
    ttft_s: float = 0.02
    token_interval_s: float = 0.004
    chunk_tokens: Sequence[int] = (1, 3, 1, 4, 2, 3)  # tokens per streamed chunk
    metrics: str | None = "vllm"  # "vllm", "sglang", "plain" (no speculative metrics), None
    drafts_per_step: int = 4
    engines: int = 2  # vLLM series per engine index; their counters must be summed
    report_usage: bool = True
    fail_every: int = 0  # every n-th request answers HTTP 500 (0: never)
    serve_models_list: bool = True
    # path -> "hang", "trickle-headers", "trickle-body", "events-forever" (see HOSTILE_MODES)
    hostile: dict[str, str] = field(default_factory=dict)
    hostile_from: int = 1  # the POST requests before this number are answered well
    send_done: bool = True  # end each stream with `data: [DONE]`
    usage_tokens: Any = None  # sent as usage.completion_tokens instead of the true count
    usage_skip_every: int = 0  # every n-th stream has no usage event (0: none skips)
    metrics_texts: Sequence[str] = ()  # served in turn at /metrics (the last one repeats)


# Between two bytes (or events): a sixth of the 0.3 s --timeout the hostile tests give, so well
# under the per-read timeout of any socket the client sets from it.
TRICKLE_S = 0.05
HOSTILE_MODES = ("hang", "trickle-headers", "trickle-body", "events-forever")


class Timing:
    """What the fake really did for one request (monotonic seconds): under a loaded CPU its
    sleeps overshoot, so tests compare `mlcc bench` with this, not with the configured delays."""

    def __init__(self, received: float) -> None:
        self.received = received
        self.token_times: list[float] = []  # when each content chunk was written
        self.tokens = 0

    @property
    def ttft_ms(self) -> float:
        return (self.token_times[0] - self.received) * 1000

    @property
    def e2e_ms(self) -> float:
        return (self.token_times[-1] - self.received) * 1000

    @property
    def itl_ms(self) -> float:
        return (self.e2e_ms - self.ttft_ms) / (self.tokens - 1)


@dataclass
class Counters:
    requests: int = 0
    output_tokens: int = 0
    verify_steps: int = 0
    accepted_tokens: int = 0
    accepted_per_position: list[int] = field(default_factory=list)


class QuietServer(ThreadingHTTPServer):
    """Clients that drop idle keep-alive connections are not errors worth a traceback.

    Its connections send without Nagle's delay, as asyncio's (uvicorn's) do: else the body
    written after the headers would wait for the client's delayed ACK, up to 40 ms."""

    daemon_threads = True
    request_queue_size = 128  # a sweep connects up to its concurrency at once

    def get_request(self) -> tuple[socket.socket, Any]:
        connection, address = super().get_request()
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return connection, address

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


class LoopbackServer:
    """An HTTP server on 127.0.0.1 (a free port) served by a thread while `with` lasts."""

    _scheme = "http"

    def _serve(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.stopping = threading.Event()  # ends the hostile answers still being sent
        self._server = QuietServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._serve_until_stopped, daemon=True)

    def _serve_until_stopped(self) -> None:
        self._server.timeout = 0.5  # only when the wake-up connection of `__exit__` fails
        while not self.stopping.is_set():
            self._server.handle_request()  # waits for a connection (or the timeout)

    @property
    def url(self) -> str:
        return f"{self._scheme}://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        # A connection that says nothing wakes the serving loop, which then sees `stopping`.
        with contextlib.suppress(OSError):
            socket.create_connection(self._server.server_address[:2], timeout=5).close()
        self._thread.join()
        self._server.server_close()


class FakeEngine(LoopbackServer):
    def __init__(self, behaviour: EngineBehaviour, tls: ssl.SSLContext | None = None) -> None:
        self.behaviour = behaviour
        self._scheme = "https" if tls else "http"
        self.counters = Counters(accepted_per_position=[0] * behaviour.drafts_per_step)
        self.received: list[tuple[str, dict[str, Any]]] = []  # (path, body)
        self.timings: list[Timing] = []  # of the requests answered with tokens
        self.scrapes = 0
        self._lock = threading.Lock()
        self._serve(_handler(self))
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)

    # Ground truth of what the engine did, to compare with `mlcc bench`.
    def expected_ttft_s(self) -> float:
        return self.behaviour.ttft_s

    def expected_itl_s(self) -> float:
        return self.behaviour.token_interval_s

    def tokens_per_request(self) -> int:
        return sum(self.behaviour.chunk_tokens)

    def record(self, request_number: int) -> bool:
        """Counts one answered request; False when this one must fail."""
        with self._lock:
            every = self.behaviour.fail_every
            if every and request_number % every == 0:
                return False
            self.counters.requests += 1
            self.counters.output_tokens += self.tokens_per_request()
            for tokens in self.behaviour.chunk_tokens[1:]:
                self.counters.verify_steps += 1
                self.counters.accepted_tokens += tokens - 1
                for position in range(tokens - 1):
                    self.counters.accepted_per_position[position] += 1
            return True

    def metrics_text(self) -> str:
        kind = self.behaviour.metrics
        with self._lock:
            self.scrapes += 1
            texts = self.behaviour.metrics_texts
            if texts:
                return texts[min(self.scrapes, len(texts)) - 1]
            if kind == "vllm":
                return _vllm_metrics(self.counters, self.behaviour)
            if kind == "sglang":
                return _sglang_metrics(self.counters, self.behaviour)
            return _plain_metrics(self.counters)

    def events(self, chat: bool, number: int = 1) -> Iterator[tuple[float, bytes, bool]]:
        """(delay before sending, SSE bytes, carries tokens) for one successful request."""
        chunks = self.behaviour.chunk_tokens
        for index, tokens in enumerate(chunks):
            delay = (
                self.behaviour.ttft_s if index == 0 else tokens * self.behaviour.token_interval_s
            )
            text = "".join(f" t{index}.{n}" for n in range(tokens))
            choice = (
                {"index": 0, "delta": {"content": text}} if chat else {"index": 0, "text": text}
            )
            yield delay, _sse({"id": "x", "choices": [choice]}), True
        skip = self.behaviour.usage_skip_every
        if self.behaviour.report_usage and not (skip and number % skip == 0):
            told = self.behaviour.usage_tokens
            tokens = sum(chunks) if told is None else told
            usage = {"prompt_tokens": 7, "completion_tokens": tokens, "total_tokens": 0}
            yield 0.0, _sse({"id": "x", "choices": [], "usage": usage}), False
        if self.behaviour.send_done:
            yield 0.0, b"data: [DONE]\n\n", False


def _sse(event: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(event).encode() + b"\n\n"


def _vllm_metrics(counters: Counters, behaviour: EngineBehaviour) -> str:
    """As prometheus_client renders vLLM 0.27.1's counters: `_total` and `_created` samples, one
    series per engine; the totals are split unevenly across engines."""
    lines = []
    shares = [index + 1 for index in range(behaviour.engines)]
    totals = {
        "vllm:spec_decode_num_drafts": counters.verify_steps,
        "vllm:spec_decode_num_draft_tokens": counters.verify_steps * behaviour.drafts_per_step,
        "vllm:spec_decode_num_accepted_tokens": counters.accepted_tokens,
    }
    for name, total in totals.items():
        lines += [f"# HELP {name}_total x", f"# TYPE {name}_total counter"]
        for engine, value in enumerate(_split(total, shares)):
            labels = f'engine="{engine}",model_name="{behaviour.model}"'
            lines.append(f"{name}_total{{{labels}}} {float(value)}")
            lines.append(f"{name}_created{{{labels}}} 1.7e9")
    name = "vllm:spec_decode_num_accepted_tokens_per_pos"
    for position, total in enumerate(counters.accepted_per_position):
        for engine, value in enumerate(_split(total, shares)):
            labels = f'engine="{engine}",model_name="{behaviour.model}",position="{position}"'
            lines.append(f"{name}_total{{{labels}}} {float(value)}")
    lines.append(f'vllm:generation_tokens_total{{engine="0"}} {counters.output_tokens}')
    return "\n".join(lines) + "\n"


def _sglang_metrics(counters: Counters, behaviour: EngineBehaviour) -> str:
    """As SGLang 0.5.17 exports them: per-request counters and last-interval gauges."""
    labels = f'model_name="{behaviour.model}",tp_rank="0"'
    streaming = labels + ',is_streaming="true"'
    return (
        "\n".join(
            [
                "# TYPE sglang:spec_verify_calls_total counter",
                f"sglang:spec_verify_calls_total{{{labels}}} {float(counters.verify_steps)}",
                f"sglang:generation_tokens_total{{{streaming}}} {float(counters.output_tokens)}",
                f"sglang:num_requests_total{{{streaming}}} {float(counters.requests)}",
                f"sglang:spec_num_draft_tokens{{{labels}}} {behaviour.drafts_per_step + 1}",
                f"sglang:spec_num_steps{{{labels}}} {behaviour.drafts_per_step}",
                f"sglang:spec_accept_length{{{labels}}} 2.5",
                f"sglang:spec_accept_rate{{{labels}}} 0.4",
            ]
        )
        + "\n"
    )


def _plain_metrics(counters: Counters) -> str:
    sample = f'vllm:generation_tokens_total{{engine="0"}} {counters.output_tokens}'
    return "# TYPE vllm:generation_tokens counter\n" + sample + "\n"


def _split(total: int, shares: Sequence[int]) -> list[int]:
    parts = [total * share // sum(shares) for share in shares]
    parts[-1] += total - sum(parts)
    return parts


def _handler(engine: FakeEngine) -> type[BaseHTTPRequestHandler]:
    counter = iter(range(1, 1_000_000))
    counter_lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            if self.path in engine.behaviour.hostile:
                hostile_answer(self, engine.behaviour.hostile[self.path], engine.stopping)
            elif self.path == "/metrics" and engine.behaviour.metrics is not None:
                self._send(200, engine.metrics_text().encode(), "text/plain; version=0.0.4")
            elif self.path == "/v1/models" and engine.behaviour.serve_models_list:
                models = {"object": "list", "data": [{"id": engine.behaviour.model}]}
                self._send(200, json.dumps(models).encode(), "application/json")
            else:
                self._send(404, b'{"detail":"Not Found"}', "application/json")

        def do_POST(self) -> None:
            timing = Timing(time.monotonic())
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            engine.received.append((self.path, body))
            if body.get("model") != engine.behaviour.model:
                message = {"error": {"message": f"The model `{body.get('model')}` does not exist."}}
                self._send(404, json.dumps(message).encode(), "application/json")
                return
            with counter_lock:
                number = next(counter)
            mode = engine.behaviour.hostile.get(self.path)
            if mode and number >= engine.behaviour.hostile_from:
                hostile_answer(self, mode, engine.stopping)
                return
            if not engine.record(number):
                self._send(500, b'{"error": {"message": "engine overloaded"}}', "application/json")
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chat = self.path.endswith("chat/completions")
            for delay, data, carries_tokens in engine.events(chat=chat, number=number):
                time.sleep(delay)
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
                if carries_tokens:
                    timing.token_times.append(time.monotonic())
            self.wfile.write(b"0\r\n\r\n")
            timing.tokens = engine.tokens_per_request()
            engine.timings.append(timing)

        def _send(self, status: int, payload: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler


def hostile_answer(handler: BaseHTTPRequestHandler, mode: str, stopping: threading.Event) -> None:
    """Answers as `mode` says until the test ends (or the client goes away)."""
    handler.close_connection = True
    try:
        if mode == "hang":
            stopping.wait()
        elif mode == "trickle-headers":
            trickle(handler, b"HTTP/1.1 200 OK\r\n" + b"X-Pad: " + b"a" * 100_000, stopping)
        elif mode == "trickle-body":
            handler.send_response(200)
            handler.send_header("Content-Type", "text/event-stream")
            handler.end_headers()  # no length, not chunked: the body ends when the server closes
            trickle(handler, b'data: {"choices": [{"text": "' + b"a" * 100_000, stopping)
        elif mode == "events-forever":
            handler.send_response(200)
            handler.send_header("Content-Type", "text/event-stream")
            handler.end_headers()
            event = _sse({"id": "x", "choices": [{"index": 0, "text": " more"}]})
            while not stopping.wait(TRICKLE_S):
                handler.wfile.write(event)
                handler.wfile.flush()
        else:
            raise ValueError(f"unknown hostile mode {mode!r}; one of {HOSTILE_MODES}")
    except OSError:  # the client shut the connection down: its deadline passed
        pass


def trickle(handler: BaseHTTPRequestHandler, data: bytes, stopping: threading.Event) -> None:
    for byte in data:
        handler.wfile.write(bytes([byte]))
        handler.wfile.flush()
        if stopping.wait(TRICKLE_S):
            return
