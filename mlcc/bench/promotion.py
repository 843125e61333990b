"""Whether a candidate draft head should replace the current one (docs/draft-promotion.md).

Input: the levels of a sweep that measured three endpoints back to back at each level and repeat:
the current head, the candidate head and their baseline twin without speculation
(`mlcc.bench.sweep.heads` adds the candidate's figures to each level). Only the levels the stack
serves with speculation count (`served`, chosen by the caller).

The rule, at every served level:

(a) acceptance: the candidate's acceptance rate (the engine's counters, pooled over the repeats)
    is at least the current head's minus `acceptance_tolerance` (rate points), and at least the
    stack's acceptance floor when there is one (the alert rules' `acceptanceFloor`);
(b) speed: the candidate is not slower than the current head. Within a repeat both heads' runs
    are divided by the same twin run, so the ratio of their speedups over the twin is the ratio
    of their output tokens/s; its 95 % interval over the repeats (Student's t over the logs,
    `mlcc.bench.sweep.levels.ratio_interval`) is the measured noise. A level is *slower* when
    the interval lies under 1 or its mean is under 1 - `margin`;

and (c) the candidate is *faster* at one served level at least: the interval's lower bound above
1 + `margin`. Equal within the noise is not a win. An unknown figure (no counters, fewer than two
repeats) never counts for the candidate.

The twin is not part of the rule: a head better than the current one is an improvement even where
both are slower than no speculation. Where the candidate's speedup over the twin lies under 1, the
decision notes it (`below_twin`): speculating there at all is the load-aware schedule's question
(`mlcc bench` recommends one), not the head's. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

DEFAULT_ACCEPTANCE_TOLERANCE = 0.02
DEFAULT_MARGIN = 0.02
FASTER, SLOWER, EVEN, UNKNOWN = "faster", "slower", "even", "unknown"


@dataclass(frozen=True)
class Rule:
    acceptance_tolerance: float = DEFAULT_ACCEPTANCE_TOLERANCE  # rate points, 0.02 = 2 points
    margin: float = DEFAULT_MARGIN  # a share of the current head's tokens/s
    acceptance_floor: float | None = None  # and where it came from, for the lines
    floor_source: str = ""


@dataclass(frozen=True)
class Ratio:
    """The candidate's output tokens/s over the current head's (or a head's over the twin)."""

    mean: float | None
    low: float | None
    high: float | None

    @classmethod
    def of(cls, figures: Mapping[str, Any] | None) -> Ratio:
        found = figures or {}
        return cls(*(_number(found.get(name)) for name in ("mean", "low", "high")))

    def text(self) -> str:
        if self.mean is None:
            return "unknown"
        if self.low is None or self.high is None:
            return f"{self.mean:.2f}x (no interval)"
        return f"{self.mean:.2f}x [{self.low:.2f}, {self.high:.2f}]"


@dataclass(frozen=True)
class LevelVerdict:
    concurrency: int
    acceptance: tuple[float | None, float | None]  # the current head's, the candidate's
    over_twin: tuple[Ratio, Ratio]  # each head's speedup over the twin
    over_current: Ratio  # the candidate's tokens/s over the current head's
    speed: str  # FASTER, SLOWER, EVEN or UNKNOWN
    losses: tuple[str, ...]  # what blocks promotion here, each with its numbers

    def line(self) -> str:
        current, candidate = self.acceptance
        found = (
            f"concurrency {self.concurrency}: acceptance {_rate(candidate)} vs {_rate(current)}; "
            f"speedup over the twin {self.over_twin[1].text()} vs {self.over_twin[0].text()}; "
            f"candidate/current tokens/s {self.over_current.text()}: {self.speed}"
        )
        return found + (f" ({len(self.losses)} loss(es) below)" if self.losses else "")


@dataclass(frozen=True)
class Decision:
    promote: bool
    served: tuple[int, ...]
    not_served: tuple[int, ...]  # swept levels the stack does not speculate at
    rule: Rule
    levels: tuple[LevelVerdict, ...] = ()
    reasons: tuple[str, ...] = field(default=())  # why not, each with its numbers

    @property
    def below_twin(self) -> tuple[LevelVerdict, ...]:
        """Judged levels where the candidate is slower than the speculation-off twin."""
        return tuple(v for v in self.levels if speed_of(v.over_twin[1], 0.0) == SLOWER)

    def as_json(self) -> dict[str, Any]:
        return {
            "promote": self.promote,
            "served_levels": list(self.served),
            "not_served_levels": list(self.not_served),
            "acceptance_tolerance": self.rule.acceptance_tolerance,
            "margin": self.rule.margin,
            "acceptance_floor": self.rule.acceptance_floor,
            "levels": [
                {
                    "concurrency": v.concurrency,
                    "acceptance_rate": {"current": v.acceptance[0], "candidate": v.acceptance[1]},
                    "speedup_over_twin": {
                        "current": _ratio_json(v.over_twin[0]),
                        "candidate": _ratio_json(v.over_twin[1]),
                    },
                    "candidate_over_current": _ratio_json(v.over_current),
                    "speed": v.speed,
                    "losses": list(v.losses),
                }
                for v in self.levels
            ],
            "reasons": list(self.reasons),
            "candidate_below_twin_levels": [v.concurrency for v in self.below_twin],
        }


def decide(levels: Sequence[Mapping[str, Any]], served: Sequence[int], rule: Rule) -> Decision:
    """The decision over the sweep's finished `levels` (each with its `candidate` entry)."""
    swept = [level["concurrency"] for level in levels]
    used = tuple(c for c in swept if c in set(served))
    not_served = tuple(c for c in swept if c not in set(served))
    if not used:
        reason = (
            "no swept level is one the stack serves with speculation (swept "
            f"{_levels(swept)}, served {_levels(served)}): nothing to judge the candidate by"
        )
        return Decision(False, used, not_served, rule, (), (reason,))
    verdicts = tuple(_verdict(level, rule) for level in levels if level["concurrency"] in used)
    reasons = [f"concurrency {v.concurrency}: {loss}" for v in verdicts for loss in v.losses]
    if not any(v.speed == FASTER for v in verdicts):
        best = max(verdicts, key=lambda v: v.over_current.low or 0.0)
        reasons.append(
            f"faster at no served level beyond the noise: the candidate/current tokens/s must "
            f"have its 95 % interval above {1 + rule.margin:.2f} at one level at least; "
            f"best {best.over_current.text()} at concurrency {best.concurrency}"
        )
    return Decision(not reasons, used, not_served, rule, verdicts, tuple(reasons))


def _verdict(level: Mapping[str, Any], rule: Rule) -> LevelVerdict:
    candidate = level.get("candidate") or {}
    current_rate = _acceptance(level.get("endpoint"))
    candidate_rate = _acceptance(candidate.get("figures"))
    over_current = Ratio.of((candidate.get("over_current") or {}).get("output_tokens_per_s"))
    over_twin = (
        Ratio.of(level["speedup"]["output_tokens_per_s"]),
        Ratio.of((candidate.get("speedup") or {}).get("output_tokens_per_s")),
    )
    speed = speed_of(over_current, rule.margin)
    losses = _acceptance_losses(current_rate, candidate_rate, rule)
    if speed == SLOWER:
        mean = over_current.mean or 0.0
        losses.append(
            f"slower: candidate/current tokens/s {over_current.text()}, {1 - mean:.1%} fewer "
            f"tokens/s (speedup over the twin {over_twin[1].text()} vs {over_twin[0].text()})"
        )
    elif speed == UNKNOWN:
        losses.append(
            f"speed unknown: candidate/current tokens/s {over_current.text()} (two repeats at "
            "least are needed for the interval)"
        )
    return LevelVerdict(
        level["concurrency"],
        (current_rate, candidate_rate),
        over_twin,
        over_current,
        speed,
        tuple(losses),
    )


def speed_of(ratio: Ratio, margin: float) -> str:
    if ratio.mean is None or ratio.low is None or ratio.high is None:
        return UNKNOWN
    if ratio.high < 1.0 or ratio.mean < 1.0 - margin:
        return SLOWER
    if ratio.low > 1.0 + margin:
        return FASTER
    return EVEN


def _acceptance_losses(current: float | None, candidate: float | None, rule: Rule) -> list[str]:
    if candidate is None or current is None:
        return [
            f"acceptance unknown (candidate {_rate(candidate)}, current {_rate(current)}): "
            "the engines' speculative counters were not read"
        ]
    losses = []
    if candidate < current - rule.acceptance_tolerance:
        losses.append(
            f"acceptance {_rate(candidate)} vs {_rate(current)}, "
            f"{(current - candidate) * 100:.1f} points lower (tolerance "
            f"{rule.acceptance_tolerance * 100:.1f})"
        )
    floor = rule.acceptance_floor
    if floor is not None and candidate < floor:
        losses.append(
            f"acceptance {_rate(candidate)} under the floor {_rate(floor)} ({rule.floor_source})"
        )
    return losses


def _acceptance(figures: Mapping[str, Any] | None) -> float | None:
    spec = (figures or {}).get("speculative") or {}
    return _number(spec.get("acceptance_rate"))


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _rate(value: float | None) -> str:
    return "unknown" if value is None else f"{value:.1%}"


def _levels(values: Sequence[int]) -> str:
    return ",".join(map(str, values)) or "none"


def _ratio_json(ratio: Ratio) -> dict[str, float | None]:
    return {"mean": ratio.mean, "low": ratio.low, "high": ratio.high}
