"""The algorithms beyond the seed's six: refusals naming the first release, and the options."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mlcc.config import stack
from mlcc.engine_contract import ALGORITHMS, unrunnable_reason, version_key
from mlcc.engine_contract.names import SPECULATIVE_NAMES
from mlcc.serving.engines import Engine, EngineRelease, release
from mlcc.serving.speculative import SpeculativeSpec, check, speculative_env

VLLM_NEW = release(Engine.VLLM, "0.34.0")


def test_suffix_on_vllm_0_27_1_is_refused_naming_arctic_and_0_34_0() -> None:
    errors = check(SpeculativeSpec("suffix"), Engine.VLLM, release(Engine.VLLM, "0.27.1")).errors
    assert [e.key for e in errors] == ["hp:speculativeAlgorithm"]
    assert "Arctic Inference" in errors[0].message
    assert "set hp:engineVersion to 0.34.0 or newer" in errors[0].message


# Every supported SGLang release runs DFLASH and DSPARK; the rule is shown on a table with one
# older release that lacks each (the names of SGLang 0.5.8 and 0.5.12, as their wheels list them).
OLDER = {"0.5.8": frozenset({"EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM"})}
OLDER["0.5.12"] = OLDER["0.5.8"] | {"DFLASH", "FROZEN_KV_MTP"}
NOT_YET = [("dflash", "0.5.8", "0.5.12"), ("dspark", "0.5.12", "0.5.17")]


@pytest.mark.parametrize(("algorithm", "version", "first"), NOT_YET)
def test_an_sglang_release_without_the_method_names_the_first_that_has_it(
    algorithm: str, version: str, first: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = {**OLDER, **SPECULATIVE_NAMES["sglang"]}
    monkeypatch.setitem(SPECULATIVE_NAMES, "sglang", table)
    spec = SpeculativeSpec(algorithm, "org/draft")
    older = EngineRelease(Engine.SGLANG, version, table[version])
    errors = check(spec, Engine.SGLANG, older).errors
    assert [e.key for e in errors] == ["hp:speculativeAlgorithm"]
    assert f"sglang {version} does not accept" in errors[0].message
    assert f"set hp:engineVersion to {first} or newer" in errors[0].message


@pytest.mark.parametrize("algorithm", ["suffix", "ngram-gpu"])
def test_vllm_only_methods_on_sglang_are_refused_naming_hp_engine(algorithm: str) -> None:
    errors = check(SpeculativeSpec(algorithm), Engine.SGLANG, release(Engine.SGLANG)).errors
    assert [e.key for e in errors] == ["hp:speculativeAlgorithm"]
    assert "set hp:engine to vllm" in errors[0].message


def test_suffix_options_reach_vllm_0_34_0_and_sglang_gets_nothing() -> None:
    spec = SpeculativeSpec(
        "suffix", num_tokens=8, options=(("suffixMaxTreeDepth", 32), ("suffixCorpusTokens", 0))
    )
    assert check(spec, Engine.VLLM, VLLM_NEW).errors == ()
    env = speculative_env(spec, {Engine.VLLM: VLLM_NEW})
    assert json.loads(env["SM_VLLM_SPECULATIVE_CONFIG"]) == {
        "method": "suffix",
        "num_speculative_tokens": 8,
        "suffix_decoding_max_tree_depth": 32,
        "suffix_decoding_corpus_tokens": 0,
    }
    assert not any(k.startswith("SM_SGLANG_") for k in env)


def test_dspark_renders_the_block_for_sglang_and_the_method_for_vllm() -> None:
    env = speculative_env(SpeculativeSpec("dspark", "org/dspark", 7))
    assert json.loads(env["SM_VLLM_SPECULATIVE_CONFIG"]) == {
        "method": "dspark",
        "model": "org/dspark",
        "num_speculative_tokens": 7,
    }
    assert env["SM_SGLANG_SPECULATIVE_ALGORITHM"] == "DSPARK"
    assert env["SM_SGLANG_SPECULATIVE_DSPARK_BLOCK_SIZE"] == "7"
    assert env["SM_SGLANG_SPECULATIVE_NUM_DRAFT_TOKENS"] == "8"
    assert env["SM_SGLANG_SPECULATIVE_NUM_STEPS"] == "1"


def _problems(values: dict[str, str]) -> list[str]:
    base = {"hp:model": "meta-llama/Llama-3.1-8B-Instruct", "hp:engine": "vllm"}
    with pytest.raises(stack.ConfigError) as raised:
        stack.parse({**base, **values}, stack="dev")
    return [str(p) for p in raised.value.problems]


def test_option_bounds_are_refused_naming_the_option_key() -> None:
    problems = _problems(
        {
            "hp:speculativeAlgorithm": "ngram-gpu",
            "hp:speculativeOptions": '{"promptLookupMin": 4, "promptLookupMax": 2, "bogus": 1}',
        }
    )
    assert any(p.startswith("hp:speculativeOptions.bogus: unknown option") for p in problems)
    assert any(
        p.startswith("hp:speculativeOptions.promptLookupMin: must be <= promptLookupMax")
        for p in problems
    )


def test_an_option_the_release_lacks_is_refused_naming_the_release() -> None:
    problems = _problems(
        {
            "hp:speculativeAlgorithm": "suffix",
            "hp:engineVersion": "0.27.1",
            "hp:speculativeOptions": '{"suffixCorpusTokens": 5}',
        }
    )
    assert any(
        p.startswith("hp:speculativeOptions.suffixCorpusTokens: vLLM 0.27.1 has no")
        and "0.34.0" in p
        for p in problems
    )


def test_an_endpoint_entry_sets_its_own_options_and_problems_name_the_entry() -> None:
    problems = _problems(
        {
            "hp:endpoints": json.dumps(
                [
                    {"name": "a", "speculativeAlgorithm": "ngram"},
                    {
                        "name": "b",
                        "speculativeAlgorithm": "ngram",
                        "speculativeOptions": {"promptLookupMax": 0},
                    },
                ]
            )
        }
    )
    assert any(
        p.startswith("hp:endpoints[1].speculativeOptions.promptLookupMax: ") for p in problems
    )
    assert not any(p.startswith("hp:endpoints[0]") for p in problems)


def test_the_first_release_column_agrees_with_the_supported_releases() -> None:
    """Where docs/speculation.md's first release is a supported one, it is the first supported
    release whose own table lists the algorithm's name and whose image can run it (older figures
    predate the supported ones)."""
    readme = (Path(__file__).resolve().parents[2] / "docs" / "speculation.md").read_text()
    rows = [
        [cell.strip().strip("`") for cell in line.strip("|").split("|")]
        for line in readme.splitlines()
        if line.startswith("| `") and line.count("|") == 7
    ]
    checked = 0
    for name, _vllm, _sglang, first, *_ in rows:
        algorithm = ALGORITHMS.get(name)
        if algorithm is None:
            continue
        for engine, shown in zip(("vllm", "sglang"), first.split(" / "), strict=True):
            wanted = algorithm.engine_algorithm(engine)
            table = SPECULATIVE_NAMES[engine]
            having = [
                v
                for v in sorted(table, key=version_key)
                if wanted in table[v] and unrunnable_reason(engine, v, wanted) is None
            ]
            if shown == "none":
                assert not having, (name, engine)
            elif shown in table:
                assert having and having[0] == shown, (name, engine, shown)
                checked += 1
            else:  # older than every supported release: the supported ones all have it
                assert len(having) == len(table), (name, engine, shown)
    assert checked >= 10
