"""Server-sent events cut anywhere, timed per output token."""

from __future__ import annotations

import itertools
import json

from hypothesis import given
from hypothesis import strategies as st

from mlcc.bench.client.stream import LineSplitter, StreamTimer

EVENTS = [
    {"choices": [{"delta": {"role": "assistant"}}]},
    {"choices": [{"delta": {"content": "Hello"}}]},
    {"choices": [{"delta": {"content": " big world"}}]},
    {"choices": [], "usage": {"completion_tokens": 5}},
]
STREAM = b"".join(b"data: " + json.dumps(e).encode() + b"\r\n\r\n" for e in EVENTS) + (
    b"data: [DONE]\n\n"
)


@given(st.lists(st.integers(1, len(STREAM) - 1), max_size=20))
def test_lines_survive_any_split(cuts: list[int]) -> None:
    bounds = [0, *sorted(set(cuts)), len(STREAM)]
    splitter, lines = LineSplitter(), []
    for start, end in itertools.pairwise(bounds):
        lines += splitter.feed(STREAM[start:end])
    lines += splitter.flush()
    assert lines == STREAM.decode().replace("\r", "").split("\n")[:-1]


def test_itl_divides_by_tokens_not_chunks() -> None:
    timer = StreamTimer()
    for elapsed, line in zip((0.01, 0.1, 0.3, 0.31, 0.32), _lines(), strict=True):
        timer.feed(line, elapsed)
    result = timer.result()
    assert (result.ttft_s, result.e2e_s, result.output_tokens) == (0.1, 0.3, 5)
    assert result.itl_s is not None and abs(result.itl_s - 0.2 / 4) < 1e-12
    assert result.content_chunks == 2


def _lines() -> list[str]:
    return [line for line in STREAM.decode().split("\r\n") if line.startswith("data:")]


def test_an_error_event_fails_the_request() -> None:
    timer = StreamTimer()
    timer.feed('data: {"choices": [{"text": "a"}]}', 0.1)
    timer.feed('data: {"error": {"message": "out of memory", "code": 500}}', 0.2)
    assert (timer.result().ok, timer.result().error) == (False, "out of memory")


def test_no_output_is_a_failure() -> None:
    timer = StreamTimer()
    timer.feed("data: [DONE]", 0.1)
    assert timer.result().error == "the stream carried no output"


def test_one_token_has_no_itl() -> None:
    timer = StreamTimer()
    timer.feed('data: {"choices": [{"text": "a"}], "usage": {"completion_tokens": 1}}', 0.1)
    timer.feed("data: [DONE]", 0.1)
    assert timer.result().ok and timer.result().itl_s is None
