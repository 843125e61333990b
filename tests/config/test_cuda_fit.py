"""The engine image against the nodes' NVIDIA driver: judged with the published HyperPod AMI
drivers and NVIDIA's minimum driver per CUDA version (mlcc/facts/nvidia.py)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from mlcc.config.aws import cuda_fit
from mlcc.config.stack import ConfigError, parse
from mlcc.facts import nvidia
from mlcc.serving.engines import RELEASES, Engine

BASE = {
    "hp:model": "meta-llama/Llama-3.1-8B-Instruct",
    "aws:region": "us-east-1",
    "aws-native:region": "us-east-1",
}
CLUSTER = "arn:aws:sagemaker:us-east-1:123456789012:cluster/a1b2c3d4e5f6"
KNOWN = [image for image in nvidia.ENGINE_IMAGES if image.cuda is not None]
DIGEST = "123456789012.dkr.ecr.us-east-1.amazonaws.com/serve@sha256:" + "a" * 64


def problems(values: dict[str, str]) -> list[str]:
    with pytest.raises(ConfigError) as raised:
        parse({**BASE, **values}, stack="dev")
    return [str(p) for p in raised.value.problems]


def release_keys(image: nvidia.EngineImage) -> dict[str, str]:
    return {"hp:engine": image.engine, "hp:engineVersion": image.version}


def below(image: nvidia.EngineImage) -> str:
    """A driver one branch older than the image's CUDA version needs."""
    needed = cuda_fit.needed_driver(image.cuda or "")
    assert needed is not None
    return f"{needed - 1}.10.01"


def test_the_facts_cover_every_supported_release_with_the_programs_base_image() -> None:
    assert KNOWN, "no engine image has a known CUDA version"
    for image in nvidia.ENGINE_IMAGES:
        release = RELEASES[Engine(image.engine)][image.version]
        assert image.base_image == release.base_image
        assert image.source.startswith(("vllm-project/vllm v", "sgl-project/sglang v"))


@pytest.mark.parametrize("existing", [False, True])
@pytest.mark.parametrize("image", KNOWN, ids=lambda i: f"{i.engine}-{i.version}")
def test_releases_that_fit_the_published_hyperpod_driver_pass(
    image: nvidia.EngineImage, existing: bool
) -> None:
    ami = cuda_fit.LOWEST_DRIVER_AMI if existing else nvidia.NEWEST_AMI
    driver = cuda_fit.NodeDriver(ami.nvidia_driver, ami.version)
    needed = cuda_fit.needed_driver(image.cuda or "")
    values = {**release_keys(image), **({"hp:clusterName": CLUSTER} if existing else {})}
    if needed is not None and driver.branch >= needed:
        parse({**BASE, **values}, stack="dev")  # accepted
    else:  # the published driver is too old for this image: refused on its key
        assert any(p.startswith("hp:engineVersion: ") for p in problems(values))


@pytest.mark.parametrize("image", KNOWN, ids=lambda i: f"{i.engine}-{i.version}")
def test_an_older_driver_is_refused_naming_both_versions(image: nvidia.EngineImage) -> None:
    driver = below(image)
    found = problems({**release_keys(image), "hp:nvidiaDriverVersion": driver})
    lines = [p for p in found if p.startswith("hp:engineVersion: ")]
    assert len(lines) == 1, found
    needed = cuda_fit.needed_driver(image.cuda or "")
    assert f"CUDA {image.cuda}" in lines[0]
    assert f"driver >= {needed}" in lines[0]
    assert f"the nodes' driver is {driver}" in lines[0]
    assert image.source in lines[0]


def test_the_refusal_names_the_newest_release_that_fits(monkeypatch: pytest.MonkeyPatch) -> None:
    newest = max(
        (i for i in KNOWN if i.engine == "vllm"),
        key=lambda i: tuple(int(p) for p in i.version.split(".")),
    )
    older = [i for i in nvidia.ENGINE_IMAGES if i.engine == "vllm" and i != newest]
    assert older, "needs two vLLM releases"
    # The older release's image as if it were built for CUDA 12.8 (a constructed table, not a
    # fact): a 12.x driver runs it and not the newest release's CUDA 13 image.
    table = (*(replace(i, cuda="12.8") for i in older), newest)
    monkeypatch.setattr(nvidia, "ENGINE_IMAGES", table)
    needed_12 = cuda_fit.needed_driver("12.8")
    assert needed_12 is not None
    driver = f"{needed_12}.105.17"
    found = problems({**release_keys(newest), "hp:nvidiaDriverVersion": driver})
    (line,) = [p for p in found if p.startswith("hp:engineVersion: ")]
    fit = max((i.version for i in older), key=lambda v: tuple(int(p) for p in v.split(".")))
    assert f"set it to {fit}" in line
    # and that release passes on the same driver
    parse({**BASE, "hp:engineVersion": fit, "hp:nvidiaDriverVersion": driver}, stack="dev")


