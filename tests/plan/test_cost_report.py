"""The plan's cost lines and --diff's cost change, from plan.json's `cost` (cost_report)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from mlcc.plan.cost_report import diff_line, headline_lines


def document(
    *lines: tuple[str, int, str | None], shares: list[Any] | None = None
) -> dict[str, Any]:
    """A plan.json `cost` as mlcc.preflight.cost.estimate writes, for these (item, count, USD)."""
    rows = []
    for item, count, usd in lines:
        per_hour = None if usd is None else str(Decimal(usd) * count)
        rows.append(
            {
                "item": item,
                "count": count,
                "group": "g" if item.startswith("ml.") else "",
                "usd_per_hour": usd,
                "per_hour": per_hour,
                "date": "2026-11-01" if usd else None,
                "date_is": "published" if usd else None,
                "source": "AWS Price List API" if usd else None,
                "not_found": None if usd else "2 AWS Price List products match",
            }
        )
    missing = [r["item"] for r in rows if r["per_hour"] is None]
    priced = sum((Decimal(r["per_hour"]) for r in rows if r["per_hour"]), Decimal(0))
    total = None if missing else priced
    return {
        "region": "us-east-1",
        "lines": rows,
        "total_per_hour": None if total is None else str(total),
        "total_per_month": None if total is None else str(total * 730),
        "priced_per_hour": str(priced),
        "hours_per_month": "730",
        "not_found": missing,
        "not_priced": ["EBS volumes"],
        "shares": shares or [],
        "sources": [
            {
                "source": "AWS Price List API",
                "dates": [{"date": "2026-11-01", "date_is": "published"}],
            }
        ],
        "differences": [],
    }


def test_the_lines_show_each_part_the_total_and_the_month_exactly() -> None:
    cost = document(("ml.p4d.24xlarge", 3, "37.688"), ("NAT gateway", 2, "0.045"))
    assert headline_lines(cost) == [
        "cost in us-east-1 (prices: AWS Price List API, published 2026-11-01):",
        "  ml.p4d.24xlarge x 3 @ $37.688/h = $113.064/h (group g)",
        "  NAT gateway x 2 @ $0.045/h = $0.09/h",
        # 113.064 + 0.09 = 113.154 per hour; times 730 = 82602.42 per month
        "  total: $113.154/h, $82602.42/month (730 h)",
        "  not priced: EBS volumes",
    ]


def test_a_part_not_found_leaves_the_total_unknown() -> None:
    cost = document(("ml.p5.48xlarge", 1, None), ("EKS control plane", 1, "0.10"))
    lines = headline_lines(cost)
    assert "  ml.p5.48xlarge x 1 @ not found (group g)" in lines
    assert "  total: not known: the price of ml.p5.48xlarge not found (the rest: $0.10/h)" in lines
    assert lines[-1] == "  not priced: EBS volumes, ml.p5.48xlarge (not found)"
    assert not [line for line in lines if "$0.00" in line]


def test_the_change_in_dollars_and_percent_either_way() -> None:
    before = document(("ml.g5.12xlarge", 1, "7.09"))
    after = document(("ml.g5.12xlarge", 3, "7.09"))
    assert diff_line(before, after) == "cost: +$14.18/h ($7.09/h -> $21.27/h), +200%"
    assert diff_line(after, before) == "cost: -$14.18/h ($21.27/h -> $7.09/h), -67%"
    assert diff_line(before, before) == "cost: +$0.00/h ($7.09/h -> $7.09/h), +0%"


def test_a_change_that_cannot_be_priced_is_not_compared() -> None:
    known = document(("ml.g5.12xlarge", 1, "7.09"))
    unknown = document(("ml.p5.48xlarge", 1, None))
    assert diff_line(known, unknown) == (
        "cost: not compared: the price of ml.p5.48xlarge (now) not found"
    )
    assert diff_line(None, known) == "cost: not compared: the plan.json of --diff records no cost"


def test_a_version_in_extended_support_is_said_so_and_its_surcharge_is_a_line() -> None:
    cost = document(("EKS control plane", 1, "0.10"), ("EKS extended support", 1, "0.50"))
    cost["kubernetes"] = {
        "version": "1.33",
        "on": "2026-12-06",
        "support": "extended support",
        "end_of_standard": "2026-07-29",
        "end_of_extended": "2027-07-29",
    }
    assert headline_lines(cost)[:6] == [
        "cost in us-east-1 (prices: AWS Price List API, published 2026-11-01):",
        "  Kubernetes 1.33 is in EKS extended support on 2026-12-06 (standard support ended "
        "2026-07-29; EKS",
        "    creates it until 2027-07-29): the control plane bills the extended rate",
        "  EKS control plane x 1 @ $0.10/h = $0.10/h",
        "  EKS extended support x 1 @ $0.50/h = $0.50/h",
        "  total: $0.60/h, $438.00/month (730 h)",
    ]


def test_a_version_in_standard_support_has_no_kubernetes_line() -> None:
    cost = document(("EKS control plane", 1, "0.10"))
    cost["kubernetes"] = {"version": "1.35", "support": "standard support"}
    assert not [line for line in headline_lines(cost) if "Kubernetes" in line]


def test_each_snapshot_date_says_what_it_is() -> None:
    """A snapshot's date is a publication date, the day a price took effect, or the day an
    undated page was read (prices.json `date_is`): the headline names each, never "published"
    for a date that is not one."""
    cost = document(("NAT gateway", 1, "0.045"))
    cost["sources"] = [
        {
            "source": "snapshot",
            "dates": [
                {"date": "2024-02-01", "date_is": "in effect"},
                {"date": "2024-04-01", "date_is": "in effect"},
                {"date": "2026-12-06", "date_is": "read"},
            ],
        }
    ]
    assert headline_lines(cost)[0] == (
        "cost in us-east-1 (prices: snapshot, in effect 2024-02-01 to 2024-04-01, read 2026-12-06):"
    )
