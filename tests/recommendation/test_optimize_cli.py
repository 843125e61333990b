"""`mlcc optimize`: start, wait, list, show and apply, against a stubbed sagemaker client."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from botocore.stub import ANY, Stubber
from recommendation_stubs import (
    CREATED,
    DATASET_S3_URI,
    EAGLE3_DRAFT,
    MODEL_S3_URI,
    ROLE_ARN,
    FakeClock,
    eagle3_recommendation,
    expect_describe,
    expect_describe_missing,
    expect_stop,
    job_arn,
    kernel_tuning_detail,
    recommendation,
    sagemaker_client,
    speculative_detail,
    workload_arn,
)

from mlcc.cli import build_parser
from mlcc.cli.optimize import command as cli
from mlcc.cli.optimize import context as optimize_context
from mlcc.recommendation.names import stack_name_filter

JOB = "hp-dev-latency-0123456789"

STACK_FILE = """\
# The dev stack. Comments, order and quoting must survive --apply.
config:
  aws:region: us-east-1
  hp:engine: vllm   # the serving engine
  hp:model: "meta-llama/Llama-3.1-8B-Instruct"
  hp:instanceType: ml.g5.12xlarge

  # Speculative decoding, chosen by hand before the recommendation ran.
  hp:speculativeAlgorithm: ngram
  # A draft left over from an experiment.
  hp:speculativeModel: 'org/old-draft'
  hp:speculativeNumTokens: 3
  hp:optimize:
    goal: latency
    modelS3Uri: s3://models-bucket/llama-3.1-8b-instruct/
    roleArn: arn:aws:iam::123456789012:role/SageMakerRecommendation
    dataset: s3://data-bucket/datasets/sharegpt/
    instanceTypes:
      - ml.g6e.2xlarge
    timeoutMinutes: 60
  hp:hfToken:
    secure: v1:AAAABBBBCCCC
  hp:engineArgs:
    max-model-len: 8192   # context
    enable-prefix-caching: true
  # closing comment
