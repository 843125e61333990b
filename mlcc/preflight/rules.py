"""Pure checks of one endpoint's models against its engine release's own rules.

Each function names the engine code it follows (read at vLLM 0.27.1, SGLang 0.5.17); the lists
come from engine_models.json, generated per supported release from its wheel by
scripts/engine_models.py, and each check reads the endpoint's release (hp:engineVersion; None:
the pinned one). It returns
`Finding`s: the endpoint key it is about, the message with the figures, and whether it is a
refusal or a warning. docs/preflight.md lists every check.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from mlcc.preflight import head_weights
from mlcc.preflight.facts import ModelFacts
from mlcc.preflight.gpus import GpuSpec
from mlcc.serving.engines import PINNED_VERSIONS, Engine

EAGLE_ALGORITHMS = frozenset({"eagle", "eagle2", "eagle3"})
_BFLOAT16_NAMES = frozenset({"bfloat16", "bf16"})


@dataclass(frozen=True)
class Finding:
    key: str  # the endpoint key without the hp: prefix, e.g. speculativeModel
    message: str
    error: bool = True


@cache
def engine_tables() -> dict[str, Any]:
    """engine -> release -> its lists (engine_models.json)."""
    text = resources.files(__package__).joinpath("engine_models.json").read_text()
    tables: dict[str, Any] = json.loads(text)
    return tables


def release_tables(engine: Engine, version: str | None = None) -> dict[str, Any]:
    """One release's lists (the pinned release's when None)."""
    tables: dict[str, Any] = engine_tables()[engine.value][version or PINNED_VERSIONS[engine]]
    return tables


def _table(engine: Engine, name: str, version: str | None = None) -> Any:
    return release_tables(engine, version)[name]


def draft_fit(
    engine: Engine,
    algorithm: str,
    target: ModelFacts,
    draft: ModelFacts | None,
    version: str | None = None,
) -> list[Finding]:
    """The draft against the target, per algorithm, for the release `version`."""
    findings = _target_support(engine, algorithm, target, version)
    if draft is None:
        return findings
    if algorithm in EAGLE_ALGORITHMS:
        findings += _eagle_head_fit(algorithm, target, draft)
    elif algorithm == "draft-model":
        findings += _draft_model_fit(target, draft)
    return findings


def _target_support(
    engine: Engine, algorithm: str, target: ModelFacts, version: str | None
) -> list[Finding]:
    name = target.architecture or target.model_type
    if algorithm in ("eagle3", "mtp") and not target.architectures:
        return [
            Finding(
                "model",
                "its config.json has no architectures (empty or null): cannot tell which model "
                f"class {engine.value} loads, nor whether it runs {algorithm} on it; the config "
                'must name its class (e.g. "architectures": ["LlamaForCausalLM"])',
            )
        ]
    if algorithm == "eagle3" and target.architecture not in _table(
        engine, "eagle3_targets", version
    ):
        # vLLM: GPUModelRunner._setup_eagle3_aux_hidden_state_outputs raises "Model does not
        # support EAGLE3 interface" unless the target class implements SupportsEagle3.
        # SGLang: the model runner calls the target's set_eagle3_layers_to_capture.
        return [
            Finding(
                "model",
                f"{engine.value} {_version(engine, version)} runs EAGLE-3 only on targets that "
                f"expose their hidden states to the head, and {name} is not one; use eagle, "
                "draft-model or ngram",
            )
        ]
    if algorithm == "mtp":
        return _mtp_support(engine, target, version)
    return []


def _mtp_support(engine: Engine, target: ModelFacts, version: str | None) -> list[Finding]:
    known = set(_table(engine, "mtp_targets", version))
    name = target.architecture or target.model_type
    # vLLM: SpeculativeConfig.hf_config_override turns these model types and architectures
    # into an MTP draft; any other target raises "Unsupported speculative method: 'mtp'" in
    # SpeculativeConfig.__post_init__. SGLang: ModelConfig._config_draft_model maps them to
    # their NextN/MTP draft architecture.
    if target.model_type not in known and target.architecture not in known:
        return [
            Finding(
                "speculativeAlgorithm",
                f"mtp drafts with the target's own multi-token-prediction layers, and "
                f"{engine.value} {_version(engine, version)} knows none for {name}; use eagle3, "
                "draft-model or ngram",
            )
        ]
    if engine is Engine.VLLM and target.mtp_layers == 0:
        return [
            Finding(
                "speculativeAlgorithm",
                f"{name} declares no MTP layers (num_nextn_predict_layers is 0 or missing), so "
                "vLLM has nothing to draft with",
            )
        ]
    return []


def _eagle_head_fit(algorithm: str, target: ModelFacts, draft: ModelFacts) -> list[Finding]:
    # The head's first layer takes the target's hidden states (vllm/model_executor/models/
    # llama_eagle3.py, sglang/srt/models/llama_eagle3.py: fc over target hidden size), and its
    # logits index the target's vocabulary: an EAGLE-3 head maps its draft_vocab_size tokens
    # to the target's through d2t, so its vocab_size must be the target's.
    findings = _head_format_fit(algorithm, draft)
    # llama_eagle3.py: the fc takes target_hidden_size when the head's config names one
    takes = draft.target_hidden_size or draft.hidden_size
    if takes != target.hidden_size:
        findings.append(
            Finding(
                "speculativeModel",
                f"draft hidden size {takes}, target {target.hidden_size}: the head "
                "was trained for another target",
            )
        )
    if draft.vocab_size != target.vocab_size:
        findings.append(
            Finding(
                "speculativeModel",
                f"draft vocabulary {draft.vocab_size} tokens, target {target.vocab_size}: the "
                "head was trained for another tokenizer",
            )
        )
    if draft.draft_vocab_size and draft.draft_vocab_size > draft.vocab_size:
        findings.append(
            Finding(
                "speculativeModel",
                f"draft_vocab_size {draft.draft_vocab_size} is above its vocab_size "
                f"{draft.vocab_size}: not an EAGLE-3 vocabulary mapping",
            )
        )
    if _is_full_model(draft):
        use = "draft-model" if algorithm == "eagle3" else "draft-model or eagle3"
        findings.append(
            Finding(
                "speculativeModel",
                f"is a full {draft.architecture} model of {draft.num_layers} layers, not an "
                f"EAGLE head; use hp:speculativeAlgorithm {use}",
            )
        )
    return findings


def head_format(draft: ModelFacts) -> tuple[str, str] | None:
    """("eagle3" or "eagle", the evidence) as the draft's own config.json shows its format, the
    way the engines tell: the model class their registries load its architecture with (vLLM
    _SPECULATIVE_DECODING_MODELS: *_eagle3 or *_eagle modules; SGLang: the EntryClass of
    models/*_eagle3.py or *_eagle.py), the names vLLM's EAGLEConfig keeps for each method
    (vllm/transformers_utils/configs/eagle.py: Eagle3X or XEagle3 under eagle3, EagleX under
    eagle; SGLang's XEagle), the fields only EAGLE-3 heads read (draft_vocab_size: the lm_head
    of llama_eagle3.py in both engines; eagle_config's auxiliary hidden-state layers). A plain
    XForCausalLM of at most 2 layers without those fields may be either: its fc weight's input
    width in the safetensors header tells (head_weights.py). None when nothing tells (an
    unknown architecture, a full model, a plain head whose header was not read)."""
    names = draft.architectures
    if found := _named(names, "eagle3", lambda n: n.startswith("Eagle3") or n.endswith("Eagle3")):
        return "eagle3", f"architecture {found}"
    if draft.draft_vocab_size is not None:
        return "eagle3", f"draft_vocab_size {draft.draft_vocab_size}"
    if draft.eagle_aux_hidden_states:
        return "eagle3", "eagle_config takes the target's auxiliary hidden states"
    if found := _named(names, "eagle", lambda n: n.startswith("Eagle") or n.endswith("Eagle")):
        return "eagle", f"architecture {found}"
    return head_weights.fc_format(draft) if head_weights.could_be_either_head(draft) else None


def _named(names: tuple[str, ...], kind: str, by_name: Callable[[str], bool]) -> str | None:
    registered = {
        a for e in Engine for r in engine_tables()[e.value].values() for a in r["eagle_heads"][kind]
    }
    return next((n for n in names if n in registered or by_name(n)), None)


def _head_format_fit(algorithm: str, draft: ModelFacts) -> list[Finding]:
    """An EAGLE-3 head under eagle/eagle2, an EAGLE-1 head under eagle3. vLLM loads the head's
    class from its architecture (EAGLEConfig renames it for the method given) and fails to load
    the other format's weights: the fc of llama_eagle3.py takes three of the target's hidden
    states, llama_eagle.py's two (the embedding and one). SGLang loads the class the config names
    and captures the auxiliary hidden states only under EAGLE3 (spec_aux_hidden_state.py), so
    an EAGLE-3 head under EAGLE drafts from the wrong input and almost nothing is accepted."""
    shown = head_format(draft)
    if shown is None:
        return _format_unread(algorithm, draft)
    kind, evidence = shown
    evidence += "" if " in its " in evidence else " in its config.json"
    if kind == "eagle3" and algorithm in ("eagle", "eagle2"):
        message = (
            f"is an EAGLE-3 head ({evidence}), and {algorithm} runs EAGLE-1 "
            "heads (vLLM does not load it as one; SGLang feeds it no auxiliary hidden states and "
            "accepts almost no drafted token); set hp:speculativeAlgorithm eagle3, or use an "
            f"EAGLE-1 head for {algorithm}"
        )
    elif kind == "eagle" and algorithm == "eagle3":
        message = (
            f"is an EAGLE-1 head ({evidence}), and eagle3 needs an EAGLE-3 "
            "head (its first layer takes three of the target's hidden states, an EAGLE-1 head's "
            "one); set hp:speculativeAlgorithm eagle (or eagle2), or use an EAGLE-3 head"
        )
    else:
        return []
    return [Finding("speculativeModel", message)]


def _format_unread(algorithm: str, draft: ModelFacts) -> list[Finding]:
    """A warning: a plain head under eagle3 whose fc width no header showed may be EAGLE-1."""
    if algorithm != "eagle3" or not head_weights.could_be_either_head(draft):
        return []
    layers = "1 layer" if draft.num_layers == 1 else f"{draft.num_layers} layers"
    return [
        Finding(
            "speculativeModel",
            f"is a plain {draft.architecture} of {layers} without draft_vocab_size, which may "
            "be an EAGLE-1 head, and no safetensors header showed its fc weight (an EAGLE-3 "
            "head's takes 3 x the hidden size, an EAGLE-1 head's 2 x); vLLM does not load an "
            "EAGLE-1 head under eagle3: check the head's format",
            error=False,
        )
    ]


def _is_full_model(draft: ModelFacts) -> bool:
    names = " ".join(draft.architectures).lower()
    return "eagle" not in names and draft.draft_vocab_size is None and draft.num_layers > 2


def _draft_model_fit(target: ModelFacts, draft: ModelFacts) -> list[Finding]:
    # vllm/config/speculative.py verify_equal_vocab_size_if_draft_model: "Target and draft
    # model should have the same vocabulary size".
    if draft.vocab_size != target.vocab_size:
        return [
            Finding(
                "speculativeModel",
                f"draft vocabulary {draft.vocab_size} tokens, target {target.vocab_size}: a "
                "draft model must share the target's tokenizer",
            )
        ]
    if "eagle" in " ".join(draft.architectures).lower() or draft.draft_vocab_size:
        return [
            Finding(
                "speculativeModel",
                f"is an EAGLE head ({draft.architecture}), not a model; use "
                "hp:speculativeAlgorithm eagle3",
            )
        ]
    return []


def tensor_parallel(facts: ModelFacts, tp: int, key: str) -> list[Finding]:
    """QKVParallelLinear.__init__ (vllm/model_executor/layers/linear.py, and SGLang's copy in
    sglang/srt/layers/linear.py): heads divide by tp; KV heads divide by tp, or tp by them
    when there are fewer (they are then replicated). vLLM ModelConfig.verify_with_parallel_config
    raises the same for the heads."""
    findings = []
    if facts.num_heads % tp:
        findings.append(
            Finding(
                key,
                f"{facts.num_heads} attention heads do not divide across {tp} GPUs (tensor "
                f"parallel {tp}); set hp:gpuCount to a divisor of {facts.num_heads}",
            )
        )
    kv = facts.num_kv_heads
    if facts.mla_kv_width is None and ((tp >= kv and tp % kv) or (tp < kv and kv % tp)):
        findings.append(
            Finding(
                key,
                f"{kv} KV heads do not split across {tp} GPUs (tensor parallel {tp}); set "
                "hp:gpuCount to a divisor or multiple of them",
            )
        )
    return findings


def context(target: ModelFacts, requested: int | None, key: str, engine: Engine) -> list[Finding]:
    """vLLM _get_and_verify_max_len: a max_model_len above the derived one raises unless
    VLLM_ALLOW_LONG_MAX_MODEL_LEN; SGLang ModelConfig refuses the same unless
    SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN."""
    if requested is None or target.max_context is None or requested <= target.max_context:
        return []
    flag = "--max-model-len" if engine is Engine.VLLM else "--context-length"
    return [
        Finding(
            key,
            f"{requested} tokens is above the model's context of {target.max_context} "
            f"({engine.value} refuses {flag} beyond it); lower it to {target.max_context}",
        )
    ]


def precision(
    engine: Engine,
    facts: ModelFacts,
    gpu: GpuSpec,
    engine_args: dict[str, str],
    key: str,
    version: str | None = None,
) -> list[Finding]:
    """dtype and quantization against the GPU's compute capability (release `version`)."""
    findings = []
    capability = gpu.compute_capability[0] * 10 + gpu.compute_capability[1]
    dtype = engine_args.get("dtype", "auto").lower()
    # vllm/platforms/cuda.py CudaPlatformBase.check_if_supports_dtype: an explicit bfloat16
    # below 8.0 raises; "auto" (vllm/config/model.py _resolve_auto_dtype) falls back to
    # float16 there. SGLang casts to what the GPU supports, so it is not refused.
    if engine is Engine.VLLM and dtype in _BFLOAT16_NAMES and capability < 80:
        findings.append(
            Finding(
                "engineArgs.dtype",
                f"vLLM supports bfloat16 only from compute capability 8.0, and {gpu.name} has "
                f"{gpu.capability_text}; remove it (auto uses float16 there) or set float16",
            )
        )
    kv_dtype = engine_args.get("kv-cache-dtype", "auto").lower()
    # vLLM: of the attention backends only FlashInferBackend.supports_kv_cache_dtype accepts
    # nvfp4, and only on the compute capability 10.x family; fp8 KV caches have a backend
    # (TritonAttentionBackend) on every GPU, so they are not refused.
    if engine is Engine.VLLM and kv_dtype == "nvfp4" and gpu.compute_capability[0] != 10:
        findings.append(
            Finding(
                "engineArgs.kv-cache-dtype",
                f"vLLM stores an nvfp4 KV cache only on compute capability 10.x (B200, GB200), "
                f"and {gpu.name} has {gpu.capability_text}; use fp8 or auto",
            )
        )
    method = (engine_args.get("quantization") or facts.quantization or "").lower()
    needed = _table(engine, "quantization_min_capability", version).get(method)
    # vLLM ModelConfig._verify_quantization / SGLang ModelRunner: "The quantization method %s
    # is not supported for the current GPU. Minimum capability: %s".
    if needed is not None and capability < needed:
        findings.append(
            Finding(
                key,
                f"{method} quantization needs compute capability {needed / 10:.1f} in "
                f"{engine.value}, and {gpu.name} has {gpu.capability_text}; use an "
                "unquantized checkpoint or a newer instance type",
            )
        )
    return findings


def _version(engine: Engine, version: str | None) -> str:
    return str(_table(engine, "version", version))
