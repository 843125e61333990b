"""Which pods are an endpoint's: its published selector, else the operator's own names for them.

Pure. Every name comes from `mlcc.facts.operator` (docs/operator-facts.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from mlcc.config.pod_names import deployment_pods_regex
from mlcc.deploy.snapshot import dotted
from mlcc.deploy.verify import pod_name
from mlcc.facts.operator import DEPLOYMENT_NAME_FIELD, POD_NAME_LABEL, POD_SELECTOR_FIELD


def pod_selector(endpoint: Mapping[str, Any]) -> str | None:
    """The label selector of the endpoint's pods (the CRD's scale subresource publishes it)."""
    selector = dotted(endpoint, POD_SELECTOR_FIELD)
    return str(selector) if selector else None


def unselected_pods_how(endpoint: Mapping[str, Any], name: str) -> str:
    """How `endpoint_pods` chose, for the line that names the pods."""
    deployment = dotted(endpoint, DEPLOYMENT_NAME_FIELD) or name
    return (
        f"label {POD_NAME_LABEL}={name} or Deployment {deployment}'s pod names "
        "(the endpoint publishes no status.selector)"
    )


def endpoint_pods(
    pods: Iterable[Mapping[str, Any]], endpoint: Mapping[str, Any], name: str
) -> list[Mapping[str, Any]]:
    """Fallback when the endpoint publishes no selector: the pods the HyperPod CLI lists for it
    (label `app` = its name), and its Deployment's pods, named as Kubernetes names them (the
    Deployment of status.deploymentStatus.name, else of the endpoint's name), never a twin's
    `<name>-baseline-...` pods. docs/operator-facts.md."""
    deployments = {name, str(dotted(endpoint, DEPLOYMENT_NAME_FIELD) or name)}
    patterns = []
    for deployment in sorted(deployments):
        try:
            patterns.append(re.compile(deployment_pods_regex(deployment)))
        except ValueError:  # not a Deployment name: nothing of the cluster's can be its pods
            continue
    return [
        p
        for p in pods
        if ((p.get("metadata") or {}).get("labels") or {}).get(POD_NAME_LABEL) == name
        or any(pattern.fullmatch(pod_name(p)) for pattern in patterns)
    ]
