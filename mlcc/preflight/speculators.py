"""Drafts in the speculators format (vllm-project/speculators): a `speculators_config` in the
draft's config.json, the head's shapes under `transformer_layer_config` (docs/preflight.md).

Pure. `draft_config` reads the format as vLLM does, so the existing fit and memory checks see the
head vLLM builds; `findings` checks the stack against what the draft's own config says.

Sources (vLLM 0.27.1 and 0.34.0 wheels, the same code unless said):
- vllm/transformers_utils/config.py: a config.json without `model_type` and with a
  `speculators_config` is loaded as the `speculators` config type (`SpeculatorsConfig`).
- vllm/transformers_utils/configs/speculators/base.py `extract_transformers_pre_trained_config`:
  the head's config is `transformer_layer_config`, updated per `speculators_model_type` by
  algos.py; `build_vllm_speculative_config`: method = speculators_model_type,
  num_speculative_tokens = `speculators_config.proposal_methods[0].speculative_tokens`.
- algos.py `SUPPORTED_SPECULATORS_TYPES`: eagle3, peagle, dflash, dspark (0.34.0 adds dflash2,
  served as method dflash, and its peagle raises "P-EAGLE (parallel drafting EAGLE-3) is not
  supported."); eagle3 names the head Eagle3LlamaForCausalLM or Eagle3Qwen3ForCausalLM by
  `transformer_layer_config.model_type` (default llama) and raises for any other.
- That method and count are filled in only by `maybe_override_with_speculators`, which runs on
  the served model (`vllm serve <draft>`). A draft given in `--speculative-config` (what this
  program renders) takes its method and `num_speculative_tokens` from that JSON: vllm/config/
  speculative.py raises "A speculative model was provided, but `num_speculative_tokens` was not
  provided" without one (an EAGLE-3 speculators config has no `n_predict` to default it), so
  both are always rendered.
- SGLang 0.5.2, 0.5.3, 0.5.8, 0.5.12, 0.5.17 and 0.5.23 (every version this project knows): no
  code in their wheels reads `speculators_config`, `speculators_model_type` or
  `transformer_layer_config`; the draft's config.json is read with transformers' AutoConfig
  (0.5.17: sglang/srt/utils/hf_transformers/config.py, HfModelConfigParser).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from mlcc.engine_contract import ALGORITHMS
from mlcc.serving.engines import Engine

# vLLM algos.py SUPPORTED_SPECULATORS_TYPES per release; the types whose update raises.
_SUPPORTED = {
    "0.27.1": ("eagle3", "peagle", "dflash", "dspark"),
    "0.34.0": ("eagle3", "peagle", "dflash", "dflash2", "dspark"),
}
_REFUSED = {"0.34.0": {"peagle": "P-EAGLE (parallel drafting EAGLE-3) is not supported."}}
# speculators_model_type -> the vLLM method build_vllm_speculative_config gives it
_METHODS = {
    "eagle3": "eagle3",
    "peagle": "eagle3",
    "dflash": "dflash",
    "dflash2": "dflash",
    "dspark": "dspark",
}
# algos.py: the architecture vLLM names the head by, per speculators_model_type
_EAGLE3_ARCHITECTURES = {"qwen3": "Eagle3Qwen3ForCausalLM", "llama": "Eagle3LlamaForCausalLM"}
_ARCHITECTURES = {
    "dflash": "DFlashDraftModel",
    "dflash2": "DFlash2DraftModel",
    "dspark": "Qwen3DSparkModel",
}
# algos.py: the top-level fields each update copies into the head's config
_COPIED = ("draft_vocab_size", "target_hidden_size", "dtype", "torch_dtype")


@dataclass(frozen=True)
class SpeculatorsDraft:
    """What a speculators-format draft's config.json says of itself."""

    model_type: str  # speculators_model_type
    num_tokens: int | None  # speculators_config.proposal_methods[0].speculative_tokens
    verifier: str | None  # speculators_config.verifier.name_or_path
    layer_model_type: str  # transformer_layer_config.model_type (algos.py default: llama)

    @property
    def method(self) -> str:
        """The vLLM method (build_vllm_speculative_config); the type itself when unknown."""
        return _METHODS.get(self.model_type, self.model_type)


def is_speculators(config: Mapping[str, object]) -> bool:
    """vLLM's test (transformers_utils/config.py): no model_type, a speculators_config."""
    return config.get("model_type") is None and config.get("speculators_config") is not None


def draft_config(config: Mapping[str, object]) -> tuple[dict[str, object], SpeculatorsDraft]:
    """The head's config as vLLM builds it (transformer_layer_config, the architecture named by
    algos.py, the top-level EAGLE-3 fields), and the draft's own speculative settings. Raises
    ValueError with a one-line reason where vLLM's reader fails on the structure."""
    layer = config.get("transformer_layer_config")
    if not isinstance(layer, Mapping):
        raise ValueError("has a speculators_config but no transformer_layer_config object")
    head: dict[str, object] = dict(layer)
    for key in _COPIED:
        if config.get(key) is not None:
            head[key] = config[key]
    model_type = str(config.get("speculators_model_type") or "")
    layer_type = str(layer.get("model_type") or "llama")
    if model_type in ("eagle3", "peagle"):
        head["architectures"] = [_EAGLE3_ARCHITECTURES.get(layer_type, "")]
    elif model_type in _ARCHITECTURES:
        head["architectures"] = [_ARCHITECTURES[model_type]]
    return head, SpeculatorsDraft(model_type, _first_tokens(config), _verifier(config), layer_type)


