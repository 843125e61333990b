"""Hypothesis strategies for hostile Kubernetes API objects (test_kube_fuzz.py): any JSON value
put at any path of a real sample (an InferenceEndpointConfig, its pods, their events), or a
whole object of arbitrary JSON; and an in-memory API that answers with them the reads
`mlcc.deploy.waiter.observe` and `mlcc.cli.verify.reads.observe` make (the HTTP path of those
reads is fuzzed by test_wait_hostile.py and test_kube_fuzz.py through fake_kube_api)."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import deploy_samples as d
import verify_samples as s
from hypothesis import strategies as st

from mlcc.deploy import shapes
from mlcc.deploy.cluster import ApiError, Listing
from mlcc.facts.operator import (
    DEPLOYMENT_OVERALL_STATE,
    DNS_HEALTH,
    ENDPOINT_STATE,
    SAGEMAKER_STATE,
)
from mlcc.manifest.operator import ROUTING_FIELD

Path = tuple[str | int, ...]


def _state_words() -> list[str]:
    words = []
    for f in (ENDPOINT_STATE, DEPLOYMENT_OVERALL_STATE, SAGEMAKER_STATE, DNS_HEALTH):
        words += [*f.ready, *f.failed, *f.working, *f.other]
    return words


# The words the readers look for, so that the fuzz reaches their branches.
WORDS = [
    *_state_words(),
    "True",
    "False",
    "Ready",
    "PodScheduled",
    "Pending",
    "Running",
    "CrashLoopBackOff",
    "ImagePullBackOff",
    "OOMKilled",
    "Unschedulable",
    "FailedScheduling",
    "Error",
    d.WORKER,
    "nginx",
    s.IMAGE,
    d.POD,
    "hp-dev",
    "hp-dev-7c9f8d-abcde",
    "app=hp-dev",
    "",
    d.STARTED,
    "9999-12-31T23:59:59Z",
    "2026-12-04T04:00:00",
    "not a time",
]
# Edges of int32 and int64, and numbers of 100 digits (what the JSON reader lets through) and
# of 5,000 (which Python cannot even print).
HUGE = [2**31, 2**31 - 1, 2**63, -(2**31), -1, 0, 10**99, -(10**99)]


def keys_of(shape: shapes.Shape) -> set[str]:
    found: set[str] = set()
    stack: list[shapes.Shape] = [shape]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.update(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


# Every field a reader reads, the typed ones and those it reads beside them.
SHAPE_KEYS = sorted(
    keys_of(shapes.ENDPOINT)
    | keys_of(shapes.POD)
    | keys_of(shapes.EVENT)
    | {ROUTING_FIELD, "enabled", "routingStrategy", "endpointArn", "value", "remainingItemCount"}
)

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.sampled_from(HUGE)
    | st.sampled_from([5000, -5000]).map(lambda e: 10 ** abs(e) * (1 if e > 0 else -1))
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
    | st.sampled_from(WORDS)
)
JSON = st.recursive(
    SCALARS,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(SHAPE_KEYS) | st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=10,
)


def paths(found: object) -> list[Path]:
    """Every path inside `found` (of its maps' keys and its lists' indexes), the root first."""
    out: list[Path] = [()]
    stack: list[tuple[Path, object]] = [((), found)]
    while stack:
        where, item = stack.pop()
        children: Any = ()
        if isinstance(item, dict):
            children = item.items()
        elif isinstance(item, list):
            children = enumerate(item)
        for key, child in children:
            out.append((*where, key))
            stack.append(((*where, key), child))
    return out


def put(found: Any, where: Path, value: object) -> Any:
    """A copy of `found` with `value` at `where` (the root: `value` itself); the maps and lists
    on the way are made where the sample has none (or something else)."""
    if not where:
        return value
    root = copy.deepcopy(found)
    if not isinstance(root, list if isinstance(where[0], int) else dict):
        root = [] if isinstance(where[0], int) else {}
    parent = root
    for key, following in zip(where, [*where[1:], None], strict=True):
        if isinstance(key, int):
            parent.extend({} for _ in range(key + 1 - len(parent)))
        if following is None:
            parent[key] = value
            break
        kind = list if isinstance(following, int) else dict
        if not isinstance(parent[key] if isinstance(key, int) else parent.get(key), kind):
            parent[key] = kind()
        parent = parent[key]
    return root


def shape_paths(shape: shapes.Shape, extra: Sequence[Path] = ()) -> list[Path]:
    """Every path a reader reads in an object of `shape` (list elements: the first two)."""
    out: list[Path] = [*extra]
    stack: list[tuple[Path, shapes.Shape]] = [((), shape)]
    while stack:
        where, item = stack.pop()
        children: list[tuple[str | int, shapes.Shape]] = []
        if isinstance(item, dict):
            children = list(item.items())
        elif isinstance(item, list) and item:
            children = [(0, item[0]), (1, item[0])]
        for key, child in children:
            out.append((*where, key))
            stack.append(((*where, key), child))
    return sorted(set(out), key=str)


ROUTING = ("spec", ROUTING_FIELD)
ENDPOINT_PATHS = shape_paths(
    shapes.ENDPOINT, [ROUTING, (*ROUTING, "enabled"), (*ROUTING, "routingStrategy")]
)
POD_PATHS = shape_paths(shapes.POD)
EVENT_PATHS = shape_paths(shapes.EVENT)


@st.composite
def one_field(draw: st.DrawFn, sample: Any, read: Sequence[Path]) -> Any:
    """`sample` with any JSON at one path a reader reads (the maps on the way made)."""
    return put(sample, draw(st.sampled_from(read)), draw(JSON))


@st.composite
def hostile(draw: st.DrawFn, sample: Any, read: Sequence[Path], most: int = 3) -> Any:
    """`sample` with up to `most` values replaced by any JSON: at paths a reader reads, or at
    any path of the sample; or any JSON at all in its place."""
    if draw(st.integers(0, 9)) == 0:
        return draw(JSON)
    found = copy.deepcopy(sample)
    for _ in range(draw(st.integers(1, most))):
        anywhere = paths(found)
        where = draw(st.sampled_from(read) if draw(st.booleans()) else st.sampled_from(anywhere))
        found = put(found, where, draw(JSON))
    return found


def mutated(sample: Any, read: Sequence[Path]) -> st.SearchStrategy[Any]:
    return one_field(sample, read) | hostile(sample, read)


def values_of(found: object, key: str) -> list[object]:
    """Every value of `key` in the maps anywhere in `found`."""
    out, stack = [], [found]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            out.extend(v for k, v in item.items() if k == key)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return out


@dataclass
class MemoryApi:
    """The reads of `Cluster`, answered from memory with the objects a test drew."""

    found: dict[str, Any] | None
    pod_list: Sequence[Any] = ()
    event_list: Sequence[Any] = ()
    logs: dict[tuple[str, str, bool], str] = field(default_factory=dict)
    unread: str | None = None

    def endpoint(self, _namespace: str, _name: str) -> dict[str, Any] | None:
        return self.found

    def pods(self, _namespace: str, _selector: str | None) -> Listing:
        return Listing([p for p in self.pod_list if isinstance(p, dict)], self.unread)

    def events(self, _namespace: str, _name: str) -> Listing:
        return Listing([e for e in self.event_list if isinstance(e, dict)])

    def log(self, _namespace: str, pod: str, container: str, previous: bool) -> str | None:
        return self.logs.get((pod, container, previous))

    def read_log(self, namespace: str, pod: str, container: str, previous: bool) -> str:
        found = self.log(namespace, pod, container, previous)
        if found is None:
            raise ApiError(f"cannot read the log of {pod}: 400 Bad Request", 400)
        return found
