"""A candidate draft head in a sweep (`mlcc bench --candidate-url`, docs/draft-promotion.md): its
runs at one level, beside the current head's and the twin's of the same repeats.

`figures`, `speedup` (over the twin, paired by repeat), `cost` and `step_ms` are what
`mlcc.bench.sweep.figures.level_figures` gives the current head; `over_current` is the candidate's
output tokens/s over the current head's, paired by repeat, with its 95 % interval, and the ITL and
TTFT ratios (current / candidate: above 1, the candidate is faster). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from decimal import Decimal
from typing import Any

from mlcc.bench.sweep.figures import Run, level_figures
from mlcc.bench.sweep.levels import ratio_interval


def candidate_entry(
    level: Mapping[str, Any],
    current: Sequence[Run],
    candidate: Sequence[Run],
    twin: Sequence[Run],
    usd_per_hour: Decimal | None,
) -> dict[str, Any]:
    """The `candidate` entry of `level` (the current head's, from level_figures) in bench.json."""
    against_twin = level_figures(
        level["concurrency"], level["requests_per_repeat"], candidate, twin, usd_per_hour
    )
    ratios = [
        _ratio(new.get("output_tokens_per_s"), old.get("output_tokens_per_s"))
        for new, old in zip(candidate, current, strict=False)
    ]
    own, old = against_twin["endpoint"], level["endpoint"]
    return {
        "figures": own,
        "speedup": against_twin["speedup"],
        "cost": against_twin["cost"],
        "step_ms": against_twin["step_ms"],
        "over_current": {
            "output_tokens_per_s": asdict(ratio_interval(ratios)) | {"per_repeat": ratios},
            "itl_p50": _ratio(old["itl_ms"]["p50"], own["itl_ms"]["p50"]),
            "ttft_p50": _ratio(old["ttft_ms"]["p50"], own["ttft_ms"]["p50"]),
        },
    }


def _ratio(numerator: Any, denominator: Any) -> float | None:
    if not isinstance(numerator, int | float) or not isinstance(denominator, int | float):
        return None
    return numerator / denominator if denominator > 0 and numerator >= 0 else None
