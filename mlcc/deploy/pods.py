"""What the pods show: crash loops, image pull back-offs, OOM kills, unschedulable pods,
evictions, liveness kills; and which pods are history (ended, and replaced by a ready one).

Pure: the kubelet's and the scheduler's own words from the pod statuses and events, the engine's
from the crashed run's log, each turned into a `Sign` that says what to change (docs/deploy.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from mlcc.deploy import causes, verify
from mlcc.deploy.snapshot import (
    LogRequest,
    Sign,
    Snapshot,
    Target,
    explaining_lines,
    in_time_order,
    moment,
    one_line,
)

OOM_KILLED = "OOMKilled"
CRASH_LOOP = "CrashLoopBackOff"
UNSCHEDULABLE = "Unschedulable"

_CRASH_ADVICE = (
    "fix what the engine log names (hp:engineArgs, hp:speculative*, hp:maxModelLen, hp:model), "
    "then run `pulumi up` again"
)
_IMAGE_ADVICE = "check hp:image (or that the built image was pushed) and that the nodes may pull it"
# Container waiting reasons that waiting does not heal, and what to change for each.
_STUCK_REASONS: dict[str, str] = {
    CRASH_LOOP: _CRASH_ADVICE,
    "ImagePullBackOff": _IMAGE_ADVICE,
    "ErrImagePull": _IMAGE_ADVICE,
    "InvalidImageName": "set hp:image to a valid image reference",
    "CreateContainerConfigError": "a Secret the pod reads is missing: check hp:hfToken",
    "CreateContainerError": "see `kubectl describe pod` for the container runtime's message",
}
_PULL_REASONS = ("ImagePullBackOff", "ErrImagePull")
_OOM_ADVICE = (
    "the container ran out of host memory: choose a larger hp:instanceType or lower hp:maxModelLen"
)
_UNSCHEDULABLE_ADVICE = (
    "no node can take the pod: add or free GPU nodes (hp:instanceGroups), or lower hp:replicas "
    "or hp:gpuCount"
)


def live_pods(pods: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The pods that count: neither being deleted nor replaced (`replaced_pods`)."""
    pods = list(pods)
    history = replaced_pods(pods)
    return [
        p
        for p in pods
        if not (p.get("metadata") or {}).get("deletionTimestamp")
        and verify.pod_name(p) not in history
    ]


def replaced_pods(pods: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """The pods that are history, by name, each with how it ended: terminal (Failed, Evicted,
    Succeeded) while a ready pod of the same endpoint was created after it. A pod of an unknown
    creation time is never history."""
    ready = [
        (when, verify.pod_name(p))
        for p in pods
        if pod_ready(p) and not causes.terminal(p) and (when := causes.created(p)) is not None
    ]
    history = {}
    for pod in pods:
        ended = causes.created(pod)
        if not causes.terminal(pod) or ended is None:
            continue
        newer = sorted(name for when, name in ready if when > ended)
        if newer:
            history[verify.pod_name(pod)] = f"{causes.ended_how(pod)}, replaced by {newer[0]}"
    return history


def pod_ready(pod: Mapping[str, Any]) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and str(c.get("status")) == "True" for c in conditions)


