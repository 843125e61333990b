#!/usr/bin/env python3
"""Derive the HyperPodPyTorchJob JSON schema from AWS's own pydantic model of the job.

    python3 scripts/training_job_schema.py WHEEL [SITE_PACKAGES_PYTHON]

The training operator's CRD is not published (its EKS add-on installs it), so the schema the
program validates the job against comes from the `sagemaker-hyperpod` package on PyPI: its
`sagemaker.hyperpod.training.config.hyperpod_pytorch_job_unified_config._HyperPodPytorchJob` is
the job's spec, and `sagemaker.hyperpod.training.hyperpod_pytorch_job` names the group, version,
kind and plural the SDK creates the object with (TRAINING_GROUP, API_VERSION, KIND, PLURAL).

WHEEL is the downloaded wheel (`pip download --no-deps sagemaker-hyperpod==3.12.0`); its sha256
goes into the source record. The model is imported by an interpreter where that release is
installed (default: this one), because the model imports pydantic and the SDK's own modules.

Field names are the CRD's (`replicaSpecs`, not the SDK's snake_case aliases):
`model_json_schema(by_alias=False)`. Nested models the SDK declares with extra="forbid" give
`additionalProperties: false`; the top-level spec model ignores extras, and the script closes it
too (a field the operator does not know would be dropped silently). The output,
schemas/training/hyperpodpytorchjob.json, is the whole object: apiVersion and kind as constants,
metadata, and the spec.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUTPUT = REPO / "schemas" / "training" / "hyperpodpytorchjob.json"
PACKAGE = "sagemaker-hyperpod"
MODULE = "sagemaker.hyperpod.training.config.hyperpod_pytorch_job_unified_config"
CLASS = "_HyperPodPytorchJob"
JOB_MODULE = "sagemaker.hyperpod.training.hyperpod_pytorch_job"

_PROBE = f"""
import json, importlib.metadata
from {MODULE} import {CLASS} as Spec
import {JOB_MODULE} as job
print(json.dumps({{
    "version": importlib.metadata.version("{PACKAGE}"),
    "group": job.TRAINING_GROUP, "apiVersion": job.API_VERSION,
    "kind": job.KIND, "plural": job.PLURAL,
    "spec": Spec.model_json_schema(by_alias=False),
}}))
"""


def derive(python: str) -> dict[str, object]:
    out = subprocess.run(
        [python, "-c", _PROBE], capture_output=True, text=True, check=True, timeout=300
    )
    found: dict[str, object] = json.loads(out.stdout)
    return found


def closed(schema: dict[str, object]) -> dict[str, object]:
    """The spec object itself refuses unknown fields, like the SDK's nested models."""
    schema = dict(schema)
    schema["additionalProperties"] = False
    return schema


def document(found: dict[str, object], wheel: Path) -> dict[str, object]:
    spec = closed(found["spec"])  # type: ignore[arg-type]
    definitions = spec.pop("$defs", {})
    return {
        "SOURCE": {
            "package": PACKAGE,
            "version": found["version"],
            "module": MODULE,
            "class": CLASS,
            "names_from": f"{JOB_MODULE} (TRAINING_GROUP, API_VERSION, KIND, PLURAL)",
            "wheel": wheel.name,
            "wheel_sha256": hashlib.sha256(wheel.read_bytes()).hexdigest(),
            "generated_by": "scripts/training_job_schema.py",
            "how": "model_json_schema(by_alias=False); the top-level spec closed "
            "(additionalProperties: false)",
        },
        "group": found["group"],
        "version": found["apiVersion"],
        "kind": found["kind"],
        "plural": found["plural"],
        "schema": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "required": ["apiVersion", "kind", "metadata", "spec"],
            "additionalProperties": False,
            "properties": {
                "apiVersion": {"const": f"{found['group']}/{found['apiVersion']}"},
                "kind": {"const": found["kind"]},
                "metadata": {
                    "type": "object",
                    "required": ["name", "namespace"],
                    "properties": {
                        "name": {"type": "string"},
                        "namespace": {"type": "string"},
                        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                        "annotations": {
                            "type": "object",
                            "additionalProperties": {"type": "string"},
                        },
                    },
                    "additionalProperties": False,
                },
                "spec": spec,
            },
            "$defs": definitions,
        },
    }


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    wheel = Path(argv[0])
    python = argv[1] if len(argv) > 1 else sys.executable
    found = derive(python)
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(json.dumps(document(found, wheel), indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUTPUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
