"""The account part of preflight: gather the facts the stack needs, in parallel, then check them.

`check_account(config, deadline_seconds)` is one preflight part: the runner calls it beside the
models part. Two rounds of calls at most: everything that needs only the stack, then (existing
cluster) what needs the HyperPod cluster's answer, its EKS cluster. Every call is read-only;
docs/preflight.md lists the IAM actions.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any

from mlcc.config.infrastructure import INFERENCE_ADDON, ExistingCluster, NewCluster
from mlcc.config.stack import StackConfig
from mlcc.preflight import s3_head
from mlcc.preflight.account import checks as account_checks
from mlcc.preflight.account import fetch as account_fetch
from mlcc.preflight.account import network as account_network
from mlcc.preflight.account.facts import (
    AccountFacts,
    ExistingClusterFacts,
    GpuMemory,
    HyperPodFacts,
    Unreached,
    pick_quota,
)
from mlcc.preflight.account.fetch import Clients, guarded
from mlcc.preflight.bounded.parallel import Deadline, run_parallel
from mlcc.preflight.image import registry as image_registry
from mlcc.preflight.outcome import Outcome

# The read-only IAM actions preflight calls (docs/preflight.md lists them for the deploying role).
IAM_ACTIONS = (
    "servicequotas:ListServiceQuotas",
    "servicequotas:ListAWSDefaultServiceQuotas",
    "eks:DescribeAddonVersions",
    "eks:DescribeCluster",
    "eks:ListAddons",
    "eks:DescribeAddon",
    "sagemaker:DescribeCluster",
    "sagemaker:ListClusterNodes",
    "ec2:DescribeInstanceTypes",
    "pricing:GetProducts",  # the pricing part (mlcc.preflight.cost.price_list)
    *account_network.IAM_ACTIONS,  # the network rows (mlcc.preflight.account.network)
    *image_registry.IAM_ACTIONS,  # a prebuilt ECR hp:image's config (mlcc.preflight.image)
    *s3_head.IAM_ACTIONS,  # an s3:// draft's config.json and files (mlcc.preflight.s3_head)
)


def check_account(config: StackConfig, deadline_seconds: float) -> Outcome:
    return account_checks.check(config, gather(config, deadline_seconds))


GpuFigures = dict[str, GpuMemory | Unreached | None]


class _Run:
    """What both parts of one preflight run share: one boto3 session's clients, and the EC2
    answer, computed by the first part that asks for it and awaited by the other."""

    def __init__(self, config: StackConfig, deadline_seconds: float) -> None:
        self.clients = account_fetch.clients(config.region, config.aws_profile, deadline_seconds)
        self.gpus_started = False
        self.gpus_done = threading.Event()
        self.gpus: GpuFigures = {}


_RUNS: dict[int, _Run] = {}
_RUNS_LOCK = threading.Lock()


def _run(config: StackConfig, deadline_seconds: float) -> _Run:
    """The run of `config`: both parts get the same StackConfig object in one preflight run."""
    with _RUNS_LOCK:
        run = _RUNS.get(id(config))
        if run is None:
            run = _RUNS[id(config)] = _Run(config, deadline_seconds)
            weakref.finalize(config, _RUNS.pop, id(config), None)
        return run


def gpu_memory(config: StackConfig, deadline_seconds: float) -> GpuFigures:
    """EC2's GPU figures for the stack's instance types (DescribeInstanceTypes of each EC2
    twin), fetched once per run: both parts share the answer."""
    types = gpu_instance_types(config)
    run = _run(config, deadline_seconds)
    with _RUNS_LOCK:
        first, run.gpus_started = not run.gpus_started, True
    if first:
        try:
            run.gpus = _fetch_gpu_memory(run.clients, types, deadline_seconds)
        finally:
            run.gpus_done.set()
    elif not run.gpus_done.wait(deadline_seconds):
        why = f"no answer within {deadline_seconds:.0f} s"
        return dict.fromkeys(types, Unreached("EC2 DescribeInstanceTypes", why))
    return run.gpus


def _fetch_gpu_memory(
    made: Clients | Unreached, types: list[str], deadline_seconds: float
) -> GpuFigures:
    if isinstance(made, Unreached):
        return dict.fromkeys(types, made)
    jobs = {
        t: guarded(f"EC2 DescribeInstanceTypes {t}", _bind(account_fetch.gpu_memory, made, t))
        for t in types
    }
    return run_parallel(jobs, deadline_seconds)


def gpu_instance_types(config: StackConfig) -> list[str]:
    """The instance types the stack runs GPUs on: the endpoints' and the instance groups'."""
    types = {e.instance_type for e in config.endpoints}
    cluster = config.infrastructure.cluster
    if isinstance(cluster, NewCluster):
        types |= {g.instance_type for g in cluster.instance_groups}
    return sorted(types)


def gather(config: StackConfig, deadline_seconds: float) -> AccountFacts:
    deadline = Deadline(deadline_seconds)
    made = _run(config, deadline_seconds).clients
    cluster = config.infrastructure.cluster
    types = gpu_instance_types(config)
    if isinstance(made, Unreached):
        unread = ExistingClusterFacts(made, made, made, made)
        return AccountFacts(
            config.region,
            made,
            made,
            unread if isinstance(cluster, ExistingCluster) else None,
            dict.fromkeys(types, made),
        )
    jobs: dict[str, Callable[[], Any]] = {
        "EKS DescribeAddonVersions": guarded(
            "EKS DescribeAddonVersions",
            lambda: account_fetch.addon_versions(made, INFERENCE_ADDON),
        ),
    }
    jobs["EC2 DescribeInstanceTypes"] = lambda: gpu_memory(config, deadline_seconds)
    if isinstance(cluster, NewCluster):
        jobs |= _quota_jobs(made)
    elif isinstance(cluster, ExistingCluster):
        jobs |= _cluster_jobs(made, cluster.name_or_arn)
    found = run_parallel(jobs, deadline.left())
    quotas: Any = {}  # an existing cluster's instances are already counted
    existing: ExistingClusterFacts | None = None
    if isinstance(cluster, NewCluster):
        applied, defaults = found["ListServiceQuotas"], found["ListAWSDefaultServiceQuotas"]
        quotas = _quotas(types, applied, defaults)
    elif isinstance(cluster, ExistingCluster):
        existing = _existing(made, found, deadline)
    return AccountFacts(
        config.region,
        quotas,
        found["EKS DescribeAddonVersions"],
        existing,
        _per_type(found["EC2 DescribeInstanceTypes"], types),
    )


def _per_type(found: Any, types: list[str]) -> GpuFigures:
    return dict.fromkeys(types, found) if isinstance(found, Unreached) else dict(found)


def _bind(function: Callable[[Clients, str], Any], made: Clients, value: str) -> Callable[[], Any]:
    return lambda: function(made, value)


def _quota_jobs(made: Clients) -> dict[str, Callable[[], Any]]:
    return {
        operation: guarded(
            f"Service Quotas {operation}",
            _bind(account_fetch.quota_list, made, method),
        )
        for operation, method in (
            ("ListServiceQuotas", "list_service_quotas"),
            ("ListAWSDefaultServiceQuotas", "list_aws_default_service_quotas"),
        )
    }


def _quotas(types: list[str], applied: Any, defaults: Any) -> Any:
    if isinstance(applied, Unreached):
        return applied
    return {t: pick_quota(t, applied, defaults) for t in types}


def _cluster_jobs(made: Clients, name_or_arn: str) -> dict[str, Callable[[], Any]]:
    return {
        "SageMaker DescribeCluster": guarded(
            "SageMaker DescribeCluster", _bind(account_fetch.hyperpod_cluster, made, name_or_arn)
        ),
        "SageMaker ListClusterNodes": guarded(
            "SageMaker ListClusterNodes", _bind(account_fetch.cluster_nodes, made, name_or_arn)
        ),
    }


def _existing(made: Clients, found: dict[str, Any], deadline: Deadline) -> ExistingClusterFacts:
    """The second round: the EKS cluster the HyperPod cluster names, and its add-on."""
    hyperpod = found["SageMaker DescribeCluster"]
    nodes = found["SageMaker ListClusterNodes"]
    if not isinstance(hyperpod, HyperPodFacts):
        return ExistingClusterFacts(hyperpod, nodes, hyperpod, hyperpod)
    if not hyperpod.eks_cluster_arn:
        return ExistingClusterFacts(hyperpod, nodes, None, None)
    eks_name = hyperpod.eks_cluster_arn.rsplit("/", 1)[
        -1
    ]  # arn:aws:eks:<region>:<account>:cluster/<name>
    second = run_parallel(
        {
            "EKS DescribeCluster": guarded(
                "EKS DescribeCluster", _bind(account_fetch.eks_cluster, made, eks_name)
            ),
            "EKS ListAddons": guarded(
                "EKS ListAddons",
                lambda: account_fetch.installed_addon(made, eks_name, INFERENCE_ADDON),
            ),
        },
        deadline.left(),
    )
    return ExistingClusterFacts(
        hyperpod, nodes, second["EKS DescribeCluster"], second["EKS ListAddons"]
    )
