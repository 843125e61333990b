"""A fake engine that batches: every request in flight advances one verify step at a time, and a
step's time and each draft position's acceptance are functions of the batch size b and of the
drafted tokens k (`LoadModel`), so speculation pays at low load and stops paying at high load.

A request joins the batch at the start of the next step, where its first token is sent (prefill
takes no time here); then each step of the engine thread gives every sequence in the batch
1 + accepted tokens (at most what it has left),
where position i is accepted with probability a_i(b) (one uniform draw u per sequence and step:
positions with a_i > u are accepted, a prefix since a_i falls with i). Steps keep a schedule,
step i ending `step_s(k, b)` after step i - 1 ended, so the engine's own work does not stretch
them; `steps` records the batch and the time each step really took.

It exports the real metric names of vLLM 0.27.1 (`vllm:spec_decode_*` counters, per position
too) or SGLang 0.5.17 (`sglang:spec_verify_calls_total`, `sglang:generation_tokens_total`,
`sglang:num_requests_total`, the `sglang:spec_num_draft_tokens` gauge), as mlcc.bench reads them
(mlcc/bench/speculative.py cites their sources); k = 0 is the baseline twin, without them.
"""

from __future__ import annotations

import contextlib
import json
import math
import queue
import random
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, Self

from bench_fake_engine import LoopbackServer

MODEL = "fake/model"


@dataclass(frozen=True)
class LoadModel:
    base_s: float = 0.004  # a step's fixed time
    draft_s: float = 0.0005  # per drafted token (the draft's own passes)
    per_seq_s: float = 0.0005  # per sequence of the batch and position verified (k + 1 of them)
    accept_first: float = 0.8  # a_1 at batch 1
    accept_decay: float = 0.85  # a_(i+1) = a_i x decay
    accept_half_batch: float = math.inf  # a_1(b) = accept_first / (1 + (b - 1) / half)

    def step_s(self, k: int, batch: float) -> float:
        return self.base_s + self.draft_s * k + self.per_seq_s * batch * (1 + k)

    def acceptance(self, k: int, batch: float) -> list[float]:
        first = self.accept_first / (1 + (batch - 1) / self.accept_half_batch)
        return [first * self.accept_decay**i for i in range(k)]

    def tokens_per_step(self, k: int, batch: float) -> float:
        return 1 + sum(self.acceptance(k, batch))

    def throughput(self, k: int, batch: float) -> float:
        """Output tokens per second of the whole batch, in steady decode."""
        return batch * self.tokens_per_step(k, batch) / self.step_s(k, batch)

    def speedup(self, k: int, batch: float) -> float:
        return self.throughput(k, batch) / self.throughput(0, batch)

    def crossover(self, k: int, threshold: float) -> float | None:
        """The batch size (continuous) where speedup(k) falls to `threshold`, by bisection on
        log b over 1..4096; None when it does not within them (speedup falls with b here)."""
        low, high = 0.0, math.log(4096)
        if self.speedup(k, 1) <= threshold or self.speedup(k, 4096) > threshold:
            return None
        for _ in range(60):
            middle = (low + high) / 2
            low, high = (middle, high) if self.speedup(k, math.exp(middle)) > threshold else (
                low, middle)  # fmt: skip
        return math.exp(low)


@dataclass
class LoadBehaviour:
    model: LoadModel
    k: int  # drafted tokens a step; 0 for the baseline twin
    metrics: str = "vllm"  # "vllm" or "sglang"
    noise: float = 0.0  # each step's time x exp(N(0, noise))
    seed: int = 0


@dataclass
class _Sequence:
    left: int  # tokens still to send after the first
    chunks: queue.SimpleQueue[int | None] = field(default_factory=queue.SimpleQueue)


@dataclass
class LoadCounters:
    requests: int = 0
    output_tokens: int = 0
    drafts: int = 0  # sequences x steps that drafted (vLLM's num_drafts)
    draft_tokens: int = 0
    accepted: int = 0
    accepted_per_position: list[int] = field(default_factory=list)
    verify_steps: int = 0


