"""The InferenceEndpointConfig as data: the env contract (docs/images.md) and the real CRD."""

from __future__ import annotations

import jsonschema
import pytest
from crd_schema import assert_valid_manifest, crd_schema, pruned_fields
from manifest_samples import endpoint_manifest

from mlcc.manifest.workload import Workload, endpoint_spec, environment
from mlcc.serving.engines import Engine
from mlcc.serving.speculative import ALGORITHMS, SpeculativeSpec

IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/hp-vllm@sha256:" + "a" * 64


def workload(engine: Engine = Engine.VLLM, **kwargs: object) -> Workload:
    defaults: dict[str, object] = {
        "endpoint_name": "hp-dev",
        "namespace": "inference",
        "model_id": "meta-llama/Llama-3.1-8B-Instruct",
        "instance_type": "ml.g5.12xlarge",
        "gpu_count": 4,
        "replicas": 1,
        "engine": engine,
    }
    return Workload(**{**defaults, **kwargs})  # type: ignore[arg-type]


def manifest(w: Workload, spec: SpeculativeSpec | None) -> dict[str, object]:
    return endpoint_manifest(w, IMAGE, spec)


def env_dict(w: Workload, spec: SpeculativeSpec | None) -> dict[str, object]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in environment(w, spec)}  # type: ignore[misc]


def test_vllm_env_is_exactly_the_contract() -> None:
    spec = SpeculativeSpec("eagle3", "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", 5)
    w = workload(engine_args=(("max-model-len", "8192"),), hf_token_secret="hp-dev-hf-token")
    assert env_dict(w, spec) == {
        "HP_SPECULATIVE_ALGORITHM": "eagle3",
        "SM_VLLM_SPECULATIVE_CONFIG": (
            '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",'
            '"num_speculative_tokens":5}'
        ),
        "SM_SGLANG_SPECULATIVE_ALGORITHM": "EAGLE3",
        "SM_SGLANG_SPECULATIVE_DRAFT_MODEL_PATH": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
        "SM_SGLANG_SPECULATIVE_NUM_STEPS": "5",
        "SM_SGLANG_SPECULATIVE_EAGLE_TOPK": "1",
        "SM_SGLANG_SPECULATIVE_NUM_DRAFT_TOKENS": "6",
        "SM_VLLM_MODEL": "meta-llama/Llama-3.1-8B-Instruct",
        "SM_VLLM_SERVED_MODEL_NAME": "meta-llama/Llama-3.1-8B-Instruct",
        "SM_VLLM_TENSOR_PARALLEL_SIZE": "4",
        "SM_VLLM_MAX_MODEL_LEN": "8192",
        "HF_TOKEN": {"secretKeyRef": {"name": "hp-dev-hf-token", "key": "token"}},
    }


def test_sglang_settings_use_sglang_names() -> None:
    env = env_dict(workload(Engine.SGLANG), None)
    assert env == {
        "SM_SGLANG_MODEL_PATH": "meta-llama/Llama-3.1-8B-Instruct",
        "SM_SGLANG_SERVED_MODEL_NAME": "meta-llama/Llama-3.1-8B-Instruct",
        "SM_SGLANG_TP_SIZE": "4",
        "SM_SGLANG_ENABLE_METRICS": "true",
    }


def test_env_values_are_strings_and_names_unique() -> None:
    env = environment(workload(), SpeculativeSpec("mtp", None, 2))
    names = [e["name"] for e in env]
    assert len(names) == len(set(names))
    assert all(isinstance(e["value"], str) for e in env if "value" in e)


def test_the_token_is_a_reference_never_a_value() -> None:
    spec = endpoint_spec(workload(hf_token_secret="hp-dev-hf-token"), IMAGE, None)
    source = spec["modelSourceConfig"]
    assert source == {
        "modelSourceType": "huggingface",
        "huggingFaceModel": {
            "modelId": "meta-llama/Llama-3.1-8B-Instruct",
            "tokenSecretRef": {"name": "hp-dev-hf-token", "key": "token"},
        },
        "prefetchEnabled": False,
    }


def test_gpus_and_tensor_parallel_follow_the_instance() -> None:
    w = workload(instance_type="ml.p5.48xlarge", gpu_count=8)
    spec = endpoint_spec(w, IMAGE, None)
    assert spec["worker"]["resources"] == {  # type: ignore[index]
        "limits": {"nvidia.com/gpu": "8"},
        "requests": {"nvidia.com/gpu": "8"},
    }
    assert env_dict(w, None)["SM_VLLM_TENSOR_PARALLEL_SIZE"] == "8"


@pytest.mark.parametrize("engine", list(Engine))
@pytest.mark.parametrize("algorithm", [None, *ALGORITHMS])
def test_manifest_is_valid_for_the_real_crd(engine: Engine, algorithm: str | None) -> None:
    spec = None
    if algorithm:
        spec = SpeculativeSpec(
            algorithm, "org/draft" if ALGORITHMS[algorithm].needs_draft else None
        )
    assert_valid_manifest(
        manifest(workload(engine, hf_token_secret="t"), spec), "inferenceendpointconfigs.yaml"
    )


def test_the_pruning_check_catches_invented_fields() -> None:
    schema = crd_schema("inferenceendpointconfigs.yaml")
    bad = manifest(workload(), None)
    bad["spec"]["modelSourceConfig"]["huggingfaceHub"] = {"modelId": "x/y"}  # type: ignore[index]
    bad["spec"]["worker"]["gpus"] = 4  # type: ignore[index]
    assert pruned_fields(bad, schema) == [
        ".spec.modelSourceConfig.huggingfaceHub",
        ".spec.worker.gpus",
    ]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("replicas", "two", "'two' is not of type 'integer'"),
        ("modelName", None, "'modelName' is a required property"),
        ("invocationEndpoint", 5, "5 is not of type 'string'"),
    ],
)
def test_the_schema_check_rejects_wrong_types_and_missing_fields(
    field: str, value: object, message: str
) -> None:
    bad = manifest(workload(), None)
    spec: dict[str, object] = bad["spec"]  # type: ignore[assignment]
    if value is None:
        del spec[field]
    else:
        spec[field] = value
    with pytest.raises(jsonschema.ValidationError) as raised:
        assert_valid_manifest(bad, "inferenceendpointconfigs.yaml")
    assert raised.value.message == message
