"""Shared builders for Stubber-based tests: a real sagemaker client and API-shaped responses.

Every response built here goes through `botocore.stub.Stubber.add_response`, which validates it
against the real botocore model, so an invented field (SpeculativeDecodingConfig, DraftModelArn,
...) would make the test itself fail.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import boto3
from botocore.stub import Stubber

from mlcc.config.optimize import OptimizeSettings, parse_optimize_settings
from mlcc.recommendation.names import JobNames, stack_tags
from mlcc.recommendation.requests import recommendation_job_request, workload_config_request

REGION = "us-east-1"
ACCOUNT = "123456789012"
ROLE_ARN = f"arn:aws:iam::{ACCOUNT}:role/SageMakerRecommendation"
MODEL_S3_URI = "s3://models-bucket/llama-3.1-8b-instruct/"
DATASET_S3_URI = "s3://data-bucket/datasets/sharegpt/"
CREATED = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
EAGLE3_DRAFT = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"


def sagemaker_client() -> Any:
    return boto3.client(
        "sagemaker",
        region_name=REGION,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


def settings(**overrides: Any) -> OptimizeSettings:
    raw: dict[str, Any] = {
        "goal": "latency",
        "modelS3Uri": MODEL_S3_URI,
        "roleArn": ROLE_ARN,
        "dataset": DATASET_S3_URI,
        "instanceTypes": ["ml.g6e.2xlarge"],
        "timeoutMinutes": 60,
    }
    raw.update(overrides)
    parsed, errors = parse_optimize_settings({k: v for k, v in raw.items() if v is not None})
    assert not errors, errors
    assert parsed is not None
    return parsed


def job_arn(name: str) -> str:
    return f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:ai-recommendation-job/{name}"


def workload_arn(name: str) -> str:
    return f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:ai-workload-config/{name}"


def speculative_detail(config: dict[str, str]) -> dict[str, Any]:
    return {"OptimizationType": "SpeculativeDecoding", "OptimizationConfig": config}


def kernel_tuning_detail() -> dict[str, Any]:
    return {"OptimizationType": "KernelTuning", "OptimizationConfig": {"kernels": "flash"}}


def recommendation(
    details: list[dict[str, Any]] | None = None,
    env: dict[str, str] | None = None,
    description: str = "ml.g6e.2xlarge with speculative decoding",
    s3_channels: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    deployment: dict[str, Any] = {
        "ImageUri": "763104351884.dkr.ecr.us-east-1.amazonaws.com/vllm:0.27.1-gpu-py312",
        "InstanceType": "ml.g6e.2xlarge",
        "InstanceCount": 1,
        "CopyCountPerInstance": 1,
        "EnvironmentVariables": env or {},
    }
    if s3_channels is not None:
        deployment["S3"] = s3_channels
    return {
        "RecommendationDescription": description,
        "OptimizationDetails": details or [],
        "ModelDetails": {
            "ModelPackageArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:model-package/llama/1",
            "InferenceSpecificationName": "spec-1",
            "InstanceDetails": [{"InstanceType": "ml.g6e.2xlarge", "InstanceCount": 1}],
        },
        "DeploymentConfiguration": deployment,
        "ExpectedPerformance": [
            {"Metric": "ttft-ms", "Stat": "p50", "Value": "182.5", "Unit": "ms"},
            {"Metric": "throughput", "Value": "1450", "Unit": "tokens/s"},
        ],
    }


def eagle3_recommendation() -> dict[str, Any]:
    return recommendation(
        [
            speculative_detail(
                {"method": "eagle3", "draft_model": EAGLE3_DRAFT, "num_speculative_tokens": "4"}
            ),
            kernel_tuning_detail(),
        ]
    )


def describe_response(
    name: str,
    status: str,
    recommendations: list[dict[str, Any]] | None = None,
    failure_reason: str | None = None,
    stack: str | None = None,
) -> dict[str, Any]:
    response: dict[str, Any] = {
        "AIRecommendationJobName": name,
        "AIRecommendationJobArn": job_arn(name),
        "AIRecommendationJobStatus": status,
        "ModelSource": {"S3": {"S3Uri": MODEL_S3_URI}},
        "OutputConfig": {"S3OutputLocation": "s3://models-bucket/mlcc-recommendations/"},
        "AIWorkloadConfigIdentifier": name,
        "RoleArn": ROLE_ARN,
        "CreationTime": CREATED,
    }
    if recommendations is not None:
        response["Recommendations"] = recommendations
    if failure_reason is not None:
        response["FailureReason"] = failure_reason
    if stack is not None:
        response["Tags"] = stack_tags(stack)
    return response


def expect_describe(stubber: Stubber, name: str, status: str, **kwargs: Any) -> None:
    stubber.add_response(
        "describe_ai_recommendation_job",
        describe_response(name, status, **kwargs),
        {"AIRecommendationJobName": name},
    )


def expect_describe_missing(stubber: Stubber, name: str) -> None:
    stubber.add_client_error(
        "describe_ai_recommendation_job",
        service_error_code="ResourceNotFound",
        service_message=f"AI recommendation job {name} not found",
        http_status_code=404,
        expected_params={"AIRecommendationJobName": name},
    )


def expect_start(
    stubber: Stubber,
    names: JobNames,
    job_settings: OptimizeSettings,
    stack: str,
    engine: str = "vllm",
) -> None:
    stubber.add_response(
        "create_ai_workload_config",
        {"AIWorkloadConfigArn": workload_arn(names.workload_config)},
        workload_config_request(names, job_settings, stack),
    )
    stubber.add_response(
        "create_ai_recommendation_job",
        {"AIRecommendationJobArn": job_arn(names.job)},
        recommendation_job_request(names, job_settings, engine, stack),
    )


def expect_stop(stubber: Stubber, name: str) -> None:
    stubber.add_response(
        "stop_ai_recommendation_job",
        {"AIRecommendationJobArn": job_arn(name)},
        {"AIRecommendationJobName": name},
    )


def expect_delete(stubber: Stubber, name: str) -> None:
    stubber.add_response(
        "delete_ai_recommendation_job",
        {"AIRecommendationJobArn": job_arn(name)},
        {"AIRecommendationJobName": name},
    )
    stubber.add_response(
        "delete_ai_workload_config",
        {"AIWorkloadConfigArn": workload_arn(name)},
        {"AIWorkloadConfigName": name},
    )


class FakeClock:
    """A clock that only moves when the code under test sleeps."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
