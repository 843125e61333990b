"""SageMaker calls for recommendation jobs, shared by the dynamic provider and `mlcc optimize`.

Every function takes the client as an argument (never creates or keeps one), so callers decide
where clients live (the provider creates one per method; tests pass a Stubber-wrapped client).
Request bodies come from the pure `mlcc.recommendation`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from mlcc import recommendation as rec

if TYPE_CHECKING:
    from mypy_boto3_sagemaker.client import SageMakerClient
else:
    SageMakerClient = Any

NOT_FOUND_CODES = frozenset({"ResourceNotFound"})
# Older SageMaker describe calls report a missing resource as a ValidationException; the model
# lists ResourceNotFound for these operations, but we accept both to stay safe.
NOT_FOUND_PHRASES = ("not found", "does not exist", "could not find")


@dataclass(frozen=True)
class JobNames:
    """The recommendation job and the workload config it uses (same name, different types)."""

    job: str
    workload_config: str

    @staticmethod
    def derive(base: str, salt: str) -> JobNames:
        name = rec.build_name(base, salt)
        return JobNames(job=name, workload_config=name)


@dataclass(frozen=True)
class JobSummary:
    name: str
    status: str
    created: datetime | None
    ended: datetime | None


def error_code(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Code", ""))


def is_not_found(error: ClientError) -> bool:
    if error_code(error) in NOT_FOUND_CODES:
        return True
    message = str(error.response.get("Error", {}).get("Message", "")).lower()
    return error_code(error) == "ValidationException" and any(
        phrase in message for phrase in NOT_FOUND_PHRASES
    )


def describe_job(client: SageMakerClient, name: str) -> Mapping[str, Any] | None:
    """The DescribeAIRecommendationJob response, or None when no such job exists."""
    try:
        return dict(client.describe_ai_recommendation_job(AIRecommendationJobName=name))
    except ClientError as error:
        if is_not_found(error):
            return None
        raise


def start_job(
    client: SageMakerClient, names: JobNames, settings: rec.OptimizeSettings, engine: str
) -> str:
    """Create the workload config (with the dataset, if any) and the job; returns the job ARN.

    A workload config that already exists under our hashed name comes from an interrupted run
    with the same inputs, so it is reused.
    """
    created = True
    try:
        client.create_ai_workload_config(
            **rec.workload_config_request(names.workload_config, settings)
        )
    except ClientError as error:
        if error_code(error) != "ResourceInUse":
            raise
        created = False
    try:
        response = client.create_ai_recommendation_job(
            **rec.recommendation_job_request(names.job, names.workload_config, settings, engine)
        )
    except ClientError:
        if created:  # leave nothing behind when the job cannot start
            delete_workload_config(client, names.workload_config)
        raise
    return response["AIRecommendationJobArn"]


def stop_job(client: SageMakerClient, name: str) -> None:
    try:
        client.stop_ai_recommendation_job(AIRecommendationJobName=name)
    except ClientError as error:
        if not is_not_found(error):
            raise


def delete_job(client: SageMakerClient, name: str) -> None:
    """Delete a job in a terminal state; a job that is already gone is fine."""
    try:
        client.delete_ai_recommendation_job(AIRecommendationJobName=name)
    except ClientError as error:
        if not is_not_found(error):
            raise


def delete_workload_config(client: SageMakerClient, name: str) -> None:
    try:
        client.delete_ai_workload_config(AIWorkloadConfigName=name)
    except ClientError as error:
        if not is_not_found(error):
            raise


def list_jobs(
    client: SageMakerClient, name_contains: str | None = None, limit: int = 50
) -> list[JobSummary]:
    """Newest first, across pages, at most `limit` jobs."""
    paginator = client.get_paginator("list_ai_recommendation_jobs")
    query: dict[str, Any] = {"SortBy": "CreationTime", "SortOrder": "Descending"}
    if name_contains:
        query["NameContains"] = name_contains
    jobs: list[JobSummary] = []
    for page in paginator.paginate(**query):
        for job in page.get("AIRecommendationJobs", []):
            jobs.append(
                JobSummary(
                    job["AIRecommendationJobName"],
                    job["AIRecommendationJobStatus"],
                    job.get("CreationTime"),
                    job.get("EndTime"),
                )
            )
            if len(jobs) >= limit:
                return jobs
    return jobs
