"""The InferenceEndpointConfig the program renders for a sample stack, its stack file, and
applying it to a cluster."""

from __future__ import annotations

import time
from typing import Any

import verify_samples as s
import yaml
from kubernetes.client.exceptions import ApiException
from local_cluster import core_api, custom_api

from mlcc.facts.operator import GROUP, KIND, PLURAL, VERSION

__all__ = ["GROUP", "PLURAL", "VERSION", "apply", "read", "rendered_endpoint", "stack_file"]
from mlcc.manifest import workload
from mlcc.manifest.workload import API_VERSION, AWAIT_ANNOTATIONS


def rendered_endpoint(**overrides: str | None) -> dict[str, Any]:
    """What `pulumi up` would create for the stack of `verify_samples.stack_values(**overrides)`
    (mlcc/components/endpoint.py, which declares what mlcc.manifest.workload returns)."""
    config = s.stack_config(**overrides)
    endpoint = config.primary
    rendered = workload.from_endpoint(config, endpoint)
    assert config.image is not None, "the samples name a prebuilt image"
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {
            "name": rendered.endpoint_name,
            "namespace": rendered.namespace,
            "labels": workload.labels(rendered),
            "annotations": dict(AWAIT_ANNOTATIONS),
        },
        "spec": workload.endpoint_spec(rendered, config.image, endpoint.speculative),
    }


def stack_file(**overrides: str | None) -> str:
    return yaml.safe_dump({"config": s.stack_values(**overrides)})


def apply(api: Any, endpoint: dict[str, Any]) -> dict[str, Any]:
    """Create the endpoint's namespace (when new) and the endpoint."""
    namespace = endpoint["metadata"]["namespace"]
    try:
        core_api(api).create_namespace({"metadata": {"name": namespace}})
    except ApiException as error:
        if error.status != 409:
            raise
    custom = custom_api(api)
    created: dict[str, Any] = custom.create_namespaced_custom_object(
        GROUP, VERSION, namespace, PLURAL, endpoint
    )
    return created


def read(api: Any, namespace: str, name: str) -> dict[str, Any]:
    found: dict[str, Any] = custom_api(api).get_namespaced_custom_object(
        GROUP, VERSION, namespace, PLURAL, name
    )
    return found


def wait_gone(api: Any, namespace: str, name: str, timeout_s: float) -> float:
    """Seconds until the endpoint is gone; TimeoutError past `timeout_s`."""
    started = time.monotonic()
    while time.monotonic() - started < timeout_s:
        try:
            read(api, namespace, name)
        except ApiException as error:
            if error.status == 404:
                return time.monotonic() - started
            raise
        time.sleep(0.1)
    raise TimeoutError(f"{namespace}/{name} still exists after {timeout_s:g} s")
