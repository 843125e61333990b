"""The deploy wait: read each endpoint until it serves, fails or runs out of time.

The same function runs inside `pulumi up` (mlcc/components/readiness.py) and in
`mlcc verify --wait`. Each round reads the InferenceEndpointConfig, its pods, the events about
each of them and the worker logs a decision needs (`pods.logs_wanted`), and asks
`readiness.read`/`judge`. Between rounds it watches the endpoint, so a state change ends the pause
early; a watch that drops is waited out. A request that fails with 401/403 ends the wait at once;
other API failures are retried until they have lasted `api_grace_s`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from mlcc.config.deploy_wait import DEFAULT_TIMEOUT_MINUTES
from mlcc.deploy import draft_head, endpoint_pods, engine_log, readiness, shapes, verify
from mlcc.deploy.cluster import ApiError, Cluster, TimeRanOut
from mlcc.deploy.pods import live_pods, logs_wanted, pod_ready
from mlcc.deploy.readiness import Reading
from mlcc.deploy.registration import REGISTRATION_GRACE_S
from mlcc.deploy.snapshot import LogRequest, Snapshot, Target, one_line

Progress = Callable[[Target, str], None]
Clock = Callable[[], float]

POLL_S = 10.0
# How long a failure sign (CrashLoopBackOff, Unschedulable, ...) may last before the wait fails:
# long enough for a node to join or a pull to be retried, short enough to fail within minutes.
GRACE_S = 60.0
API_GRACE_S = 60.0
# Rounds are at least this far apart (or poll_s, when shorter), whatever the watch says: a watch
# that floods events, or answers 410 Gone every time, never turns the loop into a busy one.
MIN_ROUND_S = 1.0
MAX_EVENT_OBJECTS = 8  # the endpoint and 7 of its pods (those not ready first)
MAX_LOGS_PER_ROUND = 16  # each at most LOG_LIMIT_BYTES (mlcc/deploy/cluster.py)
SEEN_LOG_BYTES = 64 * 1024 * 1024  # the logs kept across rounds (LogsSeen)

_PERMANENT_ADVICE = {
    401: "the API server refused the kubeconfig's credentials: check the AWS identity that "
    "`aws eks get-token` uses, or write the kubeconfig again with `aws eks update-kubeconfig`",
    403: "the kubeconfig's identity may not read this: give it an EKS access entry for the "
    "namespace",
}


@dataclass(frozen=True)
class WaitSettings:
    timeout_s: float = DEFAULT_TIMEOUT_MINUTES * 60.0
    poll_s: float = POLL_S
    grace_s: float = GRACE_S
    api_grace_s: float = API_GRACE_S
    # A SageMaker endpoint still unregistered once everything else serves (registration.py).
    registration_grace_s: float = REGISTRATION_GRACE_S

    @property
    def timeout_minutes(self) -> float:
        return self.timeout_s / 60


@dataclass(frozen=True)
class Outcome:
    target: Target
    serving: bool
    message: str
    stopped: bool = False  # ended because another endpoint failed


def observe(cluster: Cluster, target: Target, seen: LogsSeen | None = None) -> Snapshot:
    """One round's reads, each answer checked by `shapes.well_typed`; at most
    MAX_EVENT_OBJECTS objects' events and MAX_LOGS_PER_ROUND logs, the rest said unread.

    `seen` keeps, across rounds, the running engines' logs that already hold their config line
    (the head a decision reads does not change until the container restarts), so every round
    reads logs not seen yet and an endpoint of any size is judged within a few rounds."""
    found = cluster.endpoint(target.namespace, target.name)
    if found is None:
        return Snapshot(None)
    endpoint, malformed = shapes.well_typed(found, shapes.ENDPOINT, "")
    selector = endpoint_pods.pod_selector(endpoint)
    listing = cluster.pods(target.namespace, selector)
    unread = [listing.unread] if listing.unread else []
    typed = shapes.typed_pods(listing.items)
    if not selector:
        mine = {
            id(p) for p in endpoint_pods.endpoint_pods([p for p, _ in typed], endpoint, target.name)
        }
        typed = [(p, notes) for p, notes in typed if id(p) in mine]
    pods = [p for p, _ in typed]
    malformed.extend(note for _, notes in typed for note in notes)
    live = live_pods(pods)
    chosen = sorted(live, key=pod_ready)[: MAX_EVENT_OBJECTS - 1]  # the pods not ready first
    events_unread = []
    if len(live) > len(chosen):
        events_unread.append(f"the events of {len(live) - len(chosen)} pods")
    events: list[dict[str, object]] = []
    for name in [target.name, *(verify.pod_name(p) for p in chosen)]:
        about = cluster.events(target.namespace, name)
        events.extend(shapes.well_typed(e, shapes.EVENT, "event")[0] for e in about.items)
        events_unread.extend([about.unread] if about.unread else [])
    wanted = sorted(logs_wanted(endpoint, pods), key=lambda r: not r.previous)
    seen = LogsSeen() if seen is None else seen
    logs = {r: text for r in wanted if (text := seen.get(r, pods)) is not None}
    fresh = [r for r in wanted if r not in logs]
    if len(fresh) > MAX_LOGS_PER_ROUND:
        left = len(fresh) - MAX_LOGS_PER_ROUND
        unread.append(f"{left} container logs (at most {MAX_LOGS_PER_ROUND} a round)")
    for request in fresh[:MAX_LOGS_PER_ROUND]:
        text = cluster.log(target.namespace, request.pod, request.container, request.previous)
        if text is not None:
            logs[request] = text
            if engine_log.engine_config_logged(text, target.expectation.engine):
                seen.keep(request, pods, text)
    errors = _read_copies(cluster, target, pods, seen, logs)
    return Snapshot(
        endpoint,
        pods,
        events,
        logs,
        errors,
        tuple(malformed),
        tuple(unread),
        tuple(events_unread),
        read_at=time.time(),  # no time the API wrote is believed past it (snapshot.moment)
    )


def _read_copies(
    cluster: Cluster,
    target: Target,
    pods: Sequence[Mapping[str, Any]],
    seen: LogsSeen,
    logs: dict[LogRequest, str],
) -> dict[LogRequest, str]:
    """The logs of the ready pods' copies of an s3:// head (mlcc/deploy/draft_head.py), into
    `logs`, at most MAX_LOGS_PER_ROUND a round; returns why those not read are missing. None of
    them is a reason to wait or to fail: the progress says which were not checked."""
    errors: dict[LogRequest, str] = {}
    read = 0
    for request in draft_head.log_requests(target.expectation, pods):
        if (text := seen.get(request, pods)) is not None:
            logs[request] = text
            continue
        if read >= MAX_LOGS_PER_ROUND:
            errors[request] = f"not read (at most {MAX_LOGS_PER_ROUND} a round)"
            continue
        read += 1
        text, why = draft_head.read_log(cluster, target.namespace, request.pod)
        if text is None:
            errors[request] = why
            continue
        logs[request] = text
        if draft_head.marker_of(text) is not None:
            seen.keep(request, pods, text)
    return errors


class LogsSeen:
    """Running engines' logs that hold their config line, by pod, container and restart count,
    at most SEEN_LOG_BYTES in all (past it, logs are read again each round)."""

    def __init__(self) -> None:
        self._logs: dict[tuple[str, str, object], str] = {}
        self._bytes = 0

    def get(self, request: LogRequest, pods: Sequence[Mapping[str, Any]]) -> str | None:
        if request.previous:
            return None
        return self._logs.get(_log_key(request, pods))

    def keep(self, request: LogRequest, pods: Sequence[Mapping[str, Any]], text: str) -> None:
        if request.previous or self._bytes + len(text) > SEEN_LOG_BYTES:
            return
        self._logs[_log_key(request, pods)] = text
        self._bytes += len(text)


def _log_key(request: LogRequest, pods: Sequence[Mapping[str, Any]]) -> tuple[str, str, object]:
    """A restart starts a new log: the container's restart count is part of the key."""
    for pod in pods:
        if verify.pod_name(pod) != request.pod:
            continue
        status = pod.get("status") or {}
        for container in status.get("containerStatuses") or []:
            if isinstance(container, Mapping) and container.get("name") == request.container:
                return request.pod, request.container, container.get("restartCount")
    return request.pod, request.container, None


