"""The pure decisions of the deploy wait, on the statuses the operator, kubelet and scheduler
write (the stories end to end are in test_deploy_wait.py)."""

from __future__ import annotations

import deploy_samples as d
import pytest
import verify_samples as s
from crd_schema import crd_schema

from mlcc.deploy.pods import logs_wanted, replaced_pods
from mlcc.deploy.readiness import (
    FAILED_STATE,
    desired_replicas,
    generation_observed,
    judge,
    operator_message,
    read,
)
from mlcc.deploy.snapshot import LogRequest, Snapshot, Target, explaining_lines, one_line
from mlcc.deploy.verify import READY_STATE

TARGET = Target("inference", "hp-dev", s.expectation(), generation=2)
READY_LOGS = {LogRequest(d.POD, d.WORKER, previous=False): s.VLLM_EAGLE3_LOG}


def test_the_states_are_the_crds() -> None:
    status = crd_schema("inferenceendpointconfigs.yaml")["properties"]["status"]
    assert {READY_STATE, FAILED_STATE} <= set(status["properties"]["state"]["enum"])
    assert "observedGeneration" in status["properties"]


def test_the_generation_just_applied_must_be_observed() -> None:
    assert not generation_observed(TARGET, d.endpoint(READY_STATE, observed=1))
    assert generation_observed(TARGET, d.endpoint(READY_STATE, observed=None))  # not written
    assert generation_observed(TARGET, d.endpoint(READY_STATE, observed=3))
    live = Target("inference", "hp-dev", s.expectation())  # verify --wait: the live generation
    assert generation_observed(live, d.endpoint(READY_STATE, generation=5, observed=5))
    assert not generation_observed(live, d.endpoint(READY_STATE, generation=5, observed=4))


def test_a_failed_state_of_an_older_generation_is_not_a_failure_of_the_new_one() -> None:
    reading = read(TARGET, Snapshot(d.endpoint(FAILED_STATE, observed=1, message="old")))
    assert reading.signs == ()
    assert reading.waiting_for == "the operator to observe the new spec"


def test_autoscaling_waits_for_its_floor_at_most() -> None:
    endpoint = d.endpoint(READY_STATE, replicas=3)
    assert desired_replicas(endpoint) == 3
    endpoint["spec"]["autoScalingSpec"] = {"minReplicaCount": 1, "maxReplicaCount": 4}
    assert desired_replicas(endpoint) == 1
    endpoint["spec"]["autoScalingSpec"] = {"minReplicaCount": 5}
    assert desired_replicas(endpoint) == 3


def test_a_sign_is_judged_by_how_long_it_lasted_and_forgotten_when_gone() -> None:
    crashing = d.pod(waiting=("CrashLoopBackOff", "back-off"), terminated=d.crashed(1), restarts=1)
    reading = read(TARGET, Snapshot(d.endpoint("DeploymentInProgress"), [crashing]))
    verdict, seen = judge(reading, {}, now=100.0, grace_s=60)
    assert verdict.outcome == "waiting"
    verdict, seen = judge(reading, seen, now=159.0, grace_s=60)
    assert verdict.outcome == "waiting"
    verdict, _ = judge(reading, seen, now=160.0, grace_s=60)
    assert verdict.outcome == "failed" and "CrashLoopBackOff" in verdict.message
    healed = read(TARGET, Snapshot(d.endpoint("DeploymentInProgress"), [d.pod()]))
    _, forgotten = judge(healed, seen, now=161.0, grace_s=60)
    assert forgotten == {}


def test_the_logs_read_are_the_crashed_runs_and_the_ready_pods() -> None:
    crashing = d.pod("a-1", waiting=("CrashLoopBackOff", "x"), terminated=d.crashed(1), restarts=1)
    ready = d.pod("a-2", ready=True)
    starting = d.pod("a-3")
    wanted = logs_wanted(d.endpoint(READY_STATE), [crashing, ready, starting])
    assert wanted == [LogRequest("a-1", "model", True), LogRequest("a-2", "model", False)]


def test_the_explaining_lines_prefer_the_wrappers_refusal_then_errors() -> None:
    refusal = d.wrapper_refusal_log().strip()
    assert explaining_lines(f"INFO start\n{refusal}\nINFO exit\n") == [refusal]
    assert explaining_lines(d.VLLM_VALUE_ERROR_LOG)[-1].startswith("ValueError: To serve")
    assert explaining_lines("one\ntwo\nthree\n") == ["two", "three"]
    assert one_line("a\x00b\x1bc" + "x" * 400).startswith("a\\x00b\\x1bc")
    assert len(one_line("x" * 400)) == 303


