"""Does a running endpoint really decode speculatively? The decisions of `mlcc verify`.

Pure: every function takes what the Kubernetes API returned (the InferenceEndpointConfig and
pods as JSON-shaped dicts, container logs as text) and returns `Check`s (mlcc/deploy/check.py).
The CLI in `mlcc/cli/verify/command.py` fetches, calls `verify_endpoint` and prints the lines.
What the stack config expects is `mlcc/deploy/expectation.py`; what "proof" means per engine, read
from its log, is `mlcc/deploy/engine_log.py` (docs/verify.md).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mlcc import engine_contract as contract
from mlcc.deploy.check import Check
from mlcc.deploy.engine_log import check_acceptance, check_engine_log
from mlcc.deploy.expectation import Expectation, is_speculative_variable
from mlcc.facts.operator import ENDPOINT_STATE, KIND
from mlcc.serving.engines import ENV_PREFIXES

READY_STATE = ENDPOINT_STATE.ready[0]
ALGORITHM_ENV = contract.ALGORITHM_ENV


# --- the InferenceEndpointConfig ---------------------------------------------------------------


def check_endpoint_state(endpoint: Mapping[str, Any] | None, namespace: str, name: str) -> Check:
    where = f"{KIND} {namespace}/{name}"
    if endpoint is None:
        return Check("endpoint", False, f"{where} not found (was `pulumi up` run for this stack?)")
    state = (endpoint.get("status") or {}).get("state")
    if state == READY_STATE:
        return Check("endpoint", True, f"{where} is {state}")
    reason = _condition_message(endpoint)
    return Check("endpoint", False, f"{where} is {state or 'without a status yet'}{reason}")


def _condition_message(endpoint: Mapping[str, Any]) -> str:
    """The message of the first failing condition, which usually says why."""
    for condition in (endpoint.get("status") or {}).get("conditions") or []:
        if str(condition.get("status")) == "False" and condition.get("message"):
            return f" ({condition['message']})"
    return ""


def endpoint_environment(endpoint: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    worker = (endpoint.get("spec") or {}).get("worker") or {}
    return list(worker.get("environmentVariables") or [])


def check_env(check_name: str, env: Sequence[Mapping[str, Any]], expected: Expectation) -> Check:
    problems = env_problems(env, expected)
    if problems:
        return Check(check_name, False, "; ".join(problems))
    if not expected.speculation_on:
        return Check(check_name, True, "no speculative variables, as configured (speculation off)")
    names = ", ".join(sorted(expected.env))
    return Check(check_name, True, f"{names} as configured ({expected.algorithm})")


def env_problems(env: Sequence[Mapping[str, Any]], expected: Expectation) -> list[str]:
    """Differences between a container's speculative variables and the expected ones."""
    actual = {
        str(item.get("name")): item.get("value")
        for item in env
        if is_speculative_variable(str(item.get("name")), expected.engine)
    }
    problems = []
    for name, want in sorted(expected.env.items()):
        if name not in actual:
            problems.append(f"{name} is missing (expected {want})")
        elif not same_env_value(actual[name], want):
            got = "set from a reference" if actual[name] is None else f"is {actual[name]}"
            problems.append(f"{name} {got}, expected {want}")
    for name in sorted(set(actual) - set(expected.env)):
        why = "the stack config does not ask for it"
        if not expected.speculation_on:
            why = "speculation is off in the stack config"
        problems.append(f"{name}={actual[name]} is set but {why}")
    return problems


def same_env_value(actual: object, expected: str) -> bool:
    """Equal strings, or equal JSON objects (key order and spacing do not matter)."""
    if actual == expected:
        return True
    if not isinstance(actual, str):
        return False
    try:
        actual_json, expected_json = json.loads(actual), json.loads(expected)
    except json.JSONDecodeError:
        return False
    return isinstance(expected_json, dict) and actual_json == expected_json