class LoadEngine(LoopbackServer):
    def __init__(self, behaviour: LoadBehaviour) -> None:
        self.behaviour = behaviour
        self.counters = LoadCounters(accepted_per_position=[0] * behaviour.k)
        self.steps: list[tuple[int, float]] = []  # (batch size, seconds) of each step taken
        self._waiting: list[_Sequence] = []
        self._lock = threading.Condition()
        self._random = random.Random(behaviour.seed)
        self._serve(_handler(self))
        self._stepper = threading.Thread(target=self._run_steps, daemon=True)

    def __enter__(self) -> Self:
        super().__enter__()
        self._stepper.start()
        return self

    def __exit__(self, *exc: object) -> None:
        super().__exit__(*exc)
        with self._lock:
            self._lock.notify_all()
        self._stepper.join()

    def join(self, max_tokens: int) -> _Sequence:
        sequence = _Sequence(left=max_tokens - 1)
        with self._lock:
            self.counters.requests += 1
            self.counters.output_tokens += max_tokens
            self._waiting.append(sequence)
            self._lock.notify()
        return sequence

    def _run_steps(self) -> None:
        active: list[_Sequence] = []
        ends_at = 0.0
        while not self.stopping.is_set():
            with self._lock:
                if not active and not self._waiting:
                    self._lock.wait(0.05)
                joining, self._waiting = self._waiting, []
            for sequence in joining:
                sequence.chunks.put(1)  # the first token, from prefill
                if sequence.left == 0:
                    sequence.chunks.put(None)
            active += [sequence for sequence in joining if sequence.left > 0]
            if not active:
                continue
            now = time.monotonic()
            starts_at = ends_at if now - ends_at < 0.005 else now
            ends_at = starts_at + self._step_time(len(active))
            given = self._step(active)
            time.sleep(max(0.0, ends_at - time.monotonic()))
            self.steps.append((len(active), time.monotonic() - starts_at))
            for sequence, tokens in zip(active, given, strict=True):
                sequence.left -= tokens
                sequence.chunks.put(tokens)
                if sequence.left == 0:
                    sequence.chunks.put(None)
            active = [sequence for sequence in active if sequence.left > 0]

    def _step_time(self, batch: int) -> float:
        seconds = self.behaviour.model.step_s(self.behaviour.k, batch)
        if self.behaviour.noise:
            seconds *= math.exp(self._random.gauss(0.0, self.behaviour.noise))
        return seconds

    def _step(self, active: list[_Sequence]) -> list[int]:
        """Each sequence's tokens this step, counted as the engines count them."""
        k = self.behaviour.k
        shares = self.behaviour.model.acceptance(k, len(active))
        given = []
        with self._lock:
            for sequence in active:
                draw = self._random.random()
                accepted = sum(share > draw for share in shares)
                given.append(min(1 + accepted, sequence.left))
                if k:
                    self.counters.drafts += 1
                    self.counters.verify_steps += 1
                    self.counters.draft_tokens += k
                    self.counters.accepted += accepted
                    for position in range(accepted):
                        self.counters.accepted_per_position[position] += 1
        return given

    def metrics_text(self) -> str:
        with self._lock:
            counters = self.counters
            if self.behaviour.metrics == "sglang":
                return _sglang_text(counters, self.behaviour.k)
            return _vllm_text(counters, self.behaviour.k)


def _vllm_text(counters: LoadCounters, k: int) -> str:
    labels = f'engine="0",model_name="{MODEL}"'
    lines = [f"vllm:generation_tokens_total{{{labels}}} {float(counters.output_tokens)}"]
    if k:
        for name, value in (
            ("vllm:spec_decode_num_drafts", counters.drafts),
            ("vllm:spec_decode_num_draft_tokens", counters.draft_tokens),
            ("vllm:spec_decode_num_accepted_tokens", counters.accepted),
        ):
            lines += [f"# TYPE {name}_total counter", f"{name}_total{{{labels}}} {float(value)}"]
        name = "vllm:spec_decode_num_accepted_tokens_per_pos_total"
        for position, value in enumerate(counters.accepted_per_position):
            lines.append(f'{name}{{{labels},position="{position}"}} {float(value)}')
    return "\n".join(lines) + "\n"


def _sglang_text(counters: LoadCounters, k: int) -> str:
    labels = f'model_name="{MODEL}",tp_rank="0"'
    lines = [
        f"sglang:generation_tokens_total{{{labels}}} {float(counters.output_tokens)}",
        f"sglang:num_requests_total{{{labels}}} {float(counters.requests)}",
    ]
    if k:
        lines += [
            f"sglang:spec_verify_calls_total{{{labels}}} {float(counters.verify_steps)}",
            f"sglang:spec_num_draft_tokens{{{labels}}} {k + 1}",
            f"sglang:spec_num_steps{{{labels}}} {k}",
        ]
    return "\n".join(lines) + "\n"


def _sse(event: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(event).encode() + b"\n\n"


def _handler(engine: LoadEngine) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            if self.path == "/metrics":
                self._send(200, engine.metrics_text().encode(), "text/plain; version=0.0.4")
            elif self.path == "/v1/models":
                self._send(200, json.dumps({"data": [{"id": MODEL}]}).encode(), "application/json")
            else:
                self._send(404, b"{}", "application/json")

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            max_tokens = int(body.get("max_tokens") or 16)
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chat = self.path.endswith("chat/completions")
            sequence = engine.join(max_tokens)
            with contextlib.suppress(OSError):
                while (tokens := sequence.chunks.get()) is not None:
                    self._chunk(tokens, chat)
                usage = {"prompt_tokens": 7, "completion_tokens": max_tokens, "total_tokens": 0}
                self._write(_sse({"id": "x", "choices": [], "usage": usage}))
                self._write(b"data: [DONE]\n\n")
                self.wfile.write(b"0\r\n\r\n")

        def _chunk(self, tokens: int, chat: bool) -> None:
            text = " t" * tokens
            choice = (
                {"index": 0, "delta": {"content": text}} if chat else {"index": 0, "text": text}
            )
            self._write(_sse({"id": "x", "choices": [choice]}))

        def _write(self, data: bytes) -> None:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        def _send(self, status: int, payload: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler
