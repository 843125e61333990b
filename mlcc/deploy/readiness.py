"""Is an applied endpoint serving yet? The pure decisions of the deploy wait (docs/deploy.md).

Every function takes what the Kubernetes API returned (the InferenceEndpointConfig, its pods and
events as JSON-shaped dicts, container logs as text) and returns a `Reading`; `judge` turns a
reading and how long each failure sign has lasted into a `Verdict`: keep waiting, serving, or
failed with one line that quotes the operator's or the engine's own words and says what to
change. The loop around it is `mlcc/deploy/waiter.py`; nothing here talks to the cluster.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from mlcc.deploy import draft_head, engine_log, verify
from mlcc.deploy.new_spec import observed_generation, pod_runs_spec
from mlcc.deploy.pods import last_event, live_pods, pod_ready, pod_signs, worker_name
from mlcc.deploy.registration import (
    REGISTRATION_GRACE_S,
    conditions_message,
    field_value,
    registration_signs,
    sagemaker_unregistered,
    standing,
    unlisted,
    unregistered_message,
)
from mlcc.deploy.snapshot import LogRequest, Sign, Snapshot, Target, one_line
from mlcc.deploy.verify import READY_STATE
from mlcc.facts.operator import DEPLOYMENT_OVERALL_STATE, ENDPOINT_STATE

FAILED_STATE = ENDPOINT_STATE.failed[0]
_FAILED_ADVICE = "fix the cause and run `pulumi up` again"


@dataclass(frozen=True)
class Reading:
    progress: str  # one line: state, ready replicas, the last event
    serving: bool
    signs: tuple[Sign, ...] = ()
    waiting_for: str = ""


@dataclass(frozen=True)
class Verdict:
    outcome: Literal["waiting", "serving", "failed"]
    message: str


# --- the custom resource -------------------------------------------------------------------


def _status(endpoint: Mapping[str, Any]) -> Mapping[str, Any]:
    status = endpoint.get("status")
    return status if isinstance(status, Mapping) else {}


def generation_wanted(target: Target, endpoint: Mapping[str, Any]) -> int | None:
    if target.generation is not None:
        return target.generation
    generation = (endpoint.get("metadata") or {}).get("generation")
    return int(generation) if isinstance(generation, int) else None


def generation_observed(target: Target, endpoint: Mapping[str, Any]) -> bool:
    """Whether the operator's status is about the generation just applied; a generation it did
    not write is no hold (unsourced: mlcc/deploy/new_spec.py), the pods' spec is the sign then."""
    wanted = generation_wanted(target, endpoint)
    observed = observed_generation(endpoint)
    if wanted is None or observed is None:
        return True
    return observed >= wanted


def desired_replicas(endpoint: Mapping[str, Any]) -> int:
    """spec.replicas, or autoscaling's floor when it is lower (KEDA may scale down to it); the
    CRD's default 1 when absent (a value of another type is absent, and noted by shapes)."""
    spec = endpoint.get("spec") or {}
    replicas = max(0, _int(spec.get("replicas"), 1))
    scaling = spec.get("autoScalingSpec")
    if isinstance(scaling, Mapping):
        return max(0, min(replicas, _int(scaling.get("minReplicaCount"), 1)))
    return replicas