def test_the_operators_words_come_from_its_deployment_status_else_its_conditions() -> None:
    failed = d.endpoint(FAILED_STATE, message="Deployment exceeded its progress deadline")
    assert operator_message(failed) == (
        "ProgressDeadlineExceeded: Deployment exceeded its progress deadline"
    )
    by_condition = d.endpoint(FAILED_STATE)
    by_condition["status"]["conditions"] = [
        {
            "type": "Ready",
            "status": "True",
            "reason": "Ok",
            "message": "was fine",
            "lastTransitionTime": "2026-12-04T04:00:00Z",
        },
        {
            "type": "DeploymentFailed",
            "status": "True",
            "reason": "ImagePull",
            "message": "image not found",
            "lastTransitionTime": "2026-12-04T04:05:00Z",
        },
    ]
    assert operator_message(by_condition) == "ImagePull: image not found"
    by_condition["status"]["conditions"][0]["status"] = "False"
    assert operator_message(by_condition) == "Ok: was fine"


@pytest.mark.parametrize("failed", ["CreationFailed", "UpdateFailed"])
def test_a_failed_sagemaker_registration_fails_the_wait_at_once_quoting_the_operator(
    failed: str,
) -> None:
    endpoint = d.endpoint(READY_STATE, registration=failed)
    endpoint["status"]["conditions"] = [
        {
            "type": "EndpointCreated",
            "status": "False",
            "reason": "ResourceLimitExceeded",
            "message": "account-level service limit for ml.g5.12xlarge",
            "lastTransitionTime": "2026-12-04T04:05:00Z",
        }
    ]
    reading = read(TARGET, Snapshot(endpoint, [d.pod(ready=True)]))
    verdict, _ = judge(reading, {}, now=0.0, grace_s=60)
    assert verdict.outcome == "failed"
    assert f"its SageMaker endpoint registration is {failed}: ResourceLimitExceeded: " in (
        verdict.message
    )
    assert "account-level service limit for ml.g5.12xlarge" in verdict.message


@pytest.mark.parametrize("working", ["CreationInProgress", "UpdateInProgress", ""])
def test_a_registration_in_progress_or_not_written_yet_is_waited_for(working: str) -> None:
    """... for the registration's grace once everything else serves, not the usual one."""
    endpoint = d.endpoint(READY_STATE, registration=working)
    reading = read(TARGET, Snapshot(endpoint, [d.pod(ready=True)], logs=READY_LOGS))
    assert not reading.serving
    assert [(x.key, x.grace_s) for x in reading.signs] == [("unregistered", 30 * 60.0)]
    assert "the SageMaker endpoint" in reading.waiting_for
    assert (working or "not written yet") in reading.waiting_for
    assert reading.waiting_for in reading.progress
    verdict, seen = judge(reading, {}, now=0.0, grace_s=60)
    verdict, seen = judge(reading, seen, now=30 * 60.0 - 1, grace_s=60)
    assert verdict.outcome == "waiting"
    verdict, _ = judge(reading, seen, now=30 * 60.0, grace_s=60)
    assert verdict.outcome == "failed"
    assert "its SageMaker endpoint is not registered 30 minutes after everything else" in (
        verdict.message
    )


@pytest.mark.parametrize("unknown", ["InService", "Creating", "creationcompleted", "\x1b[31mX"])
def test_a_registration_state_no_source_lists_is_shown_and_waited_on(unknown: str) -> None:
    endpoint = d.endpoint(READY_STATE, registration=unknown)
    reading = read(TARGET, Snapshot(endpoint, [d.pod(ready=True)], logs=READY_LOGS))
    verdict, _ = judge(reading, {}, now=1e6, grace_s=60)
    assert verdict.outcome == "waiting"
    assert "a state no source lists" in reading.waiting_for
    assert "CreationCompleted" in reading.waiting_for


@pytest.mark.parametrize("ready", ["CreationCompleted", "UpdateCompleted"])
def test_a_completed_registration_serves(ready: str) -> None:
    endpoint = d.endpoint(READY_STATE, registration=ready)
    reading = read(TARGET, Snapshot(endpoint, [d.pod(ready=True)], logs=READY_LOGS))
    assert reading.serving


