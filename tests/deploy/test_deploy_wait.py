"""The deploy wait against a local Kubernetes API, through the real kubernetes client.

Every story ends the right way within a bounded time: the timings are injected (polls of 0.05 s,
a grace of 0.15 s for a failure sign to last), so "within about two minutes" of production
becomes "within a second" here. A test that a failure ends the wait at once gives the graces
30 s (`PATIENT`), so that ending soon proves no grace was waited out.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import deploy_samples as d
import pytest
import verify_samples as s
from fake_kube_api import Behaviour, FakeKubeApi, Scene
from wait_stories import AT_ONCE_S, FAST, PATIENT, READY_LOGS, TARGET, run_story

from mlcc.deploy.cluster import Cluster
from mlcc.deploy.kubeconfig import api_client
from mlcc.deploy.snapshot import Target
from mlcc.deploy.waiter import failures, wait_for_endpoints


def serving_scene(at: float) -> Scene:
    return Scene(at, d.endpoint("DeploymentComplete"), [d.pod(ready=True)], logs=READY_LOGS)


def test_a_slow_deploy_is_waited_for_with_progress_until_it_serves(tmp_path: Path) -> None:
    pulling = d.event(d.POD, "Pulling", f"Pulling image {s.IMAGE}", warning=False)
    scenes = [
        Scene(0, d.endpoint(None, observed=None)),
        Scene(0.1, d.endpoint("DeploymentPending")),
        Scene(0.2, d.endpoint("DeploymentInProgress"), [d.pod()], [pulling]),
        serving_scene(1.0),  # each scene lasts several polls, also on a loaded machine
    ]
    outcome, lines, elapsed, _ = run_story(tmp_path, scenes)
    assert outcome.serving, outcome.message
    assert outcome.message.endswith("1/1 replicas ready; speculation on, as configured")
    assert lines[0].startswith("InferenceEndpointConfig inference/hp-dev: no status yet")
    assert any(
        "DeploymentInProgress, 0/1 replicas ready; last event: Pulling: " in x for x in lines
    )
    assert elapsed >= 1.0  # serving proves it ended before the timeout


def test_a_status_of_the_previous_generation_is_not_taken_for_the_new_one(tmp_path: Path) -> None:
    scenes = [
        Scene(
            0, d.endpoint("DeploymentComplete", observed=1), [d.pod(ready=True)], logs=READY_LOGS
        ),
        serving_scene(0.25),
    ]
    outcome, lines, elapsed, _ = run_story(tmp_path, scenes)
    assert outcome.serving
    assert "the operator has not yet observed the new spec" in lines[0]
    assert elapsed >= 0.25


def test_deployment_failed_fails_at_once_with_the_operators_message(tmp_path: Path) -> None:
    said = "Deployment hp-dev exceeded its progress deadline"
    scenes = [Scene(0, d.endpoint("DeploymentFailed", message=said))]
    outcome, _, elapsed, _ = run_story(tmp_path, scenes, settings=PATIENT)
    assert not outcome.serving
    assert outcome.message.startswith(
        "InferenceEndpointConfig inference/hp-dev is DeploymentFailed: "
    )
    assert said in outcome.message
    assert outcome.message.endswith("fix the cause and run `pulumi up` again")
    assert elapsed < AT_ONCE_S


def test_a_crash_loop_fails_with_the_wrappers_refusal_and_what_to_change(tmp_path: Path) -> None:
    refusal = d.wrapper_refusal_log().strip()
    crashing = d.pod(
        waiting=("CrashLoopBackOff", f"back-off 20s restarting failed container={d.WORKER}"),
        terminated=d.crashed(2),
        restarts=3,
    )
    scenes = [
        Scene(0, d.endpoint("DeploymentInProgress"), [d.pod()]),
        Scene(
            0.1,
            d.endpoint("DeploymentInProgress"),
            [crashing],
            logs={(d.POD, d.WORKER, True): refusal + "\n"},
        ),
    ]
    outcome, _, elapsed, _ = run_story(tmp_path, scenes)
    assert not outcome.serving
    assert f"pod {d.POD}: container model is in CrashLoopBackOff (exit code 2, " in outcome.message
    assert f"engine log: {refusal}" in outcome.message
    assert "fix what the engine log names (hp:engineArgs" in outcome.message
    assert "\n" not in outcome.message
    assert elapsed >= 0.1 + FAST.grace_s  # the message, not the timeout's, ended it


def test_a_crash_loop_is_one_sign_while_the_restarted_engine_runs_between_back_offs(
    tmp_path: Path,
) -> None:
    """The kubelet alternates CrashLoopBackOff and a running retry; the grace is not reset."""
    logs = {(d.POD, d.WORKER, True): d.VLLM_VALUE_ERROR_LOG}
    backoff = d.pod(
        waiting=("CrashLoopBackOff", "back-off 10s"), terminated=d.crashed(1), restarts=1
    )
    retrying = d.pod(terminated=d.crashed(1), restarts=1)
    # Each scene lasts less than the grace, and they alternate until past the timeout: a grace
    # reset by a retry would never run out, and the wait would end at the timeout instead.
    settings = replace(FAST, grace_s=0.3)
    pods = [backoff, retrying]
    scenes = [
        Scene(i * 0.1, d.endpoint("DeploymentInProgress"), [pods[i % 2]], logs=logs)
        for i in range(int(settings.timeout_s / 0.1) + 10)
    ]
    outcome, _, elapsed, _ = run_story(tmp_path, scenes, settings=settings)
    assert "did not serve within" not in outcome.message
    assert "container model is in CrashLoopBackOff (exit code 1" in outcome.message
    assert "ValueError: To serve at least one request" in outcome.message
    assert elapsed >= settings.grace_s


def test_a_vllm_value_error_is_quoted_from_the_crashed_run(tmp_path: Path) -> None:
    crashing = d.pod(
        waiting=("CrashLoopBackOff", "back-off 10s"), terminated=d.crashed(1), restarts=1
    )
    logs = {(d.POD, d.WORKER, True): d.VLLM_VALUE_ERROR_LOG}
    scenes = [Scene(0, d.endpoint("DeploymentInProgress"), [crashing], logs=logs)]
    outcome, _, _, _ = run_story(tmp_path, scenes)
    assert "engine log: " in outcome.message
    assert "ValueError: To serve at least one request with the models's max seq len (131072)" in (
        outcome.message
    )


def test_a_sign_that_goes_away_within_the_grace_is_forgiven(tmp_path: Path) -> None:
    backoff = d.pod(waiting=("ImagePullBackOff", "Back-off pulling image"), restarts=0)
    scenes = [
        Scene(0, d.endpoint("DeploymentInProgress"), [backoff]),
        Scene(0.1, d.endpoint("DeploymentInProgress"), [d.pod()]),
        serving_scene(0.2),
    ]
    outcome, _, _, _ = run_story(tmp_path, scenes, settings=replace(FAST, grace_s=0.4))
    assert outcome.serving, outcome.message


def test_an_image_that_cannot_be_pulled_fails_with_the_kubelets_message(tmp_path: Path) -> None:
    said = f'Back-off pulling image "{s.IMAGE}": ErrImagePull: not found'
    scenes = [
        Scene(0, d.endpoint("DeploymentInProgress"), [d.pod(waiting=("ImagePullBackOff", said))])
    ]
    outcome, _, elapsed, _ = run_story(tmp_path, scenes)
    assert "container model is in ImagePullBackOff" in outcome.message
    assert "ErrImagePull: not found" in outcome.message
    assert "check hp:image" in outcome.message
    assert elapsed >= FAST.grace_s  # the message, not the timeout's, ended it


def test_oom_killed_fails_at_once(tmp_path: Path) -> None:
    oom = d.pod(terminated=d.crashed(137, "OOMKilled"), restarts=1)
    logs = {(d.POD, d.WORKER, True): "INFO loading weights\nKilled\n"}
    scenes = [Scene(0, d.endpoint("DeploymentInProgress"), [oom], logs=logs)]
    outcome, _, elapsed, _ = run_story(tmp_path, scenes, settings=PATIENT)
    assert f"pod {d.POD}: container model was OOMKilled" in outcome.message
    assert "larger hp:instanceType" in outcome.message
    assert elapsed < AT_ONCE_S


def test_a_pod_no_node_can_take_fails_with_the_schedulers_words(tmp_path: Path) -> None:
    said = "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."
    pending = d.pod(phase="Pending", unschedulable=said)
    events = [d.event(d.POD, "FailedScheduling", said)]
    scenes = [Scene(0, d.endpoint("DeploymentInProgress"), [pending], events)]
    outcome, lines, _, _ = run_story(tmp_path, scenes)
    assert f"pod {d.POD} is Pending, Unschedulable: {said}" in outcome.message
    assert "hp:instanceGroups" in outcome.message
    assert lines[-1].endswith(f"last event: FailedScheduling: {said}")


def test_the_engine_running_without_speculation_fails(tmp_path: Path) -> None:
    logs = {(d.POD, d.WORKER, False): s.VLLM_SPECULATION_OFF_LOG}
    scenes = [Scene(0, d.endpoint("DeploymentComplete"), [d.pod(ready=True)], logs=logs)]
    outcome, _, _, _ = run_story(tmp_path, scenes)
    assert "speculation is OFF although the stack asks for eagle3" in outcome.message


def test_a_ready_pod_is_waited_for_until_the_engine_logs_its_config(tmp_path: Path) -> None:
    loading = {(d.POD, d.WORKER, False): s.VLLM_STILL_LOADING_LOG}
    scenes = [
        Scene(0, d.endpoint("DeploymentComplete"), [d.pod(ready=True)], logs=loading),
        serving_scene(0.2),
    ]
    outcome, _, elapsed, _ = run_story(tmp_path, scenes)
    assert outcome.serving
    assert elapsed >= 0.2


def test_a_deploy_that_never_completes_fails_at_the_timeout_with_the_state_reached(
    tmp_path: Path,
) -> None:
    """Decided on the wait's clock, not the machine's speed: the clock stands still until the
    wait has read the endpoint and begun its second pause (a watch), then passes the deadline.
    Every read has 30 s, so a loaded machine cannot turn a slow answer into an API failure."""
    scenes = [Scene(0, d.endpoint("DeploymentInProgress"), [d.pod()])]
    settings = replace(FAST, timeout_s=120.0)

    def clock_of(api: FakeKubeApi) -> Callable[[], float]:
        def clock() -> float:
            watches = sum("watch=" in request for request in list(api.requests))
            return 0.0 if watches < 2 else settings.timeout_s + 1

        return clock

    outcome, lines, _, api = run_story(
        tmp_path, scenes, settings=settings, request_timeout_s=30.0, clock_of=clock_of
    )
    assert outcome.message == (
        "InferenceEndpointConfig inference/hp-dev did not serve within 2 minutes "
        "(hp:deployTimeoutMinutes): InferenceEndpointConfig inference/hp-dev: "
        "DeploymentInProgress, 0/1 replicas ready; still waiting for state DeploymentComplete "
        "(now DeploymentInProgress)"
    )
    assert lines == [
        "InferenceEndpointConfig inference/hp-dev: DeploymentInProgress, 0/1 replicas ready"
    ]
    reads = [r for r in api.requests if "watch=" not in r and "inferenceendpointconfigs/" in r]
    assert len(reads) == 2  # it kept reading until the deadline, and not after it


def test_the_watch_ends_a_pause_as_soon_as_the_endpoint_changes(tmp_path: Path) -> None:
    scenes = [Scene(0, d.endpoint("DeploymentInProgress"), [d.pod()]), serving_scene(0.15)]
    slow_polls = replace(FAST, timeout_s=120.0, poll_s=60.0)
    outcome, _, elapsed, api = run_story(tmp_path, scenes, settings=slow_polls)
    assert outcome.serving
    assert elapsed < 30  # not the 60 s poll: the MODIFIED event woke the loop
    assert any("watch=" in r and "resourceVersion=100" in r for r in api.requests)


def test_a_watch_that_drops_neither_stops_the_wait_nor_spins(tmp_path: Path) -> None:
    scenes = [Scene(0, d.endpoint("DeploymentInProgress"), [d.pod()]), serving_scene(0.7)]
    polls = replace(FAST, poll_s=0.1)
    outcome, _, _, api = run_story(tmp_path, scenes, Behaviour(drop_watch=True), settings=polls)
    assert outcome.serving
    watches = [r for r in api.requests if "watch=" in r]
    assert 3 <= len(watches) <= 14  # about one per poll interval, not a busy loop


def test_rejected_credentials_fail_at_once_naming_what_to_fix(tmp_path: Path) -> None:
    outcome, _, elapsed, _ = run_story(
        tmp_path, [serving_scene(0)], Behaviour(answer="401"), settings=PATIENT
    )
    assert outcome.message.startswith(
        "InferenceEndpointConfig inference/hp-dev: cannot read inferenceendpointconfigs/hp-dev "
        "in inference: 401 Unauthorized"
    )
    assert "aws eks update-kubeconfig" in outcome.message
    assert elapsed < AT_ONCE_S


def test_an_api_that_keeps_failing_ends_the_wait_with_its_answer(tmp_path: Path) -> None:
    outcome, _, elapsed, _ = run_story(tmp_path, [serving_scene(0)], Behaviour(answer="500"))
    assert "the Kubernetes API kept failing" in outcome.message
    assert "500 Internal Server Error: etcdserver: leader changed" in outcome.message
    assert elapsed >= FAST.api_grace_s  # the message, not the timeout's, ended it


def test_an_api_that_never_answers_ends_the_wait_within_the_request_timeouts(
    tmp_path: Path,
) -> None:
    outcome, _, elapsed, _ = run_story(
        tmp_path, [serving_scene(0)], Behaviour(answer="hang"), request_timeout_s=0.2
    )
    assert "the Kubernetes API kept failing" in outcome.message
    assert "no answer within 0.2 s" in outcome.message
    assert elapsed < 20  # the fake holds each request 30 s: the client's timeouts ended it


def test_several_endpoints_fail_fast_on_the_first_failure(tmp_path: Path) -> None:
    other = Target("inference", "other", s.expectation(), generation=2)
    scenes = [Scene(0, d.endpoint("DeploymentFailed", message="quota exceeded"))]
    with FakeKubeApi(scenes) as api:
        cluster = Cluster(api_client(str(api.kubeconfig(tmp_path / "kc"))), request_timeout_s=0.5)
        started = time.monotonic()
        outcomes = wait_for_endpoints(cluster, [TARGET, other], PATIENT, lambda *_: None)
    assert time.monotonic() - started < AT_ONCE_S
    lines = failures(outcomes)
    assert len(lines) == 2  # hp-dev failed; `other` does not exist at all
    assert "quota exceeded" in lines[0]
    assert lines[1] == (
        "InferenceEndpointConfig inference/other not found (deleted, or another namespace or "
        "context?)"
    )


@pytest.mark.parametrize("previous", [True, False])
def test_logs_with_bad_bytes_and_control_characters_stay_one_line(
    tmp_path: Path, previous: bool
) -> None:
    crashing = d.pod(waiting=("CrashLoopBackOff", "back-off"), terminated=d.crashed(1), restarts=2)
    log = "ValueError: bad \x1b[31mred\x1b[0m value\r\n"
    scenes = [
        Scene(
            0,
            d.endpoint("DeploymentInProgress"),
            [crashing],
            logs={(d.POD, d.WORKER, previous): log},
        )
    ]
    outcome, _, _, _ = run_story(tmp_path, scenes)
    assert "\n" not in outcome.message and "\x1b" not in outcome.message
    if previous:
        assert "ValueError: bad \\x1b[31mred\\x1b[0m value" in outcome.message
