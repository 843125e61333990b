"""`mlcc optimize` against a local SageMaker endpoint: the command line run in this process
(`mlcc.cli.main`), and as a process (`python -m mlcc`) where the process is the subject.

boto3 finds the endpoint through AWS_ENDPOINT_URL_SAGEMAKER, exactly as a user would point it
elsewhere. The endpoint checks every request against the botocore model (tests/local_aws.py)
and answers with scripted replies, well-formed or not. Whatever comes back, the command must end
with one line on stderr and a documented exit code, never a traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from hostile_files import Outcome, in_process
from local_aws import LocalAWS, Reply, error, local_aws
from recommendation_stubs import MODEL_S3_URI, ROLE_ARN, eagle3_recommendation, job_arn

from mlcc.config.aws.rules import boto3_session
from mlcc.recommendation.names import STACK_TAG, stack_name_filter

REPO = Path(__file__).resolve().parents[2]
STACK_FILE = f"""\
config:\r
  aws:region: us-east-1\r
  hp:engine: vllm\r
  hp:optimize:\r
    goal: latency\r
    modelS3Uri: {MODEL_S3_URI}\r
    roleArn: {ROLE_ARN}\r
  # Speculative keys go above this closing comment.\r
"""
CREATED = 1_796_212_800  # epoch seconds, as the JSON protocol sends timestamps


@pytest.fixture
def endpoint() -> Iterator[LocalAWS]:
    with local_aws() as fake:
        yield fake
        assert fake.violations == []


def client_env(endpoint: LocalAWS) -> dict[str, str]:
    """The AWS settings of every run: the local endpoint, dummy keys, no AWS config files."""
    return {
        "AWS_ENDPOINT_URL_SAGEMAKER": endpoint.url,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_MAX_ATTEMPTS": "2",
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    }


def run_process(
    endpoint: LocalAWS, project: Path, *args: str, stdout: Any = subprocess.PIPE
) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(REPO), **client_env(endpoint)}
    return subprocess.run(
        [sys.executable, "-m", "mlcc", "optimize", *args],
        cwd=project,
        env=env,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        check=False,
    )


RunCli = Callable[..., Outcome]


def fresh_session() -> boto3.Session:
    """A default session as a new process starts with (boto3's reads the environment and the
    AWS config files once), with the parsed service models of the process: they never change."""
    return boto3_session()


@pytest.fixture
def run_cli(endpoint: LocalAWS, project: Path, monkeypatch: pytest.MonkeyPatch) -> RunCli:
    """`mlcc optimize args...` in this process, in the project folder, with only the AWS
    settings of `client_env` (none of the environment's own)."""
    for name in [name for name in os.environ if name.startswith("AWS_")]:
        monkeypatch.delenv(name)
    for name, value in client_env(endpoint).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", fresh_session())

    def run(*args: str) -> Outcome:
        return in_process("optimize", *args, cwd=project)

    return run


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "Pulumi.dev.yaml").write_bytes(STACK_FILE.encode())
    return tmp_path


def summary(name: str, status: str = "Completed") -> dict[str, Any]:
    return {
        "AIRecommendationJobName": name,
        "AIRecommendationJobArn": job_arn(name),
        "AIRecommendationJobStatus": status,
        "CreationTime": CREATED,
    }


def described(name: str, stack: str | None, recommendations: list[Any] | None = None) -> Reply:
    body: dict[str, Any] = {
        **summary(name),
        "ModelSource": {"S3": {"S3Uri": MODEL_S3_URI}},
        "OutputConfig": {"S3OutputLocation": "s3://models-bucket/out/"},
        "AIWorkloadConfigIdentifier": name,
        "RoleArn": ROLE_ARN,
        "Recommendations": recommendations or [],
    }
    if stack is not None:
        body["Tags"] = [{"Key": STACK_TAG, "Value": stack}]
    return Reply(body=body)


def tagged_jobs(
    endpoint: LocalAWS, owners: dict[str, str | None], listed_tags: str | None = None
) -> None:
    """List every job in `owners`; describing one gives its tag (and an eagle3 result). An
    untagged job has no Tags in its description; ListTags then gives `listed_tags`."""
    tags = [] if listed_tags is None else [{"Key": STACK_TAG, "Value": listed_tags}]
    endpoint.on("ListTags", Reply(body={"Tags": tags}))
    endpoint.on(
        "ListAIRecommendationJobs",
        Reply(body={"AIRecommendationJobs": [summary(name) for name in owners]}),
    )
    endpoint.on(
        "DescribeAIRecommendationJob",
        lambda request: described(
            request["AIRecommendationJobName"],
            owners[request["AIRecommendationJobName"]],
            [eagle3_recommendation()],
        ),
    )


def assert_one_clean_line(result: Outcome, code: int) -> str:
    assert result.code == code, result.err
    assert "Traceback" not in result.err
    lines = [line for line in result.err.splitlines() if not line.startswith("note:")]
    assert len(lines) == 1, result.err
    return lines[0]


def test_start_sends_tagged_requests_the_model_accepts(endpoint: LocalAWS, run_cli: RunCli) -> None:
    endpoint.on("CreateAIWorkloadConfig", Reply(body={"AIWorkloadConfigArn": job_arn("w")}))
    endpoint.on("CreateAIRecommendationJob", Reply(body={"AIRecommendationJobArn": job_arn("j")}))
    result = run_cli("--stack", "dev")
    assert result.code == 0, result.err
    assert endpoint.operations() == ["CreateAIWorkloadConfig", "CreateAIRecommendationJob"]
    for _, request in endpoint.requests:
        assert request["Tags"] == [{"Key": STACK_TAG, "Value": "dev"}]
    job = endpoint.requests[1][1]["AIRecommendationJobName"]
    assert job.startswith(stack_name_filter("dev")) and job in result.out


