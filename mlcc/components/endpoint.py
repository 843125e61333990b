"""The speculative-decoding endpoint: one InferenceEndpointConfig (+ its namespace and token).

The manifest itself is built by the pure `mlcc.workload`; this component only declares it.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from mlcc.config import Secret
from mlcc.speculative import SpeculativeSpec
from mlcc.workload import (
    API_VERSION,
    HF_TOKEN_KEY,
    KIND,
    Workload,
    endpoint_spec,
    labels,
    verify_commands,
)

UNMANAGED_NAMESPACES = frozenset({"default"})


@dataclass(frozen=True)
class InferenceEndpointArgs:
    workload: Workload
    image: pulumi.Input[str]
    speculative: pulumi.Input[SpeculativeSpec | None]
    hf_token: Secret | None = None


class InferenceEndpoint(pulumi.ComponentResource):
    """Declares the endpoint; `speculative` may be an Output (a recommendation job's result)."""

    endpoint_name: pulumi.Output[str]
    namespace: pulumi.Output[str]

    def __init__(
        self, name: str, args: InferenceEndpointArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("hp:index:InferenceEndpoint", name, None, opts)
        workload = args.workload
        child = pulumi.ResourceOptions(parent=self)
        namespace = self._namespace(name, workload, child)
        depends: list[pulumi.Resource] = [namespace] if namespace else []
        if args.hf_token is not None and workload.hf_token_secret:
            depends.append(self._token_secret(name, workload, args.hf_token, child, depends))
        spec = pulumi.Output.all(args.image, args.speculative).apply(
            lambda image_and_spec: endpoint_spec(workload, image_and_spec[0], image_and_spec[1])
        )
        self.config = k8s.apiextensions.CustomResource(
            name,
            api_version=API_VERSION,
            kind=KIND,
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=workload.endpoint_name, namespace=workload.namespace, labels=labels(workload)
            ),
            spec=spec,
            opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=depends)),
        )
        self.endpoint_name = pulumi.Output.from_input(workload.endpoint_name)
        self.namespace = pulumi.Output.from_input(workload.namespace)
        self.verify_commands = verify_commands(workload)
        self.register_outputs({"endpointName": self.endpoint_name, "namespace": self.namespace})

    def _namespace(
        self, name: str, workload: Workload, opts: pulumi.ResourceOptions
    ) -> k8s.core.v1.Namespace | None:
        if workload.namespace in UNMANAGED_NAMESPACES:
            return None
        return k8s.core.v1.Namespace(
            f"{name}-namespace",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=workload.namespace),
            opts=opts,
        )

    def _token_secret(
        self,
        name: str,
        workload: Workload,
        token: Secret,
        opts: pulumi.ResourceOptions,
        depends: list[pulumi.Resource],
    ) -> k8s.core.v1.Secret:
        assert workload.hf_token_secret is not None
        return k8s.core.v1.Secret(
            f"{name}-hf-token",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=workload.hf_token_secret, namespace=workload.namespace
            ),
            type="Opaque",
            string_data={HF_TOKEN_KEY: pulumi.Output.secret(token.value)},
            opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=depends)),
        )
