"""What KEDA, the HPA and AWS accept of `hp:autoscaling`'s values, each bound with its source.

Pure apart from reading botocore's SageMaker model (through `mlcc.config.aws.rules`).
`mlcc.config.scaling.autoscaling` applies them; docs/scaling.md lists them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mlcc.config.aws import rules as aws_rules

# Kubernetes refuses an HPA whose behavior.scaleDown.stabilizationWindowSeconds (what the
# operator makes of scaleDownStabilizationTime) is above 3600 (kubernetes
# pkg/apis/autoscaling/validation/validation.go, MaxStabilizationWindowSeconds).
HPA_MAX_STABILIZATION_WINDOW_SECONDS = 3600
# KEDA turns a trigger's target into a quantity with resource.NewMilliQuantity(int64(target *
# 1000)) (kedacore/keda pkg/scalers/scaler.go, GetMetricTargetMili): a target below 0.001
# becomes 0, and one above (2**63 - 1) / 1000 overflows int64 (KEDA before its overflow fix).
KEDA_SMALLEST_TARGET = 0.001
KEDA_LARGEST_TARGET = (2**63 - 1) / 1000


@dataclass(frozen=True)
class Ceiling:
    """A largest value stricter than the CRD's, and why."""

    value: Callable[[], int]
    why: str


def _most_nodes_per_group() -> int:
    """SageMaker's ClusterInstanceCount maximum: a pod needs a node, a group has at most this."""
    return aws_rules.integer_bounds("ClusterInstanceCount")[1]


REPLICAS = Ceiling(_most_nodes_per_group, "a HyperPod group's most nodes, ClusterInstanceCount")
STABILIZATION = Ceiling(
    lambda: HPA_MAX_STABILIZATION_WINDOW_SECONDS, "the HPA's longest stabilization window"
)


def keda_target_problem(value: object, unit: str) -> str | None:
    """Why KEDA cannot keep `value` as a trigger target, or None."""
    number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
    if number is not None and KEDA_SMALLEST_TARGET <= number <= KEDA_LARGEST_TARGET:
        return None
    return (
        f"must be a number from {KEDA_SMALLEST_TARGET} to {KEDA_LARGEST_TARGET:.4g} ({unit}); "
        "KEDA keeps targets in thousandths, so a smaller one becomes 0"
    )
