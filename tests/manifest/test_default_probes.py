"""Every endpoint gets the program's probes unless `hp:probes: operator` asks for the
operator's own; both render valid against the vendored operator 3.3 CRD, for both engines and
for the endpoints of `hp:endpoints`."""

from __future__ import annotations

import json
from typing import Any

import pytest
from manifest_samples import BASE, valid_specs

from mlcc.config.stack import ConfigError, Parsed, parse
from mlcc.manifest import operator
from mlcc.serving.engines import HEALTH_CHECK_PATHS, Engine

IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/hp-serve@sha256:" + "a" * 64
PROBE_FIELDS = {"startupProbe", "readinessProbe", "livenessProbe"}


def specs(values: dict[str, str]) -> dict[str, dict[str, Any]]:
    return valid_specs(values, IMAGE)


def probes_of(values: dict[str, str]) -> dict[str, Any]:
    (spec,) = specs(values).values()
    probes: dict[str, Any] = spec["worker"]["probes"]
    return probes


def endpoints(*entries: dict[str, object]) -> dict[str, str]:
    return {"hp:endpoints": json.dumps(list(entries))}


def parsed(values: dict[str, str]) -> Parsed:
    return parse({**BASE, **values}, stack="dev")


@pytest.mark.parametrize("engine", list(Engine))
@pytest.mark.parametrize("minutes", [120, 45])
def test_without_hp_probes_each_engine_gets_the_three_probes(engine: Engine, minutes: int) -> None:
    probes = probes_of({"hp:engine": engine.value, "hp:deployTimeoutMinutes": str(minutes)})
    check = {"httpGet": {"path": HEALTH_CHECK_PATHS[engine], "port": 8080}}
    assert probes == {
        # the whole deploy time limit (maxDeployTimeInSeconds), 10 s apart
        "startupProbe": {
            **check,
            "periodSeconds": 10,
            "timeoutSeconds": 5,
            "failureThreshold": minutes * 6,
        },
        "readinessProbe": {**check, "periodSeconds": 10, "timeoutSeconds": 5},
        "livenessProbe": {**check, "periodSeconds": 10, "timeoutSeconds": 5, "failureThreshold": 3},
    }


def test_the_startup_probe_lasts_as_long_as_the_operator_waits() -> None:
    (spec,) = specs({"hp:engine": "sglang", "hp:deployTimeoutMinutes": "37"}).values()
    startup = spec["worker"]["probes"]["startupProbe"]
    assert startup["periodSeconds"] * startup["failureThreshold"] == spec["maxDeployTimeInSeconds"]


def test_the_readiness_timeout_is_the_one_sglang_health_meets() -> None:
    """SGLang's /health takes about 1 s (the cited ISSUES_FIXED.md §6): more than 1 s."""
    probes = probes_of({"hp:engine": "sglang"})
    assert probes["readinessProbe"]["timeoutSeconds"] == operator.PROBE_TIMEOUT_SECONDS > 1
    assert probes["livenessProbe"]["timeoutSeconds"] == operator.PROBE_TIMEOUT_SECONDS


def test_an_sglang_endpoint_with_the_default_probes_is_not_warned() -> None:
    result = parsed({"hp:engine": "sglang"})
    assert not [w for w in map(str, result.warnings) if "probe" in w or "/health" in w]


def test_every_endpoint_of_hp_endpoints_gets_them_and_an_entry_can_opt_out() -> None:
    rendered = specs(
        endpoints(
            {"name": "llama"},
            {"name": "qwen", "engine": "sglang", "model": "Qwen/Qwen3-8B"},
            {"name": "own", "probes": "operator"},
            {"name": "slow", "probes": {"startup": {"failureThreshold": 1000}}},
        )
    )
    assert set(rendered["llama"]["worker"]["probes"]) == PROBE_FIELDS
    assert rendered["qwen"]["worker"]["probes"]["readinessProbe"]["httpGet"] == {
        "path": HEALTH_CHECK_PATHS[Engine.SGLANG],
        "port": 8080,
    }
    assert "probes" not in rendered["own"]["worker"]
    slow = rendered["slow"]["worker"]["probes"]
    assert slow["startupProbe"]["failureThreshold"] == 1000
    assert slow["readinessProbe"] == rendered["llama"]["worker"]["probes"]["readinessProbe"]


def test_a_top_level_opt_out_is_inherited_and_an_entry_map_wins() -> None:
    rendered = specs(
        {
            "hp:probes": "operator",
            **endpoints({"name": "a"}, {"name": "b", "probes": {}}),
        }
    )
    assert "probes" not in rendered["a"]["worker"]
    assert set(rendered["b"]["worker"]["probes"]) == PROBE_FIELDS


