"""The subnets of a VPC this program creates: two private ones, large, and two small public ones."""

from __future__ import annotations

import ipaddress

AVAILABILITY_ZONES = 2
# Each private subnet gets a quarter of the VPC: a /16 gives two /18s (16k addresses each),
# room for HyperPod nodes, whose pods take VPC IPs.
PRIVATE_SUBNET_EXTRA_BITS = 2
PUBLIC_SUBNET_PREFIX = 24
RFC1918 = tuple(ipaddress.IPv4Network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"))


def subnet_plan(cidr: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Private subnets (a quarter of the VPC each) and /24 public subnets, one per AZ."""
    try:
        network = ipaddress.IPv4Network(cidr)
    except ValueError:
        raise ValueError(f"must be an IPv4 CIDR block such as 10.0.0.0/16, got {cidr!r}") from None
    if not any(network.subnet_of(block) for block in RFC1918):
        raise ValueError(
            f"must be inside a private RFC 1918 range (10.0.0.0/8, 172.16.0.0/12, "
            f"192.168.0.0/16), got {cidr}"
        )
    if not 16 <= network.prefixlen <= 18:
        raise ValueError(
            f"must be a /16 to /18 block so that each private subnet has room for "
            f"many pod IPs, got /{network.prefixlen}"
        )
    quarters = list(network.subnets(prefixlen_diff=PRIVATE_SUBNET_EXTRA_BITS))
    private = tuple(str(q) for q in quarters[:AVAILABILITY_ZONES])
    public_pool = quarters[AVAILABILITY_ZONES]
    public = tuple(
        str(s)
        for s in list(public_pool.subnets(new_prefix=PUBLIC_SUBNET_PREFIX))[:AVAILABILITY_ZONES]
    )
    return private, public
