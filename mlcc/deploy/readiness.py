"""Is an applied endpoint serving yet? The pure decisions of the deploy wait (docs/deploy.md).

Every function takes what the Kubernetes API returned (the InferenceEndpointConfig, its pods and
events as JSON-shaped dicts, container logs as text) and returns a `Reading`; `judge` turns a
reading and how long each failure sign has lasted into a `Verdict`: keep waiting, serving, or
failed with one line that quotes the operator's or the engine's own words and says what to
change. The loop around it is `mlcc/deploy/waiter.py`; nothing here talks to the cluster.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from mlcc import verify
from mlcc.verify import KIND, READY_STATE, Expectation

FAILED_STATE = "DeploymentFailed"  # the CRD's status.state enum, with READY_STATE
OOM_KILLED = "OOMKilled"
UNSCHEDULABLE = "Unschedulable"
MAX_LINE = 300

_CRASH_ADVICE = (
    "fix what the engine log names (hp:engineArgs, hp:speculative*, hp:maxModelLen, hp:model), "
    "then run `pulumi up` again"
)
# Container waiting reasons that waiting does not heal, and what to change for each.
_STUCK_REASONS: dict[str, str] = {
    "CrashLoopBackOff": _CRASH_ADVICE,
    "ImagePullBackOff": "check hp:image (or that the built image was pushed) and that the "
    "nodes may pull it",
    "ErrImagePull": "check hp:image (or that the built image was pushed) and that the nodes may "
    "pull it",
    "InvalidImageName": "set hp:image to a valid image reference",
    "CreateContainerConfigError": "a Secret the pod reads is missing: check hp:hfToken",
    "CreateContainerError": "see `kubectl describe pod` for the container runtime's message",
}
_OOM_ADVICE = (
    "the container ran out of host memory: choose a larger hp:instanceType or lower hp:maxModelLen"
)
_UNSCHEDULABLE_ADVICE = (
    "no node can take the pod: add or free GPU nodes (hp:instanceGroups), or lower hp:replicas "
    "or hp:gpuCount"
)
_FAILED_ADVICE = "fix the cause and run `pulumi up` again"
# Log lines that explain an exit: the wrapper's refusal, Python exceptions (vLLM's ValueError),
# CUDA out-of-memory.
_EXPLAINING = re.compile(
    r"mlcc-serve: error:|\b[A-Za-z_.]*(?:Error|Exception)\b|out of memory", re.IGNORECASE
)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class Target:
    """One endpoint to wait for: where it is, what it must run, the generation just applied."""

    namespace: str
    name: str
    expectation: Expectation
    generation: int | None = None  # None: the generation the cluster holds now

    @property
    def where(self) -> str:
        return f"{KIND} {self.namespace}/{self.name}"


@dataclass(frozen=True)
class LogRequest:
    pod: str
    container: str
    previous: bool  # the log of the container's last (crashed) run


@dataclass(frozen=True)
class Snapshot:
    """What the cluster returned for one endpoint in one round."""

    endpoint: Mapping[str, Any] | None
    pods: Sequence[Mapping[str, Any]] = ()
    events: Sequence[Mapping[str, Any]] = ()
    logs: Mapping[LogRequest, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Sign:
    """A sign that the deploy will not succeed; `key` identifies it across rounds."""

    key: str
    message: str
    immediate: bool = False


@dataclass(frozen=True)
class Reading:
    progress: str  # one line: state, ready replicas, the last event
    serving: bool
    signs: tuple[Sign, ...] = ()
    waiting_for: str = ""


@dataclass(frozen=True)
class Verdict:
    outcome: Literal["waiting", "serving", "failed"]
    message: str


def one_line(text: str, limit: int = MAX_LINE) -> str:
    """Text for an error line: control characters escaped, cut when long."""
    flat = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text.strip())
    return flat if len(flat) <= limit else flat[:limit] + "..."


def explaining_lines(log: str, most: int = 2) -> list[str]:
    """The last log lines that say why the engine stopped (else the last lines at all)."""
    lines = [line for line in log.splitlines() if line.strip()]
    refusals = [line for line in lines if "mlcc-serve: error:" in line]
    chosen = refusals or [line for line in lines if _EXPLAINING.search(line)] or lines
    return [one_line(line) for line in chosen[-most:]]


# --- the custom resource -------------------------------------------------------------------


def _status(endpoint: Mapping[str, Any]) -> Mapping[str, Any]:
    return endpoint.get("status") or {}


def generation_wanted(target: Target, endpoint: Mapping[str, Any]) -> int | None:
    if target.generation is not None:
        return target.generation
    generation = (endpoint.get("metadata") or {}).get("generation")
    return int(generation) if isinstance(generation, int) else None


def generation_observed(target: Target, endpoint: Mapping[str, Any]) -> bool:
    """Whether the operator's status is about the generation just applied."""
    wanted = generation_wanted(target, endpoint)
    observed = _status(endpoint).get("observedGeneration")
    if wanted is None:
        return True
    return isinstance(observed, int) and observed >= wanted


