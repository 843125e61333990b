"""The deploy wait on stories in the operator's own words, through the real client and a local
Kubernetes API.

Every status below is written from the operator's CRDs (schemas/crds/: the endpoint's
`status.state` enum, its `deploymentStatus`, the SageMakerEndpointRegistration states the
operator copies into `status.endpoints.sagemaker.state`) and the HyperPod CLI, which waits for
`CreationCompleted` in its integration tests and fails on a `DeploymentFailed` overall state
(docs/operator-facts.md). Each story must end the right way within its stated time.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import deploy_samples as d
import verify_samples as s
from crd_schema import crd_validator
from fake_kube_api import Scene
from wait_stories import (
    AT_ONCE_S,
    FAST,
    PATIENT,
    READY_LOGS,
    deadline_at_the_first_watch,
    run_story,
)

from mlcc.deploy.snapshot import Target

NOW = "2026-12-04T04:05:00Z"


def operator_status(
    state: str,
    registration: str = "",
    *,
    generation: int = 2,
    conditions: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    """The endpoint as the operator writes it: state, the Deployment's status, and the
    SageMaker endpoint's registration once the deployment is done."""
    found = d.endpoint(state, generation=generation, observed=generation, registration=registration)
    overall = {"DeploymentPending": "DeploymentInProgress"}.get(state, state)
    found["status"]["deploymentStatus"] = {
        "name": "hp-dev",
        "lastUpdated": NOW,
        "deploymentObjectOverallState": overall,
        "status": {"replicas": 1, "readyReplicas": 1 if state == "DeploymentComplete" else 0},
    }
    if conditions:
        found["status"]["conditions"] = conditions
    return found


def serving(at: float, registration: str, generation: int = 2) -> Scene:
    endpoint = operator_status("DeploymentComplete", registration, generation=generation)
    return Scene(at, endpoint, [d.pod(ready=True)], logs=READY_LOGS)


def test_slow_success_waits_for_the_registration_to_read_creation_completed(
    tmp_path: Path,
) -> None:
    scenes = [
        Scene(0, operator_status("DeploymentPending")),
        Scene(0.2, operator_status("DeploymentInProgress"), [d.pod()]),
        serving(0.5, ""),  # the pods serve; the operator registers the endpoint afterwards
        serving(1.0, "CreationInProgress"),
        serving(1.5, "CreationCompleted"),
    ]  # each scene lasts several polls, also on a loaded machine
    outcome, lines, elapsed, _ = run_story(tmp_path, scenes)
    assert outcome.serving, outcome.message
    assert elapsed >= 1.5  # serving proves it ended before the timeout
    assert any("(status.endpoints.sagemaker.state not written yet)" in x for x in lines)
    assert any("to be CreationCompleted (now CreationInProgress)" in x for x in lines)


def test_a_creation_failed_registration_fails_at_once_quoting_the_operator(
    tmp_path: Path,
) -> None:
    condition = {
        "type": "SageMakerEndpointRegistered",
        "status": "False",
        "reason": "CreationFailed",
        "message": "The account-level service limit 'ml.g5.12xlarge for endpoint usage' is 0",
        "lastTransitionTime": NOW,
    }
    failed = operator_status("DeploymentComplete", "CreationFailed", conditions=[condition])
    scenes = [
        serving(0, "CreationInProgress"),
        Scene(0.2, failed, [d.pod(ready=True)], logs=READY_LOGS),
    ]
    outcome, _, elapsed, _ = run_story(tmp_path, scenes, settings=PATIENT)
    assert not outcome.serving
    assert outcome.message.startswith(
        "InferenceEndpointConfig inference/hp-dev: its SageMaker endpoint registration is "
        "CreationFailed: CreationFailed: The account-level service limit"
    )
    assert 0.2 <= elapsed < AT_ONCE_S


def test_an_update_serves_once_the_new_generation_is_complete(tmp_path: Path) -> None:
    """The spec of generation 3 was applied: the state of generation 2, registration and all,
    is not taken for it; UpdateCompleted after an update is as good as CreationCompleted."""
    target = Target("inference", "hp-dev", s.expectation(), generation=3)
    old = operator_status("DeploymentComplete", "CreationCompleted")
    updating = operator_status("DeploymentInProgress", "UpdateInProgress", generation=3)
    scenes = [
        Scene(0, old, [d.pod(ready=True)], logs=READY_LOGS),
        Scene(0.4, updating, [d.pod(ready=True)], logs=READY_LOGS),
        serving(0.8, "UpdateInProgress", generation=3),
        serving(1.2, "UpdateCompleted", generation=3),
    ]
    outcome, lines, elapsed, _ = run_story(tmp_path, scenes, target=target)
    assert outcome.serving, outcome.message
    assert "the operator has not yet observed the new spec" in lines[0]
    assert any("to be CreationCompleted (now UpdateInProgress)" in x for x in lines)
    assert elapsed >= 1.2  # serving proves it ended before the timeout


def test_an_update_whose_registration_fails_fails(tmp_path: Path) -> None:
    scenes = [serving(0, "UpdateInProgress"), serving(0.1, "UpdateFailed")]
    outcome, _, elapsed, _ = run_story(tmp_path, scenes, settings=PATIENT)
    assert not outcome.serving
    assert "registration is UpdateFailed: the operator gave no message" in outcome.message
    assert elapsed < AT_ONCE_S


def test_a_state_no_source_lists_is_waited_on_and_named_at_the_deadline(tmp_path: Path) -> None:
    scenes = [serving(0, "InService")]
    settings = replace(FAST, timeout_s=1.0)
    at_the_watch = deadline_at_the_first_watch(settings.timeout_s)
    outcome, lines, _, _ = run_story(tmp_path, scenes, settings=settings, clock_of=at_the_watch)
    assert not outcome.serving
    assert "did not serve within" in outcome.message
    assert (
        "still waiting for the SageMaker endpoint to be CreationCompleted "
        "(status.endpoints.sagemaker.state is 'InService', a state no source lists)"
    ) in outcome.message
    assert any("'InService'" in x for x in lines)


def test_an_endpoint_state_no_source_lists_is_named_at_the_deadline(tmp_path: Path) -> None:
    odd = operator_status("DeploymentComplete", "CreationCompleted")
    odd["status"]["state"] = "Serving"
    scenes = [Scene(0, odd, [d.pod(ready=True)], logs=READY_LOGS)]
    settings = replace(FAST, timeout_s=0.8)
    at_the_watch = deadline_at_the_first_watch(settings.timeout_s)
    outcome, lines, _, _ = run_story(tmp_path, scenes, settings=settings, clock_of=at_the_watch)
    assert not outcome.serving
    assert "status.state is 'Serving', a state no source lists" in outcome.message
    assert lines[0].startswith("InferenceEndpointConfig inference/hp-dev: Serving, 1/1")


def test_the_stories_statuses_are_valid_against_the_crd() -> None:
    condition = {"type": "Ready", "status": "False", "reason": "X", "message": "y"}
    condition["lastTransitionTime"] = NOW
    statuses = [
        operator_status(state, registration, conditions=[condition])
        for state in ("DeploymentPending", "DeploymentInProgress", "DeploymentComplete")
        for registration in ("", "CreationInProgress", "CreationCompleted", "UpdateFailed")
    ]
    validator = crd_validator("inferenceendpointconfigs.yaml")
    for endpoint in statuses:
        errors = [e.message for e in validator.iter_errors(endpoint)]
        assert errors == [], errors
