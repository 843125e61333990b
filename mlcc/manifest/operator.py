"""The operator's features in the InferenceEndpointConfig spec (docs/operator-features.md). Pure.

`apply` lays an endpoint's `OperatorSettings` over the spec `mlcc.manifest.workload` renders;
with the default settings it adds only the program's probes (`hp:probes: operator` leaves them
to the operator), so a stack without these keys renders what it always did besides them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mlcc.config.operator.features import OperatorSettings
from mlcc.config.operator.fields import PROBE_NAMES

PROBE_PERIOD_SECONDS = 10
# SGLang's /health takes about 1 s (1.007 s measured), so the operator's default readiness
# timeout of 1 s fails it and a 5 s one passes (aws-samples/llm_model_hub
# hyperpod_docs/ISSUES_FIXED.md, issue 6; the CRD's timeoutSeconds: "Defaults to 1 second").
PROBE_TIMEOUT_SECONDS = 5
LIVENESS_FAILURE_THRESHOLD = 3  # Kubernetes' default (the CRD's failureThreshold: "Defaults to 3")
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
# The CRD's field, and the reason a change of it must be a replacement.
ROUTING_FIELD = "intelligentRoutingSpec"
# The custom resource's replace_on_changes: changes the operator refuses in place.
REPLACED_PATHS = (f"spec.{ROUTING_FIELD}",)


@dataclass(frozen=True)
class Container:
    """What the default probes and the instance pinning need to know of the endpoint."""

    instance_type: str
    health_path: str
    port: int
    deploy_seconds: int  # the deploy time limit (hp:deployTimeoutMinutes)


def apply(spec: dict[str, Any], settings: OperatorSettings, container: Container) -> None:
    """Add the operator's fields to `spec` (the workload's), in place."""
    _placement(spec, settings, container.instance_type)
    if not settings.sagemaker_endpoint:
        spec["endpointName"] = ""
    optional: dict[str, object] = {
        "modelVersion": settings.model_version,
        "InitialReplicaCount": settings.initial_replica_count,
        "invocationEndpoint": settings.invocation_path,
        "kvCacheSpec": settings.kv_cache.spec() if settings.kv_cache else None,
        ROUTING_FIELD: (
            {"enabled": True, "routingStrategy": settings.routing} if settings.routing else None
        ),
        "tlsConfig": dict(settings.tls) or None,
        "dnsConfig": (
            {"hostedZoneId": settings.dns_hosted_zone_id} if settings.dns_hosted_zone_id else None
        ),
        "dataCapture": dict(settings.data_capture) or None,
        "kubernetes": dict(settings.kubernetes) or None,
        "modelCacheConfig": dict(settings.model_cache) or None,
        "pdSpec": dict(settings.pd_spec) or None,
        "tags": [{"name": k, "value": v} for k, v in settings.endpoint_tags] or None,
    }
    spec.update({k: v for k, v in optional.items() if v is not None})
    spec["loadBalancer"] = {**spec.get("loadBalancer", {}), **settings.load_balancer}
    spec["metrics"] = _metrics(spec.get("metrics", {}), settings, container.port)
    if settings.prefetch:
        spec["modelSourceConfig"]["prefetchEnabled"] = True
    _worker(spec["worker"], settings, container)


def _placement(spec: dict[str, Any], settings: OperatorSettings, instance_type: str) -> None:
    """instanceType, instanceTypes, or a node affinity that keeps the types (the CRD makes
    nodeAffinity exclusive with both, but the endpoint's GPUs are the types')."""
    types = list(settings.instance_types) or [instance_type]
    if settings.instance_types:
        spec.pop("instanceType", None)
        spec["instanceTypes"] = types
    if settings.node_affinity:
        spec.pop("instanceType", None)
        spec.pop("instanceTypes", None)
        spec["nodeAffinity"] = pinned_affinity(settings.node_affinity, types)


def pinned_affinity(affinity: Mapping[str, Any], types: list[str]) -> dict[str, Any]:
    """The user's affinity with `instance-type In types` in every required term."""
    pinned = {"key": INSTANCE_TYPE_LABEL, "operator": "In", "values": types}
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {}
    terms = required.get("nodeSelectorTerms") if isinstance(required, Mapping) else None
    terms = [t for t in terms or [] if isinstance(t, Mapping)] or [{}]
    pinned_terms = [
        {**term, "matchExpressions": [*(term.get("matchExpressions") or []), pinned]}
        for term in terms
    ]
    return {
        **affinity,
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": pinned_terms},
    }


