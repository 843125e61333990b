"""Contract: the CR env that mlcc.serving.speculative makes, through the wrapper, is what
engines take.

Every expected argv below is written out by hand from the engines' documented CLI (vLLM 0.27.1: one
`--speculative-config` JSON object with an explicit lowercase `method`, a draft `model` only for
methods that load one, and always `num_speculative_tokens`; SGLang 0.5.17: an uppercase
`--speculative-algorithm`, `--speculative-draft-model-path` for EAGLE/EAGLE3/STANDALONE, and the
complete steps/top-k/draft-tokens triple, draft tokens = steps + 1 for top-k 1). They are not
computed by the code under test.
"""

from __future__ import annotations

import ast

import pytest
from serve_harness import SERVE_PY, dry_run_argv, serve

from mlcc import engine_contract
from mlcc.manifest.workload import Workload, environment
from mlcc.serving.engines import ENV_PREFIXES, PINNED_VERSIONS, Engine, release
from mlcc.serving.speculative import SpeculativeSpec, speculative_env

TARGET = "meta-llama/Llama-3.1-8B-Instruct"
SMALL_LM = "meta-llama/Llama-3.2-1B-Instruct"
EAGLE1 = "yuhuili/EAGLE-LLaMA3.1-Instruct-8B"
EAGLE3 = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"
VLLM = ["vllm", "serve", TARGET]
SGLANG = ["python3", "-m", "sglang.launch_server", "--model-path", TARGET]
DEFAULTS = ["--host", "0.0.0.0", "--port", "8080"]

CASES: list[tuple[str, SpeculativeSpec, list[str], list[str]]] = [
    (
        "draft-model",
        SpeculativeSpec("draft-model", draft_model=SMALL_LM, num_tokens=3),
        [
            "--speculative-config",
            '{"method":"draft_model","model":"meta-llama/Llama-3.2-1B-Instruct",'
            '"num_speculative_tokens":3}',
        ],
        [
            "--speculative-algorithm",
            "STANDALONE",
            "--speculative-draft-model-path",
            SMALL_LM,
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "4",
            "--speculative-num-steps",
            "3",
        ],
    ),
    (
        "eagle",
        SpeculativeSpec("eagle", draft_model=EAGLE1, num_tokens=3),
        [
            "--speculative-config",
            '{"method":"eagle","model":"yuhuili/EAGLE-LLaMA3.1-Instruct-8B",'
            '"num_speculative_tokens":3}',
        ],
        [
            "--speculative-algorithm",
            "EAGLE",
            "--speculative-draft-model-path",
            EAGLE1,
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "4",
            "--speculative-num-steps",
            "3",
        ],
    ),
    (
        # All defaults: 5 tokens, top-k 4, draft tokens min(8, 5 * 4 + 1) = 8 (SGLang's own
        # choice for Llama targets is 5/4/8).
        "eagle2-defaults",
        SpeculativeSpec("eagle2", draft_model=EAGLE1),
        [
            "--speculative-config",
            '{"method":"eagle","model":"yuhuili/EAGLE-LLaMA3.1-Instruct-8B",'
            '"num_speculative_tokens":5}',
        ],
        [
            "--speculative-algorithm",
            "EAGLE",
            "--speculative-draft-model-path",
            EAGLE1,
            "--speculative-eagle-topk",
            "4",
            "--speculative-num-draft-tokens",
            "8",
            "--speculative-num-steps",
            "5",
        ],
    ),
    (
        "eagle2-small-tree",
        SpeculativeSpec("eagle2", draft_model=EAGLE1, num_tokens=3, eagle_topk=2),
        [
            "--speculative-config",
            '{"method":"eagle","model":"yuhuili/EAGLE-LLaMA3.1-Instruct-8B",'
            '"num_speculative_tokens":3}',
        ],
        [
            "--speculative-algorithm",
            "EAGLE",
            "--speculative-draft-model-path",
            EAGLE1,
            "--speculative-eagle-topk",
            "2",
            "--speculative-num-draft-tokens",
            "7",
            "--speculative-num-steps",
            "3",
        ],
    ),
    (
        "eagle2-explicit-draft-tokens",
        SpeculativeSpec(
            "eagle2", draft_model=EAGLE1, num_tokens=4, eagle_topk=8, num_draft_tokens=16
        ),
        [
            "--speculative-config",
            '{"method":"eagle","model":"yuhuili/EAGLE-LLaMA3.1-Instruct-8B",'
            '"num_speculative_tokens":4}',
        ],
        [
            "--speculative-algorithm",
            "EAGLE",
            "--speculative-draft-model-path",
            EAGLE1,
            "--speculative-eagle-topk",
            "8",
            "--speculative-num-draft-tokens",
            "16",
            "--speculative-num-steps",
            "4",
        ],
    ),
    (
        "eagle3",
        SpeculativeSpec("eagle3", draft_model=EAGLE3, num_tokens=3),
        [
            "--speculative-config",
            '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",'
            '"num_speculative_tokens":3}',
        ],
        [
            "--speculative-algorithm",
            "EAGLE3",
            "--speculative-draft-model-path",
            EAGLE3,
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "4",
            "--speculative-num-steps",
            "3",
        ],
    ),
    (
        "eagle3-tree",
        SpeculativeSpec("eagle3", draft_model=EAGLE3, num_tokens=3, eagle_topk=4),
        [
            "--speculative-config",
            '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",'
            '"num_speculative_tokens":3}',
        ],
        [
            "--speculative-algorithm",
            "EAGLE3",
            "--speculative-draft-model-path",
            EAGLE3,
            "--speculative-eagle-topk",
            "4",
            "--speculative-num-draft-tokens",
            "8",
            "--speculative-num-steps",
            "3",
        ],
    ),
    (
        "ngram",
        SpeculativeSpec("ngram", num_tokens=4),
        ["--speculative-config", '{"method":"ngram","num_speculative_tokens":4}'],
        [
            "--speculative-algorithm",
            "NGRAM",
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "5",
            "--speculative-num-steps",
            "4",
        ],
    ),
    (
        "mtp",
        SpeculativeSpec("mtp", num_tokens=1),
        ["--speculative-config", '{"method":"mtp","num_speculative_tokens":1}'],
        [
            "--speculative-algorithm",
            "NEXTN",
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "2",
            "--speculative-num-steps",
            "1",
        ],
    ),
]

