"""Which Price List product is a price (decoys left out), the snapshot, and the snapshot script."""

from __future__ import annotations

import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import botocore.session
import price_list
import pytest
from aws_accounts import Account, account_served
from local_aws import Reply
from program_runs import stack_values

from mlcc.config import stack as config
from mlcc.config.stack import StackConfig
from mlcc.preflight.cost import price_list as pricing
from mlcc.preflight.cost import prices
from mlcc.preflight.outcome import Outcome

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def dev_config() -> StackConfig:
    values = stack_values("dev", None)
    return config.parse(values.values, stack="dev", secret_keys=values.secret_keys).config


FIXTURES = Path(__file__).parent / "fixtures"
SCRIPT = REPO / "scripts" / "price_snapshot.py"


def texts(products: list[dict[str, Any]]) -> list[str]:
    return [json.dumps(p) for p in products]


def by_sku(sku: str) -> dict[str, Any]:
    (found,) = [p for p in price_list.catalog() if p["product"]["sku"] == sku]
    return found


def dimension_usd(product: dict[str, Any]) -> Decimal:
    (term,) = product["terms"]["OnDemand"].values()
    (dimension,) = term["priceDimensions"].values()
    return Decimal(dimension["pricePerUnit"]["USD"])


@pytest.mark.parametrize(
    ("item", "region", "sku"),
    [
        ("ml.g5.12xlarge", "us-east-1", "G5CLUSTER0001"),
        ("ml.g5.12xlarge", "us-west-2", "G5OREGON00001"),
        (prices.EKS_CONTROL_PLANE, "us-east-1", "EKSCLUSTER001"),
        (prices.EKS_EXTENDED_SUPPORT, "us-east-1", "EKSEXTENDED01"),
        (prices.NAT_GATEWAY, "us-east-1", "NATHOURS00001"),
    ],
)
def test_the_one_matching_product_among_the_decoys_is_the_price(
    item: str, region: str, sku: str
) -> None:
    found = prices.select(prices.rule(item, region), texts(price_list.catalog()))
    assert isinstance(found, prices.Price)
    assert found.usd_per_hour == dimension_usd(by_sku(sku))
    assert (found.item, found.region, found.source) == (item, region, prices.API_SOURCE)
    assert found.published == by_sku(sku)["publicationDate"][:10]


@pytest.mark.parametrize(
    "decoy",
    ["G5HOST0000001", "G5TRAIN000001", "G5RESCAP00001", "G5RESTERM0001", "G5PLAN0000001"],
)
def test_hosting_training_reserved_and_plan_skus_alone_are_not_found(decoy: str) -> None:
    found = prices.select(prices.rule("ml.g5.12xlarge", "us-east-1"), texts([by_sku(decoy)]))
    assert (
        found == "no on-demand hourly product of ml.g5.12xlarge in us-east-1 in the AWS Price List"
    )


def test_several_matches_are_not_one_price() -> None:
    found = prices.select(prices.rule("ml.p5.48xlarge", "us-east-1"), texts(price_list.catalog()))
    assert found == "2 AWS Price List products match ml.p5.48xlarge in us-east-1: not one price"


@pytest.mark.parametrize(
    ("unit", "usd"), [("GB", "7.09"), ("Hrs", "0.0000000000"), ("Hrs", "NaN"), ("Hrs", "x")]
)
def test_a_non_hourly_zero_or_unreadable_price_is_not_found(unit: str, usd: str) -> None:
    product = price_list.hyperpod("G5ODD", "us-east-1", "ml.g5.12xlarge", usd, unit=unit)
    assert isinstance(
        prices.select(prices.rule("ml.g5.12xlarge", "us-east-1"), texts([product])), str
    )


def test_the_snapshot_has_a_dated_public_source_for_every_row() -> None:
    table = prices.snapshot()
    assert table
    for (region, item), price in table.items():
        assert (price.region, price.item) == (region, item)
        assert price.usd_per_hour > 0
        assert len(price.published) == 10 and price.published[4] == "-"
        assert price.source.startswith("https://")


def test_the_price_list_endpoint_is_one_botocore_lists() -> None:
    endpoints = botocore.session.get_session().get_data("endpoints")
    listed = {
        region
        for partition in endpoints["partitions"]
        for region in partition["services"].get("api.pricing", {}).get("endpoints", {})
    }
    for region in ("us-east-1", "us-west-2", "eu-west-1", "ap-northeast-1", "cn-north-1"):
        assert pricing.endpoint_region(region) in listed
    assert pricing.endpoint_region("us-east-1") == "us-east-1"  # listed: the stack's own


