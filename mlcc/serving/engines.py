"""The serving engines we support, their supported releases, and what each release accepts.

A typed layer over `mlcc.engine_contract`, which holds the data (it is shared with the serve
images). `hp:engineVersion` selects one of the supported releases (the pinned one by default):
the serve image is built FROM the official image of that release, or a prebuilt `hp:image`
declares it, and every check then uses that release's own tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from mlcc import engine_contract as contract


class Engine(StrEnum):
    VLLM = contract.VLLM
    SGLANG = contract.SGLANG


@dataclass(frozen=True)
class EngineRelease:
    """One released engine version and the speculative names it accepts on its command line."""

    engine: Engine
    version: str
    speculative_names: frozenset[str]

    @property
    def base_image(self) -> str:
        return f"{BASE_IMAGE_REPOSITORIES[self.engine]}:v{self.version}"


PINNED_VERSIONS: dict[Engine, str] = {e: contract.PINNED_VERSIONS[e] for e in Engine}
BASE_IMAGE_REPOSITORIES: dict[Engine, str] = {
    e: contract.BASE_IMAGE_REPOSITORIES[e] for e in Engine
}
ENV_PREFIXES: dict[Engine, str] = {e: contract.ENV_PREFIXES[e] for e in Engine}
HEALTH_CHECK_PATHS: dict[Engine, str] = {e: contract.HEALTH_CHECK_PATHS[e] for e in Engine}

RELEASES: dict[Engine, dict[str, EngineRelease]] = {
    engine: {
        version: EngineRelease(engine, version, names)
        for version, names in contract.SPECULATIVE_NAMES[engine].items()
    }
    for engine in Engine
}


def release(engine: Engine, version: str | None = None) -> EngineRelease:
    """The release for `version`, or the pinned one. Raises KeyError for an unknown version."""
    return RELEASES[engine][version or PINNED_VERSIONS[engine]]


def known_versions(engine: Engine) -> list[str]:
    return list(RELEASES[engine])
