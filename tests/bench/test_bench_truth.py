"""Whatever a server reports (usage counts, Prometheus counters), a figure is true or absent:
never a negative count or rate, never an acceptance over 100 %, never NaN in bench.json."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from mlcc.bench import report
from mlcc.bench.client.stream import RequestResult, StreamTimer
from mlcc.bench.prometheus import parse_exposition
from mlcc.bench.speculative import (
    SGLANG_GENERATION_TOKENS,
    SGLANG_NUM_DRAFT_TOKENS,
    SGLANG_REQUESTS,
    SGLANG_VERIFY_CALLS,
    VLLM_ACCEPTED_PER_POSITION,
    VLLM_ACCEPTED_TOKENS,
    VLLM_DRAFT_TOKENS,
    VLLM_DRAFTS,
    SpeculativeFigures,
    speculative_figures,
)
from mlcc.bench.stats import RunSettings, summarize

ANY_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**40), 10**40)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=6,
)
COUNTS = st.integers(0, 10**6).map(float) | st.sampled_from(
    [-1.0, -0.5, 0.5, 1e300, math.inf, -math.inf, math.nan]
)


@given(
    told=st.integers(-5, 200) | ANY_JSON,
    chunks=st.integers(1, 12),
    max_tokens=st.integers(1, 100),
    done=st.booleans(),
)
def test_a_requests_token_count_is_possible_or_unknown(
    told: Any, chunks: int, max_tokens: int, done: bool
) -> None:
    timer = StreamTimer(max_tokens)
    for index in range(chunks):
        timer.feed('data: {"choices": [{"text": "a"}]}', 0.1 * (index + 1))
    timer.feed("data: " + json.dumps({"choices": [], "usage": {"completion_tokens": told}}), 2.0)
    if done:
        timer.feed("data: [DONE]", 2.0)
    result = timer.result()
    if not done:
        assert not result.ok and result.error == "the stream ended before its data: [DONE]"
        return
    assert result.ok
    if result.output_tokens is None:
        assert result.usage_problem and "\n" not in result.usage_problem
        assert result.itl_s is None
    else:
        assert result.usage_problem is None
        assert result.output_tokens == told  # the server's count, when it can be true
        assert chunks <= result.output_tokens <= max_tokens
        assert result.itl_s is None or result.itl_s >= 0


def vllm_text(drafts: float, tokens: float, accepted: float, by_position: list[float]) -> str:
    lines = [
        f'{VLLM_DRAFTS}_total{{engine="0"}} {drafts}',
        f'{VLLM_DRAFT_TOKENS}_total{{engine="0"}} {tokens}',
        f'{VLLM_ACCEPTED_TOKENS}_total{{engine="0"}} {accepted}',
    ]
    lines += [
        f'{VLLM_ACCEPTED_PER_POSITION}_total{{engine="0",position="{p}"}} {value}'
        for p, value in enumerate(by_position)
    ]
    return "\n".join(lines) + "\n"


def assert_true_or_absent(figures: SpeculativeFigures | None) -> None:
    if figures is None:
        return
    values = [
        figures.acceptance_rate,
        figures.mean_accepted_tokens,
        figures.draft_tokens,
        figures.accepted_tokens,
        figures.verify_steps,
        figures.acceptance_per_position,
    ]
    if figures.unknown is not None:
        assert all(value is None for value in values)
        assert "\n" not in figures.unknown
        return
    if figures.acceptance_rate is not None:
        assert 0 <= figures.acceptance_rate <= 1
    if figures.mean_accepted_tokens is not None:
        assert math.isfinite(figures.mean_accepted_tokens) and figures.mean_accepted_tokens >= 1
    for count in (figures.draft_tokens, figures.accepted_tokens, figures.verify_steps):
        assert count is None or count >= 0
    if figures.draft_tokens is not None and figures.accepted_tokens is not None:
        assert figures.accepted_tokens <= figures.draft_tokens
    assert all(0 <= share <= 1 for share in figures.acceptance_per_position or [])


@given(
    before=st.tuples(COUNTS, COUNTS, COUNTS, st.lists(COUNTS, max_size=3)),
    after=st.tuples(COUNTS, COUNTS, COUNTS, st.lists(COUNTS, max_size=3)),
)
def test_vllm_figures_are_true_or_unknown(
    before: tuple[float, float, float, list[float]], after: tuple[float, float, float, list[float]]
) -> None:
    figures = speculative_figures(
        parse_exposition(vllm_text(*before)), parse_exposition(vllm_text(*after)), 3
    )
    assert figures is not None and figures.source == "vllm counters"
    assert_true_or_absent(figures)
    readings = [*before[:3], *after[:3]]
    if any(not math.isfinite(v) or v < 0 for v in readings):
        assert figures.unknown is not None
    if any(new < old for old, new in zip(before[:3], after[:3], strict=True)):
        assert figures.unknown is not None


def sglang_text(steps: float, generated: float, requests: float, drafts: float) -> str:
    return (
        f"{SGLANG_VERIFY_CALLS} {steps}\n{SGLANG_GENERATION_TOKENS} {generated}\n"
        f"{SGLANG_REQUESTS} {requests}\n{SGLANG_NUM_DRAFT_TOKENS} {drafts}\n"
    )


@given(
    before=st.tuples(COUNTS, COUNTS, COUNTS),
    after=st.tuples(COUNTS, COUNTS, COUNTS),
    drafts=COUNTS,
    completed=st.integers(0, 100),
)
def test_sglang_figures_are_true_or_unknown(
    before: tuple[float, float, float],
    after: tuple[float, float, float],
    drafts: float,
    completed: int,
) -> None:
    figures = speculative_figures(
        parse_exposition(sglang_text(*before, drafts=drafts)),
        parse_exposition(sglang_text(*after, drafts=drafts)),
        completed,
    )
    assert_true_or_absent(figures)


RESULTS = st.builds(
    RequestResult,
    ok=st.booleans(),
    ttft_s=st.floats(0, 10),
    e2e_s=st.floats(10, 20),
    output_tokens=st.none() | st.integers(0, 10**6),
    usage_reported=st.booleans(),
    usage_problem=st.none() | st.just("usage.completion_tokens is negative (-1)"),
    sent_at=st.floats(0, 100),
)


@given(results=st.lists(RESULTS, max_size=8), wall_s=st.floats(allow_nan=True))
def test_run_figures_are_finite_counts_and_rates_or_unknown(
    tmp_path_factory: Any, results: list[RequestResult], wall_s: float
) -> None:
    # As StreamTimer makes them: an impossible count is a reported one, and no count.
    results = [
        dataclasses.replace(r, usage_reported=True, output_tokens=None) if r.usage_problem else r
        for r in results
    ]
    settings = RunSettings("l", "vllm", "m", "t", len(results), 1, 16)
    run = summarize(settings, results, wall_s, None)
    rate = run["output_tokens_per_s"]
    assert rate is None or (math.isfinite(rate) and rate >= 0)
    assert run["output_tokens"] is None or run["output_tokens"] >= 0
    if any(r.ok and r.usage_problem for r in results):
        assert run["output_tokens"] is None and "output_tokens_per_s" in run["unknown"]
    out: Path = tmp_path_factory.mktemp("run")
    json.loads((report.write_json(out, run)).read_text(), parse_constant=_no_constants)
    assert all("\n" not in line for line in report.summary_lines(run))


def _no_constants(name: str) -> None:
    raise AssertionError(f"bench.json holds {name}")
