"""Pods, events, endpoint statuses and engine logs of the deploy stories (shaped as the API
serves them: the fields the kubelet, the scheduler and the operator set)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import verify_samples as s
from serve_harness import run_serve

POD = "hp-dev-7c9f8d-x2k4q"
WORKER = "model"
STARTED = "2026-12-04T04:00:00Z"
ENV = s.rendered_env()
LOGS = Path(__file__).parent / "logs"

# The ValueError vLLM raises when the KV cache cannot hold one sequence of max_model_len, after the
# lines a start prints before it: written from that format (vllm/v1/core/kv_cache_utils.py), not
# captured from a GPU run.
VLLM_VALUE_ERROR_LOG = (LOGS / "vllm-0.27.1-kv-cache-value-error.log").read_text(encoding="utf-8")


def wrapper_refusal_log() -> str:
    """What the serve wrapper really prints when it refuses a setting (it exits 2)."""
    result = run_serve(
        "vllm", {"SM_VLLM_MODEL": s.TARGET, "SM_VLLM_SPECULATIVE_CONFIG": "{not json"}
    )
    assert result.returncode == 2, result.stderr
    return result.stderr


def endpoint(
    state: str | None,
    *,
    generation: int = 2,
    observed: int | None = 2,
    message: str | None = None,
    replicas: int = 1,
    registration: str | None = None,
) -> dict[str, Any]:
    found = s.endpoint(ENV, state=state, registration=registration)
    found["metadata"]["generation"] = generation
    found["spec"]["replicas"] = replicas
    status = found["status"]
    if observed is None:
        status.pop("observedGeneration", None)
    else:
        status["observedGeneration"] = observed
    if message:
        status["deploymentStatus"] = {"reason": "ProgressDeadlineExceeded", "message": message}
    return found


def _container_status(
    name: str,
    image: str,
    *,
    ready: bool,
    state: dict[str, Any],
    last: dict[str, Any],
    restarts: int,
) -> dict[str, Any]:
    return {
        "name": name,
        "image": image,
        "imageID": "",
        "ready": ready,
        "restartCount": restarts,
        "started": ready,
        "state": state,
        "lastState": last,
    }


def pod(
    name: str = POD,
    *,
    ready: bool = False,
    phase: str = "Running",
    waiting: tuple[str, str] | None = None,
    terminated: dict[str, Any] | None = None,
    restarts: int = 0,
    unschedulable: str | None = None,
    created: str | None = None,
) -> dict[str, Any]:
    """A model pod: nginx sidecar first, the worker `model` second."""
    found = copy.deepcopy(s.pod(name, ENV, phase=phase))
    found["metadata"]["uid"] = f"uid-{name}"
    if created is not None:
        found["metadata"]["creationTimestamp"] = created
    conditions = [{"type": "Ready", "status": str(ready)}]
    if unschedulable is not None:
        conditions = [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": unschedulable,
            }
        ]
    found["status"]["conditions"] = conditions
    if phase == "Pending" and unschedulable is not None:
        return found
    state: dict[str, Any] = {"running": {"startedAt": STARTED}}
    if waiting is not None:
        state = {"waiting": {"reason": waiting[0], "message": waiting[1]}}
    last = {"terminated": terminated} if terminated else {}
    found["status"]["containerStatuses"] = [
        _container_status(
            "nginx",
            s.SIDECAR_IMAGE,
            ready=True,
            state={"running": {"startedAt": STARTED}},
            last={},
            restarts=0,
        ),
        _container_status(WORKER, s.IMAGE, ready=ready, state=state, last=last, restarts=restarts),
    ]
    return found


def crashed(exit_code: int, reason: str = "Error") -> dict[str, Any]:
    return {"exitCode": exit_code, "reason": reason, "startedAt": STARTED, "finishedAt": STARTED}


def event(
    name: str,
    reason: str,
    message: str,
    *,
    kind: str = "Pod",
    at: str = STARTED,
    warning: bool = True,
) -> dict[str, Any]:
    return {
        "metadata": {"name": f"{name}.{reason.lower()}", "namespace": "inference"},
        "involvedObject": {"kind": kind, "name": name, "namespace": "inference"},
        "reason": reason,
        "message": message,
        "type": "Warning" if warning else "Normal",
        "lastTimestamp": at,
        "count": 1,
    }


# What the kubelet writes when it evicts a pod for the node's disk (pkg/kubelet/eviction:
# `The node was low on resource: %v. Threshold quantity: %v, available: %v. ` and the container
# that used the most), on the pod's status and in its `Evicted` event.
EVICTION_MESSAGE = (
    "The node was low on resource: ephemeral-storage. Threshold quantity: 10237469500, "
    "available: 9876Ki. Container model was using 48Gi, request is 0, has larger consumption "
    "of ephemeral-storage. "
)


def evicted_pod(name: str, created: str) -> dict[str, Any]:
    """A pod the kubelet evicted: Failed, reason Evicted, its containers terminated."""
    found = pod(name, phase="Failed", created=created)
    found["status"] |= {"reason": "Evicted", "message": EVICTION_MESSAGE}
    found["status"]["conditions"] = [
        {"type": "Ready", "status": "False"},
        {"type": "DisruptionTarget", "status": "True", "reason": "TerminationByKubelet"},
    ]
    for status in found["status"]["containerStatuses"]:
        status |= {"ready": False, "started": False}
        status["state"] = {"terminated": crashed(137, "ContainerStatusUnknown")}
    return found


def eviction_event(name: str, at: str) -> dict[str, Any]:
    return event(name, "Evicted", EVICTION_MESSAGE, at=at)


# A liveness kill as the kubelet reports it (pkg/kubelet/prober, kuberuntime): `Unhealthy`
# with the probe's failure, then `Killing` naming the probe; the container exits 137.
LIVENESS_FAILED = (
    'Liveness probe failed: Get "http://10.1.4.17:8080/health": context deadline exceeded '
    "(Client.Timeout exceeded while awaiting headers)"
)
LIVENESS_KILLING = f"Container {WORKER} failed liveness probe, will be restarted"

# A pull the registry refused (the kubelet's `Failed` event; the container then waits in
# ErrImagePull and ImagePullBackOff, whose message is only `Back-off pulling image`).
PULL_REFUSED = (
    f'Failed to pull image "{s.IMAGE}": rpc error: code = Unknown desc = failed to pull and '
    f'unpack image "{s.IMAGE}": failed to resolve reference "{s.IMAGE}": unexpected status '
    "from HEAD request to https://123456789012.dkr.ecr.us-east-1.amazonaws.com/v2/hp-vllm/"
    f"manifests/{s.IMAGE.rsplit('@', 1)[1]}: 401 Unauthorized"
)

# vLLM refusing --gpu-memory-utilization 1.5: its CacheConfig is a pydantic dataclass. Written
# from pydantic's ValidationError format and vLLM's start-up lines, not captured from a GPU run.
VLLM_VALIDATION_ERROR_LOG = (LOGS / "vllm-0.27.1-validation-error.log").read_text(encoding="utf-8")
