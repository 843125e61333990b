"""Every operator key renders the CRD field the hyp CLI's template 1.2 would send, and the
whole InferenceEndpointConfig stays valid against the vendored operator 3.3 CRD."""

from __future__ import annotations

import json
from typing import Any

import pytest
from crd_schema import crd_schema
from manifest_samples import CRD, valid_specs

from mlcc.config.operator import keys as operator_keys
from mlcc.manifest import operator
from mlcc.serving.speculative import SpeculativeSpec

IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/hp-vllm@sha256:" + "a" * 64
ACM = "arn:aws:acm:us-east-1:123456789012:certificate/0a1b2c3d-aaaa-bbbb-cccc-0123456789ab"
DATA_CAPTURE = {
    "s3Uri": "s3://capture-bucket/llm",
    "sagemakerEndpoint": {"enabled": True, "initialSamplingPercentage": 20},
    "loadBalancer": {"enabled": True},
    "modelPod": {"enabled": True, "captureOptions": [{"captureMode": "Input"}]},
}
KUBERNETES = {
    "serviceAccountName": "llm-reader",
    "schedulerName": "default-scheduler",
    "volumes": [{"name": "scratch", "emptyDir": {}}],
}
AFFINITY_TERM = {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In",
                                       "values": ["us-east-1a"]}]}  # fmt: skip
TRIGGER = {
    "name": "queue",
    "namespace": "AWS/SQS",
    "metricName": "ApproximateNumberOfMessagesVisible",
    "dimensions": [{"name": "QueueName", "value": "prompts"}],
    "metricStat": "Average",
    "metricType": "Value",
    "targetValue": 100,
    "minValue": 0,
    "useCachedMetrics": True,
    "metricCollectionPeriod": 60,
    "metricCollectionStartTime": 120,
}
PD_SPEC = {
    "prefillSpec": {"replicas": 1, "args": ["--max-num-batched-tokens", "8192"]},
    "decodingSpec": {"replicas": 2},
}


def spec_of(values: dict[str, str], speculative: SpeculativeSpec | None = None) -> dict[str, Any]:
    (spec,) = valid_specs(values, IMAGE, speculative).values()
    return spec


def at(spec: dict[str, Any], path: str) -> Any:
    value: Any = spec
    for part in path.split("."):
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


def key(name: str, value: object) -> dict[str, str]:
    return {f"hp:{name}": value if isinstance(value, str) else json.dumps(value)}


