"""Distributions, the run summary written to bench.json, and the speedup against a baseline."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mlcc.bench.speculative import SpeculativeFigures
from mlcc.bench.stream import RequestResult

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


def summarize(
    settings: RunSettings,
    results: Sequence[RequestResult],
    wall_s: float,
    speculative: SpeculativeFigures | None,
) -> dict[str, Any]:
    completed = [r for r in results if r.ok]
    output_tokens = sum(r.output_tokens for r in completed)
    return {
        "label": settings.label,
        "engine": settings.engine,
        "model": settings.model,
        "target": settings.target,
        "requests": settings.requests,
        "concurrency": settings.concurrency,
        "max_tokens": settings.max_tokens,
        "completed": len(completed),
        "failed": len(results) - len(completed),
        "duration_s": wall_s,
        "output_tokens": output_tokens,
        "output_tokens_per_s": output_tokens / wall_s if wall_s > 0 else None,
        "ttft_ms": distribution(_ms([r.ttft_s for r in completed])),
        "itl_ms": distribution(_ms([r.itl_s for r in completed])),
        "e2e_ms": distribution(_ms([r.e2e_s for r in completed])),
        "usage_reported": all(r.usage_reported for r in completed) if completed else None,
        "speculative": speculative.as_json() if speculative else None,
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
    if not isinstance(numerator, int | float) or not isinstance(denominator, int | float):
        return None
    return numerator / denominator if denominator > 0 else None


def most_failed(summary: Mapping[str, Any]) -> bool:
    """More than half the requests failed: the figures would describe the failures."""
    return bool(summary["failed"] * 2 > summary["requests"])
