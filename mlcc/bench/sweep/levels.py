"""The sweep's levels, how many requests each repeat of a level sends, and the interval of a
ratio measured over repeats (docs/bench.md, "Sweeping concurrency")."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from mlcc.bench.inputs import MAX_CONCURRENCY, MAX_REQUESTS, shown, whole_number

MAX_LEVELS = 32
MAX_REPEATS = 20
DEFAULT_REPEATS = 3
DEFAULT_PER_USER = 8  # requests each of the C users sends in sequence, per repeat
DEFAULT_MIN_REQUESTS = 16  # per repeat, at low concurrency
# Student's t, two-sided 95 % (the 0.975 quantile), by degrees of freedom 1..19 (repeats - 1):
# the standard table values (e.g. NIST/SEMATECH e-Handbook, table 1.3.6.7.2).
T_975 = (
    12.706,
    4.303,
    3.182,
    2.776,
    2.571,
    2.447,
    2.365,
    2.306,
    2.262,
    2.228,
    2.201,
    2.179,
    2.160,
    2.145,
    2.131,
    2.120,
    2.110,
    2.101,
    2.093,
)


def parse_levels(text: str) -> list[int]:
    """`--concurrency 1,4,16,64`: distinct whole numbers from 1 to MAX_CONCURRENCY, ascending."""
    items = str(text).split(",")
    if len(items) > MAX_LEVELS:
        raise ValueError(f"at most {MAX_LEVELS} levels, got {len(items)}")
    levels: list[int] = []
    for item in items:
        if not item.strip():
            raise ValueError(f"{shown(text)} is not a list of whole numbers like 1,4,16,64")
        level = whole_number(item, MAX_CONCURRENCY)
        if level in levels:
            raise ValueError(f"{level} is given twice in {shown(text)}")
        levels.append(level)
    return sorted(levels)


@dataclass(frozen=True)
class SweepCounts:
    levels: list[int]
    repeats: int  # runs of each level against each of the two endpoints
    per_user: int  # each repeat sends per_user x C requests ...
    min_requests: int  # ... and at least this many

    def requests(self, concurrency: int) -> int:
        return min(MAX_REQUESTS, max(self.per_user * concurrency, self.min_requests))


def parse_repeats(text: str) -> int:
    repeats = whole_number(str(text), MAX_REPEATS)
    if repeats < 2:
        raise ValueError(
            f"{shown(str(text))} must be from 2 to {MAX_REPEATS} (the interval "
            "of the speedup needs two repeats at least)"
        )
    return repeats


@dataclass(frozen=True)
class Interval:
    """A ratio over repeats: the geometric mean, and its 95 % interval (None under 2 repeats)."""

    mean: float | None
    low: float | None
    high: float | None
    repeats: int


def ratio_interval(ratios: Sequence[float | None]) -> Interval:
    """Student's t interval of the mean of log(ratio), paired by repeat, mapped back by exp:
    ratios are multiplicative, and their logs are nearer symmetric than the ratios."""
    logs = [math.log(r) for r in ratios if r is not None and math.isfinite(r) and r > 0]
    if not logs:
        return Interval(None, None, None, 0)
    mean = sum(logs) / len(logs)
    if len(logs) < 2:
        return Interval(math.exp(mean), None, None, 1)
    spread = math.sqrt(sum((x - mean) ** 2 for x in logs) / (len(logs) - 1))
    t = T_975[min(len(logs) - 1, len(T_975)) - 1]
    half = t * spread / math.sqrt(len(logs))
    return Interval(math.exp(mean), math.exp(mean - half), math.exp(mean + half), len(logs))
