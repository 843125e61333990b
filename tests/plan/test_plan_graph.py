"""plan.json's dependency graph (mlcc.plan.graph): the URNs the engine would give, every edge a
resource of the plan, and `--diff` showing a dependency that changed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from program_runs import CR_TYPE, IMAGE, in_repo

from mlcc.cli import main
from mlcc.plan import graph
from mlcc.plan.diff import diff, summary

STACK_URN = "urn:pulumi:dev::hp::pulumi:pulumi:Stack::hp-dev"


def test_urns_are_the_engines_whole_parent_chain_without_the_root_stack() -> None:
    """The mock monitor prefixes the root stack's type and only the parent's last type; the
    engine (`generateURN`) leaves the root stack out and keeps the parent's whole chain."""
    mock = "urn:pulumi:dev::hp::{}".format
    top, mid, leaf = (
        mock("pulumi:pulumi:Stack$hp:index:A::a"),
        mock("hp:index:A$hp:index:B::b"),
        mock("hp:index:B$aws:s3/bucket:Bucket::c"),
    )
    urns = graph.engine_urns(
        [
            (leaf, mid, "aws:s3/bucket:Bucket", "c"),  # in any order
            (top, STACK_URN, "hp:index:A", "a"),
            (mid, top, "hp:index:B", "b"),
        ]
    )
    assert urns == {
        top: "urn:pulumi:dev::hp::hp:index:A::a",
        mid: "urn:pulumi:dev::hp::hp:index:A$hp:index:B::b",
        leaf: "urn:pulumi:dev::hp::hp:index:A$hp:index:B$aws:s3/bucket:Bucket::c",
    }
    edges = graph.edges(urns, leaf, True, [top, mid, top], {"x": [mid, top], "a": []}, None)
    assert edges.dependencies == (urns[mid], urns[top])  # one of each, sorted ("$" < ":")
    assert list(edges.property_dependencies) == ["a", "x"]
    assert edges.property_dependencies["x"] == (urns[mid], urns[top])
    with_provider = graph.edges(urns, leaf, True, [], {}, f"{mid}::b-id")
    assert with_provider.provider == f"{urns[mid]}::b-id"


