"""The SageMaker HyperPod cluster (EKS orchestrator) and what must exist before it.

Before the cluster: its dependencies in the EKS cluster (GPU/EFA device plugins, or AWS's full
dependencies chart from a checkout), the instance-group execution role, the lifecycle script in
a private bucket, and a security group. Classic pulumi-aws has no HyperPod resource, so the
cluster is `pulumi_aws_native.sagemaker.Cluster` (Cloud Control).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pulumi
import pulumi_aws as aws
import pulumi_aws_native as aws_native
import pulumi_kubernetes as k8s

from mlcc.components.cluster import iam_policies
from mlcc.components.cluster.storage import private_bucket
from mlcc.config.aws import instances
from mlcc.config.infrastructure import InstanceGroup

LIFECYCLE_PREFIX = "lifecycle"
ON_CREATE = "on_create.sh"
EXECUTION_ROLE_POLICIES = ("AmazonSageMakerClusterInstanceRolePolicy", "AmazonEKS_CNI_Policy")
# Published charts, at the versions AWS's HyperPod dependencies chart pins (docs/infrastructure.md);
# that chart itself is only in a git checkout.
NVIDIA_DEVICE_PLUGIN = (
    "https://nvidia.github.io/k8s-device-plugin",
    "nvidia-device-plugin",
    "0.16.1",
)
EFA_DEVICE_PLUGIN = ("https://aws.github.io/eks-charts", "aws-efa-k8s-device-plugin", "v0.5.20")
HEALTH_TAINT_TOLERATION = {
    "key": "sagemaker.amazonaws.com/node-health-status",
    "operator": "Equal",
    "value": "Unschedulable",
    "effect": "NoSchedule",
}
_CREATE_TIMEOUT = "120m"


@dataclass(frozen=True)
class HyperPodClusterArgs:
    cluster_name: str
    eks_cluster_arn: pulumi.Input[str]
    instance_groups: tuple[InstanceGroup, ...]
    vpc_id: pulumi.Input[str]
    private_subnet_ids: pulumi.Input[Sequence[str]]
    eks_security_group_id: pulumi.Input[str]
    # ECR repositories the nodes pull the serve image from.
    image_repository_arns: pulumi.Input[Sequence[str]]
    k8s_provider: k8s.Provider
    lifecycle_script: Path
    dependencies_chart: str | None
    tags: Mapping[str, str]


def instance_type_affinity(instance_types: Sequence[str]) -> dict[str, object]:
    """Node affinity to exactly these HyperPod instance types (the dependencies chart's way)."""
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {
                                "key": "node.kubernetes.io/instance-type",
                                "operator": "In",
                                "values": sorted(set(instance_types)),
                            }
                        ]
                    }
                ]
            }
        }
    }


def nvidia_plugin_values(instance_types: Sequence[str]) -> dict[str, object]:
    return {
        "affinity": instance_type_affinity(instance_types),
        "tolerations": [
            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
            HEALTH_TAINT_TOLERATION,
        ],
    }


def efa_instance_types(instance_types: Sequence[str]) -> list[str]:
    return sorted({t for t in instance_types if t in instances.EFA_INSTANCE_TYPES})


def efa_plugin_values(instance_types: Sequence[str]) -> dict[str, object]:
    return {
        "supportedInstanceLabels": {
            "keys": ["node.kubernetes.io/instance-type"],
            "values": efa_instance_types(instance_types),
        },
        "tolerations": [
            {"key": "aws.amazon.com/efa", "operator": "Exists", "effect": "NoSchedule"},
            HEALTH_TAINT_TOLERATION,
        ],
    }


def instance_group_args(
    group: InstanceGroup, execution_role_arn: pulumi.Input[str], source_s3_uri: pulumi.Input[str]
) -> aws_native.sagemaker.ClusterInstanceGroupArgs:
    return aws_native.sagemaker.ClusterInstanceGroupArgs(
        instance_group_name=group.name,
        instance_type=group.instance_type,
        instance_count=group.instance_count,
        execution_role=execution_role_arn,
        life_cycle_config=aws_native.sagemaker.ClusterLifeCycleConfigArgs(
            source_s3_uri=source_s3_uri, on_create=ON_CREATE
        ),
        instance_storage_configs=[
            aws_native.sagemaker.ClusterInstanceStorageConfigArgs(
                ebs_volume_config=aws_native.sagemaker.ClusterEbsVolumeConfigArgs(
                    volume_size_in_gb=group.ebs_volume_size_gb
                )
            )
        ],
        threads_per_core=group.threads_per_core,
        # AWS requires at least one item when the field is sent: [] means "omit it".
        on_start_deep_health_checks=[
            aws_native.sagemaker.ClusterDeepHealthCheckType(c) for c in group.deep_health_checks
        ]
        or None,
    )


def _managed_policy_arn(partition: pulumi.Output[str], policy: str) -> pulumi.Output[str]:
    return partition.apply(lambda p: iam_policies.managed_policy_arn(p, policy))