def _metrics(base: Mapping[str, Any], settings: OperatorSettings, port: int) -> dict[str, Any]:
    metrics = dict(base)
    given = settings.metrics
    for field in ("enabled", "metricsScrapeIntervalSeconds"):
        if field in given:
            metrics[field] = given[field]
    model_metrics = dict(metrics.get("modelMetrics", {}))
    if settings.container_port is not None and "modelMetrics" in metrics:
        model_metrics["port"] = port  # the engine serves /metrics on its own port
    model_metrics.update({k: given[k] for k in ("path", "port") if k in given})
    if model_metrics:
        metrics["modelMetrics"] = model_metrics
    return metrics


def _worker(worker: dict[str, Any], settings: OperatorSettings, container: Container) -> None:
    if settings.container_port is not None:
        worker["modelInvocationPort"]["containerPort"] = container.port
    if settings.model_volume_mount:
        worker["modelVolumeMount"] = {**worker["modelVolumeMount"], **settings.model_volume_mount}
    for part, extra in settings.resources.items():
        worker["resources"][part] = {**worker["resources"].get(part, {}), **extra}
    worker["environmentVariables"] += [{"name": k, "value": v} for k, v in settings.env]
    if settings.worker_args:
        worker["args"] = list(settings.worker_args)
    if settings.working_dir:
        worker["workingDir"] = settings.working_dir
    if settings.request_limits:
        worker["requestLimits"] = dict(settings.request_limits)
    if settings.probes is not None:  # None: the operator's own (hp:probes: operator)
        worker["probes"] = probes(settings.probes, container)


def probes(given: Mapping[str, Mapping[str, object]], container: Container) -> dict[str, Any]:
    """All three probes: a default sized for the endpoint, the given fields laid over it.

    The startup probe allows the whole deploy time limit (`maxDeployTimeInSeconds`, the
    operator's own deadline for the deployment): downloading and loading the target and the
    draft, and capturing CUDA graphs for both, happen before /health answers, and no budget
    longer than the operator's could help, nor a shorter one be known to suffice.
    """
    deploy_seconds = container.deploy_seconds
    check = {"httpGet": {"path": container.health_path, "port": container.port}}
    defaults: dict[str, dict[str, Any]] = {
        "startup": {
            **check,
            "periodSeconds": PROBE_PERIOD_SECONDS,
            "timeoutSeconds": PROBE_TIMEOUT_SECONDS,
            "failureThreshold": math.ceil(deploy_seconds / PROBE_PERIOD_SECONDS),
        },
        "readiness": {
            **check,
            "periodSeconds": PROBE_PERIOD_SECONDS,
            "timeoutSeconds": PROBE_TIMEOUT_SECONDS,
        },
        "liveness": {
            **check,
            "periodSeconds": PROBE_PERIOD_SECONDS,
            "timeoutSeconds": PROBE_TIMEOUT_SECONDS,
            "failureThreshold": LIVENESS_FAILURE_THRESHOLD,
        },
    }
    rendered: dict[str, Any] = {}
    for name, field in PROBE_NAMES.items():
        fields = dict(given.get(name, {}))
        handler = [k for k in ("httpGet", "exec", "grpc", "tcpSocket") if k in fields]
        base = {k: v for k, v in defaults[name].items() if not (handler and k == "httpGet")}
        rendered[field] = {**base, **fields}
    return rendered
