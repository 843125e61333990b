"""One level of a sweep: the runs of the endpoint and of its baseline twin, pooled.

Throughput is a run's figure (all output tokens over its wall time, `mlcc.bench.stats`), so each
repeat gives one, and the speedup is paired by repeat (the endpoint's run and the twin's run of
the same repeat, back to back). Per user: each completed request's output tokens over its own
time from send to last token, averaged. Latencies pool every request of every repeat. Acceptance
pools the engine's counters over the repeats (token counts add up; a rate does not).

A decode step's time (`step_ms`, read by the recommendation's model): every request's time from
its first to its last token (e2e - TTFT), added up, over the steps they took. The twin takes one
step a token after the first; the endpoint one verify step a request and step, which is what
vLLM's `spec_decode_num_drafts` (`vllm/v1/core/sched/scheduler.py`,
`make_spec_decoding_stats`: one per request whose step drafted tokens) and SGLang's
`spec_verify_calls_total` count. Null without those counters.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from decimal import Decimal
from typing import Any

from mlcc.bench import cost as bench_money
from mlcc.bench.stats import distribution
from mlcc.bench.sweep.levels import ratio_interval

Run = Mapping[str, Any]


def level_figures(
    concurrency: int,
    requests: int,
    endpoint: Sequence[Run],
    twin: Sequence[Run],
    usd_per_hour: Decimal | None,
) -> dict[str, Any]:
    """bench.json's entry of one level (docs/bench.md, "Sweeping concurrency")."""
    ratios = [
        _ratio(e.get("output_tokens_per_s"), t.get("output_tokens_per_s"))
        for e, t in zip(endpoint, twin, strict=False)
    ]
    speedup = ratio_interval(ratios)
    own, base = side_figures(endpoint), side_figures(twin)
    return {
        "concurrency": concurrency,
        "requests_per_repeat": requests,
        "repeats": min(len(endpoint), len(twin)),
        "endpoint": own,
        "twin": base,
        "speedup": {
            "output_tokens_per_s": asdict(speedup) | {"per_repeat": ratios},
            "itl_p50": _ratio(base["itl_ms"]["p50"], own["itl_ms"]["p50"]),
            "ttft_p50": _ratio(base["ttft_ms"]["p50"], own["ttft_ms"]["p50"]),
        },
        "cost": _cost(usd_per_hour, own, base),
        "step_ms": {
            "twin": _ratio(base["decode_ms"], base["decode_tokens"]),
            "endpoint": _ratio(own["decode_ms"], (own["speculative"] or {}).get("verify_steps")),
        },
    }


def side_figures(runs: Sequence[Run]) -> dict[str, Any]:
    """One endpoint's figures at one level, over its repeats."""
    rates = [r.get("output_tokens_per_s") for r in runs]
    known = [rate for rate in rates if isinstance(rate, int | float)]
    rows = [row for run in runs for row in run.get("per_request") or [] if row.get("ok")]
    per_user = [
        row["output_tokens"] / (row["e2e_ms"] / 1000)
        for row in rows
        if isinstance(row.get("output_tokens"), int) and (row.get("e2e_ms") or 0) > 0
    ]
    decoding = [
        (row["e2e_ms"] - row["ttft_ms"], row["output_tokens"] - 1)
        for row in rows
        if all(isinstance(row.get(k), int | float) for k in ("e2e_ms", "ttft_ms", "output_tokens"))
    ]
    return {
        "output_tokens_per_s": sum(known) / len(known) if known else None,
        "output_tokens_per_s_per_repeat": rates,
        "output_tokens_per_s_per_user": sum(per_user) / len(per_user) if per_user else None,
        "completed": sum(int(r.get("completed") or 0) for r in runs),
        "failed": sum(int(r.get("failed") or 0) for r in runs),
        "ttft_ms": distribution(_values(rows, "ttft_ms")),
        "itl_ms": distribution(_values(rows, "itl_ms")),
        "e2e_ms": distribution(_values(rows, "e2e_ms")),
        "speculative": pooled_acceptance([r.get("speculative") for r in runs]),
        "decode_ms": sum(ms for ms, _ in decoding) if decoding else None,
        "decode_tokens": sum(tokens for _, tokens in decoding) if decoding else None,
    }


def _values(rows: Sequence[Mapping[str, Any]], key: str) -> list[float]:
    return [row[key] for row in rows if isinstance(row.get(key), int | float)]


def pooled_acceptance(figures: Sequence[Any]) -> dict[str, Any] | None:
    """The repeats' speculative counters added up; None when no repeat has them."""
    counted = [f for f in figures if isinstance(f, Mapping) and f.get("verify_steps")]
    if not counted:
        gauges = [f for f in figures if isinstance(f, Mapping) and f.get("mean_accepted_tokens")]
        return dict(gauges[-1]) if gauges else None  # SGLang's gauges: the last interval
    steps = sum(f["verify_steps"] for f in counted)
    accepted = sum(f.get("accepted_tokens") or 0 for f in counted)
    drafted = [f.get("draft_tokens") for f in counted]
    draft_tokens = sum(d for d in drafted if d) if all(drafted) else None
    positions = [f.get("acceptance_per_position") for f in counted]
    per_position = None
    if all(positions) and len({len(p) for p in positions if p}) == 1:
        width = len(positions[0] or [])
        per_position = [
            sum((p or [])[i] * f["verify_steps"] for p, f in zip(positions, counted, strict=True))
            / steps
            for i in range(width)
        ]
    return {
        "acceptance_rate": accepted / draft_tokens if draft_tokens else None,
        "mean_accepted_tokens": 1 + accepted / steps,
        "draft_tokens": draft_tokens,
        "accepted_tokens": accepted,
        "verify_steps": steps,
        "acceptance_per_position": per_position,
        "drafts_per_step": draft_tokens / steps if draft_tokens else None,
        "source": counted[0].get("source"),
    }


def _cost(usd_per_hour: Decimal | None, own: Run, base: Run) -> dict[str, Any]:
    """$ per 1M output tokens of both at this level (mlcc.bench.cost), the same price for both:
    the twin runs on the same nodes (docs/bench.md)."""
    figures = bench_money.figures(
        usd_per_hour,
        "",
        {"output_tokens_per_s": own["output_tokens_per_s"]},
        {"output_tokens_per_s": base["output_tokens_per_s"]},
    )
    return {
        "usd_per_million_output_tokens": figures["usd_per_million_output_tokens"],
        "twin_usd_per_million_output_tokens": figures["baseline_usd_per_million_output_tokens"],
        "saving_percent": figures["saving_percent"],
    }


def _ratio(numerator: Any, denominator: Any) -> float | None:
    if not isinstance(numerator, int | float) or not isinstance(denominator, int | float):
        return None
    return numerator / denominator if denominator > 0 and numerator >= 0 else None
