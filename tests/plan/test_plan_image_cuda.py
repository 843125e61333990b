"""An engine release whose image CUDA version has no source says so in the plan headline: the
NVIDIA driver check cannot fire for it (issue #43 item 5d)."""

from __future__ import annotations

from mlcc.facts import nvidia
from mlcc.plan.image_cuda import unknown_cuda_line


def test_every_release_without_a_cuda_source_is_named_and_no_other() -> None:
    for image in nvidia.ENGINE_IMAGES:
        line = unknown_cuda_line(image.engine, image.version)
        if image.cuda is None:
            assert line is not None and line.startswith("  image CUDA: unknown (")
            assert image.base_image in line and line.endswith("no NVIDIA driver check")
            assert len(line) <= 100
        else:
            assert line is None


def test_the_sglang_images_are_still_unknown() -> None:
    sglang = [i for i in nvidia.ENGINE_IMAGES if i.engine == "sglang"]
    assert sglang and all(i.cuda is None for i in sglang)
    assert unknown_cuda_line("sglang", sglang[-1].version) is not None
