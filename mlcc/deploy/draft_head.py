"""Which head a copied s3:// draft runs: the copy's marker in its init container's log
(docs/draft-serving.md).

The init container `mlcc-draft-copy` (mlcc/manifest/draft_copy.py) prints the marker it writes
beside the head as its last log line: `{"uri": "s3://...", "config": {"ETag": ..., "VersionId":
..., "LastModified": ...}}` (config.json's head-object answer). `mlcc verify` prints it for each
ready pod (`source_checks`); the deploy wait fails when it names another URI than the stack's
(`wait_reading`). A log that is gone, unreadable or without the line is "not checked", never a
failure: vLLM's logged draft path (`engine_log.check_engine_log`) proves that the copy is what runs.
The logs are read through `Cluster.log_text` (bounded, timed); the rest is pure.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mlcc.deploy import causes
from mlcc.deploy.check import Check
from mlcc.deploy.cluster import ApiError, Cluster
from mlcc.deploy.expectation import Expectation
from mlcc.deploy.pods import live_pods, pod_ready
from mlcc.deploy.snapshot import LogRequest, Sign, Snapshot, Target, items_of, mapping, one_line
from mlcc.deploy.verify import Observed, pod_name
from mlcc.serving import s3_draft

INIT_CONTAINER = s3_draft.INIT_CONTAINER
LOG_TAIL_LINES = 20  # the marker is the copy's last line; `aws s3 sync` prints only errors
LOG_LIMIT_BYTES = 64 * 1024
_MISMATCH_ADVICE = (
    "the pod copied another head than hp:speculativeModel names: run `pulumi up` again, or delete "
    "the pod so that its replacement copies the stack's head"
)


@dataclass(frozen=True)
class Marker:
    """What the copy says it copied: the URI, and config.json's ETag, version id and date."""

    uri: str
    etag: object
    version: object
    modified: object

    @property
    def shown(self) -> str:
        parts = [f"config.json ETag {_value(self.etag)}", f"version id {_value(self.version)}"]
        if self.modified is not None:
            parts.append(f"last modified {_value(self.modified)}")
        return f"{one_line(self.uri, 200)} ({', '.join(parts)})"


def _value(value: object) -> str:
    return "none" if value is None else one_line(str(value), 80)


def marker_of(log: str) -> Marker | None:
    """The last line of the copy's log that is its marker (a JSON object with a `uri`)."""
    for line in reversed(log.splitlines()):
        text = line.strip()
        if not text.startswith("{"):
            continue
        try:
            found = json.loads(text)
        except (ValueError, RecursionError):
            continue
        if isinstance(found, dict) and isinstance(found.get("uri"), str):
            config = mapping(found.get("config"))
            return Marker(
                found["uri"],
                config.get("ETag"),
                config.get("VersionId"),
                config.get("LastModified"),
            )
    return None


def stack_uri(expected: Expectation) -> str | None:
    """The stack's s3:// head as the copy writes it (one trailing slash), None when not copied."""
    if expected.copied_from is None:
        return None
    draft = s3_draft.parse(expected.copied_from)
    return draft.uri if draft is not None else expected.copied_from


def read_log(cluster: Cluster, namespace: str, pod: str) -> tuple[str | None, str]:
    """The copy's log (its last lines), or None and why it could not be read."""
    query: list[tuple[str, object]] = [
        ("container", INIT_CONTAINER),
        ("tailLines", LOG_TAIL_LINES),
        ("limitBytes", LOG_LIMIT_BYTES),
    ]
    try:
        return cluster.log_text(namespace, pod, query, LOG_LIMIT_BYTES), ""
    except ApiError as error:  # 401/403 too: the marker is never a reason to stop
        return None, str(error).removeprefix(f"cannot read the log of {pod}: ")


def ready_pods(pods: Iterable[Mapping[str, Any]], expected: Expectation) -> list[str]:
    """The pods whose copy is read: the ready ones that count (none when no head is copied)."""
    if expected.copied_from is None:
        return []
    return [pod_name(p) for p in live_pods(pods) if pod_ready(p) and not causes.terminal(p)]


