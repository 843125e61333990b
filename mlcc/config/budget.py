"""`hp:budget`: the most the stack may cost, per hour or per month (docs/cost.md).

Written `<USD>/hour` or `<USD>/month`, a `$` before the figure allowed: `40/hour`,
`$25000/month`. A month is 730 hours, the figure the plan's monthly total uses. Empty: no budget.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

HOURS_PER_MONTH = Decimal(730)
PERIODS = {"hour": Decimal(1), "month": HOURS_PER_MONTH}
_FORM = re.compile(r"\$?\s*(?P<amount>[0-9]+(?:\.[0-9]+)?)\s*/\s*(?P<period>hour|month)")


@dataclass(frozen=True)
class Budget:
    amount: Decimal
    period: str  # "hour" or "month"

    def allows(self, per_hour: Decimal) -> bool:
        """Whether an hourly total is within the budget, compared in the budget's own period
        (exactly: a month's total is the hourly total times 730)."""
        return per_hour * PERIODS[self.period] <= self.amount

    def __str__(self) -> str:
        return f"${self.amount}/{self.period}"


def parse_budget(text: str) -> Budget | str:
    """The budget `text` gives, or why it gives none (one line naming the forms)."""
    found = _FORM.fullmatch(text.strip().lower())
    if found is None:
        return f"must be <USD>/hour or <USD>/month (e.g. 40/hour, 25000/month), got {text!r}"
    try:
        amount = Decimal(found["amount"])
    except InvalidOperation:  # the pattern admits only decimal digits; kept for safety
        return f"{found['amount']!r} is not an amount of dollars"
    if amount <= 0:
        return f"must be more than $0, got {text!r}"
    return Budget(amount, found["period"])
