"""What a preflight check reports, and how `hp:preflight` turns that into errors and warnings."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum

from mlcc.preflight.cost.prices import Missing, Price
from mlcc.serving.speculative import Problem


class Mode(Enum):
    """`hp:preflight`: what a check that could not reach its source becomes."""

    AUTO = "auto"  # a warning saying what was not checked and why
    STRICT = "strict"  # an error
    OFF = "off"  # preflight does not run


@dataclass(frozen=True)
class Unchecked:
    """A check whose source (the Hub, an AWS API) could not be read within its deadline."""

    key: str  # the stack key the check is about, e.g. hp:endpoints[1].speculativeModel
    what: str  # what was not checked, e.g. "the draft's fit to the target"
    why: str  # e.g. "huggingface.co did not answer within 10 s"

    def problem(self) -> Problem:
        return Problem(self.key, f"not checked: {self.what} ({self.why})")


@dataclass(frozen=True)
class Outcome:
    """Everything one preflight part found. `lines` are headline lines per endpoint name
    (the account part uses the key "")."""

    errors: tuple[Problem, ...] = ()
    warnings: tuple[Problem, ...] = ()
    unchecked: tuple[Unchecked, ...] = ()
    lines: dict[str, tuple[str, ...]] = field(default_factory=dict)
    read: frozenset[str] = frozenset()  # keys whose model's config.json was read, e.g. hp:model
    prices: tuple[Price | Missing, ...] = ()  # from mlcc.preflight.cost.price_list


def combine(outcomes: Iterable[Outcome]) -> Outcome:
    errors: list[Problem] = []
    warnings: list[Problem] = []
    unchecked: list[Unchecked] = []
    lines: dict[str, tuple[str, ...]] = {}
    read: set[str] = set()
    found: list[Price | Missing] = []
    for outcome in outcomes:
        errors += outcome.errors
        warnings += outcome.warnings
        unchecked += outcome.unchecked
        for name, more in outcome.lines.items():
            lines[name] = lines.get(name, ()) + more
        read |= outcome.read
        found += outcome.prices
    return Outcome(
        tuple(errors), tuple(warnings), tuple(unchecked), lines, frozenset(read), tuple(found)
    )


def settle(outcome: Outcome, mode: Mode) -> tuple[list[Problem], list[Problem]]:
    """(errors, warnings) under `mode`: unreachable sources warn under auto, fail under strict."""
    if mode is Mode.OFF:
        return [], []
    missed = [item.problem() for item in outcome.unchecked]
    errors = [*outcome.errors, *(missed if mode is Mode.STRICT else [])]
    warnings = [*outcome.warnings, *(missed if mode is Mode.AUTO else [])]
    return errors, warnings
