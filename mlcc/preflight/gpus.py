"""GPU memory and compute capability per instance type: the vendored table
mlcc/config/aws/gpus.json (its `about` records the sources), the one the config's instance checks
read too. The memory fit takes a `GpuSpec` as an argument, so a value read from the account
(EC2 DescribeInstanceTypes) can replace the table's."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from mlcc.config.aws.instances import GPU_FAMILIES

MIB = 1024 * 1024


@dataclass(frozen=True)
class GpuSpec:
    name: str
    memory_mib: int
    compute_capability: tuple[int, int]

    @property
    def memory_bytes(self) -> int:
        return self.memory_mib * MIB

    @property
    def capability_text(self) -> str:
        return f"{self.compute_capability[0]}.{self.compute_capability[1]}"


@cache
def _families() -> dict[str, GpuSpec]:
    families: dict[str, GpuSpec] = {}
    for family, row in GPU_FAMILIES.items():
        major, minor = (int(part) for part in str(row["compute_capability"]).split("."))
        families[family] = GpuSpec(str(row["gpu"]), int(row["memory_mib"]), (major, minor))
    return families


def gpu_spec(instance_type: str) -> GpuSpec | None:
    """The GPU of `ml.<family>.<size>`, or None for a family the table does not hold."""
    parts = instance_type.split(".")
    return _families().get(parts[1]) if len(parts) == 3 and parts[0] == "ml" else None
