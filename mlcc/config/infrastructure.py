"""Infrastructure settings (cluster, network, GPU instance groups, tags) as frozen dataclasses.

Pure: `parse` reads the raw `hp:*` values through a config reader, records every problem with
its key, and returns an `InfrastructureConfig`. `mlcc.config.stack.parse` calls it; nothing here
imports Pulumi. AWS's own limits (names, tags, regions) come from `mlcc.config.aws.rules`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mlcc.config import kubernetes_only
from mlcc.config.aws import rules as aws_rules
from mlcc.config.aws.subnets import AVAILABILITY_ZONES, subnet_plan
from mlcc.config.kubernetes_only import KubeconfigCluster
from mlcc.config.reader import Reader
from mlcc.config.schema import CREATE_KEYS
from mlcc.facts import kubernetes_versions as k8s_versions

DEEP_HEALTH_CHECKS = ("InstanceStress", "InstanceConnectivity")
DEFAULT_GROUP_NAME = "gpu"
DEFAULT_EBS_GB = 500
# The inference operator add-on runs its controller, ALB controller and KEDA here.
INFERENCE_ADDON = "amazon-sagemaker-hyperpod-inference"  # the operator's EKS add-on

_GROUP_NAME = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$")
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


Cluster = NewCluster | ExistingCluster | KubeconfigCluster


@dataclass(frozen=True)
class InfrastructureConfig:
    cluster: Cluster
    tags: tuple[tuple[str, str], ...]

    @property
    def tag_map(self) -> dict[str, str]:
        return dict(self.tags)

    @property
    def calls_no_aws(self) -> bool:
        """Kubernetes-only mode: nothing is created in AWS, and no AWS API is called."""
        return isinstance(self.cluster, KubeconfigCluster)


def parse(
    reader: Reader, *, stack: str, region: str, demand: Sequence[tuple[str, int]]
) -> InfrastructureConfig:
    """`demand`: (instance type, nodes) the endpoints need; it sizes the default groups."""
    tags = _tags(reader, stack)
    existing = reader.string("clusterName")
    if reader.string("kubeconfig"):
        kube = kubernetes_only.parse_cluster(reader, existing)
        _warn_create_only_keys(reader, kubernetes_only.WHY_IGNORED)
        return InfrastructureConfig(kube, tags)
    if reader.string("kubeContext"):
        reader.fail("kubeContext", "names a context of hp:kubeconfig, which is not set")
    if existing:
        _check_existing_name(reader, existing, region)
        _warn_create_only_keys(reader)
        return InfrastructureConfig(ExistingCluster(existing), tags)
    base = resource_base_name(stack)
    cluster = NewCluster(
        eks_cluster_name=base,
        hyperpod_cluster_name=base,
        kubernetes_version=_kubernetes_version(reader),
        network=_network(reader),
        instance_groups=_instance_groups(reader, demand),
        system_node_instance_type=_system_node_type(reader),
        system_node_count=_system_node_count(reader),
        dependencies_chart=_dependencies_chart(reader),
    )
    return InfrastructureConfig(cluster, tags)


def resource_base_name(stack: str) -> str:
    """`hp-<stack>`, usable as an EKS and a HyperPod cluster name (<= 63, alnum and '-')."""
    name = re.sub(r"[^a-zA-Z0-9]+", "-", f"hp-{stack}").strip("-")
    return name[:40].rstrip("-")


def _tags(reader: Reader, stack: str) -> tuple[tuple[str, str], ...]:
    tags = {"project": "hp", "stack": stack, "managed-by": "pulumi"}
    raw = reader.mapping("tags", "tag names to string values")
    for key, problem in aws_rules.tag_problems(raw):
        reader.fail("tags" if key is None else f"tags.{key}", problem)
    for key, value in raw.items():
        if isinstance(value, str | int | float):
            tags[str(key)] = "true" if value is True else "false" if value is False else str(value)
    return tuple(sorted(tags.items()))


def _check_existing_name(reader: Reader, name: str, region: str) -> None:
    problem = aws_rules.cluster_reference_problem(name)
    if problem:
        reader.fail("clusterName", f"must be a HyperPod cluster name or ARN: {problem}")
    elif name.startswith("arn:") and region and aws_rules.arn_region(name) != region:
        reader.fail(
            "clusterName",
            f"is a cluster in {aws_rules.arn_region(name)}, but aws:region is {region}; "
            "use a cluster of the stack's region or change aws:region",
        )


EXISTING_CLUSTER = "hp:clusterName selects an existing cluster"


def _warn_create_only_keys(reader: Reader, why: str = EXISTING_CLUSTER) -> None:
    for name in CREATE_KEYS:
        if reader.is_set(name):
            reader.warn(name, f"ignored: {why}")


def _kubernetes_version(reader: Reader) -> str:
    """One HyperPod supports and EKS creates on the plan's date (docs/kubernetes-facts.md)."""
    version = reader.string("kubernetesVersion")
    problem = k8s_versions.refusal(version, k8s_versions.today())
    if problem:
        reader.fail("kubernetesVersion", problem)
    return version


