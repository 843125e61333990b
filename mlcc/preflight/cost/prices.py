"""Hourly on-demand prices: which Price List product is which billed thing, and the snapshot.

Pure. One rule per billed thing says which AWS Price List products may be its price
(docs/cost.md lists the sources of every attribute value used here):

- a HyperPod cluster instance: service `AmazonSageMaker`, usage type `<prefix>-Cluster:ml.<type>`
  (AWS's own "GPU Cost Allocation from CUR" page of awslabs/ai-on-sagemaker-hyperpod: "HyperPod
  compute nodes: AmazonSageMaker, `<region>-Cluster:ml.p4d.24xlarge`"). Hosting (`Host:`),
  training (`Train:`), notebook and the reserved-capacity SKUs (`Cluster:ml.<type>-Reserved`)
  have other usage types, so the exact match leaves them out; reserved terms are not
  `terms.OnDemand` and are never read;
- the EKS control plane: service `AmazonEKS`, usage type `<prefix>-AmazonEKS-Hours:perCluster`
  (the same page: "EKS control plane: AmazonEKS, `<region>-AmazonEKS-Hours:perCluster`");
- EKS extended support, billed on top of the control plane while its Kubernetes version is in
  extended support (docs/kubernetes-facts.md): service `AmazonEKS`, usage type
  `<prefix>-AmazonEKS-Hours:extendedSupport` (assumed: no AWS page read names it; public cost
  reports and Price List readers do, as a surcharge beside `perCluster`). A wrong name finds no
  product: the price is then not found, never a guess;
- a NAT gateway: service `AmazonEC2`, product family `NAT Gateway`, usage type
  `<prefix>-NatGateway-Hours` (infracost's AWS NAT gateway resource queries the same family
  and usage type; `RegionalNatGateway-Hours` and `NatGateway-Bytes` are other SKUs).

A product counts only in the stack's region (`regionCode`), with exactly one on-demand term
holding exactly one hourly USD dimension above zero. Zero or several such products: the price
is not found, never a guess. The `<prefix>` (USE1, EU, ...) is not matched: the region is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from importlib import resources
from typing import Any

HOURS_PER_MONTH = Decimal(730)
EKS_CONTROL_PLANE = "EKS control plane"
EKS_EXTENDED_SUPPORT = "EKS extended support"
NAT_GATEWAY = "NAT gateway"
SNAPSHOT_FILE = "prices.json"
API_SOURCE = "AWS Price List API"
_HOURLY_UNITS = frozenset({"hrs", "hours"})
# No AWS instance bills near this an hour (the largest HyperPod instances: about $100); a Price
# List figure above it is no price.
MAX_USD_PER_HOUR = Decimal(10_000)


@dataclass(frozen=True)
class Price:
    item: str  # an instance type (ml.g5.12xlarge), EKS_CONTROL_PLANE, EKS_EXTENDED_SUPPORT, ...
    region: str
    usd_per_hour: Decimal
    published: str  # YYYY-MM-DD: the date `date_is` names
    source: str  # API_SOURCE, an offer file URL or a page URL
    date_is: str = "published"  # published, in effect or read (cost/public_ipv4.py DATE_KINDS)

    def as_json(self) -> dict[str, str]:
        return {
            "item": self.item,
            "region": self.region,
            "usd_per_hour": str(self.usd_per_hour),
            "date": self.published,
            "date_is": self.date_is,
            "source": self.source,
        }


@dataclass(frozen=True)
class Missing:
    """A price the AWS Price List did not give: zero or several matching products."""

    item: str
    region: str
    reason: str


@dataclass(frozen=True)
class Rule:
    """Which products may be `item`'s price: the GetProducts query, then the exact match."""

    item: str
    region: str
    service_code: str
    filters: tuple[tuple[str, str, str], ...]  # (Type, Field, Value) of GetProducts' Filters
    usage_type: re.Pattern[str]
    product_family: str = ""  # "" when any


_EKS_USAGE = {
    EKS_CONTROL_PLANE: "AmazonEKS-Hours:perCluster",
    EKS_EXTENDED_SUPPORT: "AmazonEKS-Hours:extendedSupport",
}


def rule(item: str, region: str) -> Rule:
    in_region = ("TERM_MATCH", "regionCode", region)
    if item in _EKS_USAGE:
        usage = _EKS_USAGE[item]
        filters = (in_region, ("CONTAINS", "usagetype", usage))
        return Rule(item, region, "AmazonEKS", filters, _usage(usage))
    if item == NAT_GATEWAY:
        filters = (in_region, ("TERM_MATCH", "productFamily", "NAT Gateway"))
        return Rule(item, region, "AmazonEC2", filters, _usage("NatGateway-Hours"), "NAT Gateway")
    usage = f"Cluster:{item}"
    return Rule(
        item,
        region,
        "AmazonSageMaker",
        (in_region, ("CONTAINS", "usagetype", usage)),
        _usage(usage),
    )


