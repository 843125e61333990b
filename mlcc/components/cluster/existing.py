"""Existing-cluster mode: find the EKS cluster behind a HyperPod cluster and connect to it.

A HyperPod ARN is resolved with the aws-native `sagemaker:getCluster` invoke (Cloud Control
identifies the cluster by ARN only); a bare name needs SageMaker's DescribeCluster, which no
Pulumi provider exposes, so it is called with boto3 at program start, in the stack's region
(`aws:region`), not in whatever region the environment defaults to.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pulumi
import pulumi_aws as aws
import pulumi_aws_native as aws_native

if TYPE_CHECKING:
    from mypy_boto3_sagemaker import SageMakerClient


def kubeconfig(*, cluster_name: str, endpoint: str, ca_data: str, region: str) -> dict[str, Any]:
    """A kubeconfig that authenticates with `aws eks get-token` (no credentials stored)."""
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": cluster_name,
                "cluster": {"server": endpoint, "certificate-authority-data": ca_data},
            }
        ],
        "contexts": [
            {"name": cluster_name, "context": {"cluster": cluster_name, "user": cluster_name}}
        ],
        "current-context": cluster_name,
        "users": [
            {
                "name": cluster_name,
                "user": {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1beta1",
                        "command": "aws",
                        "args": [
                            "eks",
                            "get-token",
                            "--cluster-name",
                            cluster_name,
                            "--region",
                            region,
                        ],
                    }
                },
            }
        ],
    }


def arn_resource_name(arn: str) -> str:
    return arn.rsplit("/", 1)[-1]


def arn_region(arn: str) -> str:
    return arn.split(":")[3]


@dataclass(frozen=True)
class ExistingHyperPod:
    """What the program needs from an existing HyperPod cluster."""

    eks_cluster_arn: pulumi.Output[str]
    # The instance groups' execution roles: the nodes pull the serve image with them.
    execution_role_arns: pulumi.Output[list[str]]
    instance_types: pulumi.Output[list[str]]

    @property
    def eks_cluster_name(self) -> pulumi.Output[str]:
        """What `aws eks update-kubeconfig --name` takes."""
        return self.eks_cluster_arn.apply(arn_resource_name)


@dataclass(frozen=True)
class Described:
    eks_cluster_arn: str
    execution_role_arns: list[str]
    instance_types: list[str]


def describe(hyperpod_name: str, client: SageMakerClient) -> Described:
    """The EKS cluster and instance groups of a HyperPod cluster, via SageMaker DescribeCluster."""
    response = client.describe_cluster(ClusterName=hyperpod_name)
    eks = response.get("Orchestrator", {}).get("Eks")
    if not eks:
        raise pulumi.RunError(
            f"hp:clusterName: HyperPod cluster {hyperpod_name!r} is not orchestrated by EKS"
        )
    groups = response.get("InstanceGroups", [])
    return Described(
        eks_cluster_arn=str(eks["ClusterArn"]),
        execution_role_arns=sorted(
            {str(g["ExecutionRole"]) for g in groups if "ExecutionRole" in g}
        ),
        instance_types=sorted({str(g["InstanceType"]) for g in groups if "InstanceType" in g}),
    )


def sagemaker_client(region: str | None) -> SageMakerClient:
    """A SageMaker client in `region`; None falls back to the environment, as the provider does."""
    import boto3

    return boto3.client("sagemaker", region_name=region)


ClientFactory = Callable[[str | None], "SageMakerClient"]


def lookup(
    name_or_arn: str, *, region: str | None = None, client_factory: ClientFactory | None = None
) -> ExistingHyperPod:
    """The EKS cluster and instance groups behind a HyperPod cluster (ARN, or name in `region`)."""
    if name_or_arn.startswith("arn:"):
        found = aws_native.sagemaker.get_cluster_output(cluster_arn=name_or_arn)
        return ExistingHyperPod(
            eks_cluster_arn=found.orchestrator.apply(_orchestrator_eks_arn),
            execution_role_arns=found.instance_groups.apply(
                lambda groups: _group_values(groups, "execution_role", "executionRole")
            ),
            instance_types=found.instance_groups.apply(
                lambda groups: _group_values(groups, "instance_type", "instanceType")
            ),
        )
    described = _describe_by_name(name_or_arn, region, client_factory or sagemaker_client)
    return ExistingHyperPod(
        eks_cluster_arn=pulumi.Output.from_input(described.eks_cluster_arn),
        execution_role_arns=pulumi.Output.from_input(described.execution_role_arns),
        instance_types=pulumi.Output.from_input(described.instance_types),
    )


def _describe_by_name(name: str, region: str | None, client_factory: ClientFactory) -> Described:
    from botocore.exceptions import BotoCoreError, ClientError, NoRegionError

    try:
        return describe(name, client_factory(region))
    except NoRegionError:
        raise pulumi.RunError(
            f"hp:clusterName: looking up HyperPod cluster {name!r} needs the stack's region; "
            "set it with `pulumi config set aws:region <region>`, or give the cluster's ARN"
        ) from None
    except (BotoCoreError, ClientError) as error:
        where = f" in {region}" if region else ""
        raise pulumi.RunError(
            f"hp:clusterName: cannot look up HyperPod cluster {name!r}{where} ({error}); "
            "check the name, the region (aws:region) and AWS credentials, or give the "
            "cluster's ARN"
        ) from None


def _field(value: Any, python_name: str, wire_name: str) -> Any:
    """An invoke result field: typed output objects have attributes, plain dicts camelCase keys."""
    if value is None:
        return None
    found = getattr(value, python_name, None)
    if found is None and isinstance(value, dict):
        found = value.get(wire_name)
    return found


def _group_values(groups: Any, python_name: str, wire_name: str) -> list[str]:
    values = (_field(group, python_name, wire_name) for group in groups or [])
    return sorted({str(v) for v in values if v})


def _orchestrator_eks_arn(orchestrator: Any) -> str:
    arn = _field(_field(orchestrator, "eks", "eks"), "cluster_arn", "clusterArn")
    if not arn:
        raise pulumi.RunError("hp:clusterName: that HyperPod cluster is not orchestrated by EKS")
    return str(arn)


def kubeconfig_json(existing: ExistingHyperPod) -> pulumi.Output[str]:
    """A kubeconfig (aws eks get-token auth) for the EKS cluster of an existing HyperPod cluster."""
    arn = existing.eks_cluster_arn
    eks_name = arn.apply(arn_resource_name)
    found = aws.eks.get_cluster_output(name=eks_name, region=arn.apply(arn_region))
    return pulumi.Output.all(
        eks_name, found.endpoint, found.certificate_authorities, arn.apply(arn_region)
    ).apply(
        lambda v: json.dumps(
            kubeconfig(
                cluster_name=v[0],
                endpoint=v[1],
                ca_data=_field(v[2][0], "data", "data"),
                region=v[3],
            )
        )
    )


def warn_if_type_missing(instance_type: str, instance_types: list[str]) -> None:
    if instance_types and instance_type not in instance_types:
        pulumi.log.warn(
            f"hp:instanceType: {instance_type} is not the type of any instance group of the "
            f"existing cluster ({', '.join(instance_types)}); the endpoint's pods would stay "
            "Pending"
        )
