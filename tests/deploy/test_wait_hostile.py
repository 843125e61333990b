"""The deploy wait against a hostile Kubernetes API, through the real client and a kubeconfig:
every answer ends in a verdict line (never a traceback), within the timeout (with slack for a
loaded machine), having read a bounded number of bytes, with no figure it could not know.
The bounds asserted are the outcomes: what the fake sent, how many requests it got."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import replace
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import deploy_samples as d
import pytest
import verify_samples as s
from fake_kube_api import Behaviour, FakeKubeApi, Scene, status_body
from hostile_kube import (
    Sent,
    endless,
    flooding_watch,
    is_log,
    is_watch,
    send,
    silent_watch,
    stream,
)
from wait_stories import FAST, READY_LOGS, deadline_at_the_first_watch, run_story

from mlcc.deploy.cluster import LOG_LIMIT_BYTES, MAX_ANSWER_BYTES, WATCH_MAX_BYTES

SHORT = replace(FAST, timeout_s=1.5)
# Past the deadline once the wait has read the story: a short deadline that a loaded machine
# would meet before the first read cannot end a story that must show what it read.
AT_THE_WATCH = deadline_at_the_first_watch(1.5)
MiB = 1024 * 1024
# What the fake counts as sent includes what waits in the loopback sockets' buffers (several MiB
# each way) when the client stops reading: bounded is "a few MiB beyond the limit", unbounded
# would be gigabytes.
BUFFERS = 32 * MiB


def serving(at: float = 0) -> Scene:
    return Scene(at, d.endpoint("DeploymentComplete"), [d.pod(ready=True)], logs=READY_LOGS)


def in_progress() -> Scene:
    return Scene(0, d.endpoint("DeploymentInProgress"), [d.pod()])


def reads_of_the_endpoint(requests: list[str]) -> int:
    return sum(1 for r in requests if "/inferenceendpointconfigs/hp-dev" in r)


# --- the watch ------------------------------------------------------------------------------


@pytest.mark.parametrize("same_version", [True, False])
def test_a_flooding_watch_neither_spins_nor_outlasts_the_timeout(
    tmp_path: Path, same_version: bool
) -> None:
    sent = Sent()
    endpoint = d.endpoint("DeploymentInProgress")
    behaviour = Behaviour(custom=flooding_watch(endpoint, sent, same_version=same_version))
    settings = replace(SHORT, poll_s=0.2)
    outcome, lines, elapsed, api = run_story(tmp_path, [in_progress()], behaviour, settings)
    assert "did not serve within" in outcome.message
    assert lines and "DeploymentInProgress, 0/1 replicas ready" in lines[0]
    assert elapsed < settings.timeout_s + 20  # the deadline held, not hung
    # Rounds stay at least min(poll_s, 1 s) apart: about 8 in 1.5 s, never hundreds.
    assert reads_of_the_endpoint(api.requests) <= settings.timeout_s / 0.2 + 3
    # Each watch read at most WATCH_MAX_BYTES (and a chunk) of events that changed nothing.
    watches = sum(1 for r in api.requests if "watch=" in r)
    assert sent.bytes.get("watch", 0) <= watches * (WATCH_MAX_BYTES + BUFFERS)


def test_a_watch_that_never_sends_an_event_still_lets_the_wait_see_the_change(
    tmp_path: Path,
) -> None:
    behaviour = Behaviour(custom=silent_watch(30.0))
    scenes = [in_progress(), serving(0.4)]
    settings = replace(FAST, poll_s=0.2, timeout_s=60)
    outcome, lines, elapsed, _api = run_story(tmp_path, scenes, behaviour, settings)
    assert outcome.serving, outcome.message
    assert any("DeploymentInProgress" in line for line in lines)
    assert elapsed < 20  # not held by the 30 s silent watch


def test_a_watch_line_without_end_is_not_held_in_memory(tmp_path: Path) -> None:
    sent = Sent()

    def route(h: BaseHTTPRequestHandler, path: str, query: dict[str, str], _i: int) -> bool:
        if not is_watch(path, query):
            return False
        stream(h, endless(b"x" * 65536), sent, "watch")
        return True

    settings = replace(SHORT, poll_s=0.3)
    outcome, _, elapsed, api = run_story(
        tmp_path, [in_progress()], Behaviour(custom=route), settings
    )
    assert "did not serve within" in outcome.message
    watches = sum(1 for r in api.requests if "watch=" in r)
    assert sent.bytes["watch"] <= watches * (3 * MiB + BUFFERS)
    assert elapsed < settings.timeout_s + 20  # the deadline held, not hung


@pytest.mark.parametrize("how", ["event", "status"])
def test_410_gone_on_a_watch_reads_again_at_once(tmp_path: Path, how: str) -> None:
    gone = status_body(410, "Expired", "too old resource version: 100 (2000)")

    def route(h: BaseHTTPRequestHandler, path: str, query: dict[str, str], _i: int) -> bool:
        if not is_watch(path, query):
            return False
        if how == "status":
            send(h, 410, gone)
        else:
            error = json.loads(gone)
            stream(
                h, [json.dumps({"type": "ERROR", "object": error}).encode() + b"\n"], Sent(), "w"
            )
        return True

    # A long poll: only the 410's re-list can see the change in time.
    settings = replace(FAST, poll_s=30.0, timeout_s=60.0)
    scenes = [in_progress(), serving(0.3)]
    outcome, _, elapsed, _api = run_story(tmp_path, scenes, Behaviour(custom=route), settings)
    assert outcome.serving, outcome.message
    assert elapsed < 15  # not a whole poll: each 410 re-read at once (min(poll_s, 1 s) apart)


# --- the status -----------------------------------------------------------------------------


def with_status(**fields: object) -> dict[str, Any]:
    found = d.endpoint("DeploymentComplete")
    found["status"].update(fields)
    return found


@pytest.mark.parametrize(
    ("endpoint", "unknown"),
    [
        (with_status(state=5), "status.state: int (5), not text"),
        (
            with_status(observedGeneration="2"),
            "status.observedGeneration: str ('2'), not a whole number from 0 to "
            "9223372036854775807",
        ),
        (with_status(conditions="Ready"), "status.conditions: str ('Ready'), not a list"),
        ({**d.endpoint("DeploymentComplete"), "status": [1, 2]}, "status: a list, not a map"),
        (
            with_status(endpoints={"sagemaker": {"state": ["CreationCompleted"]}}),
            "status.endpoints.sagemaker.state: a list, not text",
        ),
    ],
)
def test_a_status_of_the_wrong_types_is_unknown_and_waited_on(
    tmp_path: Path, endpoint: dict[str, Any], unknown: str
) -> None:
    scene = Scene(0, endpoint, [d.pod(ready=True)], logs=READY_LOGS)
    outcome, lines, _, _ = run_story(
        tmp_path, [scene], settings=replace(SHORT, timeout_s=0.6), clock_of=AT_THE_WATCH
    )
    assert not outcome.serving
    assert "did not serve within" in outcome.message
    assert unknown in "\n".join(lines) + outcome.message


def test_spec_replicas_of_the_wrong_type_is_no_figure(tmp_path: Path) -> None:
    found = d.endpoint("DeploymentInProgress")
    found["spec"]["replicas"] = "3"
    scene = Scene(0, found, [d.pod(ready=True)], logs=READY_LOGS)
    outcome, lines, _, _ = run_story(
        tmp_path, [scene], settings=replace(SHORT, timeout_s=0.6), clock_of=AT_THE_WATCH
    )
    assert "1/? replicas ready" in lines[0]
    assert "spec.replicas: str ('3'), not a whole number from 0 to 2147483647" in lines[0]
    assert "/1 replicas" not in outcome.message


def test_pods_of_the_wrong_types_give_no_false_restarts_or_exit_codes(tmp_path: Path) -> None:
    pod = d.pod(waiting=("CrashLoopBackOff", "back-off"), terminated=d.crashed(1), restarts=2)
    worker = pod["status"]["containerStatuses"][1]
    worker["restartCount"] = "many"
    worker["lastState"]["terminated"]["exitCode"] = "1"
    scene = Scene(0, d.endpoint("DeploymentInProgress"), [pod])
    outcome, _, _, _ = run_story(tmp_path, [scene])
    assert "CrashLoopBackOff" in outcome.message
    assert "exit code" not in outcome.message and "restarts" not in outcome.message


@pytest.mark.parametrize("state", ["InService", "deploymentcomplete", "DeploymentComplete "])
def test_a_state_no_source_lists_is_shown_and_waited_on(tmp_path: Path, state: str) -> None:
    scene = Scene(0, d.endpoint(state), [d.pod(ready=True)], logs=READY_LOGS)
    outcome, _, _, _ = run_story(
        tmp_path, [scene], settings=replace(SHORT, timeout_s=0.5), clock_of=AT_THE_WATCH
    )
    assert not outcome.serving
    assert "a state no source lists" in outcome.message


# --- logs, lists, answers that change ----------------------------------------------------------


@pytest.mark.parametrize("head", [b"", s.VLLM_EAGLE3_LOG.encode()])
def test_a_log_of_gigabytes_is_read_only_to_its_limit(tmp_path: Path, head: bytes) -> None:
    sent = Sent()

    def route(h: BaseHTTPRequestHandler, path: str, _q: dict[str, str], _i: int) -> bool:
        if not is_log(path):
            return False
        stream(
            h, itertools.chain([head], endless(b"y" * 65536)), sent, "log", "text/plain"
        )  # no newline
        return True

    scene = Scene(0, d.endpoint("DeploymentComplete"), [d.pod(ready=True)])
    outcome, _, _, api = run_story(
        tmp_path, [scene], Behaviour(custom=route), replace(SHORT, timeout_s=1.0)
    )
    logs = sum(1 for r in api.requests if "/log" in r)
    assert sent.bytes["log"] <= logs * (LOG_LIMIT_BYTES + BUFFERS)
    if head:
        assert outcome.serving, outcome.message
    else:
        assert "still waiting for the engine config line" in outcome.message


def pod_list(count: int, token: str = "", first: int = 0) -> bytes:
    pods = [
        {"metadata": {"name": f"hp-dev-7c9f8d-{n:05d}", "labels": {"app": "hp-dev"}}}
        for n in range(first, first + count)
    ]
    body = {"kind": "PodList", "metadata": {"continue": token}, "items": pods}
    return json.dumps(body).encode()


@pytest.mark.parametrize("how", ["one page", "endless pages", "a repeated page"])
def test_thousands_of_pods_are_read_up_to_a_cap_and_the_rest_said(tmp_path: Path, how: str) -> None:
    pages = {"one page": pod_list(2500), "endless pages": b"", "a repeated page": pod_list(3, "t")}

    def route(h: BaseHTTPRequestHandler, path: str, query: dict[str, str], _i: int) -> bool:
        if not path.endswith("/pods"):
            return False
        if how == "endless pages":
            token = str(int(query.get("continue") or 0) + 1)
            send(h, 200, pod_list(250, token, first=250 * int(token)))
        else:
            send(h, 200, pages[how])
        return True

    outcome, _lines, _, api = run_story(
        tmp_path, [serving()], Behaviour(custom=route), replace(SHORT, timeout_s=6.0)
    )
    assert not outcome.serving
    assert "not read:" in outcome.message
    if how == "a repeated page":  # the repeated page's pods are not counted twice
        assert "pods after the first 3 (the API repeated a page)" in outcome.message
    pages = sum(1 for r in api.requests if "/pods?" in r or r.endswith("/pods"))
    assert pages <= 8 * reads_of_the_endpoint(api.requests)  # at most 8 pages a round


def test_thousands_of_events_do_not_stop_the_wait(tmp_path: Path) -> None:
    events = [d.event(d.POD, "Pulling", f"pull {n}", warning=False) for n in range(3000)]
    scene = Scene(0, d.endpoint("DeploymentComplete"), [d.pod(ready=True)], events, READY_LOGS)
    outcome, _, _, _ = run_story(tmp_path, [scene], settings=replace(FAST, timeout_s=10))
    assert outcome.serving, outcome.message


def test_a_pod_that_is_gone_before_its_log_is_read_is_waited_for(tmp_path: Path) -> None:
    calls: list[str] = []

    def route(h: BaseHTTPRequestHandler, path: str, _q: dict[str, str], _i: int) -> bool:
        if is_log(path) and len(calls) < 3:
            calls.append(path)
            send(h, 404, status_body(404, "NotFound", f'pods "{d.POD}" not found'))
            return True
        return False

    outcome, _, _, _ = run_story(tmp_path, [serving()], Behaviour(custom=route))
    assert outcome.serving, outcome.message
    assert len(calls) == 3


def test_429_is_retried_after_the_time_the_api_asks(tmp_path: Path) -> None:
    throttled: list[int] = []

    def route(h: BaseHTTPRequestHandler, path: str, _q: dict[str, str], _i: int) -> bool:
        if len(throttled) >= 2:
            return False
        throttled.append(1)
        send(
            h, 429, status_body(429, "TooManyRequests", "slow down"), headers=[("Retry-After", "1")]
        )
        return True

    settings = replace(FAST, api_grace_s=30.0, poll_s=0.05)
    outcome, _, elapsed, _ = run_story(tmp_path, [serving()], Behaviour(custom=route), settings)
    assert outcome.serving, outcome.message
    assert elapsed >= 1.5  # waited out both Retry-Afters, not 0.05 s polls


@pytest.mark.parametrize(
    ("status", "content_type", "body", "said"),
    [
        (
            403,
            "application/json",
            status_body(403, "Forbidden", "no access"),
            "403 Forbidden: no access",
        ),
        (404, "text/html", b"<html>nginx</html>", "not found"),
        (500, "text/plain", b"oops", "500 Internal Server Error"),
        (200, "application/json", b'{"metadata": {"name": "hp-', "is not JSON"),
        (200, "application/json", b"[" * 5000, "nested deeper than"),
        (200, "application/json", b'"a string"', "not an object"),
    ],
)
def test_http_errors_and_broken_bodies_end_in_one_line(
    tmp_path: Path, status: int, content_type: str, body: bytes, said: str
) -> None:
    def route(h: BaseHTTPRequestHandler, path: str, _q: dict[str, str], _i: int) -> bool:
        send(h, status, body, content_type)
        return True

    outcome, _, elapsed, _ = run_story(tmp_path, [serving()], Behaviour(custom=route))
    assert not outcome.serving
    assert said in outcome.message
    assert "\n" not in outcome.message
    assert elapsed < FAST.timeout_s + 20  # the deadline held, not hung


def test_an_answer_larger_than_the_limit_is_not_read_whole(tmp_path: Path) -> None:
    sent = Sent()

    def route(h: BaseHTTPRequestHandler, path: str, _q: dict[str, str], _i: int) -> bool:
        stream(
            h,
            itertools.chain([b'{"metadata": {"name": "'], endless(b"z" * 65536)),
            sent,
            "endpoint",
        )
        return True

    outcome, _, _, api = run_story(tmp_path, [serving()], Behaviour(custom=route))
    assert f"larger than {MAX_ANSWER_BYTES // MiB} MiB" in outcome.message
    assert sent.bytes["endpoint"] <= len(api.requests) * (MAX_ANSWER_BYTES + BUFFERS)


def test_an_endpoint_of_more_pods_than_logs_a_round_serves(tmp_path: Path) -> None:
    """40 ready pods, 16 logs a round: the logs already read (config line logged, no restart)
    are kept, so the wait reads each log about once and ends serving."""
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    names = [d.POD[:-5] + "".join(p) for p in itertools.product(alphabet, repeat=5)][:40]
    pods = [d.pod(name, ready=True) for name in names]
    logs = {(name, d.WORKER, False): s.VLLM_EAGLE3_LOG for name in names}
    scene = Scene(0, d.endpoint("DeploymentComplete"), pods, logs=logs)
    outcome, _, _, api = run_story(tmp_path, [scene], settings=replace(FAST, timeout_s=30))
    assert outcome.serving, outcome.message
    log_reads = sum(1 for r in api.requests if is_log(r.split("?")[0]))
    assert 40 <= log_reads <= 48


@pytest.mark.parametrize(("answer", "said"), [("500", "500"), ("hang", "no answer within")])
def test_a_deadline_before_the_api_grace_says_what_the_api_did(
    tmp_path: Path, answer: str, said: str
) -> None:
    """The wait's deadline comes first: the line says the API's own failure, never that the
    cluster did not answer, and not the wait's own time running out. The wait's clock passes
    the deadline once the API has seen a few reads, whenever that is: the last read may be cut
    short by it, as a read on a loaded machine is by a real deadline."""
    settings = replace(FAST, timeout_s=1.0, api_grace_s=60.0)

    def clock_of(api: FakeKubeApi) -> Callable[[], float]:
        return lambda: 0.0 if len(api.requests) < 3 else settings.timeout_s + 1

    outcome, _, _, _ = run_story(
        tmp_path,
        [serving()],
        Behaviour(answer=answer),
        settings,
        request_timeout_s=0.5,  # the hanging reads' own timeout; the clock decides the deadline
        clock_of=clock_of,
    )
    assert not outcome.serving
    assert "did not serve within" in outcome.message
    assert "the Kubernetes API kept failing: cannot read" in outcome.message
    assert said in outcome.message and "time ran out" not in outcome.message
