"""hp:observability's values (mlcc/config/observability/): targets, thresholds, one problem each."""

from __future__ import annotations

import json

import pytest

from mlcc.config.observability import DEFAULTS, ObservabilitySettings, Target, parse_observability
from mlcc.config.stack import ConfigError, parse

KEY = "hp:observability"
WORKSPACE = "ws-0a1b2c3d-4e5f-6789-abcd-ef0123456789"
BASE = {
    "aws:region": "us-east-1",
    "aws-native:region": "us-east-1",
    "hp:model": "meta-llama/Llama-3.1-8B-Instruct",
    "hp:speculativeAlgorithm": "eagle3",
    "hp:speculativeModel": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
}


def settings(raw: object, speculative: tuple[str, ...] = ("llama",)) -> ObservabilitySettings:
    parsed, issues = parse_observability(raw, KEY, speculative)
    assert issues == []
    return parsed


def problems(raw: object, speculative: tuple[str, ...] = ("llama",)) -> list[tuple[str, str]]:
    parsed, issues = parse_observability(raw, KEY, speculative)
    assert parsed == DEFAULTS
    return issues


@pytest.mark.parametrize("raw", [None, "", {}, False, "off", {"target": "off"}])
def test_absent_empty_or_off_is_off(raw: object) -> None:
    assert settings(raw) == DEFAULTS
    assert not DEFAULTS.enabled


@pytest.mark.parametrize(
    ("raw", "target"),
    [
        ("file", Target.FILE),
        ("prometheus-operator", Target.PROMETHEUS_OPERATOR),
        ({"target": "Prometheus_Operator"}, Target.PROMETHEUS_OPERATOR),
        ({"target": "amp", "ampWorkspace": WORKSPACE}, Target.AMP),
    ],
)
def test_targets(raw: object, target: Target) -> None:
    assert settings(raw).target is target


@pytest.mark.parametrize(
    "workspace",
    [
        WORKSPACE,
        f"https://aps-workspaces.us-east-1.amazonaws.com/workspaces/{WORKSPACE}",
        f"https://aps-workspaces.us-east-1.amazonaws.com/workspaces/{WORKSPACE}/api/v1/query",
        f"arn:aws:aps:us-east-1:123456789012:workspace/{WORKSPACE}",
    ],
)
def test_the_amp_workspace_in_each_form_gives_its_id(workspace: str) -> None:
    assert settings({"target": "amp", "ampWorkspace": workspace}).amp_workspace_id == WORKSPACE


def test_thresholds_and_per_endpoint_floors() -> None:
    raw = {
        "target": "file",
        "acceptanceFloor": {"llama": 0.55},
        "acceptanceForMinutes": 5,
        "slowerThanBaselineRatio": 0.9,
        "slowerForMinutes": 20,
        "notReadyForMinutes": 3,
        "queueGrowthMinutes": 7,
        "namespace": "monitoring",
        "ruleLabels": {"release": "kube-prometheus-stack"},
    }
    got = settings(raw)
    assert (got.floor_of("llama"), got.floor_of("other")) == (0.55, DEFAULTS.acceptance_floor)
    assert (got.acceptance_minutes, got.slower_ratio, got.slower_minutes) == (5, 0.9, 20)
    assert (got.not_ready_minutes, got.queue_growth_minutes) == (3, 7)
    assert (got.namespace, dict(got.rule_labels)) == ("monitoring", raw["ruleLabels"])
    assert settings({"target": "file", "acceptanceFloor": 0}).floor_of("llama") == 0


@pytest.mark.parametrize(
    ("raw", "key", "words"),
    [
        ("grafana", KEY, "must be one of off, file, prometheus-operator, amp"),
        (42, KEY, "must be one of"),
        ({"target": "amp"}, f"{KEY}.ampWorkspace", "is required with target amp"),
        ({"target": "file", "ampWorkspace": WORKSPACE}, f"{KEY}.ampWorkspace", "only used"),
        ({"target": "amp", "ampWorkspace": "my-workspace"}, f"{KEY}.ampWorkspace", "must be"),
        ({"target": "file", "acceptanceFloor": 1.5}, f"{KEY}.acceptanceFloor", "from 0"),
        ({"target": "file", "acceptanceFloor": "0.3"}, f"{KEY}.acceptanceFloor", "quotes"),
        (
            {"target": "file", "acceptanceFloor": {"qwen": 0.3}},
            f"{KEY}.acceptanceFloor.qwen",
            "no speculative",
        ),
        ({"target": "file", "acceptanceForMinutes": 0}, f"{KEY}.acceptanceForMinutes", "1 to 1440"),
        ({"target": "file", "queueGrowthMinutes": 2.5}, f"{KEY}.queueGrowthMinutes", "whole"),
        (
            {"target": "file", "slowerThanBaselineRatio": 0},
            f"{KEY}.slowerThanBaselineRatio",
            "over 0",
        ),
        ({"target": "file", "namespace": "Monitoring"}, f"{KEY}.namespace", "DNS label"),
        (
            {"target": "file", "ruleLabels": {"release": 1}},
            f"{KEY}.ruleLabels.release",
            "label value",
        ),
        (
            {"target": "file", "ruleLabels": ["release"]},
            f"{KEY}.ruleLabels",
            "map of Kubernetes labels",
        ),
        (
            {"target": "file", "acceptanceFlor": 0.3},
            f"{KEY}.acceptanceFlor",
            "did you mean acceptanceFloor",
        ),
    ],
)
def test_each_bad_value_is_one_problem_naming_its_key(raw: object, key: str, words: str) -> None:
    found = problems(raw)
    assert len(found) == 1, found
    assert found[0][0] == key
    assert words in found[0][1]


def test_every_bad_field_is_reported_at_once() -> None:
    raw = {"target": "amp", "acceptanceFloor": -1, "notReadyForMinutes": "ten"}
    keys = sorted(key for key, _ in problems(raw))
    assert keys == [f"{KEY}.acceptanceFloor", f"{KEY}.ampWorkspace", f"{KEY}.notReadyForMinutes"]


def test_the_stack_parse_names_the_key_and_default_stays_off() -> None:
    assert parse(BASE, stack="dev").config.observability == DEFAULTS
    with pytest.raises(ConfigError) as raised:
        parse({**BASE, KEY: json.dumps({"target": "amp"})}, stack="dev")
    assert [p.key for p in raised.value.problems] == [f"{KEY}.ampWorkspace"]


def test_a_floor_may_name_an_endpoint_the_recommendation_job_will_make_speculate() -> None:
    values = {
        **{k: v for k, v in BASE.items() if not k.startswith("hp:speculative")},
        "hp:optimize": json.dumps(
            {
                "goal": "latency",
                "modelS3Uri": "s3://bucket/model/",
                "roleArn": "arn:aws:iam::123456789012:role/r",
            }
        ),
        KEY: json.dumps({"target": "file", "acceptanceFloor": {"hp-dev": 0.4}}),
    }
    assert parse(values, stack="dev").config.observability.floor_of("hp-dev") == 0.4