def wait_for_endpoint(
    cluster: Cluster,
    target: Target,
    settings: WaitSettings,
    progress: Progress,
    stop: threading.Event | None = None,
    clock: Clock = time.monotonic,
) -> Outcome:
    stop = stop or threading.Event()
    deadline = clock() + settings.timeout_s
    cluster = cluster.until(deadline)  # no request outlasts the wait
    first_seen: dict[str, float] = {}
    failing_since: float | None = None
    failing: ApiError | None = None
    reading: Reading | None = None
    shown = ""
    seen = LogsSeen()
    while True:
        now = clock()
        snapshot: Snapshot | None = None
        retry_after = 0.0
        try:
            snapshot = observe(cluster, target, seen)
            failing_since, failing = None, None
        except ApiError as error:
            # The API's own failure says more than the wait's time running out; a read the
            # deadline cut short (its timeout was what was left) says less than an earlier one.
            cut_short = failing is not None and clock() >= deadline
            if not isinstance(error, TimeRanOut) and not cut_short:
                failing = error
            if error.permanent:
                advice = _PERMANENT_ADVICE.get(error.status or 0, "")
                told = f"; {advice}" if advice else ""
                return Outcome(target, False, f"{target.where}: {error}{told}")
            retry_after = error.retry_after or 0.0
            failing_since = now if failing_since is None else failing_since
            if now - failing_since >= settings.api_grace_s and clock() < deadline:
                lasted = f"{now - failing_since:.0f} s"
                return Outcome(
                    target,
                    False,
                    f"{target.where}: the Kubernetes API kept failing ({lasted}): {error}",
                )
        if snapshot is not None:
            reading = readiness.read(target, snapshot, settings.registration_grace_s)
            verdict, first_seen = readiness.judge(reading, first_seen, now, settings.grace_s)
            if reading.progress != shown:
                shown = reading.progress
                progress(target, shown)
            if verdict.outcome != "waiting":
                return Outcome(target, verdict.outcome == "serving", verdict.message)
        remaining = deadline - clock()
        if remaining <= 0:
            why = str(failing) if failing else None
            message = readiness.timed_out(target, reading, settings.timeout_minutes, why)
            return Outcome(target, False, message)
        if stop.is_set():
            return Outcome(target, False, f"{target.where}: not waited for further", stopped=True)
        pause = min(max(settings.poll_s, retry_after), remaining)
        _pause(cluster, target, snapshot, pause, min(settings.poll_s, MIN_ROUND_S), stop, clock)


