"""Checks of the stack against the AWS account's facts (pure; docs/preflight.md, "The account").

Create mode: each GPU instance type's SageMaker quota "<type> for cluster usage" against the
instances the stack asks for, and an `amazon-sagemaker-hyperpod-inference` add-on version for
`hp:kubernetesVersion` in the region. Existing-cluster mode: the HyperPod cluster is InService,
has groups of the endpoints' types with enough running instances, and its EKS cluster runs the
add-on, healthy, on a Kubernetes version the add-on supports.

A fact AWS did not give becomes an `Unchecked` (hp:preflight decides: a warning or an error),
except a refused call, which is always a warning naming the IAM action to grant.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from mlcc.config.aws import capacity, instances
from mlcc.config.endpoints import EndpointConfig
from mlcc.config.infrastructure import INFERENCE_ADDON, ExistingCluster, NewCluster
from mlcc.config.stack import StackConfig
from mlcc.facts import kubernetes_versions as k8s_versions
from mlcc.preflight.account.facts import (
    AccountFacts,
    AddonVersion,
    ExistingClusterFacts,
    GpuMemory,
    HyperPodFacts,
    Quota,
    Unreached,
    addon_for,
    cluster_quota_name,
    supported_kubernetes,
)
from mlcc.preflight.outcome import Outcome, Unchecked
from mlcc.serving.speculative import Problem

GROUPS_KEY = "hp:instanceGroups"
KUBERNETES_KEY = "hp:kubernetesVersion"
CLUSTER_KEY = "hp:clusterName"
REGION_KEY = "aws:region"
FAILED_ADDON_STATES = frozenset(
    {"CREATE_FAILED", "UPDATE_FAILED", "DELETE_FAILED", "DEGRADED", "DELETING"}
)


@dataclass
class Findings:
    """What the checks found so far; `outcome()` freezes it."""

    errors: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    unchecked: list[Unchecked] = field(default_factory=list)
    line: list[str] = field(default_factory=list)

    def error(self, key: str, message: str) -> None:
        self.errors.append(Problem(key, message))

    def unreached(self, key: str, what: str, missing: Unreached) -> None:
        """A fact AWS did not give: denied is a warning with the action, else unchecked."""
        if missing.denied_action:
            self.warnings.append(
                Problem(
                    key,
                    f"not checked: {what} ({missing.source} was refused: {missing.why}); "
                    f"grant the IAM action {missing.denied_action} to the deploying role",
                )
            )
        else:
            self.unchecked.append(Unchecked(key, what, f"{missing.source}: {missing.why}"))
        self.line.append(f"{what}: not checked")

    def outcome(self) -> Outcome:
        lines: dict[str, tuple[str, ...]] = {"": ("; ".join(self.line),)} if self.line else {}
        return Outcome(tuple(self.errors), tuple(self.warnings), tuple(self.unchecked), lines)


def check(config: StackConfig, facts: AccountFacts) -> Outcome:
    found = Findings()
    cluster = config.infrastructure.cluster
    if isinstance(cluster, NewCluster):
        for instance_type in sorted({g.instance_type for g in cluster.instance_groups}):
            _check_quota(found, config, cluster, instance_type, facts)
        _check_addon_offered(found, cluster.kubernetes_version, facts)
    elif isinstance(cluster, ExistingCluster) and facts.existing is not None:
        _check_existing(found, config, cluster, facts.existing, facts)
    return found.outcome()


def gpus_per_node(instance_type: str, facts: AccountFacts, fallback: int) -> int:
    """EC2's GPU count of the type's twin when it answered, else the vendored count."""
    measured = facts.gpu_memory.get(instance_type)
    if isinstance(measured, GpuMemory):
        return measured.gpus
    return instances.gpu_count(instance_type) or fallback


def nodes_needed(
    endpoints: Sequence[EndpointConfig], instance_type: str, per_node: int, *, ceiling: bool
) -> int:
    """Instances of `instance_type` whose GPUs hold the endpoints' pods (at autoscaling's
    ceiling, or at hp:replicas), each pod on one node (mlcc.config.aws.capacity.nodes_needed)."""
    pods: Counter[int] = Counter()
    for endpoint in endpoints:
        if endpoint.instance_type == instance_type:
            pods[endpoint.gpu_count] += endpoint.most_replicas if ceiling else endpoint.replicas
    return capacity.nodes_needed(pods, per_node)


def _check_quota(
    found: Findings,
    config: StackConfig,
    cluster: NewCluster,
    instance_type: str,
    facts: AccountFacts,
) -> None:
    name = cluster_quota_name(instance_type)
    quota: Quota | Unreached | None
    quota = facts.quotas if isinstance(facts.quotas, Unreached) else facts.quotas.get(instance_type)
    if isinstance(quota, Unreached):
        found.unreached(GROUPS_KEY, f"quota {name}", quota)
        return
    if quota is None:
        found.warnings.append(
            Problem(
                GROUPS_KEY,
                f"Service Quotas lists no SageMaker quota named {name!r} in {facts.region}: "
                f"HyperPod may not offer {instance_type} there, so its quota was not checked",
            )
        )
        found.line.append(f"quota {name}: none listed")
        return
    if quota.problem:
        found.unreached(
            GROUPS_KEY,
            f"quota {name}",
            Unreached(f"Service Quotas {quota.name!r} ({quota.code})", quota.problem),
        )
        return
    # HyperPod creates the groups' instances (it adds no nodes when pods scale), so the groups
    # are what the quota must hold; the default groups are sized for autoscaling's ceiling.
    needed = sum(
        g.instance_count for g in cluster.instance_groups if g.instance_type == instance_type
    )
    per_node = gpus_per_node(instance_type, facts, 1)
    at_ceiling = nodes_needed(config.endpoints, instance_type, per_node, ceiling=True)
    value = int(quota.value)
    found.line.append(f"quota {name}: {value}, stack needs {needed}")
    if value >= needed:
        return
    source = "the applied value" if quota.applied else "the AWS default"
    found.error(
        GROUPS_KEY,
        f"SageMaker quota {quota.name!r} ({quota.code}) is {value} in {facts.region} "
        f"({source}), and the stack asks for {needed} {instance_type} in hp:instanceGroups "
        f"(its endpoints at autoscaling's ceiling fill {at_ceiling}); HyperPod would fail with "
        "ResourceLimitExceeded. Lower the instance count, or raise the quota: aws "
        "service-quotas request-service-quota-increase --service-code sagemaker --quota-code "
        f"{quota.code} --desired-value {needed} --region {facts.region}",
    )


def _check_addon_offered(found: Findings, kubernetes: str, facts: AccountFacts) -> None:
    versions = facts.addon_versions
    what = f"the {INFERENCE_ADDON} add-on"
    if isinstance(versions, Unreached):
        found.unreached(KUBERNETES_KEY, what, versions)
        return
    if not versions:
        found.error(
            REGION_KEY,
            f"EKS offers no version of the add-on {INFERENCE_ADDON} in {facts.region} "
            "(DescribeAddonVersions lists none), so the inference operator cannot be installed "
            "there; choose a region where HyperPod inference is available",
        )
        found.line.append(f"add-on: none in {facts.region}")
        return
    chosen = addon_for(kubernetes, versions)
    if chosen is None:
        found.error(
            KUBERNETES_KEY,
            f"{kubernetes}: no version of the EKS add-on {INFERENCE_ADDON} in {facts.region} "
            f"supports Kubernetes {kubernetes} (its versions support "
            f"{', '.join(supported_kubernetes(versions))}); {_recommendation(versions)}",
        )
        found.line.append(f"add-on: none for Kubernetes {kubernetes}")
        return
    found.line.append(f"add-on {chosen.version} for Kubernetes {kubernetes}")


def _recommendation(versions: tuple[AddonVersion, ...]) -> str:
    """The add-on's versions the config also accepts on the plan's date (never one it refuses:
    docs/kubernetes-facts.md), or why there is none to name."""
    on = k8s_versions.today()
    accepted = k8s_versions.accepted(on)
    fitting = [v for v in supported_kubernetes(versions) if v in accepted]
    if fitting:
        return f"set hp:kubernetesVersion to one of {', '.join(fitting)}"
    return (
        f"none of them is one HyperPod supports and EKS creates on {on} "
        f"({', '.join(accepted) or 'none'}, {k8s_versions.PAGE}): choose another region"
    )


def _check_existing(
    found: Findings,
    config: StackConfig,
    cluster: ExistingCluster,
    existing: ExistingClusterFacts,
    facts: AccountFacts,
) -> None:
    hyperpod = existing.hyperpod
    what = f"HyperPod cluster {cluster.name_or_arn}"
    if isinstance(hyperpod, Unreached):
        found.unreached(CLUSTER_KEY, what, hyperpod)
        return
    if hyperpod is None:
        found.error(
            CLUSTER_KEY,
            f"no HyperPod cluster {cluster.name_or_arn!r} in {facts.region} (SageMaker "
            "DescribeCluster: not found); check the name or ARN and aws:region",
        )
        return
    if hyperpod.status != "InService":
        reason = f": {hyperpod.failure_message}" if hyperpod.failure_message else ""
        found.error(
            CLUSTER_KEY,
            f"HyperPod cluster {hyperpod.name} is {hyperpod.status}, not InService{reason}; "
            "endpoints can be deployed on it once it is InService",
        )
    found.line.append(f"cluster {hyperpod.name} {hyperpod.status}")
    for instance_type in sorted({e.instance_type for e in config.endpoints}):
        _check_group_capacity(found, config, hyperpod, existing, instance_type, facts)
    _check_installed_addon(found, hyperpod, existing, facts)


def _check_group_capacity(
    found: Findings,
    config: StackConfig,
    hyperpod: HyperPodFacts,
    existing: ExistingClusterFacts,
    instance_type: str,
    facts: AccountFacts,
) -> None:
    endpoints = [e for e in config.endpoints if e.instance_type == instance_type]
    key = endpoints[0].key("instanceType")
    groups = [g for g in hyperpod.groups if g.instance_type == instance_type]
    if not groups:
        shown = ", ".join(
            f"{g.name}: {g.instance_type} x {g.current_count}" for g in hyperpod.groups
        )
        found.error(
            key,
            f"{instance_type} is not the type of any instance group of HyperPod cluster "
            f"{hyperpod.name} ({shown or 'it has no instance groups'}); set it to one of "
            "those types, or add a group of it to the cluster",
        )
        return
    nodes = existing.nodes
    if isinstance(nodes, Unreached):
        running = sum(g.current_count for g in groups)
        counted = "in its instance groups"
    else:
        running = sum(
            1 for n in nodes if n.instance_type == instance_type and n.status == "Running"
        )
        counted = "running"
    per_node = gpus_per_node(instance_type, facts, max(e.gpu_count for e in endpoints))
    needed = nodes_needed(endpoints, instance_type, per_node, ceiling=False)
    found.line.append(f"{instance_type}: {running} {counted}, endpoints need {needed}")
    if running < needed:
        gpus = sum(e.replicas * e.gpu_count for e in endpoints)
        found.error(
            endpoints[0].key("replicas"),
            f"the endpoints on {instance_type} need {needed} instance(s) ({gpus} GPU(s), "
            f"{per_node} per instance) and HyperPod cluster {hyperpod.name} has {running} "
            f"{counted}; lower hp:replicas, or raise the count of its group(s) "
            f"{', '.join(g.name for g in groups)}",
        )


def _check_installed_addon(
    found: Findings, hyperpod: HyperPodFacts, existing: ExistingClusterFacts, facts: AccountFacts
) -> None:
    eks = existing.eks
    if isinstance(eks, Unreached):
        found.unreached(CLUSTER_KEY, "its EKS cluster and add-on", eks)
        return
    if eks is None:
        found.error(
            CLUSTER_KEY,
            f"HyperPod cluster {hyperpod.name} is not orchestrated by EKS (or its EKS cluster "
            "is gone); the inference operator runs on EKS only",
        )
        return
    _check_eks_version(found, eks.name, eks.version, facts.addon_versions)
    addon = existing.inference_addon
    if isinstance(addon, Unreached):
        found.unreached(CLUSTER_KEY, f"the {INFERENCE_ADDON} add-on on {eks.name}", addon)
        return
    if addon is None:
        found.error(
            CLUSTER_KEY,
            f"the EKS add-on {INFERENCE_ADDON} is not installed on EKS cluster {eks.name} "
            f"(the cluster behind {hyperpod.name}), so no operator would deploy the endpoint; "
            f"install it: aws eks create-addon --cluster-name {eks.name} --addon-name "
            f"{INFERENCE_ADDON} --region {facts.region} (see docs/infrastructure.md)",
        )
        return
    found.line.append(f"add-on {addon.version} {addon.status} on Kubernetes {eks.version}")
    _check_installed_version(found, eks.name, eks.version, addon.version, facts.addon_versions)
    if addon.status in FAILED_ADDON_STATES:
        issues = f": {'; '.join(addon.issues)}" if addon.issues else ""
        found.error(
            CLUSTER_KEY,
            f"the EKS add-on {INFERENCE_ADDON} {addon.version} on EKS cluster {eks.name} is "
            f"{addon.status}{issues}; repair it (aws eks describe-addon --cluster-name "
            f"{eks.name} --addon-name {INFERENCE_ADDON}) before deploying endpoints",
        )
    elif addon.status != "ACTIVE":
        found.warnings.append(
            Problem(
                CLUSTER_KEY,
                f"the EKS add-on {INFERENCE_ADDON} on {eks.name} is {addon.status}, not ACTIVE "
                "yet; the endpoint waits until it is",
            )
        )


def _check_installed_version(
    found: Findings,
    eks: str,
    kubernetes: str,
    installed: str,
    versions: tuple[AddonVersion, ...] | Unreached,
) -> None:
    """The installed add-on version is one that supports the EKS cluster's Kubernetes."""
    if isinstance(versions, Unreached):
        return
    known = {v.version: v for v in versions}
    chosen = addon_for(kubernetes, versions)
    if installed in known and kubernetes not in known[installed].kubernetes_versions and chosen:
        found.error(
            CLUSTER_KEY,
            f"the EKS add-on {INFERENCE_ADDON} {installed} on EKS cluster {eks} does not "
            f"support its Kubernetes {kubernetes} (it supports "
            f"{', '.join(known[installed].kubernetes_versions)}); update it: aws eks "
            f"update-addon --cluster-name {eks} --addon-name {INFERENCE_ADDON} "
            f"--addon-version {chosen.version}",
        )


def _check_eks_version(
    found: Findings, eks: str, version: str, versions: tuple[AddonVersion, ...] | Unreached
) -> None:
    if isinstance(versions, Unreached):
        found.unreached(CLUSTER_KEY, f"the add-on's support of {eks}'s Kubernetes", versions)
        return
    if versions and addon_for(version, versions) is None:
        found.error(
            CLUSTER_KEY,
            f"EKS cluster {eks} runs Kubernetes {version}, which no version of the add-on "
            f"{INFERENCE_ADDON} supports (they support "
            f"{', '.join(supported_kubernetes(versions))}); upgrade the EKS cluster",
        )
