"""mlcc.engine_contract: the flag rules of hp:engineArgs, model ids, and the env read-back."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlcc import engine_contract as contract

VLLM, SGLANG = contract.VLLM, contract.SGLANG


@pytest.mark.parametrize(
    ("engine", "flag", "expected"),
    [
        (VLLM, "--speculative_config", "speculative-config"),
        (VLLM, "Speculative-Config", "speculative-config"),
        (VLLM, " -sc ", "speculative-config"),
        (VLLM, "tp", "tensor-parallel-size"),
        (VLLM, "--no-enable-prefix-caching", "enable-prefix-caching"),
        (VLLM, "max_model_len=8192", "max-model-len"),
        (SGLANG, "tp", "tp-size"),
        (SGLANG, "tensor_parallel_size", "tp-size"),
        (SGLANG, "--model", "model-path"),
    ],
)
def test_canonical_flag(engine: str, flag: str, expected: str) -> None:
    assert contract.canonical_flag(engine, flag) == expected


REFUSED: list[tuple[str, str, object, str]] = [
    # (engine, flag, value, a phrase the message must contain)
    (VLLM, "max model len", 1, "not a flag name"),
    (VLLM, "", 1, "not a flag name"),
    (VLLM, "--", 1, "not a flag name"),
    (VLLM, "mäx-len", 1, "not a flag name"),
    (VLLM, "dtype", None, "has no value"),
    (VLLM, "dtype", "", "has no value"),
    (VLLM, "dtype", "  \t", "has no value"),
    (VLLM, "dtype", ["half", "bfloat16"], "not a list"),
    (VLLM, "seed", float("nan"), "finite"),
    (VLLM, "dtype", "half\udcff", "UTF-8"),
    (VLLM, "hf-token", "hf_x", "Pulumi secret"),
    (VLLM, "HF_TOKEN", "hf_x", "Pulumi secret"),
    (VLLM, "api-key", "k", "Pulumi secret"),
    (SGLANG, "api_key", "k", "Pulumi secret"),
    (SGLANG, "ssl-keyfile-password", "p", "Pulumi secret"),
    (SGLANG, "admin-api-key", "k", "Pulumi secret"),
    (VLLM, "ssl-keyfile-password", "p", "not a flag of vllm 0.27.1; did you mean ssl-keyfile?"),
    (VLLM, "max-modle-len", 1, "not a flag of vllm 0.27.1; did you mean max-model-len?"),
    (SGLANG, "context-len", 1, "abbreviates --context-length"),
    (SGLANG, "pp", 2, "is ambiguous"),
    (VLLM, "tp", 2, "set by the program"),
    (SGLANG, "disable-radix", True, "abbreviates --disable-radix-cache"),
    (SGLANG, "no-disable-radix-cache", True, "not a flag of sglang 0.5.17"),
    (VLLM, "speculative-config", "{}", "hp:speculative"),
    (VLLM, "Speculative_Config", "{}", "hp:speculative"),
    (VLLM, "sc", "{}", "hp:speculative"),
    (VLLM, "spec-method", "eagle", "hp:speculative"),
    (VLLM, "speculative-config.method", "eagle", "hp:speculative"),
    (VLLM, "specul", "{}", "hp:speculative"),
    (VLLM, "speculative-c", "{}", "hp:speculative"),
    (SGLANG, "speculative-algo", "EAGLE", "hp:speculative"),
    (SGLANG, "speculative-draft-model", "o/d", "hp:speculative"),
    (SGLANG, "speculative-eagle-topk", 4, "hp:speculative"),
    (VLLM, "model", "o/m", "set by the program"),
    (VLLM, "model-path", "o/m", "set by the program"),
    (SGLANG, "model", "o/m", "set by the program"),
    (VLLM, "port", 9000, "set by the program"),
    (VLLM, "host", "::", "set by the program"),
    (VLLM, "tp", 2, "set by the program"),
    (VLLM, "tensor_parallel_size", 2, "set by the program"),
    (VLLM, "tp-size", 2, "set by the program"),
    (SGLANG, "tensor-parallel-size", 2, "set by the program"),
    (SGLANG, "served_model_name", "x", "set by the program"),
    (VLLM, "served-model", "x", "set by the program"),
    (VLLM, "max-model", 1, "abbreviates --max-model-len"),
    (VLLM, "tensor-parallel", 2, "set by the program"),
    (VLLM, "sc", "{}", "hp:speculative"),
    (VLLM, "--sc", "{}", "is ambiguous"),
    (SGLANG, "max-model-len", 8192, "sglang calls it context-length"),
    (SGLANG, "gpu_memory_utilization", 0.9, "sglang calls it mem-fraction-static"),
    (VLLM, "context-length", 8192, "vllm calls it max-model-len"),
]


@pytest.mark.parametrize(("engine", "flag", "value", "phrase"), REFUSED)
def test_engine_arg_problem_names_what_to_change(
    engine: str, flag: str, value: object, phrase: str
) -> None:
    problem = contract.engine_arg_problem(engine, flag, value)
    assert problem is not None and phrase in problem, problem
    assert "\n" not in problem


@pytest.mark.parametrize(
    ("engine", "flag", "value"),
    [
        (VLLM, "max-model-len", 8192),
        (VLLM, "max_model_len", "8192"),
        (VLLM, "Enable-Prefix-Caching", True),
        (VLLM, "enforce-eager", False),
        (VLLM, "seed", -1),
        (VLLM, "gpu-memory-utilization", 0.9),
        (VLLM, "return-tokens-as-token-ids", True),
        (VLLM, "max-num-batched-tokens", 8192),
        (VLLM, "tokenizer", "org/tok"),
        (VLLM, "compilation-config", {"level": 3}),
        (SGLANG, "context-length", 8192),
        (SGLANG, "mem_fraction_static", 0.8),
        (SGLANG, "json-model-override-args", {"rope_scaling": {"type": "yarn"}}),
    ],
)
def test_engine_arg_problem_accepts_real_flags(engine: str, flag: str, value: object) -> None:
    assert contract.engine_arg_problem(engine, flag, value) is None


@given(
    engine=st.sampled_from(contract.ENGINES),
    flag=st.text(max_size=40),
    value=st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text()
    | st.lists(st.integers(), max_size=2)
    | st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
def test_engine_arg_problem_never_raises(engine: str, flag: str, value: object) -> None:
    problem = contract.engine_arg_problem(engine, flag, value)
    assert problem is None or (problem and "\n" not in problem)


def test_secret_flags_are_the_engines_secret_options_and_nothing_else() -> None:
    known = {
        name
        for releases in contract.RELEASE_TABLES.values()
        for table in releases.values()  # every supported release of either engine
        for name in table.long_options
    }
    assert known >= contract.SECRET_FLAGS
    assert {name for name in known if contract.is_secret_flag(name)} == contract.SECRET_FLAGS
    assert contract.is_secret_flag("--future-auth-token")  # a name no pinned engine has
    assert not contract.is_secret_flag("--allow-credentials")


def test_the_generated_option_tables_hold_the_flags_the_project_relies_on() -> None:
    for engine in contract.ENGINES:
        options = contract.engine_options(engine)
        for flag in (
            contract.MODEL_FLAGS[engine],
            contract.TENSOR_PARALLEL_FLAGS[engine],
            contract.SERVED_NAME_FLAG,
            "port",
            "host",
            *contract.OWNED_FLAGS[engine] & set(contract.ENGINE_LONG_OPTIONS[engine]),
        ):
            assert f"--{flag}" in options, (engine, flag)
        for flag in contract.OTHER_ENGINE_FLAGS[engine]:
            assert f"--{flag}" not in options, (engine, flag)
    assert {"--speculative-config", "-sc", "--spec-method"} <= contract.engine_options(VLLM).keys()
    sglang = contract.engine_options(SGLANG)
    for flag in (
        contract.SGLANG_ALGORITHM_FLAG,
        contract.SGLANG_DRAFT_FLAG,
        *contract.SGLANG_TRIPLE,
    ):
        assert f"--{flag}" in sglang
    for neutral in contract.NEUTRAL_SETTINGS.values():
        for engine, flag in neutral.items():
            assert f"--{flag}" in contract.engine_options(engine)


@pytest.mark.parametrize(
    ("engine", "flag", "expected"),
    [
        (VLLM, "Max_Model_Len", "max-model-len"),
        (VLLM, "no_enable_prefix_caching", "no-enable-prefix-caching"),
        (VLLM, "q", "quantization"),
        (SGLANG, "tensor_parallel_size", "tp-size"),
        (SGLANG, "--context-length", "context-length"),
    ],
)
def test_long_flag_is_the_spelling_written_to_the_env(
    engine: str, flag: str, expected: str
) -> None:
    assert contract.long_flag(engine, flag) == expected


def test_duplicate_flags_in_different_spellings() -> None:
    flags = ["max_model_len", "dtype", "max-model-len", "MAX-MODEL-LEN"]
    assert contract.duplicate_flag_problems(VLLM, flags) == [
        ("max-model-len", "is the same flag as max_model_len; set it once"),
        ("MAX-MODEL-LEN", "is the same flag as max_model_len; set it once"),
    ]
    assert [f for f, _ in contract.duplicate_flag_problems(VLLM, ["tp", "tensor-parallel-size"])]
    sglang = contract.duplicate_flag_problems(SGLANG, ["tp", "tp-size", "tensor_parallel_size"])
    assert [flag for flag, _ in sglang] == ["tp-size", "tensor_parallel_size"]
    assert contract.duplicate_flag_problems(VLLM, ["seed", "dtype"]) == []


def test_neutral_settings_translate_per_engine() -> None:
    assert contract.NEUTRAL_SETTINGS["maxModelLen"] == {
        VLLM: "max-model-len",
        SGLANG: "context-length",
    }
    assert contract.neutral_setting(VLLM, "max_model_len") == "maxModelLen"
    assert contract.neutral_setting(SGLANG, "--context-length") == "maxModelLen"
    assert contract.neutral_setting(SGLANG, "max-model-len") is None
    assert contract.neutral_setting(VLLM, "dtype") is None


@pytest.mark.parametrize(
    ("value", "phrase"),
    [
        ("", "is empty"),
        ("   ", "is empty"),
        (" org/name", "spaces around it"),
        ("--x/y", "starts with '-'"),
        ("-org/name", "starts with '-'"),
        ("../x", "relative path"),
        ("./.", "relative path"),
        ("a" * 97 + "/b", "not a Hugging Face model id"),
        ("a" * 200 + "/b", "too long"),
        ("org/na--me", "not a Hugging Face model id"),
        ("org/na..me", "not a Hugging Face model id"),
        ("org/a/b", "not a Hugging Face model id"),
        ("name-only", "not a Hugging Face model id"),
        ("s3://bucket/model", "not a Hugging Face model id"),
        ("org/name\udcff", "UTF-8"),
    ],
)
def test_model_id_problem(value: str, phrase: str) -> None:
    problem = contract.model_id_problem(value)
    assert problem is not None and phrase in problem, problem
    assert len(problem) < 300


@pytest.mark.parametrize("value", ["meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen3-8B", "a/b"])
def test_model_id_problem_accepts_hub_ids(value: str) -> None:
    assert contract.model_id_problem(value) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("3", 3),
        (" 12 ", 12),
        (7, 7),
        ("0", None),
        ("-1", None),
        ("²", None),
        ("\u0663", None),
        ("\uff13", None),
        ("1" * 5000, None),
        (True, None),
        (3.0, None),
        (10**40, None),
    ],
)
def test_parse_count_takes_ascii_digits_only(value: object, expected: int | None) -> None:
    assert contract.parse_count(value) == expected


def test_env_read_back_is_the_dlc_convention() -> None:
    env = {
        "SM_VLLM_SPECULATIVE_CONFIG": '{"method":"Ngram","num_speculative_tokens":4}',
        "SM_VLLM_ENFORCE_EAGER": "True",
        "SM_VLLM_DISABLE_LOG_STATS": " false ",
        "SM_SGLANG_SPECULATIVE_ALGORITHM": "ngram",
        "HP_SPECULATIVE_ALGORITHM": "ngram",
    }
    vllm = contract.env_flags(VLLM, env)
    assert [flag.tokens[0] for flag in vllm] == ["--enforce-eager", "--speculative-config"]
    config = json.loads(vllm[1].value or "")
    assert config == {"method": "ngram", "num_speculative_tokens": 4}
    speculative = contract.speculative_env_flags(SGLANG, env)
    assert [flag.tokens for flag in speculative] == [["--speculative-algorithm", "NGRAM"]]
    assert contract.is_speculative_variable(VLLM, "SM_VLLM_SPEC_METHOD")
    assert contract.is_speculative_variable(VLLM, "SM_VLLM_SPEC_TOKENS")
    assert not contract.is_speculative_variable(VLLM, "SM_VLLM_SC")  # --sc is not -sc
    assert contract.is_speculative_variable(SGLANG, "HP_SPECULATIVE_ALGORITHM")
    assert not contract.is_speculative_variable(VLLM, "SM_SGLANG_SPECULATIVE_ALGORITHM")
    assert not contract.is_speculative_variable(VLLM, "SM_VLLM_MAX_MODEL_LEN")


def test_engine_algorithm_is_the_name_each_engine_receives() -> None:
    eagle2 = contract.ALGORITHMS["eagle2"]
    assert eagle2.engine_algorithm(VLLM) == "eagle"
    assert eagle2.engine_algorithm(SGLANG) == "EAGLE"
    assert contract.algorithm_named(" Eagle3 ") is contract.ALGORITHMS["eagle3"]
    assert contract.algorithm_named("eagle-3") is None


def test_plan_reads_the_env_back_with_the_wrappers_rules() -> None:
    from mlcc.cli.plan.command import speculative_flags
    from mlcc.serving.speculative import SpeculativeSpec, speculative_env

    env = speculative_env(SpeculativeSpec("eagle3", draft_model="org/draft", num_tokens=3))
    env["SM_VLLM_FUTURE_FLAG"] = "1"  # not speculative: not judged here
    vllm, sglang = speculative_flags(env)
    assert vllm == env["SM_VLLM_SPECULATIVE_CONFIG"]
    assert sglang == (
        "--speculative-algorithm EAGLE3 --speculative-draft-model-path org/draft "
        "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4 --speculative-num-steps 3"
    )
    vllm, refused = speculative_flags({**env, "SM_SGLANG_SPECULATIVE_NUM_STEPS": " "})
    assert vllm == env["SM_VLLM_SPECULATIVE_CONFIG"]
    assert refused is not None and "SM_SGLANG_SPECULATIVE_NUM_STEPS: empty value" in refused


def test_plan_reads_each_engine_at_the_endpoint_release() -> None:
    from mlcc.cli.plan.command import speculative_flags

    old, new = contract.SUPPORTED_VERSIONS["sglang"][0], contract.SUPPORTED_VERSIONS["sglang"][-1]
    added = sorted(
        set(contract.speculative_parameters("sglang", new))
        - set(contract.speculative_parameters("sglang", old))
    )
    flag = next(f for f in added if contract.is_speculative_flag("sglang", f))
    env = {"HP_SPECULATIVE_ALGORITHM": "eagle3", contract.env_variable("sglang", flag): "x"}
    assert speculative_flags(env, {"sglang": new})[1] == f"--{flag} x"
    refused = speculative_flags(env, {"sglang": old})[1]
    assert refused is not None and f"is not a flag of sglang {old}" in refused
    assert speculative_flags(env, {"sglang": "0.0.1"}) == speculative_flags(env)  # pinned


@given(value=st.text() | st.sampled_from(["1" * 5000, "-x/y", "../x", "org/name", "/opt/m"]))
def test_model_rules_answer_any_text_with_one_short_line(value: str) -> None:
    for rule in (contract.model_id_problem, contract.draft_model_problem, contract.count_problem):
        problem = rule(value)
        assert problem is None or ("\n" not in problem and len(problem) < 400)


def test_sglang_log_names_per_algorithm_come_from_the_contract() -> None:
    """SGLang logs NEXTN as EAGLE, and EAGLE with a Gemma 4 assistant draft as FROZEN_KV_MTP."""
    from mlcc import engine_contract as contract

    assert contract.sglang_logged_names("NEXTN") == {"NEXTN", "EAGLE", "FROZEN_KV_MTP"}
    assert contract.sglang_logged_names("EAGLE") == {"EAGLE", "FROZEN_KV_MTP"}
    assert contract.sglang_logged_names("EAGLE3") == {"EAGLE3"}
    sglang_names = {a.sglang_algorithm for a in contract.ALGORITHMS.values()}
    assert set(contract.SGLANG_LOGGED_AS) <= sglang_names