def _first_tokens(config: Mapping[str, object]) -> int | None:
    spec = config.get("speculators_config")
    methods = spec.get("proposal_methods") if isinstance(spec, Mapping) else None
    first = methods[0] if isinstance(methods, list) and methods else None
    tokens = first.get("speculative_tokens") if isinstance(first, Mapping) else None
    return tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else None


def _verifier(config: Mapping[str, object]) -> str | None:
    spec = config.get("speculators_config")
    verifier = spec.get("verifier") if isinstance(spec, Mapping) else None
    name = verifier.get("name_or_path") if isinstance(verifier, Mapping) else None
    return name if isinstance(name, str) and name else None


@dataclass(frozen=True)
class Stack:
    """What the endpoint asks of its draft."""

    engine: Engine
    version: str
    algorithm: str
    num_tokens: int
    num_tokens_set: bool  # hp:speculativeNumTokens given (else the default was rendered)


def findings(draft: SpeculatorsDraft, stack: Stack) -> list[tuple[str, str, bool]]:
    """(endpoint key, message, is an error) for a speculators-format draft under this stack."""
    if stack.engine is Engine.SGLANG:
        return [
            (
                "speculativeModel",
                f"is a speculators-format draft (speculators_config in its config.json), and "
                f"SGLang {stack.version} does not read that format (it finds no model_type and "
                "no hidden_size outside transformer_layer_config); use hp:engine vllm, or a "
                "draft in SGLang's own format",
                True,
            )
        ]
    refused = _type_problem(draft, stack.version)
    if refused is not None:
        return [("speculativeModel", refused, True)]
    return _algorithm_problem(draft, stack) or _token_problems(draft, stack)


def _type_problem(draft: SpeculatorsDraft, version: str) -> str | None:
    supported = _SUPPORTED.get(version, _SUPPORTED[max(_SUPPORTED)])
    what = f"its speculators_model_type is {draft.model_type or 'missing'}"
    if draft.model_type not in supported:
        return f"{what}, and vLLM {version} reads only {', '.join(supported)} speculators drafts"
    if reason := _REFUSED.get(version, {}).get(draft.model_type):
        return f"{what}, and vLLM {version} refuses it: {reason!r}"
    if draft.model_type == "peagle":
        return (
            f"{what}: vLLM {version} turns on its parallel drafting only when the draft itself "
            "is served (`vllm serve <draft>`), not for a draft in --speculative-config, which "
            "is how this program serves a draft"
        )
    if draft.model_type == "eagle3" and draft.layer_model_type not in _EAGLE3_ARCHITECTURES:
        return (
            f"{what} with a {draft.layer_model_type} transformer_layer_config, and vLLM "
            f"{version} builds EAGLE-3 speculators heads only as "
            f"{' or '.join(_EAGLE3_ARCHITECTURES)} layers"
        )
    return None


def _algorithm_problem(draft: SpeculatorsDraft, stack: Stack) -> list[tuple[str, str, bool]]:
    expected = draft.method
    if stack.algorithm == expected:
        return []
    offered = (
        f"set hp:speculativeAlgorithm {expected}"
        if expected in ALGORITHMS
        else f"this program has no {expected} algorithm yet"
    )
    known = ALGORITHMS.get(stack.algorithm)
    method = known.vllm_method if known else stack.algorithm
    return [
        (
            "speculativeAlgorithm",
            f"is {stack.algorithm}, and the draft is a speculators-format {expected} draft "
            f"(speculators_model_type {draft.model_type} in its config.json): vLLM would load "
            f"its {expected} head under the {method} method; {offered}",
            True,
        )
    ]


def _token_problems(draft: SpeculatorsDraft, stack: Stack) -> list[tuple[str, str, bool]]:
    trained = draft.num_tokens
    if trained is None or trained == stack.num_tokens:
        return []
    said = f"its speculators_config proposes {trained} tokens a step"
    shown = (
        f"is {stack.num_tokens}"
        if stack.num_tokens_set
        else (f"is not set, so {stack.num_tokens} tokens a step would be drafted")
    )
    # A stack that contradicts the draft's own config is refused, naming both: vLLM would
    # draft the stack's count (a draft in --speculative-config drafts that JSON's
    # num_speculative_tokens, vllm/config/speculative.py), not the one the head was built for.
    return [
        (
            "speculativeNumTokens",
            f"{shown}, and the draft's config says {trained} ({said}); set "
            f"hp:speculativeNumTokens to {trained}",
            True,
        )
    ]
