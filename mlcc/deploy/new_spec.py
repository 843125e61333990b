"""Is what the cluster shows about the spec just applied? Sourced signs (docs/operator-facts.md).

`status.observedGeneration`: the CRD declares it ("Latest generation reconciled by controller"),
but no source shows the operator writing it (the HyperPod CLI only declares it in its generated
model; no test, example or notebook output shows it). So it is read when written, and a missing
one never holds success; the sign that the pods run the new spec is then their worker container:
the CRD's `spec.worker.image` ("The name of the inference server image to be used") and
`spec.worker.environmentVariables` ("List of environment variables to set in the container").
A ready pod whose worker lacks the image or one of the spec's variables runs an older spec; so
does one whose copy of an s3:// head has other arguments than the spec's (another head copied to
the same local path: mlcc/deploy/draft_head.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mlcc.deploy import draft_head, verify
from mlcc.facts.operator import OBSERVED_GENERATION_FIELD


def observed_generation(endpoint: Mapping[str, Any]) -> int | None:
    """`status.observedGeneration` when the operator wrote a whole number, else None (unknown)."""
    node: object = endpoint
    for part in OBSERVED_GENERATION_FIELD.split("."):
        node = node.get(part) if isinstance(node, Mapping) else None
    return node if isinstance(node, int) and not isinstance(node, bool) else None


def pod_runs_spec(pod: Mapping[str, Any], endpoint: Mapping[str, Any]) -> bool:
    """Whether the pod's worker runs the spec's image with every plain variable of the spec."""
    worker = (endpoint.get("spec") or {}).get("worker") or {}
    image = worker.get("image") if isinstance(worker, Mapping) else None
    container = verify.worker_container(pod, image if isinstance(image, str) else None)
    if container is None:
        return False
    if isinstance(image, str) and image and container.get("image") != image:
        return False
    if not draft_head.runs_spec_copy(pod, endpoint):
        return False
    env = {
        str(item.get("name")): item.get("value")
        for item in container.get("env") or []
        if isinstance(item, Mapping)
    }
    wanted = verify.endpoint_environment(endpoint) if isinstance(worker, Mapping) else []
    return all(
        env.get(str(item.get("name"))) == item["value"]
        for item in wanted
        if isinstance(item, Mapping) and isinstance(item.get("value"), str)
    )
