"""Builds the infrastructure the endpoint runs on, in create or existing-cluster mode.

Kept out of __main__.py so the program stays a few lines. Order is by data, not by hand:
the image build, IAM and S3 need nothing from the cluster and run in parallel with it; the
endpoint waits only for the operator add-on (depends_on) and the pushed image (its digest).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pulumi
import pulumi_kubernetes as k8s

from mlcc import existing_cluster, iam_policies
from mlcc.components.cluster_access import ExistingClusterAccess, ExistingClusterAccessArgs
from mlcc.components.eks import EksCluster, EksClusterArgs
from mlcc.components.hyperpod import HyperPodCluster, HyperPodClusterArgs
from mlcc.components.images import ServeImage, ServeImageArgs
from mlcc.components.network import Network, NetworkArgs
from mlcc.components.operator import InferenceOperator, InferenceOperatorArgs
from mlcc.config import StackConfig
from mlcc.infrastructure import ExistingCluster, NewCluster, NewNetwork, resource_base_name

REPO_ROOT = Path(__file__).resolve().parent.parent
IMAGES_DIR = REPO_ROOT / "images"
LIFECYCLE_SCRIPT = REPO_ROOT / "infra" / "lifecycle" / "on_create.sh"


@dataclass(frozen=True)
class Image:
    ref: pulumi.Output[str]
    repository_arns: pulumi.Output[list[str]]


@dataclass
class Platform:
    """What the endpoint needs: where its image is and how to reach the cluster."""

    image: Image
    k8s_provider: k8s.Provider
    endpoint_depends_on: list[pulumi.Resource] = field(default_factory=list)
    outputs: dict[str, pulumi.Output[str]] = field(default_factory=dict)


def build(config: StackConfig) -> Platform:
    cluster = config.infrastructure.cluster
    if isinstance(cluster, ExistingCluster):
        return _existing(config, cluster)
    return _create(config, cluster, build_image(config))


def _existing(config: StackConfig, cluster: ExistingCluster) -> Platform:
    existing = existing_cluster.lookup(cluster.name_or_arn, region=existing_cluster.stack_region())
    existing.instance_types.apply(
        lambda types: existing_cluster.warn_if_type_missing(config.instance_type, types)
    )
    image = build_image(config, pull_role_arns=existing.execution_role_arns)
    access = ExistingClusterAccess("existing-cluster", ExistingClusterAccessArgs(existing))
    # The same outputs as create mode, so `aws eks update-kubeconfig` works in both.
    outputs = {"image": image.ref, "eksClusterName": existing.eks_cluster_name}
    return Platform(image, access.provider, outputs=outputs)


def build_image(
    config: StackConfig, *, pull_role_arns: pulumi.Input[Sequence[str]] | None = None
) -> Image:
    if config.image:
        arn = iam_policies.ecr_repository_arn(config.image)
        return Image(
            pulumi.Output.from_input(config.image), pulumi.Output.from_input([arn] if arn else [])
        )
    base = resource_base_name(config.stack).lower()
    built = ServeImage(
        "image",
        ServeImageArgs(
            engine=config.engine,
            engine_version=config.engine_release.version,
            images_dir=IMAGES_DIR,
            repository_name=f"{base}/{config.engine.value}",
            tags=config.infrastructure.tag_map,
            pull_role_arns=pull_role_arns,
        ),
    )
    return Image(built.image_ref, built.repository_arn.apply(lambda arn: [arn]))


def _create(config: StackConfig, cluster: NewCluster, image: Image) -> Platform:
    tags = config.infrastructure.tag_map
    network = cluster.network
    if isinstance(network, NewNetwork):
        vpc = Network("network", NetworkArgs(network=network, tags=tags))
        vpc_id, private, public = vpc.vpc_id, vpc.private_subnet_ids, vpc.public_subnet_ids
    else:
        vpc_id = pulumi.Output.from_input(network.vpc_id)
        private = pulumi.Output.from_input(list(network.private_subnet_ids))
        public = pulumi.Output.from_input(list(network.public_subnet_ids))
    eks = EksCluster(
        "eks",
        EksClusterArgs(
            cluster_name=cluster.eks_cluster_name,
            kubernetes_version=cluster.kubernetes_version,
            vpc_id=vpc_id,
            private_subnet_ids=private,
            public_subnet_ids=public
            if isinstance(network, NewNetwork) or network.public_subnet_ids
            else None,
            system_node_instance_type=cluster.system_node_instance_type,
            system_node_count=cluster.system_node_count,
            tags=tags,
        ),
    )
    hyperpod = HyperPodCluster(
        "hyperpod",
        HyperPodClusterArgs(
            cluster_name=cluster.hyperpod_cluster_name,
            eks_cluster_arn=eks.cluster_arn,
            instance_groups=cluster.instance_groups,
            vpc_id=vpc_id,
            private_subnet_ids=private,
            eks_security_group_id=eks.cluster_security_group_id,
            image_repository_arns=image.repository_arns,
            k8s_provider=eks.provider,
            lifecycle_script=LIFECYCLE_SCRIPT,
            dependencies_chart=cluster.dependencies_chart,
            tags=tags,
        ),
    )
    operator = InferenceOperator(
        "operator",
        InferenceOperatorArgs(
            base_name=resource_base_name(config.stack),
            eks_cluster_name=eks.cluster_name,
            oidc_provider_arn=eks.oidc_provider_arn,
            oidc_issuer=eks.oidc_issuer,
            hyperpod_cluster_arn=hyperpod.cluster_arn,
            vpc_id=vpc_id,
            tags=tags,
            system_nodes=[eks.system_nodes],
        ),
    )
    # The CR itself must wait for the operator (its webhook and CRD): children do not inherit
    # a component's depends_on, so the image reference carries the dependency as data.
    after_operator = pulumi.Output.all(image.ref, operator.addon.arn).apply(lambda v: str(v[0]))
    return Platform(
        Image(after_operator, image.repository_arns),
        eks.provider,
        endpoint_depends_on=[operator.addon],
        outputs={
            "image": image.ref,
            "eksClusterName": eks.cluster_name,
            "hyperpodClusterArn": hyperpod.cluster_arn,
        },
    )
