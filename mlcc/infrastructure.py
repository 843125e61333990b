"""Infrastructure settings (cluster, network, GPU instance groups, tags) as frozen dataclasses.

Pure: `parse` reads the raw `hp:*` values through the config reader, records every problem
with its key, and returns an `InfrastructureConfig`. `mlcc.config.parse` calls it; nothing here
imports Pulumi.
"""

from __future__ import annotations

import ipaddress
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from mlcc import instances

if TYPE_CHECKING:
    from mlcc.config import _Reader

SUPPORTED_KUBERNETES_VERSIONS = ("1.28", "1.29", "1.30", "1.31", "1.32", "1.33")
DEEP_HEALTH_CHECKS = ("InstanceStress", "InstanceConnectivity")
DEFAULT_GROUP_NAME = "gpu"
DEFAULT_EBS_GB = 500
AVAILABILITY_ZONES = 2
# Each private subnet gets a quarter of the VPC: a /16 gives two /18s (16k addresses each),
# room for HyperPod nodes, whose pods take VPC IPs.
PRIVATE_SUBNET_EXTRA_BITS = 2
PUBLIC_SUBNET_PREFIX = 24

_GROUP_NAME = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$")
_CLUSTER_NAME = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$")
_CLUSTER_ARN = re.compile(r"^arn:aws[a-z-]*:sagemaker:[a-z0-9-]+:\d{12}:cluster/[a-z0-9]+$")
_EC2_INSTANCE_TYPE = re.compile(r"^[a-z][a-z0-9-]*\.[a-z0-9]+$")
_VPC_ID = re.compile(r"^vpc-[0-9a-f]{8,17}$")
_SUBNET_ID = re.compile(r"^subnet-[0-9a-f]{8,17}$")
_GROUP_FIELDS = {
    "name",
    "instanceType",
    "instanceCount",
    "ebsVolumeSizeGb",
    "threadsPerCore",
    "deepHealthChecks",
}

# (name, CLI type, default, description) of the keys parsed here; mlcc.config.KEYS adds them.
CliType = Literal["string", "integer", "boolean"] | None
KEY_SPECS: tuple[tuple[str, CliType, object, str], ...] = (
    (
        "clusterName",
        "string",
        "",
        "Existing HyperPod cluster (name or ARN): create only the images and the endpoint on it. "
        "Empty = create the VPC, EKS, HyperPod cluster and operator.",
    ),
    (
        "instanceGroups",
        None,
        [],
        "HyperPod GPU instance groups: a list of {name, instanceType, instanceCount, "
        "ebsVolumeSizeGb (500), threadsPerCore (1), deepHealthChecks ([InstanceStress, "
        "InstanceConnectivity])}. Empty = one group 'gpu' of hp:instanceType, hp:replicas nodes.",
    ),
    ("kubernetesVersion", "string", "1.33", "EKS Kubernetes version (HyperPod: 1.28-1.33)."),
    (
        "vpcCidr",
        "string",
        "10.0.0.0/16",
        "CIDR of the VPC this program creates (/16-/18; each private subnet gets a quarter).",
    ),
    (
        "natGatewayPerAz",
        "boolean",
        False,
        "One NAT gateway per availability zone (resilient, costs more) instead of one.",
    ),
    ("vpcId", "string", "", "Existing VPC id; set with hp:privateSubnetIds to skip the VPC."),
    (
        "privateSubnetIds",
        None,
        [],
        "Existing private subnet ids (at least two AZs, with room for many IPs).",
    ),
    (
        "publicSubnetIds",
        None,
        [],
        "Existing public subnet ids (for internet-facing load balancers).",
    ),
    (
        "systemNodeInstanceType",
        "string",
        "m5.xlarge",
        "EC2 type of the CPU node group for the operator, cert-manager, CoreDNS (x86_64).",
    ),
    ("systemNodeCount", "integer", 2, "Nodes in the CPU system node group."),
    (
        "hyperpodDependenciesChart",
        "string",
        "",
        "Path to a checkout's sagemaker-hyperpod-cli/helm_chart/HyperPodHelmChart: installs AWS's "
        "full dependencies chart (health monitoring agent, deep health checks, device plugins). "
        "Empty = only the published NVIDIA and EFA device plugin charts.",
    ),
    ("tags", None, {}, "Extra AWS tags for every taggable resource (a map)."),
)


@dataclass(frozen=True)
class InstanceGroup:
    name: str
    instance_type: str
    instance_count: int
    ebs_volume_size_gb: int = DEFAULT_EBS_GB
    threads_per_core: int = 1
    deep_health_checks: tuple[str, ...] = DEEP_HEALTH_CHECKS


