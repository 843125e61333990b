"""One streamed completion, timed: OpenAI-style server-sent events in, per-request figures out.

Transports hand over raw bytes as they arrive, in pieces of any size (an HTTP read, a SageMaker
PayloadPart); `LineSplitter` rebuilds whole lines, so an event split across pieces is parsed
once, stamped with the arrival time of its last byte.

A request completes only with the stream's `data: [DONE]`: vLLM and SGLang both end every
stream with it, so a stream without it was cut short. Its `usage.completion_tokens` (asked for
with `stream_options.include_usage`) must be a whole number a stream can carry: at least one
token per chunk with output, at most the request's `max_tokens`; any other count is no count.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RequestResult:
    ok: bool
    error: str | None = None
    ttft_s: float | None = None
    e2e_s: float | None = None
    output_tokens: int | None = 0  # None: the server's count is impossible (usage_problem)
    content_chunks: int = 0
    usage_reported: bool = False
    usage_problem: str | None = None
    sent_at: float | None = None  # the clock's reading when the request left

    @property
    def itl_s(self) -> float | None:
        """Mean time per output token after the first: with speculation a chunk carries several
        tokens, so this divides by the server's token count, not by the number of chunks."""
        tokens = self.output_tokens
        if not self.ok or self.ttft_s is None or self.e2e_s is None or tokens is None:
            return None
        if tokens < 2:
            return None
        return (self.e2e_s - self.ttft_s) / (tokens - 1)


class StreamError(Exception):
    """The stream is not server-sent events a completion can be read from."""


MAX_LINE_BYTES = 4 * 1024 * 1024  # an event of one chunk is a few hundred bytes


class LineSplitter:
    def __init__(self) -> None:
        self._pending = bytearray()

    def feed(self, data: bytes) -> list[str]:
        if b"\n" not in data:  # a trickle: no new line to cut
            self._pending += data
            self._check_length()
            return []
        self._pending += data
        *complete, rest = bytes(self._pending).split(b"\n")
        self._pending = bytearray(rest)
        self._check_length()
        return [line.rstrip(b"\r").decode("utf-8", "replace") for line in complete]

    def flush(self) -> list[str]:
        rest, self._pending = bytes(self._pending), bytearray()
        return [rest.rstrip(b"\r").decode("utf-8", "replace")] if rest.strip() else []

    def _check_length(self) -> None:
        if len(self._pending) > MAX_LINE_BYTES:
            raise StreamError(f"an event line longer than {MAX_LINE_BYTES // 1024 // 1024} MiB")


class StreamTimer:
    """Feeds on SSE lines with their arrival times (seconds since the request was sent)."""

    def __init__(self, max_tokens: int | None = None) -> None:
        self._max_tokens = max_tokens
        self._first_content: float | None = None
        self._last_content: float | None = None
        self._chunks = 0
        self._completion_tokens: int | None = None
        self._usage_problem: str | None = None
        self._error: str | None = None
        self.done = False

    def feed(self, line: str, elapsed_s: float) -> None:
        if not line.startswith("data:") or self.done:
            return
        payload = line[len("data:") :].strip()
        if payload == "[DONE]":
            self.done = True
            return
        try:
            event = json.loads(payload)
        except (ValueError, RecursionError):  # not JSON, or nested too deep to decode
            self._error = self._error or f"unparseable event: {payload[:80]!r}"
            return
        if isinstance(event, dict):
            self._take(event, elapsed_s)

    def _take(self, event: dict[str, Any], elapsed_s: float) -> None:
        if event.get("error"):
            self._error = self._error or error_message(event)
        if event.get("usage") is not None:  # OpenAI sends `"usage": null` on every other chunk
            self._take_usage(event["usage"])
        choices = event.get("choices")
        if isinstance(choices, list) and any(_has_content(choice) for choice in choices):
            self._chunks += 1
            if self._first_content is None:
                self._first_content = elapsed_s
            self._last_content = elapsed_s

    def _take_usage(self, usage: Any) -> None:
        """The last usage event counts (with continuous usage stats every chunk has one)."""
        tokens = usage.get("completion_tokens") if isinstance(usage, dict) else None
        self._completion_tokens, self._usage_problem = None, None
        if type(tokens) is not int:  # a bool is an int to Python, not to JSON
            self._usage_problem = f"usage.completion_tokens is {_shown(tokens)}, not a count"
        elif tokens < 0:
            self._usage_problem = f"usage.completion_tokens is negative ({_shown(tokens)})"
        else:
            self._completion_tokens = tokens

    def result(self) -> RequestResult:
        """End-to-end latency ends at the last output token, not at the usage event after it."""
        if self._error:
            return RequestResult(ok=False, error=self._error)
        if self._first_content is None or self._last_content is None:
            return RequestResult(ok=False, error="the stream carried no output")
        if not self.done:
            return RequestResult(ok=False, error="the stream ended before its data: [DONE]")
        problem = self._usage_problem or self._impossible_count()
        tokens = self._completion_tokens
        return RequestResult(
            ok=True,
            ttft_s=self._first_content,
            e2e_s=self._last_content,
            output_tokens=None if problem else tokens if tokens is not None else self._chunks,
            content_chunks=self._chunks,
            usage_reported=tokens is not None or problem is not None,
            usage_problem=problem,
        )

    def _impossible_count(self) -> str | None:
        tokens = self._completion_tokens
        if tokens is None:
            return None
        if tokens < self._chunks:
            return f"usage.completion_tokens is {tokens}, fewer than its {self._chunks} chunks"
        if self._max_tokens is not None and tokens > self._max_tokens:
            shown = _shown(tokens)
            return f"usage.completion_tokens is {shown}, over max_tokens {self._max_tokens}"
        return None


def _shown(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:40] + "..."


def _has_content(choice: Any) -> bool:
    if not isinstance(choice, dict):
        return False
    delta = choice.get("delta")
    if isinstance(delta, dict):
        return bool(
            delta.get("content") or delta.get("reasoning_content") or delta.get("tool_calls")
        )
    return bool(choice.get("text"))


def error_message(body: Any) -> str:
    """The message of an OpenAI-style error body (vLLM and SGLang both use `error.message`),
    at most 200 characters."""
    message: Any = body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            message = error["message"]
        elif isinstance(error, str):
            message = error
        elif body.get("message"):
            message = body["message"]
    try:
        return str(message)[:200]
    except ValueError:  # an integer too long to print
        return "(unprintable)"
