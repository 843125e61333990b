"""Dollars per million output tokens, and what speculation saves (docs/bench.md, docs/cost.md).

Pure. The hourly price of the nodes the endpoint's pods use (its share of the stack's nodes by
GPUs, or `--usd-per-hour`), divided by the output tokens it produced per hour at the load it was
measured at: `usd_per_hour * 1e6 / (output_tokens_per_s * 3600)`, in exact decimal arithmetic
and rounded to the cent only when shown and written. The baseline twin runs on the same nodes
(the same instance type and GPUs, docs/bench.md), so its figure is the same price over its own
throughput, unless its bench.json recorded a price of its own. Without a price the dollar
figures are null and say so; the saving is still the ratio of the two throughputs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

CENT = Decimal("0.01")
TENTH = Decimal("0.1")
MILLION = Decimal(1_000_000)
SECONDS_PER_HOUR = Decimal(3600)


def positive_decimal(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        return None
    return amount if amount.is_finite() and amount > 0 else None


def per_million(usd_per_hour: Decimal | None, tokens_per_s: Any) -> Decimal | None:
    """USD per million output tokens, unrounded; None without a price or a throughput."""
    rate = positive_decimal(tokens_per_s)
    if usd_per_hour is None or rate is None:
        return None
    return usd_per_hour * MILLION / (rate * SECONDS_PER_HOUR)


def _cents(amount: Decimal | None) -> str | None:
    return _rounded(amount, CENT)


def _rounded(amount: Decimal | None, step: Decimal) -> str | None:
    """`amount` to `step`; None past what a figure can be (more digits than Decimal's 28, as a
    price of 10^30 dollars an hour, or a baseline of 10^300 tokens/s, would give)."""
    if amount is None:
        return None
    try:
        return str(amount.quantize(step, rounding=ROUND_HALF_UP))
    except InvalidOperation:
        return None


def figures(
    usd_per_hour: Decimal | None,
    source: str,
    run: Mapping[str, Any],
    baseline: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """bench.json's `cost`: the price, $/1M output tokens of the run and of its baseline, and
    the saving (in dollars when priced, always as a throughput ratio when both ran)."""
    own = per_million(usd_per_hour, run.get("output_tokens_per_s"))
    found: dict[str, Any] = {
        "usd_per_hour": None if usd_per_hour is None else str(usd_per_hour),
        "price_source": source,
        "usd_per_million_output_tokens": _cents(own),
    }
    if found["usd_per_million_output_tokens"] is None:
        found["unknown"] = _why_unknown(usd_per_hour, source, run.get("output_tokens_per_s"))
    if baseline is None:
        return found
    recorded = (baseline.get("cost") or {}) if isinstance(baseline.get("cost"), Mapping) else {}
    base_price = positive_decimal(recorded.get("usd_per_hour")) or usd_per_hour
    other = per_million(base_price, baseline.get("output_tokens_per_s"))
    new_rate = positive_decimal(run.get("output_tokens_per_s"))
    old_rate = positive_decimal(baseline.get("output_tokens_per_s"))
    ratio = None if new_rate is None or old_rate is None else new_rate / old_rate
    found |= {
        "baseline_usd_per_million_output_tokens": _cents(other),
        "saving_usd_per_million_output_tokens": (
            None
            if own is None or other is None or _cents(own) is None or _cents(other) is None
            else _cents(other - own)
        ),
        "throughput_ratio": _finite_float(ratio),
        # the share of the baseline's $/1M speculation saves: 1 - baseline rate / this rate
        "saving_percent": None if ratio is None else _rounded((1 - 1 / ratio) * 100, TENTH),
    }
    return found


def _why_unknown(usd_per_hour: Decimal | None, source: str, tokens_per_s: Any) -> str:
    if usd_per_hour is None:
        return source
    if positive_decimal(tokens_per_s) is None:
        return "no output tokens/s to divide the price by"
    return "too large to be a price per token"


def _finite_float(value: Decimal | None) -> float | None:
    number = None if value is None else float(value)
    return number if number is not None and math.isfinite(number) and number > 0 else None


def lines(cost: Mapping[str, Any] | None) -> list[str]:
    """The printed table's cost lines."""
    if not cost:
        return []
    own = cost.get("usd_per_million_output_tokens")
    price = cost.get("usd_per_hour")
    if own is None:
        why = cost.get("unknown") or cost.get("price_source")
        found = [f"  $ per 1M output tokens: unknown ({why})"]
    else:
        found = [f"  $ per 1M output tokens: ${own} (at ${price}/h, {cost.get('price_source')})"]
    if "throughput_ratio" in cost:
        base = cost.get("baseline_usd_per_million_output_tokens")
        saving = cost.get("saving_usd_per_million_output_tokens")
        ratio = cost.get("throughput_ratio")
        percent = cost.get("saving_percent")
        if base is not None:
            found.append(f"  baseline $ per 1M output tokens: ${base}")
        if saving is not None:
            found.append(f"  speculation saves ${saving} per 1M output tokens ({percent}%)")
        elif ratio is not None and percent is not None:
            found.append(
                f"  speculation saves {percent}% per output token "
                f"(throughput x{ratio:.2f}; no price to put dollars on it)"
            )
    return found
