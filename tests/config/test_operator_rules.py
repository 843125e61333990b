"""What preview refuses or warns about in the operator keys, naming the key (pure parsing).

The combinations come from the engines' and the operator's public trackers; each rule's source
is cited beside it in mlcc/config/operator/rules.py.
"""

from __future__ import annotations

import json

import pytest

from mlcc.config.stack import ConfigError, parse

BASE = {
    "hp:model": "meta-llama/Llama-3.1-8B-Instruct",
    "aws:region": "us-east-1",
    "aws-native:region": "us-east-1",
    "hp:clusterName": "existing",
}
EAGLE3 = {
    "hp:speculativeAlgorithm": "eagle3",
    "hp:speculativeModel": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
}
ACM = "arn:aws:acm:us-east-1:123456789012:certificate/0a1b2c3d-aaaa-bbbb-cccc-0123456789ab"
KV = {"hp:kvCache": json.dumps({"l1": True})}
PD = {"hp:pdSpec": json.dumps({"prefillSpec": {"replicas": 1}, "decodingSpec": {"replicas": 1}})}
P5 = {"hp:instanceType": "ml.p5.48xlarge"}


def values(**keys: object) -> dict[str, str]:
    return {f"hp:{k}": v if isinstance(v, str) else json.dumps(v) for k, v in keys.items()}


def errors(given: dict[str, str]) -> list[str]:
    with pytest.raises(ConfigError) as raised:
        parse({**BASE, **given}, stack="dev")
    return [str(p) for p in raised.value.problems]


def warnings(given: dict[str, str]) -> list[str]:
    return [str(p) for p in parse({**BASE, **given}, stack="dev").warnings]


