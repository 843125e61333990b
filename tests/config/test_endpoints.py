"""hp:endpoints: several endpoints per stack, their keys, baseline twins (pure parsing)."""

from __future__ import annotations

import json

import pytest

from mlcc.config.stack import ConfigError, Parsed, parse
from mlcc.serving.engines import Engine

BASE = {
    "hp:model": "meta-llama/Llama-3.1-8B-Instruct",
    "aws:region": "us-east-1",
    "aws-native:region": "us-east-1",
}
EAGLE3 = {
    "speculativeAlgorithm": "eagle3",
    "speculativeModel": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
}


def parse_entries(entries: object, **top: object) -> Parsed:
    values = {**BASE, "hp:endpoints": json.dumps(entries)}
    values |= {f"hp:{k}": v if isinstance(v, str) else json.dumps(v) for k, v in top.items()}
    return parse(values, stack="dev")


def errors(entries: object, **top: object) -> list[str]:
    with pytest.raises(ConfigError) as raised:
        parse_entries(entries, **top)
    return [str(p) for p in raised.value.problems]


def test_no_entries_keeps_the_single_endpoint_and_its_names() -> None:
    config = parse({**BASE, "hp:endpoints": "[]"}, stack="dev").config
    (endpoint,) = config.endpoints
    assert (endpoint.name, endpoint.resource_name) == ("hp-dev", "endpoint")
    assert config.hf_token_secret_name == "hp-dev-hf-token"


def test_entries_override_the_top_level_defaults() -> None:
    config = parse_entries(
        [
            {"name": "llama-eagle3", **EAGLE3},
            {
                "name": "qwen-ngram",
                "engine": "sglang",
                "model": "Qwen/Qwen3-8B",
                "speculativeAlgorithm": "ngram",
                "replicas": 2,
            },
        ],
        maxModelLen="8192",
    ).config
    first, second = config.endpoints
    assert (first.name, first.resource_name, first.engine) == (
        "llama-eagle3",
        "llama-eagle3",
        Engine.VLLM,
    )
    assert first.speculative is not None and first.speculative.algorithm == "eagle3"
    assert ("max-model-len", "8192") in first.engine_args
    assert (second.engine, second.model, second.replicas) == (Engine.SGLANG, "Qwen/Qwen3-8B", 2)
    assert ("context-length", "8192") in second.engine_args  # the same key, SGLang's flag


def test_baseline_adds_a_twin_without_speculation() -> None:
    config = parse_entries([{"name": "llama", "baseline": True, **EAGLE3}]).config
    endpoint, twin = config.endpoints
    assert twin.name == "llama-baseline" and twin.baseline_of == "llama"
    assert twin.speculative is None
    assert (twin.model, twin.engine, twin.instance_type, twin.replicas) == (
        endpoint.model,
        endpoint.engine,
        endpoint.instance_type,
        endpoint.replicas,
    )


def test_top_level_baseline_twins_the_single_endpoint() -> None:
    values = {**BASE, "hp:baseline": "true", "hp:speculativeAlgorithm": "ngram"}
    names = [(e.name, e.resource_name) for e in parse(values, stack="dev").config.endpoints]
    assert names == [("hp-dev", "endpoint"), ("hp-dev-baseline", "endpoint-baseline")]


def test_default_instance_groups_cover_every_instance_type() -> None:
    config = parse_entries(
        [{"name": "a"}, {"name": "b", "instanceType": "ml.g6e.12xlarge", "replicas": 2}]
    ).config
    groups = config.infrastructure.cluster.instance_groups  # type: ignore[union-attr]
    assert [(g.name, g.instance_type, g.instance_count) for g in groups] == [
        ("gpu", "ml.g5.12xlarge", 1),
        ("gpu-g6e-12xlarge", "ml.g6e.12xlarge", 2),
    ]