# (stack keys, CRD path, rendered value): one row per template 1.2 field group.
RENDERED = [
    (key("kvCache", {"l2Backend": "tieredstorage"}), "kvCacheSpec",
     {"enableL1Cache": True, "enableL2Cache": True,
      "l2CacheSpec": {"l2CacheBackend": "tieredstorage"}}),
    (key("kvCache", {"l1": True, "configFile": "/etc/lmcache.yaml"}), "kvCacheSpec",
     {"enableL1Cache": True, "enableL2Cache": False, "cacheConfigFile": "/etc/lmcache.yaml"}),
    ({**key("routing", "prefixaware")}, "intelligentRoutingSpec",
     {"enabled": True, "routingStrategy": "prefixaware"}),
    (key("requestLimits", {"maxConcurrentRequests": 64, "maxQueueSize": 128,
                           "overflowStatusCode": 503}), "worker.requestLimits",
     {"maxConcurrentRequests": 64, "maxQueueSize": 128, "overflowStatusCode": 503}),
    ({"hp:instanceType": "ml.g5.12xlarge", **key("instanceTypes", [])}, "instanceType",
     "ml.g5.12xlarge"),
    (key("tls", {"acmCertificateArn": ACM, "domainName": "llm.example.com"}),
     "tlsConfig.customCertificateConfig", {"acmArn": ACM, "domainName": "llm.example.com"}),
    (key("tls", {"certificateOutputS3Uri": "s3://certs/llm"}),
     "tlsConfig.tlsCertificateOutputS3Uri", "s3://certs/llm"),
    ({**key("tls", {"acmCertificateArn": ACM, "domainName": "llm.example.com"}),
      "hp:dnsHostedZoneId": "Z0123456789ABC"}, "dnsConfig", {"hostedZoneId": "Z0123456789ABC"}),
    ({"hp:sagemakerEndpoint": "false"}, "endpointName", ""),
    ({"hp:sagemakerEndpoint": "true"}, "endpointName", "hp-dev"),
    (key("dataCapture", DATA_CAPTURE), "dataCapture", DATA_CAPTURE),
    (key("loadBalancer", {"healthCheckPath": "/ping", "routingAlgorithm": "round_robin",
                          "idleTimeoutSeconds": 600}), "loadBalancer",
     {"healthCheckPath": "/ping", "routingAlgorithm": "round_robin", "idleTimeoutSeconds": 600}),
    ({"hp:deployTimeoutMinutes": "90"}, "maxDeployTimeInSeconds", 5400),
    ({"hp:modelVersion": "1.2.3"}, "modelVersion", "1.2.3"),
    (key("endpointTags", {"team": "ml", "tier": "gold"}), "tags",
     [{"name": "team", "value": "ml"}, {"name": "tier", "value": "gold"}]),
    (key("env", {"VLLM_LOGGING_LEVEL": "DEBUG"}), "worker.environmentVariables.-1",
     {"name": "VLLM_LOGGING_LEVEL", "value": "DEBUG"}),
    ({"hp:containerPort": "8000"}, "worker.modelInvocationPort",
     {"containerPort": 8000, "name": "http"}),
    (key("modelVolumeMount", {"name": "weights", "mountPath": "/models"}),
     "worker.modelVolumeMount", {"name": "weights", "mountPath": "/models"}),
    (key("resources", {"limits": {"memory": "160Gi"}, "requests": {"cpu": "16"}}),
     "worker.resources", {"limits": {"nvidia.com/gpu": "4", "memory": "160Gi"},
                          "requests": {"nvidia.com/gpu": "4", "cpu": "16"}}),
    (key("workerArgs", ["--max-num-seqs", "64", "--enforce-eager"]), "worker.args",
     ["--max-num-seqs", "64", "--enforce-eager"]),
    ({"hp:workingDir": "/workspace"}, "worker.workingDir", "/workspace"),
    (key("metrics", {"scrapeIntervalSeconds": 30, "path": "/metrics", "port": 8080}),
     "metrics", {"enabled": True, "metricsScrapeIntervalSeconds": 30,
                 "modelMetrics": {"path": "/metrics", "port": 8080}}),
    ({"hp:invocationPath": "v1/completions"}, "invocationEndpoint", "v1/completions"),
    (key("kubernetes", KUBERNETES), "kubernetes", KUBERNETES),
    ({"hp:initialReplicaCount": "1"}, "InitialReplicaCount", 1),
    ({"hp:prefetch": "true"}, "modelSourceConfig.prefetchEnabled", True),
    (key("modelCache", {"imageCache": True, "weightsCache": True, "hostPath": "/mnt/nvme"}),
     "modelCacheConfig", {"imageCache": {"enabled": True},
                          "weightsCache": {"enabled": True, "hostPath": "/mnt/nvme"}}),
    ({"hp:instanceType": "ml.p5.48xlarge", **key("pdSpec", PD_SPEC)}, "pdSpec", PD_SPEC),
    (key("autoscaling", {"minReplicas": 1, "maxReplicas": 3, "cloudWatchTrigger": TRIGGER}),
     "autoScalingSpec.cloudWatchTrigger", TRIGGER),
]  # fmt: skip


@pytest.mark.parametrize(("values", "path", "expected"), RENDERED)
def test_each_key_renders_its_crd_field(values: dict[str, str], path: str, expected: Any) -> None:
    assert at(spec_of(values), path) == expected


def test_fallback_types_replace_the_single_type() -> None:
    spec = spec_of(key("instanceTypes", ["ml.g6e.12xlarge", "ml.g6e.24xlarge"]))
    assert spec["instanceTypes"] == ["ml.g6e.12xlarge", "ml.g6e.24xlarge"]
    assert "instanceType" not in spec
    assert at(spec, "worker.resources.limits") == {"nvidia.com/gpu": "4"}


