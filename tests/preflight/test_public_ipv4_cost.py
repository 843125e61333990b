"""The NAT gateway's public IPv4 address is billed (issue #43 item 5e): priced from the snapshot
(https://aws.amazon.com/vpc/pricing/, $0.005 per address-hour since 2024-02-01), never looked up
in the Price List, and listed under "not priced" where the snapshot has no row; each snapshot
date says what it is."""

from __future__ import annotations

import dataclasses
import json
from decimal import Decimal

import pytest
from program_runs import stack_values

from mlcc.config import stack as config
from mlcc.config.stack import StackConfig
from mlcc.preflight.cost import estimate as cost
from mlcc.preflight.cost import prices
from mlcc.preflight.cost.public_ipv4 import DATE_KINDS, PUBLIC_IPV4, SNAPSHOT_ONLY


@pytest.fixture
def dev_config() -> StackConfig:
    values = stack_values("dev", None)
    return config.parse(values.values, stack="dev", secret_keys=values.secret_keys).config


def test_each_nat_gateway_bills_one_public_ipv4_address_at_the_snapshots_price(
    dev_config: StackConfig,
) -> None:
    items, _ = cost.billed(dev_config)
    nat = [b.count for b in items if b.item == prices.NAT_GATEWAY]
    assert [b.count for b in items if b.item == PUBLIC_IPV4] == nat == [1]
    priced = cost.costing(dev_config, [], prices.snapshot(), preflight_ran=True)
    (line,) = [x for x in priced.lines if x.billed.item == PUBLIC_IPV4]
    assert line.price is not None and line.price.usd_per_hour == Decimal("0.005")
    assert line.price.source.startswith("https://aws.amazon.com/vpc/pricing/")
    assert (line.price.published, line.price.date_is) == ("2024-02-01", "in effect")


def test_the_price_list_is_never_asked_for_it(
    dev_config: StackConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mlcc.preflight.cost import price_list

    asked: list[str] = []

    def run_parallel(jobs: dict[str, object], seconds: float) -> dict[str, object]:
        asked.extend(jobs)  # the items GetProducts would be asked for
        return {}

    monkeypatch.setattr(price_list, "run_parallel", run_parallel)
    monkeypatch.setattr(price_list.account_fetch, "clients", lambda *a, **k: _Clients())
    price_list.pricing_part(dev_config, 1)
    assert prices.NAT_GATEWAY in asked and PUBLIC_IPV4 not in asked
    assert {PUBLIC_IPV4} == SNAPSHOT_ONLY


class _Clients:
    why = ""


def test_without_a_snapshot_row_it_is_not_priced_and_the_total_stays_known(
    dev_config: StackConfig,
) -> None:
    table = {k: v for k, v in prices.snapshot().items() if k[1] != PUBLIC_IPV4}
    priced = cost.costing(dev_config, [], table, preflight_ran=True)
    assert not [x for x in priced.lines if x.billed.item == PUBLIC_IPV4]
    assert f"{PUBLIC_IPV4} x 1 (no snapshot price in us-east-1)" in priced.not_priced
    assert PUBLIC_IPV4 not in [x.billed.item for x in priced.not_found]


def test_every_snapshot_row_says_what_its_date_is() -> None:
    rows = json.loads(
        (prices.resources.files(prices.__package__) / prices.SNAPSHOT_FILE).read_text()
    )["rows"]
    for row in rows:
        assert "published" not in row, row  # the key is `date`, what it is is `date_is`
        assert row["date_is"] in DATE_KINDS, row
    table = prices.snapshot()
    assert table[("us-east-1", prices.NAT_GATEWAY)].date_is == "read"  # an undated page
    assert table[("us-east-1", prices.EKS_CONTROL_PLANE)].date_is == "in effect"


def test_the_plan_json_names_what_each_date_is(dev_config: StackConfig) -> None:
    priced = cost.costing(dev_config, [], prices.snapshot(), preflight_ran=True).as_json()
    (source,) = priced["sources"]
    assert source["source"] == "snapshot"
    assert {d["date_is"] for d in source["dates"]} <= set(DATE_KINDS)
    line = next(x for x in priced["lines"] if x["item"] == PUBLIC_IPV4)
    assert (line["date"], line["date_is"]) == ("2024-02-01", "in effect")
    assert dataclasses.fields(prices.Price)[-1].name == "date_is"
