"""The namespace the endpoints live in, and the Hugging Face token Secret they share.

One per stack (hp:namespace). `default` is never created or deleted by this program. The children
keep the names and, by alias, the identities they had when the endpoint component owned them, so
stacks created before several endpoints existed replace nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from mlcc.config.stack_keys import Secret
from mlcc.manifest.workload import HF_TOKEN_KEY

UNMANAGED_NAMESPACES = frozenset({"default"})
# Where these children lived before: under the single endpoint's InferenceEndpoint component.
_FORMER_PARENT = ("endpoint", "hp:index:InferenceEndpoint")


@dataclass(frozen=True)
class EndpointNamespaceArgs:
    namespace: str
    hf_token: Secret | None = None
    hf_token_secret_name: str | None = None


class EndpointNamespace(pulumi.ComponentResource):
    """`resources`: what an endpoint in this namespace must wait for (namespace, token)."""

    resources: list[pulumi.Resource]

    def __init__(
        self, name: str, args: EndpointNamespaceArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("hp:index:EndpointNamespace", name, None, opts)
        former = pulumi.Alias(parent=pulumi.resource.create_urn(*_FORMER_PARENT))
        child = pulumi.ResourceOptions(parent=self, aliases=[former])
        self.resources = []
        if args.namespace not in UNMANAGED_NAMESPACES:
            self.resources.append(
                k8s.core.v1.Namespace(
                    "endpoint-namespace",
                    metadata=k8s.meta.v1.ObjectMetaArgs(name=args.namespace),
                    opts=child,
                )
            )
        if args.hf_token is not None and args.hf_token_secret_name:
            self.resources.append(self._token_secret(args, child))
        self.register_outputs({"namespace": args.namespace})

    def _token_secret(
        self, args: EndpointNamespaceArgs, child: pulumi.ResourceOptions
    ) -> k8s.core.v1.Secret:
        assert args.hf_token is not None
        return k8s.core.v1.Secret(
            "endpoint-hf-token",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=args.hf_token_secret_name, namespace=args.namespace
            ),
            type="Opaque",
            string_data={HF_TOKEN_KEY: pulumi.Output.secret(args.hf_token.value)},
            opts=pulumi.ResourceOptions.merge(
                child, pulumi.ResourceOptions(depends_on=list(self.resources))
            ),
        )
