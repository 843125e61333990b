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
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from mlcc.config.deploy_wait import DEFAULT_TIMEOUT_MINUTES
from mlcc.deploy import endpoint_pods, readiness, verify
from mlcc.deploy.cluster import ApiError, Cluster
from mlcc.deploy.pods import live_pods, logs_wanted
from mlcc.deploy.readiness import Reading
from mlcc.deploy.snapshot import Snapshot, Target, one_line

Progress = Callable[[Target, str], None]
Clock = Callable[[], float]

POLL_S = 10.0
# How long a failure sign (CrashLoopBackOff, Unschedulable, ...) may last before the wait fails:
# long enough for a node to join or a pull to be retried, short enough to fail within minutes.
GRACE_S = 60.0
API_GRACE_S = 60.0

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

    @property
    def timeout_minutes(self) -> float:
        return self.timeout_s / 60


@dataclass(frozen=True)
class Outcome:
    target: Target
    serving: bool
    message: str
    stopped: bool = False  # ended because another endpoint failed


def observe(cluster: Cluster, target: Target) -> Snapshot:
    endpoint = cluster.endpoint(target.namespace, target.name)
    if endpoint is None:
        return Snapshot(None)
    selector = endpoint_pods.pod_selector(endpoint)
    pods: Sequence[dict[str, object]] = cluster.pods(target.namespace, selector)
    if not selector:
        pods = [dict(p) for p in endpoint_pods.endpoint_pods(pods, endpoint, target.name)]
    names = [target.name, *(verify.pod_name(p) for p in live_pods(pods))]
    events = [e for name in names for e in cluster.events(target.namespace, name)]
    logs = {}
    for request in logs_wanted(endpoint, pods):
        text = cluster.log(target.namespace, request.pod, request.container, request.previous)
        if text is not None:
            logs[request] = text
    return Snapshot(endpoint, pods, events, logs)


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
    first_seen: dict[str, float] = {}
    failing_since: float | None = None
    reading: Reading | None = None
    shown = ""
    while True:
        now = clock()
        snapshot: Snapshot | None = None
        try:
            snapshot = observe(cluster, target)
            failing_since = None
        except ApiError as error:
            if error.permanent:
                advice = _PERMANENT_ADVICE.get(error.status or 0, "")
                return Outcome(target, False, f"{target.where}: {error}; {advice}")
            failing_since = now if failing_since is None else failing_since
            if now - failing_since >= settings.api_grace_s:
                lasted = f"{now - failing_since:.0f} s"
                return Outcome(
                    target,
                    False,
                    f"{target.where}: the Kubernetes API kept failing ({lasted}): {error}",
                )
        if snapshot is not None:
            reading = readiness.read(target, snapshot)
            verdict, first_seen = readiness.judge(reading, first_seen, now, settings.grace_s)
            if reading.progress != shown:
                shown = reading.progress
                progress(target, shown)
            if verdict.outcome != "waiting":
                return Outcome(target, verdict.outcome == "serving", verdict.message)
        remaining = deadline - clock()
        if remaining <= 0:
            return Outcome(
                target, False, readiness.timed_out(target, reading, settings.timeout_minutes)
            )
        if stop.is_set():
            return Outcome(target, False, f"{target.where}: not waited for further", stopped=True)
        _pause(cluster, target, snapshot, min(settings.poll_s, remaining), stop, clock)


def _pause(
    cluster: Cluster,
    target: Target,
    snapshot: Snapshot | None,
    seconds: float,
    stop: threading.Event,
    clock: Clock,
) -> None:
    """Until the endpoint changes or `seconds` pass; a dropped watch is waited out."""
    started = clock()
    endpoint = snapshot.endpoint if snapshot is not None else None
    # Without a resourceVersion a watch would start with the object as it is: no pause at all.
    version = (endpoint.get("metadata") or {}).get("resourceVersion") if endpoint else None
    if version and cluster.wait_for_change(target.namespace, target.name, str(version), seconds):
        return
    stop.wait(max(0.0, seconds - (clock() - started)))


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