def test_list_shows_only_jobs_tagged_with_the_stack(endpoint: LocalAWS, run_cli: RunCli) -> None:
    tagged_jobs(endpoint, {"job-a": "dev", "job-b": "dev-latency", "job-c": None, "job-d": "dev"})
    result = run_cli("--list", "--stack", "dev", "--json")
    assert result.code == 0, result.err
    assert [row["name"] for row in json.loads(result.out)] == ["job-a", "job-d"]
    listed = endpoint.requests[0][1]
    assert listed["NameContains"] == stack_name_filter("dev")


def test_a_long_stack_name_keeps_its_jobs(
    endpoint: LocalAWS, project: Path, run_cli: RunCli
) -> None:
    stack = "production-europe-west-llama-3-70b-instruct-speculative"
    (project / f"Pulumi.{stack}.yaml").write_bytes(STACK_FILE.encode())
    tagged_jobs(endpoint, {"long-job": stack, "other": stack[:-1]})
    result = run_cli("--list", "--stack", stack, "--json")
    assert [row["name"] for row in json.loads(result.out)] == ["long-job"]


def test_apply_top_writes_above_the_closing_comment_with_crlf(
    endpoint: LocalAWS, project: Path, run_cli: RunCli
) -> None:
    tagged_jobs(endpoint, {"job-of-dev-latency": "dev-latency", "job-of-dev": "dev"})
    result = run_cli("--apply", "top", "--stack", "dev")
    assert result.code == 0, result.err
    assert "applied the top recommendation of job-of-dev" in result.out
    text = (project / "Pulumi.dev.yaml").read_bytes().decode()
    assert text == STACK_FILE.replace(
        "  # Speculative keys",
        "  hp:speculativeAlgorithm: eagle3\r\n"
        "  hp:speculativeModel: yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\r\n"
        "  hp:speculativeNumTokens: 4\r\n"
        "  # Speculative keys",
    )
    assert endpoint.requests[0][1]["StatusEquals"] == "Completed"


def test_list_into_a_closed_pipe_ends_quietly(endpoint: LocalAWS, project: Path) -> None:
    tagged_jobs(endpoint, {f"job-{index}": None for index in range(50)})
    reader, writer = os.pipe()
    os.close(reader)  # like `| head` that has already exited
    try:
        result = run_process(
            endpoint, project, "--list", "--json", "--region", "us-east-1", stdout=writer
        )
    finally:
        os.close(writer)
    assert result.returncode == 0
    assert result.stderr == ""


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (error("ThrottlingException", "Rate exceeded"), "AWS error: "),
        (error("InternalFailure", "boom", 500), "AWS error: "),
        (Reply(200, b"<html>not json</html>"), "unexpected ListAIRecommendationJobs reply"),
        (Reply(body={}), "unexpected ListAIRecommendationJobs reply"),
        (Reply(body={"AIRecommendationJobs": "many"}), "botocore cannot read it"),
        (Reply(body={"AIRecommendationJobs": [{"Name": "x"}]}), "an entry lacks"),
        (Reply(body={"AIRecommendationJobs": [None]}), "an entry lacks"),
        (
            Reply(body={"AIRecommendationJobs": [{**summary("x"), "CreationTime": "soon"}]}),
            "Invalid timestamp",
        ),
    ],
)
def test_any_list_reply_ends_in_one_line(
    endpoint: LocalAWS, run_cli: RunCli, reply: Reply, expected: str
) -> None:
    endpoint.on("ListAIRecommendationJobs", reply)
    result = run_cli("--list", "--region", "us-east-1")
    line = assert_one_clean_line(result, 1)
    assert line.startswith("mlcc optimize: ") and expected in line


@pytest.mark.parametrize(
    "reply",
    [
        Reply(body={}),
        Reply(body={"AIRecommendationJobStatus": 7}),
        Reply(body={"AIRecommendationJobStatus": "Completed", "Recommendations": "none"}),
        Reply(
            body={
                "AIRecommendationJobStatus": "Completed",
                "Recommendations": [{"OptimizationDetails": [{"OptimizationConfig": 3}]}],
            }
        ),
        Reply(200, b"{"),
        error("ResourceNotFound", "no such job"),
    ],
)
def test_any_describe_reply_ends_cleanly(endpoint: LocalAWS, run_cli: RunCli, reply: Reply) -> None:
    endpoint.on("DescribeAIRecommendationJob", reply)
    result = run_cli("--show", "some-job", "--region", "us-east-1")
    assert "Traceback" not in result.err
    if result.code != 0:
        assert_one_clean_line(result, 1)


@pytest.mark.parametrize(
    "args", [["--show", "my_job"], ["--wait", "--job=-x"], ["--apply", "a" * 64]]
)
def test_a_job_name_the_api_would_reject_is_never_sent(
    endpoint: LocalAWS, run_cli: RunCli, args: list[str]
) -> None:
    result = run_cli(*args, "--stack", "dev")
    line = assert_one_clean_line(result, 2)
    assert "is not a recommendation job name" in line
    assert endpoint.requests == []


def test_tags_missing_from_describe_are_read_with_list_tags(
    endpoint: LocalAWS, run_cli: RunCli
) -> None:
    tagged_jobs(endpoint, {"job-a": None}, listed_tags="dev")
    result = run_cli("--list", "--stack", "dev", "--json")
    assert [row["name"] for row in json.loads(result.out)] == ["job-a"]
    assert endpoint.requests[-1] == ("ListTags", {"ResourceArn": job_arn("job-a")})
