"""The Observability component under Pulumi's mocks, through the real __main__.py."""

from __future__ import annotations

import json

import yaml
from program_runs import run_main

from mlcc.plan.mocks import OfflineRun

COMPONENT = "hp:index:Observability"
RULE = "kubernetes:monitoring.coreos.com/v1:PrometheusRule"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
AMP = "aws:amp/ruleGroupNamespace:RuleGroupNamespace"
WORKSPACE = "ws-0a1b2c3d-4e5f-6789-abcd-ef0123456789"


def observability(value: object) -> dict[str, str | None]:
    return {"hp:observability": json.dumps(value)}


def types(run: OfflineRun) -> set[str]:
    return {r.type for r in run.registrations}


def test_off_and_file_create_nothing() -> None:
    for value in ("off", "file"):
        found = types(run_main(observability(value)))
        assert not found & {COMPONENT, RULE, CONFIG_MAP, AMP}


def test_prometheus_operator_creates_the_rule_and_the_dashboard_config_map() -> None:
    run = run_main(
        observability({"target": "prometheus-operator", "ruleLabels": {"release": "kps"}})
    )
    component = run.one(COMPONENT)
    rule, config_map = run.one(RULE), run.one(CONFIG_MAP)
    assert rule.parent == component.urn and config_map.parent == component.urn
    assert rule.inputs["metadata"]["labels"]["release"] == "kps"
    assert rule.inputs["metadata"]["namespace"] == "inference"  # Pulumi.dev.yaml's hp:namespace
    groups = rule.inputs["spec"]["groups"]
    alerts = {r["alert"] for g in groups for r in g["rules"]}
    assert {"SpeculativeAcceptanceLow", "EndpointPodsNotReady", "EngineQueueGrowing"} <= alerts
    assert config_map.inputs["metadata"]["labels"]["grafana_dashboard"] == "1"
    (dashboard_text,) = config_map.inputs["data"].values()
    assert json.loads(dashboard_text)["uid"] == "hp-dev-speculation"
    assert AMP not in types(run)


def test_amp_creates_a_rule_groups_namespace_in_the_workspace() -> None:
    url = f"https://aps-workspaces.us-east-1.amazonaws.com/workspaces/{WORKSPACE}"
    run = run_main(observability({"target": "amp", "ampWorkspace": url}))
    amp = run.one(AMP)
    assert amp.parent == run.one(COMPONENT).urn
    assert amp.inputs["workspaceId"] == WORKSPACE
    assert amp.inputs["name"] == "hp-dev-speculation"
    rules = yaml.safe_load(amp.inputs["data"])
    assert [g["name"] for g in rules["groups"]] == ["hp-dev.speculation"]
    assert not types(run) & {RULE, CONFIG_MAP}