def test_aws_endpoint_url_pricing_is_honoured(
    monkeypatch: pytest.MonkeyPatch, dev_config: StackConfig
) -> None:
    pricing.forget_answers()
    with account_served(monkeypatch, Account()) as fake:
        monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # nothing listens there
        monkeypatch.setenv("AWS_ENDPOINT_URL_PRICING", fake.url)
        outcome = pricing.pricing_part(dev_config, 5.0)
    pricing.forget_answers()
    assert isinstance(outcome, Outcome) and outcome.unchecked == ()
    assert {p.item for p in outcome.prices if isinstance(p, prices.Price)} == {
        "ml.g5.12xlarge",
        prices.EKS_CONTROL_PLANE,
        prices.EKS_EXTENDED_SUPPORT,  # the dev stack's 1.33 is in extended support on its date
        prices.NAT_GATEWAY,
    }
    assert {c.service for c in fake.calls} == {"pricing"}


def test_an_unreachable_price_list_is_one_not_checked_line_per_price(
    monkeypatch: pytest.MonkeyPatch, dev_config: StackConfig
) -> None:
    pricing.forget_answers()
    with account_served(monkeypatch, None) as fake:
        fake.on("GetProducts", Reply(503, {"message": "down"}, "ServiceUnavailable"), "pricing")
        outcome = pricing.pricing_part(dev_config, 5.0)
    assert outcome.prices == ()
    assert sorted(u.key for u in outcome.unchecked) == ["hp:budget"] * 4
    assert all("ServiceUnavailable" in u.why or "no answer" in u.why for u in outcome.unchecked)


def run_script(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *argv], capture_output=True, text=True, check=False, cwd=REPO
    )


def test_the_snapshot_script_builds_rows_from_an_offer_file_excerpt(tmp_path: Path) -> None:
    offer = FIXTURES / "offer_excerpt_AmazonSageMaker.json"
    out = tmp_path / "prices.json"
    kept = {
        "item": prices.EKS_CONTROL_PLANE,
        "region": "us-east-1",
        "usd_per_hour": "0.10",
        "date": "2024-04-01",
        "date_is": "in effect",
        "source": "https://example.org/a-page",
    }
    out.write_text(json.dumps({"about": "test", "rows": [kept]}))
    args = ["--region", "us-east-1", "--instance-type", "ml.g5.12xlarge"]
    result = run_script(str(offer), *args, "--instance-type", "ml.p5.48xlarge", "--out", str(out))
    assert result.returncode == 0, result.stderr
    document = json.loads(out.read_text())
    excerpt = json.loads(offer.read_text())
    (term,) = excerpt["terms"]["OnDemand"]["G5CLUSTERSKU1"].values()
    (dimension,) = term["priceDimensions"].values()
    g5 = {
        "item": "ml.g5.12xlarge",
        "region": "us-east-1",
        "usd_per_hour": str(Decimal(dimension["pricePerUnit"]["USD"]).normalize()),
        "date": excerpt["publicationDate"][:10],
        "date_is": "published",  # an offer file's publicationDate
        "source": (
            "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonSageMaker/"
            f"{excerpt['version']}/index.json"
        ),
    }
    assert document == {"about": "test", "rows": [kept, g5]}
    # the two ml.p5.48xlarge products are not one price: no row, and the script says why
    assert (
        "no row: AmazonSageMaker: 2 AWS Price List products match ml.p5.48xlarge" in result.stderr
    )


def test_where_the_price_list_answers_no_one_product_the_snapshot_is_not_used(
    dev_config: StackConfig,
) -> None:
    from mlcc.preflight.cost import estimate as cost

    table = prices.snapshot()
    assert ("us-east-1", prices.EKS_CONTROL_PLANE) in table
    missing = prices.Missing(prices.EKS_CONTROL_PLANE, "us-east-1", "2 products match")
    answered = cost.costing(dev_config, [missing], table, preflight_ran=True)
    (eks,) = [line for line in answered.lines if line.billed.item == prices.EKS_CONTROL_PLANE]
    assert eks.price is None and eks.reason == "2 products match"
    assert answered.total_per_hour is None
    # not read at all (no answer): the snapshot's row prices it
    unread = cost.costing(dev_config, [], table, preflight_ran=True)
    (eks,) = [line for line in unread.lines if line.billed.item == prices.EKS_CONTROL_PLANE]
    assert eks.price == table[("us-east-1", prices.EKS_CONTROL_PLANE)]
