"""`mlcc bench --recommend`: a load-aware schedule (`hp:speculativeSchedule`) from a sweep.

The model (docs/bench.md, "The recommended schedule"). At a level of concurrency C the endpoint
drafted K tokens a verify step. With a_i the share of verify steps that accepted draft position
i (vLLM's `acceptance_per_position`; without it, a_i = alpha^i with alpha fitted to the measured
mean accepted length), a step of k drafts yields E(k) = 1 + a_1 + ... + a_k tokens per sequence.
A decode step's time t(k) is taken as linear in k between the twin's (k = 0) and the endpoint's
(k = K), both measured at that level (`step_ms`, mlcc/bench/sweep/figures.py: the requests' time
from first to last token over the steps they took); without them (no verify-step counter),
from the throughputs: t(0) / t(K) = endpoint tokens/s / (E(K) x twin tokens/s). The modelled
speedup of k over the twin in steady decode is g(k) = E(k) t(0) / t(k). Each level gets the k
with the largest g(k); among the ks within TOLERANCE of the largest, the one nearest K (the
setting that was measured). k = 0 (no speculation) where no k reaches both 1 (the twin) and
`--min-speedup`.

Levels become batch-size ranges: in steady decode with C requests in flight the engine's batch
is about C, so level C_i covers batch sizes from floor(sqrt(C_(i-1) C_i)) + 1 (1 for the first)
to the next range's start - 1, the last one open ("and above"); neighbours with the same k merge.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mlcc.serving.schedule import KEY_SCHEDULE, parse_schedule

TOLERANCE = 0.01


class RecommendError(ValueError):
    pass


@dataclass(frozen=True)
class LevelChoice:
    concurrency: int
    tokens: int
    modelled: list[float]  # g(k) for k = 0..K
    explained: str  # the figures the choice came from


def drafted_per_step(levels: Sequence[Mapping[str, Any]]) -> int:
    """K: the endpoint's drafted tokens per verify step, from its counters."""
    for level in levels:
        spec = level["endpoint"].get("speculative") or {}
        per_step = spec.get("drafts_per_step")
        if isinstance(per_step, float) and abs(per_step - round(per_step)) < 1e-6 and per_step:
            return round(per_step)
        positions = spec.get("acceptance_per_position")
        if positions:
            return len(positions)
    raise RecommendError(
        "the endpoint's metrics give no drafted tokens per step (no speculative counters were "
        "read: give --metrics-url)"
    )


def per_position(spec: Mapping[str, Any], k: int) -> list[float]:
    """a_1..a_K, measured or fitted (geometric) to the mean accepted length."""
    measured = spec.get("acceptance_per_position")
    if isinstance(measured, list) and len(measured) == k:
        return [min(max(float(a), 0.0), 1.0) for a in measured]
    length = spec.get("mean_accepted_tokens")
    if not isinstance(length, int | float):
        raise RecommendError("no mean accepted length")
    target = min(max(length - 1.0, 0.0), float(k))
    low, high = 0.0, 1.0
    for _ in range(60):  # sum of alpha^i for i = 1..k grows with alpha
        middle = (low + high) / 2
        low, high = (
            (middle, high) if sum(middle**i for i in range(1, k + 1)) < target else (low, middle)
        )
    return [low**i for i in range(1, k + 1)]


def modelled_speedups(step_ratio: float, accepted: Sequence[float]) -> list[float]:
    """g(k) for k = 0..K (the model above), with step_ratio = t(K) / t(0):
    E(k) / (1 + (step_ratio - 1) k / K)."""
    k_max = len(accepted)
    expected = [1.0 + sum(accepted[:k]) for k in range(k_max + 1)]
    return [expected[k] / (1.0 + (step_ratio - 1.0) * k / k_max) for k in range(k_max + 1)]


def step_ratio(level: Mapping[str, Any], length: float) -> tuple[float, str] | None:
    """t(K) / t(0) and how it was found; None when neither way has its figures."""
    steps = level.get("step_ms") or {}
    own, twin = steps.get("endpoint"), steps.get("twin")
    if isinstance(own, float) and isinstance(twin, float) and own > 0 and twin > 0:
        return own / twin, f"decode step {twin:.2f} ms without drafts, {own:.2f} ms with"
    speedup = level["speedup"]["output_tokens_per_s"].get("mean")
    if isinstance(speedup, float) and speedup > 0:
        return length / speedup, "step times from the throughputs"
    return None


