"""The wrapper with the new algorithms: what the program renders passes through unchanged, and
what each engine refuses (a DFLASH without a draft, a DSPARK window that is not block + 1,
vLLM option values below vLLM's own floor) is refused first, naming the variable."""

from __future__ import annotations

import json

import pytest
from serve_harness import dry_run_argv, run_serve

from mlcc.serving.engines import Engine, release
from mlcc.serving.speculative import SpeculativeSpec, speculative_env

TARGET = "meta-llama/Llama-3.1-8B-Instruct"
DRAFT = "z-lab/Qwen3-8B-DFlash-b16"

SPECS = [
    SpeculativeSpec("dflash", DRAFT, 15),
    SpeculativeSpec("dspark", "org/dspark-draft", 7),
    SpeculativeSpec("dspark", None, 5),
    SpeculativeSpec("ngram-gpu", None, 4, options=(("promptLookupMin", 2),)),
]


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: f"{s.algorithm}-{s.draft_model}")
@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_the_rendered_env_reaches_the_engine_unchanged(spec: SpeculativeSpec, engine: str) -> None:
    env = speculative_env(spec)
    prefix = "SM_VLLM_" if engine == "vllm" else "SM_SGLANG_"
    mine = {k: v for k, v in env.items() if k.startswith(prefix)}
    if not mine:  # ngram-gpu: SGLang has no such method and gets no set
        assert spec.definition.engine_algorithm(engine) is None
        return
    model = {"vllm": "SM_VLLM_MODEL", "sglang": "SM_SGLANG_MODEL_PATH"}[engine]
    argv = dry_run_argv(engine, {**env, model: TARGET})
    for variable, value in mine.items():
        flag = "--" + variable.removeprefix(prefix).lower().replace("_", "-")
        assert argv[argv.index(flag) + 1] == value


def test_suffix_on_vllm_0_34_0_passes_the_wrapper() -> None:
    spec = SpeculativeSpec("suffix", None, 8, options=(("suffixMaxTreeDepth", 32),))
    env = speculative_env(spec, {Engine.VLLM: release(Engine.VLLM, "0.34.0")})
    argv = dry_run_argv("vllm", {**env, "SM_VLLM_MODEL": TARGET, "MLCC_ENGINE_VERSION": "0.34.0"})
    config = json.loads(argv[argv.index("--speculative-config") + 1])
    assert config["method"] == "suffix"
    assert config["suffix_decoding_max_tree_depth"] == 32


REFUSED = [
    (
        "sglang",
        {"SM_SGLANG_SPECULATIVE_ALGORITHM": "DFLASH"},
        "SM_SGLANG_SPECULATIVE_DRAFT_MODEL_PATH",
    ),
    (
        "sglang",
        {
            "SM_SGLANG_SPECULATIVE_ALGORITHM": "DSPARK",
            "SM_SGLANG_SPECULATIVE_DSPARK_BLOCK_SIZE": "7",
            "SM_SGLANG_SPECULATIVE_NUM_STEPS": "1",
            "SM_SGLANG_SPECULATIVE_EAGLE_TOPK": "1",
            "SM_SGLANG_SPECULATIVE_NUM_DRAFT_TOKENS": "7",
        },
        "SM_SGLANG_SPECULATIVE_NUM_DRAFT_TOKENS",
    ),
    (
        "vllm",
        {
            "SM_VLLM_SPECULATIVE_CONFIG": json.dumps(
                {"method": "ngram_gpu", "num_speculative_tokens": 3, "prompt_lookup_min": 0}
            )
        },
        "SM_VLLM_SPECULATIVE_CONFIG",
    ),
    (
        "vllm",
        {
            "SM_VLLM_SPECULATIVE_CONFIG": json.dumps(
                {
                    "method": "ngram",
                    "num_speculative_tokens": 3,
                    "prompt_lookup_min": 4,
                    "prompt_lookup_max": 2,
                }
            )
        },
        "SM_VLLM_SPECULATIVE_CONFIG",
    ),
]


@pytest.mark.parametrize(("engine", "env", "variable"), REFUSED)
def test_what_the_engine_refuses_is_refused_first(
    engine: str, env: dict[str, str], variable: str
) -> None:
    model = {"vllm": "SM_VLLM_MODEL", "sglang": "SM_SGLANG_MODEL_PATH"}[engine]
    result = run_serve(engine, {**env, model: TARGET})
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"mlcc-serve: error: {variable}: ")
