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
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from hostile_files import Outcome, in_process
from local_aws import LocalAWS, Reply, error, local_aws
from recommendation_stubs import MODEL_S3_URI, ROLE_ARN, eagle3_recommendation, job_arn

from mlcc.config.aws.rules import boto3_session
from mlcc.recommendation import api
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


def test_a_stack_listing_describes_at_most_the_newest_candidates(
    endpoint: LocalAWS, run_cli: RunCli
) -> None:
    """A thousand jobs whose names match the stack's, none of its own: at most MAX_DESCRIBED
    of them are described, not a call per job ever listed."""
    tagged_jobs(endpoint, {f"job-{n}": "dev-other" for n in range(1000)})
    result = run_cli("--list", "--stack", "dev", "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out) == []
    described = [r for r in endpoint.requests if "AIRecommendationJobName" in r[1]]
    assert len(described) == api.MAX_DESCRIBED


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
        # botocore's model has a structure there: the type check names the entry.
        (Reply(body={"AIRecommendationJobs": [None]}), "AIRecommendationJobs[0] is None"),
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


# -- hostile answers: pages that never end, huge answers, absurd values --------------------------


def paged(replies: dict[str | None, dict[str, Any]]) -> Callable[[dict[str, Any]], Reply]:
    """ListAIRecommendationJobs answering by the NextToken asked for (None: the first page)."""
    return lambda request: Reply(body=replies[request.get("NextToken")])


def test_a_next_token_repeated_at_once_is_one_line_not_a_traceback(
    endpoint: LocalAWS, run_cli: RunCli
) -> None:
    """The page guard sees the repeat as the page arrives, before botocore's paginator would
    raise PaginationError (naming the token, of any size): the token is not shown."""
    token = "T" * 4000
    endpoint.on(
        "ListAIRecommendationJobs",
        Reply(body={"AIRecommendationJobs": [], "NextToken": token}),
    )
    line = assert_one_clean_line(run_cli("--list", "--region", "us-east-1"), 1)
    assert line == (
        "mlcc optimize: unexpected ListAIRecommendationJobs reply from SageMaker: "
        "its pages repeat (the same NextToken after 2 pages)"
    )
    assert endpoint.operations() == ["ListAIRecommendationJobs"] * 2


def test_botocores_pagination_error_is_one_line() -> None:
    from botocore.exceptions import PaginationError

    def paginate() -> None:
        raise PaginationError(message="The same next token was received twice: " + "T" * 9000)

    with pytest.raises(api.UnexpectedReply) as raised:
        api._read("ListAIRecommendationJobs", paginate)
    assert str(raised.value) == (
        "unexpected ListAIRecommendationJobs reply from SageMaker: "
        "its pages repeat (the same NextToken twice)"
    )


def test_a_next_token_cycle_over_several_pages_ends(endpoint: LocalAWS, run_cli: RunCli) -> None:
    cycle = {None: "a", "a": "b", "b": "c", "c": "a"}
    endpoint.on(
        "ListAIRecommendationJobs",
        paged({asked: {"AIRecommendationJobs": [], "NextToken": n} for asked, n in cycle.items()}),
    )
    line = assert_one_clean_line(run_cli("--list", "--region", "us-east-1"), 1)
    assert line.endswith("its pages repeat (the same NextToken after 4 pages)")
    assert len(endpoint.calls) == 4


def test_a_thousand_pages_are_read_up_to_the_page_limit(
    endpoint: LocalAWS, run_cli: RunCli
) -> None:
    pages = {None: "t1", **{f"t{n}": f"t{n + 1}" for n in range(1, 1000)}}
    endpoint.on(
        "ListAIRecommendationJobs",
        paged({asked: {"AIRecommendationJobs": [], "NextToken": n} for asked, n in pages.items()}),
    )
    line = assert_one_clean_line(run_cli("--list", "--stack", "dev"), 1)
    assert line.endswith("the list did not end within 100 pages (stopped there)")
    assert len(endpoint.calls) == 100  # preflight's MAX_PAGES, the one page guard


def test_a_next_token_that_is_not_a_string_is_named(endpoint: LocalAWS, run_cli: RunCli) -> None:
    endpoint.on(
        "ListAIRecommendationJobs", Reply(body={"AIRecommendationJobs": [], "NextToken": 5})
    )
    line = assert_one_clean_line(run_cli("--list", "--region", "us-east-1"), 1)
    # The type check against botocore's model names it before the pager would.
    assert "NextToken is 5, where the model has a string" in line


def test_a_huge_page_is_not_read(endpoint: LocalAWS, run_cli: RunCli) -> None:
    entry = json.dumps(summary("job-a")).encode()
    body = b'{"AIRecommendationJobs": [' + b",".join([entry] * 150_000) + b"]}"
    assert len(body) > 16 * 1024 * 1024
    endpoint.on("ListAIRecommendationJobs", Reply(200, body))
    line = assert_one_clean_line(run_cli("--list", "--region", "us-east-1"), 1)
    assert line.endswith("ListAIRecommendationJobs reply from SageMaker: an answer of more "
                         "than 16 MiB (not read)")  # fmt: skip


@pytest.mark.parametrize("created", [1e20, -1e20, 10**40])
def test_a_timestamp_no_calendar_holds_is_one_line(
    endpoint: LocalAWS, run_cli: RunCli, created: float
) -> None:
    entry = {**summary("job-a"), "CreationTime": created}
    endpoint.on("ListAIRecommendationJobs", Reply(body={"AIRecommendationJobs": [entry]}))
    line = assert_one_clean_line(run_cli("--list", "--region", "us-east-1"), 1)
    assert "ListAIRecommendationJobs reply from SageMaker: botocore cannot read it" in line


def test_an_entry_whose_name_is_no_job_name_is_refused(endpoint: LocalAWS, run_cli: RunCli) -> None:
    entry = {**summary("job-a"), "AIRecommendationJobName": "x" * 100_000}
    endpoint.on("ListAIRecommendationJobs", Reply(body={"AIRecommendationJobs": [entry]}))
    line = assert_one_clean_line(run_cli("--list", "--region", "us-east-1"), 1)
    assert "an entry's name is not a job name" in line and len(line) < 300


def test_throttling_without_end_stops_after_botocores_attempts(
    endpoint: LocalAWS, run_cli: RunCli
) -> None:
    endpoint.on("ListAIRecommendationJobs", error("ThrottlingException", "Rate exceeded"))
    line = assert_one_clean_line(run_cli("--list", "--region", "us-east-1"), 1)
    assert line.startswith("mlcc optimize: AWS error: ") and "ThrottlingException" in line
    assert len(endpoint.calls) == 2  # AWS_MAX_ATTEMPTS of client_env, standard mode


def test_expired_credentials_are_one_line_and_not_retried(
    endpoint: LocalAWS, run_cli: RunCli
) -> None:
    expired = "The security token included in the request is expired"
    endpoint.on("DescribeAIRecommendationJob", error("ExpiredTokenException", expired, 400))
    line = assert_one_clean_line(run_cli("--show", "job-a", "--region", "us-east-1"), 1)
    assert line.startswith("mlcc optimize: AWS error: ") and expired in line
    assert len(endpoint.calls) == 1


def test_a_silent_endpoint_ends_at_the_read_timeout(
    endpoint: LocalAWS, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:

    monkeypatch.setattr(api, "READ_TIMEOUT_S", 0.3)
    endpoint.on("DescribeAIRecommendationJob", Reply(body={}, delay_s=30))
    start = time.monotonic()
    line = assert_one_clean_line(run_cli("--show", "job-a", "--region", "us-east-1"), 1)
    # Two attempts of 0.3 s and botocore's backoff between them (at most 1 s), with room for a
    # slow machine; far under the endpoint's 30 s.
    assert time.monotonic() - start < 15
    assert line.startswith("mlcc optimize: AWS error: Read timeout on endpoint URL")


def absurd_recommendation() -> dict[str, Any]:
    recommendation = eagle3_recommendation()
    recommendation["ExpectedPerformance"] = [
        {"Metric": "ttft-ms", "Stat": "p50", "Value": "-5", "Unit": "ms"},
        {"Metric": "ttft-ms", "Stat": "p90", "Value": "NaN", "Unit": "ms"},
        {"Metric": "throughput", "Value": "Infinity", "Unit": "tokens/s"},
        {"Metric": "cost", "Value": "cheap"},
        {"Metric": "throughput", "Stat": "p99", "Value": "9" * 5000},
        {"Metric": "ttft-ms", "Stat": "p99", "Value": "12.5", "Unit": "ms"},
    ]
    recommendation["DeploymentConfiguration"]["InstanceType"] = "ml.z9.huge"
    return recommendation


def test_absurd_expected_figures_are_shown_as_unknown(endpoint: LocalAWS, run_cli: RunCli) -> None:
    endpoint.on("DescribeAIRecommendationJob", described("job-a", "dev", [absurd_recommendation()]))
    result = run_cli("--show", "job-a", "--region", "us-east-1")
    assert result.code == 0, result.err
    expected = result.out.split("expected:", 1)[1].splitlines()[0].strip().split("; ")
    assert expected == [
        "ttft-ms (p50): unknown (the API gave '-5', a negative figure)",
        "ttft-ms (p90): unknown (the API gave 'NaN', not a finite number)",
        "throughput: unknown (the API gave 'Infinity', not a finite number)",
        "cost: unknown (the API gave 'cheap', not a number)",
        "throughput (p99): unknown (the API gave '" + "9" * 32 + "'..., too long to be a figure)",
        "ttft-ms (p99): 12.5 ms",
    ]
    assert "instance:       ml.z9.huge (not in the project's GPU table: its GPUs are unknown)" in (
        result.out
    )
    shown = run_cli("--show", "job-a", "--region", "us-east-1", "--json")
    [top] = json.loads(shown.out)["recommendations"]
    assert [m["value"] for m in top["expected_performance"]] == [None] * 5 + ["12.5"]
    assert top["expected_performance"][0]["unknown"] == "the API gave '-5', a negative figure"


def test_a_status_the_api_does_not_list_is_said_and_refused(
    endpoint: LocalAWS, run_cli: RunCli
) -> None:
    reply = described("job-a", "dev", [eagle3_recommendation()])
    assert isinstance(reply.body, dict)
    pending = {**reply.body, "AIRecommendationJobStatus": "Pending"}
    endpoint.on("DescribeAIRecommendationJob", Reply(body=pending))
    result = run_cli("--show", "job-a", "--region", "us-east-1")
    assert result.code == 1 and "Traceback" not in result.err
    assert result.out.splitlines()[:2] == [
        "job-a: Pending",
        "  a status the SageMaker API does not list (InProgress, Completed, Failed, Stopping, "
        "Stopped): no recommendations are read",
    ]


def test_a_reply_without_a_name_and_with_endless_nesting_is_read(
    endpoint: LocalAWS, run_cli: RunCli
) -> None:
    recommendation = eagle3_recommendation()
    recommendation["OptimizationDetails"][0]["OptimizationConfig"] = {
        "deep": '{"m": ' * 5000 + "1" + "}" * 5000,  # deeper than Python's stack
        "nested": '{"m": ' * 50 + '"x"' + "}" * 50,  # objects in objects, searched 4 deep
    }
    body = {"AIRecommendationJobStatus": "Completed", "Recommendations": [recommendation]}
    endpoint.on("DescribeAIRecommendationJob", Reply(body=body))
    result = run_cli("--show", "job-a", "--region", "us-east-1")
    assert "Traceback" not in result.err
    assert result.out.startswith("(a job without a name): Completed")


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("AWS_ENDPOINT_URL_SAGEMAKER", "http://[::1", "'http://[::1'"),
        ("AWS_MAX_ATTEMPTS", "abc", "'abc'"),
    ],
)
def test_aws_settings_botocore_cannot_use_are_one_line(
    run_cli: RunCli, monkeypatch: pytest.MonkeyPatch, name: str, value: str, expected: str
) -> None:
    monkeypatch.setenv(name, value)
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", fresh_session())
    line = assert_one_clean_line(run_cli("--list", "--region", "us-east-1"), 2)
    assert line == (
        f"mlcc optimize: error: cannot create a SageMaker client: {name}={expected} is not a "
        "value botocore accepts: fix or unset it"
    )
