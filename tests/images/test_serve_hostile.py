"""Hostile container environments and arguments: one error line naming what to change, exit 2,
never a traceback; the valid spellings around them (case, spaces, blank = default) still pass."""

from __future__ import annotations

import json
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from serve_harness import (
    ALGO,
    DRAFT,
    DRAFT_TOKENS,
    SPEC,
    STEPS,
    TOPK,
    Result,
    dry_run_argv,
    run_serve,
    serve,
)

contract = serve.contract

TARGET = "meta-llama/Llama-3.1-8B-Instruct"
DRAFT_ID = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"
SGLANG_EAGLE3 = {
    "SM_SGLANG_MODEL_PATH": TARGET,
    ALGO: "EAGLE3",
    DRAFT: DRAFT_ID,
    STEPS: "3",
    TOPK: "1",
    DRAFT_TOKENS: "4",
}
NOT_UTF8 = "org/mod\udcffel"  # os.environ decodes undecodable bytes to lone surrogates
HUGE = "1" * 5000  # int() refuses more than 4300 digits


def vllm_config(config: str) -> dict[str, str]:
    return {"SM_VLLM_MODEL": TARGET, SPEC: config}


def assert_refused(result: Result, variable: str) -> None:
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"mlcc-serve: error: {variable}: "), lines[0]
    assert "Traceback" not in result.stderr
    assert len(lines[0]) < 400, "the value must be shortened, not echoed whole"
    assert result.stdout == ""


COUNTS = ["²", "\u0663", "\uff13", HUGE, "-1", "0", "3.0", "0x3", "1_000", "three", "1e3"]


@pytest.mark.parametrize("value", COUNTS)
@pytest.mark.parametrize("variable", [STEPS, TOPK, DRAFT_TOKENS])
def test_sglang_counts_take_ascii_digits_only(variable: str, value: str) -> None:
    assert_refused(run_serve("sglang", {**SGLANG_EAGLE3, variable: value}), variable)


@pytest.mark.parametrize(
    "tokens",
    ['"²"', '"\u0663"', HUGE, "1e400", "NaN", "Infinity", "-Infinity", "3.5", "[3]", "null"],
)
def test_vllm_token_counts_take_positive_integers_only(tokens: str) -> None:
    config = f'{{"method":"ngram","num_speculative_tokens":{tokens}}}'
    assert_refused(run_serve("vllm", vllm_config(config)), SPEC)


@pytest.mark.parametrize(
    "config",
    [
        "[" * 100_000,
        '{"method":' + "[" * 100_000 + "]" * 100_000 + "}",
        '{"method":"ngram","num_speculative_tokens":3,"x":NaN}',
        "{method: eagle3}",
        '{"method":"eagle3"',
        "",
        "   ",
        '{"method":"eagle3","model":"' + DRAFT_ID + '"} trailing',
    ],
    ids=["deep-array", "deep-method", "nan", "not-json", "unclosed", "empty", "blank", "trailing"],
)
def test_vllm_config_that_is_not_one_clean_json_object_is_refused(config: str) -> None:
    assert_refused(run_serve("vllm", vllm_config(config)), SPEC)


@pytest.mark.parametrize("model", ["-x/y", "--help", "../model", "./model", ".", "~/m", NOT_UTF8])
@pytest.mark.parametrize(
    ("engine", "variable"),
    [("vllm", "SM_VLLM_MODEL"), ("sglang", "SM_SGLANG_MODEL_PATH"), ("vllm", "HF_MODEL_ID")],
)
def test_a_model_that_would_be_read_as_a_flag_or_a_relative_path_is_refused(
    engine: str, variable: str, model: str
) -> None:
    assert_refused(run_serve(engine, {variable: model}), variable)


