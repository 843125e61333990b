"""The plan headline's word on an engine image whose CUDA version is unknown (docs/nvidia-facts.md).

The NVIDIA driver check (mlcc/config/aws/cuda_fit.py) refuses an image the nodes' driver cannot
run only when the image's CUDA version has a source (mlcc/facts/engine_images.json). For a
release without one (the SGLang images: their Dockerfiles at the release tags were not read) the
check cannot fire, and the headline says so rather than let silence read as a pass.
"""

from __future__ import annotations

from mlcc.facts import nvidia


def unknown_cuda_line(engine: str, version: str) -> str | None:
    """One headline line when the release's image CUDA version is unknown; None otherwise."""
    for image in nvidia.ENGINE_IMAGES:
        if (image.engine, image.version) == (engine, version) and image.cuda is None:
            return f"  image CUDA: unknown ({image.base_image}): no NVIDIA driver check"
    return None
