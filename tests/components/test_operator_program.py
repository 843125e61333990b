"""Every operator key at once, on two endpoints, through the real program.

See docs/operator-features.md.

Top-level keys are the defaults; each hp:endpoints entry overrides them. The CRs must be valid
against the vendored CRD, carry each field, and be declared to replace on a routing change.
"""

from __future__ import annotations

import json
from typing import Any

from crd_schema import assert_valid_manifest
from program_runs import CR_TYPE, run_main

from mlcc.manifest.operator import ROUTING_FIELD
from mlcc.plan.report import PlannedResource, headline

ACM = "arn:aws:acm:us-east-1:123456789012:certificate/0a1b2c3d-aaaa-bbbb-cccc-0123456789ab"
TOP_LEVEL = {
    "kvCache": {"l1": True, "l2Backend": "tieredstorage"},
    "routing": "prefixaware",
    "probes": {"readiness": {"timeoutSeconds": 5}},
    "requestLimits": {"maxConcurrentRequests": 32, "maxQueueSize": 64, "overflowStatusCode": 429},
    "tls": {"acmCertificateArn": ACM, "domainName": "llm.example.com"},
    "dnsHostedZoneId": "Z0123456789ABC",
    "dataCapture": {"s3Uri": "s3://capture/llm", "loadBalancer": {"enabled": True}},
    "loadBalancer": {"routingAlgorithm": "round_robin", "idleTimeoutSeconds": 900},
    "deployTimeoutMinutes": 90,
    "modelVersion": "1.0.0",
    "endpointTags": {"team": "ml"},
    "env": {"VLLM_LOGGING_LEVEL": "INFO"},
    "resources": {"limits": {"memory": "150Gi"}},
    "workingDir": "/workspace",
    "metrics": {"scrapeIntervalSeconds": 30},
    "kubernetes": {"schedulerName": "default-scheduler"},
    "modelCache": {"imageCache": True},
    "initialReplicaCount": 1,
}
ENTRIES = [
    {
        # vLLM with EAGLE-3, the kvaware router on the completions path, fallback types.
        "name": "llama-kv",
        "speculativeAlgorithm": "eagle3",
        "speculativeModel": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
        "routing": "kvaware",
        "invocationPath": "v1/completions",
        "instanceTypes": ["ml.g5.12xlarge", "ml.g5.24xlarge"],
        "workerArgs": ["--max-num-seqs", "64"],
        "containerPort": 8000,
    },
    {
        # SGLang: no KV cache (vLLM only), no SageMaker endpoint, its own mount and affinity.
        "name": "qwen-ngram",
        "engine": "sglang",
        "model": "Qwen/Qwen3-8B",
        "speculativeAlgorithm": "ngram",
        "kvCache": {},
        "sagemakerEndpoint": False,
        "prefetch": True,
        "modelVolumeMount": {"name": "weights", "mountPath": "/models"},
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 50,
                    "preference": {
                        "matchExpressions": [
                            {
                                "key": "topology.kubernetes.io/zone",
                                "operator": "In",
                                "values": ["us-east-1a"],
                            }
                        ]
                    },
                }
            ]
        },
    },
]
GROUPS = [{"name": "g5", "instanceType": "ml.g5.12xlarge", "instanceCount": 2}]


def run() -> tuple[dict[str, Any], list[Any]]:
    overrides = {k: v if isinstance(v, str) else json.dumps(v) for k, v in TOP_LEVEL.items()}
    overrides |= {"endpoints": json.dumps(ENTRIES), "instanceGroups": json.dumps(GROUPS)}
    result = run_main(overrides)
    crs = result.of_type(CR_TYPE)
    return {cr.inputs["metadata"]["name"]: cr for cr in crs}, crs


def test_both_endpoints_render_every_key_valid_against_the_crd() -> None:
    by_name, _ = run()
    assert sorted(by_name) == ["llama-kv", "qwen-ngram"]
    for cr in by_name.values():
        assert_valid_manifest(cr.inputs, "inferenceendpointconfigs.yaml")
    llama, qwen = by_name["llama-kv"].inputs["spec"], by_name["qwen-ngram"].inputs["spec"]
    assert llama["kvCacheSpec"]["l2CacheSpec"] == {"l2CacheBackend": "tieredstorage"}
    assert llama[ROUTING_FIELD] == {"enabled": True, "routingStrategy": "kvaware"}
    assert llama["instanceTypes"] == ["ml.g5.12xlarge", "ml.g5.24xlarge"]
    assert llama["invocationEndpoint"] == "v1/completions"
    assert llama["worker"]["args"] == ["--max-num-seqs", "64"]
    assert llama["worker"]["modelInvocationPort"]["containerPort"] == 8000
    assert llama["endpointName"] == "llama-kv"
    for spec in (llama, qwen):
        assert spec["tlsConfig"]["customCertificateConfig"]["domainName"] == "llm.example.com"
        assert spec["dnsConfig"] == {"hostedZoneId": "Z0123456789ABC"}
        assert spec["worker"]["requestLimits"]["maxConcurrentRequests"] == 32
        assert spec["worker"]["probes"]["readinessProbe"]["timeoutSeconds"] == 5
        assert spec["loadBalancer"]["idleTimeoutSeconds"] == 900
        assert spec["maxDeployTimeInSeconds"] == 5400
        assert spec["modelCacheConfig"] == {"imageCache": {"enabled": True}}
        assert spec["tags"] == [{"name": "team", "value": "ml"}]
    assert "kvCacheSpec" not in qwen  # the entry's empty map turns the top-level one off
    assert qwen[ROUTING_FIELD]["routingStrategy"] == "prefixaware"
    assert qwen["endpointName"] == ""
    assert qwen["modelSourceConfig"]["prefetchEnabled"] is True
    assert qwen["worker"]["modelVolumeMount"] == {"name": "weights", "mountPath": "/models"}
    assert "instanceType" not in qwen and "nodeAffinity" in qwen


def test_the_custom_resources_replace_on_a_routing_change() -> None:
    _, crs = run()
    for cr in crs:
        assert cr.replace_on_changes == (f"spec.{ROUTING_FIELD}",)


def test_the_plan_headline_shows_the_operator_features() -> None:
    _, crs = run()
    resources = [PlannedResource(cr.type, cr.name, None, 1, cr.inputs, True) for cr in crs]
    lines = headline(
        "dev", {"aws:region": "us-east-1"}, resources, lambda env, releases: (None, None)
    )
    text = "\n".join(lines)
    assert "endpoint llama-kv (inference): vllm 0.27.1" in text
    assert "ml.g5.12xlarge|ml.g5.24xlarge x 1" in text
    assert "routing kvaware (adding or removing it replaces the endpoint)" in text
    assert "KV cache CPU+tieredstorage" in text
    assert "SageMaker endpoint off" in text and "prefetch" in text
    assert "ml.g5.12xlarge (node affinity) x 1" in text