class HyperPodCluster(pulumi.ComponentResource):
    cluster_arn: pulumi.Output[str]
    execution_role_arn: pulumi.Output[str]

    def __init__(
        self, name: str, args: HyperPodClusterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("hp:index:HyperPodCluster", name, None, opts)
        self._name = name
        self._tags = dict(args.tags)
        bucket = private_bucket(
            f"{name}-lifecycle", prefix="sagemaker-hp-lifecycle-", tags=self._tags, parent=self
        )
        script = aws.s3.BucketObjectv2(
            f"{name}-on-create",
            bucket=bucket.id,
            key=f"{LIFECYCLE_PREFIX}/{ON_CREATE}",
            source=pulumi.FileAsset(str(args.lifecycle_script)),
            content_type="text/x-shellscript",
            tags=self._tags,
            opts=pulumi.ResourceOptions(parent=self),
        )
        role, role_ready = self._execution_role(bucket, args.image_repository_arns)
        security_group = self._security_group(args.vpc_id)
        dependencies = self._dependencies(args)
        cluster = aws_native.sagemaker.Cluster(
            name,
            cluster_name=args.cluster_name,
            orchestrator=aws_native.sagemaker.ClusterOrchestratorArgs(
                eks=aws_native.sagemaker.ClusterOrchestratorEksConfigArgs(
                    cluster_arn=args.eks_cluster_arn
                )
            ),
            instance_groups=[
                instance_group_args(
                    group,
                    role.arn,
                    pulumi.Output.concat("s3://", bucket.bucket, f"/{LIFECYCLE_PREFIX}/"),
                )
                for group in args.instance_groups
            ],
            vpc_config=aws_native.sagemaker.ClusterVpcConfigArgs(
                security_group_ids=[security_group.id, args.eks_security_group_id],
                subnets=args.private_subnet_ids,
            ),
            node_recovery=aws_native.sagemaker.ClusterNodeRecovery.AUTOMATIC,
            tags=[aws_native.TagArgs(key=k, value=v) for k, v in sorted(self._tags.items())],
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=[script, *role_ready, *dependencies],
                custom_timeouts=pulumi.CustomTimeouts(create=_CREATE_TIMEOUT),
            ),
        )
        self.cluster_arn = cluster.cluster_arn
        self.execution_role_arn = role.arn
        self.register_outputs(
            {"clusterArn": self.cluster_arn, "executionRoleArn": self.execution_role_arn}
        )

    def _execution_role(
        self, bucket: aws.s3.Bucket, repository_arns: pulumi.Input[Sequence[str]]
    ) -> tuple[aws.iam.Role, list[pulumi.Resource]]:
        name = f"{self._name}-execution"
        child = pulumi.ResourceOptions(parent=self)
        partition = aws.get_partition_output(opts=pulumi.InvokeOutputOptions(parent=self)).partition
        role = aws.iam.Role(
            name,
            assume_role_policy=json.dumps(iam_policies.service_trust("sagemaker.amazonaws.com")),
            description="HyperPod instance groups: join EKS, run pods, read the lifecycle script",
            tags=self._tags,
            opts=child,
        )
        ready: list[pulumi.Resource] = [
            aws.iam.RolePolicyAttachment(
                f"{name}-{policy}",
                role=role.name,
                policy_arn=_managed_policy_arn(partition, policy),
                opts=child,
            )
            for policy in EXECUTION_ROLE_POLICIES
        ]
        ready.append(
            aws.iam.RolePolicy(
                f"{name}-lifecycle-read",
                role=role.name,
                policy=bucket.arn.apply(lambda arn: json.dumps(iam_policies.bucket_read(arn))),
                opts=child,
            )
        )
        ready.append(
            aws.iam.RolePolicy(
                f"{name}-ecr-pull",
                role=role.name,
                policy=pulumi.Output.from_input(repository_arns).apply(
                    lambda arns: json.dumps(iam_policies.ecr_pull(list(arns)))
                ),
                opts=child,
            )
        )
        return role, ready

    def _security_group(self, vpc_id: pulumi.Input[str]) -> aws.ec2.SecurityGroup:
        """All traffic between HyperPod nodes (EFA needs the self-referencing rules)."""
        name = f"{self._name}-nodes"
        child = pulumi.ResourceOptions(parent=self)
        group = aws.ec2.SecurityGroup(
            name,
            vpc_id=vpc_id,
            description="HyperPod nodes: all traffic among themselves, all egress",
            tags={**self._tags, "Name": name},
            opts=child,
        )
        aws.vpc.SecurityGroupIngressRule(
            f"{name}-self-in",
            security_group_id=group.id,
            referenced_security_group_id=group.id,
            ip_protocol="-1",
            tags=self._tags,
            opts=child,
        )
        aws.vpc.SecurityGroupEgressRule(
            f"{name}-self-out",
            security_group_id=group.id,
            referenced_security_group_id=group.id,
            ip_protocol="-1",
            tags=self._tags,
            opts=child,
        )
        aws.vpc.SecurityGroupEgressRule(
            f"{name}-all-out",
            security_group_id=group.id,
            cidr_ipv4="0.0.0.0/0",
            ip_protocol="-1",
            tags=self._tags,
            opts=child,
        )
        return group

    def _dependencies(self, args: HyperPodClusterArgs) -> list[pulumi.Resource]:
        """HyperPod's in-cluster dependencies; installed before the cluster is created."""
        child = pulumi.ResourceOptions(parent=self, provider=args.k8s_provider)
        if args.dependencies_chart:
            return [
                k8s.helm.v3.Release(
                    f"{self._name}-dependencies",
                    name="hyperpod-dependencies",
                    chart=args.dependencies_chart,
                    namespace="kube-system",
                    dependency_update=True,
                    opts=child,
                )
            ]
        types = [g.instance_type for g in args.instance_groups]
        releases: list[pulumi.Resource] = [
            self._chart(NVIDIA_DEVICE_PLUGIN, nvidia_plugin_values(types), child)
        ]
        if efa_instance_types(types):
            releases.append(self._chart(EFA_DEVICE_PLUGIN, efa_plugin_values(types), child))
        return releases

    def _chart(
        self, chart: tuple[str, str, str], values: dict[str, object], opts: pulumi.ResourceOptions
    ) -> k8s.helm.v3.Release:
        repository, name, version = chart
        return k8s.helm.v3.Release(
            f"{self._name}-{name}",
            name=name,
            chart=name,
            version=version,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=repository),
            namespace="kube-system",
            values=values,
            opts=opts,
        )