@pytest.mark.parametrize(
    ("entries", "line"),
    [
        (
            [{"name": "a", "speculativeAlgorithm": "medusa"}],
            "hp:endpoints[0].speculativeAlgorithm: unknown algorithm 'medusa'",
        ),
        (
            [{"name": "a"}, {"name": "b", "speculativeAlgorithm": "eagle3"}],
            "hp:endpoints[1].speculativeModel: eagle3 needs a draft model",
        ),
        (
            [{"name": "a"}, {"name": "a"}],
            "hp:endpoints[1].name: the endpoint name 'a' is used more than once",
        ),
        (
            [{"name": "a", "modle": "x/y"}],
            "hp:endpoints[0].modle: is not an endpoint field; did you mean model?",
        ),
        ([{"name": "Bad_Name"}], "hp:endpoints[0].name: must be"),
        ([{"model": "x/y"}], "hp:endpoints[0].name: is required"),
        ([{"name": "a", "replicas": 0}], "hp:endpoints[0].replicas: must be between 1 and 100"),
        ([{"name": "a", "replicas": True}], "hp:endpoints[0].replicas"),
        ([{"name": "a", "engine": "tgi"}], "hp:endpoints[0].engine: must be vllm or sglang"),
        ([{"name": "a", "model": " "}], "hp:endpoints[0].model: is blank"),
        ([{"name": "a", "gpuCount": 8}], "hp:endpoints[0].gpuCount: must be between 1 and 4"),
        ([{"name": "a", "engineArgs": {"port": 1}}], "hp:endpoints[0].engineArgs.port"),
        ([{"name": "a", "baseline": "yes"}], "hp:endpoints[0].baseline: must be true or false"),
        ([{"name": "x" * 60, "baseline": True}], "hp:endpoints[0].baseline: the twin's name"),
        (
            [{"name": "a", "baseline": True}, {"name": "a-baseline"}],
            "hp:endpoints[0].baseline: the endpoint name 'a-baseline' is used more than once",
        ),
        ({"name": "a"}, "hp:endpoints: must be a list of maps"),
        (["a"], "hp:endpoints: must be a list of maps"),
        (
            [{"name": "a", "instanceType": "ml.g6.48xlarge"}],
            "hp:endpoints[0].instanceType: ml.g6.48xlarge is not the type of any instance group",
        ),
    ],
)
def test_bad_entries_name_the_entry_and_key(entries: object, line: str) -> None:
    groups = [{"name": "g5", "instanceType": "ml.g5.12xlarge", "instanceCount": 2}]
    top = {"instanceGroups": groups} if "ml.g6.48xlarge" in json.dumps(entries) else {}
    assert any(error.startswith(line) for error in errors(entries, **top)), errors(entries, **top)


def test_a_stack_key_in_an_entry_says_where_it_belongs() -> None:
    assert errors([{"name": "a", "namespace": "other"}]) == [
        "hp:endpoints[0].namespace: is not an endpoint field; hp:namespace is set once, at the "
        "top level"
    ]


def test_an_inherited_bad_value_says_where_it_is_set() -> None:
    found = [e for e in errors([{"name": "a"}, {"name": "b"}], replicas="0") if "replicas" in e]
    assert found == [
        f"hp:endpoints[{i}].replicas: must be between 1 and 100, got 0 (inherited from hp:replicas)"
        for i in (0, 1)
    ]


def test_endpoint_name_is_ignored_with_entries() -> None:
    parsed = parse_entries([{"name": "a"}], endpointName="solo")
    assert "hp:endpointName" in [w.key for w in parsed.warnings]


def test_default_groups_are_sized_for_the_autoscaling_ceiling() -> None:
    config = parse_entries([{"name": "a", "autoscaling": {"maxReplicas": 3}}]).config
    (group,) = config.infrastructure.cluster.instance_groups  # type: ignore[union-attr]
    assert group.instance_count == 3
    assert config.primary.autoscaling is not None
    assert config.primary.autoscaling.max_replicas == 3
