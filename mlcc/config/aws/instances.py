"""GPU counts and GPUs of the SageMaker instance types HyperPod offers (pure data).

The count sets the pod's `nvidia.com/gpu` request and the engines' tensor-parallel size.
A type missing here is refused unless `hp:gpuCount` says how many GPUs it has.
"""

from __future__ import annotations

import json
import re
from importlib import resources

INSTANCE_TYPE_PATTERN = re.compile(r"^ml\.[a-z0-9-]+\.[a-z0-9]+$")


def _family(name: str, counts: dict[str, int]) -> dict[str, int]:
    return {f"ml.{name}.{size}": gpus for size, gpus in counts.items()}


_G_SIZES = {
    "xlarge": 1,
    "2xlarge": 1,
    "4xlarge": 1,
    "8xlarge": 1,
    "16xlarge": 1,
    "12xlarge": 4,
    "24xlarge": 4,
    "48xlarge": 8,
}

GPU_COUNTS: dict[str, int] = {
    **_family("g5", _G_SIZES),
    **_family("g6", _G_SIZES),
    **_family("g6e", _G_SIZES),
    **_family(
        "g7e",
        {"2xlarge": 1, "4xlarge": 1, "8xlarge": 1, "12xlarge": 2, "24xlarge": 4, "48xlarge": 8},
    ),
    **_family(
        "g4dn",
        {"xlarge": 1, "2xlarge": 1, "4xlarge": 1, "8xlarge": 1, "16xlarge": 1, "12xlarge": 4},
    ),
    "ml.p4d.24xlarge": 8,
    "ml.p4de.24xlarge": 8,
    "ml.p5.4xlarge": 1,
    "ml.p5.48xlarge": 8,
    "ml.p5e.48xlarge": 8,
    "ml.p5en.48xlarge": 8,
    "ml.p6-b200.48xlarge": 8,
    "ml.p6-b300.48xlarge": 8,
    "ml.p6e-gb200.36xlarge": 4,
}


# The GPU of each family (model, memory per GPU in MiB, compute capability): gpus.json, whose
# `about` records the sources. Types of one endpoint's hp:instanceTypes must agree on the
# memory (the memory fit is made once per endpoint); preflight reads the same table
# (mlcc/preflight/gpus.py).
GPU_FAMILIES: dict[str, dict[str, str | int]] = json.loads(
    resources.files(__package__).joinpath("gpus.json").read_text()
)["families"]
GPU_MEMORY_MIB: dict[str, int] = {f: int(row["memory_mib"]) for f, row in GPU_FAMILIES.items()}

# EFA-capable SageMaker types among those HyperPod offers for GPU inference.
EFA_INSTANCE_TYPES = frozenset(
    {
        "ml.p4d.24xlarge",
        "ml.p4de.24xlarge",
        "ml.p5.48xlarge",
        "ml.p5e.48xlarge",
        "ml.p5en.48xlarge",
        "ml.p6-b200.48xlarge",
        "ml.p6-b300.48xlarge",
        "ml.g5.48xlarge",
        "ml.g6.48xlarge",
        "ml.g6e.24xlarge",
        "ml.g6e.48xlarge",
    }
)


def is_gpu_family(instance_type: str) -> bool:
    """An ml.g* or ml.p* type: AWS's accelerated-computing families with NVIDIA GPUs (trn and
    inf are Neuron accelerators, the others CPU types)."""
    parts = instance_type.split(".")
    return len(parts) == 3 and parts[1][:1] in ("g", "p")


def gpu_count(instance_type: str) -> int | None:
    return GPU_COUNTS.get(instance_type)


def gpu_memory_mib(instance_type: str) -> int | None:
    parts = instance_type.split(".")
    return GPU_MEMORY_MIB.get(parts[1]) if len(parts) == 3 else None
