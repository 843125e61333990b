"""The one typed reader of what the API returned: every field the deploy wait and `mlcc verify`
read, checked against the type the API reference gives it (core/v1 Pod and Event, the
InferenceEndpointConfig CRD in schemas/crds/).

`well_typed` returns a copy in which every such field has its type, or is absent, and one note
per field that had another type (`status.replicas: a str ('3'), not an integer`): the reading
shows those as unknown, with the note, and never concludes from them (docs/deploy.md). Fields
no reader reads are kept as they are. Pure; iterative, so no nesting ends in a RecursionError.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Shape = type | tuple[type, ...] | dict[str, "Shape"] | list["Shape"]

_STR, _INT, _BOOL = str, int, bool
_CONDITION: Shape = {
    "type": _STR,
    "status": _STR,
    "reason": _STR,
    "message": _STR,
    "lastTransitionTime": _STR,
}
_CONTAINER_STATE: Shape = {
    "waiting": {"reason": _STR, "message": _STR},
    "terminated": {"exitCode": _INT, "reason": _STR, "message": _STR},
    "running": {"startedAt": _STR},
}
_CONTAINER_STATUS: Shape = {
    "name": _STR,
    "image": _STR,
    "ready": _BOOL,
    "restartCount": _INT,
    "state": _CONTAINER_STATE,
    "lastState": _CONTAINER_STATE,
}
_METADATA: Shape = {
    "name": _STR,
    "namespace": _STR,
    "uid": _STR,
    "generation": _INT,
    "resourceVersion": _STR,
    "deletionTimestamp": _STR,
    "creationTimestamp": _STR,
    "labels": dict,
}
_CONTAINER: Shape = {"name": _STR, "image": _STR, "env": [{"name": _STR}], "envFrom": list}
POD: Shape = {
    "metadata": _METADATA,
    "spec": {"containers": [_CONTAINER], "initContainers": [_CONTAINER]},
    "status": {
        "phase": _STR,
        "conditions": [_CONDITION],
        "containerStatuses": [_CONTAINER_STATUS],
        "initContainerStatuses": [_CONTAINER_STATUS],
    },
}
EVENT: Shape = {
    "metadata": _METADATA,
    "involvedObject": {"name": _STR, "kind": _STR},
    "reason": _STR,
    "message": _STR,
    "type": _STR,
    "lastTimestamp": _STR,
    "eventTime": _STR,
}
ENDPOINT: Shape = {
    "metadata": _METADATA,
    "spec": {
        "replicas": _INT,
        "endpointName": _STR,
        "autoScalingSpec": {"minReplicaCount": _INT},
        "worker": {"image": _STR, "environmentVariables": [{"name": _STR}]},
        "dnsConfig": {"hostedZoneId": _STR},
    },
    "status": {
        "state": _STR,
        "observedGeneration": _INT,
        "selector": _STR,
        "conditions": [_CONDITION],
        "deploymentStatus": {
            "name": _STR,
            "reason": _STR,
            "message": _STR,
            "deploymentObjectOverallState": _STR,
        },
        "endpoints": {"sagemaker": {"state": _STR}},
        "dnsStatus": {"dnsHealth": _STR, "message": _STR},
    },
}

_KIND = {str: "text", int: "an integer", bool: "true or false", dict: "a map", list: "a list"}


def _what(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, (dict, list)):
        return f"a {'map' if isinstance(value, dict) else 'list'}"
    shown = repr(value)
    return f"{type(value).__name__} ({shown[:40]}{'...' if len(shown) > 40 else ''})"


def _fits(value: object, shape: Shape) -> bool:
    if isinstance(shape, dict):
        return isinstance(value, dict)
    if isinstance(shape, list):
        return isinstance(value, list)
    if shape is int and isinstance(value, bool):
        return False
    return isinstance(value, shape)


def _expected(shape: Shape) -> str:
    if isinstance(shape, dict):
        return "a map"
    if isinstance(shape, list):
        return "a list"
    return _KIND.get(shape, "another type") if isinstance(shape, type) else "another type"


def well_typed(found: object, shape: Shape, where: str) -> tuple[dict[str, Any], list[str]]:
    """(a copy of `found` with each field of `shape` of its type or absent, the notes)."""
    notes: list[str] = []
    if not isinstance(found, Mapping):
        return {}, [f"{where or 'the answer'}: {_what(found)}, not a map"]
    root: dict[str, Any] = dict(found)
    # (the container to write into, the key, the value, its shape, its path)
    work: list[tuple[Any, Any, object, Shape, str]] = [
        (root, key, root[key], sub, f"{where}.{key}" if where else key)
        for key, sub in _fields(shape)
        if key in root
    ]
    while work:
        parent, key, value, sub, path = work.pop()
        if value is None or not _fits(value, sub):
            if value is not None:  # the API omits empty fields; a null is the same absence
                notes.append(f"{path}: {_what(value)}, not {_expected(sub)}")
            if isinstance(parent, list):
                parent[key] = _HOLE
            else:
                del parent[key]
            continue
        if isinstance(sub, dict):
            copied = dict(value)  # type: ignore[call-overload]
            parent[key] = copied
            work.extend(
                (copied, k, copied[k], s, f"{path}.{k}") for k, s in _fields(sub) if k in copied
            )
        elif isinstance(sub, list) and sub:
            kept = list(value)  # type: ignore[call-overload]
            parent[key] = kept
            work.extend((kept, i, v, sub[0], f"{path}[{i}]") for i, v in enumerate(kept))
    _drop_holes(root)
    return root, sorted(notes)


def _fields(shape: Shape) -> list[tuple[str, Shape]]:
    return list(shape.items()) if isinstance(shape, dict) else []


def typed_pod(found: Mapping[str, Any], index: int) -> tuple[dict[str, Any], list[str]]:
    """A pod of a list, its notes naming it (`pod NAME`, else `pods[INDEX]`)."""
    metadata = found.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    return well_typed(found, POD, f"pod {name}" if isinstance(name, str) else f"pods[{index}]")


_HOLE = object()


def _drop_holes(root: dict[str, Any]) -> None:
    """List elements that were removed are marked, then filtered, so indexes stay valid."""
    stack: list[Any] = [root]
    while stack:
        item = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        for child in children:
            if isinstance(child, list):
                child[:] = [c for c in child if c is not _HOLE]
            if isinstance(child, (dict, list)):
                stack.append(child)


__all__ = ["ENDPOINT", "EVENT", "POD", "Shape", "typed_pod", "well_typed"]