def _pause(
    cluster: Cluster,
    target: Target,
    snapshot: Snapshot | None,
    seconds: float,
    least: float,
    stop: threading.Event,
    clock: Clock,
) -> None:
    """Until the endpoint changes (but at least `least`) or `seconds` pass; a watch that drops
    is waited out."""
    started = clock()
    endpoint = snapshot.endpoint if snapshot is not None else None
    # Without a resourceVersion a watch would start with the object as it is: no pause at all.
    version = (endpoint.get("metadata") or {}).get("resourceVersion") if endpoint else None
    if not version:  # also after a failed round (a 429's Retry-After is in `seconds`)
        stop.wait(max(0.0, seconds - (clock() - started)))
        return
    change = cluster.wait_for_change(target.namespace, target.name, str(version), seconds)
    left = (least if change in ("changed", "relist") else seconds) - (clock() - started)
    stop.wait(max(0.0, left))


def wait_for_endpoints(
    cluster: Cluster,
    targets: Sequence[Target],
    settings: WaitSettings,
    progress: Progress,
    clock: Clock = time.monotonic,
) -> list[Outcome]:
    """Every endpoint at once; the first failure stops the others (fail fast)."""
    stop = threading.Event()

    def one(target: Target) -> Outcome:
        try:
            outcome = wait_for_endpoint(cluster, target, settings, progress, stop, clock)
        except Exception as error:  # a reply the client could not parse, ...: one line
            reason = one_line(f"{type(error).__name__}: {error}", 200)
            outcome = Outcome(target, False, f"{target.where}: the wait stopped: {reason}")
        if not outcome.serving:
            stop.set()
        return outcome

    if not targets:
        return []
    with ThreadPoolExecutor(max_workers=len(targets), thread_name_prefix="deploy-wait") as pool:
        return list(pool.map(one, targets))


def failures(outcomes: Sequence[Outcome]) -> list[str]:
    """The lines to report: each failed endpoint's reason (not those stopped because of it)."""
    return [o.message for o in outcomes if not o.serving and not o.stopped]
