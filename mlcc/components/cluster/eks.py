"""The EKS control plane HyperPod orchestrates through, with a small CPU system node group.

HyperPod needs authentication mode API or API_AND_CONFIG_MAP, a Kubernetes version of its list
(docs/kubernetes-facts.md) and the Amazon VPC CNI >= 1.18.3. The operator, cert-manager,
metrics-server and CoreDNS need non-HyperPod capacity (without it they stay Pending), hence the
system node group (x86_64: the operator images are amd64-only).

`pulumi_eks.Cluster` is a remote component: its `eks_cluster` child is not reachable under
mocks (remote components register no children there), so the cluster's ARN is derived from
the name set here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws
import pulumi_eks as eks
import pulumi_kubernetes as k8s

from mlcc.components.cluster import iam_policies

_NODE_POLICIES = (
    "AmazonEKSWorkerNodePolicy",
    "AmazonEKS_CNI_Policy",
    "AmazonEC2ContainerRegistryReadOnly",
)
SYSTEM_NODE_LABEL = {"hp.mlcc/node-role": "system"}


@dataclass(frozen=True)
class EksClusterArgs:
    cluster_name: str
    kubernetes_version: str
    vpc_id: pulumi.Input[str]
    private_subnet_ids: pulumi.Input[Sequence[str]]
    public_subnet_ids: pulumi.Input[Sequence[str]] | None
    system_node_instance_type: str
    system_node_count: int
    tags: Mapping[str, str]


MIN_VPC_CNI = (1, 18, 3)  # HyperPod's minimum


def supported_vpc_cni(version: str) -> str:
    """The add-on version (e.g. v1.20.4-eksbuild.2) if HyperPod accepts it; else ValueError."""
    match = re.match(r"^v?(\d+)\.(\d+)\.(\d+)", version)
    if not match or tuple(int(g) for g in match.groups()) < MIN_VPC_CNI:
        minimum = ".".join(map(str, MIN_VPC_CNI))
        raise ValueError(
            f"vpc-cni add-on {version!r} is older than {minimum}, which HyperPod needs"
        )
    return version


def cluster_arn(partition: str, region: str, account: str, name: str) -> str:
    return f"arn:{partition}:eks:{region}:{account}:cluster/{name}"


class EksCluster(pulumi.ComponentResource):
    cluster_name: pulumi.Output[str]
    cluster_arn: pulumi.Output[str]
    oidc_provider_arn: pulumi.Output[str]
    oidc_issuer: pulumi.Output[str]
    cluster_security_group_id: pulumi.Output[str]
    provider: k8s.Provider
    kubeconfig: pulumi.Output[str]  # a secret: what the provider and the deploy wait use
    # Add-ons whose pods run on CPU nodes (CoreDNS, cert-manager, the operator) wait for these.
    system_nodes: eks.ManagedNodeGroup

    def __init__(
        self, name: str, args: EksClusterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("hp:index:EksCluster", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        invoke = pulumi.InvokeOutputOptions(parent=self)
        partition = aws.get_partition_output(opts=invoke).partition
        node_role = self._node_role(name, partition, dict(args.tags))
        cni = aws.eks.get_addon_version_output(
            addon_name="vpc-cni",
            kubernetes_version=args.kubernetes_version,
            most_recent=True,
            opts=invoke,
        )
        cluster = eks.Cluster(
            name,
            name=args.cluster_name,
            version=args.kubernetes_version,
            authentication_mode=eks.AuthenticationMode.API_AND_CONFIG_MAP,
            create_oidc_provider=True,
            skip_default_node_group=True,
            vpc_id=args.vpc_id,
            private_subnet_ids=args.private_subnet_ids,
            public_subnet_ids=args.public_subnet_ids,
            endpoint_private_access=True,
            endpoint_public_access=True,
            use_default_vpc_cni=False,
            vpc_cni_options=eks.VpcCniOptionsArgs(
                addon_version=cni.version.apply(supported_vpc_cni),
                resolve_conflicts_on_update=eks.ResolveConflictsOnUpdate.OVERWRITE,
            ),
            coredns_addon_options=eks.CoreDnsAddonOptionsArgs(enabled=True),
            kube_proxy_addon_options=eks.KubeProxyAddonOptionsArgs(enabled=True),
            instance_roles=[node_role],
            tags=dict(args.tags),
            opts=child,
        )
        self.system_nodes = eks.ManagedNodeGroup(
            f"{name}-system",
            cluster=cluster,
            node_role=node_role,
            ami_type=eks.AmiType.AL2023_X86_64_STANDARD.value,
            instance_types=[args.system_node_instance_type],
            scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                min_size=args.system_node_count,
                desired_size=args.system_node_count,
                max_size=args.system_node_count + 1,
            ),
            subnet_ids=args.private_subnet_ids,
            labels=SYSTEM_NODE_LABEL,
            tags=dict(args.tags),
            opts=child,
        )
        # Resolves only once the control plane is up, so dependants wait for it. The kubeconfig
        # is a secret output; the name derived from it is not.
        self.cluster_name = pulumi.Output.unsecret(
            cluster.kubeconfig_json.apply(lambda _: args.cluster_name)
        )
        identity = aws.get_caller_identity_output(opts=invoke)
        region = aws.get_region_output(opts=invoke).region
        self.cluster_arn = pulumi.Output.all(
            partition, region, identity.account_id, self.cluster_name
        ).apply(lambda v: cluster_arn(v[0], v[1], v[2], v[3]))
        self.oidc_provider_arn = cluster.oidc_provider_arn
        self.oidc_issuer = cluster.oidc_issuer
        # The security group EKS itself creates: the control plane and managed nodes are in it.
        self.cluster_security_group_id = aws.eks.get_cluster_output(
            name=self.cluster_name, opts=invoke
        ).vpc_config.cluster_security_group_id
        aws.eks.Addon(
            f"{name}-pod-identity-agent",
            cluster_name=self.cluster_name,
            addon_name="eks-pod-identity-agent",
            resolve_conflicts_on_create="OVERWRITE",
            resolve_conflicts_on_update="OVERWRITE",
            tags=dict(args.tags),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.system_nodes]),
        )
        self.kubeconfig = cluster.kubeconfig_json
        self.provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=self.kubeconfig,
            enable_server_side_apply=True,
            opts=child,
        )
        self.register_outputs(
            {
                "clusterName": self.cluster_name,
                "clusterArn": self.cluster_arn,
                "oidcProviderArn": self.oidc_provider_arn,
            }
        )

    def _node_role(
        self, name: str, partition: pulumi.Output[str], tags: dict[str, str]
    ) -> aws.iam.Role:
        child = pulumi.ResourceOptions(parent=self)
        role = aws.iam.Role(
            f"{name}-system-nodes",
            assume_role_policy=json.dumps(iam_policies.service_trust("ec2.amazonaws.com")),
            description="EKS system node group (operator, cert-manager, CoreDNS)",
            tags=tags,
            opts=child,
        )
        for policy in _NODE_POLICIES:
            aws.iam.RolePolicyAttachment(
                f"{name}-system-nodes-{policy}",
                role=role.name,
                policy_arn=_managed_policy_arn(partition, policy),
                opts=child,
            )
        return role


def _managed_policy_arn(partition: pulumi.Output[str], policy: str) -> pulumi.Output[str]:
    return partition.apply(lambda p: iam_policies.managed_policy_arn(p, policy))
