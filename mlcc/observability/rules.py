"""The alert rules of a stack, as Prometheus rule groups (pure; docs/observability.md).

One group per endpoint, the same groups in the `PrometheusRule` (the Prometheus operator's CRD,
`monitoring.coreos.com/v1`, whose `spec.groups` is the Prometheus rule-file format) and in the
rule file of an Amazon Managed Service for Prometheus rule groups namespace (that service takes
a Prometheus rule file, `CreateRuleGroupsNamespace`'s `data`). Each alert reads one endpoint's
own pods (mlcc.observability.promql); thresholds come from hp:observability:

- `SpeculativeAcceptanceLow`: the acceptance rate under the floor for `acceptanceForMinutes`,
  while the endpoint serves (output tokens > 0, so an idle endpoint whose SGLang gauge holds
  its last value, or a vLLM one with 0/0 drafts, stays silent). Only for endpoints that
  speculate, never for a twin.
- `SpeculativeSlowerThanBaseline`: output tokens/s under `slowerThanBaselineRatio` x the twin's
  for `slowerForMinutes`, while both serve (only with hp:baseline).
- `EndpointPodsNotReady`: fewer ready pods (kube-state-metrics) than hp:replicas (or
  autoscaling's minReplicas) for `notReadyForMinutes`.
- `EngineQueueGrowing`: requests waiting in the engine, and their number rising over the last
  `queueGrowthMinutes` (deriv over a subquery), for as long.
"""

from __future__ import annotations

from typing import Any

import yaml

from mlcc.config.observability import ObservabilitySettings
from mlcc.config.stack import StackConfig
from mlcc.observability import promql
from mlcc.observability.promql import Series
from mlcc.observability.view import Watched, object_name, watched

RULE_API_VERSION = "monitoring.coreos.com/v1"
RULE_KIND = "PrometheusRule"
SUBQUERY_STEP = "1m"


def rule_groups(config: StackConfig) -> list[dict[str, Any]]:
    """The Prometheus rule groups of every endpoint (empty rule lists are left out)."""
    settings = config.observability
    groups = []
    for item in watched(config):
        rules = [*_endpoint_rules(item, settings)]
        if item.twin is not None:
            rules += _health_rules(item.twin, item.twin_ready_floor, settings)
        groups.append({"name": f"{item.name}.speculation", "rules": rules})
    return [group for group in groups if group["rules"]]


def _endpoint_rules(item: Watched, settings: ObservabilitySettings) -> list[dict[str, Any]]:
    rules: list[dict[str, Any]] = []
    series = item.series
    serving = f"{promql.output_tokens_per_second(series)} > 0"
    if item.speculates and item.acceptance_floor > 0:
        floor = item.acceptance_floor
        rules.append(
            _alert(
                "SpeculativeAcceptanceLow",
                f"({promql.acceptance_rate(series)}) < {floor:g} and ({serving})",
                settings.acceptance_minutes,
                series,
                "warning",
                f"{series.endpoint}: speculative acceptance rate under the floor {floor:g} "
                f"for {settings.acceptance_minutes} minutes",
            )
        )
    if item.speculates and item.twin is not None:
        twin = promql.output_tokens_per_second(item.twin)
        ratio = settings.slower_ratio
        rules.append(
            _alert(
                "SpeculativeSlowerThanBaseline",
                f"{promql.output_tokens_per_second(series)} < {ratio:g} * ({twin}) "
                f"and ({serving}) and ({twin} > 0)",
                settings.slower_minutes,
                series,
                "warning",
                f"{series.endpoint}: output tokens/s under "
                f"{ratio:g} x its twin {item.twin.endpoint}'s for {settings.slower_minutes} "
                "minutes: speculation costs throughput here",
            )
        )
    rules += _health_rules(series, item.ready_floor, settings)
    return rules


def _health_rules(
    series: Series, ready_floor: int, settings: ObservabilitySettings
) -> list[dict[str, Any]]:
    rules = []
    if ready_floor > 0:
        rules.append(
            _alert(
                "EndpointPodsNotReady",
                f"{promql.ready_pods(series)} < {ready_floor}",
                settings.not_ready_minutes,
                series,
                "critical",
                f"{series.endpoint}: fewer than {ready_floor} pods ready for "
                f"{settings.not_ready_minutes} minutes",
            )
        )
    minutes = settings.queue_growth_minutes
    queue = promql.queue_depth(series)
    rules.append(
        _alert(
            "EngineQueueGrowing",
            f"deriv(({queue})[{minutes}m:{SUBQUERY_STEP}]) > 0 and ({queue} > 0)",
            minutes,
            series,
            "warning",
            f"{series.endpoint}: the engine's queue keeps growing over {minutes} minutes",
        )
    )
    return rules


def _alert(
    name: str, expr: str, minutes: int, series: Series, severity: str, summary: str
) -> dict[str, Any]:
    return {
        "alert": name,
        "expr": expr,
        "for": f"{minutes}m",
        "labels": {
            "severity": severity,
            "endpoint": series.endpoint,
            "namespace": series.namespace,
            "engine": series.engine.value,
        },
        # No templates: the alert's value is the expression's value.
        "annotations": {"summary": summary},
    }


def rule_file(config: StackConfig) -> str:
    """The Prometheus rule file (`groups:`): promtool's input and the AMP namespace's data."""
    return yaml.safe_dump({"groups": rule_groups(config)}, sort_keys=False, width=100)


def prometheus_rule(config: StackConfig) -> dict[str, Any]:
    """The PrometheusRule custom resource carrying the same groups."""
    settings = config.observability
    metadata: dict[str, Any] = {
        "name": object_name(config.stack),
        "namespace": settings.namespace or config.namespace,
        "labels": {"app.kubernetes.io/managed-by": "pulumi", **settings.rule_labels},
    }
    return {
        "apiVersion": RULE_API_VERSION,
        "kind": RULE_KIND,
        "metadata": metadata,
        "spec": {"groups": rule_groups(config)},
    }
