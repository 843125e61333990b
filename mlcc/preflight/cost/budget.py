"""What the stack costs, worked out by the program, and hp:budget's refusal (docs/cost.md).

`check_budget(config)` runs in the program after preflight, at `pulumi preview`, `pulumi up` and
under `mlcc plan`'s mocks: it prices what the stack bills (the AWS Price List's answers when
preflight read them, else the snapshot; never the network itself), keeps the result for the
plan headline (`PROGRAM.costing`), and refuses a stack over hp:budget with one error naming the
total and the largest parts. A total that is not known (a price not found) cannot be held to a
budget: that is one "not checked" line, a warning under hp:preflight auto, an error under strict.
"""

from __future__ import annotations

from decimal import Decimal

from mlcc.config.budget import Budget
from mlcc.config.refusal import refuse
from mlcc.config.stack import StackConfig
from mlcc.preflight.cost import estimate as cost
from mlcc.preflight.cost import prices
from mlcc.preflight.outcome import Mode, Outcome, Unchecked, settle
from mlcc.preflight.run import PROGRAM
from mlcc.serving.speculative import Problem

KEY = "hp:budget"


def costing_of(config: StackConfig, outcome: Outcome | None) -> cost.Costing:
    live = outcome.prices if outcome is not None else ()
    return cost.costing(config, live, prices.snapshot(), preflight_ran=outcome is not None)


def budget_outcome(costing: cost.Costing, budget: Budget | None) -> Outcome:
    """hp:budget's verdict on `costing`: nothing, one error, or one unchecked line."""
    if budget is None:
        return Outcome()
    total = costing.total_per_hour
    if total is None:
        # What was priced is a floor of the total: already over the budget, the stack is over.
        known = costing.priced_per_hour
        if not budget.allows(known):
            message = over_budget_message(costing, budget, known, floor=True)
            return Outcome(errors=(Problem(KEY, message),))
        missing = ", ".join(line.billed.item for line in costing.not_found)
        why = f"the price of {missing} was not found"
        return Outcome(unchecked=(Unchecked(KEY, f"the budget {budget}", why),))
    if budget.allows(total):
        return Outcome()
    return Outcome(errors=(Problem(KEY, over_budget_message(costing, budget, total)),))


def over_budget_message(
    costing: cost.Costing, budget: Budget, total: Decimal, *, floor: bool = False
) -> str:
    month = total * prices.HOURS_PER_MONTH
    parts = "; ".join(
        f"{_label(line)} = {cost.usd(line.per_hour or Decimal(0))}/h" for line in costing.largest()
    )
    costs = "costs at least" if floor else "costs"
    missing = ", ".join(line.billed.item for line in costing.not_found)
    unpriced = f" without {missing}, whose price was not found" if floor else ""
    return (
        f"the stack {costs} {cost.usd(total)}/h ({cost.usd(month)}/month){unpriced}, over the "
        f"budget {budget}; the largest parts: {parts}"
    )


def _label(line: cost.Line) -> str:
    return f"{line.billed.item} x {line.billed.count}"


def check_budget(config: StackConfig) -> None:
    """Price the stack for the plan headline; refuse it when over hp:budget."""
    import pulumi

    read = PROGRAM.enabled and Mode(config.preflight) is not Mode.OFF
    costing = costing_of(config, PROGRAM.outcome if read else None)
    PROGRAM.costing = costing
    mode = Mode(config.preflight) if config.preflight != Mode.OFF.value else Mode.AUTO
    errors, warnings = settle(budget_outcome(costing, config.budget), mode)
    for warning in warnings:
        pulumi.log.warn(str(warning))
    if errors:
        refuse(errors)
