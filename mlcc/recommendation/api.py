"""SageMaker calls for recommendation jobs, shared by the dynamic provider and `mlcc optimize`.

Every function takes the client as an argument (never creates or keeps one), so callers decide
where clients live (the provider creates one per method; tests pass a Stubber-wrapped client or
point boto3 at a local endpoint). Request bodies come from `mlcc.recommendation.requests`.
A reply that lacks a field we need raises UnexpectedReply, never KeyError or TypeError; so
does a reply over the size limit, and a list that does not end (a NextToken seen before, or
more pages than the limit): both limits are preflight's, `mlcc.preflight.bounded.aws_answers`
(the client is wrapped by its `bounded`, the list read by its `pages`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from itertools import islice
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError, PaginationError

from mlcc.config.optimize import OptimizeSettings
from mlcc.preflight.bounded.aws_answers import AnswerProblem, bounded, pages
from mlcc.recommendation.names import JobNames, job_name_problem, stack_name_filter, tagged_stack
from mlcc.recommendation.parsing import JobStatus
from mlcc.recommendation.requests import recommendation_job_request, workload_config_request

if TYPE_CHECKING:
    from mypy_boto3_sagemaker.client import SageMakerClient
else:
    SageMakerClient = Any

# ListTagsInput.ResourceArn in the botocore model.
JOB_ARN_PATTERN = re.compile(r"arn:aws[a-z-]*:sagemaker:[a-z0-9-]*:[0-9]{12}:.+")
NOT_FOUND_CODES = frozenset({"ResourceNotFound"})
# Older SageMaker describe calls report a missing resource as a ValidationException; the model
# lists ResourceNotFound for these operations, but we accept both to stay safe.
NOT_FOUND_PHRASES = ("not found", "does not exist", "could not find")


# Each SageMaker call: connect within CONNECT_TIMEOUT_S, each read within READ_TIMEOUT_S, in
# botocore's `standard` retry mode (AWS_MAX_ATTEMPTS attempts, 3 unless set): throttling that
# never stops ends after those. Each answer is read up to preflight's size limit
# (`aws_answers.bounded`), each list up to its page limit (docs/optimize.md, "Limits").
CONNECT_TIMEOUT_S = 10.0
READ_TIMEOUT_S = 60.0


def sagemaker_client(region: str | None) -> SageMakerClient:
    """The client `mlcc optimize` and the dynamic provider make."""
    import boto3
    from botocore.config import Config

    config = Config(
        connect_timeout=CONNECT_TIMEOUT_S, read_timeout=READ_TIMEOUT_S, retries={"mode": "standard"}
    )
    client: SageMakerClient = bounded(boto3.client("sagemaker", region_name=region, config=config))
    return client


class UnexpectedReply(Exception):
    """A SageMaker reply without a field this program needs, or with a field of the wrong type."""

    def __init__(self, operation: str, problem: str) -> None:
        super().__init__(f"unexpected {operation} reply from SageMaker: {problem}")


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
    """The DescribeAIRecommendationJob reply, or None when no such job exists."""
    try:
        response = _read(
            "DescribeAIRecommendationJob",
            lambda: client.describe_ai_recommendation_job(AIRecommendationJobName=name),
        )
    except ClientError as error:
        if is_not_found(error):
            return None
        raise
    if not isinstance(response, Mapping):
        raise UnexpectedReply("DescribeAIRecommendationJob", "not a JSON object")
    status = response.get("AIRecommendationJobStatus")
    if not isinstance(status, str) or not status:
        raise UnexpectedReply("DescribeAIRecommendationJob", "no AIRecommendationJobStatus")
    return response


def start_job(
    client: SageMakerClient,
    names: JobNames,
    settings: OptimizeSettings,
    engine: str,
    stack: str,
) -> None:
    """Create the workload config (with the dataset, if any) and the job, both tagged with the
    stack.

    A workload config that already exists under our hashed name comes from an interrupted run
    with the same inputs, so it is reused.
    """
    created = True
    try:
        request = workload_config_request(names, settings, stack)
        _read("CreateAIWorkloadConfig", lambda: client.create_ai_workload_config(**request))
    except ClientError as error:
        if error_code(error) != "ResourceInUse":
            raise
        created = False
    try:
        job_request = recommendation_job_request(names, settings, engine, stack)
        _read(
            "CreateAIRecommendationJob",
            lambda: client.create_ai_recommendation_job(**job_request),
        )
    except ClientError:
        if created:  # leave nothing behind when the job cannot start
            delete_workload_config(client, names.workload_config)
        raise


def stop_job(client: SageMakerClient, name: str) -> None:
    try:
        _read(
            "StopAIRecommendationJob",
            lambda: client.stop_ai_recommendation_job(AIRecommendationJobName=name),
        )
    except ClientError as error:
        if not is_not_found(error):
            raise


def delete_job(client: SageMakerClient, name: str) -> None:
    """Delete a job in a terminal state; a job that is already gone is fine."""
    try:
        _read(
            "DeleteAIRecommendationJob",
            lambda: client.delete_ai_recommendation_job(AIRecommendationJobName=name),
        )
    except ClientError as error:
        if not is_not_found(error):
            raise


def delete_workload_config(client: SageMakerClient, name: str) -> None:
    try:
        _read(
            "DeleteAIWorkloadConfig",
            lambda: client.delete_ai_workload_config(AIWorkloadConfigName=name),
        )
    except ClientError as error:
        if not is_not_found(error):
            raise


MAX_DESCRIBED = 200  # candidate jobs described to find a stack's own (their tags)


def list_jobs(
    client: SageMakerClient, name_contains: str | None = None, limit: int = 50
) -> list[JobSummary]:
    """Newest first, across pages, at most `limit` jobs."""
    return list(islice(_newest_first(client, name_contains, None), limit))


def stack_jobs(
    client: SageMakerClient, stack: str, status: JobStatus | None = None
) -> Iterator[JobSummary]:
    """Jobs tagged `mlcc:stack: <stack>` (and in `status`, if given), newest first, lazily.

    The name filter only narrows the candidates; each one is described and kept when its tag
    equals `stack` exactly. At most MAX_DESCRIBED candidates, the newest, are described: a
    listing that names thousands of jobs costs minutes of calls, not hours.
    """
    candidates = islice(_newest_first(client, stack_name_filter(stack), status), MAX_DESCRIBED)
    return (job for job in candidates if job_stack(client, job.name) == stack)


def job_stack(client: SageMakerClient, name: str) -> str | None:
    """The stack a job was started for (its `mlcc:stack` tag), or None."""
    response = describe_job(client, name)
    return stack_of(client, response) if response is not None else None


def stack_of(client: SageMakerClient, described: Mapping[str, Any]) -> str | None:
    """The `mlcc:stack` tag of a described job. A reply without a Tags member (the API may
    leave it out) is completed by ListTags on the job's ARN."""
    if "Tags" in described:
        return tagged_stack(described["Tags"])
    arn = described.get("AIRecommendationJobArn")
    if not isinstance(arn, str) or not JOB_ARN_PATTERN.fullmatch(arn):
        return None
    reply = _read("ListTags", lambda: client.list_tags(ResourceArn=arn))
    return tagged_stack(reply.get("Tags")) if isinstance(reply, Mapping) else None


