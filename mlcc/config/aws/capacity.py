"""Where the endpoints' pods go: nodes per instance type, and whether the groups hold them.

Pure. The default instance groups are sized by `node_demand`; `mlcc.config.stack` checks each
endpoint against the groups (an instance type no group has is an error), bounds autoscaling by
`pods_that_fit`, and calls `check_shared_nodes` once every endpoint's autoscaling is known.

Every pod is counted once: each endpoint's and each baseline twin's, with the GPUs it takes
(`hp:gpuCount`, by default all of the node's). A pod takes whole GPUs of one node, so pods of 3
GPUs on 4-GPU nodes take a node each. `nodes_needed` is a lower bound of the nodes a set of pods
needs (exact when the pods of a type take the same GPUs), so a refusal or a warning built on it
is always true: the pods the endpoints start with not fitting is an error (they would stay
Pending at deploy, and `pulumi up` fail), those of their autoscaling ceilings a warning.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from mlcc.config.aws import instances
from mlcc.config.endpoints import EndpointConfig
from mlcc.config.infrastructure import InfrastructureConfig, NewCluster
from mlcc.config.reader import Reader

NAMES_SHOWN = 6  # endpoints a capacity line names before "and N more endpoints"
Pods = Mapping[int, int]  # GPUs per pod -> pods
Count = Callable[[EndpointConfig], int]  # the pods one endpoint runs (start_pods, peak_pods)


def node_demand(endpoints: Sequence[tuple[str, int]]) -> list[tuple[str, int]]:
    """Nodes per instance type for (instance type, replicas) pairs: one node per replica."""
    nodes: dict[str, int] = {}
    for instance_type, replicas in endpoints:
        nodes[instance_type] = nodes.get(instance_type, 0) + max(replicas, 1)
    return list(nodes.items())


def nodes_needed(pods: Pods, gpus_per_node: int) -> int:
    """At least this many nodes of `gpus_per_node` GPUs hold `pods`; exact when every pod takes
    the same GPUs. The largest of: all GPUs over a node's; each size alone (a node holds
    gpus_per_node // size of them); pods over half a node (no two share one)."""
    per_node = max(gpus_per_node, 1)
    sizes = {min(max(size, 1), per_node): 0 for size in pods}
    for size, count in pods.items():
        sizes[min(max(size, 1), per_node)] += max(count, 0)
    total = sum(size * count for size, count in sizes.items())
    bound = -(-total // per_node)
    for size, count in sizes.items():
        bound = max(bound, -(-count // (per_node // size)))
    return max(bound, sum(count for size, count in sizes.items() if 2 * size > per_node))


def start_pods(endpoint: EndpointConfig) -> int:
    """The pods the endpoint starts with, the CR's replicas (mlcc/manifest/workload.py, a test
    keeps the two equal): hp:replicas, or autoscaling's minimum (at least one) when hp:replicas
    is outside autoscaling's range."""
    settings = endpoint.autoscaling
    if settings is None or settings.min_replicas <= endpoint.replicas <= settings.max_replicas:
        return endpoint.replicas
    return max(settings.min_replicas, 1)


def peak_pods(endpoint: EndpointConfig) -> int:
    """The pods the endpoint can run: autoscaling's ceiling, else hp:replicas."""
    return endpoint.autoscaling.max_replicas if endpoint.autoscaling else endpoint.replicas


def _group_nodes(
    cluster: NewCluster, instance_type: str, fallback_per_node: int
) -> tuple[int, int]:
    """(nodes, GPUs per node) the instance groups have of `instance_type`."""
    nodes = sum(
        g.instance_count for g in cluster.instance_groups if g.instance_type == instance_type
    )
    return nodes, instances.gpu_count(instance_type) or fallback_per_node


def _pods(endpoints: Sequence[EndpointConfig], count: Count) -> Counter[int]:
    pods: Counter[int] = Counter()
    for endpoint in endpoints:
        pods[endpoint.gpu_count] += count(endpoint)
    return pods


def pods_that_fit(
    infra: InfrastructureConfig, endpoint: EndpointConfig, others: Sequence[EndpointConfig]
) -> int | None:
    """Pods of `endpoint` the groups of its type hold beside the `others` on them at their
    replicas; None when the groups are not this stack's (an existing cluster)."""
    if not isinstance(infra.cluster, NewCluster):
        return None
    gpus = max(endpoint.gpu_count, 1)
    nodes, per_node = _group_nodes(infra.cluster, endpoint.instance_type, gpus)
    pods: Counter[int] = Counter()
    for other in others:  # a plain loop: with 1000 endpoints this runs a million times
        if other.instance_type == endpoint.instance_type:
            pods[other.gpu_count] += other.replicas
    if nodes_needed(pods, per_node) > nodes:
        return 0
    low, high = 0, nodes * max(per_node // min(gpus, max(per_node, 1)), 1)
    while low < high:  # the most pods of this endpoint that still fit
        middle = (low + high + 1) // 2
        pods_with = pods + Counter({gpus: middle})
        low, high = (
            (middle, high) if nodes_needed(pods_with, per_node) <= nodes else (low, middle - 1)
        )
    return low


def check_endpoint_fits(
    reader: Reader, infra: InfrastructureConfig, endpoint: EndpointConfig
) -> None:
    if not isinstance(infra.cluster, NewCluster) or not infra.cluster.instance_groups:
        return
    types = sorted({g.instance_type for g in infra.cluster.instance_groups})
    fallbacks = endpoint.operator.instance_types
    if not set(fallbacks or [endpoint.instance_type]) & set(types):
        reader.fail(
            "instanceTypes" if fallbacks else "instanceType",
            f"{' nor '.join(fallbacks) or endpoint.instance_type} is not the type of any "
            "instance group in "
            f"hp:instanceGroups ({', '.join(types)}); the endpoint's pods could never "
            "be scheduled",
        )


def check_shared_nodes(
    reader: Reader, infra: InfrastructureConfig, endpoints: Sequence[EndpointConfig]
) -> None:
    """Per instance type, every endpoint's and twin's pods together: an error when the pods they
    start with need more nodes than the groups have, a warning when their ceilings do."""
    if not isinstance(infra.cluster, NewCluster):
        return
    for instance_type in sorted({e.instance_type for e in endpoints}):
        sharing = [e for e in endpoints if e.instance_type == instance_type]
        fallback = max(e.gpu_count for e in sharing)
        nodes, per_node = _group_nodes(infra.cluster, instance_type, fallback)
        usage = _Usage(instance_type, nodes, per_node, sharing)
        if not nodes:
            if any(g.instance_type == instance_type for g in infra.cluster.instance_groups):
                reader.warn("instanceGroups", usage.paused_message())
            continue  # else no group of the type: check_endpoint_fits names it
        if usage.needed(start_pods) > nodes:
            reader.fail("instanceGroups", usage.floor_message())
        elif usage.needed(peak_pods) > nodes:
            reader.warn("instanceGroups", usage.peak_message())


class _Usage:
    """The pods of the endpoints that share one instance type, and what to say about them."""

    def __init__(
        self, instance_type: str, nodes: int, per_node: int, sharing: Sequence[EndpointConfig]
    ) -> None:
        self.instance_type, self.nodes, self.per_node = instance_type, nodes, per_node
        self.sharing = sharing

    def needed(self, count: Count) -> int:
        return nodes_needed(_pods(self.sharing, count), self.per_node)

    def _figures(self, count: Count) -> str:
        pods = sum(count(e) for e in self.sharing)
        sizes = sorted({min(e.gpu_count, self.per_node) for e in self.sharing})
        each = " or ".join(map(str, sizes))
        return (
            f"{pods} pods {{when}} on {self.nodes} {self.instance_type} nodes: they need at "
            f"least {self.needed(count)} (a pod takes {each} of a node's {self.per_node} GPUs)"
        )

    def _names(self, count: Count | None) -> str:
        """The endpoints (with their pods), the first few when there are many: one line."""
        names = [f"{e.name}{self._pods_of(e, count)}" for e in self.sharing[:NAMES_SHOWN]]
        if len(self.sharing) > NAMES_SHOWN:
            names.append(f"and {len(self.sharing) - NAMES_SHOWN} more endpoints")
        return ", ".join(names)

    @staticmethod
    def _pods_of(endpoint: EndpointConfig, count: Count | None) -> str:
        if count is None:
            return ""
        up_to = "up to " if count is peak_pods and endpoint.autoscaling else ""
        return f" ({up_to}{count(endpoint)})"

    def floor_message(self) -> str:
        figures = self._figures(start_pods).format(when="at deploy")
        return (
            f"{self._names(start_pods)} start {figures}; the pods past that would stay "
            f"Pending: raise the instanceCount of the {self.instance_type} groups, or lower "
            "hp:replicas (or autoscaling minReplicas)"
        )

    def paused_message(self) -> str:
        """instanceCount 0 keeps the cluster without paying for GPUs (docs/infrastructure.md)."""
        return (
            f"the {self.instance_type} groups have no node (instanceCount 0), so the pods of "
            f"{self._names(None)} stay Pending until they have; with "
            "hp:waitForEndpoints, pulumi up fails on them"
        )

    def peak_message(self) -> str:
        figures = self._figures(peak_pods).format(when="at peak")
        has_twin = any(e.baseline_of for e in self.sharing)
        twins = " (a baseline twin has its endpoint's)" if has_twin else ""
        return (
            f"{self._names(peak_pods)} can run {figures}; at peak the pods past that stay "
            f"Pending: lower autoscaling maxReplicas{twins}, or "
            f"raise the instanceCount of the {self.instance_type} groups to "
            f"{self.needed(peak_pods)}"
        )
