"""Checks of the operator keys that are maps of the CRD's fields (docs/operator-features.md).

Each returns the value in the CRD's field names, leaving out what it reported. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from mlcc.config.reader import Reader
from mlcc.engine_contract.values import shown_value

ROUTING_ALGORITHMS = ("least_outstanding_requests", "round_robin")
PROBE_NAMES = {
    "startup": "startupProbe",
    "readiness": "readinessProbe",
    "liveness": "livenessProbe",
}
# `hp:probes: operator`: the operator's own probes instead of the program's.
OPERATOR_PROBES = "operator"
# Kubernetes Probe fields (core/v1), as the CRD's worker.probes.* declares them.
PROBE_FIELDS = frozenset(
    {
        "exec",
        "failureThreshold",
        "grpc",
        "httpGet",
        "initialDelaySeconds",
        "periodSeconds",
        "successThreshold",
        "tcpSocket",
        "terminationGracePeriodSeconds",
        "timeoutSeconds",
    }
)
# The bounds of the Probe fields that are numbers: the CRD's int32/int64 fields and their
# descriptions ("Minimum value is 1"; successThreshold "Must be 1 for liveness and startup"),
# initialDelaySeconds not negative (Kubernetes' pkg/apis/core/validation validateProbe).
PROBE_NUMBERS = {
    "failureThreshold": (1, 2**31 - 1),
    "initialDelaySeconds": (0, 2**31 - 1),
    "periodSeconds": (1, 2**31 - 1),
    "successThreshold": (1, 2**31 - 1),
    "terminationGracePeriodSeconds": (1, 2**63 - 1),
    "timeoutSeconds": (1, 2**31 - 1),
}
# The CRD's patterns (schemas/crds/inferenceendpointconfigs.yaml, v1).
ACM_ARN = re.compile(r"^arn:aws:acm:[a-z0-9-]+:[0-9]{12}:certificate/[a-fA-F0-9-]+$")
DOMAIN = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$")
S3_URI = re.compile(r"^s3://([^/]+)/?(.*)$")
# The CRD's bounds (tests/config/test_operator_crd_facts.py checks them against it).
INT32_MAX = 2**31 - 1
REQUEST_LIMIT_BOUNDS = {
    "maxConcurrentRequests": (1, INT32_MAX),
    "maxQueueSize": (0, INT32_MAX),
    "overflowStatusCode": (400, 599),
}
IDLE_TIMEOUT_BOUNDS = (1, 4000)
SCRAPE_INTERVAL_BOUNDS = (5, 300)
METRICS_PORT_BOUNDS = (1024, 65535)
HOST_PATH_LENGTH = (1, 255)
VOLUME_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def probes(reader: Reader) -> dict[str, dict[str, object]] | None:
    """The fields to lay over the program's probes; None for the operator's own
    (`hp:probes: operator`, no `worker.probes` rendered)."""
    given = reader.structured("probes")
    if given is None:
        return {}
    if isinstance(given, str) and given.strip().lower() == OPERATOR_PROBES:
        return None
    if not isinstance(given, dict):
        reader.fail(
            "probes",
            "must be a map {startup, readiness, liveness} of probe fields laid over the "
            f"program's probes, or '{OPERATOR_PROBES}' for the operator's own; got "
            f"{shown_value(reader.string('probes'))}",
        )
        return {}
    unknown(reader, "probes", given, set(PROBE_NAMES))
    probes: dict[str, dict[str, object]] = {}
    for name, value in given.items():
        if name not in PROBE_NAMES:
            continue
        if not isinstance(value, dict):
            reader.fail(f"probes.{name}", "must be a map of Kubernetes probe fields")
            continue
        unknown(reader, f"probes.{name}", value, PROBE_FIELDS)
        for number, (low, high) in PROBE_NUMBERS.items():
            if number in value and not whole(value[number], low, high):
                reader.fail(f"probes.{name}.{number}", f"must be a whole number of at least {low}")
            elif number == "successThreshold" and name != "readiness" and value.get(number, 1) != 1:
                reader.fail(f"probes.{name}.{number}", f"must be 1 for a {name} probe")
        probes[name] = {k: v for k, v in value.items() if k in PROBE_FIELDS}
    return probes


def request_limits(reader: Reader) -> dict[str, int]:
    raw = reader.mapping("requestLimits", "request limits")
    bounds = REQUEST_LIMIT_BOUNDS
    unknown(reader, "requestLimits", raw, set(bounds))
    limits: dict[str, int] = {}
    for name, (low, high) in bounds.items():
        if name not in raw:
            continue
        value = raw[name]
        if whole(value, low, high):
            assert isinstance(value, int)
            limits[name] = value
        else:
            reader.fail(f"requestLimits.{name}", f"must be a whole number from {low} to {high}")
    return limits


def tls(reader: Reader) -> dict[str, object]:
    raw = reader.mapping("tls", "TLS settings")
    unknown(reader, "tls", raw, {"acmCertificateArn", "domainName", "certificateOutputS3Uri"})
    arn = optional_text(reader, "tls.acmCertificateArn", raw.get("acmCertificateArn"))
    domain = optional_text(reader, "tls.domainName", raw.get("domainName"))
    uri = optional_text(reader, "tls.certificateOutputS3Uri", raw.get("certificateOutputS3Uri"))
    tls: dict[str, object] = {}
    if arn and not ACM_ARN.match(arn):
        reader.fail("tls.acmCertificateArn", "must be an ACM certificate ARN in the aws partition")
    if domain and (len(domain) > 253 or not DOMAIN.match(domain)):
        reader.fail("tls.domainName", "must be a lowercase domain name, not a wildcard")
    if bool(arn) != bool(domain):
        reader.fail("tls", "acmCertificateArn and domainName go together (your own certificate)")
    elif arn and domain:
        tls["customCertificateConfig"] = {"acmArn": arn, "domainName": domain}
    if uri:
        if not S3_URI.match(uri):
            reader.fail("tls.certificateOutputS3Uri", "must be an s3://bucket/prefix URI")
        tls["tlsCertificateOutputS3Uri"] = uri
    return tls


def load_balancer(reader: Reader) -> dict[str, object]:
    raw = reader.mapping("loadBalancer", "load balancer settings")
    unknown(
        reader, "loadBalancer", raw, {"healthCheckPath", "routingAlgorithm", "idleTimeoutSeconds"}
    )
    settings: dict[str, object] = {}
    path = raw.get("healthCheckPath")
    if path is not None:
        if not isinstance(path, str) or not path.startswith("/"):
            reader.fail("loadBalancer.healthCheckPath", "must be a path starting with /")
        else:
            settings["healthCheckPath"] = path
    algorithm = raw.get("routingAlgorithm")
    if algorithm is not None:
        if algorithm not in ROUTING_ALGORITHMS:
            reader.fail(
                "loadBalancer.routingAlgorithm", f"must be {' or '.join(ROUTING_ALGORITHMS)}"
            )
        else:
            settings["routingAlgorithm"] = algorithm
    idle = raw.get("idleTimeoutSeconds")
    if idle is not None:
        if not whole(idle, *IDLE_TIMEOUT_BOUNDS):
            low, high = IDLE_TIMEOUT_BOUNDS
            reader.fail(
                "loadBalancer.idleTimeoutSeconds", f"must be a whole number from {low} to {high}"
            )
        else:
            settings["idleTimeoutSeconds"] = idle
    return settings


def volume_mount(reader: Reader) -> dict[str, str]:
    raw = reader.mapping("modelVolumeMount", "volume settings")
    unknown(reader, "modelVolumeMount", raw, {"name", "mountPath"})
    mount: dict[str, str] = {}
    name, path = raw.get("name"), raw.get("mountPath")
    if name is not None:
        if not isinstance(name, str) or not VOLUME_NAME.match(name):
            reader.fail("modelVolumeMount.name", "must be a Kubernetes volume name (a-z, 0-9, -)")
        else:
            mount["name"] = name
    if path is not None:
        if not isinstance(path, str) or not path.startswith("/"):
            reader.fail("modelVolumeMount.mountPath", "must be an absolute path")
        else:
            mount["mountPath"] = path
    return mount


def resources(reader: Reader) -> dict[str, dict[str, object]]:
    raw = reader.mapping("resources", "resource settings")
    unknown(reader, "resources", raw, {"limits", "requests"})
    resources: dict[str, dict[str, object]] = {}
    for part in ("limits", "requests"):
        value = raw.get(part)
        if value is None:
            continue
        if not isinstance(value, dict) or not all(
            isinstance(v, str | int) and not isinstance(v, bool) for v in value.values()
        ):
            reader.fail(f"resources.{part}", "must map resource names to quantities (cpu: 8)")
            continue
        if "nvidia.com/gpu" in value:
            reader.fail(f"resources.{part}.nvidia.com/gpu", "is hp:gpuCount's; set that instead")
        resources[part] = {str(k): str(v) for k, v in value.items() if k != "nvidia.com/gpu"}
    return resources


def metrics(reader: Reader) -> dict[str, object]:
    raw = reader.mapping("metrics", "metrics settings")
    unknown(reader, "metrics", raw, {"enabled", "scrapeIntervalSeconds", "path", "port"})
    metrics: dict[str, object] = {}
    if "enabled" in raw:
        if not isinstance(raw["enabled"], bool):
            reader.fail("metrics.enabled", "must be true or false")
        else:
            metrics["enabled"] = raw["enabled"]
    if "scrapeIntervalSeconds" in raw:
        if not whole(raw["scrapeIntervalSeconds"], *SCRAPE_INTERVAL_BOUNDS):
            reader.fail("metrics.scrapeIntervalSeconds", "must be a whole number from 5 to 300")
        else:
            metrics["metricsScrapeIntervalSeconds"] = raw["scrapeIntervalSeconds"]
    if "path" in raw:
        path = raw["path"]
        if not isinstance(path, str) or not re.match(r"^/[a-zA-Z0-9\-_./]*$", path):
            reader.fail("metrics.path", "must be a path such as /metrics")
        else:
            metrics["path"] = path
    if "port" in raw:
        if not whole(raw["port"], *METRICS_PORT_BOUNDS):
            reader.fail("metrics.port", "must be a port from 1024 to 65535")
        else:
            metrics["port"] = raw["port"]
    return metrics


def model_cache(reader: Reader) -> dict[str, object]:
    raw = reader.mapping("modelCache", "model cache settings")
    unknown(reader, "modelCache", raw, {"imageCache", "weightsCache", "hostPath"})
    for flag in ("imageCache", "weightsCache"):
        if flag in raw and not isinstance(raw[flag], bool):
            reader.fail(f"modelCache.{flag}", "must be true or false")
    host_path = raw.get("hostPath")
    shortest, longest = HOST_PATH_LENGTH
    if host_path is not None and not (
        isinstance(host_path, str) and shortest <= len(host_path) <= longest
    ):
        reader.fail("modelCache.hostPath", "must be a host path of 1-255 characters")
    if host_path is not None and raw.get("weightsCache") is not True:
        reader.fail("modelCache.hostPath", "is where weightsCache keeps the weights; set it too")
    cache: dict[str, object] = {}
    if raw.get("imageCache") is True:
        cache["imageCache"] = {"enabled": True}
    if raw.get("weightsCache") is True:
        weights: dict[str, object] = {"enabled": True}
        if isinstance(host_path, str):
            weights["hostPath"] = host_path
        cache["weightsCache"] = weights
    return cache


def unknown(
    reader: Reader, key: str, raw: Mapping[str, object], fields: set[str] | frozenset[str]
) -> None:
    for name in sorted(set(map(str, raw)) - set(fields)):
        reader.fail(
            f"{key}.{name[:60]}", f"is not a field of hp:{key}; fields: {', '.join(sorted(fields))}"
        )


def crd_object(reader: Reader, key: str, fields: frozenset[str]) -> dict[str, object]:
    raw = reader.mapping(key, "the CRD's fields")
    unknown(reader, key, raw, fields)
    return {k: v for k, v in raw.items() if k in fields}


def choice(reader: Reader, key: str, choices: tuple[str, ...]) -> str | None:
    value = reader.string(key).lower()
    if value and value not in choices:
        reader.fail(key, f"must be one of {', '.join(choices)}, got {shown_value(value)}")
        return None
    return value or None


def pattern(reader: Reader, key: str, pattern: re.Pattern[str], what: str) -> str | None:
    value = reader.string(key)
    if value and not pattern.match(value):
        reader.fail(key, f"must be {what}, got {shown_value(value)}")
        return None
    return value or None


def bounded(reader: Reader, key: str, low: int, high: int) -> int | None:
    value = reader.integer(key, optional=True)
    if value is not None and not low <= value <= high:
        reader.fail(key, f"must be between {low} and {high}, got {value}")
        return None
    return value


def string_map(reader: Reader, key: str, what: str) -> tuple[tuple[str, str], ...]:
    raw = reader.mapping(key, what)
    pairs: list[tuple[str, str]] = []
    for name, value in raw.items():
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            reader.fail(f"{key}.{str(name)[:60]}", "must be a string")
            continue
        pairs.append((str(name), str(value)))
    return tuple(sorted(pairs))


def optional_text(reader: Reader, key: str, value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        reader.fail(key, "must be a non-empty string")
        return None
    return value.strip()


def whole(value: object, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