def desired_replicas(endpoint: Mapping[str, Any]) -> int:
    """spec.replicas, or autoscaling's floor when it is lower (KEDA may scale down to it)."""
    spec = endpoint.get("spec") or {}
    replicas = _int(spec.get("replicas"), 1)
    scaling = spec.get("autoScalingSpec")
    if isinstance(scaling, Mapping):
        return max(0, min(replicas, _int(scaling.get("minReplicaCount"), 1)))
    return replicas


def _int(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def operator_message(endpoint: Mapping[str, Any]) -> str:
    """What the operator says about its state: the deployment status, else a failing condition."""
    status = _status(endpoint)
    deployment = status.get("deploymentStatus") or {}
    parts = [str(deployment[k]) for k in ("reason", "message") if deployment.get(k)]
    if not parts:
        for condition in status.get("conditions") or []:
            if str(condition.get("status")) == "False" and condition.get("message"):
                parts = [str(condition.get("reason") or ""), str(condition["message"])]
                break
    return one_line(": ".join(p for p in parts if p))


# --- pods ----------------------------------------------------------------------------------


def live_pods(pods: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [p for p in pods if not (p.get("metadata") or {}).get("deletionTimestamp")]


def pod_ready(pod: Mapping[str, Any]) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and str(c.get("status")) == "True" for c in conditions)


def _container_statuses(pod: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    status = pod.get("status") or {}
    return [*(status.get("initContainerStatuses") or []), *(status.get("containerStatuses") or [])]


def _worker_name(pod: Mapping[str, Any], endpoint: Mapping[str, Any]) -> str | None:
    image = ((endpoint.get("spec") or {}).get("worker") or {}).get("image")
    container = verify.worker_container(pod, image)
    return str(container["name"]) if container and container.get("name") else None


def _crashed_before(status: Mapping[str, Any]) -> bool:
    return bool(status.get("restartCount")) or "terminated" in (status.get("lastState") or {})


def logs_wanted(
    endpoint: Mapping[str, Any] | None, pods: Sequence[Mapping[str, Any]]
) -> list[LogRequest]:
    """The worker logs a reading needs: a crashed run's (why), a ready pod's (speculation)."""
    if endpoint is None:
        return []
    wanted = []
    for pod in live_pods(pods):
        worker = _worker_name(pod, endpoint)
        status = next((s for s in _container_statuses(pod) if s.get("name") == worker), None)
        if worker is None or status is None:
            continue
        name = verify.pod_name(pod)
        if _crashed_before(status) and not pod_ready(pod):
            wanted.append(LogRequest(name, worker, previous=True))
        if pod_ready(pod) or "terminated" in (status.get("state") or {}):
            wanted.append(LogRequest(name, worker, previous=False))
    return wanted


def _events_of(events: Sequence[Mapping[str, Any]], name: str) -> list[Mapping[str, Any]]:
    mine = [e for e in events if (e.get("involvedObject") or {}).get("name") == name]
    return sorted(mine, key=_event_time)


def _event_time(event: Mapping[str, Any]) -> str:
    created = (event.get("metadata") or {}).get("creationTimestamp")
    return str(event.get("lastTimestamp") or event.get("eventTime") or created or "")


def last_event(snapshot: Snapshot, names: Iterable[str]) -> str | None:
    relevant = [e for name in names for e in _events_of(snapshot.events, name)]
    if not relevant:
        return None
    event = max(relevant, key=_event_time)
    return one_line(f"{event.get('reason', '?')}: {event.get('message', '')}", 200)


def _log_note(snapshot: Snapshot, pod: str, container: str | None) -> str:
    for previous in (True, False):
        log = snapshot.logs.get(LogRequest(pod, container or "", previous))
        if log:
            return "; engine log: " + " | ".join(explaining_lines(log))
    return ""


def pod_signs(target: Target, snapshot: Snapshot) -> list[Sign]:
    """CrashLoopBackOff, image pull back-off, OOMKilled, Unschedulable: one sign per pod each."""
    assert snapshot.endpoint is not None
    signs = []
    for pod in live_pods(snapshot.pods):
        name = verify.pod_name(pod)
        worker = _worker_name(pod, snapshot.endpoint)
        prefix = f"{target.where}: pod {name}"
        for status in _container_statuses(pod):
            signs.extend(_container_signs(status, prefix, _log_note(snapshot, name, worker)))
        unschedulable = _unschedulable(pod, snapshot)
        if unschedulable is not None:
            signs.append(
                Sign(
                    f"{name}/{UNSCHEDULABLE}",
                    f"{prefix} is Pending, {UNSCHEDULABLE}: {unschedulable}; "
                    f"{_UNSCHEDULABLE_ADVICE}",
                )
            )
    return signs


def _container_signs(status: Mapping[str, Any], prefix: str, log_note: str) -> list[Sign]:
    container = status.get("name", "?")
    state, last = status.get("state") or {}, status.get("lastState") or {}
    terminated = state.get("terminated") or last.get("terminated") or {}
    if terminated.get("reason") == OOM_KILLED:
        return [
            Sign(
                f"{prefix}/{container}/{OOM_KILLED}",
                f"{prefix}: container {container} was {OOM_KILLED}{log_note}; {_OOM_ADVICE}",
                immediate=True,
            )
        ]
    reason = (state.get("waiting") or {}).get("reason")
    if reason not in _STUCK_REASONS:
        return []
    detail = one_line(str((state.get("waiting") or {}).get("message") or ""), 200)
    if terminated.get("exitCode") is not None:
        detail = f"exit code {terminated['exitCode']}" + (f", {detail}" if detail else "")
    shown = f" ({detail})" if detail else ""
    return [
        Sign(
            f"{prefix}/{container}/{reason}",
            f"{prefix}: container {container} is in {reason}{shown}{log_note}; "
            f"{_STUCK_REASONS[str(reason)]}",
        )
    ]


def _unschedulable(pod: Mapping[str, Any], snapshot: Snapshot) -> str | None:
    status = pod.get("status") or {}
    if status.get("phase") != "Pending":
        return None
    for condition in status.get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("reason") == UNSCHEDULABLE:
            return one_line(str(condition.get("message") or "no node fits"), 240)
    failed = [e for e in _events_of(snapshot.events, verify.pod_name(pod))]
    failed = [e for e in failed if e.get("reason") == "FailedScheduling"]
    return one_line(str(failed[-1].get("message") or ""), 240) if failed else None


# --- the whole endpoint --------------------------------------------------------------------


def read(target: Target, snapshot: Snapshot) -> Reading:
    endpoint = snapshot.endpoint
    if endpoint is None:
        message = f"{target.where} not found (deleted, or another namespace or context?)"
        return Reading(message, False, (Sign("missing", message, immediate=True),), "it to exist")
    state = _status(endpoint).get("state")
    observed = generation_observed(target, endpoint)
    pods = live_pods(snapshot.pods)
    ready = [p for p in pods if pod_ready(p)]
    desired = desired_replicas(endpoint)
    progress = _progress(target, snapshot, state, observed, len(ready), desired)
    signs = pod_signs(target, snapshot)
    if state == FAILED_STATE and observed:
        signs.insert(0, _failed_sign(target, endpoint, signs))
    if not observed:
        return Reading(progress, False, tuple(signs), "the operator to observe the new spec")
    if state != READY_STATE:
        return Reading(progress, False, tuple(signs), f"state {READY_STATE} (now {state})")
    if len(ready) < desired:
        return Reading(progress, False, tuple(signs), f"{desired} ready replicas")
    return _speculation(target, snapshot, ready, progress, signs)


def _progress(
    target: Target, snapshot: Snapshot, state: object, observed: bool, ready: int, desired: int
) -> str:
    assert snapshot.endpoint is not None
    shown = str(state) if state else "no status yet"
    if not observed:
        shown += " (the operator has not yet observed the new spec)"
    names = [target.name, *(verify.pod_name(p) for p in snapshot.pods)]
    event = last_event(snapshot, names)
    tail = f"; last event: {event}" if event else ""
    return f"{target.where}: {shown}, {ready}/{desired} replicas ready{tail}"


def _failed_sign(target: Target, endpoint: Mapping[str, Any], pod_signs: list[Sign]) -> Sign:
    said = operator_message(endpoint) or "the operator gave no message"
    cause = f"; {pod_signs[0].message.removeprefix(target.where + ': ')}" if pod_signs else ""
    advice = "" if pod_signs else f"; {_FAILED_ADVICE}"
    return Sign(
        FAILED_STATE, f"{target.where} is {FAILED_STATE}: {said}{cause}{advice}", immediate=True
    )


def _speculation(
    target: Target,
    snapshot: Snapshot,
    ready: Sequence[Mapping[str, Any]],
    progress: str,
    signs: list[Sign],
) -> Reading:
    """Serving once every ready pod's engine has logged its config, as the stack asks."""
    assert snapshot.endpoint is not None
    expected = target.expectation
    for pod in ready:
        name = verify.pod_name(pod)
        worker = _worker_name(pod, snapshot.endpoint) or ""
        log = snapshot.logs.get(LogRequest(name, worker, previous=False))
        if log is None or not verify.engine_config_logged(log, expected.engine):
            return Reading(progress, False, tuple(signs), f"the engine config line of pod {name}")
        check = verify.check_engine_log(f"pod {name} engine log", log, expected)
        if not check.passed:
            message = f"{target.where}: pod {name}: {check.detail}; check hp:speculative*"
            return Reading(progress, False, (Sign(f"{name}/speculation", message, True),), "")
    speculation = "speculation on" if expected.speculation_on else "speculation off"
    return Reading(f"{progress}; {speculation}, as configured", True)


def judge(
    reading: Reading, first_seen: Mapping[str, float], now: float, grace_s: float
) -> tuple[Verdict, dict[str, float]]:
    """Serving, failed (an immediate sign, or one that lasted `grace_s`), or keep waiting.

    Returns the first-seen time of every sign present now; a sign that went away is forgotten.
    """
    if reading.serving:
        return Verdict("serving", reading.progress), {}
    seen = {sign.key: first_seen.get(sign.key, now) for sign in reading.signs}
    for sign in reading.signs:
        if sign.immediate or now - seen[sign.key] >= grace_s:
            return Verdict("failed", sign.message), seen
    return Verdict("waiting", reading.progress), seen


def timed_out(target: Target, reading: Reading | None, minutes: float) -> str:
    """The failure at the deadline: the state reached so far and what was still missing."""
    limit = f"{minutes:g} minutes (hp:deployTimeoutMinutes)"
    if reading is None:
        return f"{target.where} did not serve within {limit}: the cluster never answered"
    missing = f"; still waiting for {reading.waiting_for}" if reading.waiting_for else ""
    seen = f"; seen: {reading.signs[0].message}" if reading.signs else ""
    return f"{target.where} did not serve within {limit}: {reading.progress}{missing}{seen}"