@dataclass(frozen=True)
class NewNetwork:
    """A VPC this program creates: private subnets for the nodes, public ones for the NAT."""

    cidr: str
    private_subnet_cidrs: tuple[str, ...]
    public_subnet_cidrs: tuple[str, ...]
    nat_gateway_per_az: bool


@dataclass(frozen=True)
class ExistingNetwork:
    vpc_id: str
    private_subnet_ids: tuple[str, ...]
    public_subnet_ids: tuple[str, ...]


@dataclass(frozen=True)
class NewCluster:
    """Create mode: VPC (or existing subnets), EKS, HyperPod cluster, operator."""

    eks_cluster_name: str
    hyperpod_cluster_name: str
    kubernetes_version: str
    network: NewNetwork | ExistingNetwork
    instance_groups: tuple[InstanceGroup, ...]
    system_node_instance_type: str
    system_node_count: int
    dependencies_chart: str | None


@dataclass(frozen=True)
class ExistingCluster:
    """Existing-cluster mode: only the images and the endpoint are created."""

    name_or_arn: str

    @property
    def is_arn(self) -> bool:
        return self.name_or_arn.startswith("arn:")


@dataclass(frozen=True)
class InfrastructureConfig:
    cluster: NewCluster | ExistingCluster
    tags: tuple[tuple[str, str], ...]

    @property
    def tag_map(self) -> dict[str, str]:
        return dict(self.tags)


def parse(
    reader: _Reader, *, stack: str, instance_type: str, replicas: int, gpu_count: int = 1
) -> InfrastructureConfig:
    tags = _tags(reader, stack)
    existing = reader.string("clusterName")
    if existing:
        _check_existing_name(reader, existing)
        _warn_create_only_keys(reader)
        return InfrastructureConfig(ExistingCluster(existing), tags)
    groups = _instance_groups(reader, instance_type, replicas)
    if instances.INSTANCE_TYPE_PATTERN.match(instance_type) and groups:
        _check_endpoint_fits(reader, groups, instance_type)
        _warn_if_replicas_do_not_fit(reader, groups, instance_type, replicas, gpu_count)
    base = resource_base_name(stack)
    cluster = NewCluster(
        eks_cluster_name=base,
        hyperpod_cluster_name=base,
        kubernetes_version=_kubernetes_version(reader),
        network=_network(reader),
        instance_groups=groups,
        system_node_instance_type=_system_node_type(reader),
        system_node_count=_system_node_count(reader),
        dependencies_chart=reader.string("hyperpodDependenciesChart") or None,
    )
    return InfrastructureConfig(cluster, tags)


def resource_base_name(stack: str) -> str:
    """`hp-<stack>`, usable as an EKS and a HyperPod cluster name (<= 63, alnum and '-')."""
    name = re.sub(r"[^a-zA-Z0-9]+", "-", f"hp-{stack}").strip("-")
    return name[:40].rstrip("-")


def _json(reader: _Reader, name: str) -> object:
    text = reader.raw(name).strip()
    if not text:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text  # a bare string from the CLI; the caller reports the wrong shape


def _tags(reader: _Reader, stack: str) -> tuple[tuple[str, str], ...]:
    tags = {"project": "hp", "stack": stack, "managed-by": "pulumi"}
    raw = _json(reader, "tags")
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        reader.fail("tags", "must be a map of tag names to string values")
        return tuple(tags.items())
    for key, value in raw.items():
        problem = _tag_problem(str(key), value)
        if problem:
            reader.fail(f"tags.{key}", problem)
        else:
            tags[str(key)] = str(value)
    return tuple(sorted(tags.items()))


def _tag_problem(key: str, value: object) -> str | None:
    if key.lower().startswith("aws:"):
        return "tag names starting with 'aws:' are reserved by AWS"
    if not 1 <= len(key) <= 128:
        return "tag names must be 1-128 characters"
    if isinstance(value, dict | list) or value is None:
        return "tag values must be strings"
    if len(str(value)) > 256:
        return "tag values must be at most 256 characters"
    return None


def _check_existing_name(reader: _Reader, name: str) -> None:
    if name.startswith("arn:"):
        if not _CLUSTER_ARN.match(name):
            reader.fail(
                "clusterName",
                f"is not a HyperPod cluster ARN "
                f"(arn:aws:sagemaker:<region>:<account>:cluster/<id>): {name!r}",
            )
    elif not _CLUSTER_NAME.match(name):
        reader.fail(
            "clusterName",
            f"must be a HyperPod cluster name (letters, digits, '-', at "
            f"most 63) or its ARN, got {name!r}",
        )


