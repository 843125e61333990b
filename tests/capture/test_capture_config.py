"""hp:capture parsed and refused, naming the key (pure parsing, docs/draft.md "Capture")."""

from __future__ import annotations

import json

import pytest

from mlcc.config.operator.capture import Capture
from mlcc.config.stack import ConfigError, parse

BASE = {
    "hp:model": "meta-llama/Llama-3.1-8B-Instruct",
    "aws:region": "us-east-1",
    "aws-native:region": "us-east-1",
    "hp:clusterName": "existing",
}
K8S_ONLY = {
    "hp:model": "meta-llama/Llama-3.1-8B-Instruct",
    "hp:kubeconfig": "~/.kube/config",
    "hp:image": "registry.example.com/serve@sha256:" + "a" * 64,
}


def values(**keys: object) -> dict[str, str]:
    return {f"hp:{k}": v if isinstance(v, str) else json.dumps(v) for k, v in keys.items()}


def errors(given: dict[str, str], base: dict[str, str] = BASE) -> list[str]:
    with pytest.raises(ConfigError) as raised:
        parse({**base, **given}, stack="dev")
    return [str(p) for p in raised.value.problems]


def captures(given: dict[str, str]) -> dict[str, Capture | None]:
    config = parse({**BASE, **given}, stack="dev").config
    return {e.name: e.operator.capture for e in config.endpoints}


def test_capture_is_off_unless_set() -> None:
    assert set(captures({}).values()) == {None}


def test_capture_defaults_and_values() -> None:
    assert captures(values(capture={})) == {"hp-dev": None}
    assert captures(values(capture=True)) == {"hp-dev": Capture(100, 30)}
    got = captures(values(capture={"samplingPercent": 10, "retentionDays": 7}))
    assert got == {"hp-dev": Capture(10, 7)}


def test_entry_capture_and_twin_without_it() -> None:
    entries = [
        {"name": "a", "capture": {"samplingPercent": 25}, "baseline": True},
        {"name": "b"},
    ]
    got = captures({**values(endpoints=entries), **values(speculativeAlgorithm="ngram")})
    assert got == {"a": Capture(25, 30), "b": None, "a-baseline": None}


REFUSED = [
    (values(capture={"samplingPercent": 0}), "hp:capture.samplingPercent: must be between 1 and"),
    (values(capture={"samplingPercent": 101}), "hp:capture.samplingPercent: must be between"),
    (values(capture={"samplingPercent": "ten"}), "hp:capture.samplingPercent: must be a whole"),
    (values(capture={"retentionDays": 0}), "hp:capture.retentionDays: must be 1 or more"),
    (values(capture={"tier": "alb"}), "hp:capture.tier: is not a field of hp:capture"),
    (values(capture=["x"]), "hp:capture: must be a map"),
    (
        values(capture={}, dataCapture={"s3Uri": "s3://mine/x"})
        | values(capture={"samplingPercent": 5}),
        "hp:capture: and hp:dataCapture both set the CR's spec.dataCapture",
    ),
    (
        values(capture={"samplingPercent": 5}, sagemakerEndpoint="false"),
        "hp:capture: captures at the SageMaker endpoint",
    ),
    (
        values(capture=True, operatorVersion="3.0"),
        "hp:capture: needs operator 3.1 or newer",
    ),
    (
        values(endpoints=[{"name": "a", "capture": {"samplingPercent": 500}}]),
        "hp:endpoints[0].capture.samplingPercent: must be between 1 and 100",
    ),
]


@pytest.mark.parametrize(("given", "expected"), REFUSED)
def test_refused_naming_the_key(given: dict[str, str], expected: str) -> None:
    found = errors(given)
    assert any(expected in problem for problem in found), found


def test_entry_without_registration_names_the_entry_key() -> None:
    entries = [{"name": "a", "capture": True, "sagemakerEndpoint": False}]
    found = errors(values(endpoints=entries))
    assert any(p.startswith("hp:endpoints[0].capture: captures at the SageMaker") for p in found)


def test_kubernetes_only_mode_refuses_capture() -> None:
    found = errors(values(capture=True), base=K8S_ONLY)
    assert any(
        p.startswith("hp:capture: creates an S3 bucket") and "hp:dataCapture" in p for p in found
    ), found
    entries = [{"name": "a", "capture": True}, {"name": "b"}]
    found = errors(values(endpoints=entries), base=K8S_ONLY)
    assert any(p.startswith("hp:endpoints[0].capture: creates an S3 bucket") for p in found)


def test_kubernetes_only_mode_keeps_the_raw_pass_through() -> None:
    given = values(
        dataCapture={"s3Uri": "s3://mine/capture", "sagemakerEndpoint": {"enabled": True}}
    )
    config = parse({**K8S_ONLY, **given}, stack="dev").config
    assert config.endpoints[0].operator.data_capture["s3Uri"] == "s3://mine/capture"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"samplingPercent": 10**30}, "hp:capture.samplingPercent: must be between 1 and 100"),
        ({"samplingPercent": 12.5}, "hp:capture.samplingPercent: must be a whole number"),
        ({"samplingPercent": True}, "hp:capture.samplingPercent: must be a whole number"),
        ({"retentionDays": None}, "hp:capture.retentionDays: must be a whole number"),
        ({"retentionDays": {"days": 3}}, "hp:capture.retentionDays: must be a whole number"),
        ({"retentionDays": "-4"}, "hp:capture.retentionDays: must be 1 or more"),
        ("yes please", "hp:capture: must be a map"),
        (7, "hp:capture: must be a map"),
    ],
)
def test_hostile_values_are_one_line_each(value: object, expected: str) -> None:
    found = errors(values(capture=value))
    assert [p for p in found if p.startswith("hp:capture")] == [
        next(p for p in found if p.startswith(expected))
    ], found


def test_numbers_given_as_text_are_read() -> None:
    given = values(capture={"samplingPercent": " 20 ", "retentionDays": "7"})
    assert captures(given) == {"hp-dev": Capture(20, 7)}
