"""Job names, stack tags and request bodies, checked against the botocore service model."""

from __future__ import annotations

import re
from typing import Any

import boto3
import pytest
from botocore.exceptions import ParamValidationError
from botocore.validate import validate_parameters
from hypothesis import given
from hypothesis import strategies as st
from recommendation_stubs import DATASET_S3_URI, MODEL_S3_URI, ROLE_ARN, settings

from mlcc.recommendation import names
from mlcc.recommendation.requests import recommendation_job_request, workload_config_request

MODEL = boto3.client("sagemaker", region_name="us-east-1").meta.service_model
STACK_NAMES = st.from_regex(names.STACK_NAME_PATTERN, fullmatch=True)
KINDS = st.sampled_from(["latency", "throughput", "cost", names.STACK_JOB_KIND])


def model_pattern(shape: str, member: str) -> re.Pattern[str]:
    """A member's pattern from the model; Java's Unicode classes become Python's."""
    text = MODEL.shape_for(shape).members[member].metadata["pattern"]
    return re.compile(text.replace(r"\p{L}\p{Z}\p{N}", r"\w\s"))


def model_max(shape: str, member: str) -> int:
    return int(MODEL.shape_for(shape).members[member].metadata["max"])


def check_request(operation: str, request: dict[str, Any]) -> None:
    """Presence, names and types, as botocore checks them (patterns and maxima: see above)."""
    validate_parameters(request, MODEL.operation_model(operation).input_shape)


@given(stack=STACK_NAMES, kind=KINDS, salt=st.text(max_size=40))
def test_job_names_follow_the_model_for_every_stack(stack: str, kind: str, salt: str) -> None:
    job = names.job_names(stack, kind, salt).job
    pattern = model_pattern("CreateAIRecommendationJobRequest", "AIRecommendationJobName")
    assert pattern.fullmatch(job), job
    assert len(job) <= model_max("CreateAIRecommendationJobRequest", "AIRecommendationJobName")


@given(stack=STACK_NAMES, kind=KINDS, salt=st.text(max_size=40))
def test_every_job_of_a_stack_contains_its_name_filter(stack: str, kind: str, salt: str) -> None:
    name_filter = names.stack_name_filter(stack)
    assert name_filter in names.job_names(stack, kind, salt).job
    assert model_pattern("ListAIRecommendationJobsRequest", "NameContains").fullmatch(name_filter)
    assert len(name_filter) <= model_max("ListAIRecommendationJobsRequest", "NameContains")


@given(stack=STACK_NAMES)
def test_stack_tags_are_valid_and_read_back_exactly(stack: str) -> None:
    tags = names.stack_tags(stack)
    for tag in tags:
        assert model_pattern("Tag", "Key").fullmatch(tag["Key"])
        assert model_pattern("Tag", "Value").fullmatch(tag["Value"])
        assert len(tag["Value"]) <= model_max("Tag", "Value")
    assert names.tagged_stack(tags) == stack


def test_a_stack_and_its_longer_namesake_get_different_filters() -> None:
    dev, dev_latency = names.stack_name_filter("dev"), names.stack_name_filter("dev-latency")
    assert dev != dev_latency
    assert dev not in names.job_names("dev-latency", "latency", "s").job


def test_names_are_stable_and_differ_by_salt() -> None:
    first = names.job_names("dev", "latency", "a")
    assert first == names.job_names("dev", "latency", "a")
    assert first != names.job_names("dev", "latency", "b")
    assert first.job.startswith(names.stack_name_filter("dev") + "dev-latency-")


def test_a_long_stack_name_is_shortened_in_the_name_only() -> None:
    stack = "production-europe-west-llama-3-70b-instruct-speculative-eagle3-canary"
    job = names.job_names(stack, "throughput", "s").job
    assert len(job) == names.MAX_NAME_LENGTH
    assert names.stack_name_filter(stack) in job
    assert names.tagged_stack(names.stack_tags(stack)) == stack


