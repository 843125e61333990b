"""Stack config parsing (pure) and its agreement with Pulumi.yaml."""

from __future__ import annotations

import json
from pathlib import Path

import pulumi
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlcc.config import stack as config
from mlcc.config.schema import KEYS, pulumi_yaml
from mlcc.config.stack import ConfigError, parse
from mlcc.serving.engines import PINNED_VERSIONS, Engine
from mlcc.serving.speculative import ALGORITHMS

REPO = Path(__file__).resolve().parents[2]
IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/hp-vllm@sha256:" + "a" * 64
REGIONS = {"aws:region": "us-east-1", "aws-native:region": "us-east-1"}
BASE = {"hp:model": "meta-llama/Llama-3.1-8B-Instruct", "hp:image": IMAGE, **REGIONS}


def parse_with(**overrides: str) -> config.Parsed:
    values = {**BASE, **{f"hp:{k}": v for k, v in overrides.items()}}
    return parse(values, stack="dev")


def error_keys(**overrides: str) -> list[str]:
    with pytest.raises(ConfigError) as raised:
        parse_with(**overrides)
    return [p.key for p in raised.value.problems]


def test_pulumi_yaml_is_generated_from_the_key_table() -> None:
    assert (REPO / "Pulumi.yaml").read_text() == pulumi_yaml(), "run `make schema`"


def test_defaults_apply() -> None:
    cfg = parse_with().config
    endpoint = cfg.primary
    assert len(cfg.endpoints) == 1
    assert endpoint.engine is Engine.VLLM
    assert endpoint.engine_release.version == PINNED_VERSIONS[Engine.VLLM]
    assert (endpoint.instance_type, endpoint.gpu_count, endpoint.replicas) == (
        "ml.g5.12xlarge",
        4,
        1,
    )
    assert (cfg.namespace, endpoint.name, endpoint.resource_name) == (
        "default",
        "hp-dev",
        "endpoint",
    )
    assert endpoint.speculative is None and cfg.hf_token is None and endpoint.engine_args == ()


def test_every_error_is_reported_at_once() -> None:
    keys = error_keys(
        engine="tgi",
        model="not-an-id",
        instanceType="m5.large",
        speculativeAlgorithm="eagle3",
        speculativeNumTokens="abc",
        endpointName="Bad_Name",
        replicas="0",
    )
    assert keys == [  # in the order of the key table
        "hp:engine",
        "hp:model",
        "hp:instanceType",
        "hp:replicas",
        "hp:speculativeModel",
        "hp:speculativeNumTokens",
        "hp:endpointName",
    ]


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        ({"speculativeAlgorithm": "medusa"}, "hp:speculativeAlgorithm"),
        ({"speculativeAlgorithm": "eagle3"}, "hp:speculativeModel"),
        ({"speculativeAlgorithm": "eagle"}, "hp:speculativeModel"),
        ({"speculativeAlgorithm": "eagle2"}, "hp:speculativeModel"),
        ({"speculativeAlgorithm": "draft-model"}, "hp:speculativeModel"),
        (
            {"speculativeAlgorithm": "eagle3", "speculativeModel": "s3://b/draft"},
            "hp:speculativeModel",
        ),
        (
            {"speculativeAlgorithm": "eagle3", "speculativeModel": "arn:aws:s3:::b"},
            "hp:speculativeModel",
        ),
        ({"speculativeAlgorithm": "ngram", "speculativeNumTokens": "0"}, "hp:speculativeNumTokens"),
        (
            {"speculativeAlgorithm": "ngram", "speculativeNumTokens": "-3"},
            "hp:speculativeNumTokens",
        ),
        (
            {"speculativeAlgorithm": "ngram", "speculativeNumTokens": "2.5"},
            "hp:speculativeNumTokens",
        ),
        (
            {"speculativeAlgorithm": "ngram", "speculativeNumTokens": "500"},
            "hp:speculativeNumTokens",
        ),
        (
            {
                "speculativeAlgorithm": "eagle2",
                "speculativeModel": "o/d",
                "speculativeEagleTopk": "0",
            },
            "hp:speculativeEagleTopk",
        ),
        ({"engine": "trtllm"}, "hp:engine"),
        ({"model": "s3://bucket/model"}, "hp:model"),
        ({"instanceType": "p5.48xlarge"}, "hp:instanceType"),
        ({"instanceType": "ml.m5.xlarge"}, "hp:instanceType"),
        ({"endpointName": "-bad"}, "hp:endpointName"),
        ({"endpointName": "x" * 64}, "hp:endpointName"),
        (
            {"engine": "sglang", "engineVersion": "0.5.2", "speculativeAlgorithm": "ngram"},
            "hp:engineVersion",
        ),
        ({"engineVersion": "9.9.9"}, "hp:engineVersion"),
        ({"namespace": "Not_Valid"}, "hp:namespace"),
        ({"engineArgs": '{"speculative-config": "{}"}'}, "hp:engineArgs.speculative-config"),
        ({"engineArgs": '{"port": 9000}'}, "hp:engineArgs.port"),
        ({"engineArgs": "[1, 2]"}, "hp:engineArgs"),
        (
            {"engine": "sglang", "engineArgs": '{"max-model-len": 8192}'},
            "hp:engineArgs.max-model-len",
        ),
        ({"engineArgs": '{"context_length": 8192}'}, "hp:engineArgs.context_length"),
        ({"speculativeAlgoritm": "eagle3"}, "hp:speculativeAlgoritm"),
        ({"image": "not an image"}, "hp:image"),
        ({"gpuCount": "0"}, "hp:gpuCount"),
    ],
)
def test_bad_input_names_the_key(overrides: dict[str, str], key: str) -> None:
    assert key in error_keys(**overrides)


