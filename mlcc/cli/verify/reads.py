"""`mlcc verify`'s reads through the deploy wait's `Cluster` (docs/deploy.md, "Limits"): each
answer bounded in size and time and checked by `mlcc.deploy.shapes`, the pods listed a page at
a time up to a cap, at most MAX_LOGS engine logs read (the head of each, LOG_LIMIT_BYTES); a pod
that ended and was replaced by a ready one is history (`replaced_pods`): its log is not read.
Whatever was not read, or did not have its type, is one FAIL line, never a PASS. For a copied
s3:// head, `copy_logs` reads the copy's log of each ready pod (its last lines, at most MAX_LOGS),
whose marker says which object runs (mlcc/deploy/draft_head.py).
"""

from __future__ import annotations

from mlcc.deploy import draft_head, shapes
from mlcc.deploy.check import Check
from mlcc.deploy.cluster import ApiError, Cluster
from mlcc.deploy.endpoint_pods import endpoint_pods, pod_selector, unselected_pods_how
from mlcc.deploy.expectation import Expectation
from mlcc.deploy.pods import replaced_pods
from mlcc.deploy.verify import Observed, pod_name, worker_container

MAX_LOGS = 16


class ClusterError(Exception):
    """The API refused or failed a read that every later check depends on."""


def observe(cluster: Cluster, namespace: str, name: str) -> tuple[Observed, list[Check]]:
    try:
        return _observe(cluster, namespace, name)
    except ApiError as error:
        raise ClusterError(str(error)) from None


def _observe(cluster: Cluster, namespace: str, name: str) -> tuple[Observed, list[Check]]:
    found = cluster.endpoint(namespace, name)
    if found is None:
        return Observed(namespace, name, None), []
    endpoint, malformed = shapes.well_typed(found, shapes.ENDPOINT, "")
    selector = pod_selector(endpoint)
    listing = cluster.pods(namespace, selector)
    typed = shapes.typed_pods(listing.items)
    if selector:
        how = f"selector {selector}"
    else:
        mine = {id(p) for p in endpoint_pods([p for p, _ in typed], endpoint, name)}
        typed = [(p, notes) for p, notes in typed if id(p) in mine]
        how = unselected_pods_how(endpoint, name)
    pods = [p for p, _ in typed]
    malformed.extend(note for _, notes in typed for note in notes)
    worker_image = (endpoint.get("spec") or {}).get("worker", {}).get("image")
    logs: dict[str, str] = {}
    errors: dict[str, str] = {}
    replaced = replaced_pods(pods)
    for pod in pods:
        container = worker_container(pod, worker_image)
        if container is None or pod_name(pod) in replaced:
            continue
        pod_id = pod_name(pod)
        if len(logs) + len(errors) >= MAX_LOGS:
            errors[pod_id] = f"not read (at most {MAX_LOGS} logs are read)"
            continue
        try:
            logs[pod_id] = cluster.read_log(
                namespace, pod_id, str(container.get("name") or ""), False
            )
        except ApiError as error:
            errors[pod_id] = str(error).removeprefix(f"cannot read the log of {pod_id}: ")
    notes = [Check("answer", False, f"unknown: {note}") for note in malformed]
    if listing.unread:
        notes.append(Check("pods", False, f"not read: {listing.unread}"))
    observed = Observed(namespace, name, endpoint, pods, how, logs, errors, replaced)
    return observed, notes


def copy_logs(
    cluster: Cluster, observed: Observed, expected: Expectation
) -> tuple[dict[str, str], dict[str, str]]:
    """The logs of the ready pods' copies of an s3:// head, and why each other one is missing."""
    logs: dict[str, str] = {}
    errors: dict[str, str] = {}
    pods = draft_head.ready_pods(observed.pods, expected) if observed.endpoint else []
    for pod in pods:
        if len(logs) + len(errors) >= MAX_LOGS:
            errors[pod] = f"not read (at most {MAX_LOGS} logs are read)"
            continue
        text, why = draft_head.read_log(cluster, observed.namespace, pod)
        if text is None:
            errors[pod] = why
        else:
            logs[pod] = text
    return logs, errors
