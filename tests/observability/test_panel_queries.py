"""The dashboard's and the alerts' PromQL (mlcc/observability/promql.py), evaluated by a real
Prometheus 2.42 over the scripted fleet (fleet.py): each figure is the one the fakes script,
under the format each engine answers, and a twin's pods never count for its endpoint."""

from __future__ import annotations

import pytest
from fleet import NAMESPACE, Scraped

from mlcc.observability import promql
from mlcc.serving.engines import Engine

SPEC_V = promql.Series("spec-v", NAMESPACE, Engine.VLLM)  # two pods, vLLM text
TWIN_V = promql.Series("spec-v-baseline", NAMESPACE, Engine.VLLM)
SPEC_S = promql.Series("spec-s", NAMESPACE, Engine.SGLANG)  # scraped as OpenMetrics
SPEC_T = promql.Series("spec-t", NAMESPACE, Engine.SGLANG)  # scraped as text


@pytest.mark.parametrize(
    ("series", "acceptance", "mean_length"),
    [
        (SPEC_V, 36.0 / 60.0, 1 + 36.0 / 20.0),  # counters of both pods: 60%, 2.8
        (SPEC_S, 0.85, 4.4),  # SGLang's gauges, `sglang_*` names
        (SPEC_T, 0.85, 4.4),  # SGLang's gauges, `sglang:*` names
    ],
)
def test_the_acceptance_panels_read_the_scripted_figures(
    scraped: Scraped, series: promql.Series, acceptance: float, mean_length: float
) -> None:
    prometheus = scraped.prometheus
    # rate() extrapolates each counter to the window's edges on its own: ratios of rates are
    # exact only to a few parts in a million.
    rate = prometheus.scalar(promql.acceptance_rate(series))
    assert rate == pytest.approx(acceptance, rel=1e-4)
    length = prometheus.scalar(promql.mean_accepted_length(series))
    assert length == pytest.approx(mean_length, rel=1e-4)


@pytest.mark.parametrize(
    ("series", "queue"), [(SPEC_V, 3.0 + 4.0), (TWIN_V, 100.0), (SPEC_S, 5.0), (SPEC_T, 6.0)]
)
def test_the_queue_panel_reads_the_scripted_queue(
    scraped: Scraped, series: promql.Series, queue: float
) -> None:
    assert scraped.prometheus.scalar(promql.queue_depth(series)) == queue  # the twin's 100 alone


def test_the_throughput_panel_keeps_the_scripted_proportions(scraped: Scraped) -> None:
    """rate() divides by its whole 5 min window, so a fleet scraped for seconds reads low; the
    fleet's pods are equally old, so the scripted proportions hold: spec-v's two pods at 120
    tokens/s each against its twin's one, and the two SGLang pods at 90 each."""

    def rate(series: promql.Series) -> float:
        return scraped.prometheus.scalar(promql.output_tokens_per_second(series))

    assert rate(SPEC_V) / rate(TWIN_V) == pytest.approx(2.0, rel=0.15)
    assert rate(SPEC_S) / rate(SPEC_T) == pytest.approx(1.0, rel=0.15)
    assert rate(SPEC_S) / rate(TWIN_V) == pytest.approx(90.0 / 120.0, rel=0.15)


def test_a_twin_has_no_speculative_series_to_read(scraped: Scraped) -> None:
    """Why a twin gets no speculative panel: its acceptance query answers nothing at all, which
    a panel would show as 'no data', never as a collapse to 0."""
    assert scraped.prometheus.query(promql.acceptance_rate(TWIN_V)) == []