def _container_statuses(pod: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    status = pod.get("status") or {}
    return [*(status.get("initContainerStatuses") or []), *(status.get("containerStatuses") or [])]


def worker_name(pod: Mapping[str, Any], endpoint: Mapping[str, Any]) -> str | None:
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
        if causes.terminal(pod):  # its containers will not run again: no sign is read from it
            continue
        worker = worker_name(pod, endpoint)
        status = next((s for s in _container_statuses(pod) if s.get("name") == worker), None)
        if worker is None or status is None:
            continue
        name = verify.pod_name(pod)
        if _crashed_before(status) and not pod_ready(pod):
            wanted.append(LogRequest(name, worker, previous=True))
        if pod_ready(pod) or "terminated" in (status.get("state") or {}):
            wanted.append(LogRequest(name, worker, previous=False))
    return wanted


def _events_of(snapshot: Snapshot, name: str) -> list[Mapping[str, Any]]:
    """The events about `name`, in time order (those of no believable time first)."""
    mine = [e for e in snapshot.events if (e.get("involvedObject") or {}).get("name") == name]
    return _in_order(mine, snapshot.read_at)


def _in_order(events: Sequence[Mapping[str, Any]], now: float | None) -> list[Mapping[str, Any]]:
    return [events[i] for i in in_time_order([_event_time(e, now) for e in events])]


def _event_time(event: Mapping[str, Any], now: float | None) -> float | None:
    """When the event was last seen: the newest of its times that is one (lastTimestamp for the
    kubelet's and the scheduler's events, eventTime for events.k8s.io, else its creation)."""
    created = (event.get("metadata") or {}).get("creationTimestamp")
    times = [moment(v, now) for v in (event.get("lastTimestamp"), event.get("eventTime"), created)]
    known = [t for t in times if t is not None]
    return max(known) if known else None


def last_event(snapshot: Snapshot, names: Iterable[str]) -> str | None:
    relevant = [e for name in names for e in _events_of(snapshot, name)]
    if not relevant:
        return None
    event = _in_order(relevant, snapshot.read_at)[-1]
    return one_line(f"{event.get('reason', '?')}: {event.get('message', '')}", 200)


def _log_note(snapshot: Snapshot, pod: str, container: str | None) -> str:
    for previous in (True, False):
        log = snapshot.logs.get(LogRequest(pod, container or "", previous))
        if log:
            return "; engine log: " + " | ".join(explaining_lines(log))
    return ""


def pod_signs(target: Target, snapshot: Snapshot) -> list[Sign]:
    """CrashLoopBackOff (a liveness kill loop named as such), image pull back-off (quoting the
    failed pull), OOMKilled, Unschedulable: one sign per pod each; evictions that recur: one."""
    assert snapshot.endpoint is not None
    signs = []
    pods = live_pods(snapshot.pods)
    evictions = causes.eviction(pods)
    if evictions is not None:
        count, said = evictions
        message = (
            f"{target.where}: {count} pods were {causes.EVICTED} (no ready replacement): {said}"
        )
        signs.append(Sign(causes.EVICTED, message))
    for pod in pods:
        if causes.terminal(pod):
            continue
        name = verify.pod_name(pod)
        worker = worker_name(pod, snapshot.endpoint)
        prefix = f"{target.where}: pod {name}"
        events = _events_of(snapshot, name)
        for status in _container_statuses(pod):
            signs.extend(
                _container_signs(status, prefix, _log_note(snapshot, name, worker), events)
            )
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


def _crashed_and_retrying(status: Mapping[str, Any]) -> bool:
    last = (status.get("lastState") or {}).get("terminated") or {}
    return (
        bool(status.get("restartCount"))
        and last.get("exitCode") not in (None, 0)
        and not (status.get("ready"))
    )


def _container_signs(
    status: Mapping[str, Any], prefix: str, log_note: str, events: Sequence[Mapping[str, Any]]
) -> list[Sign]:
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
    if reason not in _STUCK_REASONS and _crashed_and_retrying(status):
        # Between two back-offs the kubelet shows the restarted container running: the loop
        # goes on, and so does the sign's time.
        reason = CRASH_LOOP
    if reason not in _STUCK_REASONS:
        return []
    detail = one_line(str((state.get("waiting") or {}).get("message") or ""), 200)
    if terminated.get("exitCode") is not None:
        detail = f"exit code {terminated['exitCode']}" + (f", {detail}" if detail else "")
    if reason == CRASH_LOOP and status.get("restartCount"):
        detail += f", {status['restartCount']} restarts"
    advice = _STUCK_REASONS[str(reason)]
    if reason in _PULL_REASONS and (pull := causes.pull_failure(events)) is not None:
        detail = pull[0]  # the registry's answer, which the back-off message leaves out
        advice = causes.PULL_REFUSED_ADVICE if pull[1] else advice
    liveness = causes.liveness_kill(events, status) if reason == CRASH_LOOP else None
    shown = f" ({detail.removeprefix(', ')})" if detail else ""
    key = f"{prefix}/{container}/{reason}"
    if liveness is not None:  # the kubelet killed it: the engine log says nothing of why
        restarts = f", {status['restartCount']} restarts" if status.get("restartCount") else ""
        exit_code = f"exit code {terminated.get('exitCode')}{restarts}"
        message = (
            f"{prefix}: container {container} is killed by its liveness probe ({exit_code}): "
            f"{liveness}; {causes.LIVENESS_ADVICE}"
        )
        return [Sign(key, message)]
    return [Sign(key, f"{prefix}: container {container} is in {reason}{shown}{log_note}; {advice}")]


def _unschedulable(pod: Mapping[str, Any], snapshot: Snapshot) -> str | None:
    status = pod.get("status") or {}
    if status.get("phase") != "Pending":
        return None
    for condition in status.get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("reason") == UNSCHEDULABLE:
            return one_line(str(condition.get("message") or "no node fits"), 240)
    failed = _events_of(snapshot, verify.pod_name(pod))
    failed = [e for e in failed if e.get("reason") == "FailedScheduling"]
    return one_line(str(failed[-1].get("message") or ""), 240) if failed else None
