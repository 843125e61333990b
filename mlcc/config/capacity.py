"""Where the endpoints' pods go: nodes per instance type, and whether the groups hold them.

Pure. The default instance groups are sized by `node_demand`; `mlcc.config.stack` checks each
endpoint against the groups (an instance type no group has is an error, too few GPUs a warning) and
bounds autoscaling by `pods_that_fit`.
"""

from __future__ import annotations

from collections.abc import Sequence

from mlcc.config import instances
from mlcc.config.endpoints import EndpointConfig
from mlcc.config.infrastructure import InfrastructureConfig, NewCluster
from mlcc.config.reader import Reader


def node_demand(endpoints: Sequence[tuple[str, int]]) -> list[tuple[str, int]]:
    """Nodes per instance type for (instance type, replicas) pairs: one node per replica."""
    nodes: dict[str, int] = {}
    for instance_type, replicas in endpoints:
        nodes[instance_type] = nodes.get(instance_type, 0) + max(replicas, 1)
    return list(nodes.items())


def _group_gpus(cluster: NewCluster, instance_type: str, fallback_per_node: int) -> tuple[int, int]:
    """(nodes, GPUs per node) the instance groups have of `instance_type`."""
    nodes = sum(
        g.instance_count for g in cluster.instance_groups if g.instance_type == instance_type
    )
    return nodes, instances.gpu_count(instance_type) or fallback_per_node


def pods_that_fit(
    infra: InfrastructureConfig, endpoint: EndpointConfig, others: Sequence[EndpointConfig]
) -> int | None:
    """Pods of `endpoint` the groups of its type hold beside the `others` on them; None when
    the groups are not this stack's (an existing cluster)."""
    if not isinstance(infra.cluster, NewCluster):
        return None
    gpus = max(endpoint.gpu_count, 1)
    nodes, per_node = _group_gpus(infra.cluster, endpoint.instance_type, gpus)
    used = sum(
        o.replicas * o.gpu_count for o in others if o.instance_type == endpoint.instance_type
    )
    return max(nodes * per_node - used, 0) // gpus


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


def warn_if_gpus_short(
    reader: Reader, infra: InfrastructureConfig, endpoints: Sequence[EndpointConfig]
) -> None:
    """The endpoints of each instance type together need more GPUs than its groups have."""
    if not isinstance(infra.cluster, NewCluster):
        return
    for instance_type in sorted({e.instance_type for e in endpoints}):
        sharing = [e for e in endpoints if e.instance_type == instance_type]
        needed = sum(e.replicas * e.gpu_count for e in sharing)
        fallback = max(e.gpu_count for e in sharing)
        nodes, per_node = _group_gpus(infra.cluster, instance_type, fallback)
        if nodes and needed > nodes * per_node:
            reader.warn(
                "replicas",
                f"the endpoints on {instance_type} need {needed} GPU(s) and hp:instanceGroups "
                f"has {nodes * per_node} ({nodes} node(s)); the extra pods stay Pending",
            )
