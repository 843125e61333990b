"""The crossover: the concurrency above which speculation stops paying, as a range.

Each level's speedup (the endpoint's output tokens/s over its twin's, paired by repeat) has a
95 % interval (`levels.ratio_interval`). Against the threshold S (`--min-speedup`, default 1.0:
the twin serves as many tokens/s) a level is *above* when its interval's lower bound is over S,
*below* when its upper bound is under S, else *unclear*. The crossover lies above the last level
of the leading run of levels above S and at or below the first level after it that is below S:
a range between two swept levels, never a point. Within it, an estimate interpolates the mean
speedups linearly on log-concurrency where they cross S (reported as such, inside the range).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

ABOVE, BELOW, UNCLEAR = "above", "below", "unclear"
DEFAULT_MIN_SPEEDUP = 1.0


def state(speedup: Mapping[str, Any], threshold: float) -> str:
    low, high = speedup.get("low"), speedup.get("high")
    if isinstance(low, float) and low > threshold:
        return ABOVE
    if isinstance(high, float) and high < threshold:
        return BELOW
    return UNCLEAR


def crossover(levels: Sequence[Mapping[str, Any]], threshold: float) -> dict[str, Any]:
    """bench.json's `crossover` from the levels' `speedup.output_tokens_per_s` intervals."""
    points = [(lv["concurrency"], lv["speedup"]["output_tokens_per_s"]) for lv in levels]
    states = [state(s, threshold) for _, s in points]
    found: dict[str, Any] = {
        "min_speedup": threshold,
        "states": dict(zip([str(c) for c, _ in points], states, strict=True)),
        "above": None,  # the crossover is above this level ...
        "at_most": None,  # ... and at or below this one
        "estimate": None,
    }
    if not points:
        return found | {"status": "no levels", "text": "no level finished"}
    lead = 0
    while lead < len(states) and states[lead] == ABOVE:
        lead += 1
    below = next((i for i in range(lead, len(states)) if states[i] == BELOW), None)
    above_level = points[lead - 1][0] if lead else None
    below_level = points[below][0] if below is not None else None
    found |= {"above": above_level, "at_most": below_level}
    if below == 0:
        return found | {
            "status": "below at the lowest level",
            "text": f"already below {threshold:g}x at the lowest level ({points[0][0]}): "
            f"{_shown(points[0][1])}",
        }
    if below is None and lead == len(states):
        return found | {
            "status": "not reached",
            "text": f"not reached within the swept levels: above {threshold:g}x up to "
            f"{points[-1][0]}",
        }
    if below is None:
        where = f"above {above_level}" if above_level else "not bounded below by any level"
        return found | {
            "status": "not established",
            "text": f"{where}, and not confirmed below {threshold:g}x at any swept level: "
            + _why_unclear(points, states),
        }
    found["estimate"] = _estimate(points[max(lead - 1, 0) : below + 1], threshold)
    low_text = f"above {above_level}" if above_level else f"at or below {below_level}"
    text = f"{low_text} and at or below {below_level}" if above_level else low_text
    estimate = found["estimate"]
    if estimate is not None:
        text += f" (about {estimate:.3g} interpolated on log-concurrency)"
    notes = [
        c for (c, _), s in zip(points[below + 1 :], states[below + 1 :], strict=True) if s == ABOVE
    ]
    if notes:
        text += f"; above {threshold:g}x again at {', '.join(map(str, notes))} (not monotonic)"
    return found | {"status": "range", "text": text}


def _estimate(points: Sequence[tuple[int, Mapping[str, Any]]], threshold: float) -> float | None:
    for (c1, s1), (c2, s2) in itertools.pairwise(points):
        m1, m2 = s1.get("mean"), s2.get("mean")
        if isinstance(m1, float) and isinstance(m2, float) and m1 >= threshold > m2:
            share = (m1 - threshold) / (m1 - m2)
            return math.exp(math.log(c1) + share * (math.log(c2) - math.log(c1)))
    return None


def _shown(speedup: Mapping[str, Any]) -> str:
    mean, low, high = speedup.get("mean"), speedup.get("low"), speedup.get("high")
    if not isinstance(mean, float):
        return "speedup unknown"
    if isinstance(low, float) and isinstance(high, float):
        return f"speedup {mean:.2f}x [{low:.2f}, {high:.2f}]"
    return f"speedup {mean:.2f}x (no interval)"


def _why_unclear(points: Sequence[tuple[int, Mapping[str, Any]]], states: Sequence[str]) -> str:
    unclear = [
        f"{c} ({_shown(s)})" for (c, s), st in zip(points, states, strict=True) if st == UNCLEAR
    ]
    return "the interval includes the threshold at " + ", ".join(unclear) + " (more --repeats)"
