"""Distributions, the run summary written to bench.json, and the speedup against a baseline."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mlcc.bench.client.stream import RequestResult
from mlcc.bench.speculative import SpeculativeFigures

PERCENTILES = (50, 90, 99)
LATENCY_KEYS = ("ttft_ms", "itl_ms", "e2e_ms")


@dataclass(frozen=True)
class RunSettings:
    label: str
    engine: str
    model: str
    target: str
    requests: int
    concurrency: int
    max_tokens: int


def percentile(values: Sequence[float], pct: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    ordered = sorted(values)
    rank = (len(ordered) - 1) * pct / 100
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def distribution(values_ms: Sequence[float]) -> dict[str, float | None]:
    summary: dict[str, float | None] = dict.fromkeys([*(f"p{p}" for p in PERCENTILES), "mean"])
    if values_ms:
        summary |= {f"p{p}": percentile(values_ms, p) for p in PERCENTILES}
        summary["mean"] = sum(values_ms) / len(values_ms)
    return summary


def _ms(values: Sequence[float | None]) -> list[float]:
    return [value * 1000 for value in values if value is not None]


NO_USAGE = "the stream ended without its usage chunk (other streams of the run had one)"
TOKEN_FIGURES = ("output_tokens", "output_tokens_per_s", "itl_ms")


def require_usage(results: Sequence[RequestResult]) -> list[RequestResult]:
    """When the server reports usage, the token figures are built from it: a completed stream
    without its usage chunk was cut short, not served by a server that never reports it."""
    if not any(r.ok and r.usage_reported for r in results):
        return list(results)
    return [
        r if not r.ok or r.usage_reported else RequestResult(ok=False, error=NO_USAGE)
        for r in results
    ]


def _usage_problem(results: Sequence[RequestResult]) -> str | None:
    problems = [(i, r.usage_problem) for i, r in enumerate(results, 1) if r.ok and r.usage_problem]
    if not problems:
        return None
    number, first = problems[0]
    return (
        f"{len(problems)} request(s) reported an impossible token count; request {number}: {first}"
    )


def _none_completed(results: Sequence[RequestResult]) -> str | None:
    """No request completed: no token was counted, so no rate can be (0 tokens/s would say the
    server answered, slowly; it did not answer)."""
    if any(r.ok for r in results):
        return None
    return f"no request completed ({len(results)} sent, all failed)"


def summarize(
    settings: RunSettings,
    results: Sequence[RequestResult],
    wall_s: float,
    speculative: SpeculativeFigures | None,
    interrupted: bool = False,
) -> dict[str, Any]:
    """The run's figures; a figure that cannot be known is null, with its reason in `unknown`."""
    results = require_usage(results)
    completed = [r for r in results if r.ok]
    usage_problem = _usage_problem(results) or _none_completed(results)
    counts = [r.output_tokens for r in completed]
    output_tokens = None if usage_problem else sum(c for c in counts if c is not None)
    unknown = dict.fromkeys(TOKEN_FIGURES, usage_problem) if usage_problem else {}
    if speculative is not None and speculative.unknown:
        unknown["speculative"] = speculative.unknown
    return {
        "label": settings.label,
        "engine": settings.engine,
        "model": settings.model,
        "target": settings.target,
        "requests": settings.requests,
        "concurrency": settings.concurrency,
        "max_tokens": settings.max_tokens,
        "sent": len(results),
        "interrupted": interrupted,
        "completed": len(completed),
        "failed": len(results) - len(completed),
        "duration_s": wall_s,
        "output_tokens": output_tokens,
        "output_tokens_per_s": _ratio(output_tokens, wall_s),
        "ttft_ms": distribution(_ms([r.ttft_s for r in completed])),
        "itl_ms": distribution([] if usage_problem else _ms([r.itl_s for r in completed])),
        "e2e_ms": distribution(_ms([r.e2e_s for r in completed])),
        "usage_reported": all(r.usage_reported for r in completed) if completed else None,
        "speculative": speculative.as_json() if speculative else None,
        "unknown": unknown,
        "errors": _error_counts(results),
        "per_request": [_per_request(r) for r in results],
    }


def _error_counts(results: Sequence[RequestResult]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for result in results:
        if result.error:
            counts[result.error] = counts.get(result.error, 0) + 1
    return counts


def _per_request(result: RequestResult) -> dict[str, Any]:
    def ms(value: float | None) -> float | None:
        return None if value is None else value * 1000

    return {
        "ok": result.ok,
        "ttft_ms": ms(result.ttft_s),
        "itl_ms": ms(result.itl_s),
        "e2e_ms": ms(result.e2e_s),
        "output_tokens": result.output_tokens,
        "chunks": result.content_chunks,
        "error": result.error,
        "usage_problem": result.usage_problem,
    }


def speedup(new: Mapping[str, Any], baseline: Mapping[str, Any]) -> dict[str, float | None]:
    """Above 1 means the new run is better: baseline / new for latencies, new / baseline for
    throughput."""
    return {
        "itl_p50": _ratio(_p50(baseline, "itl_ms"), _p50(new, "itl_ms")),
        "ttft_p50": _ratio(_p50(baseline, "ttft_ms"), _p50(new, "ttft_ms")),
        "output_tokens_per_s": _ratio(
            new.get("output_tokens_per_s"), baseline.get("output_tokens_per_s")
        ),
    }


def _p50(run: Mapping[str, Any], key: str) -> Any:
    figures = run.get(key)
    return figures.get("p50") if isinstance(figures, Mapping) else None


def _ratio(numerator: Any, denominator: Any) -> float | None:
    """numerator / denominator for true figures only: finite, not negative, a denominator over
    0 (a baseline file may hold anything), and a finite result."""
    if not (_figure(numerator) and _figure(denominator)) or denominator <= 0:
        return None
    ratio = numerator / denominator
    return ratio if math.isfinite(ratio) else None


def _figure(value: Any) -> bool:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value) and value >= 0
    except OverflowError:  # an integer beyond any float
        return False


def most_failed(summary: Mapping[str, Any]) -> bool:
    """More than half the requests failed: the figures would describe the failures."""
    return bool(summary["failed"] * 2 > summary["sent"])