REFUSED = [
    ({"hp:engine": "sglang", **KV}, "hp:kvCache: the operator accepts KV caching for vLLM only"),
    (values(kvCache={"l2Backend": "redis", "l2Url": "redis://cache:6379"}),
     "hp:kvCache.l2Backend: redis is ignored by operator 3.2-3.7"),
    (values(kvCache={"l2Backend": "redis"}), "hp:kvCache.l2Url: is required with l2Backend"),
    (values(kvCache={"l1": False}), "hp:kvCache: turns every tier off"),
    (values(env={"LMCACHE_REMOTE_URL": "redis://cache:6379"}),
     "hp:env.LMCACHE_REMOTE_URL: the operator strips LMCACHE_* variables"),
    ({**KV, **values(env={"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"})},
     "hp:env.PYTORCH_CUDA_ALLOC_CONF: vLLM refuses expandable_segments:True with a KV connector"),
    ({**P5, **PD, **values(env={"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"})},
     "hp:env.PYTORCH_CUDA_ALLOC_CONF: vLLM refuses"),
    (values(engineArgs={"kv-offloading-size": 64},
            env={"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}),
     "hp:env.PYTORCH_CUDA_ALLOC_CONF: vLLM refuses"),
    (values(env={"SM_VLLM_MAX_NUM_SEQS": "8"}),
     "hp:env.SM_VLLM_MAX_NUM_SEQS: is set by the program"),
    (values(env={"HF_TOKEN": "hf_x"}), "hp:env.HF_TOKEN: looks like a secret"),
    (values(env={"VLLM_API_KEY": "k"}), "hp:env.VLLM_API_KEY: looks like a secret"),
    (values(env={"HF_HOME": "/cache"}), "hp:env.HF_HOME: is set by the program"),
    ({"hp:routing": "kvaware", "hp:invocationPath": "v1/completions"},
     "hp:routing: kvaware routes by the KV cache; set hp:kvCache"),
    ({"hp:routing": "kvaware", **KV}, "hp:routing: kvaware cannot route the chat path"),
    ({"hp:routing": "fastest"}, "hp:routing: must be one of prefixaware, kvaware"),
    (values(instanceTypes=["ml.g5.12xlarge", "ml.g5.48xlarge"]),
     "hp:instanceTypes[1]: ml.g5.48xlarge (8 GPUs of 22888 MiB) differs from ml.g5.12xlarge"),
    (values(instanceTypes=["ml.g5.12xlarge", "ml.g6e.12xlarge"]),
     "hp:instanceTypes[1]: ml.g6e.12xlarge (4 GPUs of 45776 MiB) differs"),
    (values(instanceTypes=["ml.g5.12xlarge", "ml.p3.8xlarge"]),
     "hp:instanceTypes[1]: 'ml.p3.8xlarge' is not a HyperPod instance type"),
    (values(instanceTypes=["ml.g5.12xlarge", "ml.g4dn.12xlarge"]),
     "hp:instanceTypes[1]: ml.g4dn.12xlarge (4 GPUs of 16384 MiB) differs"),
    ({"hp:instanceType": "ml.g6e.12xlarge", **values(instanceTypes=["ml.g6e.12xlarge"])},
     "hp:instanceTypes: is exclusive with hp:instanceType"),
    ({**P5, **PD, **EAGLE3}, "hp:pdSpec: is not offered with speculative decoding"),
    ({**P5, **PD, "hp:engine": "sglang", "hp:experimental": "true"},
     "hp:pdSpec: the operator's disaggregated prefill/decode runs vLLM only"),
    ({**PD, "hp:instanceType": "ml.g5.12xlarge"},
     "hp:pdSpec: prefill and decode pods move the KV cache over EFA; ml.g5.12xlarge has none"),
    ({**P5, **PD, "hp:operatorVersion": "3.1"}, "hp:pdSpec: needs operator 3.2 or newer"),
    (values(modelCache={"imageCache": True}, operatorVersion="3.2"),
     "hp:modelCache: needs operator 3.3 or newer"),
    (values(loadBalancer={"idleTimeoutSeconds": 300}, operatorVersion="3.2"),
     "hp:loadBalancer.idleTimeoutSeconds: needs operator 3.3 or newer"),
    (values(requestLimits={"maxConcurrentRequests": 8}, operatorVersion="3.0"),
     "hp:requestLimits: needs operator 3.1 or newer"),
    ({"hp:operatorVersion": "3.0"}, "hp:operatorVersion: every endpoint uses the Hugging Face"),
    ({"hp:operatorVersion": "latest"}, "hp:operatorVersion: must be major.minor"),
    (values(workerCommand=["python3", "-m", "vllm.entrypoints.openai.api_server"]),
     "hp:workerCommand: is refused: a container command replaces the serve wrapper"),
    (values(workerArgs=["--speculative-config", "{}"]),
     "hp:workerArgs[0]: --speculative-config: speculative settings go in the hp:speculative*"),
    (values(workerArgs=["--port", "9000"]), "hp:workerArgs[0]: --port: is set by the program"),
    (values(workerArgs=["64"]), "hp:workerArgs[0]: expected a --flag, got '64'"),
    ({"hp:dnsHostedZoneId": "Z0123456789ABC"}, "hp:dnsHostedZoneId: needs your own certificate"),
    ({"hp:dnsHostedZoneId": "zone-1"}, "hp:dnsHostedZoneId: must be a zone id Z..."),
    (values(tls={"acmCertificateArn": ACM}),
     "hp:tls: acmCertificateArn and domainName go together"),
    (values(tls={"acmCertificateArn": "arn:aws:iam::1:role/x", "domainName": "a.example.com"}),
     "hp:tls.acmCertificateArn: must be an ACM certificate ARN"),
    (values(tls={"acmCertificateArn": ACM, "domainName": "*.example.com"}),
     "hp:tls.domainName: must be a lowercase domain name, not a wildcard"),
    (values(requestLimits={"overflowStatusCode": 200}),
     "hp:requestLimits.overflowStatusCode: must be a whole number from 400 to 599"),
    (values(requestLimits={"maxConcurrency": 8}),
     "hp:requestLimits.maxConcurrency: is not a field"),
    (values(probes={"startup": {"failureThreshold": 0}}),
     "hp:probes.startup.failureThreshold: must be a whole number of at least 1"),
    (values(probes={"warmup": {}}), "hp:probes.warmup: is not a field of hp:probes"),
    ({"hp:probes": "none"}, "hp:probes: must be a map {startup, readiness, liveness}"),
    (values(loadBalancer={"idleTimeoutSeconds": 5000}),
     "hp:loadBalancer.idleTimeoutSeconds: must be a whole number from 1 to 4000"),
    (values(resources={"limits": {"nvidia.com/gpu": 8}}),
     "hp:resources.limits.nvidia.com/gpu: is hp:gpuCount's"),
    (values(metrics={"enabled": False}, autoscaling={"minReplicas": 1, "maxReplicas": 2}),
     "hp:metrics.enabled: autoscaling scales on the engine's metrics"),
    ({"hp:modelVersion": "v1"}, "hp:modelVersion: must be major.minor.patch"),
    (values(endpointTags={"aws:reserved": "x"}), "hp:endpointTags.aws:reserved: "),
    ({"hp:sagemakerEndpoint": "false", **values(autoscaling={"maxReplicas": 2})},
     "hp:sagemakerEndpoint: hp:autoscaling on invocations counts the SageMaker endpoint's"),
    (values(autoscaling={"cloudWatchTrigger": {"metricName": "X"}}),
     "hp:autoscaling.cloudWatchTrigger: must be a map with at least metricName and namespace"),
    (values(autoscaling={"cloudWatchTrigger": {"metricName": "X", "namespace": "Y",
                                               "metricType": "Sum"}}),
     "hp:autoscaling.cloudWatchTrigger.metricType: must be Value or Average"),
    (values(modelCache={"hostPath": "/mnt"}), "hp:modelCache.hostPath: is where weightsCache"),
    (values(dataCapture={"tier": 1}), "hp:dataCapture.tier: is not a field of hp:dataCapture"),
]  # fmt: skip


@pytest.mark.parametrize(("given", "message"), REFUSED)
def test_refused_naming_the_key(given: dict[str, str], message: str) -> None:
    found = errors(given)
    assert any(line.startswith(message) for line in found), found


WARNED = [
    ({**KV, **EAGLE3}, "hp:kvCache: KV cache offload with eagle3 on vLLM has open reports"),
    ({"hp:endpointName": "a" * 51}, "hp:endpointName: '" + "a" * 51 + "' is longer than 50"),
    ({"hp:engine": "sglang", **values(probes={"readiness": {"timeoutSeconds": 1}})},
     "hp:probes.readiness.timeoutSeconds: SGLang's /health takes about 1 s"),
    ({"hp:engine": "sglang", "hp:probes": "operator"},
     "hp:probes: operator keeps the operator's own readiness probe, which waits 1 s, and "
     "SGLang's /health takes about 1 s"),
    ({"hp:initialReplicaCount": "2"}, "hp:initialReplicaCount: has no effect since operator 3.2"),
    ({"hp:engine": "sglang", **EAGLE3, **values(engineArgs={"enable-hierarchical-cache": True})},
     "hp:engineArgs.enable-hierarchical-cache: KV cache offload with eagle3 on SGLang"),
    ({**EAGLE3, **values(engineArgs={"kv-offloading-size": 64})},
     "hp:engineArgs.kv-offloading-size: KV cache offload with eagle3 on vLLM has open reports"),
]  # fmt: skip


@pytest.mark.parametrize(("given", "message"), WARNED)
def test_warned_naming_the_key(given: dict[str, str], message: str) -> None:
    found = warnings(given)
    assert any(line.startswith(message) for line in found), found


def test_the_speculative_warning_names_the_open_reports() -> None:
    (warning,) = [w for w in warnings({**KV, **EAGLE3}) if w.startswith("hp:kvCache")]
    for report in ("LMCache/LMCache#3388", "vllm-project/vllm#46971", "vllm-project/vllm#52735"):
        assert report in warning


def test_experimental_allows_disaggregation_with_speculation_on_efa() -> None:
    parsed = parse({**BASE, **P5, **PD, **EAGLE3, "hp:experimental": "true"}, stack="dev")
    (endpoint,) = parsed.config.endpoints
    assert endpoint.operator.pd_spec["decodingSpec"] == {"replicas": 1}


def test_cumem_allocator_lets_expandable_segments_pass() -> None:
    allocator = values(env={"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"})
    cumem = values(engineArgs={"enable-cumem-allocator": True})
    parse({**BASE, **KV, **allocator, **cumem}, stack="dev")


def test_an_entry_wins_and_its_problem_names_the_entry() -> None:
    entries = [
        {"name": "chat", "routing": "prefixaware"},
        {"name": "qwen", "engine": "sglang", "model": "Qwen/Qwen3-8B", "kvCache": {"l1": True}},
    ]
    found = errors({"hp:endpoints": json.dumps(entries), "hp:routing": "session"})
    assert found == [
        "hp:endpoints[1].kvCache: the operator accepts KV caching for vLLM only; use hp:engine vllm"
    ]
    config = parse(
        {**BASE, "hp:endpoints": json.dumps(entries[:1]), "hp:routing": "session"}, stack="dev"
    ).config
    assert config.endpoints[0].operator.routing == "prefixaware"


def test_an_entry_type_wins_over_a_top_level_list() -> None:
    entries = [{"name": "a"}, {"name": "b", "instanceType": "ml.g6e.12xlarge"}]
    given = {"hp:endpoints": json.dumps(entries), **values(instanceTypes=["ml.g5.12xlarge"])}
    first, second = parse({**BASE, **given}, stack="dev").config.endpoints
    assert (first.instance_type, first.operator.instance_types) == (
        "ml.g5.12xlarge",
        ("ml.g5.12xlarge",),
    )
    assert (second.instance_type, second.operator.instance_types) == ("ml.g6e.12xlarge", ())


def test_every_problem_is_one_line_and_no_input_raises_anything_else() -> None:
    for given, _message in REFUSED:
        for line in errors(given):
            assert "\n" not in line and line.startswith("hp:")


LMCACHE = {"kv_connector": "LMCacheConnectorV1", "kv_role": "kv_both"}
LMCACHE_JSON = json.dumps(LMCACHE)
OPERATOR_CONNECTOR = "and hp:kvCache has the operator configure one: it adds its own"


@pytest.mark.parametrize(
    ("given", "key"),
    [
        (values(engineArgs={"kv-transfer-config": LMCACHE}), "hp:engineArgs.kv-transfer-config"),
        (values(engineArgs={"kv_transfer_config": LMCACHE}), "hp:engineArgs.kv_transfer_config"),
        (values(engineArgs={"KV_TRANSFER_CONFIG": LMCACHE}), "hp:engineArgs.KV_TRANSFER_CONFIG"),
        (
            values(engineArgs={"kv-transfer-config.kv_connector": "LMCacheConnectorV1"}),
            "hp:engineArgs.kv-transfer-config.kv_connector",
        ),
        (values(workerArgs=["--kv-transfer-config", json.dumps(LMCACHE)]), "hp:workerArgs[0]"),
        (
            values(workerArgs=["--max-num-seqs", "8", f"--kv_transfer_config={LMCACHE_JSON}"]),
            "hp:workerArgs[2]",
        ),
    ],
)
def test_a_users_kv_transfer_config_with_kv_cache_is_refused_in_every_spelling(
    given: dict[str, str], key: str
) -> None:
    found = errors({**KV, **given})
    assert found == [
        f"{key}: sets vLLM's KV connector, {OPERATOR_CONNECTOR} --kv-transfer-config and vLLM "
        "keeps only one of the two; remove this flag or hp:kvCache"
    ]
    parse({**BASE, **given}, stack="dev")  # without hp:kvCache the user's connector is the one


def test_an_abbreviated_connector_flag_is_one_error() -> None:
    found = errors({**KV, **values(workerArgs=["--kv-transfer", json.dumps(LMCACHE)])})
    assert found == [
        "hp:workerArgs[0]: --kv-transfer: abbreviates --kv-transfer-config; spell the flag out "
        "in full"
    ]


def test_vllms_own_offload_with_kv_cache_is_refused_and_an_entry_names_both_keys() -> None:
    (line,) = errors({**KV, **values(engineArgs={"kv-offloading-size": 16})})
    assert line.startswith("hp:engineArgs.kv-offloading-size: sets vLLM's KV connector")
    assert "vLLM replaces the operator's connector with its own offloading one" in line
    entries = [
        {"name": "own", "kvCache": {"l1": True}, "engineArgs": {"kv-transfer-config": LMCACHE}},
        {"name": "inherits", "workerArgs": ["--kv-transfer-config", json.dumps(LMCACHE)]},
    ]
    found = errors({**KV, "hp:endpoints": json.dumps(entries)})
    assert [line.split(": sets")[0] for line in found] == [
        "hp:endpoints[0].engineArgs.kv-transfer-config",
        "hp:endpoints[1].workerArgs[0]",
    ]
    assert "remove this flag or hp:endpoints[0].kvCache" in found[0]
    assert "remove this flag or hp:kvCache" in found[1]