def test_no_release_fits_says_so() -> None:
    image = KNOWN[0]
    driver = f"{min(nvidia.MINIMUM_DRIVER_BY_CUDA_MAJOR.values()) - 1}.1"
    (line,) = [
        p
        for p in problems({**release_keys(image), "hp:nvidiaDriverVersion": driver})
        if p.startswith("hp:engineVersion: ")
    ]
    assert f"no supported {image.engine} release runs on it" in line


def test_each_endpoint_is_judged_on_its_own_key() -> None:
    image = KNOWN[0]
    entry = {"engine": image.engine, "engineVersion": image.version}
    endpoints = json.dumps([{"name": "a", **entry}, {"name": "b", **entry}])
    found = problems({"hp:endpoints": endpoints, "hp:nvidiaDriverVersion": below(image)})
    assert [p.split(":")[1] for p in found if "engineVersion: " in p] == [
        "endpoints[0].engineVersion",
        "endpoints[1].engineVersion",
    ]


def test_a_prebuilt_image_whose_tag_names_no_release_is_not_judged() -> None:
    image = KNOWN[0]
    values = {**release_keys(image), "hp:image": DIGEST, "hp:nvidiaDriverVersion": below(image)}
    parsed = parse({**BASE, **values}, stack="dev")
    assert [w for w in parsed.warnings if w.key == "hp:image"] == []


def test_a_prebuilt_image_is_judged_by_the_release_its_tag_names() -> None:
    """The tag's release's image CUDA against the driver: a warning on hp:image (a tag is a
    name, not proof), and the release itself is not refused on hp:engineVersion."""
    image = KNOWN[0]
    tagged = f"{image.base_image}@sha256:{'a' * 64}"
    values = {**release_keys(image), "hp:image": tagged, "hp:nvidiaDriverVersion": below(image)}
    parsed = parse({**BASE, **values}, stack="dev")
    (line,) = [str(w) for w in parsed.warnings if w.key == "hp:image"]
    assert line.startswith(
        f"hp:image: its tag names {image.engine} {image.version}: {image.engine} "
        f"{image.version}'s image {image.base_image} is built for CUDA {image.cuda} "
    )
    assert "set hp:nvidiaDriverVersion if the nodes run a newer driver" in line


def test_an_unknown_cuda_version_is_not_judged(monkeypatch: pytest.MonkeyPatch) -> None:
    image = KNOWN[0]
    driver = below(image)
    monkeypatch.setattr(nvidia, "ENGINE_IMAGES", (replace(image, cuda=None),))
    parse({**BASE, **release_keys(image), "hp:nvidiaDriverVersion": driver}, stack="dev")


@pytest.mark.parametrize("driver", ["580", "580.126", "580.126.09", "1000.1.1"])
def test_driver_spellings_accepted(driver: str) -> None:
    assert cuda_fit.NodeDriver(driver, "").branch == int(driver.split(".")[0])
    parse({**BASE, "hp:nvidiaDriverVersion": driver}, stack="dev")  # every image fits


@pytest.mark.parametrize("driver", ["latest", "v580", "580.x", "58", "580..1", "5800000.1"])
def test_bad_driver_versions_are_one_clear_line(driver: str) -> None:
    found = problems({"hp:nvidiaDriverVersion": driver})
    assert [p for p in found if p.startswith("hp:nvidiaDriverVersion: ")], found


def test_an_existing_cluster_assumes_the_lowest_supported_ami_driver() -> None:
    lowest = min(
        (ami.nvidia_driver for ami in nvidia.HYPERPOD_EKS_AMIS),
        key=lambda v: tuple(int(p) for p in v.split(".")),
    )
    assert cuda_fit.LOWEST_DRIVER_AMI.nvidia_driver == lowest
    assert nvidia.HYPERPOD_EKS_AMIS[0] == nvidia.NEWEST_AMI