def _int(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def operator_message(endpoint: Mapping[str, Any], now: float | None = None) -> str:
    """What the operator says about its state: the deployment status, else the conditions (the
    newest failing one, else the newest with a message; `now`: the reader's wall clock)."""
    status = _status(endpoint)
    deployment = status.get("deploymentStatus")
    deployment = deployment if isinstance(deployment, Mapping) else {}
    parts = [str(deployment[k]) for k in ("reason", "message") if deployment.get(k)]
    if not parts:
        return conditions_message(status, now)
    return one_line(": ".join(parts))


# --- the whole endpoint --------------------------------------------------------------------


def read(
    target: Target, snapshot: Snapshot, registration_grace_s: float = REGISTRATION_GRACE_S
) -> Reading:
    """What the round shows; a SageMaker endpoint still unregistered once everything else
    serves is a sign that may last `registration_grace_s`."""
    endpoint = snapshot.endpoint
    if endpoint is None:
        message = f"{target.where} not found (deleted, or another namespace or context?)"
        return Reading(message, False, (Sign("missing", message, immediate=True),), "it to exist")
    status = _status(endpoint)
    state = status.get("state")
    observed = generation_observed(target, endpoint)
    pods = live_pods(snapshot.pods)
    ready = [p for p in pods if pod_ready(p) and pod_runs_spec(p, endpoint)]
    desired = desired_replicas(endpoint)
    known = not any(
        n.startswith(("spec.replicas", "spec.autoScalingSpec")) for n in snapshot.malformed
    )
    progress = _progress(target, snapshot, state, observed, len(ready), desired if known else None)
    signs = pod_signs(target, snapshot)
    failed = _failed_state(status)
    if failed and observed:
        sign = _failed_sign(target, snapshot, failed, signs)
        unknown_generation = observed_generation(endpoint) is None  # maybe the old spec's
        signs.insert(0, replace(sign, immediate=False) if unknown_generation else sign)
    if not observed:
        return Reading(progress, False, tuple(signs), "the operator to observe the new spec")
    awaited = _state_awaited(status)
    if awaited:
        return Reading(progress, False, tuple(signs), awaited)
    unknown = _unknown(snapshot)
    if unknown:  # never concluded from what was not read or did not have its type
        return Reading(progress, False, tuple(signs), unknown)
    if len(ready) < desired:
        return Reading(progress, False, tuple(signs), f"{desired} ready replicas")
    failure, pending = registration_signs(endpoint.get("spec") or {}, status, snapshot.read_at)
    if failure:
        signs.insert(0, Sign("registration", f"{target.where}: {failure}", immediate=True))
        return Reading(progress, False, tuple(signs), "its registrations")
    served = _speculation(target, snapshot, ready, progress, signs)
    if not pending:
        return served
    shown = f"{served.progress}; waiting for {pending}"
    how = sagemaker_unregistered(endpoint.get("spec") or {}, status)
    if served.serving and how is not None:  # every other sign says it serves
        message = unregistered_message(how, registration_grace_s / 60)
        late = Sign("unregistered", f"{target.where}: {message}", grace_s=registration_grace_s)
        return Reading(shown, False, (*signs, late), pending)
    return Reading(shown, False, served.signs or tuple(signs), served.waiting_for or pending)


def _failed_state(status: Mapping[str, Any]) -> str | None:
    """`status.state`, else the Deployment's overall state, when it says the deploy failed."""
    for field in (ENDPOINT_STATE, DEPLOYMENT_OVERALL_STATE):
        value = field_value(status, field)
        if standing(field, value) == "failed":
            return str(value)
    return None


def _state_awaited(status: Mapping[str, Any]) -> str | None:
    """What the endpoint's own states still lack: `status.state` must be DeploymentComplete; the
    Deployment's overall state, once the operator writes it, too. An unlisted value is named."""
    state = field_value(status, ENDPOINT_STATE)
    match standing(ENDPOINT_STATE, state):
        case "ready":
            pass
        case "unlisted":
            return f"state {unlisted(ENDPOINT_STATE, state)}"
        case _:
            return f"state {READY_STATE} (now {one_line(str(state)) if state else 'none'})"
    overall = field_value(status, DEPLOYMENT_OVERALL_STATE)
    match standing(DEPLOYMENT_OVERALL_STATE, overall):
        case "ready" | "absent":
            return None
        case "unlisted":
            return f"the Deployment's state {unlisted(DEPLOYMENT_OVERALL_STATE, overall)}"
        case _:
            return f"the Deployment's state {READY_STATE} (now {overall})"


def _unknown(snapshot: Snapshot) -> str:
    """What the answers left unknown: fields of another type, pods or logs not read."""
    notes = [
        *(f"unknown: {n}" for n in snapshot.malformed),
        *(f"not read: {n}" for n in snapshot.unread),
    ]
    if not notes:
        return ""
    more = f" (and {len(notes) - 1} more)" if len(notes) > 1 else ""
    return f"answers that leave nothing unknown ({one_line(notes[0], 160)}{more})"


def _progress(
    target: Target,
    snapshot: Snapshot,
    state: object,
    observed: bool,
    ready: int,
    desired: int | None,
) -> str:
    assert snapshot.endpoint is not None
    shown = one_line(str(state)) if state else "no status yet"
    if not observed:
        shown += " (the operator has not yet observed the new spec)"
    names = [target.name, *(verify.pod_name(p) for p in snapshot.pods)]
    event = last_event(snapshot, names)
    tail = f"; last event: {event}" if event else ""
    notes = [
        *snapshot.malformed,
        *(f"not read: {n}" for n in (*snapshot.unread, *snapshot.events_unread)),
    ]
    if notes:
        more = f" (and {len(notes) - 1} more)" if len(notes) > 1 else ""
        tail += f"; unknown: {one_line(notes[0], 160)}{more}"
    wanted = "?" if desired is None else str(desired)
    return f"{target.where}: {shown}, {ready}/{wanted} replicas ready{tail}"


def _failed_sign(target: Target, snapshot: Snapshot, failed: str, pod_signs: list[Sign]) -> Sign:
    assert snapshot.endpoint is not None
    said = operator_message(snapshot.endpoint, snapshot.read_at) or "the operator gave no message"
    cause = f"; {pod_signs[0].message.removeprefix(target.where + ': ')}" if pod_signs else ""
    advice = "" if pod_signs else f"; {_FAILED_ADVICE}"
    return Sign(FAILED_STATE, f"{target.where} is {failed}: {said}{cause}{advice}", immediate=True)


def _speculation(
    target: Target,
    snapshot: Snapshot,
    ready: Sequence[Mapping[str, Any]],
    progress: str,
    signs: list[Sign],
) -> Reading:
    """Serving once every ready pod's engine has logged its config, as the stack asks (for a
    copied head: the copy's path, and the copy's marker naming the stack's URI when read)."""
    assert snapshot.endpoint is not None
    expected = target.expectation
    for pod in ready:
        name = verify.pod_name(pod)
        worker = worker_name(pod, snapshot.endpoint) or ""
        log = snapshot.logs.get(LogRequest(name, worker, previous=False))
        if log is None or not engine_log.engine_config_logged(log, expected.engine):
            return Reading(progress, False, tuple(signs), f"the engine config line of pod {name}")
        check = engine_log.check_engine_log(f"pod {name} engine log", log, expected)
        if not check.passed:
            message = f"{target.where}: pod {name}: {check.detail}; check hp:speculative*"
            return Reading(progress, False, (Sign(f"{name}/speculation", message, True),), "")
    copy_sign, copied = draft_head.wait_reading(target, snapshot, map(verify.pod_name, ready))
    if copy_sign is not None:
        return Reading(progress, False, (copy_sign,), "")
    speculation = "speculation on" if expected.speculation_on else "speculation off"
    return Reading(f"{progress}; {speculation}, as configured{copied}", True)


def judge(
    reading: Reading, first_seen: Mapping[str, float], now: float, grace_s: float
) -> tuple[Verdict, dict[str, float]]:
    """Serving, failed (an immediate sign, or one that lasted `grace_s`), or keep waiting.

    Returns the first-seen time of every sign present now; a sign that went away is forgotten.
    """
    if reading.serving:
        return Verdict("serving", reading.progress), {}
    seen = {sign.key: first_seen.get(sign.key, now) for sign in reading.signs}
    for sign in reading.signs:
        limit = grace_s if sign.grace_s is None else sign.grace_s
        if sign.immediate or now - seen[sign.key] >= limit:
            return Verdict("failed", sign.message), seen
    return Verdict("waiting", reading.progress), seen


def timed_out(
    target: Target, reading: Reading | None, minutes: float, failing: str | None = None
) -> str:
    """The failure at the deadline: the state reached so far and what was still missing, and
    why the API's last answers could not be read (`failing`), when they could not."""
    limit = f"{minutes:g} minutes (hp:deployTimeoutMinutes)"
    if reading is None:
        why = (
            f"the Kubernetes API kept failing: {failing}"
            if failing
            else "the cluster never answered"
        )
        return f"{target.where} did not serve within {limit}: {why}"
    missing = f"; still waiting for {reading.waiting_for}" if reading.waiting_for else ""
    signs = [s for s in reading.signs if s.grace_s is None]  # not those of a longer grace
    seen = f"; seen: {signs[0].message}" if signs else ""
    last = f"; then the Kubernetes API failed: {failing}" if failing else ""
    return f"{target.where} did not serve within {limit}: {reading.progress}{missing}{seen}{last}"
