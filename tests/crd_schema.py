"""Validation of rendered manifests against the vendored CRD schemas in schemas/crds/.

A manifest passes when it validates against the v1 openAPIV3Schema AND contains no field the
API server would prune (structural schemas drop unknown fields silently).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from jsonschema.protocols import Validator

REPO = Path(__file__).resolve().parent.parent
CRD_DIR = REPO / "schemas" / "crds"
# libyaml parses the 456 KB CRD in a tenth of the pure-Python loader's time.
YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@cache
def crd_schema(file_name: str, version: str = "v1") -> dict[str, Any]:
    crd = yaml.load((CRD_DIR / file_name).read_text(), Loader=YAML_LOADER)
    (served,) = [v for v in crd["spec"]["versions"] if v["name"] == version]
    schema: dict[str, Any] = served["schema"]["openAPIV3Schema"]
    return schema


@cache
def crd_validator(file_name: str, version: str = "v1") -> Validator:
    """Checked against the metaschema once; re-checking 456 KB per manifest took seconds."""
    schema = crd_schema(file_name, version)
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    return validator_class(schema)


def _validated_elsewhere(path: str, key: str) -> bool:
    """apiVersion/kind and ObjectMeta are checked by the API server, not by the CRD schema."""
    return path == ".metadata" or (path == "" and key in {"apiVersion", "kind"})


def pruned_fields(value: Any, schema: dict[str, Any], path: str = "") -> list[str]:
    """Paths of fields a structural schema does not declare (the API server would drop them)."""
    if schema.get("x-kubernetes-preserve-unknown-fields"):
        return []
    if isinstance(value, dict):
        properties = schema.get("properties")
        additional = schema.get("additionalProperties")
        found: list[str] = []
        for key, item in value.items():
            if properties is not None and key in properties:
                found += pruned_fields(item, properties[key], f"{path}.{key}")
            elif isinstance(additional, dict):
                found += pruned_fields(item, additional, f"{path}.{key}")
            elif additional is not True and not _validated_elsewhere(path, key):
                found.append(f"{path}.{key}")
        return found
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [
            p
            for i, v in enumerate(value)
            for p in pruned_fields(v, schema["items"], f"{path}[{i}]")
        ]
    return []


def assert_valid_manifest(manifest: dict[str, Any], file_name: str) -> None:
    error = jsonschema.exceptions.best_match(crd_validator(file_name).iter_errors(manifest))
    if error is not None:
        raise error
    assert pruned_fields(manifest, crd_schema(file_name)) == []