def _newest_first(
    client: SageMakerClient, name_contains: str | None, status: JobStatus | None
) -> Iterator[JobSummary]:
    query: dict[str, Any] = {"SortBy": "CreationTime", "SortOrder": "Descending"}
    if name_contains:
        query["NameContains"] = name_contains
    if status:
        query["StatusEquals"] = status.value
    listed = pages(client, "list_ai_recommendation_jobs", **query)
    while (page := _read("ListAIRecommendationJobs", lambda: next(listed, None))) is not None:
        entries = page.get("AIRecommendationJobs")
        if not isinstance(entries, list):
            raise UnexpectedReply("ListAIRecommendationJobs", "no AIRecommendationJobs list")
        yield from (_summary(entry) for entry in entries)


def _read(operation: str, call: Callable[[], Any]) -> Any:
    """Make one client call. botocore's parser raises AttributeError, TypeError, ValueError,
    OverflowError or RuntimeError (a timestamp of 1e20 seconds: "Unable to calculate correct
    timezone offset"; JSON nested too deep) on a reply whose fields have the wrong JSON types or
    values; that becomes UnexpectedReply, as does an answer the bounds refuse."""
    try:
        return call()
    except PaginationError:  # botocore's: the same NextToken twice in a row (not shown: any size)
        raise UnexpectedReply(operation, "its pages repeat (the same NextToken twice)") from None
    except AnswerProblem as problem:
        raise UnexpectedReply(operation, str(problem)) from None
    except (AttributeError, TypeError, ValueError, OverflowError, RuntimeError) as failure:
        reason = " ".join(str(failure).split())[:200]
        raise UnexpectedReply(operation, f"botocore cannot read it ({reason})") from failure


def _summary(entry: Any) -> JobSummary:
    fields = entry if isinstance(entry, Mapping) else {}
    name, status = fields.get("AIRecommendationJobName"), fields.get("AIRecommendationJobStatus")
    if not isinstance(name, str) or not isinstance(status, str):
        raise UnexpectedReply(
            "ListAIRecommendationJobs",
            "an entry lacks AIRecommendationJobName or AIRecommendationJobStatus",
        )
    if job_name_problem(name):  # the model's AIEntityName: at most 63 letters, digits, hyphens
        raise UnexpectedReply(
            "ListAIRecommendationJobs", f"an entry's name is not a job name ({name[:80]!r})"
        )
    return JobSummary(name, status, _time(fields.get("CreationTime")), _time(fields.get("EndTime")))


def _time(value: Any) -> datetime | None:
    return value if isinstance(value, datetime) else None
