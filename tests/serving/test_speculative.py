"""The algorithm table and the engine translation (pure: no Pulumi, no mocks)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlcc.serving.engines import Engine, EngineRelease, release
from mlcc.serving.model_hints import model_warnings
from mlcc.serving.speculative import (
    ALGORITHMS,
    SpeculativeSpec,
    accepts,
    check,
    draft_model_problem,
    sglang_env,
    speculative_env,
    vllm_env,
)

DRAFT = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"
VLLM = release(Engine.VLLM)
SGLANG = release(Engine.SGLANG)

# The algorithm table (docs/images.md), written out literally so the code cannot drift from it.
EXPECTED_TABLE = {
    "draft-model": ("draft_model", "STANDALONE", True),
    "eagle": ("eagle", "EAGLE", True),
    "eagle2": ("eagle", "EAGLE", True),
    "eagle3": ("eagle3", "EAGLE3", True),
    "ngram": ("ngram", "NGRAM", False),
    "mtp": ("mtp", "NEXTN", False),
    "ngram-gpu": ("ngram_gpu", None, False),
    "suffix": ("suffix", None, False),
    "dflash": ("dflash", "DFLASH", True),
    "dspark": ("dspark", "DSPARK", False),
}


def spec_for(algorithm: str, **kwargs: object) -> SpeculativeSpec:
    draft = DRAFT if ALGORITHMS[algorithm].needs_draft else None
    return SpeculativeSpec(algorithm, draft, **kwargs)  # type: ignore[arg-type]


def test_table_matches_design() -> None:
    actual = {
        name: (a.vllm_method, a.sglang_algorithm, a.needs_draft) for name, a in ALGORITHMS.items()
    }
    assert actual == EXPECTED_TABLE


SEED = ("draft-model", "eagle", "eagle2", "eagle3", "ngram", "mtp")
# What each supported release runs (the engines' wheels; docs: docs/speculation.md).
RUNS = {
    (Engine.VLLM, "0.27.1"): {*SEED, "ngram-gpu", "dflash", "dspark"},  # suffix: no Arctic
    (Engine.VLLM, "0.34.0"): {*SEED, "ngram-gpu", "suffix", "dflash", "dspark"},
    (Engine.SGLANG, "0.5.17"): {*SEED, "dflash", "dspark"},
    (Engine.SGLANG, "0.5.23"): {*SEED, "dflash", "dspark"},
}
SUPPORTED = [release(engine, version) for engine, version in RUNS]


@pytest.mark.parametrize("algorithm", sorted(ALGORITHMS))
@pytest.mark.parametrize("engine_release", SUPPORTED, ids=lambda r: f"{r.engine}-{r.version}")
def test_supported_releases_run_what_the_table_says(algorithm: str, engine_release: object) -> None:
    assert isinstance(engine_release, EngineRelease)
    expected = algorithm in RUNS[engine_release.engine, engine_release.version]
    assert accepts(engine_release, algorithm) == expected


def test_names_the_older_tool_sent_are_never_produced() -> None:
    for algorithm in ALGORITHMS:
        env = speculative_env(spec_for(algorithm))
        config = json.loads(env.get("SM_VLLM_SPECULATIVE_CONFIG", "{}"))
        assert config.get("method") != "eagle2"
        assert env.get("SM_SGLANG_SPECULATIVE_ALGORITHM") not in {"MTP", "EAGLE2", ""}


def test_eagle3_env_is_exactly_the_design_example() -> None:
    assert speculative_env(SpeculativeSpec("eagle3", "org/draft", 5)) == {
        "HP_SPECULATIVE_ALGORITHM": "eagle3",
        "SM_VLLM_SPECULATIVE_CONFIG": (
            '{"method":"eagle3","model":"org/draft","num_speculative_tokens":5}'
        ),
        "SM_SGLANG_SPECULATIVE_ALGORITHM": "EAGLE3",
        "SM_SGLANG_SPECULATIVE_DRAFT_MODEL_PATH": "org/draft",
        "SM_SGLANG_SPECULATIVE_NUM_STEPS": "5",
        "SM_SGLANG_SPECULATIVE_EAGLE_TOPK": "1",
        "SM_SGLANG_SPECULATIVE_NUM_DRAFT_TOKENS": "6",
    }


@pytest.mark.parametrize("algorithm", ["ngram", "mtp"])
def test_no_model_for_algorithms_without_a_draft(algorithm: str) -> None:
    spec = SpeculativeSpec(algorithm, "org/ignored", 3)
    assert vllm_env(spec) == {
        "SM_VLLM_SPECULATIVE_CONFIG": json.dumps(
            {"method": algorithm, "num_speculative_tokens": 3}, separators=(",", ":")
        )
    }
    assert "SM_SGLANG_SPECULATIVE_DRAFT_MODEL_PATH" not in sglang_env(spec)


def test_eagle2_is_an_sglang_tree_and_a_vllm_chain() -> None:
    env = speculative_env(SpeculativeSpec("eagle2", DRAFT, 5))
    assert json.loads(env["SM_VLLM_SPECULATIVE_CONFIG"])["method"] == "eagle"
    assert env["SM_SGLANG_SPECULATIVE_ALGORITHM"] == "EAGLE"
    assert env["SM_SGLANG_SPECULATIVE_EAGLE_TOPK"] == "4"
    assert env["SM_SGLANG_SPECULATIVE_NUM_DRAFT_TOKENS"] == "8"


def test_tree_draft_tokens_are_user_set_or_bounded_by_the_tree() -> None:
    assert SpeculativeSpec("eagle", DRAFT, 3, 2, 6).sglang_draft_tokens == 6
    assert SpeculativeSpec("eagle", DRAFT, 1, 4).sglang_draft_tokens == 5  # 1 x 4 + 1 < 8


def test_speculation_off_is_an_empty_env() -> None:
    assert speculative_env(None) == {}


def test_an_engine_that_rejects_the_algorithm_gets_no_set() -> None:
    # Every supported release accepts the seed's algorithms: a release value without NGRAM
    # (as SGLang was before 0.5.3) stands for one that does not.
    pinned = release(Engine.SGLANG)
    old_sglang = EngineRelease(Engine.SGLANG, "0.5.2", pinned.speculative_names - {"NGRAM"})
    env = speculative_env(spec_for("ngram"), {Engine.SGLANG: old_sglang})
    assert "SM_VLLM_SPECULATIVE_CONFIG" in env
    assert not any(k.startswith("SM_SGLANG_") for k in env)
    errors = check(spec_for("ngram"), Engine.SGLANG, old_sglang).errors
    assert [e.key for e in errors] == ["hp:speculativeAlgorithm"]
    assert "0.5.2" in errors[0].message


@pytest.mark.parametrize(
    "value",
    [
        "s3://bucket/draft",
        "S3://bucket/draft",
        "https://huggingface.co/org/x",
        "hf://org/x",
        "arn:aws:sagemaker:us-east-1:1:model/x",
        "gs://b/x",
        "draft",
        "org/name/extra",
        "org/",
        "/opt/../etc",
        "/opt/model dir",
        "org/na me",
    ],
)
def test_draft_models_that_are_refused(value: str) -> None:
    assert draft_model_problem(value) is not None


@pytest.mark.parametrize(
    "value",
    [
        DRAFT,
        "RedHatAI/Llama-3.1-8B-Instruct-speculator.eagle3",
        "/opt/ml/draft",
        "/models/eagle3-head",
    ],
)
def test_draft_models_that_are_accepted(value: str) -> None:
    assert draft_model_problem(value) is None


def test_s3_draft_message_says_what_to_do() -> None:
    message = draft_model_problem("s3://bucket/draft")
    assert message is not None and "Hugging Face" in message and "absolute path" in message


@pytest.mark.parametrize("algorithm", ["draft-model", "eagle", "eagle2", "eagle3"])
def test_algorithms_that_need_a_draft_refuse_none(algorithm: str) -> None:
    errors = check(SpeculativeSpec(algorithm, None), Engine.VLLM, VLLM).errors
    assert [e.key for e in errors] == ["hp:speculativeModel"]


def test_top_k_on_a_non_eagle_algorithm_is_a_warning() -> None:
    checked = check(SpeculativeSpec("ngram", None, 5, 4), Engine.SGLANG, SGLANG)
    assert checked.errors == ()
    assert [w.key for w in checked.warnings] == ["hp:speculativeEagleTopk"]


def test_eagle2_with_top_k_one_is_refused() -> None:
    errors = check(SpeculativeSpec("eagle2", DRAFT, 5, 1), Engine.SGLANG, SGLANG).errors
    assert [e.key for e in errors] == ["hp:speculativeEagleTopk"]


def test_draft_tokens_with_a_chain_are_refused() -> None:
    errors = check(SpeculativeSpec("eagle3", DRAFT, 5, None, 6), Engine.SGLANG, SGLANG).errors
    assert [e.key for e in errors] == ["hp:speculativeNumDraftTokens"]


def test_draft_tokens_beyond_the_tree_are_refused() -> None:
    errors = check(SpeculativeSpec("eagle", DRAFT, 2, 2, 6), Engine.SGLANG, SGLANG).errors
    assert [e.key for e in errors] == ["hp:speculativeNumDraftTokens"]


@pytest.mark.parametrize("tokens", [0, -1, 17, 1000])
def test_token_counts_out_of_bounds_are_refused(tokens: int) -> None:
    errors = check(SpeculativeSpec("ngram", None, tokens), Engine.VLLM, VLLM).errors
    assert [e.key for e in errors] == ["hp:speculativeNumTokens"]


specs = st.builds(
    SpeculativeSpec,
    algorithm=st.sampled_from(sorted(ALGORITHMS)),
    draft_model=st.just(DRAFT),
    num_tokens=st.integers(-5, 40),
    eagle_topk=st.none() | st.integers(-2, 80),
    num_draft_tokens=st.none() | st.integers(-2, 300),
)


@given(specs, st.sampled_from(SUPPORTED))
def test_every_accepted_spec_gives_engine_valid_settings(
    spec: SpeculativeSpec, engine_release: EngineRelease
) -> None:
    """Every combination the check accepts renders only what that release's own table holds."""
    engine = engine_release.engine
    checked = check(spec, engine, engine_release)
    if checked.errors:
        assert all(e.key.startswith("hp:speculative") for e in checked.errors)
        return
    env = speculative_env(spec, {engine: engine_release})
    definition = ALGORITHMS[spec.algorithm]
    if engine is Engine.VLLM:
        config = json.loads(env["SM_VLLM_SPECULATIVE_CONFIG"])
        assert config["method"] in engine_release.speculative_names
        assert config["method"] == definition.vllm_method
        assert 1 <= config["num_speculative_tokens"] <= 16
        assert ("model" in config) == definition.takes_draft
        return
    steps = int(env["SM_SGLANG_SPECULATIVE_NUM_STEPS"])
    topk = int(env["SM_SGLANG_SPECULATIVE_EAGLE_TOPK"])
    draft_tokens = int(env["SM_SGLANG_SPECULATIVE_NUM_DRAFT_TOKENS"])
    algorithm = env["SM_SGLANG_SPECULATIVE_ALGORITHM"]
    assert algorithm in engine_release.speculative_names
    if algorithm in {"DFLASH", "DSPARK"}:  # one block per pass: steps and top-k are 1
        assert (steps, topk, draft_tokens) == (1, 1, spec.num_tokens + 1)
        block = env.get("SM_SGLANG_SPECULATIVE_DSPARK_BLOCK_SIZE")
        assert block == (str(spec.num_tokens) if algorithm == "DSPARK" else None)
        return
    assert steps == spec.num_tokens and topk >= 1
    if topk == 1:
        assert draft_tokens == steps + 1
    else:
        assert 2 <= draft_tokens <= steps * topk + 1


