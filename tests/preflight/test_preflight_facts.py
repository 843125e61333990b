"""config.json read as the engines read it; the memory formula's parts; the GPU table."""

from __future__ import annotations

import json

import pytest
from fake_hub import MODELS

from mlcc.preflight import memory
from mlcc.preflight.facts import NotAModelConfig, max_context, model_facts
from mlcc.preflight.gpus import gpu_spec
from mlcc.serving.engines import Engine


def vendored(repo: str) -> dict[str, object]:
    config: dict[str, object] = json.loads((MODELS / repo / "config.json").read_text())
    return config


def test_llama_and_deepseek_contexts_follow_their_rope_scaling() -> None:
    # llama3 scaling: max_position_embeddings is already the extended length
    assert max_context(vendored("meta-llama/Llama-3.1-8B-Instruct")) == 131072
    # yarn: original_max_position_embeddings 4096 x factor 40
    assert max_context(vendored("deepseek-ai/DeepSeek-V3")) == 163840
    assert max_context(vendored("Qwen/Qwen3-8B")) == 40960


def test_a_nested_text_config_is_the_language_models() -> None:
    qwen = vendored("Qwen/Qwen3-8B")
    multimodal = {
        "architectures": ["Qwen3VLForConditionalGeneration"],
        "model_type": "qwen3_vl",
        "text_config": qwen,
        "vision_config": {"hidden_size": 1152},
    }
    facts = model_facts(multimodal, None)
    assert (facts.hidden_size, facts.num_kv_heads, facts.max_context) == (4096, 8, 40960)
    assert facts.architecture == "Qwen3VLForConditionalGeneration"


def test_dtype_quantization_mla_and_mtp_fields() -> None:
    deepseek = model_facts(vendored("deepseek-ai/DeepSeek-V3"), 1)
    head = model_facts(vendored("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"), 1)
    assert deepseek.quantization == "fp8" and deepseek.mtp_layers == 1
    assert deepseek.mla_kv_width == 512 + 64
    assert head.dtype == "float16" and head.draft_vocab_size == 32000
    assert (
        model_facts({**vendored("Qwen/Qwen3-8B"), "torch_dtype": None, "dtype": "float32"}, 1).dtype
        == "float32"
    )


@pytest.mark.parametrize(
    ("config", "says"),
    [
        ([1, 2], "is not a JSON object"),
        ({"num_attention_heads": 8}, "has no hidden_size"),
        ({"hidden_size": True, "num_attention_heads": 8}, "hidden_size is true"),
        ({"hidden_size": 8, "num_attention_heads": "8"}, "num_attention_heads is '8'"),
    ],
)
def test_a_config_that_is_not_a_model_config_says_why(config: object, says: str) -> None:
    with pytest.raises(NotAModelConfig, match=says):
        model_facts(config, None)


def test_kv_cache_bytes_per_token() -> None:
    llama = model_facts(vendored("meta-llama/Llama-3.1-8B-Instruct"), 16060522496)
    deepseek = model_facts(vendored("deepseek-ai/DeepSeek-V3"), 1)
    # 32 layers x (K and V) x 8 KV heads / 4 GPUs x 128 x 2 bytes
    assert memory.kv_bytes_per_token(llama, 4, {}) == 32 * 2 * 2 * 128 * 2
    assert memory.kv_bytes_per_token(llama, 4, {"kv-cache-dtype": "fp8"}) == 32 * 2 * 2 * 128
    # more GPUs than KV heads: each GPU keeps one (replicated)
    assert memory.kv_bytes_per_token(llama, 16, {}) == 32 * 2 * 1 * 128 * 2
    # MLA: one latent per layer, not split across GPUs
    assert memory.kv_bytes_per_token(deepseek, 8, {}) == 61 * 576 * 2


def test_usable_memory_per_engine() -> None:
    a10g = gpu_spec("ml.g5.12xlarge")
    h100 = gpu_spec("ml.p5.48xlarge")
    assert a10g is not None and h100 is not None
    assert memory.utilization(Engine.VLLM, {}, a10g, 4) == 0.92
    assert memory.utilization(Engine.VLLM, {"gpu-memory-utilization": "0.8"}, a10g, 4) == 0.8
    assert memory.utilization(Engine.SGLANG, {"mem-fraction-static": "0.7"}, a10g, 4) == 0.7
    # A10G, tp 4: 512 + 2048 x 1.5 + 4/8 x 1024 + 80 x 2 + 42 prefill graph sizes x 8 MiB
    assert memory.sglang_reserved_mib(24576, 4) == 512 + 3072 + 512 + 160 + 42 * 8
    assert memory.sglang_mem_fraction(24576, 4) == 0.813
    # T4 16 GiB, tp 1: chunked 2048, max_bs 8
    assert memory.sglang_reserved_mib(16384, 1) == 512 + 3072 + 128 + 16 + 42 * 8
    # H100 80 GiB, tp 8: chunked 8192, max_bs 512, 58 prefill graph sizes
    assert memory.sglang_reserved_mib(81920, 8) == 512 + 12288 + 1024 + 1024 + 58 * 8
    # H200 141 GiB, tp 1: max_bs 256; the 10 GiB floor does not bind
    assert memory.sglang_reserved_mib(144384, 1) == 512 + 12288 + 128 + 512 + 58 * 8


def test_the_gpu_table_knows_every_instance_type_the_project_does() -> None:
    from mlcc.config.aws.instances import GPU_COUNTS

    missing = [t for t in GPU_COUNTS if gpu_spec(t) is None]
    assert missing == []
    t4 = gpu_spec("ml.g4dn.12xlarge")
    assert t4 is not None and t4.compute_capability == (7, 5) and t4.memory_mib == 16384
    assert gpu_spec("ml.m5.xlarge") is None and gpu_spec("g5.xlarge") is None


def test_weights_counted_from_the_config_match_the_published_total() -> None:
    from mlcc.preflight.facts import estimated_weight_bytes, with_estimate

    llama = model_facts(vendored("meta-llama/Llama-3.1-8B-Instruct"), None)
    published = json.loads(
        (MODELS / "meta-llama/Llama-3.1-8B-Instruct/model.safetensors.index.json").read_text()
    )["metadata"]["total_size"]
    assert abs(estimated_weight_bytes(llama) - published) / published < 0.001  # norms only
    assert with_estimate(llama).weights_estimated
    # a mixture of experts cannot be counted from its shapes: it stays unknown
    deepseek = with_estimate(model_facts(vendored("deepseek-ai/DeepSeek-V3"), None))
    assert deepseek.weight_bytes is None and not deepseek.weights_estimated
