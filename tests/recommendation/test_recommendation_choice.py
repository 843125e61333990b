"""Which speculative settings the endpoint gets: explicit keys, a recommendation, or none."""

from __future__ import annotations

from typing import Any

from recommendation_stubs import EAGLE3_DRAFT

from mlcc.recommendation.choice import (
    NOT_RUN_MESSAGE,
    SpeculativeChoice,
    SpeculativeSource,
    choose_speculative,
)
from mlcc.serving.engines import Engine, EngineRelease, release
from mlcc.serving.speculative import SpeculativeSpec

VLLM = (Engine.VLLM, release(Engine.VLLM))
# Every supported release accepts the seed's algorithms: a release value without NGRAM (as
# SGLang was before 0.5.3) stands for one that does not.
OLD_SGLANG = (
    Engine.SGLANG,
    EngineRelease(Engine.SGLANG, "0.5.2", release(Engine.SGLANG).speculative_names - {"NGRAM"}),
)


def recommended(**changes: Any) -> dict[str, Any]:
    values: dict[str, Any] = {
        "usable": True,
        "algorithm": "eagle3",
        "draft_model": EAGLE3_DRAFT,
        "num_tokens": 4.0,  # numbers come back from the engine as floats
        "reason": None,
    }
    values.update(changes)
    return values


def test_explicit_keys_win_over_the_recommendation() -> None:
    explicit = SpeculativeSpec("ngram", None, 3)
    choice = choose_speculative(explicit, recommended(), *VLLM)
    assert choice == SpeculativeChoice(explicit, SpeculativeSource.EXPLICIT)


def test_a_usable_recommendation_becomes_the_spec() -> None:
    choice = choose_speculative(None, recommended(), *VLLM)
    assert choice.source is SpeculativeSource.RECOMMENDATION
    assert choice.spec == SpeculativeSpec("eagle3", EAGLE3_DRAFT, 4)
    assert choice.message is None


def test_missing_token_count_takes_the_default() -> None:
    choice = choose_speculative(None, recommended(algorithm="ngram", num_tokens=None), *VLLM)
    assert choice.spec == SpeculativeSpec("ngram", None, 5)


def test_nothing_usable_means_no_speculation_with_the_reason() -> None:
    reason = "no speculative recommendation: the top recommendation applies no SpeculativeDecoding"
    choice = choose_speculative(
        None, recommended(usable=False, algorithm=None, reason=reason), *VLLM
    )
    assert choice.spec is None
    assert choice.source is SpeculativeSource.NONE
    assert choice.message == f"{reason}; speculation stays off"


def test_without_optimize_and_without_keys_there_is_nothing() -> None:
    assert choose_speculative(None, None, *VLLM) == SpeculativeChoice(None, SpeculativeSource.NONE)


def test_a_recommendation_the_engine_rejects_is_not_used() -> None:
    choice = choose_speculative(None, recommended(algorithm="ngram"), *OLD_SGLANG)
    assert choice.spec is None
    assert choice.message is not None
    assert "does not fit this stack" in choice.message and "NGRAM" in choice.message


def test_a_job_that_has_not_run_is_said_so() -> None:
    choice = choose_speculative(None, {"usable": None, "algorithm": None}, *VLLM)
    assert choice.spec is None
    assert choice.message == NOT_RUN_MESSAGE
