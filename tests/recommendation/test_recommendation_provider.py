"""The dynamic provider's check/create/diff/update/delete, called directly.

AWS calls go to a real sagemaker client wrapped in a Stubber; the provider gets it through its
client factory (the provider built by the resource holds no client, see test_..._pickle).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from botocore.stub import Stubber
from pulumi.dynamic import ConfigureRequest
from pulumi.dynamic.config import Config
from pulumi.runtime import rpc
from recommendation_stubs import (
    DATASET_S3_URI,
    EAGLE3_DRAFT,
    MODEL_S3_URI,
    ROLE_ARN,
    FakeClock,
    eagle3_recommendation,
    expect_delete,
    expect_describe,
    expect_describe_missing,
    expect_start,
    expect_stop,
    job_arn,
    kernel_tuning_detail,
    recommendation,
    sagemaker_client,
    workload_arn,
)

from mlcc.config.optimize import OptimizeSettings
from mlcc.recommendation import provider as provider_module
from mlcc.recommendation.names import STACK_JOB_KIND, JobNames, job_names
from mlcc.recommendation.polling import JobFailed, JobTimedOut, RecommendationJobError
from mlcc.recommendation.provider import RecommendationJobProvider
from mlcc.recommendation.requests import recommendation_job_request, workload_config_request

STACK = "dev"


def inputs(**changes: Any) -> dict[str, Any]:
    props: dict[str, Any] = {
        "goal": "latency",
        "model_s3_uri": MODEL_S3_URI,
        "role_arn": ROLE_ARN,
        "engine": "vllm",
        "dataset": DATASET_S3_URI,
        "instance_types": ["ml.g6e.2xlarge"],
        "timeout_minutes": 60,
        "output_s3_uri": None,
        "stack": STACK,
        "__provider": "serialized-provider",
    }
    props.update(changes)
    return props


def job_name(props: dict[str, Any]) -> str:
    settings, errors = provider_module.settings_from_props(props)
    assert settings is not None, errors
    salt = provider_module.job_salt(settings, props["engine"])
    return job_names(STACK, STACK_JOB_KIND, salt).job


def settings_of(props: dict[str, Any]) -> OptimizeSettings:
    settings, _ = provider_module.settings_from_props(props)
    assert settings is not None
    return settings


class Harness:
    def __init__(self) -> None:
        self.client = sagemaker_client()
        self.stubber = Stubber(self.client)
        self.clock = FakeClock()
        self.regions: list[str | None] = []

        def factory(region: str | None) -> Any:
            self.regions.append(region)
            return self.client

        self.provider = RecommendationJobProvider(
            client_factory=factory, clock=self.clock, sleep=self.clock.sleep
        )
        self.provider.configure(ConfigureRequest(Config({"aws:region": "us-east-1"}, "hp")))


@pytest.fixture
def harness() -> Iterator[Harness]:
    h = Harness()
    with h.stubber:
        yield h
        h.stubber.assert_no_pending_responses()


# -- check -----------------------------------------------------------------------------------


def test_check_accepts_and_normalises_valid_inputs() -> None:
    result = RecommendationJobProvider().check(
        {}, inputs(goal="Latency", timeout_minutes=60.0, engine="VLLM")
    )
    assert result.failures == []
    assert result.inputs["goal"] == "latency"
    assert result.inputs["timeout_minutes"] == 60
    assert result.inputs["engine"] == "vllm"
    assert result.inputs["__provider"] == "serialized-provider"


def test_check_reports_one_failure_per_bad_input() -> None:
    result = RecommendationJobProvider().check(
        {},
        inputs(
            dataset="hf://anon/ShareGPT",
            instance_types=["ml.g5.xlarge"] * 2 + ["ml.g6.xlarge", "ml.p5.48xlarge"],
            role_arn="admin",
            engine="tgi",
            goal="speed",
        ),
    )
    failures = {f.property: f.reason for f in result.failures}
    assert set(failures) == {"dataset", "instance_types", "role_arn", "engine", "goal"}
    assert "only s3:// or https://" in failures["dataset"]
    assert "at most 3" in failures["instance_types"]


def test_check_skips_values_unknown_at_preview() -> None:
    result = RecommendationJobProvider().check({}, inputs(model_s3_uri=rpc.UNKNOWN))
    assert result.failures == []
    assert result.inputs["model_s3_uri"] == rpc.UNKNOWN


# -- create ----------------------------------------------------------------------------------


def test_create_starts_polls_and_outputs_the_top_recommendation(harness: Harness) -> None:
    props = inputs()
    name = job_name(props)
    expect_describe_missing(harness.stubber, name)
    expect_start(harness.stubber, JobNames(name, name), settings_of(props), STACK)
    expect_describe(harness.stubber, name, "InProgress")
    expect_describe(harness.stubber, name, "Completed", recommendations=[eagle3_recommendation()])

    result = harness.provider.create(props)

    assert result.id == name
    outs = result.outs
    assert outs is not None
    assert (outs["algorithm"], outs["draft_model"], outs["num_tokens"]) == (
        "eagle3",
        EAGLE3_DRAFT,
        4,
    )
    assert outs["usable"] is True and outs["reason"] is None
    assert outs["job_name"] == name and outs["workload_config_name"] == name
    assert outs["job_arn"].endswith(f"ai-recommendation-job/{name}")
    assert outs["optimization_config"]["method"] == "eagle3"
    assert outs["expected_performance"][0]["metric"] == "ttft-ms"
    assert outs["description"] == "ml.g6e.2xlarge with speculative decoding"
    assert outs["goal"] == "latency" and outs["timeout_minutes"] == 60
    assert set(provider_module.OUTPUT_KEYS) <= set(outs)
    assert harness.regions == ["us-east-1"]
    assert harness.clock.sleeps == [15.0]


def test_create_for_sglang_sends_no_framework(harness: Harness) -> None:
    props = inputs(engine="sglang", dataset=None)
    name = job_name(props)
    expect_describe_missing(harness.stubber, name)
    harness.stubber.add_response(
        "create_ai_workload_config",
        {"AIWorkloadConfigArn": workload_arn(name)},
        {
            "AIWorkloadConfigName": name,
            "AIWorkloadConfigs": {"WorkloadSpec": {"Inline": '{"benchmark":{"type":"aiperf"}}'}},
            "Tags": [{"Key": "mlcc:stack", "Value": STACK}],
        },
    )
    harness.stubber.add_response(
        "create_ai_recommendation_job",
        {"AIRecommendationJobArn": job_arn(name)},
        {
            "AIRecommendationJobName": name,
            "ModelSource": {"S3": {"S3Uri": MODEL_S3_URI}},
            "OutputConfig": {"S3OutputLocation": "s3://models-bucket/mlcc-recommendations/"},
            "AIWorkloadConfigIdentifier": name,
            "PerformanceTarget": {"Constraints": [{"Metric": "ttft-ms"}]},
            "RoleArn": ROLE_ARN,
            "OptimizeModel": True,
            "ComputeSpec": {"InstanceTypes": ["ml.g6e.2xlarge"]},
            "Tags": [{"Key": "mlcc:stack", "Value": STACK}],
        },
    )
    expect_describe(harness.stubber, name, "Completed", recommendations=[eagle3_recommendation()])
    outs = harness.provider.create(props).outs
    assert outs is not None and outs["algorithm"] == "eagle3"


def test_create_resumes_a_job_left_running_by_an_interrupted_update(harness: Harness) -> None:
    props = inputs()
    name = job_name(props)
    expect_describe(harness.stubber, name, "InProgress")
    expect_describe(harness.stubber, name, "Completed", recommendations=[eagle3_recommendation()])
    outs = harness.provider.create(props).outs
    assert outs is not None and outs["algorithm"] == "eagle3"


def test_create_adopts_a_completed_job_without_rerunning_it(harness: Harness) -> None:
    props = inputs()
    name = job_name(props)
    expect_describe(harness.stubber, name, "Completed", recommendations=[eagle3_recommendation()])
    outs = harness.provider.create(props).outs
    assert outs is not None and outs["usable"] is True
    assert harness.clock.sleeps == []


def test_a_failed_job_fails_the_update_with_the_failure_reason(harness: Harness) -> None:
    props = inputs()
    name = job_name(props)
    expect_describe_missing(harness.stubber, name)
    expect_start(harness.stubber, JobNames(name, name), settings_of(props), STACK)
    expect_describe(
        harness.stubber, name, "Failed", failure_reason="Unable to download model from S3"
    )
    with pytest.raises(JobFailed, match="ended Failed: Unable to download model from S3"):
        harness.provider.create(props)


def test_retry_after_failure_deletes_the_failed_job_and_starts_again(harness: Harness) -> None:
    props = inputs()
    name = job_name(props)
    expect_describe(harness.stubber, name, "Failed", failure_reason="capacity")
    expect_delete(harness.stubber, name)
    expect_start(harness.stubber, JobNames(name, name), settings_of(props), STACK)
    expect_describe(harness.stubber, name, "Completed", recommendations=[eagle3_recommendation()])
    outs = harness.provider.create(props).outs
    assert outs is not None and outs["algorithm"] == "eagle3"


def test_a_job_stopped_outside_pulumi_fails_the_update(harness: Harness) -> None:
    props = inputs()
    name = job_name(props)
    expect_describe_missing(harness.stubber, name)
    expect_start(harness.stubber, JobNames(name, name), settings_of(props), STACK)
    expect_describe(harness.stubber, name, "Stopping")
    expect_describe(harness.stubber, name, "Stopped")
    with pytest.raises(JobFailed, match="ended Stopped"):
        harness.provider.create(props)


def test_a_job_still_stopping_from_an_earlier_run_asks_to_retry(harness: Harness) -> None:
    props = inputs()
    expect_describe(harness.stubber, job_name(props), "Stopping")
    with pytest.raises(RecommendationJobError, match="still stopping"):
        harness.provider.create(props)


def test_timeout_stops_the_job_and_fails_clearly(harness: Harness) -> None:
    props = inputs(timeout_minutes=1)
    name = job_name(props)
    expect_describe_missing(harness.stubber, name)
    expect_start(harness.stubber, JobNames(name, name), settings_of(props), STACK)
    for _ in range(4):  # at 0, 15, 45 and 60 s
        expect_describe(harness.stubber, name, "InProgress")
    expect_stop(harness.stubber, name)
    with pytest.raises(JobTimedOut, match="still InProgress after 1 minutes; it has been stopped"):
        harness.provider.create(props)
    assert harness.clock.sleeps == [15.0, 30.0, 15.0]


def test_no_speculative_detail_creates_the_resource_with_the_reason(harness: Harness) -> None:
    props = inputs()
    name = job_name(props)
    expect_describe(
        harness.stubber,
        name,
        "Completed",
        recommendations=[recommendation([kernel_tuning_detail()])],
    )
    outs = harness.provider.create(props).outs
    assert outs is not None
    assert outs["usable"] is False and outs["algorithm"] is None
    assert outs["reason"].startswith("no speculative recommendation")


def test_region_falls_back_to_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str | None] = []
    provider = RecommendationJobProvider(client_factory=lambda region: seen.append(region))
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    provider._client()
    assert seen == ["eu-west-1"]


def test_missing_region_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    with pytest.raises(RuntimeError, match="set aws:region"):
        RecommendationJobProvider(client_factory=lambda region: None)._client()


# -- diff / update ---------------------------------------------------------------------------


def state(**changes: Any) -> dict[str, Any]:
    """Old outputs as the engine stores them: inputs + outputs, numbers as floats."""
    outs = {key: None for key in provider_module.OUTPUT_KEYS}
    outs.update(algorithm="eagle3", draft_model=EAGLE3_DRAFT, num_tokens=4.0, usable=True)
    return {**inputs(timeout_minutes=60.0, instance_types=("ml.g6e.2xlarge",)), **outs, **changes}


def test_no_change_means_no_diff() -> None:
    diff = RecommendationJobProvider().diff("job", state(), inputs())
    assert diff.changes is False
    assert diff.replaces == []


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("goal", "cost"),
        ("dataset", "s3://other/data/"),
        ("model_s3_uri", "s3://models-bucket/other/"),
        ("instance_types", ["ml.p5.48xlarge"]),
        ("engine", "sglang"),
        ("role_arn", "arn:aws:iam::123456789012:role/Other"),
    ],
)
def test_changed_job_inputs_replace_the_resource(key: str, value: Any) -> None:
    diff = RecommendationJobProvider().diff("job", state(), inputs(**{key: value}))
    assert diff.changes is True
    assert diff.replaces == [key]
    assert diff.delete_before_replace is False


@pytest.mark.parametrize(("key", "value"), [("timeout_minutes", 240), ("stack", "renamed")])
def test_timeout_or_a_renamed_stack_updates_without_rerunning(
    harness: Harness, key: str, value: Any
) -> None:
    diff = harness.provider.diff("job", state(), inputs(**{key: value}))
    assert diff.changes is True and diff.replaces == []
    outs = harness.provider.update("job", state(), inputs(**{key: value})).outs
    assert outs is not None
    assert outs[key] == value
    assert (outs["algorithm"], outs["draft_model"]) == ("eagle3", EAGLE3_DRAFT)


def test_check_refuses_a_stack_name_the_tag_cannot_hold() -> None:
    result = RecommendationJobProvider().check({}, inputs(stack="my stack/prod"))
    assert [f.property for f in result.failures] == ["stack"]


# -- delete ----------------------------------------------------------------------------------


def test_delete_stops_a_running_job_then_deletes_what_it_created(harness: Harness) -> None:
    name = "hp-dev-speculative-abc"
    expect_describe(harness.stubber, name, "InProgress")
    expect_stop(harness.stubber, name)
    expect_describe(harness.stubber, name, "Stopping")
    expect_describe(harness.stubber, name, "Stopped")
    expect_delete(harness.stubber, name)
    harness.provider.delete(name, state(job_name=name, workload_config_name=name))
    assert harness.clock.sleeps == [15.0]


def test_delete_of_a_completed_job_does_not_stop_it(harness: Harness) -> None:
    name = "hp-dev-speculative-abc"
    expect_describe(harness.stubber, name, "Completed", recommendations=[])
    expect_delete(harness.stubber, name)
    harness.provider.delete(name, state(job_name=name, workload_config_name=name))


def test_delete_tolerates_resources_already_gone(harness: Harness) -> None:
    name = "hp-dev-speculative-abc"
    expect_describe_missing(harness.stubber, name)
    for method, params in (
        ("delete_ai_recommendation_job", {"AIRecommendationJobName": name}),
        ("delete_ai_workload_config", {"AIWorkloadConfigName": name}),
    ):
        harness.stubber.add_client_error(
            method,
            service_error_code="ResourceNotFound",
            http_status_code=404,
            expected_params=params,
        )
    harness.provider.delete(name, state(job_name=name, workload_config_name=name))


def test_delete_surfaces_other_errors(harness: Harness) -> None:
    name = "hp-dev-speculative-abc"
    expect_describe(harness.stubber, name, "Completed")
    harness.stubber.add_client_error(
        "delete_ai_recommendation_job",
        service_error_code="AccessDeniedException",
        http_status_code=403,
    )
    with pytest.raises(Exception, match="AccessDenied"):
        harness.provider.delete(name, state(job_name=name, workload_config_name=name))


def test_a_job_that_cannot_start_leaves_no_workload_config(harness: Harness) -> None:
    props = inputs()
    name = job_name(props)
    expect_describe_missing(harness.stubber, name)
    harness.stubber.add_response(
        "create_ai_workload_config",
        {"AIWorkloadConfigArn": workload_arn(name)},
        workload_config_request(JobNames(name, name), settings_of(props), STACK),
    )
    harness.stubber.add_client_error(
        "create_ai_recommendation_job",
        service_error_code="ResourceLimitExceeded",
        service_message="Too many recommendation jobs",
        http_status_code=400,
    )
    harness.stubber.add_response(
        "delete_ai_workload_config",
        {"AIWorkloadConfigArn": workload_arn(name)},
        {"AIWorkloadConfigName": name},
    )
    with pytest.raises(Exception, match="Too many recommendation jobs"):
        harness.provider.create(props)


def test_an_existing_workload_config_from_an_interrupted_run_is_reused(harness: Harness) -> None:
    props = inputs()
    name = job_name(props)
    expect_describe_missing(harness.stubber, name)
    harness.stubber.add_client_error(
        "create_ai_workload_config", service_error_code="ResourceInUse", http_status_code=400
    )
    harness.stubber.add_response(
        "create_ai_recommendation_job",
        {"AIRecommendationJobArn": job_arn(name)},
        recommendation_job_request(JobNames(name, name), settings_of(props), "vllm", STACK),
    )
    expect_describe(harness.stubber, name, "Completed", recommendations=[eagle3_recommendation()])
    outs = harness.provider.create(props).outs
    assert outs is not None and outs["algorithm"] == "eagle3"
