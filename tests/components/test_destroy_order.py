"""`pulumi destroy` deletes each endpoint before what it runs on, in every example stack.

Pulumi deletes a resource before everything it depends on (explicit depends_on, the resources
behind its inputs, its provider). So an endpoint is deleted before the operator add-on, the
namespace, the token Secret and the clusters exactly when they are reachable from it in the
dependency graph of the plan; its delete then waits for the operator's finalizer (the Kubernetes
provider's delete await, bounded by the resource's delete timeout).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from program_runs import CR_TYPE, run_main

from mlcc.plan.mocks import OfflineRun, Registration

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_STACKS = sorted(
    p.name[len("Pulumi.") : -len(".yaml")] for p in (REPO / "examples").glob("Pulumi.*.yaml")
)
# What an endpoint runs on: deleted only after every endpoint is gone.
UNDERNEATH = {
    "kubernetes:core/v1:Namespace",
    "kubernetes:core/v1:Secret",
    "pulumi:providers:kubernetes",
    "eks:index:Cluster",
    "aws-native:sagemaker:Cluster",
}
OPERATOR_ADDON = ("aws:eks/addon:Addon", "operator-addon")


def depends_on(run: OfflineRun, registration: Registration) -> set[str]:
    """Every URN `registration` depends on, directly or through others (and their providers)."""
    seen: set[str] = set()
    todo = [registration]
    while todo:
        current = todo.pop()
        edges = list(current.dependencies)
        if current.provider:
            edges.append(current.provider.rsplit("::", 1)[0])  # `<provider urn>::<id>`
        for urn in edges:
            found = run.by_urn(urn)
            if found is not None and urn not in seen:
                seen.add(urn)
                todo.append(found)
    return seen


@pytest.fixture(scope="module", params=("dev", *EXAMPLE_STACKS))
def run(request: pytest.FixtureRequest) -> OfflineRun:
    return run_main(stack=str(request.param))


def test_every_endpoint_is_deleted_before_the_operator_namespace_and_clusters(
    run: OfflineRun,
) -> None:
    underneath = [
        r for r in run.registrations if r.type in UNDERNEATH or (r.type, r.name) == OPERATOR_ADDON
    ]
    assert any(r.type == "pulumi:providers:kubernetes" for r in underneath)
    endpoints = run.of_type(CR_TYPE)
    assert endpoints
    for endpoint in endpoints:
        after = depends_on(run, endpoint)
        missing = sorted(f"{r.type} {r.name}" for r in underneath if r.urn not in after)
        assert missing == [], f"{endpoint.name} could outlive: {missing}"


def test_create_mode_stacks_delete_the_operator_addon_after_the_endpoints(
    run: OfflineRun,
) -> None:
    addons = [r for r in run.registrations if (r.type, r.name) == OPERATOR_ADDON]
    clusters = run.of_type("eks:index:Cluster")
    assert len(addons) == len(clusters)  # both in create mode, neither on an existing cluster
    for endpoint in run.of_type(CR_TYPE):
        after = depends_on(run, endpoint)
        assert {r.urn for r in addons + clusters} <= after


def test_every_endpoint_waits_for_the_operators_finalizer_long_enough(run: OfflineRun) -> None:
    timeouts = [r.custom_timeouts for r in run.of_type(CR_TYPE)]
    assert timeouts and all(
        t == {"create": "10m", "update": "10m", "delete": "30m"} for t in timeouts
    )
