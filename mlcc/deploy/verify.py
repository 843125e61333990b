"""Does a running endpoint really decode speculatively? The decisions of `mlcc verify`.

Pure: every function takes what the Kubernetes API returned (the InferenceEndpointConfig and
pods as JSON-shaped dicts, container logs as text) and returns `Check`s. The CLI in
`mlcc/cli/verify/command.py` fetches, calls `verify_endpoint` and prints the lines.

What "proof" means per engine (docs/verify.md):
- vLLM's engine core logs its config: `speculative_config=SpeculativeConfig(method='eagle3', ...`
  or `speculative_config=None` when speculation is off;
- SGLang logs `server_args=` with the resolved `speculative_algorithm` (a dict in 0.5.23,
  `ServerArgs(...)` before);
- acceptance metrics, once requests were served: vLLM `SpecDecoding metrics: Mean acceptance
  length: X`, SGLang `accept len: X`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mlcc import engine_contract as contract
from mlcc.config.endpoints import EndpointConfig
from mlcc.facts.operator import ENDPOINT_STATE, KIND
from mlcc.serving.engines import ENV_PREFIXES, Engine
from mlcc.serving.speculative import speculative_env

READY_STATE = ENDPOINT_STATE.ready[0]
ALGORITHM_ENV = contract.ALGORITHM_ENV

_VLLM_ENGINE_CONFIG = re.compile(
    r"speculative_config=(?:(?P<none>None)|SpeculativeConfig\((?P<fields>[^)]*)\))"
)
_VLLM_FIELD = re.compile(r"(?P<key>\w+)=(?:'(?P<quoted>[^']*)'|(?P<bare>[^,\s)]+))")
_SGLANG_SERVER_ARGS = re.compile(r"server_args=")
# `'speculative_algorithm': 'EAGLE3'` (0.5.23 dict) or `speculative_algorithm='EAGLE3'` (older).
_SGLANG_ALGORITHM = re.compile(
    r"""['"]?speculative_algorithm['"]?\s*[:=]\s*(?:None|'(?P<single>[^']*)'|"(?P<double>[^"]*)")"""
)
_SGLANG_TRIPLE = re.compile(
    r"""['"]?speculative_(?P<key>num_steps|eagle_topk|num_draft_tokens)['"]?\s*[:=]\s*(?P<value>None|\d+)"""
)
_VLLM_ACCEPTANCE = re.compile(
    r"SpecDecoding metrics:.*?Mean acceptance length: (?P<length>[\d.]+)"
    r"(?:.*?Avg Draft acceptance rate: (?P<rate>[\d.]+%))?"
)
_SGLANG_ACCEPTANCE = re.compile(
    r"accept len: (?P<length>[\d.]+)(?:, accept rate: (?P<rate>[\d.]+))?"
)


@dataclass(frozen=True)
class Check:
    name: str
    passed: bool
    detail: str
    skipped: bool = False  # not checked, and rightly so (a replaced pod): passes

    @property
    def line(self) -> str:
        said = "SKIP" if self.skipped else "PASS" if self.passed else "FAIL"
        return f"{said} {self.name}: {self.detail}"


@dataclass(frozen=True)
class Expectation:
    """What the stack config says the selected engine must see and run."""

    engine: Engine
    env: Mapping[str, str]
    engine_algorithm: str | None  # the vLLM method or SGLang algorithm; None = speculation off
    algorithm: str | None  # the user-facing hp:speculativeAlgorithm

    @property
    def speculation_on(self) -> bool:
        return self.engine_algorithm is not None


def is_speculative_variable(name: str, engine: Engine) -> bool:
    """The variables of the contract that the selected engine (or a human) reads."""
    return contract.is_speculative_variable(engine, name)


def expectation_for(endpoint: EndpointConfig) -> Expectation:
    """The same env the endpoint component renders, narrowed to the endpoint's engine."""
    engine, spec = endpoint.engine, endpoint.speculative
    env = speculative_env(spec, {engine: endpoint.engine_release})
    selected = {k: v for k, v in env.items() if is_speculative_variable(k, engine)}
    return Expectation(
        engine=engine,
        env=selected,
        engine_algorithm=spec.definition.engine_algorithm(engine) if spec else None,
        algorithm=spec.algorithm if spec else None,
    )


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


# --- engine logs -------------------------------------------------------------------------------


def check_engine_log(check_name: str, log: str, expected: Expectation) -> Check:
    if expected.engine is Engine.VLLM:
        return _check_vllm_log(check_name, log, expected)
    return _check_sglang_log(check_name, log, expected)


def engine_config_logged(log: str, engine: Engine) -> bool:
    """Whether the engine has logged the resolved config that `check_engine_log` reads."""
    if engine is Engine.VLLM:
        return _VLLM_ENGINE_CONFIG.search(log) is not None
    lines = log.splitlines()
    return any(_SGLANG_SERVER_ARGS.search(x) and _SGLANG_ALGORITHM.search(x) for x in lines)


def _last_match(pattern: re.Pattern[str], lines: Iterable[str]) -> tuple[str, re.Match[str]] | None:
    """The last line with a match, and that match (an engine restarted in-process logs twice)."""
    found = None
    for line in lines:
        for match in pattern.finditer(line):
            found = (line, match)
    return found


def _check_vllm_log(check_name: str, log: str, expected: Expectation) -> Check:
    found = _last_match(_VLLM_ENGINE_CONFIG, log.splitlines())
    if found is None:
        return Check(
            check_name,
            False,
            "no vLLM engine config line (`speculative_config=`) in the log; the engine has not "
            "started yet, or the log was rotated",
        )
    match = found[1]
    if match["none"]:
        return _off_in_log(check_name, expected, "speculative_config=None")
    fields = {
        m["key"]: m["quoted"] if m["quoted"] is not None else m["bare"]
        for m in _VLLM_FIELD.finditer(match["fields"])
    }
    method = fields.get("method")
    shown = ", ".join(
        f"{k}={fields[k]}" for k in ("method", "model", "num_spec_tokens") if k in fields
    )
    return _on_in_log(check_name, expected, method, method == expected.engine_algorithm, shown)


def _check_sglang_log(check_name: str, log: str, expected: Expectation) -> Check:
    args_lines = [line for line in log.splitlines() if _SGLANG_SERVER_ARGS.search(line)]
    found = _last_match(_SGLANG_ALGORITHM, args_lines)
    if found is None:
        return Check(
            check_name,
            False,
            "no SGLang `server_args=` line with speculative_algorithm in the log; the server has "
            "not started yet, or the log was rotated",
        )
    line, match = found
    algorithm = match["single"] if match["single"] is not None else match["double"]
    if algorithm is None or algorithm.upper() == "NONE":
        return _off_in_log(check_name, expected, "speculative_algorithm=None")
    triple = {m["key"]: m["value"] for m in _SGLANG_TRIPLE.finditer(line)}
    shown = ", ".join(
        [f"speculative_algorithm={algorithm}", *(f"{k}={v}" for k, v in triple.items())]
    )
    want = (expected.engine_algorithm or "").upper()
    accepted = contract.sglang_logged_names(want)
    return _on_in_log(check_name, expected, algorithm, algorithm.upper() in accepted, shown)


def _off_in_log(check_name: str, expected: Expectation, evidence: str) -> Check:
    if not expected.speculation_on:
        return Check(check_name, True, f"{evidence}: speculation is off, as configured")
    return Check(
        check_name,
        False,
        f"{evidence}: speculation is OFF although the stack asks for {expected.algorithm} "
        f"({expected.engine_algorithm}); the engine did not receive its speculative settings",
    )


def _on_in_log(
    check_name: str, expected: Expectation, running: str | None, matches: bool, shown: str
) -> Check:
    if not expected.speculation_on:
        return Check(
            check_name,
            False,
            f"speculation is ON ({shown}) although hp:speculativeAlgorithm is not set",
        )
    if not matches:
        return Check(
            check_name,
            False,
            f"the engine runs {running}, expected {expected.engine_algorithm} "
            f"({expected.algorithm}): {shown}",
        )
    return Check(check_name, True, f"speculation is on: {shown}")


def check_acceptance(check_name: str, log: str, engine: Engine) -> Check | None:
    """The acceptance metrics, when requests have been served; None before any.

    Fails only when every report shows an acceptance length of 1.0 or less: drafts are never
    accepted, e.g. an EAGLE-3 head run as EAGLE.
    """
    pattern = _VLLM_ACCEPTANCE if engine is Engine.VLLM else _SGLANG_ACCEPTANCE
    reports = [m for line in log.splitlines() for m in pattern.finditer(line)]
    if not reports:
        return None
    last = reports[-1]
    rate = f", acceptance rate {last['rate']}" if last["rate"] else ""
    summary = f"mean acceptance length {last['length']}{rate} (last of {len(reports)} reports)"
    if all(float(m["length"]) <= 1.0 for m in reports):
        return Check(check_name, False, f"{summary}: no draft token was ever accepted")
    return Check(check_name, True, summary)


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


def all_passed(checks: Iterable[Check]) -> bool:
    return all(check.passed for check in checks)