def test_node_affinity_keeps_the_instance_types_in_every_required_term() -> None:
    affinity = {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [AFFINITY_TERM]},
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 10, "preference": AFFINITY_TERM}
        ],
    }
    spec = spec_of({"hp:instanceType": "ml.g5.12xlarge", **key("nodeAffinity", affinity)})
    assert "instanceType" not in spec and "instanceTypes" not in spec
    (term,) = at(spec, "nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution")[
        "nodeSelectorTerms"
    ]
    assert term["matchExpressions"] == [
        *AFFINITY_TERM["matchExpressions"],
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["ml.g5.12xlarge"]},
    ]
    assert (
        at(spec, "nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution")
        == (affinity["preferredDuringSchedulingIgnoredDuringExecution"])
    )


def test_probes_default_covers_the_deploy_time_and_the_given_fields_win() -> None:
    spec = spec_of(
        {
            "hp:deployTimeoutMinutes": "120",
            **key(
                "probes",
                {"readiness": {"timeoutSeconds": 10}, "liveness": {"exec": {"command": ["true"]}}},
            ),
        }
    )
    probes = at(spec, "worker.probes")
    assert probes["startupProbe"] == {
        "httpGet": {"path": "/health", "port": 8080},
        "periodSeconds": 10,
        "timeoutSeconds": 5,
        "failureThreshold": 720,
    }
    assert probes["readinessProbe"]["timeoutSeconds"] == 10
    assert probes["livenessProbe"] == {
        "exec": {"command": ["true"]},
        "periodSeconds": 10,
        "timeoutSeconds": 5,
        "failureThreshold": 3,
    }


def test_a_container_port_moves_the_wrapper_the_probes_and_the_metrics() -> None:
    spec = spec_of({"hp:containerPort": "8000", **key("probes", {"startup": {}})})
    env = {e["name"]: e.get("value") for e in at(spec, "worker.environmentVariables")}
    assert env["SM_VLLM_PORT"] == "8000"
    assert at(spec, "worker.probes.startupProbe.httpGet.port") == 8000
    assert at(spec, "metrics.modelMetrics.port") == 8000


def test_prefetch_points_the_engine_at_the_model_volume() -> None:
    spec = spec_of({"hp:prefetch": "true"})
    env = {e["name"]: e.get("value") for e in at(spec, "worker.environmentVariables")}
    assert env["SM_VLLM_MODEL"] == "/opt/ml/model"
    assert env["SM_VLLM_SERVED_MODEL_NAME"] == "meta-llama/Llama-3.1-8B-Instruct"


def test_without_operator_keys_only_the_program_probes_are_added() -> None:
    spec = spec_of({})
    for field in ("kvCacheSpec", "intelligentRoutingSpec", "tlsConfig", "dnsConfig", "tags"):
        assert field not in spec
    assert "args" not in spec["worker"]
    assert set(spec["worker"]["probes"]) == {"startupProbe", "readinessProbe", "livenessProbe"}
    assert "probes" not in spec_of({"hp:probes": "operator"})["worker"]
    assert spec["endpointName"] == "hp-dev" and spec["instanceType"] == "ml.g5.12xlarge"


def test_the_replaced_field_is_the_crds() -> None:
    assert operator.ROUTING_FIELD in crd_schema(CRD)["properties"]["spec"]["properties"]


def test_every_operator_key_has_a_rendering_test() -> None:
    """operatorVersion and experimental gate other keys; workerCommand is always refused."""
    rendered = {name.removeprefix("hp:") for values, _path, _value in RENDERED for name in values}
    rendered |= {"instanceTypes", "nodeAffinity", "probes"}  # their own tests (and probes')
    rendered |= {"capture"}  # tests/capture: its spec.dataCapture needs the stack's bucket
    keys = {row[0] for row in operator_keys.ROWS}
    assert keys - rendered == {"operatorVersion", "experimental", "workerCommand"}
