"""What preflight needs to know of one model, read from its config.json as the engines read it.

Pure: `model_facts(config, weight_bytes)` takes the decoded config.json and the weights' size.
Each field follows the engine code cited beside it (vLLM 0.27.1, SGLang 0.5.17); a config that
is not a model config raises `NotAModelConfig` with a one-line reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from mlcc.preflight.bounded import values
from mlcc.preflight.speculators import SpeculatorsDraft, draft_config, is_speculators

# config.json dtype names -> bytes per element (vllm/config/model.py _STR_DTYPE_TO_TORCH_DTYPE).
DTYPE_BYTES = {"float32": 4, "float": 4, "bfloat16": 2, "float16": 2, "half": 2, "fp8": 1}
_DTYPE_ALIASES = {"float": "float32", "half": "float16"}
# vLLM ModelArchConfigConvertor.derive_max_model_len_and_key: the smallest of these is the limit.
_MAX_LENGTH_KEYS = (
    "max_position_embeddings",
    "n_positions",
    "max_seq_len",
    "seq_length",
    "model_max_length",
    "max_target_positions",
    "max_sequence_length",
    "max_seq_length",
    "seq_len",
)


class NotAModelConfig(ValueError):
    """config.json decoded, but it is not a model configuration the engines could load."""


@dataclass(frozen=True)
class ModelFacts:
    architectures: tuple[str, ...]
    model_type: str
    hidden_size: int
    vocab_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    max_context: int | None  # None: the config names no length (vLLM then assumes 2048)
    dtype: str  # bfloat16, float16 or float32: the checkpoint's own
    quantization: str | None  # quantization_config.quant_method
    mtp_layers: int  # num_nextn_predict_layers (or mtp_num_hidden_layers)
    draft_vocab_size: int | None  # an EAGLE-3 head's reduced vocabulary
    mla_kv_width: int | None  # DeepSeek MLA: kv_lora_rank + qk_rope_head_dim, one latent per token
    weight_bytes: int | None  # what the checkpoint's weights take, None when not known
    weights_estimated: bool = False  # weight_bytes counted from config.json's shapes
    intermediate_size: int | None = None
    experts: bool = False  # a mixture of experts: its weights cannot be counted from the shapes
    # eagle_config asks for the target's auxiliary hidden states (an EAGLE-3 head's input)
    eagle_aux_hidden_states: bool = False
    # an EAGLE-3 head's fc input width, when it is not its own hidden size (llama_eagle3.py)
    target_hidden_size: int | None = None
    speculators: SpeculatorsDraft | None = None  # a speculators-format draft's own settings
    # the width of an EAGLE head's fc input, from its safetensors header (head_weights.py)
    fc_in_features: int | None = None

    @property
    def architecture(self) -> str:
        return self.architectures[0] if self.architectures else ""


def text_config(config: Mapping[str, object]) -> Mapping[str, object]:
    """The language model's part: `text_config` when there is one (vLLM get_hf_text_config
    takes that one level; a text_config inside it is not read, nor is `_name_or_path`)."""
    nested = config.get("text_config")
    return nested if isinstance(nested, Mapping) else config


def model_facts(config: object, weight_bytes: int | None) -> ModelFacts:
    """The facts of a decoded config.json; NotAModelConfig (one line naming the key) for a
    config the engines could not load or a value that is not what its key holds."""
    try:
        return _model_facts(config, weight_bytes)
    except values.BadValue as error:
        raise NotAModelConfig(str(error)) from None


def _model_facts(config: object, weight_bytes: int | None) -> ModelFacts:
    if not isinstance(config, Mapping):
        raise NotAModelConfig("is not a JSON object")
    if is_speculators(config):  # the head vLLM builds from it (mlcc/preflight/speculators.py)
        try:
            head, draft = draft_config(config)
        except ValueError as error:
            raise NotAModelConfig(str(error)) from None
        return replace(_model_facts(head, weight_bytes), speculators=draft)
    values.section(config, "text_config")  # present, it must be an object (vLLM asserts so)
    text = text_config(config)
    hidden = _positive(text, "hidden_size")
    heads = _positive(text, "num_attention_heads")
    architectures = config.get("architectures") or text.get("architectures") or ()
    if not isinstance(architectures, list | tuple) or not all(
        isinstance(a, str) for a in architectures
    ):
        raise NotAModelConfig("architectures is not a list of names")
    kv_heads = _optional_positive(text, "num_key_value_heads") or heads
    if heads % kv_heads:  # vllm/model_executor/layers/attention/attention.py asserts it
        raise NotAModelConfig(
            f"num_key_value_heads ({kv_heads}) does not divide num_attention_heads ({heads}): "
            "each KV head serves a whole group of attention heads"
        )
    head_dim = _optional_positive(text, "head_dim") or hidden // heads
    if head_dim == 0:  # vLLM and SGLang take hidden_size // num_attention_heads
        raise NotAModelConfig(
            f"num_attention_heads ({heads}) is above hidden_size ({hidden}) and there is no "
            "head_dim: no attention head could be formed"
        )
    return ModelFacts(
        architectures=tuple(architectures),
        model_type=str(config.get("model_type") or ""),
        hidden_size=hidden,
        vocab_size=_positive(text, "vocab_size"),
        num_layers=_positive(text, "num_hidden_layers"),
        num_heads=heads,
        num_kv_heads=kv_heads,
        head_dim=head_dim,
        max_context=max_context(config),
        dtype=checkpoint_dtype(config),
        quantization=_quantization(config),
        mtp_layers=(
            values.count(text, "num_nextn_predict_layers")
            or values.count(text, "mtp_num_hidden_layers")
            or 0
        ),
        draft_vocab_size=_optional_positive(config, "draft_vocab_size"),
        mla_kv_width=_mla_width(text),
        weight_bytes=weight_bytes,
        intermediate_size=_optional_positive(text, "intermediate_size"),
        eagle_aux_hidden_states=_eagle_aux_hidden_states(config),
        target_hidden_size=_optional_positive(config, "target_hidden_size"),
        experts=any(
            text.get(k)
            for k in (
                "num_experts",
                "n_routed_experts",
                "num_local_experts",
                "moe_intermediate_size",
            )
        ),
    )


def with_estimate(facts: ModelFacts) -> ModelFacts:
    """The facts, with the weights counted from config.json's shapes when no source said
    (a dense model or an EAGLE head; a mixture of experts stays unknown)."""
    if facts.weight_bytes is not None or facts.experts or facts.intermediate_size is None:
        return facts
    return replace(facts, weight_bytes=estimated_weight_bytes(facts), weights_estimated=True)


def estimated_weight_bytes(facts: ModelFacts) -> int:
    """Embeddings, per layer the attention projections and a gated MLP, the output head (an
    EAGLE-3 head's over its draft vocabulary, plus its fc over three target hidden states),
    at the checkpoint's dtype. Norms and biases are left out (well under 1%)."""
    hidden, head_dim = facts.hidden_size, facts.head_dim
    attention = hidden * head_dim * (2 * facts.num_heads + 2 * facts.num_kv_heads)
    mlp = 3 * hidden * (facts.intermediate_size or 0)
    outputs = (facts.draft_vocab_size or facts.vocab_size) * hidden
    fc = 3 * hidden * hidden if facts.draft_vocab_size else 0
    parameters = facts.vocab_size * hidden + facts.num_layers * (attention + mlp) + outputs + fc
    return parameters * DTYPE_BYTES.get(facts.dtype, 2)


def max_context(config: Mapping[str, object]) -> int | None:
    """The longest sequence the engine derives from the config (vllm/config/model.py
    `_get_and_verify_max_len`): the smallest length key, times the RoPE scaling factor unless
    the type is su/longrope/llama3 (whose length key is already the extended one); for yarn the
    original length times the factor."""
    text = text_config(config)
    lengths = [v for k in _MAX_LENGTH_KEYS if (v := values.length(text, k)) is not None]
    if not lengths:
        return None
    derived = float(min(lengths))
    rope = text.get("rope_parameters") or text.get("rope_scaling")
    if isinstance(rope, Mapping) and "gemma3" not in str(config.get("model_type")):
        parts = rope.values() if all(isinstance(v, Mapping) for v in rope.values()) else [rope]
        factor = 1.0
        for part in parts:
            if not isinstance(part, Mapping):
                continue
            kind = part.get("rope_type") or part.get("type")
            if kind not in ("su", "longrope", "llama3"):
                factor = values.factor(part, "factor") or factor
                original = values.length(part, "original_max_position_embeddings")
                if kind == "yarn" and original is not None:
                    derived = original
        derived *= factor
    # a length beyond MAX_SIZE is no model's: the factor and the length are each bounded
    if not 1 <= derived <= values.MAX_SIZE:
        raise values.BadValue(
            f"its length and RoPE scaling give a context of {derived:g} tokens, not one from 1 "
            f"to {values.MAX_SIZE:,}"
        )
    return int(derived)


def checkpoint_dtype(config: Mapping[str, object]) -> str:
    """`dtype` (transformers 5) or `torch_dtype`, top level first, as vLLM's
    `_get_and_verify_dtype` reads it; float16 when the config names none."""
    text = text_config(config)
    for source in (config, text):
        for key in ("dtype", "torch_dtype"):
            value = source.get(key)
            if isinstance(value, str) and value.lower() in DTYPE_BYTES:
                name = value.lower()
                return _DTYPE_ALIASES.get(name, name)
    return "float16"


def _quantization(config: Mapping[str, object]) -> str | None:
    for source in (config, text_config(config)):
        quant = source.get("quantization_config") or source.get("compression_config")
        if isinstance(quant, Mapping):
            method = quant.get("quant_method") or quant.get("format")
            return str(method).lower() if method else "unknown"
    return None


def _eagle_aux_hidden_states(config: Mapping[str, object]) -> bool:
    """`eagle_config.eagle_aux_hidden_state_layer_ids` (a non-empty list) or
    `use_aux_hidden_state: true`: read only for EAGLE-3 (vLLM GPUModelRunner and
    llama_eagle3.py; SGLang spec_aux_hidden_state.py when the algorithm is EAGLE3)."""
    eagle = config.get("eagle_config")
    if not isinstance(eagle, Mapping):
        return False
    layers = eagle.get("eagle_aux_hidden_state_layer_ids")
    return bool(isinstance(layers, list) and layers) or eagle.get("use_aux_hidden_state") is True


def _mla_width(text: Mapping[str, object]) -> int | None:
    rank = _optional_positive(text, "kv_lora_rank")
    rope = _optional_positive(text, "qk_rope_head_dim")
    return rank + rope if rank and rope else None


def _positive(config: Mapping[str, object], key: str) -> int:
    value = _optional_positive(config, key)
    if value is None:
        raise NotAModelConfig(f"has no {key}")
    return value


def _optional_positive(config: Mapping[str, object], key: str) -> int | None:
    return values.size(config, key)
