"""Where hp:observability sends the dashboard and the rules, as data (pure; the resources are
mlcc/components/observability.py). Sources of each fact are in docs/observability.md.

- `prometheus-operator`: a `PrometheusRule` (kube-prometheus-stack's Prometheus selects rules
  by its Helm release label unless `ruleSelectorNilUsesHelmValues: false`, hence
  `ruleLabels`), and the dashboard in a ConfigMap labelled `grafana_dashboard: "1"`, the label
  and value Grafana's dashboard sidecar watches in kube-prometheus-stack's values
  (`grafana.sidecar.dashboards.label`/`labelValue`, `searchNamespace: ALL`).
- `amp`: the same rule groups as an Amazon Managed Service for Prometheus rule groups namespace
  in the workspace the HyperPod observability add-on writes to. pulumi-aws has no resource
  for an Amazon Managed Grafana dashboard (`aws.grafana` manages workspaces, keys and roles),
  so the dashboard is the importable file.
- every target but `off`: the importable files `mlcc plan --out DIR` writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mlcc.config.observability import Target
from mlcc.config.stack import StackConfig
from mlcc.observability.rules import prometheus_rule, rule_file
from mlcc.observability.view import DASHBOARD_FILE, RULES_FILE, dashboard_uid, object_name

DASHBOARD_LABEL = {"grafana_dashboard": "1"}


@dataclass(frozen=True)
class AmpRules:
    workspace_id: str
    name: str  # the rule groups namespace
    data: str  # the Prometheus rule file


@dataclass(frozen=True)
class Delivery:
    """What the Observability component creates; all None for `off` and `file`."""

    prometheus_rule: dict[str, Any] | None = None
    dashboard_config_map: dict[str, Any] | None = None
    amp: AmpRules | None = None


def delivery(config: StackConfig) -> Delivery:
    settings = config.observability
    if settings.target is Target.PROMETHEUS_OPERATOR:
        return Delivery(
            prometheus_rule=prometheus_rule(config), dashboard_config_map=config_map(config)
        )
    if settings.target is Target.AMP:
        amp = AmpRules(settings.amp_workspace_id, object_name(config.stack), rule_file(config))
        return Delivery(amp=amp)
    return Delivery()


def config_map(config: StackConfig) -> dict[str, Any]:
    """The dashboard as a ConfigMap for Grafana's dashboard sidecar."""
    from mlcc.observability.dashboard import dashboard_json  # the SDK only when it is used

    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": object_name(config.stack),
            "namespace": config.observability.namespace or config.namespace,
            "labels": {"app.kubernetes.io/managed-by": "pulumi", **DASHBOARD_LABEL},
        },
        "data": {f"{dashboard_uid(config.stack)}.json": dashboard_json(config)},
    }


def files(config: StackConfig) -> dict[str, str]:
    """The importable files of `mlcc plan --out` (relative path -> text); none when off."""
    if not config.observability.enabled:
        return {}
    from mlcc.observability.dashboard import dashboard_json  # the SDK only when it is used

    return {DASHBOARD_FILE: dashboard_json(config), RULES_FILE: rule_file(config)}


def headline(config: StackConfig) -> str | None:
    """The plan headline's line; None when off (the headline stays as it was)."""
    settings = config.observability
    name = object_name(config.stack)
    namespace = settings.namespace or config.namespace
    where = {
        Target.OFF: None,
        Target.FILE: "files only (import them by hand)",
        Target.PROMETHEUS_OPERATOR: (
            f"PrometheusRule and Grafana dashboard ConfigMap {namespace}/{name}"
        ),
        Target.AMP: (
            f"AMP rule groups namespace {name} in workspace {settings.amp_workspace_id}; "
            "dashboard to import into Amazon Managed Grafana"
        ),
    }[settings.target]
    if where is None:
        return None
    return f"observability: {settings.target.value}: {where}; files {DASHBOARD_FILE}, {RULES_FILE}"
