"""The pure decisions of the deploy wait, on the statuses the operator, kubelet and scheduler
write (the stories end to end are in test_deploy_wait.py)."""

from __future__ import annotations

import deploy_samples as d
import verify_samples as s
from crd_schema import crd_schema

from mlcc.deploy.pods import logs_wanted
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


def test_the_states_are_the_crds() -> None:
    status = crd_schema("inferenceendpointconfigs.yaml")["properties"]["status"]
    assert {READY_STATE, FAILED_STATE} <= set(status["properties"]["state"]["enum"])
    assert "observedGeneration" in status["properties"]


def test_the_generation_just_applied_must_be_observed() -> None:
    assert not generation_observed(TARGET, d.endpoint(READY_STATE, observed=1))
    assert not generation_observed(TARGET, d.endpoint(READY_STATE, observed=None))
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


def test_a_failed_sagemaker_registration_fails_the_wait_after_the_grace() -> None:
    endpoint = d.endpoint(READY_STATE)
    endpoint["status"]["endpoints"] = {"sagemaker": {"state": "Failed"}}
    reading = read(TARGET, Snapshot(endpoint, [d.pod(ready=True)]))
    assert not reading.serving
    verdict, seen = judge(reading, {}, now=0.0, grace_s=60)
    assert verdict.outcome == "waiting"
    verdict, _ = judge(reading, seen, now=60.0, grace_s=60)
    assert verdict.outcome == "failed" and "SageMaker endpoint failed" in verdict.message


def test_a_reported_registration_still_creating_is_waited_for() -> None:
    endpoint = d.endpoint(READY_STATE)
    endpoint["status"]["endpoints"] = {"sagemaker": {"state": "Creating"}}
    reading = read(TARGET, Snapshot(endpoint, [d.pod(ready=True)]))
    assert not reading.serving and reading.signs == ()
    assert reading.waiting_for == "the SageMaker endpoint is Creating"
