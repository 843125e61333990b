"""The speculation alert rules and dashboard where hp:observability sends them.

`prometheus-operator`: a `PrometheusRule` custom resource and the dashboard ConfigMap (the
Kubernetes provider of the component's options); `amp`: an `aws.amp.RuleGroupNamespace` in the
given workspace. What each holds is rendered in mlcc/observability/ (docs/observability.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from mlcc.observability.delivery import Delivery


@dataclass(frozen=True)
class ObservabilityArgs:
    delivery: Delivery
    tags: Mapping[str, str] = field(default_factory=dict)
    # What the Kubernetes objects wait for (the namespace they are created in).
    depends_on: Sequence[pulumi.Resource] = ()


class Observability(pulumi.ComponentResource):
    """`resources`: what it created (none when the target creates nothing)."""

    resources: list[pulumi.Resource]

    def __init__(
        self, name: str, args: ObservabilityArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("hp:index:Observability", name, None, opts)
        delivery = args.delivery
        child = pulumi.ResourceOptions(parent=self, depends_on=list(args.depends_on))
        self.resources = []
        if delivery.prometheus_rule is not None:
            rule = delivery.prometheus_rule
            self.resources.append(
                k8s.apiextensions.CustomResource(
                    "prometheus-rule",
                    api_version=rule["apiVersion"],
                    kind=rule["kind"],
                    metadata=_metadata(rule),
                    spec=rule["spec"],
                    opts=child,
                )
            )
        if delivery.dashboard_config_map is not None:
            config_map = delivery.dashboard_config_map
            self.resources.append(
                k8s.core.v1.ConfigMap(
                    "dashboard",
                    metadata=_metadata(config_map),
                    data=config_map["data"],
                    opts=child,
                )
            )
        if delivery.amp is not None:
            self.resources.append(
                aws.amp.RuleGroupNamespace(
                    "amp-rules",
                    name=delivery.amp.name,
                    workspace_id=delivery.amp.workspace_id,
                    data=delivery.amp.data,
                    tags=dict(args.tags) or None,
                    opts=pulumi.ResourceOptions(parent=self),
                )
            )
        self.register_outputs({"resources": len(self.resources)})


def _metadata(manifest: dict[str, Any]) -> k8s.meta.v1.ObjectMetaArgs:
    metadata = manifest["metadata"]
    return k8s.meta.v1.ObjectMetaArgs(
        name=metadata["name"], namespace=metadata["namespace"], labels=metadata["labels"]
    )
