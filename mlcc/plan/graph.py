"""The plan's dependency graph, in the fields Pulumi's own resource state gives it.

`pulumi preview --json` writes each step's `newState`, and `pulumi stack export` each resource,
as an `apitype.ResourceV3` (pulumi/pulumi: `ShowPreviewDigest` in
`pkg/backend/display/json.go`; the type in `sdk/go/common/apitype/core.go`). Its graph fields
are `urn`, `custom`, `dependencies` (the URNs the resource waits for: its explicit `dependsOn`
and the resources behind its inputs), `propertyDependencies` (input name -> the URNs behind that
input) and `provider` (`<provider URN>::<provider id>`). plan.json writes the same fields, from
the RegisterResourceRequest the program sends (`dependencies`, `propertyDependencies`,
`provider`, as the Python SDK's `prepare_resource` fills them).

Offline, two things differ from a real preview, and plan.json says which:
- URNs are written as the engine makes them (`generateURN` in pulumi/pulumi
  `pkg/resource/deploy/deployment.go`: the parent's whole qualified type, none for the root
  stack), not as the SDK's mock monitor makes them (the parent's last type only, the root
  stack's included); dependencies and providers are rewritten the same way.
- `provider` is only the one the program passes (the Kubernetes provider on the cluster). A
  resource on a default provider has none: the engine picks that provider, and its URN and id
  exist only in a real deployment. Its id here is the mock's (`<name>-id`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mlcc.facts.operator import GROUP, KIND, VERSION

# The Pulumi type of each endpoint's InferenceEndpointConfig: the Kubernetes provider types a
# custom resource `kubernetes:<apiVersion>:<kind>`.
CR_TYPE = f"kubernetes:{GROUP}/{VERSION}:{KIND}"
ROOT_STACK_TYPE = "pulumi:pulumi:Stack"
_URN_PREFIX = "urn:pulumi:"
_TYPE_DELIMITER = "$"  # between the types of a qualified type (resource.URNTypeDelimiter)


@dataclass(frozen=True)
class Edges:
    """One resource's place in the graph, its URNs as the engine makes them."""

    urn: str
    custom: bool = True
    dependencies: tuple[str, ...] = ()
    property_dependencies: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    provider: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "urn": self.urn,
            "custom": self.custom,
            "provider": self.provider,
            "dependencies": list(self.dependencies),
            "propertyDependencies": {k: list(v) for k, v in self.property_dependencies.items()},
        }


def _parts(urn: str) -> tuple[str, str, str, str] | None:
    """`urn:pulumi:<stack>::<project>::<qualified type>::<name>` split, or None."""
    if not urn.startswith(_URN_PREFIX):
        return None
    parts = urn[len(_URN_PREFIX) :].split("::", 3)
    return (parts[0], parts[1], parts[2], parts[3]) if len(parts) == 4 else None


def engine_urns(nodes: Iterable[tuple[str, str | None, str, str]]) -> dict[str, str]:
    """Each registered URN -> the URN the engine gives it; `nodes` are (URN, parent URN, type,
    name) as the mock monitor registered them."""
    table = {urn: (parent, type_, name) for urn, parent, type_, name in nodes}
    done: dict[str, str] = {}

    def engine_urn(urn: str) -> str:
        known, parts = done.get(urn), _parts(urn)
        if known is not None or urn not in table or parts is None:
            return known or urn
        parent, type_, name = table[urn]
        parent_parts = _parts(engine_urn(parent)) if parent else None
        qualified = type_
        if parent_parts is not None and parent_parts[2] != ROOT_STACK_TYPE:
            qualified = f"{parent_parts[2]}{_TYPE_DELIMITER}{type_}"
        done[urn] = f"{_URN_PREFIX}{parts[0]}::{parts[1]}::{qualified}::{name}"
        return done[urn]

    for urn in table:
        engine_urn(urn)
    return done


def edges(
    urns: Mapping[str, str],
    urn: str,
    custom: bool,
    dependencies: Iterable[str],
    property_dependencies: Mapping[str, Iterable[str]],
    provider: str | None,
) -> Edges:
    """A registration's edges, its URNs rewritten by `urns` and sorted (the SDK sends sets)."""
    provider_urn, _, provider_id = (provider or "").rpartition("::")
    return Edges(
        urn=urns.get(urn, urn),
        custom=custom,
        dependencies=tuple(sorted({urns.get(u, u) for u in dependencies})),
        property_dependencies={
            key: tuple(sorted({urns.get(u, u) for u in property_dependencies[key]}))
            for key in sorted(property_dependencies)
        },
        provider=f"{urns.get(provider_urn, provider_urn)}::{provider_id}" if provider else None,
    )


# --- reading plan.json, for --diff ----------------------------------------------------------


def _urn_list(value: Any) -> list[str] | None:
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return value
    return None


def records_edges(resource: Mapping[str, Any]) -> bool:
    """Whether a plan.json resource records its dependencies (plans before them did not)."""
    provider = resource.get("provider")
    return _urn_list(resource.get("dependencies")) is not None and (
        provider is None or isinstance(provider, str)
    )


def shown(urn: str) -> str:
    """`type  name` of a URN, the way --diff names a resource (any other string as it is)."""
    parts = _parts(urn)
    if parts is None:
        return urn
    return f"{parts[2].rsplit(_TYPE_DELIMITER, 1)[-1]}  {parts[3]}"


def _identity(urn: str) -> str:
    """A URN without its stack and project: the same resource in a plan of another stack."""
    parts = _parts(urn)
    return f"{parts[2]}::{parts[3]}" if parts else urn


def _targets(resource: Mapping[str, Any]) -> dict[str, str]:
    """identity -> URN of what `resource` depends on; its provider under `provider`."""
    targets = {_identity(u): u for u in _urn_list(resource.get("dependencies")) or []}
    provider = resource.get("provider")
    if isinstance(provider, str) and provider:
        targets["provider"] = provider.rpartition("::")[0] or provider
    return targets


def changed_edges(old: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[str, ...]:
    """The lines --diff shows under a resource for its dependencies: `+ depends on T  N` (now),
    `- depends on T  N` (no longer), and a changed provider; none when either plan does not
    record them."""
    if not (records_edges(old) and records_edges(new)):
        return ()
    before, after = _targets(old), _targets(new)
    lines: list[str] = []
    for key in sorted(before.keys() | after.keys(), key=lambda k: (k == "provider", k)):
        if _identity(before.get(key, "")) == _identity(after.get(key, "")):
            continue
        what = "provider" if key == "provider" else "depends on"
        lines += [f"- {what} {shown(before[key])}"] if key in before else []
        lines += [f"+ {what} {shown(after[key])}"] if key in after else []
    return tuple(lines)


def unrecorded(resources: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a plan.json has resources that do not record their dependencies."""
    return any(not records_edges(r) for r in resources)
