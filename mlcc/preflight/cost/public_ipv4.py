"""The NAT gateways' public IPv4 addresses, and what each snapshot date is.

Each NAT gateway of a new VPC holds one Elastic IP (mlcc/components/cluster/network.py), and AWS
bills every public IPv4 address by the hour since 2024-02-01: "$0.005 per IP per hour for all
public IPv4 addresses" (https://aws.amazon.com/vpc/pricing/, the "Public IPv4 Addresses" tab;
AWS's blog "Identify and optimize public IPv4 address usage on AWS": "AWS now charges for public
IPv4 addresses provided by AWS", from February 1, 2024). No Price List rule for its product is
sourced here, so it is priced from the snapshot only (the pricing part never looks it up); in a
region without a snapshot row it is listed under "not priced", never guessed.
"""

from __future__ import annotations

from typing import Final

PUBLIC_IPV4: Final = "public IPv4 address"
# Items priced from the snapshot alone: the AWS Price List is not asked for them.
SNAPSHOT_ONLY: Final = frozenset({PUBLIC_IPV4})

# What a price's date is (prices.json `date_is`; the AWS Price List's own is its publicationDate).
PUBLISHED: Final = "published"  # the Price List's or an offer file's publicationDate
IN_EFFECT: Final = "in effect"  # the day the source says the price took effect
READ: Final = "read"  # an undated source: the day it was read
DATE_KINDS: Final = (PUBLISHED, IN_EFFECT, READ)


def unpriced(count: int, region: str) -> str:
    return f"{PUBLIC_IPV4} x {count} (no snapshot price in {region})"