@pytest.mark.parametrize(
    "draft", ["../draft", "./draft", "draft", "-org/draft", "/opt/../draft", "s3://b/d", NOT_UTF8]
)
def test_draft_paths_must_be_hub_ids_or_clean_absolute_paths(draft: str) -> None:
    assert_refused(run_serve("sglang", {**SGLANG_EAGLE3, DRAFT: draft}), DRAFT)
    config = json.dumps({"method": "eagle3", "model": draft, "num_speculative_tokens": 3})
    assert_refused(run_serve("vllm", vllm_config(config)), SPEC)


@pytest.mark.parametrize(
    ("env", "args", "variable"),
    [
        ({"HF_MODEL_ID": TARGET, "SM_VLLM_DTYPE": ""}, [], "SM_VLLM_DTYPE"),
        ({"HF_MODEL_ID": TARGET, "SM_VLLM_DTYPE": " \t "}, [], "SM_VLLM_DTYPE"),
        ({"HF_MODEL_ID": TARGET, "SM_VLLM_DTYPE": NOT_UTF8}, [], "SM_VLLM_DTYPE"),
        ({"HF_MODEL_ID": TARGET, "SM_VLLM_": "x"}, [], "SM_VLLM_"),
        ({"HF_MODEL_ID": TARGET, "SM_VLLM_FOO$BAR": "1"}, [], "SM_VLLM_FOO$BAR"),
        ({"HF_MODEL_ID": TARGET, "SM_VLLM_SPECUL": '{"method":"eagle2"}'}, [], "SM_VLLM_SPECUL"),
        ({"HF_MODEL_ID": TARGET, "SM_VLLM_CONTEXT_LENGTH": "8192"}, [], "SM_VLLM_CONTEXT_LENGTH"),
        (
            {"HF_MODEL_ID": TARGET, "SM_VLLM_TP": "2", "SM_VLLM_TENSOR_PARALLEL_SIZE": "4"},
            [],
            "SM_VLLM_TP",
        ),
        ({"HF_MODEL_ID": TARGET, "SM_VLLM_MAX_MODLE_LEN": "1"}, [], "SM_VLLM_MAX_MODLE_LEN"),
        ({"HF_MODEL_ID": TARGET, "SM_VLLM_TRUST": "true"}, [], "SM_VLLM_TRUST"),
        ({"HF_MODEL_ID": TARGET}, ["--specul", '{"method":"eagle2"}'], "argument --specul"),
        ({"HF_MODEL_ID": TARGET}, ["--speculative-c={}"], "argument --speculative-c"),
        ({"HF_MODEL_ID": TARGET}, ["--seed", NOT_UTF8], "argument 2"),
        ({"HF_MODEL_ID": TARGET}, ["--model", "../m"], "argument --model"),
    ],
)
def test_hostile_vllm_variables_and_arguments(
    env: dict[str, str], args: list[str], variable: str
) -> None:
    assert_refused(run_serve("vllm", env, args), variable)


@pytest.mark.parametrize(
    ("env", "variable"),
    [
        ({**SGLANG_EAGLE3, "SM_SGLANG_MAX_MODEL_LEN": "8192"}, "SM_SGLANG_MAX_MODEL_LEN"),
        ({**SGLANG_EAGLE3, "SM_SGLANG_SPECULATIVE_DRAFT": DRAFT_ID}, "SM_SGLANG_SPECULATIVE_DRAFT"),
        ({**SGLANG_EAGLE3, "SM_SGLANG_TP": "2", "SM_SGLANG_TP_SIZE": "2"}, "SM_SGLANG_TP_SIZE"),
        ({**SGLANG_EAGLE3, ALGO: "EAGLE\udcff"}, ALGO),
        ({**SGLANG_EAGLE3, ALGO: "E" * 5000}, ALGO),
    ],
)
def test_hostile_sglang_variables(env: dict[str, str], variable: str) -> None:
    assert_refused(run_serve("sglang", env), variable)


