"""Access to the EKS cluster behind an existing HyperPod cluster (existing-cluster mode)."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from mlcc.components.cluster.existing import ExistingHyperPod, kubeconfig_json


@dataclass(frozen=True)
class ExistingClusterAccessArgs:
    cluster: ExistingHyperPod


class ExistingClusterAccess(pulumi.ComponentResource):
    """A Kubernetes provider for the existing cluster, authenticated with `aws eks get-token`."""

    def __init__(
        self,
        name: str,
        args: ExistingClusterAccessArgs,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("hp:index:ExistingClusterAccess", name, None, opts)
        self.kubeconfig = kubeconfig_json(args.cluster)
        self.provider = k8s.Provider(
            name,
            kubeconfig=self.kubeconfig,
            enable_server_side_apply=True,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({})