@pytest.fixture(scope="module")
def dev_plan(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    out = tmp_path_factory.mktemp("dev")
    assert plan(out) == 0
    resources: list[dict[str, Any]] = json.loads((out / "plan.json").read_text())["resources"]
    return resources


def plan(out: Path, *argv: str) -> int:
    with in_repo():
        return main(["plan", "--out", str(out), *argv])


def test_every_edge_in_plan_json_is_a_resource_of_the_plan(dev_plan: list[dict[str, Any]]) -> None:
    by_ref = {f"{r['type']}::{r['name']}": r for r in dev_plan}
    urns = {r["urn"] for r in dev_plan}
    assert len(urns) == len(dev_plan)
    for resource in dev_plan:
        assert set(resource["dependencies"]) <= urns, resource["name"]
        inputs_behind = {u for us in resource["propertyDependencies"].values() for u in us}
        assert inputs_behind <= set(resource["dependencies"]), resource["name"]
        if resource["provider"]:
            assert resource["provider"].rsplit("::", 1)[0] in urns
        # the URN's qualified type is the chain of its parents' types
        chain, parent = [resource["type"]], resource["parent"]
        while parent:
            chain.insert(0, by_ref[parent]["type"])
            parent = by_ref[parent]["parent"]
        assert resource["urn"] == f"urn:pulumi:dev::hp::{'$'.join(chain)}::{resource['name']}"


def test_an_endpoint_records_its_explicit_and_its_input_dependencies(
    dev_plan: list[dict[str, Any]],
) -> None:
    (endpoint,) = (r for r in dev_plan if r["type"] == CR_TYPE)
    named = {graph.shown(u) for u in endpoint["dependencies"]}
    behind_spec = {graph.shown(u) for u in endpoint["propertyDependencies"]["spec"]}
    behind_inputs = {graph.shown(u) for us in endpoint["propertyDependencies"].values() for u in us}
    # depends_on (the operator add-on, the namespace): in dependencies, behind no input
    explicit = {
        "aws:eks/addon:Addon  operator-addon",
        "kubernetes:core/v1:Namespace  endpoint-namespace",
    }
    assert explicit <= named and not explicit & behind_inputs
    # the built image is behind spec.worker.image
    assert "docker-build:index:Image  image-image" in behind_spec
    assert graph.shown(endpoint["provider"].rsplit("::", 1)[0]) == (
        "pulumi:providers:kubernetes  eks-k8s"
    )


def test_the_diff_shows_the_dependencies_an_endpoint_gains_and_loses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A prebuilt hp:image: the endpoint no longer depends on the image build, and back."""
    built, prebuilt = tmp_path / "built", tmp_path / "prebuilt"
    assert plan(built) == 0
    assert plan(prebuilt, "--set", f"hp:image={IMAGE}", "--diff", str(built)) == 0
    lost = capsys.readouterr().out.splitlines()
    assert plan(tmp_path / "again", "--diff", str(prebuilt)) == 0
    gained = capsys.readouterr().out.splitlines()
    for lines, sign in ((lost, "-"), (gained, "+")):
        at = lines.index(f"~ {CR_TYPE}  endpoint")
        assert lines[at + 1 : at + 4] == [
            "    spec.worker.image",
            f"    {sign} depends on aws:ecr/repository:Repository  image-repository",
            f"    {sign} depends on docker-build:index:Image  image-image",
        ]
        assert not [line for line in lines if line.startswith("dependencies not compared")]


def test_an_old_plan_without_dependencies_diffs_and_says_it_cannot_compare_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = tmp_path / "base"
    assert plan(base) == 0
    document = json.loads((base / "plan.json").read_text())
    for resource in document["resources"]:  # as plans before the graph was recorded
        for key in ("urn", "custom", "provider", "dependencies", "propertyDependencies"):
            del resource[key]
    (base / "plan.json").write_text(json.dumps(document))
    capsys.readouterr()
    assert plan(tmp_path / "head", "--set", f"hp:image={IMAGE}", "--diff", str(base)) == 0
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    lines = captured.out.splitlines()
    assert f"dependencies not compared: the plan.json of --diff {base} does not record them" in (
        lines
    )
    assert not [line for line in lines if "depends on" in line]
    assert f"~ {CR_TYPE}  endpoint" in lines  # the inputs are still compared


def resource(**fields: Any) -> dict[str, Any]:
    return {"type": "t:m:T", "name": "r", "parent": None, "inputs": {}, **fields}


URN = "urn:pulumi:{}::hp::hp:index:C${}::{}".format


@pytest.mark.parametrize("stack", ("dev", "other"))
def test_a_hand_edited_dependency_or_provider_is_a_change_of_its_own(stack: str) -> None:
    old = resource(
        dependencies=[URN("dev", "t:m:Kept", "k"), URN("dev", "t:m:Gone", "g")],
        provider=URN("dev", "pulumi:providers:kubernetes", "one") + "::one-id",
    )
    new = resource(
        dependencies=[URN(stack, "t:m:Kept", "k"), URN(stack, "t:m:New", "n")],
        provider=URN(stack, "pulumi:providers:kubernetes", "two") + "::two-id",
    )
    (change,) = diff([old], [new])
    assert summary([change]) == (
        "0 to create, 0 to change, 0 to delete, 1 with only dependencies changed"
    )
    assert change.lines() == [
        "~ t:m:T  r",
        "    - depends on t:m:Gone  g",
        "    + depends on t:m:New  n",
        "    - provider pulumi:providers:kubernetes  one",
        "    + provider pulumi:providers:kubernetes  two",
    ]
    # the same edges in another order, in a plan of another stack: no change
    same = resource(dependencies=[URN(stack, "t:m:Gone", "g"), URN(stack, "t:m:Kept", "k")])
    same["provider"] = URN(stack, "pulumi:providers:kubernetes", "one") + "::other-id"
    assert diff([old], [same]) == []


@pytest.mark.parametrize(
    "odd", [{"dependencies": 5}, {"dependencies": [1]}, {"provider": 3}, {}, {"dependencies": None}]
)
def test_dependencies_that_are_not_urn_lists_are_not_compared(odd: dict[str, Any]) -> None:
    new = resource(dependencies=[URN("dev", "t:m:New", "n")], provider=None)
    assert diff([resource(**odd)], [new]) == []
    assert graph.unrecorded([resource(**odd), new]) and not graph.unrecorded([new])
