"""Hypothesis fuzz of every reader that turns a Kubernetes API object into a decision or a
figure: `shapes.well_typed`, the deploy wait's reading (`waiter.observe`, `readiness.read`,
`judge`) and `mlcc verify`'s (`verify_reads.observe`, `verify_endpoint`). Any JSON at any path
of real samples, or whole objects of any JSON (kube_fuzz.py).

Whatever the answer: no exception; every line is one line; every figure (ready and desired
replicas, restarts, exit codes, pods selected) is a whole number that the answer holds or
derives, in its range, or `?`; a state no source lists is never taken for a known one, and
nothing is concluded "serving" (or PASS) from a state other than the one that says so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import deploy_samples as d
import verify_samples as s
from hypothesis import given, settings
from hypothesis import strategies as st
from kube_fuzz import (
    ENDPOINT_PATHS,
    EVENT_PATHS,
    JSON,
    POD_PATHS,
    MemoryApi,
    mutated,
    values_of,
)

from mlcc.cli.verify import reads as verify_reads
from mlcc.deploy import readiness, shapes, waiter
from mlcc.deploy.shapes import Whole
from mlcc.deploy.snapshot import Target
from mlcc.deploy.verify import READY_STATE, verify_endpoint
from mlcc.facts.operator import (
    DEPLOYMENT_OVERALL_STATE,
    DNS_HEALTH,
    ENDPOINT_STATE,
    NO_SAGEMAKER_ENDPOINT,
    SAGEMAKER_STATE,
)

TARGET = Target("inference", "hp-dev", s.expectation(), generation=2)
CRASHING = "hp-dev-7c9f8d-c7ash"
OOM = "hp-dev-7c9f8d-oomkd"
PENDING = "hp-dev-7c9f8d-pendg"
ENDPOINT = d.endpoint(READY_STATE)
PODS = [
    d.pod(ready=True),
    d.pod(CRASHING, waiting=("CrashLoopBackOff", "back-off"), terminated=d.crashed(1), restarts=3),
    d.pod(OOM, terminated=d.crashed(137, "OOMKilled"), restarts=1),
    d.pod(PENDING, phase="Pending", unschedulable="0/3 nodes are available"),
]
EVENTS = [
    d.event(PENDING, "FailedScheduling", "0/3 nodes are available"),
    d.event("hp-dev", "Created", "created", kind="InferenceEndpointConfig", warning=False),
]
LOGS = {
    (d.POD, d.WORKER, False): s.VLLM_EAGLE3_LOG,
    (CRASHING, d.WORKER, True): d.VLLM_VALUE_ERROR_LOG,
}
STUCK = {
    "CrashLoopBackOff",
    "ImagePullBackOff",
    "ErrImagePull",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
}
SHAPES = {"endpoint": shapes.ENDPOINT, "pod": shapes.POD, "event": shapes.EVENT}
SAMPLES = {"endpoint": (ENDPOINT, ENDPOINT_PATHS), "pod": (PODS[1], POD_PATHS)}
SAMPLES["event"] = (EVENTS[0], EVENT_PATHS)


def conforms(found: object, shape: shapes.Shape) -> list[str]:
    """Where `found` has a field of `shape` that is not of its type (or range)."""
    wrong, stack = [], [(found, shape, "")]
    while stack:
        value, sub, path = stack.pop()
        if isinstance(sub, dict):
            if not isinstance(value, dict):
                wrong.append(path)
                continue
            stack.extend((value[k], s_, f"{path}.{k}") for k, s_ in sub.items() if k in value)
        elif isinstance(sub, list):
            if not isinstance(value, list):
                wrong.append(path)
                continue
            stack.extend((v, sub[0], f"{path}[{i}]") for i, v in enumerate(value) if sub)
        elif isinstance(sub, Whole):
            whole = isinstance(value, int) and not isinstance(value, bool)
            if not (whole and sub.low <= value <= sub.high):
                wrong.append(path)
        elif not isinstance(value, sub) or value is None:
            wrong.append(path)
    return wrong


@settings(max_examples=300)
@given(st.sampled_from(sorted(SAMPLES)), st.data())
def test_well_typed_leaves_each_field_of_its_type_or_absent_with_one_note_each(
    kind: str, data: st.DataObject
) -> None:
    sample, read = SAMPLES[kind]
    found = data.draw(mutated(sample, read))
    typed, notes = shapes.well_typed(found, SHAPES[kind], kind)
    assert conforms(typed, SHAPES[kind]) == []
    for note in notes:
        assert "\n" not in note and len(note) < 400, note


def test_the_samples_are_well_typed_as_they_are() -> None:
    for kind, (sample, _) in SAMPLES.items():
        assert shapes.well_typed(sample, SHAPES[kind], kind) == (sample, [])


def test_a_count_out_of_its_range_is_a_note_not_a_figure() -> None:
    found = d.endpoint(READY_STATE, replicas=-3)
    found["status"]["observedGeneration"] = 2**63
    typed, notes = shapes.well_typed(found, shapes.ENDPOINT, "")
    assert "replicas" not in typed["spec"] and "observedGeneration" not in typed["status"]
    assert notes == [
        "spec.replicas: int (-3), not a whole number from 0 to 2147483647",
        "status.observedGeneration: int (9223372036854775808), not a whole number from 0 to "
        "9223372036854775807",
    ]


def test_a_pod_listed_twice_or_without_a_name_is_counted_once_and_noted() -> None:
    nameless = d.pod(ready=True)
    del nameless["metadata"]["name"]
    typed = shapes.typed_pods([PODS[0], PODS[0], nameless])
    assert [notes for _, notes in typed] == [
        [f"pod {d.POD}: listed more than once"],
        ["pods[2]: metadata.name: absent"],
    ]


# --- the deploy wait ------------------------------------------------------------------------


@st.composite
def cluster(draw: st.DrawFn) -> MemoryApi:
    """A cluster whose endpoint, pods or events (or all three) are hostile."""
    hostile_parts = draw(st.sets(st.sampled_from(["endpoint", "pods", "events"]), min_size=1))
    found: Any = ENDPOINT
    if "endpoint" in hostile_parts:
        found = draw(mutated(ENDPOINT, ENDPOINT_PATHS))
    pods: list[Any] = list(draw(st.lists(st.sampled_from(PODS), min_size=1, max_size=3)))
    if "pods" in hostile_parts:
        index = draw(st.integers(0, len(pods) - 1))
        pods[index] = draw(mutated(pods[index], POD_PATHS))
        pods += draw(st.lists(JSON, max_size=1))
    events: list[Any] = list(EVENTS)
    if "events" in hostile_parts:
        events = draw(st.lists(mutated(EVENTS[0], EVENT_PATHS) | JSON, max_size=3))
    return MemoryApi(found if isinstance(found, dict) else None, pods, events, LOGS)


def numbers(pattern: str, lines: list[str]) -> list[str]:
    return [m for line in lines for m in re.findall(pattern, line)]


def pod_names(api: MemoryApi) -> dict[object, bool]:
    """The pods of the answer by name (whether it has one)."""
    names: dict[object, bool] = {}
    for index, pod in enumerate(api.pod_list):
        name = raw_in(pod, "metadata", "name")
        named = isinstance(name, str) and bool(name)
        names[name if named else index] = named
    return names


def raw_in(found: object, *path: str) -> object:
    for key in path:
        found = found.get(key) if isinstance(found, Mapping) else None
    return found


def raw(api: MemoryApi, *path: str) -> object:
    found: object = api.found
    for key in path:
        found = found.get(key) if isinstance(found, Mapping) else None
    return found


@settings(max_examples=300)
@given(cluster())
def test_the_wait_reads_any_answer_into_true_figures_and_known_states_only(api: MemoryApi) -> None:
    snapshot = waiter.observe(api, TARGET)  # type: ignore[arg-type]
    reading = readiness.read(TARGET, snapshot)
    verdict, _ = readiness.judge(reading, {}, 0.0, 60.0)
    lines = [reading.progress, reading.waiting_for, verdict.message]
    lines += [sign.message for sign in reading.signs]
    assert all("\n" not in line and len(line) < 2000 for line in lines), lines

    restarts = values_of(api.pod_list, "restartCount")
    for count in numbers(r"(-?\d+) restarts", lines):
        assert int(count) > 0 and int(count) in restarts
    for code in numbers(r"exit code (-?\d+)", lines):
        assert int(code) in values_of(api.pod_list, "exitCode") and -(2**31) <= int(code) < 2**31
    names = pod_names(api)
    for ready, desired in numbers(r"(\d+)/(\S+) replicas ready", lines):
        assert int(ready) <= len(names)
        if desired != "?":
            scaling = raw(api, "spec", "autoScalingSpec", "minReplicaCount")
            assert (
                int(desired) in [1, raw(api, "spec", "replicas"), scaling]
                and 0 <= int(desired) < 2**31
            )

    state = raw(api, "status", "state")
    if reading.serving:
        assert state == READY_STATE
        assert raw(api, "status", "deploymentStatus", "deploymentObjectOverallState") in (
            None,
            "",
            *DEPLOYMENT_OVERALL_STATE.ready,
        )
        assert snapshot.malformed == () and snapshot.unread == ()
        if raw(api, "spec", "endpointName") not in (None, "", NO_SAGEMAKER_ENDPOINT):
            assert raw(api, "status", "endpoints", "sagemaker", "state") in SAGEMAKER_STATE.ready
        if raw(api, "spec", "dnsConfig", "hostedZoneId"):
            assert raw(api, "status", "dnsStatus", "dnsHealth") in (None, "", *DNS_HEALTH.ready)
    listed = {*ENDPOINT_STATE.ready, *ENDPOINT_STATE.failed, *ENDPOINT_STATE.working}
    listed |= set(ENDPOINT_STATE.other)
    if isinstance(state, str) and state and state not in listed:
        assert not reading.serving
    for message in (sign.message for sign in reading.signs):
        if " is DeploymentFailed" in message:
            overall = raw(api, "status", "deploymentStatus", "deploymentObjectOverallState")
            assert "DeploymentFailed" in (state, overall)
        for reason in re.findall(r"container \S+ is in (\S+)", message):
            assert reason in STUCK
        if "was OOMKilled" in message:
            assert "OOMKilled" in values_of(api.pod_list, "reason")


# --- mlcc verify ----------------------------------------------------------------------------


@settings(max_examples=200)
@given(cluster())
def test_verify_reads_any_answer_into_one_line_checks_that_pass_only_on_what_was_read(
    api: MemoryApi,
) -> None:
    observed, notes = verify_reads.observe(api, "inference", "hp-dev")  # type: ignore[arg-type]
    checks = [*verify_endpoint(observed, s.expectation()), *notes]
    assert all("\n" not in check.line for check in checks)
    for check in checks:
        if check.name == "endpoint" and check.passed:
            assert raw(api, "status", "state") == READY_STATE
        if check.name == "pods" and check.passed:
            selected = int(check.detail.split(" ", 1)[0])
            assert selected == len(observed.pods) == len({id(p) for p in observed.pods})
            assert selected <= len(pod_names(api)) + sum(not n for n in pod_names(api).values())
        if check.name == "answer":
            assert not check.passed and check.detail.startswith("unknown: ")
