"""hp:draftTraining.trainerArgs against speculators 0.9.0's own `speculators train` parser table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from training_stacks import TRAINING, problems, training_config

from mlcc.config.trainer_args import OWNED, parse_trainer_args
from mlcc.facts import speculators_train

REPO = Path(__file__).resolve().parents[2]
RELEASE = speculators_train.RELEASES[speculators_train.PINNED_VERSION]
KEY = "hp:draftTraining.trainerArgs"


def refused(args: dict[str, object]) -> dict[str, str]:
    return {
        k.removeprefix(f"{KEY}."): v for k, v in problems({**TRAINING, "trainerArgs": args}).items()
    }


def test_the_table_is_the_pinned_release_with_its_source_record() -> None:
    raw = json.loads((REPO / "mlcc" / "facts" / "speculators_train.json").read_text())
    source = raw["releases"]["0.9.0"]["source"]
    assert source["package"] == "speculators" and source["version"] == "0.9.0"
    assert len(source["wheel_sha256"]) == 64 and source["wheel"].endswith(".whl")
    assert RELEASE.allow_abbrev, "the release's parser takes abbreviations: mlcc must not"
    # Flags the job's own command line uses are the release's (full names).
    for name in ("verifier-name-or-path", "data-path", "save-path", "epochs", "total-seq-len"):
        assert name in RELEASE.options
    assert set(OWNED) <= set(RELEASE.options)


def test_accepted_flags_become_the_release_words() -> None:
    args = {
        "lr": "5e-4",
        "draft-attn-impl": "sdpa",
        "target-layer-ids": [2, 16, 29],
        "fc-norm": True,
        "save-best": False,
        "norm-output": False,
        "--ttt-steps": 4,
    }
    config = training_config(trainerArgs=args)
    assert config.trainer_argv() == [
        "--lr", "5e-4", "--draft-attn-impl", "sdpa", "--target-layer-ids", "2", "16", "29",
        "--fc-norm", "--no-norm-output", "--ttt-steps", "4",
    ]  # fmt: skip


def test_an_unknown_flag_names_the_nearest_real_one() -> None:
    message = refused({"learning-rate": 1e-3, "draft-atn-impl": "sdpa"})
    assert "is not a flag of `speculators train` 0.9.0" in message["learning-rate"]
    assert "did you mean draft-attn-impl?" in message["draft-atn-impl"]


@pytest.mark.parametrize(
    ("short", "full"),
    [("gradient", "--gradient-checkpointing"), ("ttt", "--ttt-step-loss-decay or --ttt-steps")],
)
def test_an_abbreviation_is_refused_though_the_parser_would_take_it(short: str, full: str) -> None:
    message = refused({short: 1})[short]
    assert "is an abbreviation of" in message and "full flag name" in message
    assert full in message


@pytest.mark.parametrize(
    ("flag", "value", "words"),
    [
        ("lr", "fast", "takes a number"),
        ("lr", True, "takes a number"),
        ("lr", float("inf"), "finite"),
        ("num-layers", 1.5, "whole-number"),
        ("num-layers", "two", "whole-number"),
        ("fc-norm", "yes", "true or false"),
        ("target-layer-ids", 3, "non-empty list"),
        ("target-layer-ids", [1, "x"], "whole-number"),
        ("run-name", {"a": 1}, "a string"),
    ],
)
def test_a_value_of_the_wrong_type_is_refused(flag: str, value: object, words: str) -> None:
    options, found = parse_trainer_args({flag: value}, RELEASE)
    assert options == () and words in dict(found)[flag]


@pytest.mark.parametrize(
    ("ids", "words"),
    [
        ([-1, 5], "layer numbers 0 or more"),
        (["-2"], "layer numbers 0 or more"),
        ([3, 5, 3], "each layer once, got 3 more than once"),
        ([1, "1"], "each layer once, got 1 more than once"),
    ],
)
def test_target_layer_ids_below_zero_or_repeated_are_refused_naming_the_key(
    ids: list[object], words: str
) -> None:
    found = problems({**TRAINING, "trainerArgs": {"target-layer-ids": ids}})
    assert list(found) == [f"{KEY}.target-layer-ids"]
    assert words in found[f"{KEY}.target-layer-ids"]


def test_target_layer_ids_from_zero_without_repeats_are_accepted() -> None:
    config = training_config(trainerArgs={"target-layer-ids": [0, "7", 31]})
    assert config.trainer_argv() == ["--target-layer-ids", "0", "7", "31"]


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("draft-attn-impl", "flash"),
        ("optimizer", "sgd"),
        ("scheduler-type", "step"),
        ("loss-implementation", "x"),
    ],
)
def test_a_value_outside_the_choices_is_refused_listing_them(flag: str, value: str) -> None:
    message = refused({flag: value})[flag]
    choices = RELEASE.options[flag].choices
    assert choices is not None and "must be one of " + ", ".join(choices) in message


@pytest.mark.parametrize("flag", sorted(OWNED))
def test_a_flag_the_job_sets_itself_is_refused_with_the_key_to_use(flag: str) -> None:
    assert "is set by the training job" in refused({flag: "1"})[flag]


def test_the_negative_form_of_a_boolean_is_written_as_false() -> None:
    assert "write norm-output: false" in refused({"no-norm-output": True})["no-norm-output"]


def test_the_parse_check_cases_render_and_name_only_table_flags() -> None:
    """scripts/speculators_parse_check.py runs these through the real parser (docs record it);
    here its cases still render, with full names the table knows."""
    import speculators_parse_check as check

    for changes in check.CASES.values():
        words = check.argv_of(changes)
        flags = {w.removeprefix("--") for w in words if w.startswith("--")}
        forms = {f.removeprefix("--") for o in RELEASE.options.values() for f in (o.flag, *o.also)}
        assert flags <= forms
    assert set(check.EXPECTED) == set(check.CASES)