def test_unknown_key_suggests_the_right_one() -> None:
    with pytest.raises(ConfigError) as raised:
        parse_with(speculativeAlgoritm="eagle3")
    assert "did you mean hp:speculativeAlgorithm?" in str(raised.value)


def test_missing_model_is_required() -> None:
    with pytest.raises(ConfigError) as raised:
        parse({"hp:image": IMAGE, **REGIONS}, stack="dev")
    assert str(raised.value).startswith("hp:model: is required")


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        ({"speculativeAlgorithm": "ngram", "speculativeModel": "org/draft"}, "hp:speculativeModel"),
        (
            {
                "speculativeAlgorithm": "mtp",
                "speculativeModel": "org/draft",
                "speculativeNumTokens": "1",
            },
            "hp:speculativeModel",
        ),
        ({"speculativeAlgorithm": "ngram", "speculativeEagleTopk": "4"}, "hp:speculativeEagleTopk"),
        ({"speculativeModel": "org/draft"}, "hp:speculativeModel"),
        ({"image": "repo.example.com/hp-vllm:latest"}, "hp:image"),
    ],
)
def test_warnings_are_not_errors(overrides: dict[str, str], key: str) -> None:
    assert key in [w.key for w in parse_with(**overrides).warnings]


def test_draft_model_is_dropped_for_algorithms_without_one() -> None:
    cfg = parse_with(speculativeAlgorithm="ngram", speculativeModel="org/draft").config
    spec = cfg.primary.speculative
    assert spec is not None and spec.draft_model is None


def test_hf_token_must_be_a_secret_and_never_shows() -> None:
    assert "hp:hfToken" in error_keys(hfToken="hf_plaintext")
    values = {**BASE, "hp:hfToken": "hf_secret_value"}
    cfg = parse(values, stack="dev", secret_keys={"hp:hfToken"}).config
    assert cfg.hf_token is not None and cfg.hf_token.value == "hf_secret_value"
    assert "hf_secret_value" not in repr(cfg)


def test_engine_args_become_flags() -> None:
    args = parse_with(
        engineArgs=json.dumps(
            {
                "max_model_len": 8192,
                "--enforce-eager": True,
                "trust-remote-code": False,
                "hf-overrides": {"a": 1},
            }
        )
    ).config.primary.engine_args
    assert args == (
        ("enforce-eager", "true"),
        ("hf-overrides", '{"a":1}'),
        ("max-model-len", "8192"),
        ("trust-remote-code", "false"),
    )


def test_gpu_count_overrides_the_instance_table() -> None:
    cfg = parse_with(instanceType="ml.g7.48xlarge", gpuCount="8").config
    assert cfg.primary.gpu_count == 8


def test_from_pulumi_logs_every_problem_as_an_error_line_then_raises(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`pulumi preview` shows `error: hp:engine: ...`, one line per problem (mlcc plan too)."""
    logged: list[str] = []
    monkeypatch.setattr(pulumi.log, "error", lambda message, *a, **k: logged.append(message))
    pulumi.runtime.set_all_config({"hp:engine": "tgi", **REGIONS}, [])
    with pytest.raises(pulumi.RunError) as raised:
        config.from_pulumi()
    assert str(raised.value) == "invalid stack configuration: 2 errors above; nothing was created"
    assert [line.split(":")[1] for line in logged] == ["engine", "model"]


@given(
    algorithm=st.sampled_from(["", *ALGORITHMS]),
    engine=st.sampled_from(["vllm", "sglang"]),
    tokens=st.integers(-3, 30).map(str) | st.sampled_from(["x", "1.5", ""]),
    topk=st.sampled_from(["", "0", "1", "2", "4", "65"]),
    draft=st.sampled_from(["", "org/draft", "s3://b/k", "/opt/draft"]),
)
def test_parse_either_succeeds_or_names_keys(
    algorithm: str, engine: str, tokens: str, topk: str, draft: str
) -> None:
    try:
        parsed = parse_with(
            speculativeAlgorithm=algorithm,
            engine=engine,
            speculativeNumTokens=tokens,
            speculativeEagleTopk=topk,
            speculativeModel=draft,
        )
    except ConfigError as error:
        assert error.problems
        assert all(p.key.startswith("hp:") and p.message for p in error.problems)
        return
    spec = parsed.config.primary.speculative
    assert (spec is None) == (algorithm == "")


def test_a_flag_of_the_other_engine_names_the_right_one() -> None:
    with pytest.raises(ConfigError) as raised:
        parse_with(engine="sglang", engineArgs='{"max-model-len": 8192}')
    assert str(raised.value) == (
        "hp:engineArgs.max-model-len: is not a sglang flag; sglang calls it context-length"
    )


def test_the_configuration_reference_documents_every_key() -> None:
    reference = (REPO / "docs" / "reference" / "configuration.md").read_text()
    missing = [key.qualified for key in KEYS if f"`{key.qualified}`" not in reference]
    assert missing == [], "add these keys to docs/reference/configuration.md"