def _usage(name: str) -> re.Pattern[str]:
    """`name`, or `name` after a region prefix (`USE1-`, `EU-`), nothing before or after."""
    return re.compile(rf"(?:[A-Z]{{2,4}}[0-9]?-)?{re.escape(name)}")


def select(found: Rule, price_list: Iterable[str]) -> Price | str:
    """The one product of `price_list` (GetProducts' JSON strings) that is `found`'s price, or
    why there is none."""
    matches: list[Price] = []
    for text in price_list:
        product = _json(text)
        price = _matching_price(found, product) if product is not None else None
        if price is not None:
            matches.append(price)
    if len(matches) == 1:
        return matches[0]
    where = f"{found.item} in {found.region}"
    if not matches:
        return f"no on-demand hourly product of {where} in the AWS Price List"
    return f"{len(matches)} AWS Price List products match {where}: not one price"


def is_product(text: object) -> bool:
    """Whether a GetProducts item is what its model says: a JSON object in a string."""
    return _json(text) is not None


def _json(text: object) -> dict[str, Any] | None:
    if not isinstance(text, str):
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _matching_price(found: Rule, entry: Mapping[str, Any]) -> Price | None:
    product = entry.get("product")
    if not isinstance(product, Mapping):
        return None
    attributes = product.get("attributes")
    if not isinstance(attributes, Mapping):
        return None
    usage = attributes.get("usagetype")
    if attributes.get("regionCode") != found.region or not isinstance(usage, str):
        return None
    if not found.usage_type.fullmatch(usage):
        return None
    if found.product_family and product.get("productFamily") != found.product_family:
        return None
    terms = entry.get("terms")
    usd = on_demand_hourly_usd(terms.get("OnDemand") if isinstance(terms, Mapping) else None)
    published = str(entry.get("publicationDate", ""))[:10]
    if usd is None or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", published):
        return None
    return Price(found.item, found.region, usd, published, API_SOURCE)


def on_demand_hourly_usd(terms: Any) -> Decimal | None:
    """The USD of the one on-demand term's one hourly dimension; None unless exactly so."""
    if not isinstance(terms, Mapping) or len(terms) != 1:
        return None
    (term,) = terms.values()
    dimensions = term.get("priceDimensions") if isinstance(term, Mapping) else None
    if not isinstance(dimensions, Mapping) or len(dimensions) != 1:
        return None
    (dimension,) = dimensions.values()
    if not isinstance(dimension, Mapping):
        return None
    if str(dimension.get("unit", "")).casefold() not in _HOURLY_UNITS:
        return None
    per_unit = dimension.get("pricePerUnit")
    return usd_amount(per_unit.get("USD") if isinstance(per_unit, Mapping) else None)


def usd_amount(text: Any) -> Decimal | None:
    """A positive, finite USD figure up to MAX_USD_PER_HOUR from its decimal text, exactly
    (at most 40 characters); None otherwise."""
    if not isinstance(text, str) or len(text.strip()) > 40:
        return None
    try:
        amount = Decimal(text.strip())
    except InvalidOperation:
        return None
    if not amount.is_finite() or not 0 < amount <= MAX_USD_PER_HOUR:
        return None
    return amount.normalize()


# --- the snapshot ---------------------------------------------------------------------------


def snapshot() -> dict[tuple[str, str], Price]:
    """The vendored table (mlcc/preflight/cost/prices.json, by scripts/price_snapshot.py): one row
    per (region, item), each with its USD per hour, its date and what that date is, and source."""
    text = resources.files(__package__).joinpath(SNAPSHOT_FILE).read_text(encoding="utf-8")
    return rows_by_key(json.loads(text)["rows"])


def rows_by_key(rows: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], Price]:
    table: dict[tuple[str, str], Price] = {}
    for row in rows:
        usd = usd_amount(row.get("usd_per_hour"))
        if usd is None:
            raise ValueError(f"price snapshot row {dict(row)}: usd_per_hour is not a price")
        price = Price(
            str(row["item"]), str(row["region"]), usd, str(row["date"]), str(row["source"]),
            str(row["date_is"]),
        )  # fmt: skip
        table[(price.region, price.item)] = price
    return table
