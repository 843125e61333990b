"""hp:speculativeSchedule: the typed schedule, its parser and its engine forms (pure)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlcc import engine_contract as contract
from mlcc.engine_contract import schedule as forms
from mlcc.serving.engines import Engine, release
from mlcc.serving.schedule import (
    ScheduleRange,
    SpeculativeSchedule,
    engine_env,
    parse_schedule,
    ranges_in_env,
)
from mlcc.serving.speculative import SpeculativeSpec, speculative_env

EXAMPLE = [
    {"from": 1, "to": 8, "tokens": 5},
    {"from": 9, "to": 32, "tokens": 2},
    {"from": 33, "tokens": 0},
]


def schedule_of(value: object) -> SpeculativeSchedule:
    schedule, problems = parse_schedule(value)
    assert problems == [] and schedule is not None
    return schedule


def test_the_example_parses_to_frozen_typed_ranges() -> None:
    schedule = schedule_of(EXAMPLE)
    assert schedule.ranges == (
        ScheduleRange(1, 8, 5),
        ScheduleRange(9, 32, 2),
        ScheduleRange(33, None, 0),
    )
    assert schedule.text() == "1-8: 5, 9-32: 2, 33+: 0"
    assert schedule.as_config() == EXAMPLE
    assert [schedule.tokens_for(b) for b in (1, 8, 9, 32, 33, 10_000)] == [5, 5, 2, 2, 0, 0]
    with pytest.raises(AttributeError):
        schedule.ranges = ()  # type: ignore[misc]


@pytest.mark.parametrize("value", [None, [], ""])
def test_an_empty_value_is_no_schedule(value: object) -> None:
    assert parse_schedule(value) == (None, [])


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1-8:5", [("hp:speculativeSchedule", "must be a list of ranges")]),
        ({"from": 1}, [("hp:speculativeSchedule", "must be a list of ranges")]),
        ([5], [("hp:speculativeSchedule[0]", "must be a map")]),
        ([{"from": True, "tokens": 1}], [("hp:speculativeSchedule[0].from", "got bool")]),
        ([{"from": "1", "tokens": 1}], [("hp:speculativeSchedule[0].from", "got '1'")]),
        ([{"from": 1.0, "tokens": 1}], [("hp:speculativeSchedule[0].from", "got float")]),
        ([{"from": 1}], [("hp:speculativeSchedule[0].tokens", "is required")]),
        ([{"from": 1, "tokens": 17}], [("hp:speculativeSchedule[0].tokens", "0 and 16, got 17")]),
        ([{"from": 1, "tokens": -1}], [("hp:speculativeSchedule[0].tokens", "0 and 16, got -1")]),
        ([{"from": 10**40, "tokens": 1}], [("hp:speculativeSchedule[0].from", "of 41 digits")]),
        ([{"from": 1, "tokens": 1, "upto": 3}], [("hp:speculativeSchedule[0]", "'upto'")]),
        ([{"from": 2, "tokens": 1}], [("hp:speculativeSchedule[0]", "must start at batch size 1")]),
        (
            [{"from": 1, "to": 8, "tokens": 1}, {"from": 8, "tokens": 0}],
            [("hp:speculativeSchedule[1]", "overlaps the range before it")],
        ),
        (
            [{"from": 1, "to": 8, "tokens": 1}, {"from": 10, "tokens": 0}],
            [("hp:speculativeSchedule[1]", "batch sizes 9-9 in no range")],
        ),
        (
            [{"from": 1, "tokens": 1}, {"from": 2, "tokens": 0}],
            [("hp:speculativeSchedule[0]", "only the last range may leave it out")],
        ),
        (
            [{"from": 1, "to": 8, "tokens": 1}, {"from": 9, "to": 4, "tokens": 0}],
            [("hp:speculativeSchedule[1]", "ends (4) before it starts (9)")],
        ),
    ],
)
def test_each_problem_names_the_range_and_field(
    value: object, expected: list[tuple[str, str]]
) -> None:
    schedule, problems = parse_schedule(value)
    assert schedule is None
    assert [key for key, _ in problems] == [key for key, _ in expected]
    for (_, message), (_, fragment) in zip(problems, expected, strict=True):
        assert fragment in message


def test_every_problem_at_once() -> None:
    value = [{"from": "x", "tokens": 1}, {"to": 3, "tokens": 99}, {"from": 4, "tokens": True}]
    _, problems = parse_schedule(value, "hp:endpoints[1].speculativeSchedule")
    assert [key for key, _ in problems] == [
        "hp:endpoints[1].speculativeSchedule[0].from",
        "hp:endpoints[1].speculativeSchedule[1].from",
        "hp:endpoints[1].speculativeSchedule[1].tokens",
        "hp:endpoints[1].speculativeSchedule[2].tokens",
    ]


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=12,
)
RANGE_LIKE = st.lists(
    st.fixed_dictionaries(
        {"from": st.integers(-2, 40), "tokens": st.integers(-1, 18)},
        optional={"to": st.integers(-2, 40) | st.none() | st.text(max_size=2)},
    ),
    max_size=5,
)


@given(value=JSON_VALUES | RANGE_LIKE)
def test_any_value_gives_a_schedule_or_named_problems(value: Any) -> None:
    schedule, problems = parse_schedule(value)
    if schedule is None:
        assert problems or value in (None, [], "")
        assert all(key.startswith("hp:speculativeSchedule") and msg for key, msg in problems)
        return
    assert problems == []
    # a parsed schedule is what both engines accept and mean the same by
    assert forms.ranges_problem(schedule.entries) is None
    vllm = contract.ranges_from_vllm(contract.vllm_entries(schedule.entries))
    sglang = contract.ranges_from_sglang(
        json.loads(contract.sglang_adaptive_json(schedule.entries))
    )
    assert isinstance(vllm, list) and isinstance(sglang, list)
    assert [schedule.tokens_for(b) for b in range(1, 50)] == [
        SpeculativeSchedule(tuple(ScheduleRange(*r) for r in vllm)).tokens_for(b)
        for b in range(1, 50)
    ]
    assert [r[0] for r in sglang] == [r.first for r in schedule.ranges]


def test_vllm_gets_the_list_inside_its_config_and_an_open_end_at_its_start() -> None:
    spec = SpeculativeSpec("eagle3", "org/draft", 5, schedule=schedule_of(EXAMPLE))
    for version in ("0.27.1", "0.34.0"):
        env = speculative_env(spec, {Engine.VLLM: release(Engine.VLLM, version)})
        config = json.loads(env["SM_VLLM_SPECULATIVE_CONFIG"])
        assert config["num_speculative_tokens_per_batch_size"] == [
            [1, 8, 5],
            [9, 32, 2],
            [33, 33, 0],
        ]
        assert config["num_speculative_tokens"] == 5
        assert ranges_in_env(env, "vllm") == [(1, 8, 5), (9, 32, 2), (33, None, 0)]


def test_sglang_gets_adaptive_and_the_config_keyed_by_lower_bounds() -> None:
    spec = SpeculativeSpec("eagle3", "org/draft", 5, schedule=schedule_of(EXAMPLE))
    for version in ("0.5.17", "0.5.23"):
        env = speculative_env(spec, {Engine.SGLANG: release(Engine.SGLANG, version)})
        assert env["SM_SGLANG_SPECULATIVE_ADAPTIVE"] == "true"
        assert json.loads(env["SM_SGLANG_SPECULATIVE_ADAPTIVE_CONFIG"]) == {
            "1": {"candidate_steps": [5]},
            "9": {"candidate_steps": [2]},
            "33": {"candidate_steps": [0]},
        }
        assert env["SM_SGLANG_SPECULATIVE_NUM_STEPS"] == "5"
        assert ranges_in_env(env, "sglang") == [(1, 8, 5), (9, 32, 2), (33, None, 0)]


def test_no_schedule_is_rendered_where_the_engine_would_ignore_it() -> None:
    schedule = schedule_of(EXAMPLE)
    ngram = speculative_env(SpeculativeSpec("ngram", None, 5, schedule=schedule))
    assert "SM_SGLANG_SPECULATIVE_ADAPTIVE" not in ngram  # SGLang adapts EAGLE only
    assert "num_speculative_tokens_per_batch_size" in ngram["SM_VLLM_SPECULATIVE_CONFIG"]
    dspark = SpeculativeSpec("dspark", None, 5, schedule=schedule)
    old = speculative_env(dspark, {Engine.VLLM: release(Engine.VLLM, "0.27.1")})
    assert "per_batch_size" not in old["SM_VLLM_SPECULATIVE_CONFIG"]
    steps_elsewhere = SpeculativeSpec("eagle3", "org/draft", 6, schedule=schedule)
    assert "SM_SGLANG_SPECULATIVE_ADAPTIVE" not in speculative_env(steps_elsewhere)


def test_without_a_schedule_the_env_is_unchanged() -> None:
    spec = SpeculativeSpec("eagle3", "org/draft", 5)
    env = speculative_env(spec)
    assert "per_batch_size" not in env["SM_VLLM_SPECULATIVE_CONFIG"]
    assert not any("ADAPTIVE" in name for name in env)
    assert ranges_in_env(env, "vllm") is None and ranges_in_env(env, "sglang") is None


def test_engine_env_keeps_the_other_vllm_fields() -> None:
    env = {"SM_VLLM_SPECULATIVE_CONFIG": '{"method":"eagle3","num_speculative_tokens":3}'}
    rendered = engine_env(schedule_of([{"from": 1, "tokens": 3}]), Engine.VLLM, env)
    assert json.loads(rendered["SM_VLLM_SPECULATIVE_CONFIG"]) == {
        "method": "eagle3",
        "num_speculative_tokens": 3,
        "num_speculative_tokens_per_batch_size": [[1, 1, 3]],
    }
