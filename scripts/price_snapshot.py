"""Build mlcc/preflight/cost/prices.json, the offline price table, from AWS's public offer files.

    python scripts/price_snapshot.py OFFER.json [OFFER.json ...] --region us-east-1 \
        --instance-type ml.g5.12xlarge [--instance-type ...] [--out mlcc/preflight/cost/prices.json]

Each OFFER.json is an offer file of the AWS Price List bulk API, downloaded without credentials
from https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/index.json (the index names each
service's file: AmazonSageMaker, AmazonEKS, AmazonEC2, per region under `regionIndexUrl`). Its
shape (`offerCode`, `version`, `publicationDate`, `products` by SKU with `productFamily` and
`attributes`, `terms.OnDemand` by SKU then offer term with `priceDimensions` and
`pricePerUnit.USD`) is AWS's documented offer file format. Each product is judged by the very
rule preflight applies to GetProducts' answer (mlcc.preflight.cost.prices): a row is written only
where exactly one product matches; otherwise the script says why and writes no row. Rows of
other sources already in the table (a public page) stay unless an offer file prices the same
region and item.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from mlcc.preflight.cost import prices

SERVICE_ITEMS = {"AmazonEKS": (prices.EKS_CONTROL_PLANE,), "AmazonEC2": (prices.NAT_GATEWAY,)}
OFFER_URL = "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/{code}/{version}/index.json"
DEFAULT_OUT = (
    Path(__file__).resolve().parents[1] / "mlcc" / "preflight" / "cost" / prices.SNAPSHOT_FILE
)


def price_list(offer: Mapping[str, Any]) -> list[str]:
    """The offer file's products as GetProducts would answer them: one JSON text per SKU with
    its product, its on-demand terms and the file's publication date."""
    on_demand = (offer.get("terms") or {}).get("OnDemand") or {}
    return [
        json.dumps(
            {
                "product": product,
                "serviceCode": offer.get("offerCode"),
                "terms": {"OnDemand": on_demand.get(sku, {})},
                "publicationDate": offer.get("publicationDate"),
            }
        )
        for sku, product in (offer.get("products") or {}).items()
    ]


def rows_from_offer(
    offer: Mapping[str, Any], regions: Iterable[str], instance_types: Iterable[str]
) -> tuple[list[prices.Price], list[str]]:
    """(the rows the offer file prices, why each other asked-for row has no price)."""
    code = str(offer.get("offerCode", ""))
    items = SERVICE_ITEMS.get(code, tuple(instance_types) if code == "AmazonSageMaker" else ())
    source = OFFER_URL.format(code=code, version=offer.get("version", "current"))
    products = price_list(offer)
    found: list[prices.Price] = []
    missing: list[str] = []
    for region in regions:
        for item in items:
            answer = prices.select(prices.rule(item, region), products)
            if isinstance(answer, str):
                missing.append(f"{code}: {answer}")
            else:
                found.append(
                    prices.Price(item, region, answer.usd_per_hour, answer.published, source)
                )
    return found, missing


def merged(table: Mapping[str, Any], rows: Iterable[prices.Price]) -> dict[str, Any]:
    """The table with `rows` in place of any row of the same (region, item), sorted; the
    other rows as they were written."""
    kept = list(table.get("rows", []))
    prices.rows_by_key(kept)  # every row kept is still a price
    by_key: dict[tuple[str, str], Mapping[str, Any]] = {
        (str(row["region"]), str(row["item"])): row for row in kept
    }
    by_key.update({(r.region, r.item): r.as_json() for r in rows})
    return {**table, "rows": [dict(by_key[key]) for key in sorted(by_key)]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("offers", nargs="+", type=Path, help="offer files (index.json)")
    parser.add_argument("--region", action="append", required=True, help="a region code")
    parser.add_argument("--instance-type", action="append", default=[], help="ml.<type>")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    rows: list[prices.Price] = []
    for path in args.offers:
        try:
            offer = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as failure:
            print(f"price_snapshot: {path}: {failure}", file=sys.stderr)
            return 2
        found, missing = rows_from_offer(offer, args.region, args.instance_type)
        rows += found
        for reason in missing:
            print(f"no row: {reason}", file=sys.stderr)
    table = json.loads(args.out.read_text(encoding="utf-8")) if args.out.exists() else {}
    args.out.write_text(json.dumps(merged(table, rows), indent=2) + "\n", encoding="utf-8")
    print(f"wrote {len(rows)} row(s) to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