def test_an_unknown_flag_gets_a_did_you_mean_and_a_short_option_its_long_name() -> None:
    typo = run_serve("vllm", {"HF_MODEL_ID": TARGET, "SM_VLLM_MAX_MODLE_LEN": "8192"})
    assert typo.stderr.strip().endswith("did you mean max-model-len?")
    short = run_serve("vllm", {"HF_MODEL_ID": TARGET, "SM_VLLM_TP": "2"})
    assert short.stderr.strip().endswith("use its long name tensor-parallel-size")


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_each_release_image_takes_its_own_flags(engine: str) -> None:
    """A flag one supported release added passes on its image and is refused on the other's,
    naming that release; the image's release is MLCC_ENGINE_VERSION (unset: the pinned one)."""
    old, new = contract.SUPPORTED_VERSIONS[engine][0], contract.SUPPORTED_VERSIONS[engine][-1]
    old_flags = set(contract.release_table(engine, old).long_options)
    new_flags = set(contract.release_table(engine, new).long_options)
    added, dropped = sorted(new_flags - old_flags)[0], sorted(old_flags - new_flags)[0]
    for flag, takes, refuses in ((added, new, old), (dropped, old, new)):
        variable = contract.env_variable(engine, flag)
        env = {"HF_MODEL_ID": TARGET, variable: "1"}
        assert f"--{flag}" in dry_run_argv(engine, {**env, "MLCC_ENGINE_VERSION": takes})
        refused = run_serve(engine, {**env, "MLCC_ENGINE_VERSION": refuses})
        assert_refused(refused, variable)
        assert f"is not a flag of {engine} {refuses}" in refused.stderr


def test_an_image_of_an_unsupported_release_is_refused() -> None:
    env = {"HF_MODEL_ID": TARGET, "MLCC_ENGINE_VERSION": "0.9.0"}
    refused = run_serve("vllm", env)
    assert_refused(refused, "MLCC_ENGINE_VERSION")
    assert "not a supported release" in refused.stderr
    assert ", ".join(contract.SUPPORTED_VERSIONS["vllm"]) in refused.stderr


@pytest.mark.parametrize("engine", [None, "", "tgi", "vllm\x00", "v" * 5000, "\udcff"])
def test_unknown_engine_is_refused(engine: str | None) -> None:
    assert_refused(run_serve(engine, {"HF_MODEL_ID": TARGET}), "MLCC_ENGINE")


# --- valid spellings still pass --------------------------------------------------------------


def test_sglang_accepts_case_spaces_and_spaced_counts() -> None:
    env = {**SGLANG_EAGLE3, ALGO: " Eagle3 ", STEPS: " 3", TOPK: "1 ", DRAFT_TOKENS: "\t4\n"}
    argv = dry_run_argv(" SGLang ", env)
    flags = dict(zip(argv[3::2], argv[4::2], strict=False))
    assert flags["--speculative-algorithm"] == "EAGLE3"
    assert flags["--speculative-num-steps"] == "3"
    assert flags["--speculative-num-draft-tokens"] == "4"


def test_vllm_accepts_a_method_in_another_case_and_boolean_case_variants() -> None:
    config = '{"method":"Eagle3","model":"' + DRAFT_ID + '","num_speculative_tokens":3}'
    env = {
        **vllm_config(config),
        "SM_VLLM_ENFORCE_EAGER": " TRUE ",
        "SM_VLLM_TRUST_REMOTE_CODE": "False",
    }
    argv = dry_run_argv("VLLM", env)
    config_token = argv[argv.index("--speculative-config") + 1]
    assert json.loads(config_token)["method"] == "eagle3"
    assert "--enforce-eager" in argv and "--trust-remote-code" not in argv


def test_blank_hub_model_variable_means_unset() -> None:
    argv = dry_run_argv("vllm", {"HF_MODEL_ID": "  ", "MODEL_ID": TARGET})
    assert argv[2] == TARGET


def test_an_absolute_model_path_and_a_negative_seed_are_fine() -> None:
    argv = dry_run_argv(
        "sglang", {"SM_SGLANG_MODEL_PATH": "/opt/ml/model", "SM_SGLANG_RANDOM_SEED": "-1"}
    )
    assert argv[3:5] == ["--model-path", "/opt/ml/model"]
    assert "--random-seed=-1" in argv


