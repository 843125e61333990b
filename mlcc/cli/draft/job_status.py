"""A training job's state and its pods as `mlcc draft status` prints them, pure.

Two kinds of job, read as JSON from the API (never through the client's model classes):

- `hyperpod`: the HyperPod training operator's HyperPodPyTorchJob,
  sagemaker.amazonaws.com/v1, plural hyperpodpytorchjobs (sagemaker-hyperpod 3.12.0,
  sagemaker/hyperpod/training/hyperpod_pytorch_job.py TRAINING_GROUP, API_VERSION, PLURAL). Its
  status is AWS's `HyperPodPytorchJobStatus` (training/config/
  hyperpod_pytorch_job_unified_config.py): conditions [{type, status, reason, message,
  lastTransitionTime}], restartCount, restartStatus {restartCount, fullJobRestartCount},
  startTime, completionTime. The phase is the last condition whose status is "True", as
  `hyp list hyp-pytorch-job` decides it (cli/commands/training.py). Its pods carry the label
  HPJob=<name> (hyperpod_pytorch_job.py `list_pods`).
- `job`: a batch/v1 Job; status as the kubernetes client 37.0.3 models it
  (client/models/v1_job_status.py: active, ready, succeeded, failed, terminating, conditions,
  startTime, completionTime; a finished Job has a Complete or Failed condition). Its pods carry
  batch.kubernetes.io/job-name=<name>, which the Job controller sets (Kubernetes docs, "Jobs",
  Job labels).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from mlcc.deploy.snapshot import items_of, mapping, one_line

Kind = Literal["hyperpod", "job"]
HYPERPOD_GROUP, HYPERPOD_VERSION, HYPERPOD_PLURAL = (
    "sagemaker.amazonaws.com",
    "v1",
    ("hyperpodpytorchjobs"),
)
HYPERPOD_KIND = "HyperPodPyTorchJob"
FAILED_TYPES = frozenset({"Failed"})
DONE_TYPES = frozenset({"Complete", "Completed", "Succeeded"})


def job_path(kind: Kind, namespace: str, name: str) -> str:
    if kind == "hyperpod":
        return (
            f"/apis/{HYPERPOD_GROUP}/{HYPERPOD_VERSION}/namespaces/{namespace}/"
            f"{HYPERPOD_PLURAL}/{name}"
        )
    return f"/apis/batch/v1/namespaces/{namespace}/jobs/{name}"


def pod_selector(kind: Kind, name: str) -> str:
    return f"HPJob={name}" if kind == "hyperpod" else f"batch.kubernetes.io/job-name={name}"


@dataclass(frozen=True)
class PodLine:
    name: str
    phase: str
    ready: str  # "1/1"
    restarts: int
    node: str
    waiting: str  # a container's waiting or terminated reason, "" when none
    container: str  # the first container's name: the trainer's log is read from it


@dataclass(frozen=True)
class JobState:
    phase: str  # the condition's type, or what the counts say
    failed: bool
    finished: bool
    restarts: int | None  # the operator's count (hyperpod); None for a Job
    details: tuple[str, ...]  # conditions and counts, in the API's order


def job_state(kind: Kind, job: Mapping[str, Any]) -> JobState:
    status = mapping(job.get("status"))
    conditions = items_of(status.get("conditions"))
    shown = tuple(_condition(c) for c in conditions)
    true = [str(c.get("type") or "") for c in conditions if c.get("status") == "True"]
    phase = true[-1] if true else ""
    failed = any(t in FAILED_TYPES for t in true)
    finished = failed or any(t in DONE_TYPES for t in true)
    times = [
        f"{label} {status[key]}"
        for key, label in (("startTime", "started"), ("completionTime", "completed"))
        if isinstance(status.get(key), str)
    ]
    if kind == "hyperpod":
        restarts = _count(status.get("restartCount"))
        limit = mapping(status.get("restartStatus"))
        full = _count(limit.get("fullJobRestartCount"))
        extra = [f"full-job restarts {full}"] if full else []
        return JobState(
            phase or "Pending (no condition yet)",
            failed,
            finished,
            restarts,
            (*shown, *extra, *times),
        )
    counts = [
        f"{key} {_count(status.get(key))}"
        for key in ("active", "ready", "succeeded", "failed", "terminating")
        if _count(status.get(key))
    ]
    if not phase:
        phase = "Running" if _count(status.get("active")) else "Pending"
    return JobState(phase, failed, finished, None, (*shown, *counts, *times))


def _condition(condition: Mapping[str, Any]) -> str:
    kind = str(condition.get("type") or "?")
    text = f"{kind}={condition.get('status') or '?'}"
    reason = condition.get("reason")
    message = condition.get("message")
    said = ": ".join(str(part) for part in (reason, message) if part)
    when = condition.get("lastTransitionTime")
    return one_line(f"{text}{f' ({said})' if said else ''}{f' at {when}' if when else ''}", 240)


def pod_lines(pods: Sequence[Mapping[str, Any]]) -> list[PodLine]:
    """One line per pod, by name."""
    lines = []
    for pod in pods:
        meta, spec, status = (mapping(pod.get(k)) for k in ("metadata", "spec", "status"))
        containers = items_of(status.get("containerStatuses"))
        ready = sum(1 for c in containers if c.get("ready") is True)
        restarts = sum(_count(c.get("restartCount")) for c in containers)
        reasons = [_reason(c) for c in containers]
        names = [str(c.get("name") or "") for c in items_of(spec.get("containers"))]
        lines.append(
            PodLine(
                name=str(meta.get("name") or "?"),
                phase=str(status.get("phase") or "Unknown"),
                ready=f"{ready}/{len(containers) or len(names)}",
                restarts=restarts,
                node=str(spec.get("nodeName") or "-"),
                waiting=", ".join(r for r in reasons if r),
                container=names[0] if names else "",
            )
        )
    return sorted(lines, key=lambda line: line.name)


def _reason(container: Mapping[str, Any]) -> str:
    state = mapping(container.get("state"))
    for key in ("waiting", "terminated"):
        reason = mapping(state.get(key)).get("reason")
        if isinstance(reason, str) and reason and reason != "Completed":
            return reason
    return ""


def headline(kind: Kind, name: str, namespace: str, state: JobState, pods: list[PodLine]) -> str:
    shown = HYPERPOD_KIND if kind == "hyperpod" else "Job"
    restarts = sum(p.restarts for p in pods) if state.restarts is None else state.restarts
    phases: dict[str, int] = {}
    for pod in pods:
        phases[pod.phase] = phases.get(pod.phase, 0) + 1
    counted = ", ".join(f"{n} {p.lower()}" for p, n in sorted(phases.items()))
    plural = "s" * (len(pods) != 1)
    pods_part = f"{len(pods)} pod{plural}{f' ({counted})' if pods else ''}"
    return one_line(
        f"{shown} {namespace}/{name}: {state.phase}, {pods_part}, "
        f"{restarts} restart{'s' * (restarts != 1)}",
        300,
    )


def pod_text(pod: PodLine) -> str:
    why = f" ({pod.waiting})" if pod.waiting else ""
    return one_line(
        f"{pod.name}  {pod.phase}{why}  ready {pod.ready}  restarts {pod.restarts}  "
        f"node {pod.node}",
        300,
    )


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
