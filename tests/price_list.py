"""A Price List for the local AWS (tests/local_aws.py): products shaped like AWS's own.

Each product is what GetProducts returns in `PriceList` (one JSON text per SKU, format aws_v1):
`product` (`sku`, `productFamily`, `attributes` with `servicecode`, `usagetype`, `regionCode`,
`location`, ...), `serviceCode`, `terms` (`OnDemand` and/or `Reserved`, by offer term, each with
`priceDimensions` holding `unit`, `pricePerUnit.USD`, ...), `version`, `publicationDate`: the
shape of the AWS CLI's documented `aws pricing get-products` example output. The prices are test
data, not AWS's figures. `serve` answers GetProducts with the filters' documented meanings
(TERM_MATCH/EQUALS: equal, CONTAINS: a substring, ANY_OF/NONE_OF: a comma-separated list),
two products a page so that the client's paginator is exercised.
"""

from __future__ import annotations

import json
from typing import Any

from local_aws import LocalAWS, Reply

PAGE = 2
PUBLISHED = "2026-11-01T00:00:00Z"
LOCATIONS = {"us-east-1": "US East (N. Virginia)", "us-west-2": "US West (Oregon)"}


def product(
    sku: str,
    service: str,
    usage_type: str,
    region: str,
    usd: str,
    *,
    family: str = "ML Instance",
    unit: str = "Hrs",
    published: str = PUBLISHED,
    on_demand: bool = True,
    extra: dict[str, str] | None = None,
) -> dict[str, Any]:
    term_code = "JRTCKXETXF" if on_demand else "4NA7Y494T4"
    dimension = {
        "unit": unit,
        "endRange": "Inf",
        "description": f"${usd} per {unit} for {usage_type}",
        "appliesTo": [],
        "rateCode": f"{sku}.{term_code}.6YS6EN2CT7",
        "beginRange": "0",
        "pricePerUnit": {"USD": usd},
    }
    term = {
        "priceDimensions": {dimension["rateCode"]: dimension},
        "sku": sku,
        "effectiveDate": published,
        "offerTermCode": term_code,
        "termAttributes": {} if on_demand else {"LeaseContractLength": "1yr"},
    }
    attributes = {
        "servicecode": service,
        "usagetype": usage_type,
        "regionCode": region,
        "location": LOCATIONS.get(region, region),
        "locationType": "AWS Region",
        "operation": "RunInstance",
        **(extra or {}),
    }
    return {
        "product": {"productFamily": family, "attributes": attributes, "sku": sku},
        "serviceCode": service,
        "terms": {("OnDemand" if on_demand else "Reserved"): {f"{sku}.{term_code}": term}},
        "version": published.replace("-", "").replace(":", "").replace("T", "")[:14],
        "publicationDate": published,
    }


def hyperpod(sku: str, region: str, instance_type: str, usd: str, **more: Any) -> dict[str, Any]:
    prefix = {"us-east-1": "USE1", "us-west-2": "USW2"}[region]
    return product(
        sku,
        "AmazonSageMaker",
        f"{prefix}-Cluster:{instance_type}",
        region,
        usd,
        extra={"component": "Cluster", "instanceName": instance_type},
        **more,
    )


def _matches(item: dict[str, Any], request: dict[str, Any]) -> bool:
    if item["serviceCode"] != request["ServiceCode"]:
        return False
    fields = {**item["product"]["attributes"], "productFamily": item["product"]["productFamily"]}
    for given in request.get("Filters", []):
        value, wanted = fields.get(given["Field"]), given["Value"]
        kind = given["Type"]
        if kind in ("TERM_MATCH", "EQUALS") and value != wanted:
            return False
        if kind == "CONTAINS" and (value is None or wanted not in value):
            return False
        if kind == "ANY_OF" and value not in wanted.split(","):
            return False
        if kind == "NONE_OF" and value in wanted.split(","):
            return False
    return True


def serve(fake: LocalAWS, products: list[dict[str, Any]]) -> None:
    def get_products(request: dict[str, Any]) -> Reply:
        found = [json.dumps(p) for p in products if _matches(p, request)]
        start = int(request.get("NextToken") or 0)
        body: dict[str, Any] = {"FormatVersion": "aws_v1", "PriceList": found[start : start + PAGE]}
        if start + PAGE < len(found):
            body["NextToken"] = str(start + PAGE)
        return Reply(body=body)

    fake.on("GetProducts", get_products, service="pricing")


def catalog() -> list[dict[str, Any]]:
    """us-east-1's prices of the example stacks' billed things, among decoys of every kind."""
    return [
        hyperpod("G5CLUSTER0001", "us-east-1", "ml.g5.12xlarge", "7.0900000000"),
        # decoys of ml.g5.12xlarge: hosting, training, reserved capacity, a reserved term,
        # another region, a price in another unit
        product(
            "G5HOST0000001",
            "AmazonSageMaker",
            "USE1-Host:ml.g5.12xlarge",
            "us-east-1",
            "7.0900000000",
            extra={"component": "Hosting"},
        ),
        product(
            "G5TRAIN000001",
            "AmazonSageMaker",
            "USE1-Train:ml.g5.12xlarge",
            "us-east-1",
            "7.0900000000",
            extra={"component": "Training"},
        ),
        hyperpod("G5RESCAP00001", "us-east-1", "ml.g5.12xlarge-Reserved", "5.1000000000"),
        hyperpod("G5RESTERM0001", "us-east-1", "ml.g5.12xlarge", "4.2000000000", on_demand=False),
        hyperpod("G5OREGON00001", "us-west-2", "ml.g5.12xlarge", "7.5000000000"),
        product(
            "G5PLAN0000001",
            "AmazonSageMaker",
            "USE1-TrainingPlan-Cluster:ml.g5.12xlarge",
            "us-east-1",
            "3.3000000000",
        ),
        # two products that both look like ml.p5.48xlarge's price: not one price
        hyperpod("P5CLUSTER0001", "us-east-1", "ml.p5.48xlarge", "98.3200000000"),
        hyperpod("P5CLUSTER0002", "us-east-1", "ml.p5.48xlarge", "55.0400000000"),
        product(
            "EKSCLUSTER001",
            "AmazonEKS",
            "USE1-AmazonEKS-Hours:perCluster",
            "us-east-1",
            "0.1000000000",
            family="Compute",
        ),
        product(
            "EKSEXTENDED01",
            "AmazonEKS",
            "USE1-AmazonEKS-Hours:extendedSupport",
            "us-east-1",
            "0.5000000000",
            family="Compute",
        ),
        product(
            "NATHOURS00001",
            "AmazonEC2",
            "NatGateway-Hours",
            "us-east-1",
            "0.0450000000",
            family="NAT Gateway",
        ),
        product(
            "NATBYTES00001",
            "AmazonEC2",
            "NatGateway-Bytes",
            "us-east-1",
            "0.0450000000",
            family="NAT Gateway",
            unit="GB",
        ),
        product(
            "NATREGIONAL01",
            "AmazonEC2",
            "RegionalNatGateway-Hours",
            "us-east-1",
            "0.0500000000",
            family="NAT Gateway",
        ),
    ]
