"""The causes the kubelet names beside a pod's state: evictions, a refused image pull, a liveness
probe's kills. Pure: each takes a pod's status or its events (oldest first) and returns the
kubelet's own words and what to change (docs/deploy.md, "How it fails").
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from mlcc.deploy.snapshot import moment, one_line

EVICTED = "Evicted"
# Terminal phases: the pod's containers will not run again (core/v1 PodPhase).
TERMINAL_PHASES = ("Failed", "Succeeded")
# Evicted pods of an endpoint not replaced by a ready one: two means the replacement was
# evicted too, a loop that waiting does not end (docs/deploy.md).
EVICTIONS_TO_FAIL = 2
# SIGKILL and SIGTERM: how a container the kubelet stops for its liveness probe exits.
_KILLED_EXIT_CODES = (137, 143)
_LIVENESS_KILL = re.compile(r"Container (?P<container>\S+) failed liveness probe")
_REFUSED_PULL = re.compile(
    r"\b(401|403)\b|unauthorized|forbidden|denied|no basic auth credentials", re.IGNORECASE
)

_EVICTION_ADVICE = {
    "ephemeral-storage": (
        "the engine's files (the downloaded weights, its caches) outgrow the node's disk: raise "
        "hp:instanceGroups[].ebsVolumeSizeGb (the nodes' EBS volume), or keep the weights on "
        "local NVMe with hp:modelCache.weightsCache"
    ),
    "memory": "the node ran out of memory: choose a larger hp:instanceType or lower hp:maxModelLen",
}
_OTHER_EVICTION_ADVICE = "see `kubectl describe node` for the resource the node ran out of"
PULL_REFUSED_ADVICE = (
    "the registry refused the nodes: let the HyperPod nodes' role pull hp:image "
    "(ecr:BatchGetImage; an ECR repository of another account or stack must allow that role in "
    "its repository policy), or push the image where the nodes may pull it"
)
LIVENESS_ADVICE = (
    "the engine did not answer its liveness probe in time and was restarted: loosen "
    "hp:probes.liveness (timeoutSeconds, failureThreshold), or hp:probes.startup while it still "
    "loads"
)


def terminal(pod: Mapping[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") in TERMINAL_PHASES


def evicted(pod: Mapping[str, Any]) -> bool:
    status = pod.get("status") or {}
    return status.get("phase") == "Failed" and status.get("reason") == EVICTED


def created(pod: Mapping[str, Any]) -> float | None:
    return moment((pod.get("metadata") or {}).get("creationTimestamp"))


def ended_how(pod: Mapping[str, Any]) -> str:
    """`evicted`, or the pod's terminal phase in lower case."""
    status = pod.get("status") or {}
    if evicted(pod):
        return "evicted"
    return one_line(str(status.get("reason") or status.get("phase") or "ended"), 40).lower()


def eviction(pods: Sequence[Mapping[str, Any]]) -> tuple[int, str] | None:
    """How many of `pods` were evicted, with the newest one's name, the kubelet's message and
    what to change; None below EVICTIONS_TO_FAIL."""
    found = [p for p in pods if evicted(p)]
    if len(found) < EVICTIONS_TO_FAIL:
        return None
    newest = max(found, key=lambda p: created(p) or 0.0)
    name = str((newest.get("metadata") or {}).get("name", "?"))
    said = one_line(str((newest.get("status") or {}).get("message") or "no message"), 200)
    resource = re.search(r"low on resource: (?P<resource>[\w-]+)", said)
    advice = _EVICTION_ADVICE.get(resource["resource"] if resource else "", _OTHER_EVICTION_ADVICE)
    return len(found), f"pod {name}: {said}; {advice}"


def pull_failure(events: Sequence[Mapping[str, Any]]) -> tuple[str, bool] | None:
    """The newest `Failed to pull image` message of the kubelet (a `Failed` event), and whether
    the registry refused the credentials."""
    pulls = [
        e
        for e in events
        if e.get("reason") == "Failed" and str(e.get("message") or "").startswith("Failed to pull")
    ]
    if not pulls:
        return None
    said = one_line(str(pulls[-1].get("message")), 10_000)
    # The runtime repeats the image three times before the registry's answer, which is last.
    shown = said if len(said) <= 240 else f"{said[:110]} ... {said[-120:]}"
    return shown, _REFUSED_PULL.search(said) is not None


def liveness_kill(events: Sequence[Mapping[str, Any]], status: Mapping[str, Any]) -> str | None:
    """The liveness probe's failure, when the kubelet killed the container for it (a `Killing`
    event naming the liveness probe, its last run ended by SIGKILL or SIGTERM)."""
    last = ((status.get("lastState") or {}).get("terminated")) or {}
    if last.get("exitCode") not in _KILLED_EXIT_CODES:
        return None
    container = status.get("name")
    kills = [
        e
        for e in events
        if e.get("reason") == "Killing"
        and (found := _LIVENESS_KILL.search(str(e.get("message") or "")))
        and found["container"] == container
    ]
    if not kills:
        return None
    probes = [
        str(e.get("message"))
        for e in events
        if e.get("reason") == "Unhealthy" and str(e.get("message") or "").startswith("Liveness")
    ]
    return one_line(probes[-1] if probes else str(kills[-1].get("message")), 200)