def _system_node_type(reader: Reader) -> str:
    value = reader.string("systemNodeInstanceType")
    if not _EC2_INSTANCE_TYPE.match(value) or value.startswith("ml."):
        reader.fail(
            "systemNodeInstanceType",
            f"must be an EC2 instance type such as m5.xlarge (not ml.*), got {value!r}",
        )
    elif re.match(r"^[a-z]+\d+g", value):
        # The operator images are amd64-only.
        reader.fail(
            "systemNodeInstanceType",
            f"{value} is a Graviton (arm64) type; the "
            "inference operator runs on x86_64 only, use e.g. m5.xlarge",
        )
    return value


def _system_node_count(reader: Reader) -> int:
    count = reader.integer("systemNodeCount")
    if count is not None and not 1 <= count <= 10:
        reader.fail("systemNodeCount", f"must be between 1 and 10, got {count}")
    return count or 1


def _dependencies_chart(reader: Reader) -> str | None:
    path = reader.string("hyperpodDependenciesChart")
    if not path:
        return None
    try:
        chart = Path(path).expanduser()
        is_folder, has_chart = chart.is_dir(), (chart / "Chart.yaml").is_file()
    except (OSError, ValueError, RuntimeError) as error:  # too long, NUL bytes, no home
        reader.fail("hyperpodDependenciesChart", f"{path[:60]!r} is not a usable path ({error})")
        return path
    if not is_folder:
        reader.fail("hyperpodDependenciesChart", f"{path!r} is not a folder")
    elif not has_chart:
        reader.fail(
            "hyperpodDependenciesChart",
            f"{path!r} has no Chart.yaml; point it at "
            "sagemaker-hyperpod-cli/helm_chart/HyperPodHelmChart",
        )
    return path


def _network(reader: Reader) -> NewNetwork | ExistingNetwork:
    vpc_id = reader.string("vpcId")
    private = _id_list(reader, "privateSubnetIds", _SUBNET_ID)
    public = _id_list(reader, "publicSubnetIds", _SUBNET_ID)
    if vpc_id or private or public:
        return _existing_network(reader, vpc_id, private, public)
    return _new_network(reader)