def test_no_registration_is_awaited_without_a_sagemaker_endpoint() -> None:
    endpoint = d.endpoint(READY_STATE, registration="")
    endpoint["spec"]["endpointName"] = ""
    reading = read(TARGET, Snapshot(endpoint, [d.pod(ready=True)], logs=READY_LOGS))
    assert reading.serving


@pytest.mark.parametrize(
    ("state", "named"),
    [("Deployed", "status.state is 'Deployed', a state no source lists"), ("", "now none")],
)
def test_an_endpoint_state_no_source_lists_is_waited_on(state: str, named: str) -> None:
    endpoint = d.endpoint(state or None)
    reading = read(TARGET, Snapshot(endpoint, [d.pod(ready=True)], logs=READY_LOGS))
    assert not reading.serving and not reading.signs
    assert named in reading.waiting_for


def test_the_deployments_overall_state_fails_and_holds_as_the_cli_reads_it() -> None:
    """The HyperPod CLI's integration tests fail on deploymentObjectOverallState
    DeploymentFailed; `hyp describe` shows DeploymentInProgress as still working."""
    endpoint = d.endpoint(READY_STATE)
    endpoint["status"]["deploymentStatus"] = {
        "name": "hp-dev",
        "lastUpdated": "2026-12-04T04:05:00Z",
        "deploymentObjectOverallState": "DeploymentInProgress",
    }
    reading = read(TARGET, Snapshot(endpoint, [d.pod(ready=True)], logs=READY_LOGS))
    assert not reading.serving and "DeploymentInProgress" in reading.waiting_for
    endpoint["status"]["deploymentStatus"] |= {
        "deploymentObjectOverallState": "DeploymentFailed",
        "reason": "ProgressDeadlineExceeded",
        "message": "ReplicaSet has timed out progressing",
    }
    reading = read(TARGET, Snapshot(endpoint, [d.pod(ready=True)], logs=READY_LOGS))
    verdict, _ = judge(reading, {}, now=0.0, grace_s=60)
    assert verdict.outcome == "failed"
    assert "is DeploymentFailed: ProgressDeadlineExceeded: ReplicaSet has timed out" in (
        verdict.message
    )


def test_a_validation_errors_fields_and_reasons_are_quoted_in_one_line() -> None:
    """Two errors, each line of a child process prefixed as vLLM does; the link is left out."""
    prefix = "(EngineCore_DP0 pid=212) "
    log = "\n".join(
        prefix + line
        for line in [
            "INFO loading",
            "pydantic_core._pydantic_core.ValidationError: 2 validation errors for "
            "SpeculativeConfig",
            "num_speculative_tokens",
            "  Input should be greater than 0 [type=greater_than, input_value=0, input_type=int]",
            "    For further information visit https://errors.pydantic.dev/2.12/v/greater_than",
            "  Value error, unknown method 'eagle4' [type=value_error, input_value={}, "
            "input_type=dict]",
            "INFO shutting down",
        ]
    )
    [line] = explaining_lines(log)
    assert line.endswith(
        "2 validation errors for SpeculativeConfig: num_speculative_tokens: Input should be "
        "greater than 0 [type=greater_than, input_value=0, input_type=int]; Value error, unknown "
        "method 'eagle4' [type=value_error, input_value={}, input_type=dict]"
    )
    assert explaining_lines(d.VLLM_VALIDATION_ERROR_LOG)[0].count("validation error") == 1


def test_a_pod_is_history_only_when_ended_and_a_newer_pod_is_ready() -> None:
    earlier, later = "2026-12-04T03:50:00Z", "2026-12-04T04:00:00Z"
    evicted = d.evicted_pod("hp-dev-7c9f8d-a1", earlier)
    ready = d.pod(ready=True, created=later)
    assert replaced_pods([evicted, ready]) == {"hp-dev-7c9f8d-a1": f"evicted, replaced by {d.POD}"}
    assert replaced_pods([evicted, d.pod(created=later)]) == {}  # the replacement not ready
    assert (
        replaced_pods(
            [d.evicted_pod("hp-dev-7c9f8d-a1", later), d.pod(ready=True, created=earlier)]
        )
        == {}
    )
    assert replaced_pods([evicted, d.pod(ready=True)]) == {}  # no creation time: not history
    failed = d.pod("hp-dev-7c9f8d-b2", phase="Failed", created=earlier)
    assert replaced_pods([failed, ready]) == {"hp-dev-7c9f8d-b2": f"failed, replaced by {d.POD}"}
    reading = read(TARGET, Snapshot(d.endpoint(READY_STATE), [evicted, ready], logs=READY_LOGS))
    assert reading.serving
