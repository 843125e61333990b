"""The one typed reader of what the API returned: every field the deploy wait and `mlcc verify`
read, checked against the type the API reference gives it (core/v1 Pod and Event, the
InferenceEndpointConfig CRD in schemas/crds/).

`well_typed` returns a copy in which every such field has its type, or is absent, and one note
per field that had another type (`status.replicas: a str ('3'), not an integer`): the reading
shows those as unknown, with the note, and never concludes from them (docs/deploy.md). A count
is also checked against its range (`Whole`: the API reference's int32/int64, and never below 0
for a count), so no figure shown is one the API could not have meant. Fields no reader reads
are kept as they are. Pure; iterative, so no nesting ends in a RecursionError.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mlcc.manifest.operator import ROUTING_FIELD


@dataclass(frozen=True)
class Whole:
    """A whole number from `low` to `high` (a JSON number of another kind, or out of range, is
    not one)."""

    low: int
    high: int


Shape = type | Whole | dict[str, "Shape"] | list["Shape"]

_STR, _BOOL = str, bool
_INT32, _INT64 = 2**31 - 1, 2**63 - 1
# core/v1 ContainerStatus.restartCount and ContainerStateTerminated.exitCode are int32;
# ObjectMeta.generation int64 (Kubernetes API reference). A count is never negative.
_RESTARTS, _EXIT_CODE = Whole(0, _INT32), Whole(-_INT32 - 1, _INT32)
_GENERATION = Whole(0, _INT64)
# The CRD (schemas/crds/inferenceendpointconfigs.yaml): spec.replicas and
# autoScalingSpec.minReplicaCount are int32 (minReplicaCount `minimum: 0`), a Deployment's
# replicas are never negative; status.observedGeneration is int64.
_REPLICAS = Whole(0, _INT32)
_CONDITION: Shape = {
    "type": _STR,
    "status": _STR,
    "reason": _STR,
    "message": _STR,
    "lastTransitionTime": _STR,
}
_CONTAINER_STATE: Shape = {
    "waiting": {"reason": _STR, "message": _STR},
    "terminated": {"exitCode": _EXIT_CODE, "reason": _STR, "message": _STR},
    "running": {"startedAt": _STR},
}
_CONTAINER_STATUS: Shape = {
    "name": _STR,
    "image": _STR,
    "ready": _BOOL,
    "restartCount": _RESTARTS,
    "state": _CONTAINER_STATE,
    "lastState": _CONTAINER_STATE,
}
_METADATA: Shape = {
    "name": _STR,
    "namespace": _STR,
    "uid": _STR,
    "generation": _GENERATION,
    "resourceVersion": _STR,
    "deletionTimestamp": _STR,
    "creationTimestamp": _STR,
    "labels": dict,
}
_CONTAINER: Shape = {
    "name": _STR,
    "image": _STR,
    "env": [{"name": _STR, "value": _STR}],
    "envFrom": list,
}
POD: Shape = {
    "metadata": _METADATA,
    "spec": {"containers": [_CONTAINER], "initContainers": [_CONTAINER]},
    "status": {
        "phase": _STR,
        "reason": _STR,  # Evicted, ...
        "message": _STR,
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
        "replicas": _REPLICAS,
        "endpointName": _STR,
        "autoScalingSpec": {"minReplicaCount": _REPLICAS},
        "worker": {"image": _STR, "environmentVariables": [{"name": _STR, "value": _STR}]},
        "dnsConfig": {"hostedZoneId": _STR},
        ROUTING_FIELD: {"enabled": _BOOL, "routingStrategy": _STR},
    },
    "status": {
        "state": _STR,
        "observedGeneration": _GENERATION,
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
    if isinstance(value, int) and not -(10**40) < value < 10**40:
        return "int (of more than 40 digits)"  # repr fails past 4,300 digits
    shown = repr(value)
    return f"{type(value).__name__} ({shown[:40]}{'...' if len(shown) > 40 else ''})"


def _fits(value: object, shape: Shape) -> bool:
    if isinstance(shape, dict):
        return isinstance(value, dict)
    if isinstance(shape, list):
        return isinstance(value, list)
    if isinstance(shape, Whole):
        if not isinstance(value, int) or isinstance(value, bool):
            return False
        return shape.low <= value <= shape.high
    return isinstance(value, shape)


def _expected(shape: Shape) -> str:
    if isinstance(shape, dict):
        return "a map"
    if isinstance(shape, list):
        return "a list"
    if isinstance(shape, Whole):
        return f"a whole number from {shape.low} to {shape.high}"
    return _KIND.get(shape, "another type")


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


def typed_pods(found: Sequence[Mapping[str, Any]]) -> list[tuple[dict[str, Any], list[str]]]:
    """Each pod of a list typed, with its notes; a pod without a name is noted, and a name
    listed again (an API that changed its answer between pages) is one pod, noted: every
    count is of distinct pods, and none is concluded from a list that contradicts itself."""
    typed: dict[str | int, tuple[dict[str, Any], list[str]]] = {}  # by name, else index
    for index, pod in enumerate(found):
        one, notes = typed_pod(pod, index)
        name = one.get("metadata", {}).get("name")
        if not name:
            typed[index] = (one, [*notes, f"pods[{index}]: metadata.name: absent"])
        elif name in typed:
            typed[name][1].append(f"pod {name}: listed more than once")
        else:
            typed[name] = (one, notes)
    return list(typed.values())


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


__all__ = ["ENDPOINT", "EVENT", "POD", "Shape", "Whole", "typed_pod", "typed_pods", "well_typed"]