_CREATE_ONLY = (
    "instanceGroups",
    "vpcId",
    "privateSubnetIds",
    "publicSubnetIds",
    "hyperpodDependenciesChart",
)


def _warn_create_only_keys(reader: _Reader) -> None:
    for name in _CREATE_ONLY:
        if _json(reader, name) not in (None, [], ""):
            reader.warn(name, "ignored: hp:clusterName selects an existing cluster")


def _kubernetes_version(reader: _Reader) -> str:
    version = reader.string("kubernetesVersion")
    if version not in SUPPORTED_KUBERNETES_VERSIONS:
        reader.fail(
            "kubernetesVersion",
            f"HyperPod supports Kubernetes "
            f"{', '.join(SUPPORTED_KUBERNETES_VERSIONS)}; got {version!r}",
        )
    return version


def _system_node_type(reader: _Reader) -> str:
    value = reader.string("systemNodeInstanceType")
    if not _EC2_INSTANCE_TYPE.match(value) or value.startswith("ml."):
        reader.fail(
            "systemNodeInstanceType",
            f"must be an EC2 instance type such as m5.xlarge (not ml.*), got {value!r}",
        )
    elif re.match(r"^[a-z]+\d+g", value):
        # The operator images are amd64-only (hyperpod.md pain point 3).
        reader.fail(
            "systemNodeInstanceType",
            f"{value} is a Graviton (arm64) type; the "
            "inference operator runs on x86_64 only, use e.g. m5.xlarge",
        )
    return value


def _system_node_count(reader: _Reader) -> int:
    count = reader.integer("systemNodeCount")
    if count is not None and not 1 <= count <= 10:
        reader.fail("systemNodeCount", f"must be between 1 and 10, got {count}")
    return count or 1


def _network(reader: _Reader) -> NewNetwork | ExistingNetwork:
    vpc_id = reader.string("vpcId")
    private = _id_list(reader, "privateSubnetIds", _SUBNET_ID)
    public = _id_list(reader, "publicSubnetIds", _SUBNET_ID)
    if vpc_id or private or public:
        return _existing_network(reader, vpc_id, private, public)
    return _new_network(reader)


def _existing_network(
    reader: _Reader, vpc_id: str, private: tuple[str, ...], public: tuple[str, ...]
) -> ExistingNetwork:
    if not _VPC_ID.match(vpc_id):
        reader.fail(
            "vpcId", f"must be a VPC id (vpc-...) when subnet ids are given, got {vpc_id!r}"
        )
    if len(set(private)) < AVAILABILITY_ZONES:
        reader.fail(
            "privateSubnetIds",
            "needs at least two private subnets in different "
            "availability zones (HyperPod nodes and EKS need them)",
        )
    return ExistingNetwork(vpc_id, private, public)


def _id_list(reader: _Reader, name: str, pattern: re.Pattern[str]) -> tuple[str, ...]:
    raw = _json(reader, name)
    if raw is None:
        return ()
    if not isinstance(raw, list):
        reader.fail(name, "must be a list of ids")
        return ()
    bad = [item for item in raw if not isinstance(item, str) or not pattern.match(item)]
    if bad:
        reader.fail(name, f"contains values that are not ids of the right kind: {bad}")
    return tuple(str(item) for item in raw)


def _new_network(reader: _Reader) -> NewNetwork:
    cidr = reader.string("vpcCidr")
    nat_per_az = reader.string("natGatewayPerAz").lower()
    if nat_per_az not in {"true", "false"}:
        reader.fail("natGatewayPerAz", f"must be true or false, got {nat_per_az!r}")
    try:
        private, public = subnet_plan(cidr)
    except ValueError as error:
        reader.fail("vpcCidr", str(error))
        private, public = (), ()
    return NewNetwork(cidr, private, public, nat_per_az == "true")


