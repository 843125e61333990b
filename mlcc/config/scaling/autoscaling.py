"""`hp:autoscaling` -> the InferenceEndpointConfig's `autoScalingSpec`, and its `metrics` (pure).

The trigger choice and the engines' metric names are explained in docs/scaling.md.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from mlcc.config import pod_names
from mlcc.config.scaling import limits
from mlcc.engine_contract import PINNED_VERSIONS
from mlcc.facts import engine_metrics
from mlcc.serving.engines import ENV_PREFIXES, Engine

Issue = tuple[str, str]

INT32_MAX = 2**31 - 1

# The CRD's bounds for the integers of `spec.autoScalingSpec` (minimum 0, format int32).
# tests/test_scaling.py checks this table and the pattern below against the CRD schema.
CRD_INTEGER_BOUNDS: dict[str, tuple[int, int]] = {
    "minReplicaCount": (0, INT32_MAX),
    "maxReplicaCount": (0, INT32_MAX),
    "pollingInterval": (0, INT32_MAX),
    "cooldownPeriod": (0, INT32_MAX),
    "scaleDownStabilizationTime": (0, INT32_MAX),
}
# `autoScalingSpec.prometheusTrigger.serverAddress`; "" (the last alternative) means unset.
CRD_SERVER_ADDRESS_PATTERN = (
    r"^https:\/\/aps-workspaces\.[a-zA-Z0-9-]+(?:\.[a-zA-Z0-9-]+)*\.amazonaws\.com"
    r"\/workspaces\/ws-[a-zA-Z0-9-]+$|^$"
)
_AMP_WORKSPACE = re.compile(CRD_SERVER_ADDRESS_PATTERN.removesuffix("|^$"))
# The AMP console also shows the query and remote-write URLs, which extend the workspace URL.
_AMP_WORKSPACE_PREFIX = re.compile(_AMP_WORKSPACE.pattern.removesuffix("$") + "(?=/)")

# The CRD's default maxReplicaCount, the ceiling when the instance groups' capacity is unknown.
DEFAULT_MAX_REPLICAS = 5


class ScalingMetric(StrEnum):
    # CloudWatch: InvokeEndpoint calls per replica per minute on the registered SageMaker endpoint.
    INVOCATIONS = "invocations"
    # Amazon Managed Service for Prometheus: requests waiting in the engines, per replica.
    QUEUE_DEPTH = "queueDepth"


DEFAULT_TARGETS = {ScalingMetric.INVOCATIONS: 60.0, ScalingMetric.QUEUE_DEPTH: 2.0}


@dataclass(frozen=True)
class Autoscaling:
    """`hp:autoscaling` after validation; times are in seconds."""

    min_replicas: int = 1
    max_replicas: int = DEFAULT_MAX_REPLICAS
    metric: ScalingMetric = ScalingMetric.INVOCATIONS
    target_value: float = DEFAULT_TARGETS[ScalingMetric.INVOCATIONS]
    prometheus_server: str = ""
    polling_interval: int = 30
    cooldown_period: int = 300
    scale_down_stabilization_time: int = 300
    # A CloudWatch trigger given in the CRD's fields (the hyp CLI's cloud_watch_* flags); it
    # replaces the one `metric` derives.
    cloud_watch_trigger: Mapping[str, Any] | None = None


# Config field -> (CRD field, smallest value, stricter largest value or None); the Autoscaling
# attribute is its snake_case. Stricter than the CRD: a ceiling of 0 replicas serves nothing,
# KEDA cannot poll every 0 s; the largest values are those of mlcc/config/scaling/limits.py.
_INTEGER_FIELDS: dict[str, tuple[str, int, limits.Ceiling | None]] = {
    "minReplicas": ("minReplicaCount", 0, limits.REPLICAS),
    "maxReplicas": ("maxReplicaCount", 1, limits.REPLICAS),
    "pollingInterval": ("pollingInterval", 1, None),
    "cooldownPeriod": ("cooldownPeriod", 0, None),
    "scaleDownStabilizationTime": ("scaleDownStabilizationTime", 0, limits.STABILIZATION),
}
_UNSET = object()
FIELDS: tuple[str, ...] = (
    *_INTEGER_FIELDS,
    "metric",
    "targetValue",
    "prometheusServer",
    "cloudWatchTrigger",
)
# The CRD's autoScalingSpec.cloudWatchTrigger fields and the JSON types they take.
_TRIGGER_FIELDS: dict[str, type | tuple[type, ...]] = {
    "name": str,
    "namespace": str,
    "metricName": str,
    "metricStat": str,
    "metricType": str,
    "dimensions": list,
    "targetValue": (int, float),
    "minValue": (int, float),
    "activationTargetValue": (int, float),
    "metricCollectionPeriod": int,
    "metricCollectionStartTime": int,
    "useCachedMetrics": bool,
}


def parse_autoscaling(
    raw: object, key: str, max_capacity: int | None
) -> tuple[Autoscaling | None, list[Issue]]:
    """`raw` is the decoded JSON value: None, {} or false = off, true = on with defaults.

    `max_capacity`: how many replicas of this endpoint the instance groups hold (None = unknown).
    Returns the settings, or None and every problem as (key path, message).
    """
    if raw is None or raw is False or raw == {}:
        return None, []
    if raw is True:
        raw = {}
    if not isinstance(raw, dict):
        example = '{"minReplicas": 1, "maxReplicas": 4}'
        return None, [(key, f"must be a map such as {example}, got {_shown(raw)}")]
    issues = _unknown_fields(raw, key)
    numbers = {name: _integer(raw, name, key, issues) for name in _INTEGER_FIELDS if name in raw}
    metric = _metric(raw.get("metric", ScalingMetric.INVOCATIONS.value), f"{key}.metric", issues)
    target = _target(raw.get("targetValue", _UNSET), metric, f"{key}.targetValue", issues)
    server = _server(raw.get("prometheusServer", _UNSET), metric, f"{key}.prometheusServer", issues)
    trigger = _trigger(raw.get("cloudWatchTrigger"), f"{key}.cloudWatchTrigger", issues)
    low, high, replica_issues = _replicas(numbers, metric, key, max_capacity)
    issues += replica_issues
    if issues or metric is None or target is None:
        return None, issues
    changes: dict[str, Any] = {_snake_case(name): n for name, n in numbers.items()}
    changes.update(min_replicas=low, max_replicas=high)
    settings = Autoscaling(
        metric=metric, target_value=target, prometheus_server=server, cloud_watch_trigger=trigger
    )
    return replace(settings, **changes), []


def _trigger(value: object, key: str, issues: list[Issue]) -> Mapping[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or not {"metricName", "namespace"} <= set(value):
        issues.append((key, "must be a map with at least metricName and namespace"))
        return None
    for name in sorted(map(str, value)):
        wanted = _TRIGGER_FIELDS.get(name)
        field_value = value[name]
        if wanted is None:
            fields = ", ".join(_TRIGGER_FIELDS)
            issues.append((f"{key}.{name}", f"is not a field; fields: {fields}"))
        elif (isinstance(field_value, bool) and wanted is not bool) or not isinstance(
            field_value, wanted
        ):
            issues.append((f"{key}.{name}", f"must be a {_type_name(wanted)}"))
    dimensions = value.get("dimensions", [])
    if isinstance(dimensions, list) and not all(
        isinstance(d, dict) and set(d) == {"name", "value"} for d in dimensions
    ):
        issues.append((f"{key}.dimensions", "must be a list of {name, value}"))
    if value.get("metricType", "Average") not in ("Value", "Average"):
        issues.append((f"{key}.metricType", "must be Value or Average"))
    target = value.get("targetValue")  # a non-number is reported above
    unit = "the metric's value per replica"
    is_number = isinstance(target, int | float) and not isinstance(target, bool)
    if is_number and (problem := limits.keda_target_problem(target, unit)):
        issues.append((f"{key}.targetValue", f"{problem}, {_got(target)}"))
    return dict(value)


def _type_name(wanted: type | tuple[type, ...]) -> str:
    return {bool: "boolean", str: "string", int: "whole number", list: "list"}.get(
        wanted if isinstance(wanted, type) else float, "number"
    )


def _unknown_fields(raw: dict[object, object], key: str) -> list[Issue]:
    issues: list[Issue] = []
    by_folded = {f.casefold(): f for f in FIELDS}
    for name in sorted(map(str, set(raw) - set(FIELDS))):
        guess = by_folded.get(name.strip().casefold())
        guess = guess or next(iter(difflib.get_close_matches(name, FIELDS, n=1)), None)
        hint = f"did you mean {guess}? " if guess else ""
        message = f"is not an autoscaling field; {hint}fields: {', '.join(FIELDS)}"
        issues.append((f"{key}.{name}", message))
    return issues


def _integer(raw: dict[object, object], name: str, key: str, issues: list[Issue]) -> int | None:
    value = raw[name]
    low, high, why = integer_bounds(name)
    if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
        return value
    reason = f" ({why})" if why else ""
    message = f"must be a whole number from {low} to {high}{reason}, {_got(value)}"
    issues.append((f"{key}.{name}", message))
    return None


def integer_bounds(name: str) -> tuple[int, int, str]:
    """(smallest, largest, why the largest when it is not the CRD's) of an integer field."""
    crd_name, own_minimum, ceiling = _INTEGER_FIELDS[name]
    crd_minimum, crd_maximum = CRD_INTEGER_BOUNDS[crd_name]
    low = max(crd_minimum, own_minimum)
    if ceiling is None:
        return low, crd_maximum, ""
    return low, min(crd_maximum, ceiling.value()), ceiling.why


def _metric(value: object, key_path: str, issues: list[Issue]) -> ScalingMetric | None:
    choices = {m.value.casefold(): m for m in ScalingMetric}
    if isinstance(value, str) and (found := choices.get(re.sub(r"[-_\s]", "", value).casefold())):
        return found
    issues.append((key_path, f"must be invocations or queueDepth, got {_shown(value)}"))
    return None


def _target(
    value: object, metric: ScalingMetric | None, key_path: str, issues: list[Issue]
) -> float | None:
    if value is _UNSET:
        return DEFAULT_TARGETS[metric or ScalingMetric.INVOCATIONS]
    unit = "invocations per replica per minute, or requests waiting per replica with queueDepth"
    if problem := limits.keda_target_problem(value, unit):
        issues.append((key_path, f"{problem}, {_got(value)}"))
        return None
    assert isinstance(value, int | float)
    return float(value)


def _server(value: object, metric: ScalingMetric | None, key_path: str, issues: list[Issue]) -> str:
    workspace = "https://aps-workspaces.<region>.amazonaws.com/workspaces/ws-<id>"
    url = value.strip() if isinstance(value, str) else value
    if url is _UNSET or url == "":
        if metric is ScalingMetric.QUEUE_DEPTH:
            issues.append(
                (
                    key_path,
                    f"is required with metric queueDepth: the AMP workspace URL, {workspace}",
                )
            )
        return ""
    if metric is ScalingMetric.INVOCATIONS:
        unused = "is only used with metric queueDepth; remove it or set metric: queueDepth"
        issues.append((key_path, unused))
    elif isinstance(url, str) and _AMP_WORKSPACE.fullmatch(url):
        return url
    elif isinstance(url, str) and (prefix := _AMP_WORKSPACE_PREFIX.match(url)):
        issues.append((key_path, f"must be the workspace URL alone: {prefix[0]}"))
    else:
        issues.append((key_path, f"must be an AMP workspace URL, {workspace}, got {_shown(value)}"))
    return ""


def _replicas(
    numbers: dict[str, int | None], metric: object, key: str, capacity: int | None
) -> tuple[int | None, int | None, list[Issue]]:
    low = numbers.get("minReplicas", 1)
    # Unset, the ceiling is the capacity: on HyperPod it is paid for whether pods use it or not.
    default_high = max(DEFAULT_MAX_REPLICAS, low or 1) if capacity is None else max(capacity, 1)
    high = numbers.get("maxReplicas", default_high)
    found: list[Issue] = []
    if low == 0 and metric is ScalingMetric.QUEUE_DEPTH:
        why = "without pods the engine exports no queue depth, so nothing would scale it up"
        found.append((f"{key}.minReplicas", f"must be at least 1 with metric queueDepth: {why}"))
    if low is None or high is None:
        return low, high, found
    if capacity is not None and high > capacity:
        found.append((f"{key}.maxReplicas", _over_capacity(high, capacity)))
    if low > high and "maxReplicas" in numbers:
        fix = "lower minReplicas or raise maxReplicas"
        found.append((f"{key}.minReplicas", f"is {low}, above {key}.maxReplicas ({high}); {fix}"))
    elif low > high and capacity is not None:  # the ceiling defaults to the capacity
        found.append((f"{key}.minReplicas", _over_capacity(low, capacity)))
    return low, high, found


def _over_capacity(value: int, capacity: int) -> str:
    fix = f"lower it to {capacity} or add" if capacity > 0 else "add"
    return (
        f"is {value} but the instance groups hold at most {capacity} replica(s) of this "
        f"endpoint; {fix} instances of the endpoint's type to hp:instanceGroups"
    )


def _snake_case(name: str) -> str:
    return re.sub("([A-Z])", r"_\1", name).lower()


def _shown(value: object) -> str:
    return json.dumps(value, default=repr)


def _got(value: object) -> str:
    quoted = "; write the number without quotes" if isinstance(value, str) else ""
    return f"got {_shown(value)}{quoted}"


# Both engines serve /metrics on the API port (CONTAINER_PORT in mlcc/manifest/workload.py).
METRICS_PATH = "/metrics"
METRICS_PORT = 8080
METRICS_SCRAPE_INTERVAL_SECONDS = 15
# Requests admitted but not yet running, per engine (a gauge; summed over the replicas): names
# from the releases' code (mlcc/facts/engine_metrics.json), written for every format it serves.
QUEUE_DEPTH_METRICS = {
    Engine.VLLM: "vllm:num_requests_waiting",
    Engine.SGLANG: "sglang:num_queue_reqs",
}


def autoscaling_spec(
    settings: Autoscaling,
    *,
    endpoint_name: str,
    namespace: str,
    engine: str,
    version: str | None = None,
) -> dict[str, object]:
    """The InferenceEndpointConfig's `autoScalingSpec` (the operator makes a KEDA ScaledObject)."""
    spec: dict[str, object] = {
        crd_name: getattr(settings, _snake_case(name))
        for name, (crd_name, _, _) in _INTEGER_FIELDS.items()
    }
    if settings.metric is ScalingMetric.QUEUE_DEPTH:
        spec["prometheusTrigger"] = _queue_depth_trigger(
            settings, endpoint_name, namespace, Engine(engine), version
        )
    else:
        spec["cloudWatchTrigger"] = dict(
            settings.cloud_watch_trigger or _invocations_trigger(settings, endpoint_name)
        )
    return spec


def _invocations_trigger(settings: Autoscaling, endpoint_name: str) -> dict[str, object]:
    # The registered endpoint's one variant; per-minute sum divided by the replicas ("Average").
    return {
        "name": "sagemaker-invocations",
        "namespace": "AWS/SageMaker",
        "metricName": "Invocations",
        "dimensions": [
            {"name": "EndpointName", "value": endpoint_name},
            {"name": "VariantName", "value": "AllTraffic"},
        ],
        "metricStat": "Sum",
        "metricType": "Average",
        "metricCollectionPeriod": 60,
        "targetValue": settings.target_value,
        "minValue": 0,
    }


def _queue_depth_trigger(
    settings: Autoscaling, endpoint_name: str, namespace: str, engine: Engine, version: str | None
) -> dict[str, object]:
    # The operator names the model pods after the endpoint: this endpoint's pods, not its twin's
    # (mlcc/config/pod_names.py); `or vector(0)`: no series = idle.
    matchers = pod_names.pod_matchers(namespace, endpoint_name)
    release = version or PINNED_VERSIONS[engine.value]
    queue = engine_metrics.metric(engine.value, release, QUEUE_DEPTH_METRICS[engine])
    return {
        "name": "engine-queue-depth",
        "serverAddress": settings.prometheus_server,
        "namespace": namespace,
        "query": f"sum({engine_metrics.selector(queue, matchers)}) or vector(0)",
        "metricType": "Average",
        "targetValue": settings.target_value,
    }


def metrics_spec(engine: str) -> dict[str, object]:
    """The InferenceEndpointConfig's `metrics`: scrape the engine's own Prometheus endpoint."""
    Engine(engine)  # the same path and port for both engines; an unknown engine is a bug
    return {
        "enabled": True,
        "metricsScrapeIntervalSeconds": METRICS_SCRAPE_INTERVAL_SECONDS,
        "modelMetrics": {"path": METRICS_PATH, "port": METRICS_PORT},
    }


def metrics_env(engine: str) -> dict[str, str]:
    """Container environment that makes the engine export metrics (serve wrapper convention)."""
    # vLLM exports them unless told not to; SGLang only with --enable-metrics.
    if Engine(engine) is Engine.SGLANG:
        return {ENV_PREFIXES[Engine.SGLANG] + "ENABLE_METRICS": "true"}
    return {}
