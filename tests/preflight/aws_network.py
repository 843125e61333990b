"""The network side of a test account (tests/preflight/aws_accounts.py serves it beside the rest):
the "EC2-VPC Elastic IPs" quota, the Elastic IPs in use, the subnets and the system node types'
NetworkInfo, answered as EC2 and Service Quotas answer (botocore's output shapes; the local AWS
checks every reply)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from local_aws import LocalAWS, Reply, error

from mlcc.preflight.account.network import EIP_QUOTA_CODE, EIP_QUOTA_NAME

ACCOUNT_ID = "123456789012"
REGION = "us-east-1"
RECORDED = json.loads(
    (Path(__file__).parent / "fixtures" / "describe_instance_types_network.json").read_text()
)
NETWORK_TYPES: dict[str, dict[str, Any]] = {
    item["InstanceType"]: item for item in RECORDED["reply"]["InstanceTypes"]
}
ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")


@dataclass
class Network:
    eip_default: float = 5.0  # AWS's default of EC2-VPC Elastic IPs
    eip_applied: float | None = None  # None: no applied value (GetServiceQuota: not found)
    addresses: int = 0  # Elastic IPs the region already holds
    zones: dict[str, str] = field(default_factory=dict)  # subnet -> AZ (else one AZ each)
    missing: set[str] = field(default_factory=set)  # subnets that do not exist


def quota_reply(value: Any) -> Reply:
    quota = {
        "ServiceCode": "ec2",
        "ServiceName": "Amazon Elastic Compute Cloud (Amazon EC2)",
        "QuotaArn": f"arn:aws:servicequotas:{REGION}:{ACCOUNT_ID}:ec2/{EIP_QUOTA_CODE}",
        "QuotaCode": EIP_QUOTA_CODE,
        "QuotaName": EIP_QUOTA_NAME,
        "Value": value,
        "Unit": "None",
        "Adjustable": True,
        "GlobalQuota": False,
    }
    return Reply(body={"Quota": quota})


def addresses_reply(count: int) -> Reply:
    addresses = [
        {
            "AllocationId": f"eipalloc-{index:017x}",
            "Domain": "vpc",
            "PublicIp": f"203.0.113.{index % 250 + 1}",
            "NetworkBorderGroup": REGION,
        }
        for index in range(count)
    ]
    return Reply(body={"Addresses": addresses})


def _subnets(network: Network, request: dict[str, Any]) -> Reply:
    ids = request["SubnetIds"]
    missing = [s for s in ids if s in network.missing]
    if missing:
        return error("InvalidSubnetID.NotFound", f"The subnet ID '{missing[0]}' does not exist")
    subnets = [
        {
            "SubnetId": subnet,
            "AvailabilityZone": network.zones.get(subnet, ZONES[index % len(ZONES)]),
            "VpcId": "vpc-0a1b2c3d4e5f67890",
            "State": "available",
            "CidrBlock": f"10.0.{index}.0/24",
        }
        for index, subnet in enumerate(ids)
    ]
    return Reply(body={"Subnets": subnets})


def serve(fake: LocalAWS, network: Network) -> None:
    def applied(_request: dict[str, Any]) -> Reply:
        if network.eip_applied is None:
            return error("NoSuchResourceException", "The request failed: no applied value")
        return quota_reply(network.eip_applied)

    fake.on("GetServiceQuota", applied, service="service-quotas")
    fake.on(
        "GetAWSDefaultServiceQuota",
        lambda _r: quota_reply(network.eip_default),
        service="service-quotas",
    )
    fake.on("DescribeAddresses", lambda _r: addresses_reply(network.addresses), service="ec2")
    fake.on("DescribeSubnets", lambda r: _subnets(network, r), service="ec2")
