"""The InferenceEndpoint component under Pulumi's mock runtime (preview=False, no references)."""

from __future__ import annotations

import json

import pulumi
import pytest
from crd_schema import assert_valid_manifest
from env_contract import DRAFT, ENGINE_SETTINGS, SPECULATIVE_ENV
from program_runs import CR_TYPE, IMAGE, run_endpoint, run_main

from mlcc.components.endpoint import InferenceEndpoint, InferenceEndpointArgs
from mlcc.components.namespace import EndpointNamespace, EndpointNamespaceArgs
from mlcc.config.stack_keys import Secret
from mlcc.manifest.workload import Workload
from mlcc.plan import mocks as offline
from mlcc.serving.engines import Engine
from mlcc.serving.speculative import ALGORITHMS, SpeculativeSpec

TOKEN = "hf_thisIsTheSecretToken"
WORKLOAD = Workload(
    endpoint_name="hp-dev",
    namespace="inference",
    model_id="meta-llama/Llama-3.1-8B-Instruct",
    instance_type="ml.g5.12xlarge",
    gpu_count=4,
    replicas=2,
    engine=Engine.SGLANG,
    hf_token_secret="hp-dev-hf-token",
)
TOKEN_SECRET = Secret(TOKEN)
SPEC = SpeculativeSpec("eagle3", "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B", 3)


def build(
    workload: Workload = WORKLOAD,
    speculative: pulumi.Input[SpeculativeSpec | None] = SPEC,
    token: Secret | None = TOKEN_SECRET,
) -> offline.OfflineRun:
    def program() -> None:
        namespace = EndpointNamespace(
            "namespace",
            EndpointNamespaceArgs(workload.namespace, token, workload.hf_token_secret),
        )
        InferenceEndpoint(
            "endpoint",
            InferenceEndpointArgs(
                workload=workload,
                image=IMAGE,
                speculative=speculative,
                depends_on=namespace.resources,
            ),
        )

    return offline.run(program, config={})


def test_registers_namespace_and_secret_once_and_the_config_per_endpoint() -> None:
    run = build()
    assert sorted((r.type, r.name) for r in run.registrations) == sorted(
        [
            ("hp:index:EndpointNamespace", "namespace"),
            ("kubernetes:core/v1:Namespace", "endpoint-namespace"),
            ("kubernetes:core/v1:Secret", "endpoint-hf-token"),
            ("hp:index:InferenceEndpoint", "endpoint"),
            (CR_TYPE, "endpoint"),
        ]
    )
    namespace = run.one("hp:index:EndpointNamespace")
    endpoint = run.one("hp:index:InferenceEndpoint")
    assert run.one("kubernetes:core/v1:Secret").parent == namespace.urn
    assert run.one(CR_TYPE).parent == endpoint.urn


def test_the_custom_resource_has_exactly_this_shape() -> None:
    cr = build().one(CR_TYPE).inputs
    assert cr == {
        "apiVersion": "inference.sagemaker.aws.amazon.com/v1",
        "kind": "InferenceEndpointConfig",
        "metadata": {
            "name": "hp-dev",
            "namespace": "inference",
            "labels": {
                "app.kubernetes.io/name": "hp-dev",
                "app.kubernetes.io/managed-by": "pulumi",
                "hp.mlcc/engine": "sglang",
                "hp.mlcc/engine-version": "0.5.17",
            },
            # pulumi-kubernetes's await: returns once the operator wrote a state (docs/deploy.md)
            "annotations": {"pulumi.com/waitFor": "jsonpath={.status.state}"},
        },
        "spec": {
            "modelName": "hp-dev",
            "endpointName": "hp-dev",
            "instanceType": "ml.g5.12xlarge",
            "replicas": 2,
            "maxDeployTimeInSeconds": 7200,  # hp:deployTimeoutMinutes' default
            "invocationEndpoint": "v1/chat/completions",
            "modelSourceConfig": {
                "modelSourceType": "huggingface",
                "huggingFaceModel": {
                    "modelId": "meta-llama/Llama-3.1-8B-Instruct",
                    "tokenSecretRef": {"name": "hp-dev-hf-token", "key": "token"},
                },
                "prefetchEnabled": False,
            },
            "loadBalancer": {"healthCheckPath": "/health"},
            "worker": {
                "image": IMAGE,
                "resources": {
                    "limits": {"nvidia.com/gpu": "4"},
                    "requests": {"nvidia.com/gpu": "4"},
                },
                "modelInvocationPort": {"containerPort": 8080, "name": "http"},
                "modelVolumeMount": {"name": "model-weights", "mountPath": "/opt/ml/model"},
                "environmentVariables": [
                    {"name": "HP_SPECULATIVE_ALGORITHM", "value": "eagle3"},
                    {
                        "name": "SM_VLLM_SPECULATIVE_CONFIG",
                        "value": '{"method":"eagle3","model":"lmsys/sglang-EAGLE3-LLaMA3.1-'
                        'Instruct-8B","num_speculative_tokens":3}',
                    },
                    {"name": "SM_SGLANG_SPECULATIVE_ALGORITHM", "value": "EAGLE3"},
                    {
                        "name": "SM_SGLANG_SPECULATIVE_DRAFT_MODEL_PATH",
                        "value": "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B",
                    },
                    {"name": "SM_SGLANG_SPECULATIVE_NUM_STEPS", "value": "3"},
                    {"name": "SM_SGLANG_SPECULATIVE_EAGLE_TOPK", "value": "1"},
                    {"name": "SM_SGLANG_SPECULATIVE_NUM_DRAFT_TOKENS", "value": "4"},
                    {"name": "SM_SGLANG_MODEL_PATH", "value": "meta-llama/Llama-3.1-8B-Instruct"},
                    {
                        "name": "SM_SGLANG_SERVED_MODEL_NAME",
                        "value": "meta-llama/Llama-3.1-8B-Instruct",
                    },
                    {"name": "SM_SGLANG_TP_SIZE", "value": "4"},
                    {"name": "SM_SGLANG_ENABLE_METRICS", "value": "true"},
                    {
                        "name": "HF_TOKEN",
                        "valueFrom": {"secretKeyRef": {"name": "hp-dev-hf-token", "key": "token"}},
                    },
                ],
                # the program's probes: SGLang's /health on the wrapper's port, a 5 s timeout,
                # the startup probe for the whole deploy time limit (7200 s = 720 x 10 s)
                "probes": {
                    "startupProbe": {
                        "httpGet": {"path": "/health", "port": 8080},
                        "periodSeconds": 10,
                        "timeoutSeconds": 5,
                        "failureThreshold": 720,
                    },
                    "readinessProbe": {
                        "httpGet": {"path": "/health", "port": 8080},
                        "periodSeconds": 10,
                        "timeoutSeconds": 5,
                    },
                    "livenessProbe": {
                        "httpGet": {"path": "/health", "port": 8080},
                        "periodSeconds": 10,
                        "timeoutSeconds": 5,
                        "failureThreshold": 3,
                    },
                },
            },
            "metrics": {
                "enabled": True,
                "metricsScrapeIntervalSeconds": 15,
                "modelMetrics": {"path": "/metrics", "port": 8080},
            },
        },
    }


