"""The Prometheus text parser and the speculative figures derived from two scrapes."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlcc.bench.prometheus import (
    CounterProblem,
    ExpositionError,
    Sample,
    counter_delta,
    merge,
    parse_exposition,
)
from mlcc.bench.speculative import expected_accepted_length, speculative_figures

VLLM_TEXT = """\
# HELP vllm:spec_decode_num_drafts_total Number of spec decoding drafts.
# TYPE vllm:spec_decode_num_drafts_total counter
vllm:spec_decode_num_drafts_total{{engine="0",model_name="m"}} {drafts0}
vllm:spec_decode_num_drafts_created{{engine="0",model_name="m"}} 1.7e+09
vllm:spec_decode_num_drafts_total{{engine="1",model_name="m"}} {drafts1}
vllm:spec_decode_num_draft_tokens_total{{engine="0",model_name="m"}} {draft_tokens}
vllm:spec_decode_num_accepted_tokens_total{{engine="0",model_name="m"}} {accepted}
"""


def vllm(drafts0: float, drafts1: float, draft_tokens: float, accepted: float) -> list[Sample]:
    text = VLLM_TEXT.format(
        drafts0=drafts0, drafts1=drafts1, draft_tokens=draft_tokens, accepted=accepted
    )
    return parse_exposition(text)


def test_parses_labels_with_escapes_timestamps_and_special_values() -> None:
    text = (
        'a{path="C:\\\\x",msg="say \\"hi\\", then}",empty=""} 1.5 1700000000000\n'
        "b 2\n"
        'c{x="1",} +Inf\n'
        "d NaN\n"
    )
    a, b, c, d = parse_exposition(text)
    assert a == Sample("a", (("empty", ""), ("msg", 'say "hi", then}'), ("path", "C:\\x")), 1.5)
    assert (b.name, b.labels, b.value) == ("b", (), 2.0)
    assert c.labels == (("x", "1"),) and c.value == float("inf")
    assert math.isnan(d.value)  # kept, so that a counter at NaN is no count


@pytest.mark.parametrize("line", ["<html>", "metric", 'm{a="1"', "m{a=1} 2"])
def test_rejects_what_is_not_the_format(line: str) -> None:
    with pytest.raises(ExpositionError, match="line 2 is not a Prometheus sample"):
        parse_exposition("ok 1\n" + line)


def test_counter_delta_sums_series_and_a_new_process() -> None:
    before = parse_exposition('c_total{e="0"} 10\nc_total{e="1"} 50\nc_created{e="0"} 9e9\n')
    after = parse_exposition('c_total{e="0"} 25\nc_total{e="1"} 57\nc_total{e="2"} 3\n')
    # e0 grew by 15, e1 by 7; e2 is a process that started during the run.
    assert counter_delta(before, after, "c") == 15 + 7 + 3
    assert counter_delta(before, after, "absent") is None


def test_a_counter_that_went_down_is_no_count() -> None:
    """An engine restarted during the run: what the old process counted since the first
    scrape is lost, so no difference of the two readings is the run's."""
    before = parse_exposition('c_total{e="0"} 10\nc_total{e="1"} 50\n')
    after = parse_exposition('c_total{e="0"} 25\nc_total{e="1"} 7\n')
    with pytest.raises(CounterProblem, match=r'c\{e="1"\} went down from 50 to 7'):
        counter_delta(before, after, "c")


def test_counter_without_total_suffix_is_found() -> None:
    assert counter_delta([], parse_exposition("c 4\n"), "c") == 4


def test_several_scraped_urls_add_up() -> None:
    one, two = parse_exposition('c_total{e="0"} 3\n'), parse_exposition('c_total{e="0"} 4\n')
    assert counter_delta([], merge({"http://a/metrics": one, "http://b/metrics": two}), "c") == 7


def test_vllm_figures_as_vllm_defines_them() -> None:
    before = vllm(drafts0=100, drafts1=0, draft_tokens=500, accepted=200)
    after = vllm(drafts0=130, drafts1=10, draft_tokens=700, accepted=290)
    figures = speculative_figures(before, after, requests_completed=3)
    assert figures is not None
    assert (figures.verify_steps, figures.draft_tokens, figures.accepted_tokens) == (40, 200, 90)
    assert figures.acceptance_rate == pytest.approx(90 / 200)
    assert figures.mean_accepted_tokens == pytest.approx(1 + 90 / 40)


def test_sglang_without_the_verify_counter_reads_the_gauges() -> None:
    after = parse_exposition(
        'sglang:spec_accept_length{tp_rank="0"} 3.0\nsglang:spec_accept_length{tp_rank="1"} 2.0\n'
        'sglang:spec_accept_rate{tp_rank="0"} 0.5\nsglang:spec_accept_rate{tp_rank="1"} 0.3\n'
    )
    figures = speculative_figures([], after, requests_completed=1)
    assert figures is not None
    assert figures.mean_accepted_tokens == pytest.approx(2.5)
    assert figures.acceptance_rate == pytest.approx(0.4)
    assert figures.draft_tokens is None and "last logging interval" in figures.source


def test_sglang_with_speculation_off_is_null() -> None:
    after = parse_exposition(
        'sglang:spec_accept_length{tp_rank="0"} 0\n'
        'sglang:generation_tokens_total{is_streaming="true"} 500\n'
    )
    assert speculative_figures([], after, requests_completed=5) is None


def test_sglang_without_a_request_counter_uses_the_completed_requests() -> None:
    after = parse_exposition(
        "sglang:spec_verify_calls_total 10\nsglang:generation_tokens_total 32\n"
        "sglang:spec_num_steps 3\n"
    )
    figures = speculative_figures([], after, requests_completed=2)
    assert figures is not None
    assert figures.accepted_tokens == 32 - 2 - 10
    assert figures.draft_tokens == 30
    # A failed request may have been finished by the engine: its count is no longer known.
    unknown = speculative_figures([], after, requests_completed=2, requests_failed=1)
    assert unknown is not None and unknown.acceptance_rate is None
    assert unknown.accepted_tokens is None and unknown.source == "sglang counters"
    assert unknown.unknown == (
        "no sglang:num_requests counter, and 1 request(s) failed: how many requests the engine "
        "finished is unknown"
    )


@given(st.floats(0.0, 1.0), st.integers(1, 16))
def test_expected_accepted_length_is_the_geometric_sum(acceptance: float, k: int) -> None:
    direct = sum(acceptance**i for i in range(k + 1))
    assert expected_accepted_length(acceptance, k) == pytest.approx(direct, rel=1e-6, abs=1e-9)


def test_sglang_without_a_draft_count_takes_the_rate_gauge() -> None:
    after = parse_exposition(
        "sglang:spec_verify_calls_total 10\nsglang:generation_tokens_total 31\n"
        "sglang:num_requests_total 1\nsglang:spec_accept_rate 0.55\n"
    )
    figures = speculative_figures([], after, requests_completed=1)
    assert figures is not None
    assert (figures.accepted_tokens, figures.draft_tokens) == (20, None)
    assert figures.mean_accepted_tokens == pytest.approx(3.0)
    assert figures.acceptance_rate == pytest.approx(0.55)
