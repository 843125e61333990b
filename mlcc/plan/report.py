"""What `mlcc plan` prints and writes, as pure functions of the planned resources.

A plan is a list of `PlannedResource` in tree order (parents before children, siblings sorted
by name and type), each with its place in the dependency graph (mlcc.plan.graph), so two runs
with the same inputs give the same text and the same plan.json whatever order the Pulumi
runtime registered them in. mlcc.plan.diff compares two plan.json documents.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mlcc.engine_contract.values import printable
from mlcc.plan import capture, features, graph, image_cuda
from mlcc.plan.graph import CR_TYPE
from mlcc.plan.schedule import endpoint_schedule
from mlcc.serving.engines import PINNED_VERSIONS, Engine
from mlcc.userfiles.reading import dig

HYPERPOD_TYPE = "aws-native:sagemaker:Cluster"
MAX_COLUMNS = 100
_MIN_NAME_COLUMNS = 12
_ENGINE_LABEL = "hp.mlcc/engine"
_ENGINE_VERSION_LABEL = "hp.mlcc/engine-version"
_MODEL_VARIABLES = {"SM_VLLM_MODEL": Engine.VLLM, "SM_SGLANG_MODEL_PATH": Engine.SGLANG}
_FIRST_KEYS = ("apiVersion", "kind", "metadata", "name")

# (the CR env, engine -> the endpoint's release) -> the vLLM JSON and the SGLang flags.
SpeculativeFlags = Callable[[dict[str, str], dict[str, str]], tuple[str | None, str | None]]


@dataclass(frozen=True)
class PlannedResource:
    type: str
    name: str
    parent: str | None  # the parent's `type::name`
    depth: int
    inputs: Any
    custom: bool = True
    edges: graph.Edges | None = None  # its URN and what it depends on

    @property
    def ref(self) -> str:
        return f"{self.type}::{self.name}"

    def as_json(self) -> dict[str, Any]:
        head = {"type": self.type, "name": self.name, "parent": self.parent}
        return {**head, **(self.edges.as_json() if self.edges else {}), "inputs": self.inputs}


@dataclass(frozen=True)
class Registered:
    """What the plan needs from one registration (see mlcc.plan.mocks.Registration)."""

    type: str
    name: str
    urn: str
    parent_urn: str | None
    inputs: Any
    custom: bool
    dependencies: tuple[str, ...] = ()
    property_dependencies: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    provider: str | None = None  # `<provider urn>::<id>`


def ordered(value: Any) -> Any:
    """Keys in the conventional Kubernetes order, then alphabetical (runs do not keep order)."""
    if isinstance(value, dict):
        rank = {key: index for index, key in enumerate(_FIRST_KEYS)}
        keys = sorted(value, key=lambda k: (rank.get(k, len(rank)), k))
        return {k: ordered(value[k]) for k in keys}
    if isinstance(value, list):
        return [ordered(v) for v in value]
    return value


def tree_order(registered: Sequence[Registered]) -> list[PlannedResource]:
    """Depth first from the top-level resources; siblings sorted by (name, type)."""
    by_urn = {r.urn: r for r in registered}
    urns = graph.engine_urns((r.urn, r.parent_urn, r.type, r.name) for r in registered)
    children: dict[str | None, list[Registered]] = {}
    for resource in registered:
        parent = resource.parent_urn if resource.parent_urn in by_urn else None
        children.setdefault(parent, []).append(resource)
    planned: list[PlannedResource] = []

    def visit(parent_urn: str | None, depth: int) -> None:
        for resource in sorted(children.get(parent_urn, []), key=lambda r: (r.name, r.type)):
            parent = by_urn.get(resource.parent_urn or "")
            planned.append(
                PlannedResource(
                    type=resource.type,
                    name=resource.name,
                    parent=f"{parent.type}::{parent.name}" if parent else None,
                    depth=depth,
                    inputs=ordered(resource.inputs),
                    custom=resource.custom,
                    edges=graph.edges(
                        urns,
                        resource.urn,
                        resource.custom,
                        resource.dependencies,
                        resource.property_dependencies,
                        resource.provider,
                    ),
                )
            )
            visit(resource.urn, depth + 1)

    visit(None, 0)
    return planned


# --- headline -------------------------------------------------------------------------------


CREATED = "new VPC, EKS and HyperPod cluster"


def headline(
    stack: str,
    values: Mapping[str, str],
    resources: Sequence[PlannedResource],
    speculative_flags: SpeculativeFlags,
    preflight: Mapping[str, Sequence[str]] | None = None,
) -> list[str]:
    """Stack, mode, region, GPU nodes, account; per endpoint engine, model, type x count, checks."""
    region = values.get("aws:region") or "not set (aws:region)"
    cluster = values.get("hp:clusterName", "")
    kubeconfig = values.get("hp:kubeconfig", "")
    if kubeconfig:
        lines = [f"stack {stack}: Kubernetes-only mode (no AWS resource, no AWS call)"]
        context = values.get("hp:kubeContext") or "its current-context"
        lines.append(f"cluster: kubeconfig {kubeconfig}, context {context}")
    else:
        mode = "existing-cluster mode" if cluster else f"create mode ({CREATED})"
        lines = [f"stack {stack}: {mode}, region {region}"]
    if cluster and not kubeconfig:  # its own line: an ARN is long
        lines.append(f"HyperPod cluster: {cluster}")
    groups = [_group_text(g) for r in resources if r.type == HYPERPOD_TYPE for g in _groups(r)]
    if groups:
        lines.append(f"GPU nodes: {', '.join(groups)}")
    lines += [f"account: {line}" for line in (preflight or {}).get("", ())]  # preflight's
    endpoints = [r for r in resources if r.type == CR_TYPE]
    for endpoint in endpoints:
        lines += _endpoint_lines(endpoint, values, speculative_flags)
        lines += capture.lines(dig(endpoint.inputs, "spec") or {}, resources)
        name = dig(endpoint.inputs, "metadata", "name") or endpoint.name
        lines += [f"  preflight: {line}" for line in (preflight or {}).get(name, ())]
    return lines if endpoints else [*lines, "no endpoint"]


def _groups(resource: PlannedResource) -> list[Mapping[str, Any]]:
    groups = resource.inputs.get("instanceGroups") if isinstance(resource.inputs, dict) else None
    return [g for g in groups or [] if isinstance(g, dict)]


def _group_text(group: Mapping[str, Any]) -> str:
    return (
        f"{group.get('instanceType')} x {group.get('instanceCount')} "
        f"(group {group.get('instanceGroupName')})"
    )


def endpoint_env(cr: PlannedResource) -> dict[str, str]:
    worker = dig(cr.inputs, "spec", "worker") or {}
    variables = worker.get("environmentVariables") or [] if isinstance(worker, dict) else []
    return {
        str(e["name"]): str(e["value"])
        for e in variables
        if isinstance(e, dict) and "name" in e and "value" in e
    }


def _endpoint_lines(
    cr: PlannedResource, values: Mapping[str, str], speculative_flags: SpeculativeFlags
) -> list[str]:
    env = endpoint_env(cr)
    labels = dig(cr.inputs, "metadata", "labels") or {}
    engine = _engine(labels, env)
    version = (
        labels.get(_ENGINE_VERSION_LABEL)
        or values.get("hp:engineVersion")
        or (PINNED_VERSIONS[Engine(engine)] if engine in set(Engine) else "?")
    )
    model = dig(cr.inputs, "spec", "modelSourceConfig", "huggingFaceModel", "modelId") or next(
        (env[v] for v in _MODEL_VARIABLES if v in env), "?"
    )
    name = dig(cr.inputs, "metadata", "name") or cr.name
    namespace = dig(cr.inputs, "metadata", "namespace") or "default"
    spec = dig(cr.inputs, "spec") or {}
    instance = f"{features.instance_types(spec)} x {spec.get('replicas')}"
    scaling = dig(cr.inputs, "spec", "autoScalingSpec")
    if isinstance(scaling, Mapping):
        low, high = scaling.get("minReplicaCount"), scaling.get("maxReplicaCount")
        instance += f" (autoscaling {low}-{high})"
    lines = [
        f"endpoint {name} ({namespace}): {engine} {version}, {model}",
        f"  instances: {instance}",
    ]
    algorithm = env.get("HP_SPECULATIVE_ALGORITHM")
    lines.append(f"  speculative: {algorithm or 'off'}")
    if algorithm:
        vllm, sglang = speculative_flags(env, {engine: str(version)})
        lines.append(f"    vLLM   --speculative-config {vllm or '(not accepted by this vLLM)'}")
        lines.append(f"    SGLang {sglang or '(not accepted by this SGLang)'}")
        if (schedule := endpoint_schedule(cr.inputs)) is not None:
            lines.append(f"    schedule (batch size: tokens): {schedule}")
    if (cuda := image_cuda.unknown_cuda_line(engine, str(version))) is not None:
        lines.append(cuda)
    operator_line = features.operator_line(spec)
    return [*lines, operator_line] if operator_line else lines


def _engine(labels: Mapping[str, Any], env: Mapping[str, str]) -> str:
    if labels.get(_ENGINE_LABEL):
        return str(labels[_ENGINE_LABEL])
    return next((e.value for v, e in _MODEL_VARIABLES.items() if v in env), "?")


# --- tree -----------------------------------------------------------------------------------


def tree_lines(resources: Sequence[PlannedResource]) -> list[str]:
    """One line per resource, `name  type`, indented under its parent, at most 100 columns."""
    lines: list[str] = []
    for index, resource in enumerate(resources):
        prefix = "".join(_rail(resources, index, level) for level in range(1, resource.depth + 1))
        lines.append(_fit(prefix, resource.name, resource.type))
    return lines


def _rail(resources: Sequence[PlannedResource], index: int, level: int) -> str:
    """The tree drawing at `level` for resource `index`: a branch, or a pass-through rail."""
    last = not _has_later_sibling(resources, index, level)
    if level == resources[index].depth:
        return "└─ " if last else "├─ "
    return "   " if last else "│  "


def _has_later_sibling(resources: Sequence[PlannedResource], index: int, level: int) -> bool:
    for later in resources[index + 1 :]:
        if later.depth < level:
            return False
        if later.depth == level:
            return True
    return False


def display_type(type_token: str) -> str:
    """A type token as the Pulumi CLI shows it: `aws:iam/role:Role` -> `aws:iam:Role` (the
    module's last segment dropped where it is the type's own name in camelCase, as
    `simplifyTypeName` in Pulumi's display package does); other tokens unchanged."""
    if type_token.count(":") != 2:
        return type_token
    package, module, name = type_token.split(":")
    if not name or "/" not in module:
        return type_token
    parent_module, _, last = module.rpartition("/")
    if last != name[:1].lower() + name[1:]:
        return type_token
    return f"{package}:{parent_module}:{name}"


def _fit(prefix: str, name: str, type_token: str) -> str:
    """`prefix name  type` in at most 100 columns: a long name is shortened, never the type."""
    shown_type = display_type(type_token)
    line = f"{prefix}{name}  {shown_type}"
    if len(line) <= MAX_COLUMNS:
        return line
    room = MAX_COLUMNS - len(prefix) - len(shown_type) - 2
    if room < _MIN_NAME_COLUMNS:  # a very deep tree: keep the rails nearest the resource
        keep = max(MAX_COLUMNS - len(shown_type) - 3 - _MIN_NAME_COLUMNS, 0)
        prefix = "…" + prefix[len(prefix) - keep :]
        room = MAX_COLUMNS - len(prefix) - len(shown_type) - 2
    short_name = name if len(name) <= room else f"{name[: max(room - 1, 1)]}…"
    return f"{prefix}{short_name}  {shown_type}"[:MAX_COLUMNS]


# --- outputs --------------------------------------------------------------------------------

UNKNOWN_OUTPUT = "(known after deployment)"


def output_lines(outputs: Mapping[str, Any], indent: int = 2) -> list[str]:
    """Stack outputs as the Pulumi CLI lays them out: keys sorted, a map or list nested one
    entry a line inside braces or brackets (list items as `[i]:`), four columns deeper."""
    lines: list[str] = []
    for key in sorted(outputs):
        lines += _output_value_lines(str(key), outputs[key], indent)
    return lines


def _output_value_lines(label: str, value: Any, indent: int) -> list[str]:
    pad = " " * indent
    label = printable(label)
    if isinstance(value, Mapping) and value:
        return [f"{pad}{label}: {{", *output_lines(value, indent + 4), f"{pad}}}"]
    if isinstance(value, list | tuple) and value:
        items = [
            line
            for index, item in enumerate(value)
            for line in _output_value_lines(f"[{index}]", item, indent + 4)
        ]
        return [f"{pad}{label}: [", *items, f"{pad}]"]
    return [f"{pad}{label}: {_scalar(value)}"]


def _scalar(value: Any) -> str:
    if value is None:
        return UNKNOWN_OUTPUT
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping):
        return "{}"
    if isinstance(value, list | tuple):
        return "[]"
    return printable(str(value))