@pytest.mark.parametrize(
    "tags",
    [None, "dev", [], [{"Key": "other", "Value": "dev"}], [{"Key": names.STACK_TAG}], [42]],
)
def test_missing_or_malformed_tags_name_no_stack(tags: Any) -> None:
    assert names.tagged_stack(tags) is None


@pytest.mark.parametrize("stack", ["", "dev stack", "a/b", "x" * 101, "dév"])
def test_stack_names_outside_pulumis_rule_are_refused(stack: str) -> None:
    assert names.stack_name_problem(stack) is not None


# -- request bodies ------------------------------------------------------------------------

JOB = names.job_names("dev", "throughput", "salt")


def test_job_request_body() -> None:
    job_settings = settings(goal="throughput", instanceTypes=["ml.g6e.2xlarge", "ml.p5.48xlarge"])
    request = recommendation_job_request(JOB, job_settings, "vllm", "dev")
    check_request("CreateAIRecommendationJob", request)
    assert request == {
        "AIRecommendationJobName": JOB.job,
        "ModelSource": {"S3": {"S3Uri": MODEL_S3_URI}},
        "OutputConfig": {"S3OutputLocation": "s3://models-bucket/mlcc-recommendations/"},
        "AIWorkloadConfigIdentifier": JOB.workload_config,
        "PerformanceTarget": {"Constraints": [{"Metric": "throughput"}]},
        "RoleArn": ROLE_ARN,
        "OptimizeModel": True,
        "InferenceSpecification": {"Framework": "VLLM"},
        "ComputeSpec": {"InstanceTypes": ["ml.g6e.2xlarge", "ml.p5.48xlarge"]},
        "Tags": [{"Key": "mlcc:stack", "Value": "dev"}],
    }


def test_sglang_job_has_no_framework_and_no_instance_types_when_unset() -> None:
    request = recommendation_job_request(
        JOB, settings(instanceTypes=None, dataset=None), "sglang", "dev"
    )
    check_request("CreateAIRecommendationJob", request)
    assert "InferenceSpecification" not in request
    assert "ComputeSpec" not in request


def test_workload_config_carries_the_dataset_as_a_channel() -> None:
    request = workload_config_request(JOB, settings(), "dev")
    check_request("CreateAIWorkloadConfig", request)
    assert request == {
        "AIWorkloadConfigName": JOB.workload_config,
        "AIWorkloadConfigs": {"WorkloadSpec": {"Inline": '{"benchmark":{"type":"aiperf"}}'}},
        "DatasetConfig": {
            "InputDataConfig": [
                {
                    "ChannelName": "dataset",
                    "DataSource": {"S3DataSource": {"S3Uri": DATASET_S3_URI}},
                }
            ]
        },
        "Tags": [{"Key": "mlcc:stack", "Value": "dev"}],
    }


def test_workload_config_without_dataset_has_no_dataset_config() -> None:
    request = workload_config_request(JOB, settings(dataset=None), "dev")
    check_request("CreateAIWorkloadConfig", request)
    assert "DatasetConfig" not in request


def test_an_invented_field_fails_the_model_check() -> None:
    request = {**workload_config_request(JOB, settings(), "dev"), "Dataset": DATASET_S3_URI}
    with pytest.raises(ParamValidationError):
        check_request("CreateAIWorkloadConfig", request)


@given(st.text(alphabet="aZ9-_. ", max_size=70) | st.text(max_size=5))
def test_job_names_are_judged_like_the_model_does(name: str) -> None:
    pattern = model_pattern("DescribeAIRecommendationJobRequest", "AIRecommendationJobName")
    limit = model_max("DescribeAIRecommendationJobRequest", "AIRecommendationJobName")
    valid = bool(pattern.fullmatch(name)) and len(name) <= limit
    assert (names.job_name_problem(name) is None) is valid
