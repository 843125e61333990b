"""The VPC: private subnets for EKS and HyperPod nodes in two AZs, public subnets with NAT.

Private subnets are large (a quarter of the VPC each) because HyperPod nodes give every pod a
VPC IP. One NAT gateway by default (cost); `natGatewayPerAz` adds one per AZ (resilience).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from mlcc.config.infrastructure import NewNetwork

# Subnet tags the AWS Load Balancer Controller uses to place internal / internet-facing ALBs.
_PRIVATE_ELB_TAG = {"kubernetes.io/role/internal-elb": "1"}
_PUBLIC_ELB_TAG = {"kubernetes.io/role/elb": "1"}


@dataclass(frozen=True)
class NetworkArgs:
    network: NewNetwork
    tags: Mapping[str, str]


class Network(pulumi.ComponentResource):
    vpc_id: pulumi.Output[str]
    private_subnet_ids: pulumi.Output[list[str]]
    public_subnet_ids: pulumi.Output[list[str]]

    def __init__(
        self, name: str, args: NetworkArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("hp:index:Network", name, None, opts)
        self._name = name
        self._tags = dict(args.tags)
        child = pulumi.ResourceOptions(parent=self)
        zones = aws.get_availability_zones_output(
            state="available", opts=pulumi.InvokeOutputOptions(parent=self)
        ).names
        vpc = aws.ec2.Vpc(
            f"{name}-vpc",
            cidr_block=args.network.cidr,
            enable_dns_hostnames=True,
            enable_dns_support=True,
            tags=self._tagged(f"{name}-vpc"),
            opts=child,
        )
        gateway = aws.ec2.InternetGateway(
            f"{name}-igw", vpc_id=vpc.id, tags=self._tagged(f"{name}-igw"), opts=child
        )
        public = [
            self._subnet(vpc, f"public-{i}", cidr, zones[i], public=True)
            for i, cidr in enumerate(args.network.public_subnet_cidrs)
        ]
        private = [
            self._subnet(vpc, f"private-{i}", cidr, zones[i], public=False)
            for i, cidr in enumerate(args.network.private_subnet_cidrs)
        ]
        self._public_routes(vpc, gateway, public)
        nat_count = len(public) if args.network.nat_gateway_per_az else 1
        nats = [self._nat_gateway(i, public[i], gateway) for i in range(nat_count)]
        tables = [
            self._private_route(vpc, i, subnet, nats[i % len(nats)])
            for i, subnet in enumerate(private)
        ]
        self._s3_endpoint(vpc, tables)
        self.vpc_id = vpc.id
        self.private_subnet_ids = pulumi.Output.all(*[s.id for s in private])
        self.public_subnet_ids = pulumi.Output.all(*[s.id for s in public])
        self.register_outputs(
            {
                "vpcId": self.vpc_id,
                "privateSubnetIds": self.private_subnet_ids,
                "publicSubnetIds": self.public_subnet_ids,
            }
        )

    def _tagged(self, name: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        return {**self._tags, "Name": name, **(extra or {})}

    def _subnet(
        self, vpc: aws.ec2.Vpc, suffix: str, cidr: str, zone: pulumi.Output[str], *, public: bool
    ) -> aws.ec2.Subnet:
        name = f"{self._name}-{suffix}"
        return aws.ec2.Subnet(
            name,
            vpc_id=vpc.id,
            cidr_block=cidr,
            availability_zone=zone,
            map_public_ip_on_launch=False,
            tags=self._tagged(name, _PUBLIC_ELB_TAG if public else _PRIVATE_ELB_TAG),
            opts=pulumi.ResourceOptions(parent=self),
        )

    def _public_routes(
        self, vpc: aws.ec2.Vpc, gateway: aws.ec2.InternetGateway, subnets: list[aws.ec2.Subnet]
    ) -> None:
        child = pulumi.ResourceOptions(parent=self)
        table = aws.ec2.RouteTable(
            f"{self._name}-public",
            vpc_id=vpc.id,
            routes=[aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", gateway_id=gateway.id)],
            tags=self._tagged(f"{self._name}-public"),
            opts=child,
        )
        for i, subnet in enumerate(subnets):
            aws.ec2.RouteTableAssociation(
                f"{self._name}-public-{i}", subnet_id=subnet.id, route_table_id=table.id, opts=child
            )

    def _nat_gateway(
        self, index: int, subnet: aws.ec2.Subnet, gateway: aws.ec2.InternetGateway
    ) -> aws.ec2.NatGateway:
        name = f"{self._name}-nat-{index}"
        child = pulumi.ResourceOptions(parent=self)
        eip = aws.ec2.Eip(name, domain="vpc", tags=self._tagged(name), opts=child)
        return aws.ec2.NatGateway(
            name,
            allocation_id=eip.id,
            subnet_id=subnet.id,
            tags=self._tagged(name),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[gateway]),
        )

    def _private_route(
        self, vpc: aws.ec2.Vpc, index: int, subnet: aws.ec2.Subnet, nat: aws.ec2.NatGateway
    ) -> aws.ec2.RouteTable:
        name = f"{self._name}-private-{index}"
        child = pulumi.ResourceOptions(parent=self)
        table = aws.ec2.RouteTable(
            name,
            vpc_id=vpc.id,
            routes=[aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", nat_gateway_id=nat.id)],
            tags=self._tagged(name),
            opts=child,
        )
        aws.ec2.RouteTableAssociation(
            name, subnet_id=subnet.id, route_table_id=table.id, opts=child
        )
        return table

    def _s3_endpoint(self, vpc: aws.ec2.Vpc, tables: list[aws.ec2.RouteTable]) -> None:
        """Free gateway endpoint: ECR image layers and S3 traffic bypass the (metered) NAT."""
        region = aws.get_region_output(opts=pulumi.InvokeOutputOptions(parent=self)).region
        name = f"{self._name}-s3"
        aws.ec2.VpcEndpoint(
            name,
            vpc_id=vpc.id,
            service_name=pulumi.Output.concat("com.amazonaws.", region, ".s3"),
            vpc_endpoint_type="Gateway",
            route_table_ids=[t.id for t in tables],
            tags=self._tagged(name),
            opts=pulumi.ResourceOptions(parent=self),
        )
