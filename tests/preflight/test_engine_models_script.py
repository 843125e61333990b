"""scripts/engine_models.py reads the rules from the engines' sources; the checked-in table is
its output at the pinned versions."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import engine_models as script

from mlcc.engine_contract import SUPPORTED_VERSIONS
from mlcc.preflight.rules import engine_tables, release_tables
from mlcc.serving.engines import PINNED_VERSIONS, Engine

# Minimal sources shaped like the engines' own (class hierarchies, registries, comparisons).
VLLM_FILES = {
    "vllm/model_executor/models/interfaces.py": "class SupportsEagle3(Protocol):\n    pass\n",
    "vllm/model_executor/models/llama.py": (
        "class LlamaForCausalLM(nn.Module, SupportsLoRA, SupportsEagle3):\n    pass\n"
        "class LlamaBase(nn.Module):\n    pass\n"
    ),
    "vllm/model_executor/models/qwen3.py": (
        "class Qwen3ForCausalLM(LlamaForCausalLM):\n    pass\n"
        "class OptForCausalLM(LlamaBase):\n    pass\n"
    ),
    "vllm/model_executor/models/registry.py": (
        "_TEXT_GENERATION_MODELS = {\n"
        '    "LlamaForCausalLM": ("llama", "LlamaForCausalLM"),\n'
        '    "Qwen3ForCausalLM": ("qwen3", "Qwen3ForCausalLM"),\n'
        '    "OPTForCausalLM": ("opt", "OptForCausalLM"),\n}\n'
        "_SPECULATIVE_DECODING_MODELS = {\n"
        '    "EagleLlamaForCausalLM": ("llama_eagle", "EagleLlamaForCausalLM"),\n'
        '    "LlamaForCausalLMEagle3": ("llama_eagle3", "Eagle3LlamaForCausalLM"),\n'
        '    "Eagle3Qwen3ForCausalLM": ("qwen3_eagle3", "Eagle3Qwen3ForCausalLM"),\n'
        '    "DeepSeekMTPModel": ("deepseek_mtp", "DeepSeekMTP"),\n}\n'
    ),
    "vllm/config/speculative.py": (
        'MTPModelTypes = Literal["deepseek_mtp", "mtp"]\n'
        "class SpeculativeConfig:\n"
        "    def hf_config_override(hf_config):\n"
        '        if hf_config.model_type in ("deepseek_v3", "deepseek_v32"):\n'
        '            hf_config.model_type = "deepseek_mtp"\n'
        '        if hf_config.architectures[0] == "MiMoForCausalLM":\n'
        "            pass\n"
    ),
    "vllm/config/cache.py": (
        "class CacheConfig:\n    gpu_memory_utilization: float = Field(default=0.92, gt=0)\n"
    ),
    "vllm/model_executor/layers/quantization/__init__.py": (
        "def get_quantization_config(quantization):\n"
        '    method_to_config: dict[str, type] = {"fp8": Fp8Config, "awq": AutoAWQConfig}\n'
    ),
    "vllm/model_executor/layers/quantization/fp8.py": (
        "class Fp8Config(QuantizationConfig):\n"
        '    def get_name(cls):\n        return "fp8"\n'
        "    def get_min_capability(cls):\n        return 75\n"
    ),
}
SGLANG_FILES = {
    "sglang/srt/models/llama.py": (
        "class LlamaForCausalLM(nn.Module):\n"
        "    def set_eagle3_layers_to_capture(self, ids):\n        pass\n"
        "class Phi3ForCausalLM(LlamaForCausalLM):\n    pass\n"
        "EntryClass = [LlamaForCausalLM, Phi3ForCausalLM]\n"
    ),
    "sglang/srt/layers/quantization/__init__.py": (
        'BASE_QUANTIZATION_METHODS: Dict[str, type] = {"fp8": Fp8Config, "gguf": GGUFConfig}\n'
        "if is_cuda():\n"
        '    BASE_QUANTIZATION_METHODS.update({"mxfp4": Mxfp4Config})\n'
        "if is_npu():\n"
        '    BASE_QUANTIZATION_METHODS.update({"gguf": NpuConfig})\n'
    ),
    "sglang/srt/layers/quantization/mxfp4.py": (
        "class Mxfp4Config(QuantizationConfig):\n"
        "    def get_min_capability(cls):\n        return 80\n"
        "class NpuConfig(QuantizationConfig):\n"
        "    def get_min_capability(cls):\n        return 0\n"
    ),
    "sglang/srt/layers/quantization/fp8.py": (
        "class Fp8Config(QuantizationConfig):\n"
        '    def get_name(self):\n        return "mxfp8" if self.use_mxfp8 else "fp8"\n'
        "    def get_min_capability(self):\n"
        "        if is_npu():\n            return 0\n"
        "        return 100 if self.use_mxfp8 else 80\n"
    ),
    "sglang/srt/layers/quantization/gguf.py": (
        "class GGUFConfig(QuantizationConfig):\n"
        '    def get_name(self):\n        return "gguf"\n'
        "    def get_min_capability(cls):\n        return 60 if not _is_musa else 21\n"
    ),
    "sglang/srt/models/llama_eagle3.py": (
        "class LlamaForCausalLMEagle3(LlamaForCausalLM):\n    pass\n"
        "EntryClass = [LlamaForCausalLMEagle3]\n"
    ),
    "sglang/srt/models/qwen2_eagle.py": (
        "class Qwen2ForCausalLMEagle(Qwen2ForCausalLM):\n    pass\n"
        "EntryClass = Qwen2ForCausalLMEagle\n"
    ),
    "sglang/srt/models/gpt2.py": (
        "class GPT2LMHeadModel(nn.Module):\n    pass\nEntryClass = GPT2LMHeadModel\n"
    ),
    "sglang/srt/configs/model_config.py": (
        "class ModelConfig:\n"
        "    def _config_draft_model(self):\n"
        '        if is_draft_model and self.hf_config.architectures[0] == "Qwen3NextForCausalLM":\n'
        '            self.hf_config.architectures[0] = "Qwen3NextForCausalLMMTP"\n'
    ),
    "sglang/srt/arg_groups/speculative_hook.py": (
        "def _handle_eagle_family(server_args):\n"
        '    if server_args.speculative_algorithm == "NEXTN":\n        pass\n'
        '    if model_arch in ["DeepseekV3ForCausalLM"]:\n        pass\n'
    ),
}


def wheel(path: Path, files: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return path


def test_the_rules_are_read_from_the_sources(tmp_path: Path) -> None:
    vllm = wheel(tmp_path / "vllm-0.27.1-cp38-abi3-linux_x86_64.whl", VLLM_FILES)
    sglang = wheel(tmp_path / "sglang-0.5.17-py3-none-any.whl", SGLANG_FILES)
    document = json.loads(script.rendered(script.merged(None, [vllm, sglang])))
    tables = {engine: document[engine][version] for engine, version in PINNED_VERSIONS.items()}
    assert tables["vllm"] == {
        "version": "0.27.1",
        "eagle3_targets": ["LlamaForCausalLM", "Qwen3ForCausalLM"],  # Qwen3 through its base
        # by the module that implements each speculative architecture (not the MTP one)
        "eagle_heads": {
            "eagle3": ["Eagle3Qwen3ForCausalLM", "LlamaForCausalLMEagle3"],
            "eagle": ["EagleLlamaForCausalLM"],
        },
        "mtp_targets": ["MiMoForCausalLM", "deepseek_mtp", "deepseek_v3", "deepseek_v32", "mtp"],
        "gpu_memory_utilization": 0.92,
        "quantization_min_capability": {"fp8": 75},
    }
    assert tables["sglang"] == {
        "version": "0.5.17",
        "eagle3_targets": ["LlamaForCausalLM", "Phi3ForCausalLM"],
        "eagle_heads": {"eagle3": ["LlamaForCausalLMEagle3"], "eagle": ["Qwen2ForCausalLMEagle"]},
        "mtp_targets": ["DeepseekV3ForCausalLM", "Qwen3NextForCausalLM"],  # not NEXTN
        # the CUDA case: the registry's classes, its CUDA-only additions, not the NPU's
        "quantization_min_capability": {"fp8": 80, "gguf": 60, "mxfp4": 80},
    }


def test_a_release_is_added_beside_the_others_in_version_order(tmp_path: Path) -> None:
    old = wheel(tmp_path / "sglang-0.5.17-py3-none-any.whl", SGLANG_FILES)
    new = wheel(tmp_path / "sglang-0.5.23-py3-none-any.whl", SGLANG_FILES)
    first = script.merged(None, [new])
    both = script.merged(first, [old])
    assert list(both["sglang"]) == ["0.5.17", "0.5.23"]  # type: ignore[call-overload]
    assert both["sglang"]["0.5.23"] == first["sglang"]["0.5.23"]  # type: ignore[index]
    assert list(script.without(both, "sglang", "0.5.23")["sglang"]) == ["0.5.17"]  # type: ignore[call-overload]


def test_every_supported_release_has_its_model_lists() -> None:
    tables = engine_tables()
    for engine in Engine:
        assert list(tables[engine.value]) == list(SUPPORTED_VERSIONS[engine.value])
        for version, table in tables[engine.value].items():
            assert table["version"] == version
            assert "LlamaForCausalLM" in table["eagle3_targets"]
            assert table["mtp_targets"] and table["quantization_min_capability"]
    assert script.rendered(tables) == script.MODELS_JSON.read_text()  # as the script writes it


def test_the_checked_in_tables_are_the_pinned_engines() -> None:
    tables = {e.value: release_tables(e) for e in Engine}
    for engine in Engine:
        table = tables[engine.value]
        assert table["version"] == PINNED_VERSIONS[engine]
        assert "LlamaForCausalLM" in table["eagle3_targets"]
        assert "DeepseekV3ForCausalLM" in table["eagle3_targets"]
    assert "deepseek_v3" in tables["vllm"]["mtp_targets"]
    assert "Qwen3NextForCausalLM" in tables["sglang"]["mtp_targets"]
    assert tables["vllm"]["gpu_memory_utilization"] == 0.92
    assert "LlamaForCausalLMEagle3" in tables["vllm"]["eagle_heads"]["eagle3"]
    assert "EagleLlamaForCausalLM" in tables["vllm"]["eagle_heads"]["eagle"]
    assert tables["sglang"]["eagle_heads"]["eagle3"] == [
        "Eagle3DeepseekV2ForCausalLM",
        "LlamaForCausalLMEagle3",
    ]
    assert "LlamaForCausalLMEagle" in tables["sglang"]["eagle_heads"]["eagle"]
