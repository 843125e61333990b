"""Several endpoints through the real program: CRs, shared images, baseline twins, autoscaling."""

from __future__ import annotations

import json

from crd_schema import assert_valid_manifest
from program_runs import CR_TYPE, run_main

ENTRIES = [
    {
        "name": "llama-eagle3",
        "speculativeAlgorithm": "eagle3",
        "speculativeModel": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
        "baseline": True,
        "autoscaling": {"minReplicas": 1, "maxReplicas": 2},
    },
    {
        "name": "qwen-ngram",
        "engine": "sglang",
        "model": "Qwen/Qwen3-8B",
        "speculativeAlgorithm": "ngram",
    },
]
GROUPS = [{"name": "g5", "instanceType": "ml.g5.12xlarge", "instanceCount": 4}]


def run() -> dict[str, dict[str, object]]:
    result = run_main({"endpoints": json.dumps(ENTRIES), "instanceGroups": json.dumps(GROUPS)})
    crs = {r.inputs["metadata"]["name"]: r for r in result.of_type(CR_TYPE)}
    assert sorted(crs) == ["llama-eagle3", "llama-eagle3-baseline", "qwen-ngram"]
    for cr in crs.values():
        assert_valid_manifest(cr.inputs, "inferenceendpointconfigs.yaml")
    kinds = ("hp:index:EndpointNamespace", "hp:index:InferenceEndpoint", "hp:index:ServeImage")
    names = sorted((r.type, r.name) for r in result.registrations if r.type in kinds)
    assert names == [
        ("hp:index:EndpointNamespace", "namespace"),
        ("hp:index:InferenceEndpoint", "llama-eagle3"),
        ("hp:index:InferenceEndpoint", "llama-eagle3-baseline"),
        ("hp:index:InferenceEndpoint", "qwen-ngram"),
        ("hp:index:ServeImage", "image"),
        ("hp:index:ServeImage", "image-sglang"),
    ]
    return {name: cr.inputs for name, cr in crs.items()}


def env_of(cr: dict[str, object]) -> dict[str, str]:
    spec = cr["spec"]
    assert isinstance(spec, dict)
    return {e["name"]: e.get("value", "") for e in spec["worker"]["environmentVariables"]}


def test_each_endpoint_gets_its_engine_image_and_speculation() -> None:
    crs = run()
    llama, twin, qwen = crs["llama-eagle3"], crs["llama-eagle3-baseline"], crs["qwen-ngram"]
    assert env_of(llama)["HP_SPECULATIVE_ALGORITHM"] == "eagle3"
    assert not any("SPECULATIVE" in name for name in env_of(twin))
    assert env_of(qwen)["SM_SGLANG_SPECULATIVE_ALGORITHM"] == "NGRAM"
    assert env_of(qwen)["SM_SGLANG_MODEL_PATH"] == "Qwen/Qwen3-8B"
    images = {name: cr["spec"]["worker"]["image"] for name, cr in crs.items()}  # type: ignore[index]
    assert images["llama-eagle3"] == images["llama-eagle3-baseline"] != images["qwen-ngram"]
    for key in ("instanceType", "replicas", "modelSourceConfig"):
        assert llama["spec"][key] == twin["spec"][key]  # type: ignore[index]


def test_autoscaling_and_metrics_reach_the_custom_resources() -> None:
    crs = run()
    scaling = crs["llama-eagle3"]["spec"]["autoScalingSpec"]  # type: ignore[index]
    assert (scaling["minReplicaCount"], scaling["maxReplicaCount"]) == (1, 2)
    twin = crs["llama-eagle3-baseline"]["spec"]["autoScalingSpec"]  # type: ignore[index]
    assert (twin["minReplicaCount"], twin["maxReplicaCount"]) == (1, 2)
    dimensions = twin["cloudWatchTrigger"]["dimensions"]
    assert {"name": "EndpointName", "value": "llama-eagle3-baseline"} in dimensions
    assert "autoScalingSpec" not in crs["qwen-ngram"]["spec"]  # type: ignore[operator]
    for cr in crs.values():
        assert cr["spec"]["metrics"]["modelMetrics"] == {"path": "/metrics", "port": 8080}  # type: ignore[index]
