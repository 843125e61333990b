"""The CRD facts the operator keys are checked by (field sets, enums, patterns, bounds) are the
vendored CRD's, so a refresh that changes them fails here instead of drifting."""

from __future__ import annotations

from typing import Any

from crd_schema import crd_schema

from mlcc.config.operator import features as operator
from mlcc.config.operator import fields as operator_fields

SPEC = crd_schema("inferenceendpointconfigs.yaml")["properties"]["spec"]["properties"]
WORKER = SPEC["worker"]["properties"]


def fields(schema: dict[str, Any]) -> set[str]:
    return set(schema["properties"])


def test_the_passed_through_objects_have_the_crds_fields() -> None:
    assert fields(SPEC["kubernetes"]) == operator.KUBERNETES_FIELDS
    assert fields(SPEC["dataCapture"]) == operator.DATA_CAPTURE_FIELDS
    assert fields(SPEC["pdSpec"]) == operator.PD_FIELDS
    assert fields(SPEC["nodeAffinity"]) == operator.NODE_AFFINITY_FIELDS
    probes = WORKER["probes"]["properties"]
    assert set(probes) == set(operator_fields.PROBE_NAMES.values())
    for probe in probes.values():
        assert fields(probe) == operator_fields.PROBE_FIELDS


def test_the_enums_and_patterns_are_the_crds() -> None:
    routing = SPEC["intelligentRoutingSpec"]["properties"]["routingStrategy"]
    assert tuple(routing["enum"]) == operator.ROUTING_STRATEGIES
    balancer = SPEC["loadBalancer"]["properties"]
    assert tuple(balancer["routingAlgorithm"]["enum"]) == operator_fields.ROUTING_ALGORITHMS
    backend = SPEC["kvCacheSpec"]["properties"]["l2CacheSpec"]["properties"]["l2CacheBackend"]
    assert backend["pattern"] == "(?i)" + "|".join(sorted(operator.L2_BACKENDS))
    tls = SPEC["tlsConfig"]["properties"]
    certificate = tls["customCertificateConfig"]["properties"]
    assert certificate["acmArn"]["pattern"] == operator_fields.ACM_ARN.pattern
    assert certificate["domainName"]["pattern"] == operator_fields.DOMAIN.pattern
    assert tls["tlsCertificateOutputS3Uri"]["pattern"] == operator_fields.S3_URI.pattern
    zone = SPEC["dnsConfig"]["properties"]["hostedZoneId"]
    assert zone["pattern"] == operator.HOSTED_ZONE.pattern


def test_the_bounds_are_the_crds() -> None:
    limits = WORKER["requestLimits"]["properties"]
    for name, (low, high) in operator_fields.REQUEST_LIMIT_BOUNDS.items():
        assert limits[name]["minimum"] == low
        assert limits[name].get("maximum", 2**31 - 1) == high
    idle = SPEC["loadBalancer"]["properties"]["idleTimeoutSeconds"]
    assert (idle["minimum"], idle["maximum"]) == operator_fields.IDLE_TIMEOUT_BOUNDS
    metrics = SPEC["metrics"]["properties"]
    interval = metrics["metricsScrapeIntervalSeconds"]
    assert (interval["minimum"], interval["maximum"]) == operator_fields.SCRAPE_INTERVAL_BOUNDS
    port = metrics["modelMetrics"]["properties"]["port"]
    assert (port["minimum"], port["maximum"]) == operator_fields.METRICS_PORT_BOUNDS
    host_path = SPEC["modelCacheConfig"]["properties"]["weightsCache"]["properties"]["hostPath"]
    assert (host_path["minLength"], host_path["maxLength"]) == operator_fields.HOST_PATH_LENGTH
