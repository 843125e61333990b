"""Checks of a create-mode stack's network against the account (pure, over `network` facts).

- Elastic IPs: the addresses in use plus the NAT gateways' new ones within "EC2-VPC Elastic
  IPs" (an error: AllocateAddress fails with AddressLimitExceeded past it);
- an existing VPC's `hp:privateSubnetIds` in at least two Availability Zones (an error: "When
  you create a cluster, you specify a VPC and at least two subnets that are in different
  Availability Zones", docs.aws.amazon.com/eks/latest/userguide/network-reqs.html);
- the system node group's pod room against the add-ons' pods (a warning only: several of the
  counts below are assumed, docs/preflight.md).

A fact AWS did not give is "not checked" (`Findings.unreached`), as in the rest of the account.
"""

from __future__ import annotations

from mlcc.config.infrastructure import NewCluster, NewNetwork
from mlcc.config.stack import StackConfig
from mlcc.preflight.account import network
from mlcc.preflight.account.checks import Findings
from mlcc.preflight.account.facts import Unreached
from mlcc.preflight.account.network import EIP_QUOTA_CODE, EIP_QUOTA_SERVICE, NetworkFacts
from mlcc.preflight.outcome import Outcome
from mlcc.serving.speculative import Problem

NAT_KEY = "hp:natGatewayPerAz"
VPC_KEY = "hp:vpcId"
SUBNETS_KEY = "hp:privateSubnetIds"
NODE_TYPE_KEY = "hp:systemNodeInstanceType"
NODE_COUNT_KEY = "hp:systemNodeCount"
MIN_ZONES = 2  # EKS: at least two subnets in different Availability Zones (network-reqs)
EKS_SUBNETS_DOC = "docs.aws.amazon.com/eks/latest/userguide/network-reqs.html"

# Pods on the system nodes (the only non-HyperPod capacity; mlcc/components/cluster/eks.py).
# (pods, what, source); "assumed" where no source gives the count.
PODS_PER_NODE = (  # DaemonSets: one pod on every node
    (1, "aws-node", "the formula's +2 (awslabs/amazon-eks-ami files/eni-max-pods.txt)"),
    (1, "kube-proxy", "the formula's +2 (awslabs/amazon-eks-ami files/eni-max-pods.txt)"),
    (1, "eks-pod-identity-agent", "assumed"),
    (1, "s3-csi-node", "assumed"),
    (1, "fsx-csi-node", "assumed"),
)
PODS_PER_CLUSTER = (  # Deployments, spread over the system nodes
    (2, "CoreDNS", "EKS User Guide, managing-coredns: two replicas by default"),
    (
        1,
        "the inference operator",
        "aws/sagemaker-hyperpod-cli chart config/manager/manager.yaml: replicas: 1",
    ),
    (2, "aws-load-balancer-controller", "assumed"),
    (3, "KEDA (operator, metrics API server, admission webhooks)", "assumed"),
    (3, "cert-manager (controller, cainjector, webhook)", "assumed"),
    (2, "metrics-server", "assumed"),
    (2, "fsx-csi-controller", "assumed"),
    (1, "s3-csi-controller", "assumed"),
)
DAEMONSET_PODS = sum(pods for pods, _, _ in PODS_PER_NODE)  # on each system node
DEPLOYMENT_PODS = sum(pods for pods, _, _ in PODS_PER_CLUSTER)  # over the group
ASSUMED_PODS = sum(p for p, _, source in (*PODS_PER_NODE, *PODS_PER_CLUSTER) if source == "assumed")


def network_part(config: StackConfig, deadline_seconds: float) -> Outcome:
    """The network rows of the account part (create mode only), one preflight part."""
    if not isinstance(config.infrastructure.cluster, NewCluster):
        return Outcome()
    from mlcc.preflight.account.part import _run  # the run's shared boto3 clients

    made = _run(config, deadline_seconds).clients
    return check(config, network.gather(config, made, deadline_seconds))


def check(config: StackConfig, facts: NetworkFacts) -> Outcome:
    found = Findings()
    cluster = config.infrastructure.cluster
    if not isinstance(cluster, NewCluster):
        return found.outcome()
    if isinstance(cluster.network, NewNetwork):
        _check_eips(found, cluster.network, facts)
    else:
        _check_subnets(found, cluster.network.private_subnet_ids, facts)
    _check_system_pods(found, cluster, facts)
    merged = "; ".join(found.line)
    return Outcome(
        tuple(found.errors),
        tuple(found.warnings),
        tuple(found.unchecked),
        {"": (merged,)} if merged else {},
    )