# --- the general rule: any environment, any arguments ---------------------------------------

KNOWN_VARIABLES = [
    "MLCC_ENGINE",
    "MLCC_ENGINE_VERSION",
    "HF_MODEL_ID",
    "MODEL_ID",
    "SM_VLLM_MODEL",
    "SM_SGLANG_MODEL_PATH",
    SPEC,
    "SM_VLLM_SPEC_METHOD",
    "SM_VLLM_SPEC_MODEL",
    "SM_VLLM_SPEC_TOKENS",
    "SM_VLLM_SC",
    ALGO,
    DRAFT,
    STEPS,
    TOPK,
    DRAFT_TOKENS,
    "SM_VLLM_MAX_MODEL_LEN",
    "SM_SGLANG_CONTEXT_LENGTH",
    "SM_VLLM_TP",
    "SM_SGLANG_TP_SIZE",
    "SM_VLLM_PORT",
]
ODD_TEXT = st.sampled_from(
    [
        "",
        " ",
        "true",
        "FALSE",
        "-1",
        "²",
        "\u0663",
        "\uff13",
        HUGE,
        "\udcff",
        "../x",
        "-x/y",
        "s3://b/k",
    ]
)
NAMES = st.sampled_from(
    ["eagle", "Eagle3", "EAGLE3", "eagle2", "ngram", "mtp", "NEXTN", "STANDALONE", "draft_model"]
)
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True)
    | st.text(max_size=8)
    | NAMES,
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(["method", "model", "num_speculative_tokens", "x"])
            | st.text(max_size=4),
            children,
            max_size=4,
        )
    ),
    max_leaves=10,
)
VALUES = (
    ODD_TEXT
    | NAMES
    | st.text(max_size=12)
    | st.integers(min_value=-5, max_value=10**12).map(str)
    | JSON_VALUES.map(lambda value: json.dumps(value, allow_nan=True))
    | st.sampled_from([TARGET, DRAFT_ID, "/opt/ml/model/draft", "vllm", "sglang", "0.5.23"])
)
VARIABLES = st.sampled_from(KNOWN_VARIABLES) | st.builds(
    lambda prefix, name: prefix + name,
    st.sampled_from(["SM_VLLM_", "SM_SGLANG_"]),
    st.text(alphabet=string.ascii_uppercase + "_$.-", max_size=24)
    | st.sampled_from(["SPECUL", "SPECULATIVE_C", "TENSOR_PARALLEL_SIZE", "API_KEY", "NO_X"]),
)
ARGUMENTS = st.lists(
    st.sampled_from(
        ["--specul", "-sc", "--tp", "--model", "--speculative-algorithm", "--", "-", "x"]
    )
    | ODD_TEXT
    | VALUES,
    max_size=6,
)


ENGINE_NAMES = st.sampled_from(["vllm", "sglang", " SGLang ", "VLLM"]) | st.none() | VALUES


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    engine=ENGINE_NAMES,
    variables=st.dictionaries(VARIABLES, VALUES, max_size=8),
    args=ARGUMENTS,
)
def test_any_environment_and_arguments_give_an_argv_or_one_error_line(
    engine: str | None, variables: dict[str, str], args: list[str]
) -> None:
    env = variables | ({} if engine is None else {"MLCC_ENGINE": engine})
    try:
        argv = serve.build_argv(engine, env, list(args), model_dir="/nonexistent")
    except contract.EnvProblem as problem:
        named = problem.source in env or problem.source == "MLCC_ENGINE"
        assert named or problem.source.startswith(("argument ", "SM_"))
        line = serve.refusal_line(problem)
        assert "\n" not in line and len(line) < 600
    else:
        assert all(isinstance(token, str) for token in argv)
        assert argv[0] in {"vllm", "python3"}
    result = run_serve(None, env, args)
    assert result.returncode in {0, 2}, result.stderr
    if result.returncode == 2:
        assert len(result.stderr.splitlines()) == 1
        assert result.stderr.startswith("mlcc-serve: error: ")
