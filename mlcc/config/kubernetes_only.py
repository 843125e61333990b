"""Kubernetes-only mode (hp:kubeconfig): a cluster reached by kubeconfig, where the HyperPod
inference operator already runs. The stack creates only Kubernetes objects and calls no AWS API,
so whatever needs AWS (an image build, a recommendation job, AMP) is refused here. Pure, like
the rest of `mlcc.config`: the file itself is read where it is used (the provider, the deploy
wait), so a kubeconfig refreshed by `aws eks update-kubeconfig` is read fresh.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mlcc.config.observability.settings import Target as ObservabilityTarget
from mlcc.config.reader import Reader
from mlcc.serving.engines import EngineRelease

if TYPE_CHECKING:
    from mlcc.config.endpoints import EndpointConfig

MODE = "in Kubernetes-only mode (hp:kubeconfig)"
WHY_IGNORED = "hp:kubeconfig selects a cluster that already exists"


@dataclass(frozen=True)
class KubeconfigCluster:
    kubeconfig: str  # the file's path as given (`~` is expanded where it is read)
    context: str  # "" = the file's current-context


def parse_cluster(reader: Reader, cluster_name: str) -> KubeconfigCluster:
    if cluster_name:
        reader.fail(
            "clusterName",
            "selects an existing HyperPod cluster through AWS, and hp:kubeconfig a cluster "
            "reached by kubeconfig alone; set one of them",
        )
    path = reader.string("kubeconfig").strip()
    if not path.isprintable():
        reader.fail("kubeconfig", f"is not a file path: {path!r}")
    return KubeconfigCluster(path, reader.string("kubeContext").strip())


@dataclass(frozen=True)
class Wanted:
    """What a stack asks for that this mode may not have (from the parsed StackConfig)."""

    image: str | None  # hp:image
    image_release: EngineRelease  # hp:engine's
    releases: Sequence[EngineRelease]  # each endpoint's, in order
    optimize: bool  # hp:optimize set
    observability: ObservabilityTarget
    capture: Sequence[str] = ()  # the hp:capture key of each endpoint that sets it


def check_stack(reader: Reader, config: Wanted) -> None:
    """What this mode cannot do: build an image, or create anything in AWS."""
    if not config.image:
        reader.fail(
            "image",
            f"is required {MODE}, which builds no image: set it to your serve image of "
            "hp:engine, pinned by digest (registry/repository@sha256:...)",
        )
    several = len(config.releases) > 1
    for index, release in enumerate(config.releases):
        if config.image and release != config.image_release:
            reader.fail(
                f"endpoints[{index}].engineVersion" if several else "engineVersion",
                f"runs {_release(release)}, but {MODE} the only image is "
                f"hp:image ({_release(config.image_release)}); give the endpoint hp:engine's "
                "engine and release",
            )
    if config.optimize:
        reader.fail(
            "optimize",
            f"runs a SageMaker AI recommendation job, which {MODE} does not create; set "
            "hp:speculative* yourself or remove hp:optimize",
        )
    for key in dict.fromkeys(config.capture):
        reader.fail(
            key,
            f"creates an S3 bucket and IAM for the captured traffic, which {MODE} does not "
            "create; remove it, or set hp:dataCapture with your own bucket's s3Uri",
        )
    if config.observability is ObservabilityTarget.AMP:
        reader.fail(
            "observability",
            f"target amp creates an AMP rule groups namespace in AWS, which {MODE} does not "
            "create; use prometheus-operator or file",
        )


def _release(release: EngineRelease) -> str:
    return f"{release.engine.value} {release.version}"


def capture_keys(endpoints: Sequence[EndpointConfig]) -> tuple[str, ...]:
    """The hp:capture key (without `hp:`) of each endpoint that sets it."""
    return tuple(
        f"{e.entry_path}.capture" if e.entry_path and "capture" in e.entry_fields else "capture"
        for e in endpoints
        if e.operator.capture is not None
    )