def _check_eips(found: Findings, vpc: NewNetwork, facts: NetworkFacts) -> None:
    adds = network.eips_allocated(vpc)
    key = NAT_KEY if vpc.nat_gateway_per_az else VPC_KEY
    what = "the Elastic IP quota"
    quota, in_use = facts.eip_quota, facts.eips_in_use
    for missing in (quota, in_use):
        if isinstance(missing, Unreached):
            found.unreached(key, what, missing)
            return
    if quota is None or in_use is None or isinstance(quota, Unreached):
        return
    if quota.problem:
        source = f"Service Quotas {quota.name!r} ({quota.code})"
        found.unreached(key, what, Unreached(source, quota.problem))
        return
    assert isinstance(in_use, int)
    value, needed = int(quota.value), in_use + adds
    found.line.append(f"Elastic IPs: {in_use} in use + {adds} new, quota {value}")
    if needed <= value:
        return
    source = "the applied value" if quota.applied else "the AWS default"
    gateways = (
        f"{adds} NAT gateways (hp:natGatewayPerAz: one per Availability Zone)"
        if vpc.nat_gateway_per_az
        else "its NAT gateway"
    )
    fewer = (
        "Set hp:natGatewayPerAz: false (one NAT gateway, one address), "
        if vpc.nat_gateway_per_az
        else "Use an existing VPC (hp:vpcId, hp:privateSubnetIds), "
    )
    found.error(
        key,
        f"EC2 quota {quota.name!r} ({quota.code}) is {value} in {facts.region} ({source}), "
        f"{in_use} Elastic IP(s) are in use there, and the new VPC's {gateways} need {adds} "
        f"more: AllocateAddress would fail with AddressLimitExceeded. {fewer}"
        "release unused Elastic IPs, or raise the quota: aws service-quotas "
        f"request-service-quota-increase --service-code {EIP_QUOTA_SERVICE} --quota-code "
        f"{EIP_QUOTA_CODE} --desired-value {needed} --region {facts.region}",
    )


def _check_subnets(found: Findings, ids: tuple[str, ...], facts: NetworkFacts) -> None:
    if facts.missing_subnets:
        found.error(
            SUBNETS_KEY,
            f"EC2 DescribeSubnets in {facts.region}: {facts.missing_subnets}; list subnets of "
            "hp:vpcId in aws:region",
        )
        return
    zones = facts.subnet_zones
    if isinstance(zones, Unreached):
        found.unreached(SUBNETS_KEY, "the private subnets' Availability Zones", zones)
        return
    if zones is None:
        return
    distinct = sorted(set(zones.values()))
    found.line.append(f"private subnets in {len(distinct)} Availability Zone(s)")
    if len(distinct) >= MIN_ZONES:
        return
    found.error(
        SUBNETS_KEY,
        f"{', '.join(ids)} are all in {', '.join(distinct)}; EKS needs subnets in at least "
        f"{MIN_ZONES} Availability Zones ({EKS_SUBNETS_DOC}), and the system and HyperPod "
        "nodes run in these subnets: add a private subnet of another Availability Zone",
    )


def _check_system_pods(found: Findings, cluster: NewCluster, facts: NetworkFacts) -> None:
    node_type, count = cluster.system_node_instance_type, cluster.system_node_count
    node = facts.system_node
    what = f"the pod room of the system nodes ({node_type})"
    if isinstance(node, Unreached):
        found.unreached(NODE_TYPE_KEY, what, node)
        return
    if node is None:
        found.warnings.append(
            Problem(
                NODE_TYPE_KEY,
                f"EC2 lists no instance type {node_type} in {facts.region}, so the system "
                "nodes' pod room was not checked; the node group would not start",
            )
        )
        found.line.append(f"system nodes {node_type}: not listed")
        return
    per_node, spread = DAEMONSET_PODS, DEPLOYMENT_PODS
    room = count * max(node.max_pods - per_node, 0)
    found.line.append(
        f"system nodes {count} x {node_type}: {node.max_pods} pods each, add-ons need "
        f"{per_node} each + {spread} (partly assumed)"
    )
    if room >= spread:
        return
    found.warnings.append(
        Problem(
            NODE_TYPE_KEY,
            f"{node_type} takes at most {node.max_pods} pods per node (AWS VPC CNI: "
            f"{node.interfaces} ENIs x ({node.ipv4_per_interface} IPv4 addresses - 1) + 2); "
            f"{count} system node(s) leave room for {room} pods beside the {per_node} "
            f"DaemonSet pods each node runs, and the add-ons' Deployments need about {spread} "
            f"({ASSUMED_PODS} of these pods are assumed, not sourced: docs/preflight.md); the "
            f"rest would stay Pending. Use a type with more network interfaces "
            f"({NODE_TYPE_KEY}, e.g. m5.xlarge: 58) or more nodes ({NODE_COUNT_KEY})",
        )
    )
