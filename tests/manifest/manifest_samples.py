"""What the manifest tests share: the CRD they validate against and a minimal stack."""

from __future__ import annotations

from typing import Any

from crd_schema import assert_valid_manifest

from mlcc.config.stack import parse
from mlcc.manifest.workload import API_VERSION, KIND, Workload, endpoint_spec, from_endpoint
from mlcc.serving.speculative import SpeculativeSpec

CRD = "inferenceendpointconfigs.yaml"
# An existing-cluster stack with only the required keys.
BASE = {
    "hp:model": "meta-llama/Llama-3.1-8B-Instruct",
    "aws:region": "us-east-1",
    "aws-native:region": "us-east-1",
    "hp:clusterName": "existing",
}


def endpoint_manifest(w: Workload, image: str, spec: SpeculativeSpec | None) -> dict[str, object]:
    """The InferenceEndpointConfig the endpoint component declares for `w`."""
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": w.endpoint_name, "namespace": w.namespace},
        "spec": endpoint_spec(w, image, spec),
    }


def valid_specs(
    values: dict[str, str], image: str, speculative: SpeculativeSpec | None = None
) -> dict[str, dict[str, Any]]:
    """Each endpoint's rendered spec by name, each checked against the CRD."""
    config = parse({**BASE, **values}, stack="dev").config
    rendered: dict[str, dict[str, Any]] = {}
    for endpoint in config.endpoints:
        manifest = endpoint_manifest(from_endpoint(config, endpoint), image, speculative)
        assert_valid_manifest(manifest, CRD)
        rendered[endpoint.name] = manifest["spec"]  # type: ignore[assignment]
    return rendered
