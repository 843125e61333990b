"""hp:speculativeOptions' SpeculativeConfig fields per vLLM release come from the wheel-generated
engine_flags.json (issue #43 item 5c): a release without data is refused, never given the
newest release's fields."""

from __future__ import annotations

import json

import pytest

from mlcc import engine_contract as contract
from mlcc.engine_contract.flag_tables import FLAGS_FILE
from mlcc.serving import speculative_options as so


def test_the_fields_are_the_generated_tables_parameters() -> None:
    engines = json.loads(FLAGS_FILE.read_text(encoding="utf-8"))["engines"]
    assert set(so.VLLM_OPTION_FIELDS) == set(engines[contract.VLLM])
    for version, release in engines[contract.VLLM].items():
        parameters = set(release["speculative"]["parameters"])
        wanted = {o.field for o in so.OPTIONS.values()}
        assert so.VLLM_OPTION_FIELDS[version] == wanted & parameters, version
    # the one field that came later: 0.34.0's wheel has it, 0.27.1's not
    assert so.first_vllm_release_with("suffix_decoding_corpus_tokens") == "0.34.0"


def test_every_option_is_a_field_of_some_release() -> None:
    for option in so.OPTIONS.values():
        assert so.first_vllm_release_with(option.field) is not None, option.field


@pytest.mark.parametrize("version", ["0.99.0", "0.1.0"])
def test_a_release_without_data_is_refused_not_given_the_newest_fields(version: str) -> None:
    errors, warnings = so.problems({"promptLookupMin": 2}, "ngram", contract.VLLM, version)
    assert warnings == []
    ((key, message),) = errors
    assert key == "hp:speculativeOptions.promptLookupMin"
    assert f"vLLM {version}'s SpeculativeConfig fields are unknown" in message


def test_a_known_release_keeps_its_own_fields() -> None:
    errors, _ = so.problems({"suffixCorpusTokens": 10}, "suffix", contract.VLLM, "0.27.1")
    assert errors and "vLLM 0.27.1 has no suffix_decoding_corpus_tokens" in errors[0][1]
    assert so.problems({"suffixCorpusTokens": 10}, "suffix", contract.VLLM, "0.34.0") == ([], [])
