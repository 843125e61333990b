"""Does one endpoint fit its GPUs? The estimate of docs/preflight.md ("GPU memory"), pure.

    usable      = GPU memory x utilization (vLLM gpu-memory-utilization, default from
                  vllm/config/cache.py; SGLang mem-fraction-static, default from
                  ServerArgs._handle_gpu_memory_settings)
    weights     = target weight bytes / tp  (+ draft weight bytes / tp; the draft runs at the
                  target's tensor-parallel size in both engines)
    kv/token    = layers x 2 x max(1, KV heads / tp) x head_dim x KV bytes (target + draft);
                  MLA (DeepSeek): layers x (kv_lora_rank + qk_rope_head_dim) x KV bytes
    needed      = weights + kv/token x context
    KV room     = (usable - weights) / kv/token tokens

It counts no activations or CUDA graphs, so it never over-states what is needed: a refusal means
the endpoint cannot fit. Under 10% of usable memory to spare is a warning.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlcc.preflight.facts import DTYPE_BYTES, ModelFacts
from mlcc.preflight.gpus import GpuSpec
from mlcc.serving.engines import Engine

GIB = 1024**3
WARN_MARGIN = 0.10
VLLM_DEFAULT_UTILIZATION_KEY = "gpu_memory_utilization"
_UTILIZATION_FLAGS = {Engine.VLLM: "gpu-memory-utilization", Engine.SGLANG: "mem-fraction-static"}


@dataclass(frozen=True)
class Fit:
    usable: float  # bytes per GPU the engine may use for weights and KV cache
    target_weights: float  # bytes per GPU
    draft_weights: float
    kv_per_token: float  # bytes per GPU per token (target + draft)
    context: int  # tokens of the one sequence that must fit
    estimated: bool = False  # a weight size was counted from config.json

    @property
    def needed(self) -> float:
        return self.target_weights + self.draft_weights + self.kv_per_token * self.context

    @property
    def kv_room_tokens(self) -> int:
        room = self.usable - self.target_weights - self.draft_weights
        return max(0, int(room / self.kv_per_token)) if self.kv_per_token else 0

    @property
    def margin(self) -> float:
        return (self.usable - self.needed) / self.usable if self.usable else -1.0

    def line(self) -> str:
        """The plan headline's figures."""
        return (
            f"memory: {self.target_weights / GIB:.1f} + {self.draft_weights / GIB:.1f} GiB "
            f"weights, KV room {_tokens(self.kv_room_tokens)} tokens of {self.context} needed, "
            f"{self.usable / GIB:.1f} GiB usable per GPU"
            f"{' (weights estimated from config.json)' if self.estimated else ''}"
        )


def _tokens(count: int) -> str:
    return f"{count / 1000:.0f}k" if count >= 10000 else str(count)


def utilization(
    engine: Engine, engine_args: dict[str, str], gpu: GpuSpec, tp: int, version: str | None = None
) -> float:
    """The fraction of GPU memory the engine takes: hp:engineArgs', else the release's default
    (`version`; None: the pinned release). The config refuses a value outside (0, 1]
    (engine_contract `bound_problem`), so a given one is taken as it is."""
    given = engine_args.get(_UTILIZATION_FLAGS[engine])
    if given is not None:
        return float(given)
    if engine is Engine.VLLM:
        from mlcc.preflight.rules import release_tables

        return float(release_tables(engine, version)[VLLM_DEFAULT_UTILIZATION_KEY])
    return sglang_mem_fraction(gpu.memory_mib, tp)


def sglang_mem_fraction(gpu_mib: int, tp: int) -> float:
    """SGLang's default mem_fraction_static: (GPU MiB - reserved MiB) / GPU MiB, rounded to 3."""
    return round((gpu_mib - sglang_reserved_mib(gpu_mib, tp)) / gpu_mib, 3)


