"""Speculative-decoding figures from the engines' own Prometheus metrics, differenced over a run.

vLLM 0.27.1 (`vllm/v1/spec_decode/metrics.py`, class `SpecDecodingProm`) exports counters, one
series per engine (labels `model_name`, `engine`), which prometheus_client names with `_total`:
`vllm:spec_decode_num_drafts` (verify steps), `vllm:spec_decode_num_draft_tokens`,
`vllm:spec_decode_num_accepted_tokens` and `vllm:spec_decode_num_accepted_tokens_per_pos`
(label `position`). vLLM's own figures: acceptance rate = accepted / draft tokens; mean
acceptance length = 1 + accepted / drafts (the bonus token included).

SGLang 0.5.17 exports no drafted or accepted token counters. `TokenizerMetricsCollector`
(`sglang/srt/observability/metrics_collector.py`) counts, per finished request,
`sglang:spec_verify_calls_total` (verify steps), `sglang:generation_tokens_total` and
`sglang:num_requests_total`; the scheduler sets gauges for the last logging interval only:
`sglang:spec_accept_length`, `sglang:spec_accept_rate`, `sglang:spec_num_draft_tokens`,
`sglang:spec_num_steps`. Every verify step commits its accepted drafts plus one bonus token and
each request's first token comes from prefill, so over the run
accepted = generated - requests - verify steps, and drafted = verify steps x (draft tokens per
step - 1), as SGLang's own `metrics_reporter.py` counts proposals (`speculative_num_draft_tokens
- 1`, else `speculative_num_steps`; without either gauge the acceptance rate is the
`sglang:spec_accept_rate` gauge). Without the verify counter the gauges are used as they are:
the last interval, not the run, and no token counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from mlcc.bench.prometheus import Sample, counter_delta, counter_delta_by_label, gauge_values

VLLM_DRAFTS = "vllm:spec_decode_num_drafts"
VLLM_DRAFT_TOKENS = "vllm:spec_decode_num_draft_tokens"
VLLM_ACCEPTED_TOKENS = "vllm:spec_decode_num_accepted_tokens"
VLLM_ACCEPTED_PER_POSITION = "vllm:spec_decode_num_accepted_tokens_per_pos"

SGLANG_VERIFY_CALLS = "sglang:spec_verify_calls_total"
SGLANG_GENERATION_TOKENS = "sglang:generation_tokens_total"
SGLANG_REQUESTS = "sglang:num_requests_total"
SGLANG_ACCEPT_LENGTH = "sglang:spec_accept_length"
SGLANG_ACCEPT_RATE = "sglang:spec_accept_rate"
SGLANG_NUM_DRAFT_TOKENS = "sglang:spec_num_draft_tokens"
SGLANG_NUM_STEPS = "sglang:spec_num_steps"


@dataclass(frozen=True)
class SpeculativeFigures:
    acceptance_rate: float | None
    mean_accepted_tokens: float | None
    draft_tokens: int | None
    accepted_tokens: int | None
    verify_steps: int | None
    acceptance_per_position: list[float] | None
    source: str

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def speculative_figures(
    before: Sequence[Sample], after: Sequence[Sample], requests_completed: int
) -> SpeculativeFigures | None:
    """The run's figures from whichever engine's metrics are present; None when the server
    exports no speculative metric (or only SGLang's, idle: speculation is off)."""
    return _from_vllm(before, after) or _from_sglang(before, after, requests_completed)


def _from_vllm(before: Sequence[Sample], after: Sequence[Sample]) -> SpeculativeFigures | None:
    drafts = counter_delta(before, after, VLLM_DRAFTS)
    draft_tokens = counter_delta(before, after, VLLM_DRAFT_TOKENS)
    accepted = counter_delta(before, after, VLLM_ACCEPTED_TOKENS)
    if drafts is None or draft_tokens is None or accepted is None:
        return None
    per_position = counter_delta_by_label(before, after, VLLM_ACCEPTED_PER_POSITION, "position")
    return SpeculativeFigures(
        acceptance_rate=_ratio(accepted, draft_tokens),
        mean_accepted_tokens=_plus_one(_ratio(accepted, drafts)),
        draft_tokens=round(draft_tokens),
        accepted_tokens=round(accepted),
        verify_steps=round(drafts),
        acceptance_per_position=_per_position(per_position, drafts),
        source="vllm counters",
    )


def _from_sglang(
    before: Sequence[Sample], after: Sequence[Sample], requests_completed: int
) -> SpeculativeFigures | None:
    verify_steps = counter_delta(before, after, SGLANG_VERIFY_CALLS)
    generated = counter_delta(before, after, SGLANG_GENERATION_TOKENS)
    if verify_steps and generated is not None:
        requests = counter_delta(before, after, SGLANG_REQUESTS)
        finished = requests if requests is not None else requests_completed
        accepted = max(0.0, generated - finished - verify_steps)
        per_step = _sglang_drafts_per_step(after)
        drafted = verify_steps * per_step if per_step else None
        return SpeculativeFigures(
            acceptance_rate=_ratio(accepted, drafted) if drafted else _mean_gauge(after),
            mean_accepted_tokens=_plus_one(_ratio(accepted, verify_steps)),
            draft_tokens=round(drafted) if drafted else None,
            accepted_tokens=round(accepted),
            verify_steps=round(verify_steps),
            acceptance_per_position=None,
            source="sglang counters",
        )
    return _from_sglang_gauges(after)


def _sglang_drafts_per_step(after: Sequence[Sample]) -> float | None:
    draft_tokens = [v for v in gauge_values(after, SGLANG_NUM_DRAFT_TOKENS) if v > 0]
    if draft_tokens:
        return max(draft_tokens) - 1
    steps = [v for v in gauge_values(after, SGLANG_NUM_STEPS) if v > 0]
    return max(steps) if steps else None


def _mean_gauge(after: Sequence[Sample], name: str = SGLANG_ACCEPT_RATE) -> float | None:
    values = gauge_values(after, name)
    return sum(values) / len(values) if values else None


def _from_sglang_gauges(after: Sequence[Sample]) -> SpeculativeFigures | None:
    lengths = [v for v in gauge_values(after, SGLANG_ACCEPT_LENGTH) if v > 0]
    if not lengths:
        return None
    return SpeculativeFigures(
        acceptance_rate=_mean_gauge(after),
        mean_accepted_tokens=sum(lengths) / len(lengths),
        draft_tokens=None,
        accepted_tokens=None,
        verify_steps=None,
        acceptance_per_position=None,
        source="sglang gauges (last logging interval, not the run)",
    )


def _per_position(accepted_by_position: dict[str, float], drafts: float) -> list[float] | None:
    if not accepted_by_position or not drafts:
        return None
    ordered = sorted(accepted_by_position.items(), key=lambda item: int(item[0]))
    return [accepted / drafts for _, accepted in ordered]


def _ratio(numerator: float, denominator: float | None) -> float | None:
    return numerator / denominator if denominator else None


def _plus_one(value: float | None) -> float | None:
    return None if value is None else 1.0 + value


def expected_accepted_length(acceptance: float, drafted_per_step: int) -> float:
    """Expected tokens per verify step, bonus included, when each draft is accepted with
    probability `acceptance` independently: (1 - a^(k+1)) / (1 - a)."""
    if acceptance >= 1.0:
        return float(drafted_per_step + 1)
    return (1.0 - acceptance ** (drafted_per_step + 1)) / (1.0 - acceptance)
