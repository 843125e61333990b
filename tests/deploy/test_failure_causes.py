"""The deploy wait names the cause it sees (issue #43): each story plays the kubelet's, the
engine's and the operator's own words on a local Kubernetes API, through the real client, and
the wait must fail (or pass) with the cause and the key to change, in one line."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import deploy_samples as d
import verify_samples as s
from fake_kube_api import Scene
from test_operator_stories import operator_status
from wait_stories import FAST, PATIENT, READY_LOGS, run_story

from mlcc.deploy.causes import EVICTIONS_TO_FAIL

EARLIER, LATER, LATEST = "2026-12-04T03:50:00Z", "2026-12-04T03:55:00Z", "2026-12-04T04:00:00Z"
IN_PROGRESS = d.endpoint("DeploymentInProgress")


def test_an_eviction_loop_fails_naming_ephemeral_storage_and_the_nodes_disk(
    tmp_path: Path,
) -> None:
    """Evicted, replaced, evicted again: the second eviction not replaced by a ready pod is a
    sign that lasts the usual grace (the evictions would go on until the deadline)."""
    first, second = (
        d.evicted_pod("hp-dev-7c9f8d-a1", EARLIER),
        d.evicted_pod("hp-dev-7c9f8d-b2", LATER),
    )
    loading = d.pod(created=LATEST)
    events = [
        d.eviction_event("hp-dev-7c9f8d-a1", EARLIER),
        d.eviction_event("hp-dev-7c9f8d-b2", LATER),
    ]
    scenes = [
        Scene(0, IN_PROGRESS, [first, d.pod("hp-dev-7c9f8d-b2", created=LATER)], events[:1]),
        Scene(0.3, IN_PROGRESS, [first, second, loading], events),
    ]
    outcome, lines, elapsed, _ = run_story(tmp_path, scenes)
    assert not outcome.serving
    assert outcome.message.startswith(
        f"InferenceEndpointConfig inference/hp-dev: {EVICTIONS_TO_FAIL} pods were Evicted (no "
        "ready replacement): pod hp-dev-7c9f8d-b2: The node was low on resource: "
        "ephemeral-storage. Threshold quantity: "
    )
    assert "raise hp:instanceGroups[].ebsVolumeSizeGb (the nodes' EBS volume)" in outcome.message
    assert "hp:modelCache.weightsCache" in outcome.message
    assert "\n" not in outcome.message
    assert any("last event: Evicted: The node was low on resource" in x for x in lines)
    assert elapsed >= 0.3 + FAST.grace_s  # the message, not the timeout's, ended it


def test_a_single_eviction_replaced_by_a_ready_pod_is_history_and_the_wait_passes(
    tmp_path: Path,
) -> None:
    """The evicted pod stays listed (Failed pods are kept until garbage-collected); its log is
    gone, and it is neither waited for nor a sign."""
    evicted = d.evicted_pod("hp-dev-7c9f8d-a1", EARLIER)
    replacement = d.pod(ready=True, created=LATEST)
    events = [d.eviction_event("hp-dev-7c9f8d-a1", EARLIER)]
    scenes = [
        Scene(0, IN_PROGRESS, [evicted, d.pod(created=LATEST)], events),
        Scene(0.2, d.endpoint("DeploymentComplete"), [evicted, replacement], events, READY_LOGS),
    ]
    outcome, lines, _, api = run_story(tmp_path, scenes, settings=replace(FAST, grace_s=2.0))
    assert outcome.serving, outcome.message
    assert any("last event: Evicted: " in x for x in lines)
    assert not [r for r in api.requests if "hp-dev-7c9f8d-a1/log" in r]


def test_an_image_pull_the_registry_refused_quotes_its_401_and_names_the_pull_permissions(
    tmp_path: Path,
) -> None:
    back_off = f'Back-off pulling image "{s.IMAGE}"'
    refused = d.event(d.POD, "Failed", d.PULL_REFUSED, at=LATER)
    gave_up = d.event(d.POD, "Failed", "Error: ErrImagePull", at=EARLIER)
    scenes = [
        Scene(0, IN_PROGRESS, [d.pod(waiting=("ErrImagePull", d.PULL_REFUSED))], [refused]),
        Scene(
            0.1,
            IN_PROGRESS,
            [d.pod(waiting=("ImagePullBackOff", back_off))],
            [gave_up, refused, d.event(d.POD, "BackOff", back_off, at=LATEST)],
        ),
    ]
    outcome, _, elapsed, _ = run_story(tmp_path, scenes, settings=replace(FAST, grace_s=0.3))
    assert "container model is in ImagePullBackOff (Failed to pull image" in outcome.message
    assert "401 Unauthorized)" in outcome.message
    assert "Back-off pulling image" not in outcome.message
    assert "let the HyperPod nodes' role pull hp:image (ecr:BatchGetImage" in outcome.message
    assert "repository policy" in outcome.message
    assert elapsed >= 0.3  # the message, not the timeout's, ended it


def test_an_image_that_is_not_there_keeps_the_image_advice(tmp_path: Path) -> None:
    missing = d.PULL_REFUSED.replace("401 Unauthorized", "404 Not Found")
    scenes = [
        Scene(
            0,
            IN_PROGRESS,
            [d.pod(waiting=("ImagePullBackOff", "Back-off pulling image"))],
            [d.event(d.POD, "Failed", missing)],
        )
    ]
    outcome, _, _, _ = run_story(tmp_path, scenes)
    assert "404 Not Found); check hp:image (or that the built image was pushed)" in (
        outcome.message
    )


def test_a_validation_error_is_quoted_with_its_field_and_reason(tmp_path: Path) -> None:
    crashing = d.pod(
        waiting=("CrashLoopBackOff", "back-off 40s"), terminated=d.crashed(1), restarts=3
    )
    logs = {(d.POD, d.WORKER, True): d.VLLM_VALIDATION_ERROR_LOG}
    outcome, _, _, _ = run_story(tmp_path, [Scene(0, IN_PROGRESS, [crashing], logs=logs)])
    assert (
        "engine log: pydantic_core._pydantic_core.ValidationError: 1 validation error for "
        "CacheConfig: gpu_memory_utilization: Input should be less than or equal to 1 "
        "[type=less_than_equal, input_value=1.5, input_type=float]; fix what the engine log "
        "names (hp:engineArgs"
    ) in outcome.message


def test_a_liveness_kill_loop_names_the_probe_not_the_engine_log(tmp_path: Path) -> None:
    """The kubelet kills the engine for its liveness probe; its log (still loading) says
    nothing of why, and is not quoted."""
    killed = d.crashed(137, "Error")
    backoff = d.pod(waiting=("CrashLoopBackOff", "back-off 40s"), terminated=killed, restarts=3)
    running = d.pod(terminated=killed, restarts=3)
    events = [
        d.event(d.POD, "Unhealthy", d.LIVENESS_FAILED, at=EARLIER),
        d.event(d.POD, "Killing", d.LIVENESS_KILLING, at=LATER, warning=False),
    ]
    logs = {(d.POD, d.WORKER, True): s.VLLM_STILL_LOADING_LOG}
    scenes = [
        Scene(0, IN_PROGRESS, [running], events, logs),
        Scene(0.1, IN_PROGRESS, [backoff], events, logs),
    ]
    outcome, _, _, _ = run_story(tmp_path, scenes)
    assert outcome.message == (
        f"InferenceEndpointConfig inference/hp-dev: pod {d.POD}: container model is killed by "
        f"its liveness probe (exit code 137, 3 restarts): {d.LIVENESS_FAILED}; the engine did "
        "not answer its liveness probe in time and was restarted: loosen hp:probes.liveness "
        "(timeoutSeconds, failureThreshold), or hp:probes.startup while it still loads"
    )


def test_a_crash_after_an_old_liveness_kill_is_the_engines_own(tmp_path: Path) -> None:
    """Exit code 1 is the engine's: the liveness events of an earlier run do not name it."""
    crashing = d.pod(waiting=("CrashLoopBackOff", "back-off"), terminated=d.crashed(1), restarts=2)
    events = [d.event(d.POD, "Killing", d.LIVENESS_KILLING, at=EARLIER, warning=False)]
    logs = {(d.POD, d.WORKER, True): d.VLLM_VALUE_ERROR_LOG}
    outcome, _, _, _ = run_story(tmp_path, [Scene(0, IN_PROGRESS, [crashing], events, logs)])
    assert "is in CrashLoopBackOff (exit code 1" in outcome.message
    assert "liveness" not in outcome.message


