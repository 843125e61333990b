"""The schedule line of `mlcc plan`'s headline and of `--diff`, read back from the CR env."""

from __future__ import annotations

import json
from typing import Any

from mlcc.plan.graph import CR_TYPE
from mlcc.plan.schedule import diff_lines, endpoint_schedule
from mlcc.serving.engines import Engine, release
from mlcc.serving.schedule import parse_schedule
from mlcc.serving.speculative import SpeculativeSpec, speculative_env


def cr(name: str, engine: str, schedule: list[dict[str, int]] | None) -> dict[str, Any]:
    parsed, _ = parse_schedule(schedule)
    spec = SpeculativeSpec("eagle3", "org/draft", 5, schedule=parsed)
    env = speculative_env(spec, {Engine(engine): release(Engine(engine))})
    variables = [{"name": k, "value": v} for k, v in env.items()]
    inputs = {
        "metadata": {"name": name, "labels": {"hp.mlcc/engine": engine}},
        "spec": {"worker": {"environmentVariables": variables}},
    }
    return {"type": CR_TYPE, "name": name, "inputs": inputs}


EXAMPLE = [{"from": 1, "to": 8, "tokens": 5}, {"from": 9, "tokens": 0}]


def test_each_engine_shows_the_schedule_it_is_given() -> None:
    for engine in ("vllm", "sglang"):
        assert endpoint_schedule(cr("a", engine, EXAMPLE)["inputs"]) == "1-8: 5, 9+: 0"
        assert endpoint_schedule(cr("a", engine, None)["inputs"]) is None


def test_diff_names_the_endpoint_and_both_schedules() -> None:
    old = [cr("a", "vllm", EXAMPLE), cr("b", "sglang", None)]
    new = [cr("a", "vllm", [{"from": 1, "tokens": 5}]), cr("b", "sglang", None)]
    assert diff_lines(old, new) == ["schedule of a: 1-8: 5, 9+: 0 -> 1+: 5"]
    assert diff_lines(old, old) == []
    assert diff_lines([], [cr("c", "sglang", EXAMPLE)]) == ["schedule of c: none -> 1-8: 5, 9+: 0"]
    assert json.dumps(new)  # plan.json-shaped
