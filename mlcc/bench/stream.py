"""One streamed completion, timed: OpenAI-style server-sent events in, per-request figures out.

Transports hand over raw bytes as they arrive, in pieces of any size (an HTTP read, a SageMaker
PayloadPart); `LineSplitter` rebuilds whole lines, so an event split across pieces is parsed
once, stamped with the arrival time of its last byte.
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
    output_tokens: int = 0
    content_chunks: int = 0
    usage_reported: bool = False
    sent_at: float | None = None  # the clock's reading when the request left

    @property
    def itl_s(self) -> float | None:
        """Mean time per output token after the first: with speculation a chunk carries several
        tokens, so this divides by the server's token count, not by the number of chunks."""
        if not self.ok or self.ttft_s is None or self.e2e_s is None or self.output_tokens < 2:
            return None
        return (self.e2e_s - self.ttft_s) / (self.output_tokens - 1)


class LineSplitter:
    def __init__(self) -> None:
        self._pending = b""

    def feed(self, data: bytes) -> list[str]:
        self._pending += data
        *complete, self._pending = self._pending.split(b"\n")
        return [line.rstrip(b"\r").decode("utf-8", "replace") for line in complete]

    def flush(self) -> list[str]:
        rest, self._pending = self._pending, b""
        return [rest.rstrip(b"\r").decode("utf-8", "replace")] if rest.strip() else []


class StreamTimer:
    """Feeds on SSE lines with their arrival times (seconds since the request was sent)."""

    def __init__(self) -> None:
        self._first_content: float | None = None
        self._last_content: float | None = None
        self._chunks = 0
        self._completion_tokens: int | None = None
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
        except json.JSONDecodeError:
            self._error = self._error or f"unparseable event: {payload[:80]}"
            return
        if isinstance(event, dict):
            self._take(event, elapsed_s)

    def _take(self, event: dict[str, Any], elapsed_s: float) -> None:
        if event.get("error"):
            self._error = self._error or error_message(event)
        usage = event.get("usage")
        if isinstance(usage, dict) and isinstance(usage.get("completion_tokens"), int):
            self._completion_tokens = usage["completion_tokens"]
        if any(_has_content(choice) for choice in event.get("choices") or []):
            self._chunks += 1
            if self._first_content is None:
                self._first_content = elapsed_s
            self._last_content = elapsed_s

    def result(self) -> RequestResult:
        """End-to-end latency ends at the last output token, not at the usage event after it."""
        if self._error:
            return RequestResult(ok=False, error=self._error)
        if self._first_content is None or self._last_content is None:
            return RequestResult(ok=False, error="the stream carried no output")
        tokens = self._completion_tokens
        usage_reported = tokens is not None
        return RequestResult(
            ok=True,
            ttft_s=self._first_content,
            e2e_s=self._last_content,
            output_tokens=tokens if tokens is not None else self._chunks,
            content_chunks=self._chunks,
            usage_reported=usage_reported,
        )


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
    """The message of an OpenAI-style error body (vLLM and SGLang both use `error.message`)."""
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
        if isinstance(error, str):
            return error
        if body.get("message"):
            return str(body["message"])
    return str(body)[:200]
