"""The PromQL of one endpoint's figures, shared by the dashboard panels and the alert rules.

Every query selects the endpoint's own pods (`namespace` and the exact pod-name regex of
mlcc/config/pod_names.py, as the KEDA trigger does), never its twin's, and sums or averages
over them, so each answers one series without labels. Rates are over `RATE_WINDOW`.
A speculative query is only ever written for an endpoint that speculates: a twin's panels and
rules read its throughput, latency, queue and pods, never its (absent) speculative series.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlcc.config import pod_names
from mlcc.facts.engine_metrics import EngineMetric
from mlcc.observability import metric_names as names
from mlcc.serving.engines import Engine

RATE_WINDOW = "5m"
QUANTILES = (0.5, 0.9, 0.99)


@dataclass(frozen=True)
class Series:
    """Where one endpoint's series are: its engine and its pods' labels."""

    endpoint: str
    namespace: str
    engine: Engine

    @property
    def matchers(self) -> str:
        return pod_names.pod_matchers(self.namespace, self.endpoint)

    def select(self, name: EngineMetric | str, extra: str = "", suffix: str | None = None) -> str:
        return names.selector(name, ",".join(p for p in (self.matchers, extra) if p), suffix)


def _rate(series: Series, name: EngineMetric) -> str:
    return f"sum(rate({series.select(name)}[{RATE_WINDOW}]))"


def acceptance_rate(series: Series) -> str:
    """Accepted / drafted tokens over the window, from the engine's counters (vLLM's token
    counters; SGLang's as `mlcc bench` and `mlcc verify` count them: `_sglang_accepted`)."""
    if series.engine is Engine.SGLANG:
        verify = _rate(series, names.SGLANG_VERIFY_CALLS)
        return f"{_sglang_accepted(series)} / ({verify} * {_sglang_drafts_per_step(series)})"
    accepted = _rate(series, names.VLLM_ACCEPTED_TOKENS)
    return f"{accepted} / {_rate(series, names.VLLM_DRAFT_TOKENS)}"


def mean_accepted_length(series: Series) -> str:
    """Tokens per verify step, the bonus token included (vLLM: 1 + accepted / drafts)."""
    if series.engine is Engine.SGLANG:
        return f"1 + {_sglang_accepted(series)} / {_rate(series, names.SGLANG_VERIFY_CALLS)}"
    accepted = _rate(series, names.VLLM_ACCEPTED_TOKENS)
    return f"1 + {accepted} / {_rate(series, names.VLLM_DRAFTS)}"


def _sglang_accepted(series: Series) -> str:
    """SGLang's accepted draft tokens a second: every output token but each request's first
    (from prefill) and each verify step's bonus token (mlcc/bench/speculative.py)."""
    generated = _rate(series, names.GENERATION_TOKENS[Engine.SGLANG])
    requests = _rate(series, names.SGLANG_REQUESTS)
    return f"({generated} - {requests} - {_rate(series, names.SGLANG_VERIFY_CALLS)})"


def _sglang_drafts_per_step(series: Series) -> str:
    """Draft tokens a verify step: `spec_num_draft_tokens` - 1 (the root is no draft), else
    `spec_num_steps`, as mlcc/prometheus/live.py reads them."""
    tokens = series.select(names.SGLANG_NUM_DRAFT_TOKENS)
    steps = series.select(names.SGLANG_NUM_STEPS)
    window = RATE_WINDOW
    return (
        f"((max(max_over_time({tokens}[{window}])) - 1) > 0"
        f" or max(max_over_time({steps}[{window}])))"
    )


def acceptance_per_position(series: Series) -> str | None:
    """How often each draft position is accepted per draft step (vLLM only: SGLang exports no
    per-position series), one series per `position` label."""
    if series.engine is not Engine.VLLM:
        return None
    per_position = series.select(names.VLLM_ACCEPTED_PER_POSITION)
    by_position = f"sum by (position) (rate({per_position}[{RATE_WINDOW}]))"
    return f"{by_position} / on() group_left() {_rate(series, names.VLLM_DRAFTS)}"


def output_tokens_per_second(series: Series) -> str:
    return _rate(series, names.GENERATION_TOKENS[series.engine])


def latency_quantile(series: Series, histogram: dict[Engine, EngineMetric], quantile: float) -> str:
    buckets = series.select(histogram[series.engine], suffix="_bucket")
    return f"histogram_quantile({quantile:g}, sum by (le) (rate({buckets}[{RATE_WINDOW}])))"


def time_to_first_token(series: Series, quantile: float) -> str:
    return latency_quantile(series, names.TIME_TO_FIRST_TOKEN, quantile)


def inter_token_latency(series: Series, quantile: float) -> str:
    return latency_quantile(series, names.INTER_TOKEN_LATENCY, quantile)


def queue_depth(series: Series) -> str:
    return f"sum({series.select(names.QUEUE_DEPTH[series.engine])})"


def ready_pods(series: Series) -> str:
    ready = series.select(names.POD_READY, 'condition="true"')
    return f"sum({ready})"
