"""The serve wrapper (images/serve/serve.py): DLC env convention, model, arguments, refusals."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import pytest
from serve_harness import (
    ALGO,
    DRAFT,
    DRAFT_TOKENS,
    SERVE_PY,
    SPEC,
    STEPS,
    TOPK,
    dry_run_argv,
    run_serve,
    run_serve_process,
    serve,
)

contract = serve.contract

TARGET = "meta-llama/Llama-3.1-8B-Instruct"
VLLM = ["vllm", "serve"]
SGLANG = ["python3", "-m", "sglang.launch_server"]
DEFAULTS = ["--host", "0.0.0.0", "--port", "8080"]


def runtime_imports(path: Path) -> set[str]:
    """Top-level modules a file imports when run (not those under `if TYPE_CHECKING:`)."""
    tree = ast.parse(path.read_text())
    type_checking_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
        for statement in node.body
        for inner in ast.walk(statement)
    }
    names: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in type_checking_only:
            continue
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module or "")
    return {name.split(".")[0] for name in names}


CONTRACT_MODULES = sorted(Path(contract.__file__).parent.glob("*.py"))


@pytest.mark.parametrize(
    "path", [SERVE_PY, *CONTRACT_MODULES], ids=["serve", *(p.stem for p in CONTRACT_MODULES)]
)
def test_wrapper_and_contract_import_only_the_standard_library(path: Path) -> None:
    # They run on the engine image's own Python, where neither mlcc nor its dependencies exist.
    top_level = runtime_imports(path)
    assert top_level, "expected some imports"
    assert top_level <= set(sys.stdlib_module_names) | {"__future__"}, top_level


def test_from_the_repository_the_wrapper_loads_mlcc_engine_contract() -> None:
    package = SERVE_PY.parents[2] / "mlcc" / "engine_contract"
    assert Path(contract.__file__) == package / "__init__.py"
    assert contract.__name__ == "engine_contract"  # a top-level package, as in the image
    assert Path(contract.flags.__file__) == package / "flags.py"


@pytest.mark.parametrize("path", CONTRACT_MODULES, ids=[p.stem for p in CONTRACT_MODULES])
def test_the_contract_modules_import_each_other_only_relatively(path: Path) -> None:
    # Relative imports keep one package working as mlcc.engine_contract and as the image's
    # top-level engine_contract; an absolute `mlcc` import would fail in the image.
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level > 0:
            assert node.level == 1 and node.module is not None, ast.unparse(node)
            assert (path.parent / f"{node.module}.py").is_file(), ast.unparse(node)


# --- the DLC convention, one variable at a time (pure) ---------------------------------------


def vllm_tokens(variable: str, value: str) -> list[str] | None:
    flag = contract.env_flag("vllm", variable, value)
    return None if flag is None else flag.tokens


def test_true_is_a_bare_flag_in_any_case() -> None:
    assert vllm_tokens("SM_VLLM_ENFORCE_EAGER", "true") == ["--enforce-eager"]
    assert vllm_tokens("SM_VLLM_ENFORCE_EAGER", "True") == ["--enforce-eager"]
    assert vllm_tokens("SM_VLLM_ENFORCE_EAGER", " TRUE\n") == ["--enforce-eager"]


def test_false_omits_the_flag() -> None:
    assert vllm_tokens("SM_VLLM_ENFORCE_EAGER", "false") is None
    assert vllm_tokens("SM_VLLM_ENFORCE_EAGER", "FALSE") is None
    assert vllm_tokens("SM_VLLM_ENFORCE_EAGER", "  false ") is None


def test_json_object_is_one_argument_verbatim_even_across_lines() -> None:
    value = '{\n  "method": "qwen3_5_mtp",\n  "num_speculative_tokens": 1\n}'
    assert vllm_tokens("SM_VLLM_SPECULATIVE_CONFIG", value) == ["--speculative-config", value]


def test_plain_value_is_one_argument_never_shell_split() -> None:
    value = "a b 'c' \"d\"; rm -rf /"
    assert vllm_tokens("SM_VLLM_SERVED_MODEL_NAME", value) == ["--served-model-name", value]


def test_value_starting_with_a_dash_is_attached_with_equals() -> None:
    assert vllm_tokens("SM_VLLM_SEED", "-1") == ["--seed=-1"]


def test_name_to_flag_lowercases_and_dashes_and_values_lose_surrounding_spaces() -> None:
    assert vllm_tokens("SM_VLLM_MAX_MODEL_LEN", " 4096 ") == ["--max-model-len", "4096"]


def test_sglang_algorithm_is_sent_uppercase() -> None:
    flag = contract.env_flag("sglang", "SM_SGLANG_SPECULATIVE_ALGORITHM", " Eagle3 ")
    assert flag.tokens == ["--speculative-algorithm", "EAGLE3"]


def test_vllm_method_in_another_case_is_sent_lowercase() -> None:
    tokens = vllm_tokens("SM_VLLM_SPECULATIVE_CONFIG", '{"method":"Eagle3","model":"o/d"}')
    assert tokens is not None and tokens[0] == "--speculative-config"
    assert json.loads(tokens[1]) == {"method": "eagle3", "model": "o/d"}
    assert vllm_tokens("SM_VLLM_SPEC_METHOD", "NGRAM") == ["--spec-method", "ngram"]


def test_env_options_are_sorted_by_variable_and_ignore_other_engines() -> None:
    env = {
        "SM_VLLM_TENSOR_PARALLEL_SIZE": "2",
        "SM_VLLM_ENFORCE_EAGER": "true",
        "SM_VLLM_MAX_MODEL_LEN": "4096",
        "SM_VLLM_MODEL": TARGET,
        "SM_SGLANG_TP_SIZE": "8",
        "VLLM_LOGGING_LEVEL": "DEBUG",
    }
    flags = [flag for flag in contract.env_flags("vllm", env) if flag.key != "model"]
    tokens = [t for flag in flags for t in flag.tokens]
    assert tokens == ["--enforce-eager", "--max-model-len", "4096", "--tensor-parallel-size", "2"]


# --- container arguments (pure) -----------------------------------------------------------------


def test_argument_settings_reads_all_three_flag_forms_and_the_positional_model() -> None:
    settings = serve.argument_settings(
        serve.ENGINES["vllm"],
        [TARGET, "--max-model-len", "8192", "--dtype=bfloat16", "--enforce-eager", "-tp", "4"],
    )
    assert {key: s.value for key, s in settings.items()} == {
        "model": TARGET,
        "max-model-len": "8192",
        "dtype": "bfloat16",
        "enforce-eager": None,
        "tensor-parallel-size": "4",
    }
    assert settings["dtype"].source == "argument --dtype"


def test_canonical_flag_folds_aliases_underscores_case_and_negation() -> None:
    canonical = contract.canonical_flag
    assert canonical("vllm", "--speculative_config") == "speculative-config"
    assert canonical("vllm", "--Speculative-Config=x") == "speculative-config"
    assert canonical("vllm", "-sc") == "speculative-config"
    assert canonical("vllm", "--no-enable-prefix-caching") == "enable-prefix-caching"
    assert canonical("sglang", "--model") == "model-path"
    assert canonical("sglang", "--tensor-parallel-size") == "tp-size"
    assert canonical("sglang", "--tp") == "tp-size"
    assert canonical("sglang", "--speculative-draft-model") == "speculative-draft-model-path"


# --- model resolution (pure, with a temporary model directory) ----------------------------------


def resolve(engine: str, env: dict[str, str], model_dir: str) -> str | None:
    spec = serve.ENGINES[engine]
    env_model = next((f for f in contract.env_flags(engine, env) if f.key == spec.model_key), None)
    return serve.resolve_model(spec, env_model, env, model_dir)


def test_model_from_the_engine_variable_first(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    env = {"SM_VLLM_MODEL": " org/explicit ", "HF_MODEL_ID": "org/hf"}
    assert resolve("vllm", env, str(tmp_path)) == "org/explicit"


def test_model_directory_with_files_beats_the_hub_id(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    env = {"HF_MODEL_ID": "org/hf", "MODEL_ID": "org/other"}
    assert resolve("sglang", env, str(tmp_path)) == str(tmp_path)
    argv = serve.build_argv("sglang", env, [], model_dir=str(tmp_path))
    assert argv == [*SGLANG, "--model-path", str(tmp_path), *DEFAULTS]


def test_empty_or_missing_model_directory_falls_back_to_hf_model_id(tmp_path: Path) -> None:
    env = {"HF_MODEL_ID": "org/hf", "MODEL_ID": "org/other"}
    assert resolve("vllm", env, str(tmp_path)) == "org/hf"
    missing = str(tmp_path / "absent")
    assert resolve("vllm", {"MODEL_ID": "org/m"}, missing) == "org/m"
    assert resolve("vllm", {"HF_MODEL_ID": "  ", "MODEL_ID": "org/m"}, missing) == "org/m"
    assert resolve("vllm", {}, missing) is None


# --- redaction (pure) ---------------------------------------------------------------------------


def test_redaction_hides_secret_like_values_only() -> None:
    argv = [
        *VLLM,
        TARGET,
        "--api-key",
        "sk-123",
        "--hf-token=hf_abc",
        "--ssl-keyfile-password",
        "pw",
        "--max-num-batched-tokens",
        "8192",
        "--enable-auto-tool-choice",
        "--tokenizer",
        "org/tok",
    ]
    assert serve.redacted(argv) == [
        *VLLM,
        TARGET,
        "--api-key",
        "***",
        "--hf-token=***",
        "--ssl-keyfile-password",
        "***",
        "--max-num-batched-tokens",
        "8192",
        "--enable-auto-tool-choice",
        "--tokenizer",
        "org/tok",
    ]


def test_model_references_are_hub_ids_or_clean_absolute_paths() -> None:
    for value in ("org/name", "/opt/ml/model/draft", "org/name-v1.5", "o_1/m.2"):
        assert contract.draft_model_problem(value) is None, value
    refused = {
        "s3://b/k": "URI",
        "S3://b/k": "URI",
        "gs://b/k": "URI",
        "https://hf.co/x": "URI",
        "arn:aws:s3:::b": "URI",
        "-org/name": "starts with '-'",
        "--model": "starts with '-'",
        "../draft": "relative path",
        "./draft": "relative path",
        "/opt/../etc": "not a clean absolute path",
        "/opt/./x": "not a clean absolute path",
        "//host/x": "not a clean absolute path",
        "org/na--me": "not a Hugging Face id",
        "org/name\n": "spaces around it",
        "": "is empty",
        "a" * 5000: "not a Hugging Face id",
    }
    for value, reason in refused.items():
        problem = contract.draft_model_problem(value)
        assert problem is not None and reason in problem, (value, problem)
        assert "\n" not in problem and len(problem) < 300


# --- end to end in dry-run: the DLC convention --------------------------------------------------


def test_dlc_convention_true_false_json_plain_vllm() -> None:
    config = '{"method":"ngram","num_speculative_tokens":4,"prompt_lookup_max":4}'
    env = {
        "SM_VLLM_MODEL": TARGET,
        "SM_VLLM_ENABLE_PREFIX_CACHING": "true",
        "SM_VLLM_ENFORCE_EAGER": "false",
        "SM_VLLM_SPECULATIVE_CONFIG": config,
        "SM_VLLM_SERVED_MODEL_NAME": "my model",
    }
    assert dry_run_argv("vllm", env) == [
        *VLLM,
        TARGET,
        "--enable-prefix-caching",
        "--served-model-name",
        "my model",
        "--speculative-config",
        config,
        *DEFAULTS,
    ]


def test_dlc_convention_true_false_json_plain_sglang() -> None:
    overrides = '{"rope_scaling": {"type": "yarn", "factor": 4.0}}'
    env = {
        "SM_SGLANG_MODEL_PATH": TARGET,
        "SM_SGLANG_TRUST_REMOTE_CODE": "true",
        "SM_SGLANG_DISABLE_RADIX_CACHE": "false",
        "SM_SGLANG_JSON_MODEL_OVERRIDE_ARGS": overrides,
        "SM_SGLANG_TP_SIZE": "4",
        "SM_VLLM_MAX_MODEL_LEN": "4096",
    }
    assert dry_run_argv("sglang", env) == [
        *SGLANG,
        "--model-path",
        TARGET,
        "--json-model-override-args",
        overrides,
        "--tp-size",
        "4",
        "--trust-remote-code",
        *DEFAULTS,
    ]


def test_port_and_host_from_env_replace_the_defaults() -> None:
    env = {"SM_SGLANG_MODEL_PATH": TARGET, "SM_SGLANG_PORT": "30000", "SM_SGLANG_HOST": "::"}
    assert dry_run_argv("sglang", env) == [
        *SGLANG,
        "--model-path",
        TARGET,
        "--host",
        "::",
        "--port",
        "30000",
    ]


# --- the container's own arguments win, without duplicates --------------------------------------


@pytest.mark.parametrize(
    ("args", "expected_tail"),
    [
        (["--max-model-len", "8192"], ["--max-model-len", "8192"]),
        (["--max-model-len=8192"], ["--max-model-len=8192"]),
        (["--max_model_len", "8192"], ["--max_model_len", "8192"]),
    ],
)
def test_argument_replaces_the_env_flag(args: list[str], expected_tail: list[str]) -> None:
    env = {"SM_VLLM_MODEL": TARGET, "SM_VLLM_MAX_MODEL_LEN": "4096", "SM_VLLM_SEED": "7"}
    argv = dry_run_argv("vllm", env, args)
    assert argv == [*VLLM, TARGET, "--seed", "7", *DEFAULTS, *expected_tail]


def test_bare_and_negated_arguments_replace_env_booleans() -> None:
    env = {
        "SM_VLLM_MODEL": TARGET,
        "SM_VLLM_ENFORCE_EAGER": "true",
        "SM_VLLM_ENABLE_PREFIX_CACHING": "true",
    }
    argv = dry_run_argv("vllm", env, ["--enforce-eager", "--no-enable-prefix-caching"])
    assert argv == [*VLLM, TARGET, *DEFAULTS, "--enforce-eager", "--no-enable-prefix-caching"]


def test_short_alias_argument_replaces_the_long_env_flag() -> None:
    env = {"SM_VLLM_MODEL": TARGET, "SM_VLLM_TENSOR_PARALLEL_SIZE": "2"}
    assert dry_run_argv("vllm", env, ["-tp", "4"]) == [*VLLM, TARGET, *DEFAULTS, "-tp", "4"]


def test_sglang_tp_argument_replaces_the_env_tp_size() -> None:
    env = {"SM_SGLANG_MODEL_PATH": TARGET, "SM_SGLANG_TP_SIZE": "8"}
    argv = dry_run_argv("sglang", env, ["--tp", "4"])
    assert argv == [*SGLANG, "--model-path", TARGET, *DEFAULTS, "--tp", "4"]


def test_port_argument_suppresses_the_default_port_only() -> None:
    env = {"SM_VLLM_MODEL": TARGET}
    argv = dry_run_argv("vllm", env, ["--port", "8000"])
    assert argv == [*VLLM, TARGET, "--host", "0.0.0.0", "--port", "8000"]


def test_vllm_model_argument_as_model_flag_replaces_env_model() -> None:
    # The HyperPod operator injects `--model <id>` for vLLM images.
    env = {"SM_VLLM_MODEL": "org/from-env", "HF_MODEL_ID": "org/hf"}
    argv = dry_run_argv("vllm", env, ["--model", TARGET])
    assert argv == [*VLLM, *DEFAULTS, "--model", TARGET]


def test_vllm_positional_model_argument_replaces_env_model() -> None:
    env = {"SM_VLLM_MODEL": "org/from-env", "SM_VLLM_DTYPE": "half"}
    argv = dry_run_argv("vllm", env, [TARGET, "--dtype", "bfloat16"])
    assert argv == [*VLLM, *DEFAULTS, TARGET, "--dtype", "bfloat16"]


@pytest.mark.parametrize("flag", ["--model-path", "--model"])
def test_sglang_model_argument_replaces_env_model(flag: str) -> None:
    env = {"SM_SGLANG_MODEL_PATH": "org/from-env", "HF_MODEL_ID": "org/hf"}
    argv = dry_run_argv("sglang", env, [flag, "/opt/ml/model"])
    assert argv == [*SGLANG, *DEFAULTS, flag, "/opt/ml/model"]


def test_leading_engine_command_in_arguments_is_dropped() -> None:
    # HyperPod's SGLang sample passes the whole command line as args.
    args = [*SGLANG, "--model-path", "/opt/ml/model", "--port", "30000", "--tp", "4"]
    argv = dry_run_argv("sglang", {}, args)
    tail = ["--model-path", "/opt/ml/model", "--port", "30000", "--tp", "4"]
    assert argv == [*SGLANG, "--host", "0.0.0.0", *tail]


@pytest.mark.parametrize(
    "model",
    ["org/model with spaces", 'org/it\'s "quoted"', "org/m; rm -rf / #", "$(id)", "-x/y"],
)
@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_a_model_that_is_no_hub_id_or_path_is_refused_not_passed_on(
    engine: str, model: str
) -> None:
    result = run_serve(engine, {"HF_MODEL_ID": model})
    assert result.returncode == 2
    assert result.stderr.startswith("mlcc-serve: error: HF_MODEL_ID: ")
    assert result.stdout == ""


# --- the log line ------------------------------------------------------------------------------


def test_log_line_redacts_secret_values_but_dry_run_stdout_is_exact() -> None:
    env = {"SM_VLLM_MODEL": TARGET, "SM_VLLM_API_KEY": "sk-very-secret"}
    result = run_serve_process("vllm", env, ["--hf-token=hf_secret"])
    assert result.returncode == 0
    assert "sk-very-secret" not in result.stderr
    assert "hf_secret" not in result.stderr
    assert result.stderr.splitlines() == [
        "mlcc-serve: exec: vllm serve meta-llama/Llama-3.1-8B-Instruct --api-key '***' "
        "--host 0.0.0.0 --port 8080 '--hf-token=***'"
    ]
    assert json.loads(result.stdout) == [
        *VLLM,
        TARGET,
        "--api-key",
        "sk-very-secret",
        *DEFAULTS,
        "--hf-token=hf_secret",
    ]


# --- refusals: one line naming the variable, exit 2, nothing exec'd -----------------------------

SGLANG_EAGLE3 = {
    "SM_SGLANG_MODEL_PATH": TARGET,
    "SM_SGLANG_SPECULATIVE_ALGORITHM": "EAGLE3",
    "SM_SGLANG_SPECULATIVE_DRAFT_MODEL_PATH": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
    "SM_SGLANG_SPECULATIVE_NUM_STEPS": "3",
    "SM_SGLANG_SPECULATIVE_EAGLE_TOPK": "1",
    "SM_SGLANG_SPECULATIVE_NUM_DRAFT_TOKENS": "4",
}


def without(env: dict[str, str], *names: str) -> dict[str, str]:
    return {key: value for key, value in env.items() if key not in names}


def vllm_config(value: str) -> dict[str, str]:
    return {"SM_VLLM_MODEL": TARGET, "SM_VLLM_SPECULATIVE_CONFIG": value}


REFUSALS: list[tuple[str, str | None, dict[str, str], list[str], str]] = [
    # (case id, engine, env, container args, the variable the line must name)
    ("engine-missing", None, {"HF_MODEL_ID": TARGET}, [], "MLCC_ENGINE"),
    ("engine-unknown", "tgi", {"HF_MODEL_ID": TARGET}, [], "MLCC_ENGINE"),
    ("vllm-no-model", "vllm", {}, [], "SM_VLLM_MODEL"),
    ("sglang-no-model", "sglang", {}, [], "SM_SGLANG_MODEL_PATH"),
    ("empty-value", "vllm", {"HF_MODEL_ID": TARGET, "SM_VLLM_DTYPE": ""}, [], "SM_VLLM_DTYPE"),
    ("vllm-not-json", "vllm", vllm_config("{method: eagle3}"), [], SPEC),
    ("vllm-json-array", "vllm", vllm_config('["eagle3"]'), [], SPEC),
    ("vllm-bare-config", "vllm", vllm_config("true"), [], SPEC),
    ("vllm-empty-object", "vllm", vllm_config("{}"), [], SPEC),
    ("vllm-eagle2", "vllm", vllm_config('{"method":"eagle2","model":"o/d"}'), [], SPEC),
    ("vllm-no-method", "vllm", vllm_config('{"model":"o/d","num_speculative_tokens":3}'), [], SPEC),
    ("vllm-eagle-no-model", "vllm", vllm_config('{"method":"eagle"}'), [], SPEC),
    ("vllm-eagle3-no-model", "vllm", vllm_config('{"method":"eagle3"}'), [], SPEC),
    ("vllm-draft-no-model", "vllm", vllm_config('{"method":"draft_model","model":""}'), [], SPEC),
    ("vllm-s3-model", "vllm", vllm_config('{"method":"eagle3","model":"s3://b/d"}'), [], SPEC),
    (
        "vllm-arn-model",
        "vllm",
        vllm_config('{"method":"eagle","model":"arn:aws:s3:::b"}'),
        [],
        SPEC,
    ),
    ("vllm-https-model", "vllm", vllm_config('{"method":"eagle","model":"https://h/d"}'), [], SPEC),
    (
        "vllm-tokens-zero",
        "vllm",
        vllm_config('{"method":"ngram","num_speculative_tokens":0}'),
        [],
        SPEC,
    ),
    (
        "vllm-tokens-negative",
        "vllm",
        vllm_config('{"method":"mtp","num_speculative_tokens":-2}'),
        [],
        SPEC,
    ),
    (
        "vllm-tokens-float",
        "vllm",
        vllm_config('{"method":"mtp","num_speculative_tokens":1.5}'),
        [],
        SPEC,
    ),
    (
        "vllm-tokens-bool",
        "vllm",
        vllm_config('{"method":"mtp","num_speculative_tokens":true}'),
        [],
        SPEC,
    ),
    (
        "vllm-tokens-word",
        "vllm",
        vllm_config('{"method":"mtp","num_speculative_tokens":"3x"}'),
        [],
        SPEC,
    ),
    ("vllm-ngram-no-tokens", "vllm", vllm_config('{"method":"ngram"}'), [], SPEC),
    ("vllm-mtp-no-tokens", "vllm", vllm_config('{"method":"mtp"}'), [], SPEC),
    (
        "vllm-shorthand-eagle2",
        "vllm",
        {"SM_VLLM_MODEL": TARGET, "SM_VLLM_SPEC_METHOD": "eagle2"},
        [],
        "SM_VLLM_SPEC_METHOD",
    ),
    (
        "vllm-method-twice",
        "vllm",
        {
            **vllm_config('{"method":"ngram","num_speculative_tokens":3}'),
            "SM_VLLM_SPEC_METHOD": "mtp",
        },
        [],
        "SM_VLLM_SPEC_METHOD",
    ),
    (
        "vllm-bad-config-argument",
        "vllm",
        {"SM_VLLM_MODEL": TARGET},
        ["--speculative-config", '{"method":"eagle2"}'],
        "argument --speculative-config",
    ),
    ("sglang-mtp", "sglang", {**SGLANG_EAGLE3, ALGO: "MTP"}, [], ALGO),
    ("sglang-eagle2", "sglang", {**SGLANG_EAGLE3, ALGO: "eagle2"}, [], ALGO),
    ("sglang-unknown", "sglang", {**SGLANG_EAGLE3, ALGO: "medusa"}, [], ALGO),
    ("sglang-eagle3-no-draft", "sglang", without(SGLANG_EAGLE3, DRAFT), [], DRAFT),
    (
        "sglang-eagle-no-draft",
        "sglang",
        {**without(SGLANG_EAGLE3, DRAFT), ALGO: "EAGLE"},
        [],
        DRAFT,
    ),
    (
        "sglang-standalone-no-draft",
        "sglang",
        {**without(SGLANG_EAGLE3, DRAFT), ALGO: "STANDALONE"},
        [],
        DRAFT,
    ),
    ("sglang-empty-draft", "sglang", {**SGLANG_EAGLE3, DRAFT: " "}, [], DRAFT),
    ("sglang-s3-draft", "sglang", {**SGLANG_EAGLE3, DRAFT: "s3://bucket/draft"}, [], DRAFT),
    ("sglang-gs-draft", "sglang", {**SGLANG_EAGLE3, DRAFT: "gs://bucket/draft"}, [], DRAFT),
    ("sglang-arn-draft", "sglang", {**SGLANG_EAGLE3, DRAFT: "arn:aws:s3:::bucket"}, [], DRAFT),
    ("sglang-steps-only", "sglang", without(SGLANG_EAGLE3, TOPK, DRAFT_TOKENS), [], TOPK),
    ("sglang-no-draft-tokens", "sglang", without(SGLANG_EAGLE3, DRAFT_TOKENS), [], DRAFT_TOKENS),
    ("sglang-no-steps", "sglang", without(SGLANG_EAGLE3, STEPS), [], STEPS),
    ("sglang-steps-zero", "sglang", {**SGLANG_EAGLE3, STEPS: "0"}, [], STEPS),
    ("sglang-topk-word", "sglang", {**SGLANG_EAGLE3, TOPK: "four"}, [], TOPK),
    ("sglang-chain-draft-tokens", "sglang", {**SGLANG_EAGLE3, DRAFT_TOKENS: "8"}, [], DRAFT_TOKENS),
    (
        "sglang-triple-without-algorithm",
        "sglang",
        without(SGLANG_EAGLE3, ALGO, DRAFT),
        [],
        STEPS,
    ),
    ("sglang-draft-without-algorithm", "sglang", without(SGLANG_EAGLE3, ALGO), [], DRAFT),
    (
        "sglang-algorithm-argument",
        "sglang",
        SGLANG_EAGLE3,
        ["--speculative-algorithm", "mtp"],
        "argument --speculative-algorithm",
    ),
    (
        "sglang-argument-breaks-triple",
        "sglang",
        SGLANG_EAGLE3,
        ["--speculative-num-steps", "5"],
        DRAFT_TOKENS,
    ),
]


def fake_engine_path(directory: Path) -> tuple[str, Path]:
    """A PATH holding fake `vllm` and `python3` that record their argv (NUL-separated)."""
    marker = directory / "engine-started"
    script = f'#!/bin/sh\nfor a in "$@"; do printf "%s\\0" "$a"; done > "{marker}"\n'
    for name in ("vllm", "python3"):
        fake = directory / name
        fake.write_text(script)
        fake.chmod(0o755)
    return str(directory), marker


def recorded_argv(marker: Path) -> list[str]:
    return marker.read_bytes().decode().split("\0")[:-1]


@pytest.mark.parametrize(
    ("engine", "env", "args", "variable"),
    [case[1:] for case in REFUSALS],
    ids=[case[0] for case in REFUSALS],
)
def test_refusal_is_one_line_naming_the_variable_and_exit_2(
    engine: str | None, env: dict[str, str], args: list[str], variable: str
) -> None:
    result = run_serve(engine, env, args)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"mlcc-serve: error: {variable}: "), lines[0]
    assert len(lines[0]) > len(f"mlcc-serve: error: {variable}: ") + 10
    assert result.stdout == ""


@pytest.mark.parametrize("case", [REFUSALS[0], REFUSALS[-1]], ids=lambda case: case[0])
def test_a_refused_container_never_execs_the_engine(
    tmp_path: Path, case: tuple[str, str | None, dict[str, str], list[str], str]
) -> None:
    _, engine, env, args, variable = case
    path, marker = fake_engine_path(tmp_path)
    result = run_serve_process(engine, env, args, dry_run=False, path=path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"mlcc-serve: error: {variable}: ")
    assert not marker.exists()


def test_refusal_in_dry_run_prints_no_argv() -> None:
    result = run_serve("sglang", without(SGLANG_EAGLE3, DRAFT))
    assert result.returncode == 2
    assert result.stdout == ""


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_success_execs_the_engine_with_the_exact_argv(tmp_path: Path, engine: str) -> None:
    path, marker = fake_engine_path(tmp_path)
    model = "org/odd_model-v1.5"
    result = run_serve_process(
        engine, {"HF_MODEL_ID": model}, ["--seed", "3"], dry_run=False, path=path
    )
    assert result.returncode == 0, result.stderr
    # The fake receives argv[1:]: what follows `vllm` or `python3`.
    head = ["serve", model] if engine == "vllm" else [*SGLANG[1:], "--model-path", model]
    assert recorded_argv(marker) == [*head, *DEFAULTS, "--seed", "3"]


def test_sglang_triple_completed_by_an_argument_is_accepted(tmp_path: Path) -> None:
    env = without(SGLANG_EAGLE3, DRAFT_TOKENS)
    argv = dry_run_argv("sglang", env, ["--speculative-num-draft-tokens", "4"])
    assert argv[-2:] == ["--speculative-num-draft-tokens", "4"]
    assert argv.count("--speculative-num-draft-tokens") == 1


def test_missing_engine_binary_exits_127_with_one_line(tmp_path: Path) -> None:
    result = run_serve_process("vllm", {"HF_MODEL_ID": TARGET}, dry_run=False, path=str(tmp_path))
    assert result.returncode == 127
    assert result.stderr.splitlines()[-1].startswith("mlcc-serve: error: cannot start vllm")


def test_a_known_newer_version_is_judged_by_its_own_names() -> None:
    env = {**without(SGLANG_EAGLE3, DRAFT), ALGO: "UNO", "MLCC_ENGINE_VERSION": "0.5.23"}
    argv = dry_run_argv("sglang", env)
    assert argv[argv.index("--speculative-algorithm") + 1] == "UNO"
    refused = run_serve("sglang", {**env, "MLCC_ENGINE_VERSION": ""})
    assert refused.stderr.startswith(f"mlcc-serve: error: {ALGO}: ")


def test_an_unsupported_engine_version_is_refused_naming_the_supported_ones() -> None:
    env = {**SGLANG_EAGLE3, "MLCC_ENGINE_VERSION": "0.9.0"}
    result = run_serve("sglang", env)
    assert result.returncode == 2
    assert result.stderr.startswith("mlcc-serve: error: MLCC_ENGINE_VERSION: sglang '0.9.0'")
    assert "supported: 0.5.17, 0.5.23" in result.stderr
