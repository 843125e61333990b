"""The plan headline's words for an endpoint's operator features (docs/operator-features.md).

Read back from the rendered InferenceEndpointConfig spec, like the rest of the headline, so the
plan shows what the operator will be asked for: always the probes (the program's, with their
startup budget and readiness timeout, or the operator's own), then the features asked for.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from mlcc.manifest.operator import INSTANCE_TYPE_LABEL, REPLACED_PATHS
from mlcc.plan.graph import CR_TYPE


def replaces(type_token: str, changed: list[str]) -> bool:
    """Whether Pulumi replaces the resource for these changed input paths."""
    return type_token == CR_TYPE and any(
        path == replaced or path.startswith((f"{replaced}.", f"{replaced}["))
        for path in changed
        for replaced in REPLACED_PATHS
    )


def instance_types(spec: Mapping[str, Any]) -> str:
    """`ml.a`, a fallback list `ml.a|ml.b`, or the types a node affinity pins."""
    if spec.get("instanceType"):
        return str(spec["instanceType"])
    if spec.get("instanceTypes"):
        return "|".join(map(str, spec["instanceTypes"]))
    required = (spec.get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    for term in required.get("nodeSelectorTerms") or []:
        for expression in term.get("matchExpressions") or []:
            if expression.get("key") == INSTANCE_TYPE_LABEL:
                return "|".join(map(str, expression.get("values") or [])) + " (node affinity)"
    return "?"


def operator_line(spec: Mapping[str, Any]) -> str:
    worker = spec.get("worker") or {}
    words = [
        *_kv_cache(spec.get("kvCacheSpec")),
        *_routing(spec.get("intelligentRoutingSpec")),
        _probes(worker.get("probes")),
        *_limits(worker.get("requestLimits")),
        *_tls(spec.get("tlsConfig"), spec.get("dnsConfig")),
        *(["SageMaker endpoint off"] if spec.get("endpointName") == "" else []),
        *(["data capture"] if spec.get("dataCapture") else []),
        *(["model cache"] if spec.get("modelCacheConfig") else []),
        *(["prefill/decode split (pdSpec)"] if spec.get("pdSpec") else []),
        *(["prefetch"] if (spec.get("modelSourceConfig") or {}).get("prefetchEnabled") else []),
    ]
    return f"  operator: {', '.join(words)}"


# Kubernetes' probe defaults, as the CRD's worker.probes fields describe them.
_PROBE_DEFAULTS = {"initialDelaySeconds": 0, "periodSeconds": 10, "failureThreshold": 3}
_TIMEOUT_SECONDS = 1


def _probes(probes: Any) -> str:
    """`probes (startup up to 120 min, readiness timeout 5 s)`, or the operator's own."""
    if not isinstance(probes, Mapping) or not probes:
        return "the operator's own probes"
    startup, readiness = probes.get("startupProbe"), probes.get("readinessProbe")
    delay, period, failures = (_whole(startup, k, v) for k, v in _PROBE_DEFAULTS.items())
    minutes = math.ceil((delay + period * failures) / 60)
    timeout = _whole(readiness, "timeoutSeconds", _TIMEOUT_SECONDS)
    return f"probes (startup up to {minutes} min, readiness timeout {timeout} s)"


def _whole(probe: Any, field: str, default: int) -> int:
    value = probe.get(field) if isinstance(probe, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _kv_cache(cache: Any) -> list[str]:
    if not isinstance(cache, Mapping):
        return []
    tiers = ["CPU"] if cache.get("enableL1Cache") else []
    backend = (cache.get("l2CacheSpec") or {}).get("l2CacheBackend")
    tiers += [str(backend)] if cache.get("enableL2Cache") and backend else []
    return [f"KV cache {'+'.join(tiers) or 'from ' + str(cache.get('cacheConfigFile'))}"]


def _routing(routing: Any) -> list[str]:
    if not isinstance(routing, Mapping) or not routing.get("enabled"):
        return []
    strategy = routing.get("routingStrategy")
    return [f"routing {strategy} (adding or removing it replaces the endpoint)"]


def _limits(limits: Any) -> list[str]:
    if not isinstance(limits, Mapping):
        return []
    parts = [f"{name} {value}" for name, value in limits.items()]
    return [f"request limits ({', '.join(parts)})"]


def _tls(tls: Any, dns: Any) -> list[str]:
    certificate = (tls or {}).get("customCertificateConfig") if isinstance(tls, Mapping) else None
    words = [f"TLS {certificate.get('domainName')}"] if isinstance(certificate, Mapping) else []
    if isinstance(dns, Mapping) and dns.get("hostedZoneId"):
        words.append(f"DNS in {dns['hostedZoneId']}")
    return words
