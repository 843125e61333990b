"""The candidate head in a sweep's plot (`mlcc bench --candidate-url ... --plot`, sweep.png;
docs/draft-promotion.md): its speedup over the twin beside the current head's, its acceptance
rate beside the current head's, the levels the promotion rule judged, and the decision as the
figure's title. Drawn only when the sweep's levels have a `candidate` entry: a sweep without one
draws what it always drew. matplotlib's axes come from mlcc.bench.sweep.report.write_plot.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

COLOUR = "tab:purple"  # the current head keeps matplotlib's first colour, the twin axis green
MARKER = "D"
SPEEDUP_LABEL = "candidate speedup (95 % interval)"
JUDGED_LABEL = "candidate at a served level (judged)"
ACCEPTANCE_LABEL = "candidate acceptance rate"


def drawn(sweep: Mapping[str, Any]) -> bool:
    """Whether the sweep measured a candidate head at one finished level at least."""
    return any(isinstance(level.get("candidate"), Mapping) for level in sweep["levels"])


def draw(figure: Any, left: Any, right: Any, sweep: Mapping[str, Any]) -> None:
    """The candidate's series on the speedup (`left`) and acceptance (`right`) axes, and the
    decision as `figure`'s title."""
    levels = [lv for lv in sweep["levels"] if isinstance(lv.get("candidate"), Mapping)]
    xs = [lv["concurrency"] for lv in levels]
    means, errors = interval_bars(
        [lv["candidate"]["speedup"]["output_tokens_per_s"] for lv in levels]
    )
    served = _served(sweep.get("promotion"))
    judged = [x for x in xs if x in served] if served is not None else xs
    hollow = len(judged) < len(xs)  # filled markers then tell the judged levels apart
    left.errorbar(
        xs,
        means,
        yerr=errors,
        marker=MARKER,
        color=COLOUR,
        markerfacecolor="white" if hollow else COLOUR,
        linestyle="--",
        capsize=3,
        label=SPEEDUP_LABEL,
    )
    if hollow and judged:
        left.plot(
            judged,
            [mean for x, mean in zip(xs, means, strict=True) if x in judged],
            marker=MARKER,
            color=COLOUR,
            linestyle="none",
            zorder=3,  # over the hollow markers
            label=JUDGED_LABEL,
        )
    rates = [
        ((lv["candidate"].get("figures") or {}).get("speculative") or {}).get("acceptance_rate")
        for lv in levels
    ]
    right.plot(
        xs,
        [rate if isinstance(rate, int | float) else float("nan") for rate in rates],
        marker=MARKER,
        color=COLOUR,
        linestyle="--",
        label=ACCEPTANCE_LABEL,
    )
    figure.suptitle(decision_title(sweep.get("promotion")), fontsize=10)


def decision_title(promotion: Mapping[str, Any] | None) -> str:
    """One line: `candidate promoted (...)` or `candidate not promoted: slower at 16; ...`."""
    if not isinstance(promotion, Mapping):
        return "candidate: no promotion decision (the sweep stopped before its end)"
    served = _levels(promotion.get("served_levels") or [])
    if promotion.get("promote"):
        return f"candidate promoted (judged at {served})"
    if not promotion.get("served_levels"):
        return "candidate not promoted: no swept level is one the stack serves with speculation"
    kinds: dict[str, list[int]] = {}
    for level in promotion.get("levels") or []:
        speed, losses = level.get("speed"), len(level.get("losses") or [])
        if speed in ("slower", "unknown"):
            kinds.setdefault("slower" if speed == "slower" else "speed unknown", []).append(
                level["concurrency"]
            )
            losses -= 1  # the rule's one speed loss; the others are about acceptance
        if losses > 0:
            kinds.setdefault("acceptance lost", []).append(level["concurrency"])
    parts = [f"{kind} at {_levels(found)}" for kind, found in kinds.items()]
    speeds = [level.get("speed") for level in promotion.get("levels") or []]
    if "faster" not in speeds and set(speeds) != {"slower"}:  # all slower says it already
        parts.append("faster at no served level")
    return f"candidate not promoted: {'; '.join(parts)} (judged at {served})"


def interval_bars(
    intervals: Sequence[Mapping[str, Any]],
) -> tuple[list[float], list[list[float]]]:
    """Means (NaN when unknown) and matplotlib's [below, above] error bars of 95 % intervals."""
    means, below, above = [], [], []
    for interval in intervals:
        mean = interval.get("mean")
        mean = mean if isinstance(mean, float) else float("nan")
        low, high = interval.get("low"), interval.get("high")
        means.append(mean)
        below.append(mean - low if isinstance(low, float) else 0.0)
        above.append(high - mean if isinstance(high, float) else 0.0)
    return means, [below, above]


def _served(promotion: Any) -> set[int] | None:
    if not isinstance(promotion, Mapping):
        return None
    return set(promotion.get("served_levels") or [])


def _levels(values: Sequence[int]) -> str:
    return ",".join(map(str, values)) or "none"