"""


class Env:
    def __init__(self, project_dir: Path) -> None:
        self.client = sagemaker_client()
        self.stubber = Stubber(self.client)
        self.clock = FakeClock()
        self.regions: list[str | None] = []
        self.out, self.err = io.StringIO(), io.StringIO()
        self.project_dir = project_dir
        self.stack_path = project_dir / "Pulumi.dev.yaml"
        self.stack_path.write_text(STACK_FILE)

    def factory(self, region: str | None) -> Any:
        self.regions.append(region)
        return self.client

    def run(self, *argv: str, sleep: Any = None) -> int:
        args = build_parser().parse_args(["optimize", *argv])
        deps = cli.Deps(
            client_factory=self.factory,
            clock=self.clock,
            sleep=sleep or self.clock.sleep,
            now=lambda: datetime(2026, 12, 2, 13, 0, tzinfo=UTC),
            project_dir=self.project_dir,
            out=self.out,
            err=self.err,
        )
        return cli.execute(args, deps)


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    monkeypatch.setenv("AWS_REGION", "us-west-2")  # the stack's aws:region wins over it
    e = Env(tmp_path)
    with e.stubber:
        yield e
        e.stubber.assert_no_pending_responses()


def describe_eagle3(env: Env, name: str = JOB, stack: str | None = "dev") -> None:
    expect_describe(
        env.stubber, name, "Completed", recommendations=[eagle3_recommendation()], stack=stack
    )


def describe_tagged(env: Env, name: str, status: str, stack: str | None) -> None:
    expect_describe(env.stubber, name, status, stack=stack)


def list_page(names_status: list[tuple[str, str]], token: str | None = None) -> dict[str, Any]:
    page: dict[str, Any] = {
        "AIRecommendationJobs": [
            {
                "AIRecommendationJobName": name,
                "AIRecommendationJobArn": job_arn(name),
                "AIRecommendationJobStatus": status,
                "CreationTime": CREATED,
            }
            for name, status in names_status
        ]
    }
    if token:
        page["NextToken"] = token
    return page


LIST_QUERY = {
    "SortBy": "CreationTime",
    "SortOrder": "Descending",
    "NameContains": stack_name_filter("dev"),
}
COMPLETED_QUERY = {**LIST_QUERY, "StatusEquals": "Completed"}


def changed_lines(before: str, after: str) -> tuple[list[str], list[str]]:
    old, new = before.splitlines(), after.splitlines()
    return [line for line in old if line not in new], [line for line in new if line not in old]


# -- --apply -------------------------------------------------------------------------------------


def test_apply_rewrites_only_the_three_keys(env: Env) -> None:
    describe_eagle3(env)
    assert env.run("--apply", JOB, "--stack", "dev") == 0
    after = env.stack_path.read_text()
    removed, added = changed_lines(STACK_FILE, after)
    assert removed == [
        "  hp:speculativeAlgorithm: ngram",
        "  hp:speculativeModel: 'org/old-draft'",
        "  hp:speculativeNumTokens: 3",
    ]
    assert added == [
        "  hp:speculativeAlgorithm: eagle3",
        f"  hp:speculativeModel: '{EAGLE3_DRAFT}'",  # the key's quoting style is kept
        "  hp:speculativeNumTokens: 4",
    ]
    assert len(after.splitlines()) == len(STACK_FILE.splitlines())
    assert "hp:speculativeAlgorithm: 'eagle3' (was 'ngram')" in env.out.getvalue()
    assert env.regions == ["us-east-1"]


def test_apply_to_the_projects_dev_stack_changes_only_the_three_keys(env: Env) -> None:
    original = (Path(__file__).parents[2] / "Pulumi.dev.yaml").read_text()
    env.stack_path.write_text(original)
    detail = speculative_detail(
        {"method": "draft_model", "draft_model": "meta-llama/Llama-3.2-1B-Instruct"}
    )
    expect_describe(
        env.stubber, JOB, "Completed", recommendations=[recommendation([detail])], stack="dev"
    )
    assert env.run("--apply", JOB, "--stack", "dev") == 0
    after = env.stack_path.read_text()
    removed, added = changed_lines(original, after)
    assert {line.split(":")[1] for line in removed} <= {
        "speculativeAlgorithm",
        "speculativeModel",
        "speculativeNumTokens",
    }
    assert "  hp:speculativeAlgorithm: draft-model" in added
    assert "  hp:speculativeModel: meta-llama/Llama-3.2-1B-Instruct" in added
    assert len(after.splitlines()) == len(original.splitlines())


def test_apply_twice_is_stable(env: Env) -> None:
    describe_eagle3(env)
    describe_eagle3(env)
    assert env.run("--apply", JOB, "--stack", "dev") == 0
    once = env.stack_path.read_text()
    assert env.run("--apply", JOB, "--stack", "dev") == 0
    assert env.stack_path.read_text() == once
    assert "(unchanged)" in env.out.getvalue()


def test_apply_adds_missing_keys_at_the_end_of_config(env: Env) -> None:
    env.stack_path.write_text("config:\n  hp:model: org/target  # target\n")
    describe_eagle3(env)
    assert env.run("--apply", JOB, "--stack", "dev") == 0
    assert env.stack_path.read_text() == (
        "config:\n"
        "  hp:model: org/target  # target\n"
        "  hp:speculativeAlgorithm: eagle3\n"
        f"  hp:speculativeModel: {EAGLE3_DRAFT}\n"
        "  hp:speculativeNumTokens: 4\n"
    )


def test_apply_updates_bare_keys_in_place(env: Env) -> None:
    env.stack_path.write_text("config:\n  speculativeAlgorithm: ngram\n  hp:model: org/target\n")
    describe_eagle3(env)
    assert env.run("--apply", JOB, "--stack", "dev") == 0
    text = env.stack_path.read_text()
    assert text.startswith("config:\n  speculativeAlgorithm: eagle3\n  hp:model: org/target\n")
    assert "hp:speculativeAlgorithm" not in text


def test_apply_without_draft_algorithm_clears_the_model(env: Env) -> None:
    expect_describe(
        env.stubber,
        JOB,
        "Completed",
        recommendations=[recommendation([speculative_detail({"method": "ngram"})])],
        stack="dev",
    )
    assert env.run("--apply", JOB, "--stack", "dev") == 0
    text = env.stack_path.read_text()
    assert "  hp:speculativeModel: ''\n" in text
    assert "  hp:speculativeNumTokens: 5\n" in text  # no count given: the project default


def test_apply_top_takes_the_newest_completed_job_tagged_with_the_stack(env: Env) -> None:
    env.stubber.add_response(
        "list_ai_recommendation_jobs",
        list_page([("job-of-dev-latency", "Completed"), ("untagged-job", "Completed")], "next"),
        COMPLETED_QUERY,
    )
    describe_tagged(env, "job-of-dev-latency", "Completed", "dev-latency")  # not a prefix match
    describe_tagged(env, "untagged-job", "Completed", None)
    env.stubber.add_response(  # Describe left Tags out: ask ListTags
        "list_tags", {"Tags": []}, {"ResourceArn": job_arn("untagged-job")}
    )
    env.stubber.add_response(
        "list_ai_recommendation_jobs",
        list_page([(JOB, "Completed"), ("older-dev-job", "Completed")]),
        {**COMPLETED_QUERY, "NextToken": "next"},
    )
    describe_eagle3(env)  # its tag
    describe_eagle3(env)  # its result; older jobs are never looked at
    assert env.run("--apply", "top", "--stack", "dev") == 0
    assert f"applied the top recommendation of {JOB}" in env.out.getvalue()
    assert "note:" not in env.err.getvalue()


def test_apply_of_another_stacks_job_says_so(env: Env) -> None:
    describe_eagle3(env, stack="dev-latency")
    assert env.run("--apply", JOB, "--stack", "dev") == 0
    assert f"note: {JOB} was started for stack dev-latency" in env.err.getvalue()


def test_apply_top_without_completed_jobs_refuses(env: Env) -> None:
    env.stubber.add_response("list_ai_recommendation_jobs", list_page([]), COMPLETED_QUERY)
    assert env.run("--apply", "top", "--stack", "dev") == 1
    assert "no completed recommendation job for stack dev" in env.err.getvalue()


def test_apply_refuses_when_there_is_no_speculative_config(env: Env) -> None:
    expect_describe(
        env.stubber,
        JOB,
        "Completed",
        recommendations=[recommendation([kernel_tuning_detail()])],
        stack="dev",
    )
    assert env.run("--apply", JOB, "--stack", "dev") == 1
    assert env.stack_path.read_text() == STACK_FILE
    message = env.err.getvalue()
    assert "no speculative recommendation" in message and "KernelTuning" in message
    assert "Pulumi.dev.yaml left unchanged" in message


def test_apply_refuses_a_draft_that_is_not_a_hub_id(env: Env) -> None:
    detail = speculative_detail({"method": "eagle3", "draft_model": "s3://out/job/eagle-head/"})
    expect_describe(
        env.stubber, JOB, "Completed", recommendations=[recommendation([detail])], stack="dev"
    )
    assert env.run("--apply", JOB, "--stack", "dev") == 1
    assert env.stack_path.read_text() == STACK_FILE
    assert "not a Hugging Face model id" in env.err.getvalue()


def test_apply_refuses_a_job_that_failed(env: Env) -> None:
    expect_describe(env.stubber, JOB, "Failed", failure_reason="ResourceLimitExceeded for g6e")
    assert env.run("--apply", JOB, "--stack", "dev") == 1
    assert "is Failed: ResourceLimitExceeded for g6e; nothing applied" in env.err.getvalue()
    assert env.stack_path.read_text() == STACK_FILE


def test_apply_refuses_a_recommendation_the_stack_cannot_use(env: Env) -> None:
    # Every supported release runs the seed's algorithms (the release check itself:
    # tests/recommendation/test_recommendation_choice.py); an EAGLE-3 recommendation without
    # its head is refused before the stack file is touched.
    env.stack_path.write_text(
        "config:\n  hp:engine: sglang\n  hp:engineVersion: 0.5.17\n"
        "  hp:speculativeAlgorithm: eagle\n"
    )
    expect_describe(
        env.stubber,
        JOB,
        "Completed",
        recommendations=[recommendation([speculative_detail({"method": "eagle3"})])],
        stack="dev",
    )
    assert env.run("--apply", JOB, "--stack", "dev") == 1
    assert "eagle3 needs a draft model" in env.err.getvalue()
    assert env.err.getvalue().rstrip().endswith("Pulumi.dev.yaml left unchanged")


def test_apply_needs_a_stack(env: Env) -> None:
    assert env.run("--apply", JOB) == 2
    assert "--apply needs --stack" in env.err.getvalue()


def test_apply_to_a_missing_stack_file_is_a_usage_error(env: Env) -> None:
    assert env.run("--apply", JOB, "--stack", "prod") == 2
    assert "no stack file Pulumi.prod.yaml" in env.err.getvalue()


# -- --list / --show ------------------------------------------------------------------------------


def test_list_shows_every_page_with_status(env: Env) -> None:
    query = {"SortBy": "CreationTime", "SortOrder": "Descending"}
    env.stubber.add_response(
        "list_ai_recommendation_jobs", list_page([(JOB, "Completed")], token="t"), query
    )
    env.stubber.add_response(
        "list_ai_recommendation_jobs",
        list_page([("other-job", "Failed")]),
        {**query, "NextToken": "t"},
    )
    assert env.run("--list", "--region", "eu-west-1") == 0
    lines = env.out.getvalue().splitlines()
    assert lines[0].split() == ["JOB", "STATUS", "CREATED"]
    assert lines[1].split()[:2] == [JOB, "Completed"]
    assert lines[2].split()[:2] == ["other-job", "Failed"]
    assert env.regions == ["eu-west-1"]
    assert "note:" not in env.err.getvalue()


def test_an_undocumented_region_gets_a_note(env: Env) -> None:
    env.stubber.add_response(
        "list_ai_recommendation_jobs",
        list_page([]),
        {"SortBy": "CreationTime", "SortOrder": "Descending"},
    )
    assert env.run("--list", "--region", "sa-east-1") == 0
    assert "note: sa-east-1 is not among the regions the dev guide lists" in env.err.getvalue()


def test_list_for_a_stack_keeps_only_its_tag_and_can_print_json(env: Env) -> None:
    env.stubber.add_response(
        "list_ai_recommendation_jobs",
        list_page([(JOB, "InProgress"), ("dev-eu-job", "Completed"), ("gone", "Failed")]),
        LIST_QUERY,
    )
    describe_tagged(env, JOB, "InProgress", "dev")
    describe_tagged(env, "dev-eu-job", "Completed", "dev-eu")
    expect_describe_missing(env.stubber, "gone")  # deleted between the two calls
    assert env.run("--list", "--stack", "dev", "--json") == 0
    rows = json.loads(env.out.getvalue())
    assert rows == [
        {"name": JOB, "status": "InProgress", "created": CREATED.isoformat(), "ended": ""}
    ]


def test_show_prints_each_recommendation(env: Env) -> None:
    expect_describe(
        env.stubber,
        JOB,
        "Completed",
        recommendations=[eagle3_recommendation(), recommendation([kernel_tuning_detail()])],
    )
    assert env.run("--show", JOB, "--region", "us-east-1") == 0
    text = env.out.getvalue()
    assert text.startswith(f"{JOB}: Completed\n")
    assert "recommendation 1 (top): ml.g6e.2xlarge with speculative decoding" in text
    assert f"speculative:    algorithm=eagle3 draft={EAGLE3_DRAFT} tokens=4" in text
    assert "expected:       ttft-ms (p50): 182.5 ms; throughput: 1450 tokens/s" in text
    assert "recommendation 2:" in text
    assert "no speculative recommendation: the top recommendation applies no" in text


def test_show_json(env: Env) -> None:
    describe_eagle3(env)
    assert env.run("--show", JOB, "--json") == 0
    document = json.loads(env.out.getvalue())
    assert document["status"] == "Completed"
    assert document["recommendations"][0]["algorithm"] == "eagle3"


def test_show_a_failed_job_gives_the_reason_and_exit_1(env: Env) -> None:
    expect_describe(env.stubber, JOB, "Failed", failure_reason="Model artifacts not found")
    assert env.run("--show", JOB) == 1
    assert env.out.getvalue() == f"{JOB}: Failed: Model artifacts not found\n"


def test_show_a_running_job_says_how_to_wait(env: Env) -> None:
    expect_describe(env.stubber, JOB, "InProgress")
    assert env.run("--show", JOB) == 0
    assert f"mlcc optimize --wait --job {JOB}" in env.out.getvalue()
    assert env.regions == ["us-west-2"]


def test_show_an_unknown_job(env: Env) -> None:
    expect_describe_missing(env.stubber, JOB)
    assert env.run("--show", JOB) == 1
    assert f"no recommendation job named {JOB}" in env.err.getvalue()


# -- start / wait ---------------------------------------------------------------------------------


def expect_start_any_name(env: Env, dataset: str | None = DATASET_S3_URI) -> None:
    workload: dict[str, Any] = {
        "AIWorkloadConfigName": ANY,
        "AIWorkloadConfigs": {"WorkloadSpec": {"Inline": '{"benchmark":{"type":"aiperf"}}'}},
        "Tags": [{"Key": "mlcc:stack", "Value": "dev"}],
    }
    if dataset:
        workload["DatasetConfig"] = {
            "InputDataConfig": [
                {"ChannelName": "dataset", "DataSource": {"S3DataSource": {"S3Uri": dataset}}}
            ]
        }
    env.stubber.add_response(
        "create_ai_workload_config", {"AIWorkloadConfigArn": workload_arn("wl")}, workload
    )
    env.stubber.add_response(
        "create_ai_recommendation_job",
        {"AIRecommendationJobArn": job_arn("job")},
        {
            "AIRecommendationJobName": ANY,
            "ModelSource": {"S3": {"S3Uri": MODEL_S3_URI}},
            "OutputConfig": {"S3OutputLocation": "s3://models-bucket/mlcc-recommendations/"},
            "AIWorkloadConfigIdentifier": ANY,
            "PerformanceTarget": {"Constraints": [{"Metric": "throughput"}]},
            "RoleArn": ROLE_ARN,
            "OptimizeModel": True,
            "InferenceSpecification": {"Framework": "VLLM"},
            "ComputeSpec": {"InstanceTypes": ["ml.g6e.2xlarge"]},
            "Tags": [{"Key": "mlcc:stack", "Value": "dev"}],
        },
    )


def started_job(env: Env) -> str:
    first = env.out.getvalue().splitlines()[0]
    assert first.startswith("started ")
    return first.split()[1]


def test_start_uses_stack_settings_with_flag_overrides(env: Env) -> None:
    expect_start_any_name(env)
    assert env.run("--stack", "dev", "--goal", "throughput") == 0
    name = started_job(env)
    assert name.startswith(stack_name_filter("dev") + "dev-throughput-") and len(name) <= 63
    assert "(goal throughput -> throughput)" in env.out.getvalue()
    assert f"mlcc optimize --wait --job {name}" in env.err.getvalue()
    assert f"mlcc optimize --apply {name} --stack dev" in env.err.getvalue()


def test_start_and_wait_shows_progress_then_results(env: Env) -> None:
    expect_start_any_name(env, dataset="s3://data-bucket/other/")
    # The job name is only known once started; describe calls are validated without params.
    for status in ("InProgress", "InProgress"):
        env.stubber.add_response(
            "describe_ai_recommendation_job", describe_response_for("any", status)
        )
    env.stubber.add_response(
        "describe_ai_recommendation_job",
        describe_response_for("any", "Completed", [eagle3_recommendation()]),
    )
    code = env.run(
        "--stack", "dev", "--goal", "throughput", "--dataset", "s3://data-bucket/other/", "--wait"
    )
    assert code == 0
    name = started_job(env)
    progress = [line for line in env.err.getvalue().splitlines() if "elapsed" in line]
    assert progress == [
        f"{name}: InProgress (0m00s elapsed)",
        f"{name}: InProgress (0m15s elapsed)",
        f"{name}: Completed (0m45s elapsed)",
    ]
    assert "speculative:    algorithm=eagle3" in env.out.getvalue()


def describe_response_for(name: str, status: str, recs: list[Any] | None = None) -> Any:
    from recommendation_stubs import describe_response

    return describe_response(name, status, recs)


def test_bad_dataset_flag_is_refused_before_any_aws_call(env: Env) -> None:
    assert env.run("--stack", "dev", "--goal", "latency", "--dataset", "hf://anon/ShareGPT") == 1
    message = env.err.getvalue()
    assert "hp:optimize.dataset: 'hf://anon/ShareGPT' is a Hugging Face reference" in message
    assert env.regions == []


def test_start_without_goal_is_a_usage_error(env: Env) -> None:
    env.stack_path.write_text("config:\n  hp:engine: vllm\n")
    assert env.run("--stack", "dev") == 2
    assert "give --goal" in env.err.getvalue()


def test_start_without_stack_is_a_usage_error(env: Env) -> None:
    assert env.run("--goal", "latency") == 2


def test_start_reports_every_missing_setting(env: Env) -> None:
    env.stack_path.write_text("config:\n  hp:engine: sglang\n")
    assert env.run("--stack", "dev", "--goal", "cost") == 1
    message = env.err.getvalue()
    assert "hp:optimize.modelS3Uri: required" in message
    assert "hp:optimize.roleArn: required" in message


def test_sglang_stack_notes_the_missing_framework(env: Env) -> None:
    env.stack_path.write_text(
        STACK_FILE.replace("hp:engine: vllm", "hp:engine: sglang").replace(
            "goal: latency", "goal: cost"
        )
    )
    env.stubber.add_response(
        "create_ai_workload_config", {"AIWorkloadConfigArn": workload_arn("w")}
    )
    env.stubber.add_response(
        "create_ai_recommendation_job",
        {"AIRecommendationJobArn": job_arn("j")},
        {
            "AIRecommendationJobName": ANY,
            "ModelSource": {"S3": {"S3Uri": MODEL_S3_URI}},
            "OutputConfig": {"S3OutputLocation": "s3://models-bucket/mlcc-recommendations/"},
            "AIWorkloadConfigIdentifier": ANY,
            "PerformanceTarget": {"Constraints": [{"Metric": "cost"}]},
            "RoleArn": ROLE_ARN,
            "OptimizeModel": True,
            "ComputeSpec": {"InstanceTypes": ["ml.g6e.2xlarge"]},
            "Tags": [{"Key": "mlcc:stack", "Value": "dev"}],
        },
    )
    assert env.run("--stack", "dev") == 0
    assert "no SGLang framework" in env.err.getvalue()


def test_ctrl_c_while_waiting_leaves_the_job_running(env: Env) -> None:
    expect_describe(env.stubber, JOB, "InProgress")

    def interrupted(_seconds: float) -> None:
        raise KeyboardInterrupt

    assert env.run("--wait", "--job", JOB, sleep=interrupted) == optimize_context.INTERRUPTED
    err = env.err.getvalue()
    assert f"interrupted: {JOB} keeps running on SageMaker." in err
    assert f"mlcc optimize --wait --job {JOB}" in err
    assert f"mlcc optimize --show {JOB}" in err


def test_wait_timeout_stops_the_job(env: Env) -> None:
    for _ in range(4):  # at 0, 15, 45 and 60 seconds
        expect_describe(env.stubber, JOB, "InProgress")
    expect_stop(env.stubber, JOB)
    assert env.run("--wait", "--job", JOB, "--timeout-minutes", "1") == 1
    assert "it has been stopped" in env.err.getvalue()
    assert env.clock.sleeps == [15.0, 30.0, 15.0]


def test_wait_timeout_must_be_positive(env: Env) -> None:
    assert env.run("--wait", "--job", JOB, "--timeout-minutes", "0") == 2
    assert "--timeout-minutes" in env.err.getvalue()


def test_wait_for_a_job_that_fails(env: Env) -> None:
    expect_describe(env.stubber, JOB, "InProgress")
    expect_describe(env.stubber, JOB, "Failed", failure_reason="Insufficient capacity")
    assert env.run("--wait", "--job", JOB, "--stack", "dev") == 1
    assert f"{JOB}: Failed: Insufficient capacity" in env.out.getvalue()


def test_unknown_goal_is_rejected_by_argparse(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as raised:
        env.run("--stack", "dev", "--goal", "fast")
    assert raised.value.code == 2
    assert "invalid choice: 'fast'" in capsys.readouterr().err


def test_modes_are_mutually_exclusive(env: Env) -> None:
    with pytest.raises(SystemExit) as raised:
        env.run("--list", "--show", JOB)
    assert raised.value.code == 2


def test_optimize_is_registered() -> None:
    modules = __import__("mlcc.cli", fromlist=["x"]).SUBCOMMAND_MODULES
    assert modules["optimize"] == "mlcc.cli.optimize.command"


def test_no_region_anywhere_is_a_usage_error(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    assert env.run("--show", JOB) == 2
    assert "no AWS region" in env.err.getvalue()
    assert env.regions == []


@pytest.mark.parametrize("stack", ["../prod", "dev stack", "x" * 101])
def test_a_stack_name_pulumi_would_refuse_is_a_usage_error(env: Env, stack: str) -> None:
    assert env.run("--list", "--stack", stack, "--region", "us-east-1") == 2
    assert "--stack: " in env.err.getvalue() and "is not a stack name" in env.err.getvalue()
    assert env.regions == []
