"""`mlcc plan --diff`: two plan.json documents compared resource by resource.

A resource is identified by its parent, type and name; under a changed one (`~`, or `+-` when
Pulumi replaces it) come the input paths that changed and then the dependencies that changed
(mlcc.plan.graph): what `pulumi destroy` deletes it before, or no longer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mlcc.plan import features, graph

MAX_PATHS_SHOWN = 12
_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


@dataclass(frozen=True)
class Change:
    mark: str  # + new, - gone, ~ changed, +- replaced
    type: str
    name: str
    paths: tuple[str, ...] = ()
    edges: tuple[str, ...] = ()  # `+ depends on T  N`, `- depends on T  N`, `+ provider T  N`

    def lines(self) -> list[str]:
        head = [f"{self.mark} {self.type}  {self.name}"]
        shown = [f"    {p}" for p in self.paths[:MAX_PATHS_SHOWN]]
        if len(self.paths) > MAX_PATHS_SHOWN:
            shown.append(f"    ... and {len(self.paths) - MAX_PATHS_SHOWN} more")
        return head + shown + [f"    {line}" for line in self.edges]


def _identity(resource: Mapping[str, Any]) -> tuple[str, str, str]:
    return (str(resource.get("parent")), str(resource["type"]), str(resource["name"]))


def diff(old: Iterable[Mapping[str, Any]], new: Iterable[Mapping[str, Any]]) -> list[Change]:
    """Per resource: + new, - gone, ~ changed inputs or dependencies (with what changed)."""
    before = {_identity(r): r for r in old}
    after = {_identity(r): r for r in new}
    changes: list[Change] = []
    for key, resource in after.items():
        if key not in before:
            changes.append(Change("+", key[1], key[2]))
            continue
        paths = changed_paths(before[key].get("inputs"), resource.get("inputs"))
        edges = graph.changed_edges(before[key], resource)
        if paths or edges:
            mark = "+-" if features.replaces(key[1], paths) else "~"
            changes.append(Change(mark, key[1], key[2], tuple(paths), edges))
    changes += [Change("-", key[1], key[2]) for key in before if key not in after]
    return changes


def summary(changes: Sequence[Change]) -> str:
    """The counts, as `pulumi preview` would count: a resource whose dependencies alone change
    is no update (the engine writes its new dependencies to the state in a `same` step,
    pulumi/pulumi#21180), so it is counted apart."""
    count = {mark: sum(c.mark == mark for c in changes) for mark in ("+", "~", "-", "+-")}
    relinked = sum(c.mark == "~" and not c.paths for c in changes)
    replaced = f", {count['+-']} to replace" if count["+-"] else ""
    only = f", {relinked} with only dependencies changed" if relinked else ""
    changed = count["~"] - relinked
    return f"{count['+']} to create, {changed} to change, {count['-']} to delete{replaced}{only}"


def changed_paths(old: Any, new: Any, path: str = "") -> list[str]:
    """The input paths whose values differ; lists of named items are matched by name."""
    if isinstance(old, dict) and isinstance(new, dict):
        return _changed_map_paths(old, new, path)
    if isinstance(old, list) and isinstance(new, list):
        if _named_items(old) and _named_items(new):
            named_old = {item["name"]: item for item in old}
            named_new = {item["name"]: item for item in new}
            return _changed_map_paths(named_old, named_new, path, name_keyed=True)
        return _changed_list_paths(old, new, path)
    return [] if old == new else [path or "(whole value)"]


def _changed_map_paths(
    old: Mapping[str, Any], new: Mapping[str, Any], path: str, *, name_keyed: bool = False
) -> list[str]:
    paths: list[str] = []
    for key in [*new, *(k for k in old if k not in new)]:
        sub = f"{path}[name={key}]" if name_keyed else _join(path, str(key))
        if key not in old or key not in new:
            paths.append(sub)
        else:
            paths += changed_paths(old[key], new[key], sub)
    return paths


def _changed_list_paths(old: list[Any], new: list[Any], path: str) -> list[str]:
    paths: list[str] = []
    for index in range(max(len(old), len(new))):
        sub = f"{path}[{index}]"
        if index >= len(old) or index >= len(new):
            paths.append(sub)
        else:
            paths += changed_paths(old[index], new[index], sub)
    return paths


def _named_items(items: list[Any]) -> bool:
    names = [item.get("name") for item in items if isinstance(item, dict)]
    return (
        len(names) == len(items)
        and all(isinstance(n, str) for n in names)
        and len(set(names)) == len(names)
    )


def _join(path: str, key: str) -> str:
    if _PLAIN_KEY.match(key):
        return f"{path}.{key}" if path else key
    return f'{path}["{key}"]'