def test_an_endpoint_that_serves_but_is_never_registered_fails_after_the_registration_grace(
    tmp_path: Path,
) -> None:
    """DeploymentComplete, the replica ready, speculation checked: the registration, not
    written and then stuck in CreationInProgress, fails once its own grace passed, long before
    the deadline, naming the operator's log and hp:sagemakerEndpoint: false."""

    def scene(at: float, registration: str) -> Scene:
        endpoint = operator_status("DeploymentComplete", registration)
        return Scene(at, endpoint, [d.pod(ready=True)], logs=READY_LOGS)

    settings = replace(PATIENT, registration_grace_s=0.6)
    scenes = [scene(0, ""), scene(0.2, "CreationInProgress")]
    outcome, lines, elapsed, _ = run_story(tmp_path, scenes, settings=settings)
    assert not outcome.serving
    assert outcome.message == (
        "InferenceEndpointConfig inference/hp-dev: its SageMaker endpoint is not registered "
        "0.01 minutes after everything else served (status.endpoints.sagemaker.state "
        "CreationInProgress); the operator's log says more: kubectl logs -n "
        "hyperpod-inference-system deploy/hyperpod-inference-controller-manager, or set "
        "hp:sagemakerEndpoint: false to serve without one"
    )
    assert any("speculation on, as configured; waiting for the SageMaker" in x for x in lines)
    assert 0.6 <= elapsed < 3  # the grace counts from the first round that served, not the state


def test_an_endpoint_still_loading_is_not_held_to_the_registration_grace(tmp_path: Path) -> None:
    """Until every other sign says it serves, an unregistered endpoint is only waited for."""
    endpoint = operator_status("DeploymentComplete", "")
    loading = {(d.POD, d.WORKER, False): s.VLLM_STILL_LOADING_LOG}
    scenes = [Scene(0, endpoint, [d.pod(ready=True)], logs=loading)]
    settings = replace(FAST, timeout_s=0.8, registration_grace_s=0.1)
    outcome, _, _, _ = run_story(tmp_path, scenes, settings=settings)
    assert "did not serve within" in outcome.message
    assert "still waiting for the engine config line of pod" in outcome.message
