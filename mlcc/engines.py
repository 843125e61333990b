"""The serving engines we support, the versions we pin, and what each version accepts.

Facts come from the engines' released sources (see ../shared/reference/engines.md). The serve
images are built FROM the official image at the pinned version; a prebuilt `hp:image` may carry
another known version, declared with `hp:engineVersion`, and is then validated against it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Engine(StrEnum):
    VLLM = "vllm"
    SGLANG = "sglang"


@dataclass(frozen=True)
class EngineRelease:
    """One released engine version and the speculative names it accepts on its command line."""

    engine: Engine
    version: str
    speculative_names: frozenset[str]

    @property
    def base_image(self) -> str:
        return f"{BASE_IMAGE_REPOSITORIES[self.engine]}:v{self.version}"


# The versions in the current AWS Deep Learning Containers: the same manifest then behaves the
# same on our images and on stock DLC images.
PINNED_VERSIONS: dict[Engine, str] = {Engine.VLLM: "0.27.1", Engine.SGLANG: "0.5.17"}

BASE_IMAGE_REPOSITORIES: dict[Engine, str] = {
    Engine.VLLM: "vllm/vllm-openai",
    Engine.SGLANG: "lmsysorg/sglang",
}

# The AWS DLC convention: SM_VLLM_FOO_BAR -> --foo-bar. It cannot collide with the engines'
# own VLLM_* / SGLANG_* environment variables.
ENV_PREFIXES: dict[Engine, str] = {Engine.VLLM: "SM_VLLM_", Engine.SGLANG: "SM_SGLANG_"}

# Both OpenAI-compatible servers answer GET /health with 200 once the model is loaded.
HEALTH_CHECK_PATHS: dict[Engine, str] = {Engine.VLLM: "/health", Engine.SGLANG: "/health"}

_VLLM_COMMON = frozenset(
    {"eagle", "eagle3", "draft_model", "dflash", "mtp", "dspark", "ngram", "ngram_gpu", "suffix"}
    | {"extract_hidden_states"}
)
_SGLANG_0_5_2 = frozenset({"EAGLE", "EAGLE3", "NEXTN", "STANDALONE"})
_SGLANG_0_5_3 = _SGLANG_0_5_2 | {"NGRAM"}
_SGLANG_0_5_12 = _SGLANG_0_5_3 | {"DFLASH", "FROZEN_KV_MTP"}
_SGLANG_0_5_17 = _SGLANG_0_5_12 | {"DSPARK"}

RELEASES: dict[Engine, dict[str, EngineRelease]] = {
    Engine.VLLM: {
        "0.27.1": EngineRelease(
            Engine.VLLM, "0.27.1", _VLLM_COMMON | {"medusa", "mlp_speculator", "custom_class"}
        ),
        "0.34.0": EngineRelease(Engine.VLLM, "0.34.0", _VLLM_COMMON),
    },
    Engine.SGLANG: {
        "0.5.2": EngineRelease(Engine.SGLANG, "0.5.2", _SGLANG_0_5_2),
        "0.5.3": EngineRelease(Engine.SGLANG, "0.5.3", _SGLANG_0_5_3),
        "0.5.8": EngineRelease(Engine.SGLANG, "0.5.8", _SGLANG_0_5_3),
        "0.5.12": EngineRelease(Engine.SGLANG, "0.5.12", _SGLANG_0_5_12),
        "0.5.17": EngineRelease(Engine.SGLANG, "0.5.17", _SGLANG_0_5_17),
        "0.5.23": EngineRelease(Engine.SGLANG, "0.5.23", _SGLANG_0_5_17 | {"UNO"}),
    },
}


def release(engine: Engine, version: str | None = None) -> EngineRelease:
    """The release for `version`, or the pinned one. Raises KeyError for an unknown version."""
    return RELEASES[engine][version or PINNED_VERSIONS[engine]]


def pinned(engine: Engine) -> EngineRelease:
    return release(engine)


def known_versions(engine: Engine) -> list[str]:
    return list(RELEASES[engine])