# --- mlcc verify -------------------------------------------------------------------------------


def source_check(pod: str, log: str | None, why: str, expected: Expectation) -> Check:
    name = f"pod {pod} draft source"
    if log is None:
        detail = f"the log of init container {INIT_CONTAINER} could not be read: {why}"
        return Check(name, True, f"not checked: {detail}", skipped=True)
    marker = marker_of(log)
    if marker is None:
        detail = (
            f"the log of init container {INIT_CONTAINER} has no marker line (a copy made before "
            "the copy logged it, or a log the kubelet no longer holds)"
        )
        return Check(name, True, f"not checked: {detail}", skipped=True)
    want = stack_uri(expected)
    if marker.uri != want:
        return Check(
            name,
            False,
            f"{INIT_CONTAINER} copied {marker.shown}, not the stack's {want} "
            "(hp:speculativeModel): the pod runs another head",
        )
    return Check(name, True, f"{INIT_CONTAINER} copied {marker.shown}")


def source_checks(
    observed: Observed, logs: Mapping[str, str], errors: Mapping[str, str], expected: Expectation
) -> list[Check]:
    """One line for each ready pod of an endpoint whose head is copied."""
    if observed.endpoint is None:
        return []
    return [
        source_check(pod, logs.get(pod), errors.get(pod, "it was not read"), expected)
        for pod in ready_pods(observed.pods, expected)
    ]


# --- the deploy wait ---------------------------------------------------------------------------


def log_requests(expected: Expectation, pods: Sequence[Mapping[str, Any]]) -> list[LogRequest]:
    return [LogRequest(pod, INIT_CONTAINER, False) for pod in ready_pods(pods, expected)]


def wait_reading(
    target: Target, snapshot: Snapshot, ready: Iterable[str]
) -> tuple[Sign | None, str]:
    """A sign when a ready pod's copy names another URI than the stack's; else what the
    progress line adds: the head copied, and the pods whose copy was not checked (and why)."""
    want = stack_uri(target.expectation)
    if want is None:
        return None, ""
    copied: list[str] = []
    unchecked: list[str] = []
    for pod in ready:
        request = LogRequest(pod, INIT_CONTAINER, False)
        log = snapshot.logs.get(request)
        marker = marker_of(log) if log is not None else None
        if marker is None:
            why = snapshot.log_errors.get(request) or (
                "its log has no marker line" if log is not None else "its log was not read"
            )
            unchecked.append(f"pod {pod}: {why}")
        elif marker.uri != want:
            message = (
                f"{target.where}: pod {pod}: the init container {INIT_CONTAINER} copied "
                f"{marker.shown}, not the stack's {want}; {_MISMATCH_ADVICE}"
            )
            return Sign(f"{pod}/draft-source", message, immediate=True), ""
        elif marker.shown not in copied:
            copied.append(marker.shown)
    said = f"; copied head {', '.join(copied)}" if copied else ""
    if unchecked:
        more = f" (and {len(unchecked) - 1} more)" if len(unchecked) > 1 else ""
        said += f"; the copied head's source not checked ({one_line(unchecked[0], 200)}{more})"
    return None, said


# --- the pods of an older spec -----------------------------------------------------------------


def runs_spec_copy(pod: Mapping[str, Any], endpoint: Mapping[str, Any]) -> bool:
    """False when the pod's copy runs with other arguments than the spec's: a pod of an older
    spec, which copied another head to the same local path (so its env is the spec's). That the
    operator gives the pod `spec.kubernetes.initContainers` as they are is **assumed** (its CRD:
    "Init containers to run before the inference server starts"); a pod without the copy is
    judged by its env alone."""
    kubernetes = mapping(mapping(endpoint.get("spec")).get("kubernetes"))
    wanted = _copy_args(kubernetes.get("initContainers"))
    found = _copy_args(mapping(pod.get("spec")).get("initContainers"))
    return wanted is None or found is None or found == wanted


def _copy_args(containers: object) -> object | None:
    for container in items_of(containers):
        if container.get("name") == INIT_CONTAINER:
            return container.get("args")
    return None
