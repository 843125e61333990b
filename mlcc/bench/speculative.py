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

Readings that cannot be the run's (a counter at `+Inf` or `NaN`, one that went down or vanished
between the scrapes, more accepted than drafted tokens, counts that do not add up) give no
figures: `unknown` says why, and every figure is null.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from mlcc.bench.prometheus import (
    CounterProblem,
    Sample,
    counter_delta,
    counter_delta_by_label,
    gauge_values,
)
from mlcc.facts.engine_metrics import metric, releases


def _defined(engine: str, name: str) -> str:
    """A metric name every supported release of the engine defines (mlcc/facts/engine_metrics.json,
    from the wheels); a counter without the `_total` that `series` matches either way."""
    for version in releases(engine):
        metric(engine, version, name)  # UnknownMetric (at import) if a release lacks it
    return name


VLLM_DRAFTS = _defined("vllm", "vllm:spec_decode_num_drafts")
VLLM_DRAFT_TOKENS = _defined("vllm", "vllm:spec_decode_num_draft_tokens")
VLLM_ACCEPTED_TOKENS = _defined("vllm", "vllm:spec_decode_num_accepted_tokens")
VLLM_ACCEPTED_PER_POSITION = _defined("vllm", "vllm:spec_decode_num_accepted_tokens_per_pos")

SGLANG_VERIFY_CALLS = _defined("sglang", "sglang:spec_verify_calls")
SGLANG_GENERATION_TOKENS = _defined("sglang", "sglang:generation_tokens")
SGLANG_REQUESTS = _defined("sglang", "sglang:num_requests")
SGLANG_ACCEPT_LENGTH = _defined("sglang", "sglang:spec_accept_length")
SGLANG_ACCEPT_RATE = _defined("sglang", "sglang:spec_accept_rate")
SGLANG_NUM_DRAFT_TOKENS = _defined("sglang", "sglang:spec_num_draft_tokens")
SGLANG_NUM_STEPS = _defined("sglang", "sglang:spec_num_steps")


@dataclass(frozen=True)
class SpeculativeFigures:
    acceptance_rate: float | None
    mean_accepted_tokens: float | None
    draft_tokens: int | None
    accepted_tokens: int | None
    verify_steps: int | None
    acceptance_per_position: list[float] | None
    source: str
    unknown: str | None = None  # why the figures are null although the server exports them

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def speculative_figures(
    before: Sequence[Sample],
    after: Sequence[Sample],
    requests_completed: int,
    requests_failed: int = 0,
) -> SpeculativeFigures | None:
    """The run's figures from whichever engine's metrics are present; None when the server
    exports no speculative metric (or only SGLang's, idle: speculation is off). Without
    `sglang:num_requests` the requests SGLang finished are the ones that completed here, which
    holds only when none failed: a failed request may have been finished by the engine."""
    try:
        figures = _from_vllm(before, after)
    except CounterProblem as problem:
        return _unknown("vllm counters", str(problem))
    if figures is not None:
        return figures
    try:
        return _from_sglang(before, after, requests_completed, requests_failed)
    except CounterProblem as problem:
        return _unknown("sglang counters", str(problem))


def _unknown(source: str, reason: str) -> SpeculativeFigures:
    return SpeculativeFigures(None, None, None, None, None, None, source, unknown=reason)


def _from_vllm(before: Sequence[Sample], after: Sequence[Sample]) -> SpeculativeFigures | None:
    drafts = counter_delta(before, after, VLLM_DRAFTS)
    draft_tokens = counter_delta(before, after, VLLM_DRAFT_TOKENS)
    accepted = counter_delta(before, after, VLLM_ACCEPTED_TOKENS)
    if drafts is None or draft_tokens is None or accepted is None:
        return None
    _whole(drafts=drafts, draft_tokens=draft_tokens, accepted_tokens=accepted)
    if accepted > draft_tokens:
        raise CounterProblem(f"{accepted:g} tokens accepted of {draft_tokens:g} drafted")
    if draft_tokens and not drafts:
        raise CounterProblem(f"{draft_tokens:g} tokens drafted in no draft step")
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
    before: Sequence[Sample], after: Sequence[Sample], requests_completed: int, failed: int
) -> SpeculativeFigures | None:
    verify_steps = counter_delta(before, after, SGLANG_VERIFY_CALLS)
    generated = counter_delta(before, after, SGLANG_GENERATION_TOKENS)
    if verify_steps and generated is not None:
        requests = counter_delta(before, after, SGLANG_REQUESTS)
        if requests is None and failed:
            raise CounterProblem(
                f"no {SGLANG_REQUESTS} counter, and {failed} request(s) failed: how many "
                "requests the engine finished is unknown"
            )
        finished = requests if requests is not None else requests_completed
        _whole(verify_steps=verify_steps, generated_tokens=generated, requests=finished)
        accepted = generated - finished - verify_steps
        if accepted < 0:
            raise CounterProblem(
                f"{generated:g} tokens generated, fewer than one a request ({finished:g}) "
                f"plus one a verify step ({verify_steps:g})"
            )
        per_step = _sglang_drafts_per_step(after)
        drafted = verify_steps * per_step if per_step else None
        if drafted is not None and accepted > drafted:
            raise CounterProblem(f"{accepted:g} tokens accepted of {drafted:g} drafted")
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
    draft_tokens = [v for v in _gauges(after, SGLANG_NUM_DRAFT_TOKENS) if v > 0]
    if draft_tokens:
        return max(draft_tokens) - 1
    steps = [v for v in _gauges(after, SGLANG_NUM_STEPS) if v > 0]
    return max(steps) if steps else None


def _mean_gauge(after: Sequence[Sample], name: str = SGLANG_ACCEPT_RATE) -> float | None:
    values = _gauges(after, name)
    if any(value > 1 for value in values):
        raise CounterProblem(f"{name} reads {max(values):g}, over 100%")
    return sum(values) / len(values) if values else None


def _gauges(after: Sequence[Sample], name: str) -> list[float]:
    values = gauge_values(after, name)
    for value in values:
        if not (math.isfinite(value) and value >= 0):
            raise CounterProblem(f"{name} reads {value:g}")
    return values


def _whole(**counts: float) -> None:
    """Counters of tokens and steps grow by whole numbers."""
    for name, value in counts.items():
        if value != int(value):
            raise CounterProblem(f"{name} grew by {value:g}, not a whole number")


def _from_sglang_gauges(after: Sequence[Sample]) -> SpeculativeFigures | None:
    lengths = [v for v in _gauges(after, SGLANG_ACCEPT_LENGTH) if v > 0]
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
    """Each draft step accepts a given position at most once."""
    if not accepted_by_position or not drafts:
        return None
    if not all(key.isascii() and key.isdigit() and len(key) < 6 for key in accepted_by_position):
        raise CounterProblem(f"{VLLM_ACCEPTED_PER_POSITION} has a position that is not a number")
    ordered = sorted(accepted_by_position.items(), key=lambda item: int(item[0]))
    for position, accepted in ordered:
        if accepted > drafts:
            raise CounterProblem(
                f"position {position} accepted {accepted:g} times in {drafts:g} draft steps"
            )
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