def sglang_reserved_mib(gpu_mib: int, tp: int) -> float:
    """ServerArgs._handle_gpu_memory_settings (sglang/srt/server_args.py) for a plain CUDA
    server (no disaggregation, no DP attention, no DeepEP, non-MLA): 512 + chunked-prefill
    tokens x 1.5 + tp/8 x 1024 + decode graph max_bs x 2 + 8 per prefill graph size, at least
    10 GiB above 60 GiB GPUs. Chunked prefill and max_bs by GPU size as it sets them."""
    bands = ((20, 2048, 8, 8), (35, 2048, 24, 80), (60, 4096, 32, 160), (90, 8192, 256, 512))
    chunked, max_bs = 16384, 512
    for limit_gib, band_chunked, small_bs, large_bs in bands:
        if gpu_mib < limit_gib * 1024:
            chunked, max_bs = band_chunked, small_bs if tp < 4 else large_bs
            break
    else:
        if gpu_mib < 160 * 1024:
            chunked, max_bs = 8192, 256 if tp < 4 else 512
    reserved = 512 + max(chunked, 2048) * 1.5 + tp / 8 * 1024
    reserved += max_bs * 2 + len(_prefill_graph_sizes(chunked)) * 8
    return max(reserved, 10 * 1024) if gpu_mib > 60 * 1024 else reserved


def _prefill_graph_sizes(max_bs: int) -> list[int]:
    """ServerArgs._generate_prefill_cuda_graph_batch_sizes."""
    sizes = [
        *range(4, 33, 4),
        *range(48, 257, 16),
        *range(288, 513, 32),
        *range(576, 1025, 64),
        *range(1280, 4097, 256),
        *range(4608, max_bs + 1, 512),
    ]
    return [s for s in sizes if s <= max_bs]


def compute_bytes(facts: ModelFacts, engine_args: dict[str, str]) -> int:
    """Bytes per weight element once loaded: an explicit dtype, else the checkpoint's, with
    float32 checkpoints served in 16 bits (vLLM _resolve_auto_dtype; SGLang likewise)."""
    explicit = engine_args.get("dtype", "auto").lower()
    if explicit in DTYPE_BYTES:
        return DTYPE_BYTES[explicit]
    return min(DTYPE_BYTES.get(facts.dtype, 2), 2)


def kv_bytes_per_token(
    facts: ModelFacts, tp: int, engine_args: dict[str, str], layers: int | None = None
) -> float:
    kv_dtype = engine_args.get("kv-cache-dtype", "auto").lower()
    element: float = compute_bytes(facts, engine_args)
    if kv_dtype.startswith(("fp8", "int8")):
        element = 1
    elif kv_dtype.startswith(("nvfp4", "int4")):
        element = 0.5  # four bits a value (their scales are not counted)
    count = facts.num_layers if layers is None else layers
    if facts.mla_kv_width is not None:
        return float(count * facts.mla_kv_width * element)
    heads = max(1, facts.num_kv_heads // tp)
    return float(count * 2 * heads * facts.head_dim * element)


def loaded_weight_bytes(facts: ModelFacts, engine_args: dict[str, str]) -> float:
    """The checkpoint's bytes, scaled when an unquantized checkpoint is served in another dtype."""
    assert facts.weight_bytes is not None
    if facts.quantization:
        return float(facts.weight_bytes)
    stored = DTYPE_BYTES.get(facts.dtype, 2)
    return facts.weight_bytes * compute_bytes(facts, engine_args) / stored


def fit(
    engine: Engine,
    target: ModelFacts,
    draft: ModelFacts | None,
    gpu: GpuSpec,
    tp: int,
    context: int,
    engine_args: dict[str, str],
    mtp_layers: int = 0,
    version: str | None = None,
) -> Fit:
    """The figures of one endpoint (both models' weight sizes known). MTP layers are in the
    target's checkpoint, so they add only their KV cache."""
    kv = kv_bytes_per_token(target, tp, engine_args)
    if mtp_layers:
        kv += kv_bytes_per_token(target, tp, engine_args, layers=mtp_layers)
    draft_weights = 0.0
    if draft is not None:
        draft_weights = loaded_weight_bytes(draft, engine_args) / tp
        kv += kv_bytes_per_token(draft, tp, engine_args)
    return Fit(
        # never below 0: SGLang's reserve can exceed a small GPU's memory (nothing is left)
        usable=max(0.0, gpu.memory_bytes * utilization(engine, engine_args, gpu, tp, version)),
        target_weights=loaded_weight_bytes(target, engine_args) / tp,
        draft_weights=draft_weights,
        kv_per_token=kv,
        context=context,
        estimated=target.weights_estimated or (draft is not None and draft.weights_estimated),
    )
