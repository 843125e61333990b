"""Whether each endpoint's engine image runs on the nodes' NVIDIA driver (docs/nvidia-facts.md).

An image built for CUDA X.Y needs a driver at least the minimum NVIDIA gives for CUDA X.x under
minor version compatibility (CUDA 13.x: >= 580); an older driver fails at start with "CUDA
driver version is insufficient for CUDA runtime version". The nodes' driver is the HyperPod AMI's
(mlcc/facts/nvidia.py): the newest AMI for a cluster this program creates, the lowest driver of
the supported AMIs for an existing cluster (hp:clusterName), or hp:nvidiaDriverVersion when set.
Nothing is refused when the image's CUDA version is unknown: a release whose Dockerfile was not
read. A prebuilt hp:image is judged by the release its tag names, as a warning
(mlcc/config/image_tag.py), else not at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mlcc.config.reader import Reader
from mlcc.engine_contract import version_key
from mlcc.facts import nvidia

DRIVER_KEY = "nvidiaDriverVersion"
_DRIVER = re.compile(r"^\d{3,4}(\.\d{1,3}){0,2}$")


# A cluster this program creates gets the newest AMI; an existing cluster may run any supported
# one, so without hp:nvidiaDriverVersion the rule assumes the lowest driver of the table.
LOWEST_DRIVER_AMI = min(nvidia.HYPERPOD_EKS_AMIS, key=lambda ami: version_key(ami.nvidia_driver))


@dataclass(frozen=True)
class NodeDriver:
    """The driver the rule assumes on the nodes, and where that figure comes from."""

    version: str
    origin: str

    @property
    def branch(self) -> int:
        return int(self.version.split(".")[0])


def node_driver(reader: Reader, *, existing_cluster: bool) -> NodeDriver | None:
    """hp:nvidiaDriverVersion, else the HyperPod AMI's driver; None when the key is invalid."""
    stated = reader.string(DRIVER_KEY)
    if stated:
        if not _DRIVER.match(stated):
            reader.fail(
                DRIVER_KEY,
                f"must be an NVIDIA driver version such as 580.126.09 (nvidia-smi shows it), "
                f"got {stated!r}",
            )
            return None
        return NodeDriver(stated, f"hp:{DRIVER_KEY}")
    ami = LOWEST_DRIVER_AMI if existing_cluster else nvidia.NEWEST_AMI
    which = "the lowest of the supported" if existing_cluster else "the newest"
    return NodeDriver(
        ami.nvidia_driver,
        f"{which} HyperPod EKS AMI ({ami.version}, {nvidia.HYPERPOD_AMI_SOURCE})",
    )


def needed_driver(cuda: str) -> int | None:
    """The lowest driver branch that runs an image of this CUDA version; None when unknown."""
    major = int(cuda.split(".")[0])
    return nvidia.MINIMUM_DRIVER_BY_CUDA_MAJOR.get(major)


def image_of(engine: str, version: str) -> nvidia.EngineImage | None:
    for image in nvidia.ENGINE_IMAGES:
        if (image.engine, image.version) == (engine, version):
            return image
    return None


def fitting_release(engine: str, driver: NodeDriver) -> str | None:
    """The newest supported release of `engine` whose image's CUDA version this driver runs."""
    fits = [
        image.version
        for image in nvidia.ENGINE_IMAGES
        if image.engine == engine
        and image.cuda is not None
        and (needed := needed_driver(image.cuda)) is not None
        and driver.branch >= needed
    ]
    return max(fits, key=version_key, default=None)


def problem(engine: str, version: str, driver: NodeDriver) -> str | None:
    """Why the image of engine `version` cannot start on `driver`; None when it can or when
    its CUDA version is unknown."""
    image = image_of(engine, version)
    if image is None or image.cuda is None:
        return None
    needed = needed_driver(image.cuda)
    if needed is None or driver.branch >= needed:
        return None
    fit = fitting_release(engine, driver)
    advice = (
        f"set it to {fit}, the newest supported {engine} release whose image this driver runs"
        if fit
        else f"no supported {engine} release runs on it; move the nodes to a newer HyperPod AMI"
    )
    return (
        f"{engine} {version}'s image {image.base_image} is built for CUDA {image.cuda} "
        f"({image.source}), which needs an NVIDIA driver >= {needed} "
        f"({nvidia.CUDA_DRIVER_SOURCE}); "
        f"the nodes' driver is {driver.version} ({driver.origin}): {advice}, or set "
        f"hp:{DRIVER_KEY} if the nodes run a newer driver"
    )


def check(reader: Reader, engine: str, version: str, driver: NodeDriver | None) -> None:
    """Refuse, on the endpoint's hp:engineVersion, an image the nodes' driver cannot run."""
    if driver is None:
        return
    message = problem(engine, version, driver)
    if message:
        reader.fail("engineVersion", message)