# --- pods --------------------------------------------------------------------------------------


def pod_name(pod: Mapping[str, Any]) -> str:
    return str((pod.get("metadata") or {}).get("name", "?"))


def worker_container(pod: Mapping[str, Any], worker_image: str | None) -> Mapping[str, Any] | None:
    """The model container: the one running the worker image, else the one with SM_* env.

    The operator adds sidecars (nginx, metrics) next to it, so "the first container" is wrong.
    """
    containers = list((pod.get("spec") or {}).get("containers") or [])
    for container in containers:
        if worker_image and container.get("image") == worker_image:
            return dict(container)
    for container in containers:
        names = [str(e.get("name", "")) for e in container.get("env") or []]
        if any(n.startswith(tuple(ENV_PREFIXES.values())) or n == ALGORITHM_ENV for n in names):
            return dict(container)
    return dict(containers[0]) if containers else None


def pod_phase(pod: Mapping[str, Any]) -> str:
    return str((pod.get("status") or {}).get("phase") or "Unknown")


def check_pods_found(pods: Sequence[Mapping[str, Any]], how: str) -> Check:
    if not pods:
        return Check("pods", False, f"no pods selected by {how}; is the deployment scaled to 0?")
    names = ", ".join(f"{pod_name(p)} ({pod_phase(p)})" for p in pods)
    return Check("pods", True, f"{len(pods)} selected by {how}: {names}")


# --- the whole endpoint ------------------------------------------------------------------------


@dataclass(frozen=True)
class Observed:
    """What the cluster returned for one endpoint."""

    namespace: str
    name: str
    endpoint: Mapping[str, Any] | None
    pods: Sequence[Mapping[str, Any]] = ()
    pod_selection: str = ""
    logs: Mapping[str, str] = field(default_factory=dict)  # pod -> worker container log
    log_errors: Mapping[str, str] = field(default_factory=dict)  # pod -> why it is missing
    # pod -> how it ended and what replaced it: history, not checked (mlcc/deploy/pods.py)
    replaced: Mapping[str, str] = field(default_factory=dict)


def verify_endpoint(observed: Observed, expected: Expectation) -> list[Check]:
    checks = [check_endpoint_state(observed.endpoint, observed.namespace, observed.name)]
    if observed.endpoint is None:
        return checks
    checks.append(check_env("endpoint env", endpoint_environment(observed.endpoint), expected))
    checks.append(check_pods_found(observed.pods, observed.pod_selection))
    worker_image = ((observed.endpoint.get("spec") or {}).get("worker") or {}).get("image")
    for pod in observed.pods:
        replaced = observed.replaced.get(pod_name(pod))
        if replaced is not None:
            checks.append(Check(f"pod {pod_name(pod)}", True, replaced, skipped=True))
            continue
        checks.extend(_pod_checks(pod, worker_image, observed, expected))
    return checks


def _pod_checks(
    pod: Mapping[str, Any], worker_image: str | None, observed: Observed, expected: Expectation
) -> list[Check]:
    name = pod_name(pod)
    container = worker_container(pod, worker_image)
    if container is None:
        return [Check(f"pod {name}", False, "has no containers")]
    env_check = check_env(f"pod {name} env", list(container.get("env") or []), expected)
    if not env_check.passed and container.get("envFrom"):
        note = "; the container also reads envFrom sources, which verify does not resolve"
        env_check = Check(env_check.name, False, env_check.detail + note)
    checks = [env_check]
    log = observed.logs.get(name)
    if log is None:
        why = observed.log_errors.get(name, "it was not fetched")
        checks.append(Check(f"pod {name} engine log", False, f"the log could not be read: {why}"))
        return checks
    checks.append(check_engine_log(f"pod {name} engine log", log, expected))
    acceptance = check_acceptance(f"pod {name} acceptance", log, expected.engine)
    if acceptance is not None:
        checks.append(acceptance)
    return checks