def choose(modelled: Sequence[float], k_max: int, threshold: float) -> int:
    """The k to use: among the ks from 1 whose g(k) reaches both 1 and the threshold and is within
    TOLERANCE of the best, the nearest K; else 0."""
    best = max(modelled)
    floor = max(threshold, 1.0)
    near = [k for k, g in enumerate(modelled) if k and g >= floor and g >= best * (1 - TOLERANCE)]
    return min(near, key=lambda k: (abs(k - k_max), -k)) if near else 0


def level_choice(level: Mapping[str, Any], k_max: int, threshold: float) -> LevelChoice:
    c = level["concurrency"]
    spec = level["endpoint"].get("speculative") or {}
    interval = level["speedup"]["output_tokens_per_s"]
    try:
        accepted = per_position(spec, k_max)
    except RecommendError as error:
        raise RecommendError(f"concurrency {c}: {error} (no speculative counters read)") from None
    ratio = step_ratio(level, 1.0 + sum(accepted))
    if ratio is None:
        raise RecommendError(f"concurrency {c}: no step times and no speedup (unknown figures)")
    modelled = modelled_speedups(ratio[0], accepted)
    tokens = choose(modelled, k_max, threshold)
    speedup, low, high = interval.get("mean"), interval.get("low"), interval.get("high")
    measured = f"{speedup:.2f}x" if isinstance(speedup, float) else "unknown"
    if isinstance(low, float) and isinstance(high, float):
        measured += f" [{low:.2f}, {high:.2f}]"
    source = "measured" if spec.get("acceptance_per_position") else "fitted"
    explained = (
        f"concurrency {c}: speedup {measured} at k={k_max}, {ratio[1]}, accepted length "
        f"{1 + sum(accepted):.2f}, acceptance by position ({source}) "
        + " ".join(f"{a:.2f}" for a in accepted)
        + "; modelled speedup by k "
        + " ".join(f"{k}:{g:.2f}" for k, g in enumerate(modelled))
    )
    return LevelChoice(c, tokens, modelled, explained)


def range_starts(levels: Sequence[int]) -> list[int]:
    return [1] + [math.isqrt(a * b) + 1 for a, b in itertools.pairwise(levels)]


def recommend(
    levels: Sequence[Mapping[str, Any]], threshold: float, k_max: int | None = None
) -> dict[str, Any]:
    """bench.json's `recommendation`: the schedule, each range explained in one line."""
    if not levels:
        raise RecommendError("no level finished")
    k = k_max if k_max is not None else drafted_per_step(levels)
    choices = [level_choice(level, k, threshold) for level in levels]
    starts = range_starts([choice.concurrency for choice in choices])
    ranges: list[dict[str, int]] = []
    why: list[list[str]] = []
    for start, choice in zip(starts, choices, strict=True):
        if ranges and ranges[-1]["tokens"] == choice.tokens:
            why[-1].append(choice.explained)
            continue
        if ranges:
            ranges[-1]["to"] = start - 1
        ranges.append({"from": start, "tokens": choice.tokens})
        why.append([choice.explained])
    ordered = [_ordered(r) for r in ranges]
    problems = schedule_problems(ordered, k)
    if problems:  # the ranges are built to follow the rules; a failure is a bug here
        raise RecommendError("; ".join(problems))
    return {
        "num_speculative_tokens": k,
        "min_speedup": threshold,
        "schedule": ordered,
        "levels": [
            {"concurrency": c.concurrency, "tokens": c.tokens, "modelled_speedup": c.modelled}
            for c in choices
        ],
        "lines": [
            f"{_range_text(r)}: {r['tokens']} tokens; " + "; ".join(w)
            for r, w in zip(ordered, why, strict=True)
        ],
    }


def _ordered(entry: Mapping[str, int]) -> dict[str, int]:
    keys = ("from", "to", "tokens")
    return {key: entry[key] for key in keys if key in entry}


def _range_text(entry: Mapping[str, int]) -> str:
    if "to" not in entry:
        return f"batch {entry['from']} and above"
    if entry["to"] == entry["from"]:
        return f"batch {entry['from']}"
    return f"batch {entry['from']}-{entry['to']}"


def schedule_problems(schedule: Sequence[Mapping[str, Any]], k_max: int) -> list[str]:
    """What hp:speculativeSchedule's parser (mlcc.serving.schedule) refuses in `schedule`, and
    any tokens above `k_max` (the endpoint's hp:speculativeNumTokens): the stack's own rules,
    not a copy of them."""
    parsed, problems = parse_schedule(list(schedule))
    found = [f"{key}: {message}" for key, message in problems]
    if parsed is not None and parsed.most_tokens > k_max:
        found.append(f"{KEY_SCHEDULE}: tokens {parsed.most_tokens} is above {k_max}")
    return found
