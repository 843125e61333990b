"""Engines, supported and pinned releases, the SM_<ENGINE>_* variable names, and the speculative
names each release accepts (engine_flags.json, generated from the releases' wheels)."""

from __future__ import annotations

from typing import Final

from .flag_tables import RELEASE_TABLES, FlagTable, Parameter
from .values import shown_value

# --- engines, versions, variable names --------------------------------------------------------

VLLM: Final = "vllm"
SGLANG: Final = "sglang"
ENGINES: Final = (VLLM, SGLANG)

# The default release of each engine (hp:engineVersion unset): the versions in the current AWS
# Deep Learning Containers, so the same manifest behaves the same on our images and on stock
# DLC images. Every supported release (SUPPORTED_VERSIONS) has its own generated tables.
PINNED_VERSIONS: Final = {VLLM: "0.27.1", SGLANG: "0.5.17"}
BASE_IMAGE_REPOSITORIES: Final = {VLLM: "vllm/vllm-openai", SGLANG: "lmsysorg/sglang"}

# The AWS DLC convention: SM_VLLM_FOO_BAR -> --foo-bar. It cannot collide with the engines'
# own VLLM_* / SGLANG_* environment variables.
ENV_PREFIXES: Final = {VLLM: "SM_VLLM_", SGLANG: "SM_SGLANG_"}
# Both OpenAI-compatible servers answer GET /health with 200 once the model is loaded.
HEALTH_CHECK_PATHS: Final = {VLLM: "/health", SGLANG: "/health"}

ENGINE_ENV: Final = "MLCC_ENGINE"
ENGINE_VERSION_ENV: Final = "MLCC_ENGINE_VERSION"
ALGORITHM_ENV: Final = "HP_SPECULATIVE_ALGORITHM"
# Set by the HyperPod operator (and the DLC convention) for Hub models, in this order.
HUB_MODEL_ENVS: Final = ("HF_MODEL_ID", "MODEL_ID")

MODEL_FLAGS: Final = {VLLM: "model", SGLANG: "model-path"}
SERVED_NAME_FLAG: Final = "served-model-name"
TENSOR_PARALLEL_FLAGS: Final = {VLLM: "tensor-parallel-size", SGLANG: "tp-size"}


def env_variable(engine: str, flag: str) -> str:
    """The DLC variable for a flag: (vllm, max-model-len) -> SM_VLLM_MAX_MODEL_LEN."""
    return ENV_PREFIXES[engine] + flag.lstrip("-").upper().replace("-", "_")


MODEL_VARIABLES: Final = {engine: env_variable(engine, MODEL_FLAGS[engine]) for engine in ENGINES}


def engine_problem(name: str | None) -> str | None:
    """Why `name` (MLCC_ENGINE, hp:engine) is not an engine; case and whitespace do not matter."""
    choices = " or ".join(ENGINES)
    if name is None:
        return f"is not set; set it to {choices}"
    if name.strip().lower() in ENGINES:
        return None
    return f"must be {choices}, not {shown_value(name)}"


# --- the supported releases and their speculative names (engine_flags.json) -------------------

if sorted(RELEASE_TABLES) != sorted(ENGINES) or any(
    PINNED_VERSIONS[engine] not in RELEASE_TABLES[engine] for engine in ENGINES
):
    raise ValueError("engine_flags.json must hold both engines and their pinned releases")

# engine -> the releases whose tables engine_flags.json holds, oldest first.
SUPPORTED_VERSIONS: Final = {engine: tuple(RELEASE_TABLES[engine]) for engine in ENGINES}

# engine -> version -> the vLLM `method` / SGLang `--speculative-algorithm` names it accepts:
# vLLM's SpeculativeMethod Literal, SGLang's builtin SpeculativeAlgorithm names (generated from
# each release's wheel by scripts/engine_flags.py).
SPECULATIVE_NAMES: Final[dict[str, dict[str, frozenset[str]]]] = {
    engine: {v: t.speculative_names for v, t in RELEASE_TABLES[engine].items()}
    for engine in ENGINES
}
# engine -> version -> accepted names the release logs as deprecated and rewrites (vLLM's
# model-specific MTP names, "deprecated and replaced with mtp"): left out of suggestions.
DEPRECATED_NAMES: Final[dict[str, dict[str, frozenset[str]]]] = {
    engine: {v: t.deprecated_names for v, t in RELEASE_TABLES[engine].items()} for engine in ENGINES
}


