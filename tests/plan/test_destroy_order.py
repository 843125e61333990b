"""`pulumi destroy` deletes each endpoint before what it runs on, in every example stack, read
from the plan.json `mlcc plan` writes and from nothing else.

Pulumi deletes a resource before everything it depends on: `DependenciesOf` in pulumi/pulumi
`pkg/resource/graph/dependency_graph.go` counts its `dependencies`, its `propertyDependencies`,
its provider and its parent (and `deletedWith`, which the program never sets). A component in
`depends_on` reaches the engine as its children already (`_add_dependency` in the Python SDK's
`pulumi/runtime/rpc.py`). So an endpoint is deleted before the operator add-on, the namespace,
the token Secret and the clusters exactly when they are reachable from it in plan.json's graph;
its delete then waits for the operator's finalizer (the Kubernetes provider's delete await,
bounded by the resource's delete timeout).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from program_runs import CR_TYPE, REPO, in_repo, run_main

from mlcc.cli import main
from mlcc.plan.mocks import OfflineRun

EXAMPLE_STACKS = sorted(
    p.name[len("Pulumi.") : -len(".yaml")] for p in (REPO / "examples").glob("Pulumi.*.yaml")
)
STACKS = ("dev", *EXAMPLE_STACKS)
# What an endpoint runs on: deleted only after every endpoint is gone.
UNDERNEATH = {
    "kubernetes:core/v1:Namespace",
    "kubernetes:core/v1:Secret",
    "pulumi:providers:kubernetes",
    "eks:index:Cluster",
    "aws-native:sagemaker:Cluster",
}
OPERATOR_ADDON = ("aws:eks/addon:Addon", "operator-addon")

Resource = Mapping[str, Any]


def depends_on(resources: Sequence[Resource], resource: Resource) -> set[str]:
    """Every URN `resource` depends on in a plan.json, directly or through others: what
    `pulumi destroy` deletes only after it."""
    by_urn = {r["urn"]: r for r in resources}
    urn_of = {f"{r['type']}::{r['name']}": r["urn"] for r in resources}  # plan.json's `parent`

    def direct(current: Resource) -> set[str]:
        edges = set(current["dependencies"])
        edges.update(u for urns in current["propertyDependencies"].values() for u in urns)
        if current["provider"]:
            edges.add(current["provider"].rsplit("::", 1)[0])  # `<provider urn>::<id>`
        if current["parent"] in urn_of:
            edges.add(urn_of[current["parent"]])
        return edges

    seen: set[str] = set()
    todo = [resource]
    while todo:
        for urn in direct(todo.pop()) - seen:
            assert urn in by_urn, f"{urn} is not a resource of the plan"
            seen.add(urn)
            todo.append(by_urn[urn])
    return seen


@pytest.fixture(scope="module", params=STACKS)
def planned(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> list[Resource]:
    """The resources of the plan.json `mlcc plan --stack S --out DIR` writes."""
    out = tmp_path_factory.mktemp(f"plan-{request.param}")
    with in_repo():
        assert main(["plan", "--stack", str(request.param), "--out", str(out)]) == 0
    resources: list[Resource] = json.loads((out / "plan.json").read_text())["resources"]
    return resources


def test_every_endpoint_is_deleted_before_the_operator_namespace_and_clusters(
    planned: list[Resource],
) -> None:
    underneath = [
        r for r in planned if r["type"] in UNDERNEATH or (r["type"], r["name"]) == OPERATOR_ADDON
    ]
    assert any(r["type"] == "pulumi:providers:kubernetes" for r in underneath)
    endpoints = [r for r in planned if r["type"] == CR_TYPE]
    assert endpoints
    for endpoint in endpoints:
        after = depends_on(planned, endpoint)
        missing = sorted(f"{r['type']} {r['name']}" for r in underneath if r["urn"] not in after)
        assert missing == [], f"{endpoint['name']} could outlive: {missing}"


def test_create_mode_stacks_delete_the_operator_addon_after_the_endpoints(
    planned: list[Resource],
) -> None:
    addons = [r for r in planned if (r["type"], r["name"]) == OPERATOR_ADDON]
    eks = [r for r in planned if r["type"] == "eks:index:Cluster"]
    clusters = eks + [r for r in planned if r["type"] == "aws-native:sagemaker:Cluster"]
    assert len(addons) == len(eks)  # both in create mode, neither on an existing cluster
    for endpoint in (r for r in planned if r["type"] == CR_TYPE):
        assert {r["urn"] for r in addons + clusters} <= depends_on(planned, endpoint)


def test_the_graph_is_read_as_pulumi_reads_it() -> None:
    """Each kind of edge counts, and only edges count: a dependency, an input's dependency, the
    provider and the parent, each one hop further; an unrelated resource is not reached."""
    urn = "urn:pulumi:s::p::t:m:T::{}".format
    plan: list[dict[str, Any]] = [
        {"type": "t:m:T", "name": name, "parent": None, "urn": urn(name)}
        for name in ("root", "dep", "input", "provider", "unrelated")
    ]
    plan.append(
        {
            "type": "t:m:T",
            "name": "child",
            "parent": "t:m:T::root",
            "urn": urn("child"),
            "dependencies": [urn("dep")],
            "propertyDependencies": {"spec": [urn("input")]},
            "provider": f"{urn('provider')}::provider-id",
        }
    )
    for resource in plan:
        resource.setdefault("dependencies", [])
        resource.setdefault("propertyDependencies", {})
        resource.setdefault("provider", None)
    assert depends_on(plan, plan[-1]) == {urn(n) for n in ("root", "dep", "input", "provider")}
    plan[1]["dependencies"] = [urn("unrelated")]  # one hop further
    assert urn("unrelated") in depends_on(plan, plan[-1])


@pytest.mark.parametrize("stack", STACKS)
def test_every_endpoint_waits_for_the_operators_finalizer_long_enough(stack: str) -> None:
    run: OfflineRun = run_main(stack=stack)
    timeouts = [r.custom_timeouts for r in run.of_type(CR_TYPE)]
    assert timeouts and all(
        t == {"create": "10m", "update": "10m", "delete": "30m"} for t in timeouts
    )
