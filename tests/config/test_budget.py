"""hp:budget's syntax and its comparison (mlcc/config/budget.py)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from mlcc.config.budget import Budget, parse_budget


@pytest.mark.parametrize(
    ("text", "amount", "period"),
    [
        ("40/hour", "40", "hour"),
        ("$25000/month", "25000", "month"),
        (" 7.5 / Hour ", "7.5", "hour"),
    ],
)
def test_the_two_forms(text: str, amount: str, period: str) -> None:
    assert parse_budget(text) == Budget(Decimal(amount), period)


def test_a_month_is_730_hours_compared_exactly() -> None:
    hourly = Decimal("7.235")
    assert Budget(hourly * 730, "month").allows(hourly)
    assert not Budget(hourly * 730 - Decimal("0.01"), "month").allows(hourly)
    assert Budget(Decimal("1") / 3, "hour").allows(Decimal("0.3333"))