@pytest.mark.parametrize("engine", list(Engine))
@pytest.mark.parametrize("spelling", ["operator", "Operator", " operator "])
def test_hp_probes_operator_renders_no_probes(engine: Engine, spelling: str) -> None:
    (spec,) = specs({"hp:engine": engine.value, "hp:probes": spelling}).values()
    assert "probes" not in spec["worker"]


def test_the_operator_probes_with_sglang_are_warned_with_the_reason() -> None:
    sglang = [str(w) for w in parsed({"hp:engine": "sglang", "hp:probes": "operator"}).warnings]
    (warning,) = [w for w in sglang if w.startswith("hp:probes")]
    assert "waits 1 s" in warning and "SGLang's /health takes about 1 s" in warning
    assert "remove hp:probes" in warning
    vllm = [str(w) for w in parsed({"hp:probes": "operator"}).warnings]
    assert not [w for w in vllm if w.startswith("hp:probes")]


def test_an_inherited_opt_out_is_warned_on_the_sglang_entry_only() -> None:
    result = parsed(
        {
            "hp:probes": "operator",
            **endpoints({"name": "a"}, {"name": "b", "engine": "sglang", "model": "Qwen/Qwen3-8B"}),
        }
    )
    warned = [str(w) for w in result.warnings if "probes" in w.key]
    assert len(warned) == 1
    assert warned[0].startswith("hp:endpoints[1].probes: operator keeps")
    assert warned[0].endswith("(inherited from hp:probes)")


@pytest.mark.parametrize(
    ("given", "key"),
    [
        ({"hp:probes": "false"}, "hp:probes"),
        ({"hp:probes": "operators"}, "hp:probes"),
        ({"hp:probes": "[1]"}, "hp:probes"),
        ({"hp:probes": "5"}, "hp:probes"),
        (endpoints({"name": "a", "probes": "off"}), "hp:endpoints[0].probes"),
        (endpoints({"name": "a", "probes": True}), "hp:endpoints[0].probes"),
    ],
)
def test_a_bad_value_is_one_error_naming_the_key(given: dict[str, str], key: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parsed(given)
    (problem,) = raised.value.problems
    assert problem.key == key
    assert "must be a map {startup, readiness, liveness}" in problem.message
    assert "or 'operator' for the operator's own" in problem.message


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"startup": {"successThreshold": 2}}, "startup.successThreshold: must be 1 for a startup"),
        ({"liveness": {"successThreshold": 3}}, "liveness.successThreshold: must be 1 for a"),
        ({"readiness": {"initialDelaySeconds": -1}}, "readiness.initialDelaySeconds: must be a"),
        ({"startup": {"initialDelaySeconds": "10"}}, "startup.initialDelaySeconds: must be a"),
        ({"liveness": {"terminationGracePeriodSeconds": 0}}, "liveness.terminationGracePeriod"),
        ({"startup": {"successThreshold": 0}}, "startup.successThreshold: must be a whole number"),
    ],
)
def test_a_probe_field_the_api_server_refuses_is_one_error(
    fields: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        parsed({"hp:probes": json.dumps(fields)})
    (problem,) = raised.value.problems
    assert str(problem).startswith(f"hp:probes.{message}")


def test_the_fields_the_api_server_accepts_render_valid() -> None:
    probes = probes_of(
        {
            "hp:probes": json.dumps(
                {
                    "readiness": {"successThreshold": 2, "initialDelaySeconds": 0},
                    "liveness": {"terminationGracePeriodSeconds": 30},
                }
            )
        }
    )
    assert probes["readinessProbe"]["successThreshold"] == 2
    assert probes["livenessProbe"]["terminationGracePeriodSeconds"] == 30


def test_the_oldest_operator_accepted_has_probes() -> None:
    """worker.probes came with operator 2.2 (docs/operator-features.md); 3.1 is the oldest an
    endpoint accepts, so the default probes never need a version check."""
    result = parsed({"hp:operatorVersion": "3.1"})
    (endpoint,) = result.config.endpoints
    assert endpoint.operator.probes == {}
    assert set(probes_of({"hp:operatorVersion": "3.1"})) == PROBE_FIELDS
    with pytest.raises(ConfigError) as raised:
        parsed({"hp:operatorVersion": "3.0"})
    assert [p.key for p in raised.value.problems] == ["hp:operatorVersion"]
