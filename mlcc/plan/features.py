"""The plan headline's words for an endpoint's operator features (docs/operator-features.md).

Read back from the rendered InferenceEndpointConfig spec, like the rest of the headline, so the
plan shows what the operator will be asked for. A spec without any of them gives no line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mlcc.manifest.operator import INSTANCE_TYPE_LABEL, REPLACED_PATHS

CR_TYPE = "kubernetes:inference.sagemaker.aws.amazon.com/v1:InferenceEndpointConfig"


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


def operator_line(spec: Mapping[str, Any]) -> str | None:
    worker = spec.get("worker") or {}
    words = [
        *_kv_cache(spec.get("kvCacheSpec")),
        *_routing(spec.get("intelligentRoutingSpec")),
        *(["probes"] if worker.get("probes") else []),
        *_limits(worker.get("requestLimits")),
        *_tls(spec.get("tlsConfig"), spec.get("dnsConfig")),
        *(["SageMaker endpoint off"] if spec.get("endpointName") == "" else []),
        *(["data capture"] if spec.get("dataCapture") else []),
        *(["model cache"] if spec.get("modelCacheConfig") else []),
        *(["prefill/decode split (pdSpec)"] if spec.get("pdSpec") else []),
        *(["prefetch"] if (spec.get("modelSourceConfig") or {}).get("prefetchEnabled") else []),
    ]
    return f"  operator: {', '.join(words)}" if words else None


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
