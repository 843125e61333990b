"""What the AWS account says, as typed values (pure data; `account_fetch` reads them).

A fact that could not be read is an `Unreached`: the source, why, and, when AWS refused the
call, the IAM action to grant. The checks in `account_checks` take these values only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeVar

from mlcc.engine_contract import version_key

T = TypeVar("T")

QUOTA_SERVICE = "sagemaker"
# Service Quotas names the HyperPod quota of an instance type this way, e.g.
# "ml.g5.12xlarge for cluster usage" (matched against the account's real quota list).
CLUSTER_USAGE = "for cluster usage"


def cluster_quota_name(instance_type: str) -> str:
    return f"{instance_type} {CLUSTER_USAGE}"


def ec2_twin(instance_type: str) -> str:
    """The EC2 type a SageMaker type runs on: ml.g5.12xlarge -> g5.12xlarge."""
    return instance_type.removeprefix("ml.")


@dataclass(frozen=True)
class Unreached:
    """A fact AWS did not give: the call, why, and the IAM action to grant when it was denied."""

    source: str  # e.g. "Service Quotas ListServiceQuotas"
    why: str
    denied_action: str = ""  # e.g. "servicequotas:ListServiceQuotas"


@dataclass(frozen=True)
class Quota:
    name: str
    code: str
    value: float
    applied: bool  # False: the AWS default (the account has no applied value)
    problem: str = ""  # why `value` is no count of instances ("" : it is one)


@dataclass(frozen=True)
class AddonVersion:
    version: str
    kubernetes_versions: tuple[str, ...]
    default_for: tuple[str, ...] = ()  # the Kubernetes versions EKS installs this one on


@dataclass(frozen=True)
class InstanceGroupFacts:
    name: str
    instance_type: str
    current_count: int
    target_count: int
    status: str


@dataclass(frozen=True)
class HyperPodFacts:
    name: str
    status: str
    failure_message: str
    eks_cluster_arn: str  # "" when the cluster is not orchestrated by EKS
    groups: tuple[InstanceGroupFacts, ...]


@dataclass(frozen=True)
class NodeFacts:
    group: str
    instance_type: str
    status: str  # Running, Pending, Failure, ...


@dataclass(frozen=True)
class EksFacts:
    name: str
    version: str
    status: str


@dataclass(frozen=True)
class InstalledAddon:
    name: str
    version: str
    status: str  # ACTIVE, CREATE_FAILED, DEGRADED, ...
    issues: tuple[str, ...] = ()  # the add-on's health issues, "code: message"


@dataclass(frozen=True)
class GpuMemory:
    """EC2's DescribeInstanceTypes figures for an instance type's EC2 twin."""

    gpus: int
    mib_per_gpu: int


@dataclass(frozen=True)
class ExistingClusterFacts:
    """Existing-cluster mode: the HyperPod cluster (None: no such cluster) and what it runs on."""

    hyperpod: HyperPodFacts | Unreached | None
    nodes: tuple[NodeFacts, ...] | Unreached
    eks: EksFacts | Unreached | None  # None: the HyperPod cluster names no EKS cluster
    inference_addon: InstalledAddon | Unreached | None  # None: not installed


@dataclass(frozen=True)
class AccountFacts:
    region: str
    # instance type -> its "for cluster usage" quota; None: the account lists no such quota
    quotas: dict[str, Quota | None] | Unreached
    addon_versions: tuple[AddonVersion, ...] | Unreached  # () : not offered in the region
    existing: ExistingClusterFacts | None  # None in create mode
    gpu_memory: dict[str, GpuMemory | Unreached | None] = field(default_factory=dict)


def unreached(*values: object) -> list[Unreached]:
    """The `Unreached` among `values`, each once."""
    found: list[Unreached] = []
    for value in values:
        if isinstance(value, Unreached) and value not in found:
            found.append(value)
    return found


def pick_quota(
    instance_type: str,
    applied: dict[str, Quota] | Unreached,
    defaults: dict[str, Quota] | Unreached,
) -> Quota | Unreached | None:
    """The applied value of the type's cluster-usage quota, else AWS's default.

    Both lists are keyed by case-folded quota name. Service Quotas lists an applied value only
    for quotas that have one, so a name missing from it falls back to the defaults.
    """
    name = cluster_quota_name(instance_type).casefold()
    if isinstance(applied, Unreached):
        return applied
    if name in applied:
        return applied[name]
    if isinstance(defaults, Unreached):
        return defaults
    return defaults.get(name)


def newest_first(versions: tuple[AddonVersion, ...]) -> list[AddonVersion]:
    return sorted(versions, key=lambda v: version_key(v.version), reverse=True)


def addon_for(kubernetes: str, versions: tuple[AddonVersion, ...]) -> AddonVersion | None:
    """The version EKS would install on `kubernetes`: its default, else the newest that fits."""
    fitting = [v for v in newest_first(versions) if kubernetes in v.kubernetes_versions]
    defaults = [v for v in fitting if kubernetes in v.default_for]
    chosen = defaults or fitting
    return chosen[0] if chosen else None


def supported_kubernetes(versions: tuple[AddonVersion, ...]) -> list[str]:
    found = {k for v in versions for k in v.kubernetes_versions}
    return sorted(found, key=version_key)
