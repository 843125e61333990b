"""The serve wrapper and hp:speculativeSchedule: SGLang's adaptive config written to a file,
and what it refuses before the engine starts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mlcc.serving.engines import Engine, release
from mlcc.serving.schedule import parse_schedule
from mlcc.serving.speculative import SpeculativeSpec, speculative_env
from tests.serve_harness import dry_run_argv, run_serve

TARGET = "meta-llama/Llama-3.1-8B-Instruct"
EXAMPLE = [
    {"from": 1, "to": 8, "tokens": 5},
    {"from": 9, "to": 32, "tokens": 2},
    {"from": 33, "tokens": 0},
]


def rendered(engine: Engine, version: str) -> dict[str, str]:
    schedule, problems = parse_schedule(EXAMPLE)
    assert problems == []
    spec = SpeculativeSpec("eagle3", "org/draft", 5, schedule=schedule)
    env = speculative_env(spec, {engine: release(engine, version)})
    return env | {"MLCC_ENGINE_VERSION": version}


@pytest.mark.parametrize("version", ["0.5.17", "0.5.23"])
def test_sglang_gets_the_file_the_wrapper_writes(tmp_path: Path, version: str) -> None:
    env = rendered(Engine.SGLANG, version) | {
        "SM_SGLANG_MODEL_PATH": TARGET,
        "TMPDIR": str(tmp_path),
    }
    argv = dry_run_argv("sglang", env)
    assert "--speculative-adaptive" in argv
    path = Path(argv[argv.index("--speculative-adaptive-config") + 1])
    assert path.parent == tmp_path and path.name.startswith("mlcc-adaptive-")
    assert json.loads(path.read_text()) == {
        "1": {"candidate_steps": [5]},
        "9": {"candidate_steps": [2]},
        "33": {"candidate_steps": [0]},
    }
    assert argv[argv.index("--speculative-num-steps") + 1] == "5"


@pytest.mark.parametrize("version", ["0.27.1", "0.34.0"])
def test_vllm_gets_the_list_in_its_config(version: str) -> None:
    argv = dry_run_argv("vllm", rendered(Engine.VLLM, version) | {"SM_VLLM_MODEL": TARGET})
    config = json.loads(argv[argv.index("--speculative-config") + 1])
    assert config["num_speculative_tokens_per_batch_size"] == [[1, 8, 5], [9, 32, 2], [33, 33, 0]]


def test_an_unwritable_folder_is_one_refusal_line(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    env = rendered(Engine.SGLANG, "0.5.17") | {
        "SM_SGLANG_MODEL_PATH": TARGET,
        "TMPDIR": str(missing),
    }
    result = run_serve("sglang", env)
    assert result.returncode == 2
    assert result.stderr.startswith(
        "mlcc-serve: error: SM_SGLANG_SPECULATIVE_ADAPTIVE_CONFIG: cannot write"
    )
    assert "Traceback" not in result.stderr


SGLANG_BASE = {
    "SM_SGLANG_MODEL_PATH": TARGET,
    "SM_SGLANG_SPECULATIVE_ALGORITHM": "EAGLE3",
    "SM_SGLANG_SPECULATIVE_DRAFT_MODEL_PATH": "org/draft",
    "SM_SGLANG_SPECULATIVE_NUM_STEPS": "5",
    "SM_SGLANG_SPECULATIVE_EAGLE_TOPK": "1",
    "SM_SGLANG_SPECULATIVE_NUM_DRAFT_TOKENS": "6",
    "SM_SGLANG_SPECULATIVE_ADAPTIVE": "true",
    "SM_SGLANG_SPECULATIVE_ADAPTIVE_CONFIG": json.dumps(
        {"1": {"candidate_steps": [5]}, "9": {"candidate_steps": [2]}}
    ),
}


@pytest.mark.parametrize(
    ("change", "variable", "fragment"),
    [
        (
            {"SM_SGLANG_SPECULATIVE_ALGORITHM": "NGRAM"},
            "SM_SGLANG_SPECULATIVE_ADAPTIVE",
            "for NGRAM",
        ),
        (
            {"SM_SGLANG_ENABLE_DP_ATTENTION": "true"},
            "SM_SGLANG_ENABLE_DP_ATTENTION",
            "attention DP",
        ),
        ({"SM_SGLANG_ENABLE_PDMUX": "true"}, "SM_SGLANG_ENABLE_PDMUX", "pdmux"),
        (
            {"SM_SGLANG_SPECULATIVE_NUM_STEPS": "3", "SM_SGLANG_SPECULATIVE_NUM_DRAFT_TOKENS": "4"},
            "SM_SGLANG_SPECULATIVE_NUM_STEPS",
            "among the adaptive candidate steps (2, 5)",
        ),
        (
            {"SM_SGLANG_SPECULATIVE_ADAPTIVE_CONFIG": '{"2":{"candidate_steps":[5]}}'},
            "SM_SGLANG_SPECULATIVE_ADAPTIVE_CONFIG",
            "must start at batch size 1",
        ),
        (
            {"SM_SGLANG_SPECULATIVE_ADAPTIVE_CONFIG": '{"1":{"candidate_steps":"5"}}'},
            "SM_SGLANG_SPECULATIVE_ADAPTIVE_CONFIG",
            "non-empty list of whole numbers",
        ),
        (
            {"SM_SGLANG_SPECULATIVE_ADAPTIVE_CONFIG": '{"\\u00b9":{"candidate_steps":[5]}}'},
            "SM_SGLANG_SPECULATIVE_ADAPTIVE_CONFIG",
            "ASCII digits",
        ),
        (
            {"SM_SGLANG_SPECULATIVE_ADAPTIVE": "false"},
            "SM_SGLANG_SPECULATIVE_ADAPTIVE_CONFIG",
            "no effect",
        ),
    ],
)
def test_sglang_refusals(
    change: dict[str, str], variable: str, fragment: str, tmp_path: Path
) -> None:
    result = run_serve("sglang", SGLANG_BASE | change | {"TMPDIR": str(tmp_path)})
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"mlcc-serve: error: {variable}: ")
    assert fragment in result.stderr
    assert list(tmp_path.iterdir()) == []  # nothing written for a refused env


VLLM_CONFIG = (
    '{"method":"eagle3","model":"org/draft","num_speculative_tokens":3,'
    '"num_speculative_tokens_per_batch_size":%s}'
)


@pytest.mark.parametrize(
    ("schedule", "extra", "fragment"),
    [
        ("[[2,8,3]]", {}, "must start at batch size 1"),
        ("[[1,8,3],[8,9,2]]", {}, "overlaps"),
        ("[[1,8,4]]", {}, "above num_speculative_tokens 3"),
        ('"x"', {}, "non-empty list"),
        ("[[1,8,true]]", {}, "whole numbers"),
        ("[[1,8,3]]", {"SM_VLLM_DATA_PARALLEL_SIZE": "2"}, "data parallelism is above 1"),
    ],
)
def test_vllm_refusals(schedule: str, extra: dict[str, str], fragment: str) -> None:
    env = {"SM_VLLM_MODEL": TARGET, "SM_VLLM_SPECULATIVE_CONFIG": VLLM_CONFIG % schedule} | extra
    result = run_serve("vllm", env)
    assert result.returncode == 2, result.stderr
    assert fragment in result.stderr and "Traceback" not in result.stderr
