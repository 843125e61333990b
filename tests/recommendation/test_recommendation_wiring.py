"""hp:optimize in the real program: when the job exists, and which settings win."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pulumi
import pytest
from program_runs import CR_TYPE, IMAGE, run_main

from mlcc.components.recommendation_job import recommendation_job, speculative_for_endpoint
from mlcc.config.optimize import parse_optimize_settings
from mlcc.plan import mocks as offline
from mlcc.serving.engines import Engine, release
from mlcc.serving.speculative import SpeculativeSpec

TYPE = "pulumi-python:dynamic/hp:RecommendationJobRun"
COMPONENT = "hp:index:RecommendationJob"
OPTIMIZE = {
    "goal": "throughput",
    "modelS3Uri": "s3://models-bucket/llama-3.1-8b-instruct/",
    "roleArn": "arn:aws:iam::123456789012:role/SageMakerRecommendation",
    "dataset": "s3://data-bucket/sharegpt/",
    "instanceTypes": ["ml.g6e.2xlarge"],
    "timeoutMinutes": 120,
}
RECOMMENDED_DRAFT = "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B"
NO_EXPLICIT = {"speculativeAlgorithm": None, "speculativeModel": None}


@pytest.fixture
def job_result() -> Iterator[dict[str, Any]]:
    """What the mocked recommendation resource returns as its outputs."""
    result: dict[str, Any] = {
        "usable": True,
        "algorithm": "eagle3",
        "draft_model": RECOMMENDED_DRAFT,
        "num_tokens": 3,
        "reason": None,
        "job_name": "hp-ef260e9a-dev-speculative-01234567",
    }
    offline.OUTPUTS[TYPE] = lambda _args: dict(result)
    yield result
    offline.OUTPUTS.pop(TYPE, None)


def env_of(run: offline.OfflineRun) -> dict[str, str]:
    entries = run.one(CR_TYPE).inputs["spec"]["worker"]["environmentVariables"]
    return {e["name"]: e.get("value") for e in entries}


def with_optimize(optimize: dict[str, Any] = OPTIMIZE, **overrides: str | None) -> Any:
    return run_main({"image": IMAGE, "optimize": json.dumps(optimize), **overrides})


def test_without_optimize_there_is_no_recommendation_resource() -> None:
    run = run_main({"image": IMAGE})
    assert run.of_type(TYPE) == []
    assert run.outputs["speculativeSource"] == "explicit"


def test_without_optimize_or_keys_the_source_is_none() -> None:
    run = run_main({"image": IMAGE, **NO_EXPLICIT})
    assert run.of_type(TYPE) == []
    assert run.outputs["speculativeSource"] == "none"
    assert "SM_VLLM_SPECULATIVE_CONFIG" not in env_of(run)


def test_optimize_creates_one_job_with_the_settings(job_result: Any) -> None:
    run = with_optimize(**NO_EXPLICIT)
    job = run.one(TYPE)
    assert job.parent == run.one(COMPONENT).urn
    inputs = job.inputs
    assert {k: inputs[k] for k in ("goal", "model_s3_uri", "dataset", "engine")} == {
        "goal": "throughput",
        "model_s3_uri": OPTIMIZE["modelS3Uri"],
        "dataset": OPTIMIZE["dataset"],
        "engine": "vllm",
    }
    assert inputs["instance_types"] == ["ml.g6e.2xlarge"]
    assert inputs["timeout_minutes"] == 120
    assert inputs["stack"] == "dev"
    assert run.outputs["speculativeRecommendationJob"] == job_result["job_name"]


def test_explicit_keys_make_the_job_needless(job_result: Any) -> None:
    run = with_optimize()
    assert run.of_type(TYPE) == [] and run.of_type(COMPONENT) == []
    assert run.outputs["speculativeSource"] == "explicit"
    config = json.loads(env_of(run)["SM_VLLM_SPECULATIVE_CONFIG"])
    assert config["model"] == "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"  # Pulumi.dev.yaml's draft


def test_the_recommendation_feeds_the_endpoint_when_no_algorithm_is_set(job_result: Any) -> None:
    run = with_optimize(**NO_EXPLICIT)
    assert run.outputs["speculativeSource"] == "recommendation"
    assert run.outputs["speculativeAlgorithm"] == "eagle3"
    env = env_of(run)
    assert json.loads(env["SM_VLLM_SPECULATIVE_CONFIG"]) == {
        "method": "eagle3",
        "model": RECOMMENDED_DRAFT,
        "num_speculative_tokens": 3,
    }
    assert env["SM_SGLANG_SPECULATIVE_DRAFT_MODEL_PATH"] == RECOMMENDED_DRAFT
    assert env["HP_SPECULATIVE_ALGORITHM"] == "eagle3"


def test_an_unusable_recommendation_leaves_speculation_off(job_result: Any) -> None:
    job_result.update(
        usable=False,
        algorithm=None,
        draft_model=None,
        reason="no speculative recommendation: only KernelTuning",
    )
    run = with_optimize(**NO_EXPLICIT)
    assert run.outputs["speculativeSource"] == "none"
    assert run.outputs["speculativeAlgorithm"] == "off"
    assert not [name for name in env_of(run) if "SPECULATIVE" in name]


def test_bad_optimize_settings_fail_before_anything_is_created(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bad = {**OPTIMIZE, "dataset": "hf://anon/ShareGPT", "instanceTypes": ["ml.g4dn.xlarge"]}
    with caplog.at_level(logging.ERROR), pytest.raises(pulumi.RunError, match="2 errors above"):
        with_optimize(bad)
    message = "\n".join(r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR)
    assert "hp:optimize.dataset: 'hf://anon/ShareGPT' is a Hugging Face reference" in message
    assert "hp:optimize.instanceTypes: not accepted by the recommendation API" in message


# -- the wiring API, as a program with several endpoints would use it ------------------------------

SETTINGS = parse_optimize_settings(OPTIMIZE)[0]
VLLM_RELEASE = release(Engine.VLLM, None)


def wiring_program(needed: bool, explicit: SpeculativeSpec | None) -> Any:
    def program() -> None:
        job = recommendation_job("dev", SETTINGS, Engine.VLLM, needed=needed)
        for name, keys in (("explicit", explicit), ("open", None)):
            wiring = speculative_for_endpoint(job, keys, Engine.VLLM, VLLM_RELEASE)
            pulumi.export(f"{name}Source", wiring.source)
            pulumi.export(f"{name}Algorithm", wiring.spec.apply(lambda s: s and s.algorithm))

    return program


def test_one_job_serves_every_endpoint_without_its_own_keys(job_result: Any) -> None:
    run = offline.run(wiring_program(True, SpeculativeSpec("ngram", None, 3)), config={})
    assert len(run.of_type(COMPONENT)) == 1
    assert run.outputs["explicitSource"] == "explicit"
    assert run.outputs["explicitAlgorithm"] == "ngram"
    assert run.outputs["openSource"] == "recommendation"
    assert run.outputs["openAlgorithm"] == "eagle3"


def test_no_job_when_no_endpoint_needs_one() -> None:
    run = offline.run(wiring_program(False, SpeculativeSpec("ngram", None, 3)), config={})
    assert run.of_type(COMPONENT) == [] and run.of_type(TYPE) == []
    assert run.outputs["explicitSource"] == "explicit"
    assert run.outputs["openSource"] == "none"


def test_no_job_without_optimize_settings() -> None:
    def program() -> None:
        assert recommendation_job("dev", None, Engine.VLLM, needed=True) is None

    assert offline.run(program, config={}).registrations == []
