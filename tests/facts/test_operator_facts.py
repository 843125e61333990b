"""mlcc/facts/operator.py: every literal has a row with a source in docs/operator-facts.md, and
every enum is the vendored CRD's."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from crd_schema import CRD_DIR, YAML_LOADER, crd_schema

from mlcc.facts import operator as facts

REPO = Path(__file__).resolve().parents[2]
MODULE = REPO / "mlcc" / "facts" / "operator.py"
PAGE = REPO / "docs" / "operator-facts.md"
FACT_COLUMNS = ("Fact", "Value", "Source", "What the program does with it")


def module_literals() -> set[str]:
    """Every string constant of the module, docstrings aside."""
    tree = ast.parse(MODULE.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        if id(node) not in docstrings
    }


def fact_rows() -> list[dict[str, str]]:
    lines = PAGE.read_text().splitlines()
    header = "| " + " | ".join(FACT_COLUMNS) + " |"
    start = lines.index(header) + 2
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        assert len(cells) == len(FACT_COLUMNS), line
        rows.append(dict(zip(FACT_COLUMNS, cells, strict=True)))
    return rows


def quoted(row: dict[str, str]) -> set[str]:
    text = " ".join(row.values())
    return {m if m != '""' else "" for m in re.findall(r"`([^`]*)`", text)}


def test_every_literal_of_the_module_has_a_row_with_a_source() -> None:
    rows = fact_rows()
    assert all(row["Source"] for row in rows), "a fact row without a source"
    covered = set().union(*(quoted(row) for row in rows))
    missing = sorted(module_literals() - covered)
    assert missing == [], f"docs/operator-facts.md lacks rows for {missing}"


def test_an_unsourced_row_says_assumed() -> None:
    for row in fact_rows():
        source = row["Source"].lower()
        known = ("crd", "cli", "chart", "assumed")
        assert any(word in source for word in known), row


def _enum(schema: dict[str, Any], path: str) -> list[str]:
    node = schema
    for part in path.split(".")[1:]:
        node = node["properties"][part]
    return list(node["enum"])


def test_the_endpoint_states_are_the_crds_enum() -> None:
    status = crd_schema("inferenceendpointconfigs.yaml")["properties"]["status"]
    assert set(facts.ENDPOINT_STATE.known) == set(
        _enum({"properties": {"status": status}}, "x.status.state")
    )
    dns = _enum({"properties": {"status": status}}, "x.status.dnsStatus.dnsHealth")
    assert set(facts.DNS_HEALTH.known) == set(dns)
    condition = status["properties"]["conditions"]["items"]["properties"]["status"]
    assert facts.CONDITION_FAILING in condition["enum"]


def test_the_registration_states_are_the_sagemaker_endpoint_registrations_enum() -> None:
    status = crd_schema("sagemakerendpointregistrations.yaml")["properties"]["status"]
    assert set(facts.SAGEMAKER_STATE.known) == set(status["properties"]["state"]["enum"])
    assert len(facts.SAGEMAKER_STATE.known) == len(set(facts.SAGEMAKER_STATE.known))


@pytest.mark.parametrize(
    "field",
    [facts.ENDPOINT_STATE, facts.DEPLOYMENT_OVERALL_STATE, facts.SAGEMAKER_STATE, facts.DNS_HEALTH],
)
def test_every_state_field_is_a_field_of_the_crd(field: facts.StateField) -> None:
    node: dict[str, Any] = crd_schema("inferenceendpointconfigs.yaml")
    for part in field.path.split("."):
        node = node["properties"][part]
    assert node["type"] == "string"
    assert not set(field.ready) & set(field.failed)


def test_the_names_and_the_pod_selector_are_the_crds() -> None:
    crd = yaml.load((CRD_DIR / "inferenceendpointconfigs.yaml").read_text(), Loader=YAML_LOADER)
    assert crd["spec"]["group"] == facts.GROUP
    assert crd["spec"]["names"]["plural"] == facts.PLURAL
    assert crd["spec"]["names"]["kind"] == facts.KIND
    (stored,) = [v for v in crd["spec"]["versions"] if v.get("storage")]
    assert stored["name"] == facts.VERSION
    scale = stored["subresources"]["scale"]
    assert scale["labelSelectorPath"] == "." + facts.POD_SELECTOR_FIELD
    node: dict[str, Any] = stored["schema"]["openAPIV3Schema"]
    for part in facts.DEPLOYMENT_NAME_FIELD.split("."):
        node = node["properties"][part]
    assert node["type"] == "string"
