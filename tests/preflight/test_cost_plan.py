"""What the stack costs in `mlcc plan`: the headline, plan.json, --diff and hp:budget.

The prices come from the local Price List (tests/price_list.py, decoys included) through the
pricing part of preflight, or from the snapshot without --preflight; every expected figure is
worked out here from those prices, exactly (Decimal).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import price_list
import pytest
from aws_accounts import Account, account_served
from local_aws import LocalAWS
from program_runs import IMAGE, REPO

from mlcc.cli import main
from mlcc.preflight import run
from mlcc.preflight.cost import prices
from mlcc.preflight.cost.public_ipv4 import PUBLIC_IPV4

G5 = "ml.g5.12xlarge"


def usd_of(sku: str, products: list[dict[str, Any]] | None = None) -> Decimal:
    """The catalog's on-demand USD of `sku`."""
    (entry,) = [p for p in products or price_list.catalog() if p["product"]["sku"] == sku]
    (term,) = entry["terms"]["OnDemand"].values()
    (dimension,) = term["priceDimensions"].values()
    return Decimal(dimension["pricePerUnit"]["USD"])


G5_USD, EKS_USD, NAT_USD = usd_of("G5CLUSTER0001"), usd_of("EKSCLUSTER001"), usd_of("NATHOURS00001")
# The dev stack's Kubernetes 1.33 is in EKS extended support on the tests' date (2026-12-06):
# its control plane bills the extended-support surcharge too (docs/kubernetes-facts.md).
EXT_USD = usd_of("EKSEXTENDED01")
CONTROL_USD = EKS_USD + EXT_USD
# the NAT gateway's Elastic IP: priced from the snapshot only (no Price List rule)
IPV4_USD = prices.snapshot()[("us-east-1", PUBLIC_IPV4)].usd_per_hour


def money(amount: Decimal) -> str:
    """How the plan writes an amount: the cents at least, every further digit it has."""
    amount = amount.normalize()
    exponent = amount.as_tuple().exponent
    assert isinstance(exponent, int)
    return f"${amount.quantize(Decimal('0.01')) if exponent >= -2 else amount:f}"


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalAWS]:
    """The Price List only: preflight's other parts have their own tests."""
    monkeypatch.setattr(run, "PARTS", [run.pricing_part])
    from mlcc.preflight.cost import price_list as pricing

    pricing.forget_answers()
    with account_served(monkeypatch, Account()) as fake:
        yield fake
    pricing.forget_answers()


def plan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, out: str, *extra: str) -> int:
    monkeypatch.chdir(REPO)
    argv = ["plan", "--stack", "dev", "--out", str(tmp_path / out), "--set", f"hp:image={IMAGE}"]
    return main([*argv, *extra])


def cost_of(tmp_path: Path, out: str) -> dict[str, Any]:
    document = json.loads((tmp_path / out / "plan.json").read_text())
    cost: dict[str, Any] = document["cost"]
    return cost


def test_live_prices_give_every_line_the_total_and_the_share_exactly(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    aws: LocalAWS,
) -> None:
    count = "hp:instanceGroups[0].instanceCount=2"
    assert plan(tmp_path, monkeypatch, "a", "--preflight", "--set", count) == 0
    printed = capsys.readouterr().out.splitlines()
    total = G5_USD * 2 + CONTROL_USD + NAT_USD + IPV4_USD
    expected = [
        "  Kubernetes 1.33 is in EKS extended support on 2026-12-06 (standard support ended "
        "2026-07-29; EKS",
        "    creates it until 2027-07-29): the control plane bills the extended rate",
        f"  {G5} x 2 @ {money(G5_USD)}/h = {money(G5_USD * 2)}/h (group g5-inference)",
        f"  EKS control plane x 1 @ {money(EKS_USD)}/h = {money(EKS_USD)}/h",
        f"  EKS extended support x 1 @ {money(EXT_USD)}/h = {money(EXT_USD)}/h",
        f"  NAT gateway x 1 @ {money(NAT_USD)}/h = {money(NAT_USD)}/h",
        f"  {PUBLIC_IPV4} x 1 @ {money(IPV4_USD)}/h = {money(IPV4_USD)}/h",
        f"  total: {money(total)}/h, {money(total * 730)}/month (730 h)",
        # the one endpoint's pod holds 4 of the 8 GPUs of the two nodes
        f"  endpoint hp-dev: 4 of 8 GPUs of {G5}, {money(G5_USD)}/h",
    ]
    for line in expected:
        assert line in printed
    start = next(i for i, line in enumerate(printed) if line.startswith("cost in "))
    assert " ".join(line.strip() for line in printed[start : start + 2]) == (
        "cost in us-east-1 (prices: AWS Price List API, published 2026-11-01; snapshot, in effect "
        "2024-02-01):"
    )  # the Price List's publication date; the snapshot's IPv4 price's date in effect
    cost = cost_of(tmp_path, "a")
    assert Decimal(cost["total_per_hour"]) == total
    assert Decimal(cost["total_per_month"]) == total * 730
    assert [(line["item"], Decimal(line["per_hour"])) for line in cost["lines"]] == [
        (G5, G5_USD * 2),
        (prices.EKS_CONTROL_PLANE, EKS_USD),
        (prices.EKS_EXTENDED_SUPPORT, EXT_USD),
        (prices.NAT_GATEWAY, NAT_USD),
        (PUBLIC_IPV4, IPV4_USD),
    ]
    assert cost["kubernetes"] == {
        "version": "1.33",
        "on": "2026-12-06",
        "support": "extended support",
        "end_of_standard": "2026-07-29",
        "end_of_extended": "2027-07-29",
    }
    # every GetProducts went to a Price List endpoint botocore lists, valid by the model
    assert {c.operation for c in aws.calls if c.service == "pricing"} == {"GetProducts"}
    assert {c.region for c in aws.calls} == {"us-east-1"}