def release_table(engine: str, version: str | None = None) -> FlagTable:
    """The tables of a supported release (the pinned one when None); KeyError for another."""
    return RELEASE_TABLES[engine][version or PINNED_VERSIONS[engine]]


def version_problem(engine: str, version: str | None) -> str | None:
    """Why `version` (hp:engineVersion, MLCC_ENGINE_VERSION) is not a supported release."""
    if version is None or version in RELEASE_TABLES[engine]:
        return None
    supported = ", ".join(SUPPORTED_VERSIONS[engine])
    return (
        f"{engine} {shown_value(version)} is not a supported release (its flags and names are "
        f"unknown); supported: {supported}"
    )


def speculative_parameters(engine: str, version: str | None = None) -> dict[str, Parameter]:
    """The release's speculative parameters: vLLM SpeculativeConfig fields, SGLang flags."""
    return dict(release_table(engine, version).speculative_parameters)


def suggested_names(engine: str, version: str | None = None) -> list[str]:
    """The accepted names worth suggesting (the deprecated ones left out), sorted."""
    table = release_table(engine, version)
    return sorted(table.speculative_names - table.deprecated_names)


# vLLM methods that load a separate draft and fail without `model`.
VLLM_METHODS_NEEDING_MODEL: Final = frozenset(
    {"eagle", "eagle3", "draft_model", "dflash", "medusa", "mlp_speculator", "custom_class"}
)
# vLLM methods with no draft config to take n_predict from.
VLLM_METHODS_NEEDING_TOKENS: Final = frozenset({"ngram", "ngram_gpu", "mtp"})
# vLLM's shorthand forms of SpeculativeConfig fields.
VLLM_SPEC_SHORTHANDS: Final = {
    "spec-method": "method",
    "spec-model": "model",
    "spec-tokens": "num_speculative_tokens",
}
# SGLang falls back to the target as its own draft for these, which crashes.
SGLANG_ALGORITHMS_NEEDING_DRAFT: Final = frozenset({"EAGLE", "EAGLE3", "STANDALONE"})
SGLANG_EAGLE_FAMILY: Final = frozenset({"EAGLE", "EAGLE3", "NEXTN", "STANDALONE"})
SGLANG_TRIPLE: Final = (
    "speculative-num-steps",
    "speculative-eagle-topk",
    "speculative-num-draft-tokens",
)
SGLANG_DRAFT_FLAG: Final = "speculative-draft-model-path"
SGLANG_ALGORITHM_FLAG: Final = "speculative-algorithm"
VLLM_CONFIG_FLAG: Final = "speculative-config"


# The names SGLang's server_args log line may show for an algorithm it was started with: it
# rewrites NEXTN to EAGLE before logging server_args, and promotes NEXTN/EAGLE with a Gemma 4
# assistant draft to FROZEN_KV_MTP.
SGLANG_LOGGED_AS: Final = {
    "NEXTN": frozenset({"NEXTN", "EAGLE", "FROZEN_KV_MTP"}),
    "EAGLE": frozenset({"EAGLE", "FROZEN_KV_MTP"}),
}


def sglang_logged_names(algorithm: str) -> frozenset[str]:
    """The names SGLang logs in server_args when started with `--speculative-algorithm NAME`."""
    return SGLANG_LOGGED_AS.get(algorithm, frozenset({algorithm}))


def accepted_names(engine: str, version: str | None) -> frozenset[str] | None:
    """The names a release accepts (pinned when None); None for an unsupported version."""
    return SPECULATIVE_NAMES[engine].get(version or PINNED_VERSIONS[engine])