def _existing_network(
    reader: Reader, vpc_id: str, private: tuple[str, ...], public: tuple[str, ...]
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


def _id_list(reader: Reader, name: str, pattern: re.Pattern[str]) -> tuple[str, ...]:
    raw = reader.structured(name)
    if raw is None:
        return ()
    if not isinstance(raw, list):
        reader.fail(name, "must be a list of ids")
        return ()
    bad = [item for item in raw if not isinstance(item, str) or not pattern.match(item)]
    if bad:
        reader.fail(name, f"contains values that are not ids of the right kind: {bad[:3]}")
    return tuple(str(item) for item in raw)


def _new_network(reader: Reader) -> NewNetwork:
    cidr = reader.string("vpcCidr")
    nat_per_az = reader.boolean("natGatewayPerAz")
    try:
        private, public = subnet_plan(cidr)
    except ValueError as error:
        reader.fail("vpcCidr", str(error))
        private, public = (), ()
    return NewNetwork(cidr, private, public, nat_per_az)


def default_group_name(index: int, instance_type: str) -> str:
    """`gpu` for the first type (the name single-endpoint stacks have always had)."""
    if index == 0:
        return DEFAULT_GROUP_NAME
    return f"{DEFAULT_GROUP_NAME}-{instance_type.removeprefix('ml.').replace('.', '-')}"


def _instance_groups(
    reader: Reader, demand: Sequence[tuple[str, int]]
) -> tuple[InstanceGroup, ...]:
    raw = reader.structured("instanceGroups")
    if raw in (None, []):
        return _default_groups(reader, demand)
    if not isinstance(raw, list) or not all(isinstance(g, dict) for g in raw):
        reader.fail(
            "instanceGroups",
            "must be a list of maps with name, instanceType, "
            "instanceCount (and optionally ebsVolumeSizeGb, threadsPerCore, "
            "deepHealthChecks)",
        )
        return ()
    _, most_groups = aws_rules.integer_bounds("ClusterInstanceGroupSpecifications")
    if len(raw) > most_groups:
        reader.fail(
            "instanceGroups",
            f"has {len(raw)} groups; a HyperPod cluster takes at most {most_groups}",
        )
    groups = tuple(_instance_group(reader, f"instanceGroups[{i}]", g) for i, g in enumerate(raw))
    names = [g.name for g in groups]
    for duplicate in sorted({n for n in names if names.count(n) > 1}):
        reader.fail("instanceGroups", f"group name {duplicate!r} is used more than once")
    return groups


def _default_groups(reader: Reader, demand: Sequence[tuple[str, int]]) -> tuple[InstanceGroup, ...]:
    """One group per instance type the endpoints use, a node per replica (at their ceiling);
    types HyperPod does not offer are refused with the endpoint's key."""
    _, most_nodes = aws_rules.integer_bounds("ClusterInstanceCount")
    groups = []
    for index, (instance_type, nodes) in enumerate(demand):
        if instance_type not in aws_rules.hyperpod_instance_types():
            continue
        name = default_group_name(index, instance_type)
        if nodes > most_nodes:
            reader.fail(
                "instanceGroups",
                f"the default group {name} would need {nodes} {instance_type} nodes (a node per "
                f"replica at the endpoints' hp:replicas or autoscaling maxReplicas); a HyperPod "
                f"group has at most {most_nodes} (SageMaker's ClusterInstanceCount): lower "
                "them, or list the groups in hp:instanceGroups",
            )
            nodes = most_nodes
        groups.append(InstanceGroup(name, instance_type, nodes))
    return tuple(groups)


def _instance_group(reader: Reader, key: str, raw: dict[str, object]) -> InstanceGroup:
    for unknown in sorted(set(raw) - _GROUP_FIELDS):
        reader.fail(
            f"{key}.{unknown}", f"is not a group field; fields: {', '.join(sorted(_GROUP_FIELDS))}"
        )
    name = str(raw.get("name", ""))
    if not _GROUP_NAME.match(name):
        reader.fail(f"{key}.name", f"must be 1-63 letters, digits or '-', got {name!r}")
    instance_type = str(raw.get("instanceType", ""))
    if problem := aws_rules.hyperpod_type_problem(instance_type):
        reader.fail(f"{key}.instanceType", problem)
    checks = raw.get("deepHealthChecks", list(DEEP_HEALTH_CHECKS))
    if not isinstance(checks, list) or not set(map(str, checks)) <= set(DEEP_HEALTH_CHECKS):
        reader.fail(
            f"{key}.deepHealthChecks",
            f"must be a list of {', '.join(DEEP_HEALTH_CHECKS)} (or [] for none)",
        )
        checks = []
    return InstanceGroup(
        name=name,
        instance_type=instance_type,
        instance_count=_bounded(
            reader, f"{key}.instanceCount", raw.get("instanceCount"), "ClusterInstanceCount"
        ),
        ebs_volume_size_gb=_bounded(
            reader,
            f"{key}.ebsVolumeSizeGb",
            raw.get("ebsVolumeSizeGb", DEFAULT_EBS_GB),
            "ClusterEbsVolumeSizeInGB",
        ),
        threads_per_core=_bounded(
            reader, f"{key}.threadsPerCore", raw.get("threadsPerCore", 1), "ClusterThreadsPerCore"
        ),
        deep_health_checks=tuple(dict.fromkeys(str(c) for c in checks)),
    )


def _bounded(reader: Reader, key: str, value: object, shape: str) -> int:
    """A whole number within the bounds of the SageMaker model's integer `shape`."""
    low, high = aws_rules.integer_bounds(shape)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        shown = value if not isinstance(value, str) or len(value) < 40 else f"{value[:40]}..."
        reader.fail(key, f"must be a whole number from {low} to {high}, got {shown!r}")
        return low
    return value
