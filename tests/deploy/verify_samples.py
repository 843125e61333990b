"""Realistic samples for `mlcc verify`: stack configs, InferenceEndpointConfigs, pods, logs.

The logs in `logs/` follow the formats the engines print (docs/verify.md): vLLM 0.27.1 and
0.34.0, SGLang 0.5.17 (`ServerArgs(...)`) and 0.5.23 (a dict), padded with the neighbouring
lines a real start prints so that the parsers must pick the right one. They were written from
those formats, not captured from a GPU run.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from mlcc.config import stack as config
from mlcc.deploy.expectation import Expectation, expectation_for
from mlcc.manifest import workload

IMAGE = (
    "123456789012.dkr.ecr.us-east-1.amazonaws.com/hp-vllm@sha256:"
    "4b1e0c5d9f3a2b7c8e6d5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c"
)
SIDECAR_IMAGE = "public.ecr.aws/nginx/nginx:1.27"
TARGET = "meta-llama/Llama-3.1-8B-Instruct"
EAGLE3_DRAFT = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"
LOGS = Path(__file__).parent / "logs"


def stack_values(**overrides: str | None) -> dict[str, str]:
    values: dict[str, str | None] = {
        "hp:engine": "vllm",
        "hp:model": TARGET,
        "hp:image": IMAGE,
        "hp:namespace": "inference",
        "hp:speculativeAlgorithm": "eagle3",
        "hp:speculativeModel": EAGLE3_DRAFT,
        "hp:speculativeNumTokens": "5",
        "aws:region": "us-east-1",
        "aws-native:region": "us-east-1",
    }
    values.update({(k if ":" in k else f"hp:{k}"): v for k, v in overrides.items()})
    return {k: v for k, v in values.items() if v is not None}


def stack_config(**overrides: str | None) -> config.StackConfig:
    return config.parse(stack_values(**overrides), stack="dev").config


def expectation(**overrides: str | None) -> Expectation:
    return expectation_for(stack_config(**overrides).primary)


def rendered_env(**overrides: str | None) -> list[dict[str, object]]:
    """The env the endpoint component renders for this stack (both engines' sets)."""
    cfg = stack_config(**overrides)
    return workload.environment(workload.from_endpoint(cfg, cfg.primary), cfg.primary.speculative)


def stack_file(draft: str = EAGLE3_DRAFT, extra: str = "") -> str:
    """Pulumi.dev.yaml of a one-endpoint vLLM eagle3 stack, with `extra` lines appended."""
    return (
        "config:\n  aws:region: us-east-1\n  aws-native:region: us-east-1\n"
        f"  hp:engine: vllm\n  hp:model: {TARGET}\n  hp:image: {IMAGE}\n"
        "  hp:namespace: inference\n  hp:speculativeAlgorithm: eagle3\n"
        f"  hp:speculativeModel: {draft}\n  hp:speculativeNumTokens: 5\n{extra}"
    )


ENDPOINT_ARN = "arn:aws:sagemaker:us-east-2:123456789012:endpoint/hp-dev"


def endpoint(
    env: list[dict[str, object]],
    *,
    state: str | None = "DeploymentComplete",
    selector: str | None = "app=hp-dev",
    conditions: list[dict[str, str]] | None = None,
    registration: str | None = None,
) -> dict[str, Any]:
    """The endpoint as the operator reports it. Its SageMaker endpoint registration (the
    SageMakerEndpointRegistration CRD's states) follows the deployment: CreationCompleted once
    the state is DeploymentComplete, unless `registration` says otherwise ("" for none yet)."""
    status: dict[str, Any] = {"replicas": 1, "observedGeneration": 2}
    if state:
        status["state"] = state
    if registration is None and state == "DeploymentComplete":
        registration = "CreationCompleted"
    if registration:
        status["endpoints"] = {"sagemaker": {"state": registration, "endpointArn": ENDPOINT_ARN}}
    if selector:
        status["selector"] = selector
    if conditions:
        status["conditions"] = conditions
    return {
        "apiVersion": "inference.sagemaker.aws.amazon.com/v1",
        "kind": "InferenceEndpointConfig",
        "metadata": {"name": "hp-dev", "namespace": "inference", "generation": 2},
        "spec": {
            "modelName": "hp-dev",
            "endpointName": "hp-dev",
            "instanceType": "ml.g5.12xlarge",
            "replicas": 1,
            "invocationEndpoint": "v1/chat/completions",
            "modelSourceConfig": {
                "modelSourceType": "huggingface",
                "huggingFaceModel": {"modelId": TARGET},
                "prefetchEnabled": False,
            },
            "worker": {
                "image": IMAGE,
                "modelInvocationPort": {"containerPort": 8080, "name": "http"},
                "modelVolumeMount": {"name": "model-weights", "mountPath": "/opt/ml/model"},
                "resources": {"limits": {"nvidia.com/gpu": "4"}},
                "environmentVariables": env,
            },
        },
        "status": status,
    }


def pod(name: str, env: list[dict[str, object]], *, phase: str = "Running") -> dict[str, Any]:
    """A model pod as the operator's Deployment creates it: nginx sidecar listed first."""
    return {
        "metadata": {"name": name, "namespace": "inference", "labels": {"app": "hp-dev"}},
        "spec": {
            "containers": [
                {"name": "nginx", "image": SIDECAR_IMAGE, "env": [{"name": "PORT", "value": "80"}]},
                {"name": "model", "image": IMAGE, "env": copy.deepcopy(env)},
            ]
        },
        "status": {"phase": phase},
    }


def with_env(env: list[dict[str, object]], name: str, value: str | None) -> list[dict[str, object]]:
    """`env` with one variable replaced (value None removes it)."""
    changed = [dict(e) for e in env if e["name"] != name]
    if value is not None:
        changed.insert(0, {"name": name, "value": value})
    return changed


def read_log(name: str) -> str:
    return (LOGS / name).read_text(encoding="utf-8")


VLLM_EAGLE3_LOG = read_log("vllm-0.27.1-eagle3.log")

# The 0.27.1 pitfall: a draft whose repo name lacks "eagle3" detected as a plain draft model.
VLLM_DETECTED_AS_DRAFT_MODEL_LOG = VLLM_EAGLE3_LOG.replace(
    "SpeculativeConfig(method='eagle3'", "SpeculativeConfig(method='draft_model'"
).replace("SpecDecoding", "(no metrics)")

# The env never reached the engine: it started without speculation.
VLLM_SPECULATION_OFF_LOG = read_log("vllm-0.27.1-speculation-off.log")

VLLM_NO_ACCEPTANCE_LOG = VLLM_EAGLE3_LOG.replace(
    "Mean acceptance length: 2.41", "Mean acceptance length: 1.00"
).replace("Mean acceptance length: 2.87", "Mean acceptance length: 1.00")

VLLM_STILL_LOADING_LOG = read_log("vllm-0.27.1-still-loading.log")

SGLANG_0_5_23_EAGLE3_LOG = read_log("sglang-0.5.23-eagle3.log")

SGLANG_0_5_17_EAGLE3_LOG = read_log("sglang-0.5.17-eagle3.log")

SGLANG_SPECULATION_OFF_LOG = read_log("sglang-0.5.17-speculation-off.log")

# EAGLE given an EAGLE-3 head: starts, serves, accepts nothing.
SGLANG_EAGLE_WITH_EAGLE3_HEAD_LOG = SGLANG_0_5_23_EAGLE3_LOG.replace(
    "'speculative_algorithm': 'EAGLE3'", "'speculative_algorithm': 'EAGLE'"
).replace("accept len: 3.12, accept rate: 0.52", "accept len: 1.00, accept rate: 0.00")

# mtp on SGLang: we send NEXTN; server_args shows it after SGLang rewrote it to EAGLE.
SGLANG_NEXTN_LOG = read_log("sglang-0.5.23-nextn-deepseek.log")