def test_draft_tokens_for_a_non_eagle_algorithm_are_ignored_with_a_warning() -> None:
    checked = check(SpeculativeSpec("ngram", None, 5, None, 12), Engine.SGLANG, SGLANG)
    assert checked.errors == ()
    assert [w.key for w in checked.warnings] == ["hp:speculativeNumDraftTokens"]
    assert (
        sglang_env(SpeculativeSpec("ngram", None, 5, None, 12))[
            "SM_SGLANG_SPECULATIVE_NUM_DRAFT_TOKENS"
        ]
        == "6"
    )


LLAMA = "meta-llama/Llama-3.1-8B-Instruct"


@pytest.mark.parametrize(
    ("spec", "key"),
    [
        (SpeculativeSpec("eagle", "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"), "hp:speculativeModel"),
        (SpeculativeSpec("eagle2", "org/model-speculator.eagle3"), "hp:speculativeModel"),
        (SpeculativeSpec("eagle3", "yuhuili/EAGLE-LLaMA3.1-Instruct-8B"), "hp:speculativeModel"),
        (SpeculativeSpec("draft-model", "lmsys/sglang-EAGLE3-LLaMA3.1"), "hp:speculativeModel"),
        (SpeculativeSpec("mtp", None, 1), "hp:speculativeAlgorithm"),
    ],
)
def test_names_that_suggest_a_format_mismatch_warn(spec: SpeculativeSpec, key: str) -> None:
    assert [w.key for w in model_warnings(spec, LLAMA)] == [key]


@pytest.mark.parametrize(
    ("spec", "target"),
    [
        (SpeculativeSpec("eagle3", "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"), LLAMA),
        (SpeculativeSpec("eagle", "yuhuili/EAGLE-LLaMA3.1-Instruct-8B"), LLAMA),
        (SpeculativeSpec("draft-model", "meta-llama/Llama-3.2-1B-Instruct"), LLAMA),
        (SpeculativeSpec("mtp", None, 1), "deepseek-ai/DeepSeek-V3"),
        (SpeculativeSpec("mtp", None, 1), "zai-org/GLM-4.5-Air"),
    ],
)
def test_matching_names_do_not_warn(spec: SpeculativeSpec, target: str) -> None:
    assert model_warnings(spec, target) == []