def test_several_matching_products_are_not_found_and_never_zero_in_the_total(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    aws: LocalAWS,
) -> None:
    p5 = ["--set", "hp:instanceGroups[0].instanceType=ml.p5.48xlarge"]
    assert (
        plan(
            tmp_path,
            monkeypatch,
            "a",
            "--preflight",
            *p5,
            "--set",
            "hp:instanceType=ml.p5.48xlarge",
        )
        == 0
    )
    cost, printed = cost_of(tmp_path, "a"), capsys.readouterr()
    assert cost["total_per_hour"] is None and cost["total_per_month"] is None
    assert cost["not_found"] == ["ml.p5.48xlarge"]
    assert Decimal(cost["priced_per_hour"]) == CONTROL_USD + NAT_USD + IPV4_USD
    assert "  ml.p5.48xlarge x 1 @ not found (group g5-inference)" in printed.out.splitlines()
    assert "2 AWS Price List products match ml.p5.48xlarge in us-east-1" in printed.out
    assert not re.search(r"\$0\.00(?!\d)", printed.out)  # $0.005 (an IPv4 address) is a price


def test_without_preflight_the_snapshot_prices_and_a_missing_row_needs_preflight(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert plan(tmp_path, monkeypatch, "a") == 0
    printed = capsys.readouterr().out.splitlines()
    table = prices.snapshot()
    eks = table[("us-east-1", prices.EKS_CONTROL_PLANE)].usd_per_hour
    assert f"  EKS control plane x 1 @ {money(eks)}/h = {money(eks)}/h" in printed
    # the extended-support surcharge's sourced snapshot row: the $0.60 total less the $0.10
    extended = table[("us-east-1", prices.EKS_EXTENDED_SUPPORT)]
    assert extended.usd_per_hour + eks == Decimal("0.60")
    assert extended.source.startswith("https://aws.amazon.com/blogs/containers/")
    assert "  EKS extended support x 1 @ $0.50/h = $0.50/h" in printed
    assert ("us-east-1", G5) not in table  # no public source reachable: no row, no figure
    assert f"  {G5} x 1 @ not found (group g5-inference)" in printed
    assert (
        f"  not found: {G5}: no snapshot row for us-east-1: the price needs --preflight" in printed
    )
    cost = cost_of(tmp_path, "a")
    assert cost["total_per_hour"] is None and cost["not_found"] == [G5]
    assert [s["source"] for s in cost["sources"]] == ["snapshot"]


def test_diff_prints_the_cost_change_above_the_resource_changes(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    aws: LocalAWS,
) -> None:
    assert plan(tmp_path, monkeypatch, "a", "--preflight") == 0
    more = "hp:instanceGroups[0].instanceCount=3"
    assert (
        plan(
            tmp_path, monkeypatch, "b", "--preflight", "--set", more, "--diff", str(tmp_path / "a")
        )
        == 0
    )
    printed = capsys.readouterr().out.splitlines()
    fixed = CONTROL_USD + NAT_USD + IPV4_USD
    before, after = G5_USD + fixed, G5_USD * 3 + fixed
    percent = ((after - before) * 100 / before).quantize(Decimal(1), rounding="ROUND_HALF_UP")
    line = f"cost: +{money(after - before)}/h ({money(before)}/h -> {money(after)}/h), +{percent}%"
    assert line in printed
    assert printed.index(line) < next(
        i for i, p in enumerate(printed) if p.startswith("changes against")
    )
    # and back: the change is negative
    assert plan(tmp_path, monkeypatch, "c", "--preflight", "--diff", str(tmp_path / "b")) == 0
    back = f"cost: -{money(after - before)}/h ({money(after)}/h -> {money(before)}/h), -"
    assert any(p.startswith(back) for p in capsys.readouterr().out.splitlines())


def test_a_plan_over_the_budget_is_refused_naming_the_total_and_the_largest_parts(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    aws: LocalAWS,
) -> None:
    total = G5_USD + CONTROL_USD + NAT_USD + IPV4_USD
    budget = (total - Decimal("0.01")).quantize(Decimal("0.01"))
    assert plan(tmp_path, monkeypatch, "a", "--preflight", "--set", f"hp:budget={budget}/hour") == 1
    err = capsys.readouterr().err
    assert (
        f"error: hp:budget: the stack costs {money(total)}/h ({money(total * 730)}/month), over "
        f"the budget ${budget}/hour; the largest parts: {G5} x 1 = {money(G5_USD)}/h; "
        f"EKS extended support x 1 = {money(EXT_USD)}/h; EKS control plane x 1 = "
        f"{money(EKS_USD)}/h"
    ) in err
    # a month's budget is 730 hours of it; at the total, it passes
    assert (
        plan(tmp_path, monkeypatch, "b", "--preflight", "--set", f"hp:budget={total * 730}/month")
        == 0
    )


def test_a_budget_the_plan_cannot_price_is_not_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert plan(tmp_path, monkeypatch, "a", "--set", "hp:budget=1/hour") == 0
    err = capsys.readouterr().err
    assert f"hp:budget: not checked: the budget $1/hour (the price of {G5} was not found)" in err
    strict = ["--set", "hp:budget=1/hour", "--set", "hp:preflight=strict"]
    assert plan(tmp_path, monkeypatch, "b", *strict) == 1


def test_a_budget_the_priced_parts_alone_exceed_is_refused_naming_the_floor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without the instance price, what was priced is a floor: over the budget already."""
    assert plan(tmp_path, monkeypatch, "a", "--set", "hp:budget=0.1/hour") == 1
    err = capsys.readouterr().err
    floor = prices.snapshot()[("us-east-1", prices.EKS_CONTROL_PLANE)].usd_per_hour
    floor += prices.snapshot()[("us-east-1", prices.EKS_EXTENDED_SUPPORT)].usd_per_hour
    floor += prices.snapshot()[("us-east-1", prices.NAT_GATEWAY)].usd_per_hour
    floor += IPV4_USD
    assert (
        f"error: hp:budget: the stack costs at least {money(floor)}/h "
        f"({money(floor * 730)}/month) without {G5}, whose price was not found, over the "
        "budget $0.1/hour; the largest parts: "
    ) in err


@pytest.mark.parametrize("given", ["40", "40/day", "-5/hour", "0/month", "forty/hour"])
def test_a_malformed_budget_is_one_error_naming_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], given: str
) -> None:
    assert plan(tmp_path, monkeypatch, "a", "--set", f"hp:budget={given}") == 1
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and errors[0].startswith("error: hp:budget: must be ")


def test_preflight_says_where_a_live_price_differs_from_the_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(run, "PARTS", [run.pricing_part])
    from mlcc.preflight.cost import price_list as pricing

    stored = prices.snapshot()[("us-east-1", prices.EKS_CONTROL_PLANE)]
    live = stored.usd_per_hour + Decimal("0.02")
    products = [p for p in price_list.catalog() if p["product"]["sku"] != "EKSCLUSTER001"] + [
        price_list.product(
            "EKSCLUSTER002",
            "AmazonEKS",
            "USE1-AmazonEKS-Hours:perCluster",
            "us-east-1",
            str(live),
            family="Compute",
        )
    ]
    pricing.forget_answers()
    with account_served(monkeypatch, Account(products=products)):
        assert plan(tmp_path, monkeypatch, "a", "--preflight") == 0
    pricing.forget_answers()
    printed = capsys.readouterr().out.splitlines()
    start = next(i for i, line in enumerate(printed) if line.startswith("cost in "))
    block = printed[start : printed.index("", start)]
    assert all(len(line) <= 100 for line in block)
    said = " ".join(line.strip() for line in printed)
    assert (
        f"price changed: {prices.EKS_CONTROL_PLANE} {money(stored.usd_per_hour)}/h (snapshot, "
        f"in effect {stored.published}) -> {money(live)}/h (AWS Price List, published "
        f"{price_list.PUBLISHED[:10]})"
    ) in said
    assert f"  EKS control plane x 1 @ {money(live)}/h = {money(live)}/h" in printed


def test_a_version_in_standard_support_on_the_plans_date_bills_no_surcharge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same stack planned as of 2026-06-01, when 1.33 was in standard support."""
    monkeypatch.setenv("MLCC_TODAY", "2026-06-01")
    assert plan(tmp_path, monkeypatch, "a") == 0
    printed = capsys.readouterr().out
    assert "EKS extended support" not in printed and "Kubernetes 1.33" not in printed
    cost = cost_of(tmp_path, "a")
    assert [line["item"] for line in cost["lines"]][1:] == [
        prices.EKS_CONTROL_PLANE,
        prices.NAT_GATEWAY,
        PUBLIC_IPV4,
    ]
    assert cost["kubernetes"]["support"] == "standard support"
