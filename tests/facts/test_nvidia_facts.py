"""mlcc/facts/nvidia.py and engine_images.json: every value has its row, with a source, in
docs/nvidia-facts.md."""

from __future__ import annotations

from pathlib import Path

from mlcc.config.aws import cuda_fit
from mlcc.facts import nvidia

PAGE = Path(__file__).resolve().parents[2] / "docs" / "nvidia-facts.md"


def rows(first_cell: str) -> list[str]:
    return [line for line in PAGE.read_text().splitlines() if line.startswith(f"| {first_cell}")]


def test_every_hyperpod_ami_has_its_row() -> None:
    for ami in nvidia.HYPERPOD_EKS_AMIS:
        (row,) = rows(f"`{ami.version}`")
        for value in (ami.latest_patch, ami.nvidia_driver, ami.cuda_toolkit):
            assert f"`{value}`" in row, (value, row)
        assert ami.first_released in row
        assert row.rstrip(" |").endswith("AMI policy")


def test_every_minimum_driver_has_its_row() -> None:
    for major, driver in nvidia.MINIMUM_DRIVER_BY_CUDA_MAJOR.items():
        (row,) = rows(f"{major}.x")
        assert f"`{driver}`" in row and "NVIDIA minor" in row


def test_every_engine_image_has_its_row_with_its_source() -> None:
    names = {"vllm": "vLLM", "sglang": "SGLang"}
    for image in nvidia.ENGINE_IMAGES:
        (row,) = rows(f"{names[image.engine]} `{image.version}`")
        assert f"`{image.base_image}`" in row
        if image.cuda is None:
            assert "| unknown |" in row
            continue
        assert f"`{image.cuda}`" in row
        repository, tag, place = image.source.split(" ")
        path, line = place.rsplit(":", 1)
        assert f"`{repository}` `{tag}` `{path}` line {line}" in row


def test_the_rule_picks_the_amis_the_page_names() -> None:
    text = " ".join(PAGE.read_text().split())
    assert f"`{nvidia.NEWEST_AMI.nvidia_driver}` ({nvidia.NEWEST_AMI.version}, the newest)" in text
    lowest = cuda_fit.LOWEST_DRIVER_AMI
    assert f"`{lowest.nvidia_driver}` ({lowest.version}, the lowest driver)" in text