def test_the_token_is_secret_and_appears_nowhere_else() -> None:
    run = build()
    secret = run.one("kubernetes:core/v1:Secret")
    assert secret.inputs["stringData"] == {"token": TOKEN}
    assert TOKEN not in json.dumps(secret.redacted_inputs)
    others = [r for r in run.registrations if r is not secret]
    assert all(TOKEN not in json.dumps(r.inputs) for r in others)


def test_the_default_namespace_is_not_managed_and_no_token_no_secret() -> None:
    workload = Workload(**{**WORKLOAD.__dict__, "namespace": "default", "hf_token_secret": None})
    run = build(workload, token=None)
    assert sorted(r.type for r in run.registrations) == sorted(
        ["hp:index:EndpointNamespace", "hp:index:InferenceEndpoint", CR_TYPE]
    )
    env_names = [
        e["name"] for e in run.one(CR_TYPE).inputs["spec"]["worker"]["environmentVariables"]
    ]
    assert "HF_TOKEN" not in env_names


def test_speculative_settings_may_arrive_as_an_output() -> None:
    run = build(speculative=pulumi.Output.from_input(SpeculativeSpec("ngram", None, 4)))
    env = run.one(CR_TYPE).inputs["spec"]["worker"]["environmentVariables"]
    assert {"name": "SM_SGLANG_SPECULATIVE_ALGORITHM", "value": "NGRAM"} in env


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
@pytest.mark.parametrize("algorithm", sorted(SPECULATIVE_ENV))
def test_every_algorithm_and_engine_renders_a_valid_cr_with_the_contract_env(
    algorithm: str, engine: str
) -> None:
    run = run_endpoint(
        {
            "engine": engine,
            "speculativeAlgorithm": algorithm,
            "speculativeModel": DRAFT if ALGORITHMS[algorithm].needs_draft else None,
        }
    )
    manifest = run.one(CR_TYPE).inputs
    assert_valid_manifest(manifest, "inferenceendpointconfigs.yaml")
    env = {e["name"]: e["value"] for e in manifest["spec"]["worker"]["environmentVariables"]}
    assert env == {
        "HP_SPECULATIVE_ALGORITHM": algorithm,
        **SPECULATIVE_ENV[algorithm],
        **ENGINE_SETTINGS[engine],
    }


def test_changing_only_speculative_keys_changes_only_the_cr_spec() -> None:
    before = run_main({"image": IMAGE})
    after = run_main(
        {
            "image": IMAGE,
            "speculativeAlgorithm": "eagle2",
            "speculativeModel": "org/eagle-head",
            "speculativeNumTokens": "4",
            "speculativeEagleTopk": "8",
        }
    )
    # Registration order is not deterministic (resources register as their inputs resolve).
    before_inputs = {(r.type, r.name): r.inputs for r in before.registrations}
    after_inputs = {(r.type, r.name): r.inputs for r in after.registrations}
    assert before_inputs.keys() == after_inputs.keys()
    changed = [key for key in before_inputs if before_inputs[key] != after_inputs[key]]
    assert changed == [(CR_TYPE, "endpoint")]
    cr_before, cr_after = before.one(CR_TYPE).inputs, after.one(CR_TYPE).inputs
    assert cr_before["metadata"] == cr_after["metadata"]  # same object: updated, not replaced
    env_before = cr_before["spec"]["worker"].pop("environmentVariables")
    env_after = cr_after["spec"]["worker"].pop("environmentVariables")
    assert cr_before == cr_after and env_before != env_after


def test_outputs_name_the_endpoint_and_the_verify_commands() -> None:
    outputs = run_main({"image": IMAGE}).outputs
    assert outputs["endpointName"] == "hp-dev"
    assert outputs["namespace"] == "inference"
    assert outputs["speculativeAlgorithm"] == "eagle3"
    assert "grep SPECULATIVE" in outputs["verifyEnvCommand"]
    assert "speculative_config=" in outputs["verifyLogCommand"]