def subnet_plan(cidr: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Private subnets (a quarter of the VPC each) and /24 public subnets, one per AZ."""
    try:
        network = ipaddress.IPv4Network(cidr)
    except ValueError:
        raise ValueError(f"must be an IPv4 CIDR block such as 10.0.0.0/16, got {cidr!r}") from None
    if not 16 <= network.prefixlen <= 18:
        raise ValueError(
            f"must be a /16 to /18 block so that each private subnet has room for "
            f"many pod IPs, got /{network.prefixlen}"
        )
    if not network.is_private:
        raise ValueError(f"must be a private (RFC 1918) range, got {cidr}")
    quarters = list(network.subnets(prefixlen_diff=PRIVATE_SUBNET_EXTRA_BITS))
    private = tuple(str(q) for q in quarters[:AVAILABILITY_ZONES])
    public_pool = quarters[AVAILABILITY_ZONES]
    public = tuple(
        str(s)
        for s in list(public_pool.subnets(new_prefix=PUBLIC_SUBNET_PREFIX))[:AVAILABILITY_ZONES]
    )
    return private, public


def _instance_groups(
    reader: _Reader, instance_type: str, replicas: int
) -> tuple[InstanceGroup, ...]:
    raw = _json(reader, "instanceGroups")
    if raw in (None, []):
        # Default: one group of the endpoint's instance type, one node per replica.
        return (InstanceGroup(DEFAULT_GROUP_NAME, instance_type, max(replicas, 1)),)
    if not isinstance(raw, list) or not all(isinstance(g, dict) for g in raw):
        reader.fail(
            "instanceGroups",
            "must be a list of maps with name, instanceType, "
            "instanceCount (and optionally ebsVolumeSizeGb, threadsPerCore, "
            "deepHealthChecks)",
        )
        return ()
    groups = tuple(_instance_group(reader, f"instanceGroups[{i}]", g) for i, g in enumerate(raw))
    names = [g.name for g in groups]
    for duplicate in sorted({n for n in names if names.count(n) > 1}):
        reader.fail("instanceGroups", f"group name {duplicate!r} is used more than once")
    return groups


def _instance_group(reader: _Reader, key: str, raw: dict[str, object]) -> InstanceGroup:
    for unknown in sorted(set(raw) - _GROUP_FIELDS):
        reader.fail(
            f"{key}.{unknown}", f"is not a group field; fields: {', '.join(sorted(_GROUP_FIELDS))}"
        )
    name = str(raw.get("name", ""))
    if not _GROUP_NAME.match(name):
        reader.fail(f"{key}.name", f"must be 1-63 letters, digits or '-', got {name!r}")
    instance_type = str(raw.get("instanceType", ""))
    if not instances.INSTANCE_TYPE_PATTERN.match(instance_type):
        reader.fail(
            f"{key}.instanceType",
            f"must be a SageMaker type such as ml.g5.12xlarge, got {instance_type!r}",
        )
    checks = raw.get("deepHealthChecks", list(DEEP_HEALTH_CHECKS))
    if not isinstance(checks, list) or not set(map(str, checks)) <= set(DEEP_HEALTH_CHECKS):
        reader.fail(f"{key}.deepHealthChecks", f"must be a list of {', '.join(DEEP_HEALTH_CHECKS)}")
        checks = []
    return InstanceGroup(
        name=name,
        instance_type=instance_type,
        instance_count=_bounded(reader, f"{key}.instanceCount", raw.get("instanceCount"), 0, 100),
        ebs_volume_size_gb=_bounded(
            reader, f"{key}.ebsVolumeSizeGb", raw.get("ebsVolumeSizeGb", DEFAULT_EBS_GB), 1, 16384
        ),
        threads_per_core=_bounded(
            reader, f"{key}.threadsPerCore", raw.get("threadsPerCore", 1), 1, 2
        ),
        deep_health_checks=tuple(str(c) for c in checks),
    )


def _bounded(reader: _Reader, key: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        reader.fail(key, f"must be a whole number from {low} to {high}, got {value!r}")
        return low
    return value


def _check_endpoint_fits(
    reader: _Reader, groups: tuple[InstanceGroup, ...], instance_type: str
) -> None:
    types = sorted({g.instance_type for g in groups})
    if instance_type not in types:
        reader.fail(
            "instanceType",
            f"{instance_type} is not the type of any instance group in "
            f"hp:instanceGroups ({', '.join(types)}); the endpoint's pods could never "
            "be scheduled",
        )


def _warn_if_replicas_do_not_fit(
    reader: _Reader,
    groups: tuple[InstanceGroup, ...],
    instance_type: str,
    replicas: int,
    gpu_count: int,
) -> None:
    per_node = (instances.gpu_count(instance_type) or gpu_count) // max(gpu_count, 1)
    nodes = sum(g.instance_count for g in groups if g.instance_type == instance_type)
    if replicas > nodes * per_node:
        reader.warn(
            "replicas",
            f"{replicas} replica(s) of {gpu_count} GPU(s) need more "
            f"{instance_type} capacity than hp:instanceGroups has ({nodes} node(s)); "
            "the extra pods stay Pending",
        )
