"""One speculative-decoding endpoint: its InferenceEndpointConfig custom resource.

The manifest is built by the pure `mlcc.manifest.workload`; this component only declares
it. Its namespace and token Secret belong to `EndpointNamespace`, shared by every endpoint of
the stack.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from mlcc.facts.operator import KIND
from mlcc.manifest.operator import REPLACED_PATHS
from mlcc.manifest.workload import (
    API_VERSION,
    AWAIT_ANNOTATIONS,
    AWAIT_TIMEOUTS,
    Workload,
    endpoint_spec,
    labels,
    verify_commands,
)
from mlcc.serving.speculative import SpeculativeSpec


@dataclass(frozen=True)
class InferenceEndpointArgs:
    workload: Workload
    image: pulumi.Input[str]
    # May be an Output: a recommendation job's result.
    speculative: pulumi.Input[SpeculativeSpec | None]
    # What the custom resource must wait for: the operator (its CRD and webhook), the namespace.
    depends_on: Sequence[pulumi.Resource] = field(default_factory=tuple)


class InferenceEndpoint(pulumi.ComponentResource):
    endpoint_name: pulumi.Output[str]
    namespace: pulumi.Output[str]

    def __init__(
        self, name: str, args: InferenceEndpointArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("hp:index:InferenceEndpoint", name, None, opts)
        workload = args.workload
        cr_spec = pulumi.Output.all(args.image, args.speculative).apply(
            lambda image_and_speculative: endpoint_spec(workload, *image_and_speculative)
        )
        self.custom_resource = k8s.apiextensions.CustomResource(
            name,
            api_version=API_VERSION,
            kind=KIND,
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=workload.endpoint_name,
                namespace=workload.namespace,
                labels=labels(workload),
                annotations=AWAIT_ANNOTATIONS,
            ),
            spec=cr_spec,
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=list(args.depends_on),
                # The operator rejects adding or removing routing in place: replace instead.
                replace_on_changes=list(REPLACED_PATHS),
                custom_timeouts=pulumi.CustomTimeouts(**AWAIT_TIMEOUTS),
            ),
        )
        self.endpoint_name = pulumi.Output.from_input(workload.endpoint_name)
        self.namespace = pulumi.Output.from_input(workload.namespace)
        self.verify_commands = verify_commands(workload)
        self.register_outputs({"endpointName": self.endpoint_name, "namespace": self.namespace})
