"""Builds what the endpoints run on, in create, existing-cluster or Kubernetes-only mode.

Kept out of __main__.py so the program stays a few lines. Order is by data, not by hand:
the image builds, IAM and S3 need nothing from the cluster and run in parallel with it; the
endpoints wait for the operator add-on (an explicit depends_on) and their pushed image (its
digest). One serve image per engine release in use, shared by the endpoints of that release.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pulumi
import pulumi_kubernetes as k8s

from mlcc.components.capture import CaptureBucket, CaptureBucketArgs, CaptureTarget
from mlcc.components.cluster import existing as existing_cluster
from mlcc.components.cluster import iam_policies
from mlcc.components.cluster.access import (
    ExistingClusterAccess,
    ExistingClusterAccessArgs,
    KubeconfigAccess,
    KubeconfigAccessArgs,
)
from mlcc.components.cluster.eks import EksCluster, EksClusterArgs
from mlcc.components.cluster.hyperpod import HyperPodCluster, HyperPodClusterArgs
from mlcc.components.cluster.network import Network, NetworkArgs
from mlcc.components.images import ServeImage, ServeImageArgs
from mlcc.components.operator import (
    EXECUTION_ROLE_PREFIX,
    InferenceOperator,
    InferenceOperatorArgs,
)
from mlcc.config.infrastructure import (
    ExistingCluster,
    NewCluster,
    NewNetwork,
    resource_base_name,
)
from mlcc.config.kubernetes_only import KubeconfigCluster
from mlcc.config.refusal import refuse
from mlcc.config.stack import StackConfig
from mlcc.deploy.kubeconfig import AccessError, api_client
from mlcc.preflight.run import PROGRAM
from mlcc.serving.engines import EngineRelease

REPO_ROOT = Path(__file__).resolve().parents[2]
IMAGES_DIR = REPO_ROOT / "images"
LIFECYCLE_SCRIPT = REPO_ROOT / "infra" / "lifecycle" / "on_create.sh"


@dataclass(frozen=True)
class Image:
    ref: pulumi.Output[str]
    repository_arns: pulumi.Output[list[str]]


@dataclass
class Platform:
    """What the endpoints need: their images and how to reach the cluster."""

    images: dict[EngineRelease, Image]
    k8s_provider: k8s.Provider
    # Of k8s_provider, for the deploy wait: the kubeconfig as JSON, or a kubeconfig file's path
    # (Kubernetes-only mode) whose context is `kube_context` ("" = its current-context).
    kubeconfig: pulumi.Output[str]
    kube_context: str = ""
    endpoint_depends_on: list[pulumi.Resource] = field(default_factory=list)
    outputs: dict[str, pulumi.Output[str]] = field(default_factory=dict)
    # The inference operator's execution role when the stack created it (create mode).
    operator_role_name: pulumi.Output[str] | None = None
    # The cluster's OIDC provider ARN and issuer, when the program creates the cluster (IRSA).
    oidc: tuple[pulumi.Output[str], pulumi.Output[str]] | None = None
    # The instance groups' execution role, when the stack creates it (hp:draftTraining's S3).
    node_role_arn: pulumi.Output[str] | None = None


@dataclass(frozen=True)
class Captured:
    """hp:capture's bucket: each capturing endpoint's s3Uri, and what its CR waits for."""

    uris: dict[str, pulumi.Output[str]] = field(default_factory=dict)
    depends_on: list[pulumi.Resource] = field(default_factory=list)


def build(config: StackConfig) -> Platform:
    cluster = config.infrastructure.cluster
    if isinstance(cluster, KubeconfigCluster):
        return _kubernetes_only(config, cluster)
    if isinstance(cluster, ExistingCluster):
        return _existing(config, cluster)
    return _create(config, cluster, build_images(config))


def capture(config: StackConfig, platform: Platform) -> Captured:
    """The bucket of the endpoints with hp:capture (Kubernetes-only mode refuses the key)."""
    targets = [
        CaptureTarget(e.name, e.operator.capture.retention_days)
        for e in config.endpoints
        if e.operator.capture is not None
    ]
    if not targets:
        return Captured()
    args = CaptureBucketArgs(
        targets,
        config.infrastructure.tag_map,
        platform.operator_role_name,
        EXECUTION_ROLE_PREFIX,
    )
    bucket = CaptureBucket("capture", args)
    platform.outputs["captureBucket"] = bucket.bucket_name
    return Captured(bucket.uris, [bucket])


def _existing(config: StackConfig, cluster: ExistingCluster) -> Platform:
    existing = existing_cluster.lookup(cluster.name_or_arn, region=config.region or None)
    wanted = sorted({e.instance_type for e in config.endpoints})
    existing.instance_types.apply(lambda types: _warn_if_types_missing(wanted, types))
    images = build_images(config, pull_role_arns=existing.execution_role_arns)
    access = ExistingClusterAccess("existing-cluster", ExistingClusterAccessArgs(existing))
    # The same outputs as create mode, so `aws eks update-kubeconfig` works in both.
    outputs = {**_image_outputs(images), "eksClusterName": existing.eks_cluster_name}
    return Platform(images, access.provider, access.kubeconfig, outputs=outputs)


def _kubernetes_only(config: StackConfig, cluster: KubeconfigCluster) -> Platform:
    """Only Kubernetes objects: hp:image (required here) serves every endpoint."""
    if PROGRAM.enabled:  # not under `mlcc plan`'s mocks, which read no file of the user's
        _check_kubeconfig(cluster.kubeconfig, cluster.context)
    images = build_images(config)
    # As the stack gives it, for the provider and the deploy wait: both expand `~` themselves
    # (the deploy wait through mlcc/deploy/kubeconfig/sources.py), and the state is the same on
    # every machine.
    access = KubeconfigAccess(
        "kubeconfig-cluster", KubeconfigAccessArgs(cluster.kubeconfig, cluster.context)
    )
    kubeconfig = pulumi.Output.from_input(cluster.kubeconfig)
    return Platform(
        images, access.provider, kubeconfig, cluster.context, outputs=_image_outputs(images)
    )


def _check_kubeconfig(path: str, context: str) -> None:
    """A kubeconfig the provider cannot read makes it treat the cluster as unreachable and
    preview nothing: one clear error instead, before anything is created."""
    try:
        api_client(path, context or None)
    except AccessError as error:
        key = "hp:kubeContext" if context and "context" in str(error) else "hp:kubeconfig"
        refuse([f"{key}: {error}"])


def _warn_if_types_missing(wanted: list[str], available: list[str]) -> None:
    for instance_type in wanted:
        existing_cluster.warn_if_type_missing(instance_type, available)


def build_images(
    config: StackConfig, *, pull_role_arns: pulumi.Input[Sequence[str]] | None = None
) -> dict[EngineRelease, Image]:
    """One image per engine release the endpoints use; the top-level one may be prebuilt."""
    releases = list(dict.fromkeys(e.engine_release for e in config.endpoints))
    images: dict[EngineRelease, Image] = {}
    for release in releases:
        if config.image and release == config.image_release:
            images[release] = _prebuilt(config.image)
        else:
            images[release] = _built(config, release, images, pull_role_arns)
    return images


def _prebuilt(image: str) -> Image:
    arn = iam_policies.ecr_repository_arn(image)
    return Image(pulumi.Output.from_input(image), pulumi.Output.from_input([arn] if arn else []))


def _built(
    config: StackConfig,
    release: EngineRelease,
    earlier: dict[EngineRelease, Image],
    pull_role_arns: pulumi.Input[Sequence[str]] | None,
) -> Image:
    """`image` (repository <base>/<engine>) for the first; later ones are named by release."""
    base = resource_base_name(config.stack).lower()
    same_engine = any(r.engine is release.engine for r in earlier)
    repository = f"{base}/{release.engine.value}"
    if same_engine:
        repository += f"-{release.version}"
    name = "image" if not earlier else "image-" + repository.rsplit("/", 1)[1].replace(".", "-")
    built = ServeImage(
        name,
        ServeImageArgs(
            engine=release.engine,
            engine_version=release.version,
            images_dir=IMAGES_DIR,
            repository_name=repository,
            tags=config.infrastructure.tag_map,
            pull_role_arns=pull_role_arns,
        ),
    )
    return Image(built.image_ref, built.repository_arn.apply(lambda arn: [arn]))


def _image_outputs(images: dict[EngineRelease, Image]) -> dict[str, pulumi.Output[str]]:
    """`image` for the first image (as single-engine stacks always had), `image-<engine>-<v>`."""
    outputs: dict[str, pulumi.Output[str]] = {}
    for index, (release, image) in enumerate(images.items()):
        key = "image" if index == 0 else f"image-{release.engine.value}-{release.version}"
        outputs[key] = image.ref
    return outputs


def _create(
    config: StackConfig, cluster: NewCluster, images: dict[EngineRelease, Image]
) -> Platform:
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
            image_repository_arns=pulumi.Output.all(
                *(image.repository_arns for image in images.values())
            ).apply(lambda lists: [arn for arns in lists for arn in arns]),
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
    return Platform(
        images,
        eks.provider,
        eks.kubeconfig,
        endpoint_depends_on=[operator.addon],
        oidc=(eks.oidc_provider_arn, eks.oidc_issuer),
        outputs={
            **_image_outputs(images),
            "eksClusterName": eks.cluster_name,
            "hyperpodClusterArn": hyperpod.cluster_arn,
        },
        operator_role_name=operator.execution_role_name,
        node_role_arn=hyperpod.execution_role_arn,
    )
