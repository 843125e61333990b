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
from mlcc.manifest import capture
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
    # hp:capture's s3Uri in the stack's bucket (mlcc/components/capture.py); None = no capture.
    capture_uri: pulumi.Input[str] | None = None


class InferenceEndpoint(pulumi.ComponentResource):
    endpoint_name: pulumi.Output[str]
    namespace: pulumi.Output[str]

    def __init__(
        self, name: str, args: InferenceEndpointArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("hp:index:InferenceEndpoint", name, None, opts)
        workload = args.workload
        cr_spec = pulumi.Output.all(args.image, args.speculative, args.capture_uri).apply(
            lambda v: _with_capture(endpoint_spec(workload, v[0], v[1]), workload, v[2])
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


def _with_capture(
    spec: dict[str, object], workload: Workload, uri: str | None
) -> dict[str, object]:
    """spec.dataCapture of hp:capture, once the stack's bucket has a name."""
    if uri and workload.operator.capture is not None:
        spec["dataCapture"] = capture.data_capture(workload.operator.capture, uri)
    return spec
