"""Kubernetes providers for the clusters the stack does not create: the EKS cluster behind an
existing HyperPod cluster (existing-cluster mode), or any cluster a kubeconfig reaches
(Kubernetes-only mode)."""

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


@dataclass(frozen=True)
class KubeconfigAccessArgs:
    kubeconfig: str  # a kubeconfig file's path
    context: str  # "" = its current-context


class KubeconfigAccess(pulumi.ComponentResource):
    """A Kubernetes provider for a cluster reached by a kubeconfig file (Kubernetes-only mode).

    The provider gets the file's path, not its contents: credentials stay out of the state, and a
    kubeconfig whose token was refreshed is read fresh at every run."""

    def __init__(
        self,
        name: str,
        args: KubeconfigAccessArgs,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("hp:index:KubeconfigAccess", name, None, opts)
        self.kubeconfig = args.kubeconfig
        self.context = args.context or None
        self.provider = k8s.Provider(
            name,
            kubeconfig=args.kubeconfig,
            context=self.context,
            enable_server_side_apply=True,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({})