IDS = [case[0] for case in CASES]


@pytest.mark.parametrize(("name", "spec", "vllm_flags", "sglang_flags"), CASES, ids=IDS)
def test_vllm_argv_for_each_algorithm(
    name: str, spec: SpeculativeSpec, vllm_flags: list[str], sglang_flags: list[str]
) -> None:
    env = {**speculative_env(spec), "SM_VLLM_MODEL": TARGET}
    assert dry_run_argv("vllm", env) == [*VLLM, *vllm_flags, *DEFAULTS]


@pytest.mark.parametrize(("name", "spec", "vllm_flags", "sglang_flags"), CASES, ids=IDS)
def test_sglang_argv_for_each_algorithm(
    name: str, spec: SpeculativeSpec, vllm_flags: list[str], sglang_flags: list[str]
) -> None:
    env = {**speculative_env(spec), "SM_SGLANG_MODEL_PATH": TARGET}
    assert dry_run_argv("sglang", env) == [*SGLANG, *sglang_flags, *DEFAULTS]


def test_every_user_facing_algorithm_is_covered() -> None:
    covered = {spec.algorithm for _, spec, _, _ in CASES}
    assert covered == {"draft-model", "eagle", "eagle2", "eagle3", "ngram", "mtp"}


@pytest.mark.parametrize("algorithm", ["draft-model", "eagle", "eagle2", "eagle3"])
@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_hub_model_injected_by_the_operator_is_enough(algorithm: str, engine: str) -> None:
    # The CR need not carry SM_*_MODEL: HyperPod injects HF_MODEL_ID for Hub models.
    env = {**speculative_env(SpeculativeSpec(algorithm, draft_model=EAGLE3)), "HF_MODEL_ID": TARGET}
    argv = dry_run_argv(engine, env)
    head = VLLM if engine == "vllm" else SGLANG
    assert argv[: len(head)] == head
    assert any(EAGLE3 in token for token in argv[len(head) :])


def test_the_wrapper_runs_the_contract_module_itself() -> None:
    assert serve.contract.__file__ == engine_contract.__file__
    assert set(serve.ENGINES) == set(engine_contract.ENGINES) == {e.value for e in Engine}


def test_the_program_layers_are_views_of_the_contract() -> None:
    for engine in Engine:
        assert release(engine).speculative_names == engine_contract.accepted_names(engine, None)
        assert PINNED_VERSIONS[engine] == engine_contract.PINNED_VERSIONS[engine]
        assert ENV_PREFIXES[engine] == engine_contract.ENV_PREFIXES[engine]


def test_the_wrapper_holds_no_second_table() -> None:
    # No engine name list, version, prefix or variable name is spelled out in serve.py.
    contract_words = {
        *(
            name
            for versions in engine_contract.SPECULATIVE_NAMES.values()
            for v in versions.values()
            for name in v
        ),
        *engine_contract.PINNED_VERSIONS.values(),
        *engine_contract.ENV_PREFIXES.values(),
        *engine_contract.MODEL_VARIABLES.values(),
        *engine_contract.HUB_MODEL_ENVS,
        engine_contract.ALGORITHM_ENV,
        engine_contract.ENGINE_VERSION_ENV,
    }
    literals = {
        node.value
        for node in ast.walk(ast.parse(SERVE_PY.read_text()))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    assert not literals & contract_words


@pytest.mark.parametrize("engine", list(Engine), ids=[e.value for e in Engine])
def test_the_settings_the_program_writes_are_the_flags_the_wrapper_passes(engine: Engine) -> None:
    workload = Workload(
        endpoint_name="hp-dev",
        namespace="inference",
        model_id=TARGET,
        instance_type="ml.g5.12xlarge",
        gpu_count=4,
        replicas=1,
        engine=engine,
        engine_args=((engine_contract.NEUTRAL_SETTINGS["maxModelLen"][engine], "8192"),),
    )
    spec = SpeculativeSpec("eagle3", draft_model=EAGLE3, num_tokens=3)
    env = {str(e["name"]): str(e["value"]) for e in environment(workload, spec) if "value" in e}
    argv = dry_run_argv(engine.value, env)
    head = VLLM if engine is Engine.VLLM else SGLANG
    assert argv[: len(head)] == head
    flags = _flag_values(argv[len(head) :])
    assert flags[f"--{engine_contract.TENSOR_PARALLEL_FLAGS[engine]}"] == "4"
    assert flags[f"--{engine_contract.SERVED_NAME_FLAG}"] == TARGET
    assert flags[f"--{engine_contract.NEUTRAL_SETTINGS['maxModelLen'][engine]}"] == "8192"


def _flag_values(tokens: list[str]) -> dict[str, str | None]:
    """`--flag value` pairs and bare `--flag`s (None), as argparse reads them."""
    values: dict[str, str | None] = {}
    for index, token in enumerate(tokens):
        if token.startswith("--"):
            following = tokens[index + 1] if index + 1 < len(tokens) else "--"
            values[token] = None if following.startswith("--") else following
    return values
