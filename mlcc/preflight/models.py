"""The models part of preflight: every endpoint's target and draft, fetched in parallel and
checked against the engines' rules and the GPUs (docs/preflight.md)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from mlcc.config.aws import instances
from mlcc.config.deploy_wait import DeployWait
from mlcc.config.endpoints import EndpointConfig
from mlcc.config.stack import StackConfig
from mlcc.preflight import memory, rules, s3_head, speculators, startup, training_part
from mlcc.preflight.account import fetch as account_fetch
from mlcc.preflight.account.facts import Unreached
from mlcc.preflight.bounded.hub_http import last_attempt
from mlcc.preflight.facts import ModelFacts
from mlcc.preflight.gpus import GpuSpec, gpu_spec
from mlcc.preflight.hub import (
    Fetched,
    FetchResult,
    ModelRef,
    Refused,
    Unreachable,
    fetch,
    install_deadline_client,
)
from mlcc.preflight.outcome import Outcome, Unchecked, combine
from mlcc.serving import s3_draft
from mlcc.serving.speculative import Problem
from mlcc.stackfiles.resolve import SECRET_PLACEHOLDER

VLLM_DEFAULT_CONTEXT = 2048  # _get_and_verify_max_len, when the config names no length
_CONTEXT_FLAGS = ("max-model-len", "context-length")


@dataclass(frozen=True)
class EndpointModels:
    endpoint: EndpointConfig
    target: ModelRef
    draft: ModelRef | None


def models_part(
    config: StackConfig,
    deadline_seconds: float,
    gpus: Callable[[str], GpuSpec | None] = gpu_spec,
) -> Outcome:
    """Outcome of the models of every endpoint (baseline twins share their endpoint's models).
    `gpus` gives an instance type's GPU: the vendored table, or the account's figures."""
    token = _token(config)
    endpoints = [_refs(e, token) for e in config.endpoints]
    refs = {ref for e in endpoints for ref in (e.target, e.draft) if ref is not None}
    clients_of = shared_clients(config, deadline_seconds)
    training = training_part.start(config, clients_of)  # its S3 read beside the Hub's
    results = fetch_all(refs, deadline_seconds, s3_reader(config, deadline_seconds, clients_of))
    deploy_seconds = config.deploy_wait.timeout_seconds
    outcome = combine(
        check_endpoint(e, results, gpus(e.endpoint.instance_type), deploy_seconds)
        for e in endpoints
    )
    if training is None or not endpoints:
        return outcome
    # hp:draftTraining's target is the first endpoint's hp:model: its fetch is shared
    found = training(results[endpoints[0].target], gpus, deadline_seconds + 2)
    return combine([outcome, found])


def _token(config: StackConfig) -> str | None:
    """hp:hfToken; None (the library's own: HF_TOKEN, a stored login) when unset or when
    `mlcc plan` could not decrypt it."""
    value = config.hf_token.value if config.hf_token else None
    return None if value in (None, SECRET_PLACEHOLDER) else value


def _refs(endpoint: EndpointConfig, token: str | None) -> EndpointModels:
    target = ModelRef(endpoint.model, endpoint.model_revision, token)
    spec = endpoint.speculative
    draft = None
    if spec is not None and spec.definition.needs_draft and spec.draft_model:
        draft = ModelRef(spec.draft_model, spec.draft_revision or "main", token)
    return EndpointModels(endpoint, target, draft)


def shared_clients(
    config: StackConfig, seconds: float
) -> Callable[[], account_fetch.Clients | Unreached]:
    """Preflight's AWS clients of the stack's profile and region, made on first use, once."""
    made: list[account_fetch.Clients | Unreached] = []
    lock = threading.Lock()

    def clients() -> account_fetch.Clients | Unreached:
        with lock:
            if not made:
                made.append(account_fetch.clients(config.region, config.aws_profile, seconds))
            return made[0]

    return clients


def s3_reader(
    config: StackConfig,
    seconds: float,
    clients_of: Callable[[], account_fetch.Clients | Unreached] | None = None,
) -> Callable[[str], FetchResult]:
    """How an s3:// draft is read: with preflight's AWS clients (`clients_of`, shared with the
    other S3 reads); in Kubernetes-only mode (no AWS calls) it is not read."""
    made = clients_of or shared_clients(config, seconds)

    def read(uri: str) -> FetchResult:
        if config.infrastructure.calls_no_aws:
            return Unreachable(
                "the stack makes no AWS calls (hp:kubeconfig mode), so S3 is not read"
            )
        clients = made()
        if isinstance(clients, Unreached):
            return Unreachable(f"{clients.source}: {clients.why}")
        return s3_head.fetch(uri, clients)

    return read


def fetch_all(
    refs: Iterable[ModelRef],
    seconds: float,
    from_s3: Callable[[str], FetchResult] | None = None,
) -> dict[ModelRef, FetchResult]:
    """Each fetch in its own daemon thread (a stuck one cannot hold the program), all at once;
    an s3:// draft through `from_s3`."""
    install_deadline_client()  # before the threads: replacing the client closes the old one
    results: dict[ModelRef, FetchResult] = {}
    threads = []
    for ref in refs:

        def work(ref: ModelRef = ref) -> None:
            if s3_draft.is_s3(ref.model):
                results[ref] = from_s3(ref.model) if from_s3 else Unreachable("S3 is not read here")
            else:
                results[ref] = fetch(ref, seconds)

        thread = threading.Thread(target=work, daemon=True, name=f"preflight {ref.model}")
        thread.start()
        threads.append((ref, thread))
    end = time.monotonic() + seconds + 2  # the transport stops each request at the deadline
    for ref, thread in threads:
        thread.join(max(0.0, end - time.monotonic()))
        if ref not in results:
            reason = last_attempt(thread.ident)
            last = f"; last attempt: {reason}" if reason else ""
            results[ref] = Unreachable(f"the Hub did not answer within {seconds:.0f} s{last}")
    return results


def check_endpoint(
    models: EndpointModels,
    results: dict[ModelRef, FetchResult],
    gpu: GpuSpec | None,
    deploy_seconds: int = DeployWait().timeout_seconds,
) -> Outcome:
    endpoint = models.endpoint
    errors: list[Problem] = []
    warnings: list[Problem] = []
    unchecked: list[Unchecked] = []
    target = _facts(endpoint, "model", results[models.target], errors, unchecked, warnings)
    draft = None
    if models.draft is not None:
        draft = _facts(
            endpoint, "speculativeModel", results[models.draft], errors, unchecked, warnings
        )
    read = frozenset(
        endpoint.key(key)
        for key, facts in (("model", target), ("speculativeModel", draft))
        if facts is not None
    )
    if target is None:
        return Outcome(tuple(errors), tuple(warnings), tuple(unchecked), read=read)
    if target.speculators is not None:  # a draft as the target: nothing else fits it
        found = _speculators_target(target.speculators)
        errors.append(_problem(endpoint, found.key, found.message))
        return Outcome(tuple(errors), tuple(warnings), tuple(unchecked), read=read)
    findings = _model_findings(endpoint, target, draft, gpu)
    errors += [_problem(endpoint, f.key, f.message) for f in findings if f.error]
    warnings += [_problem(endpoint, f.key, f.message) for f in findings if not f.error]
    if (slow := startup.startup_problem(endpoint, target, draft, deploy_seconds)) is not None:
        warnings.append(_problem(endpoint, *slow))
    lines: tuple[str, ...] = ()
    if gpu is None:
        unchecked.append(
            Unchecked(
                endpoint.key(instance_key(endpoint)),
                "the GPU memory fit and compute capability",
                f"{endpoint.instance_type} is not in the GPU table",
            )
        )
    elif models.draft is not None and draft is None:
        pass  # the draft's problem is already reported
    elif target.weight_bytes is None or (draft is not None and draft.weight_bytes is None):
        unchecked.append(
            Unchecked(endpoint.key("model"), "the GPU memory fit", "the weight size is not known")
        )
    else:
        fit = _fit(endpoint, target, draft, gpu)
        memory_problem = _memory_problem(endpoint, target, gpu, fit)
        if memory_problem is not None:
            (errors if fit.margin < 0 else warnings).append(memory_problem)
        lines = (fit.line(),)
    return Outcome(tuple(errors), tuple(warnings), tuple(unchecked), {endpoint.name: lines}, read)


def _facts(
    endpoint: EndpointConfig,
    key: str,
    result: FetchResult,
    errors: list[Problem],
    unchecked: list[Unchecked],
    warnings: list[Problem],
) -> ModelFacts | None:
    if isinstance(result, Fetched):
        if not endpoint.baseline_of:  # a twin's models are its endpoint's: said once
            warnings += [_problem(endpoint, key, note) for note in result.notes]
        return result.facts
    if isinstance(result, Refused):
        errors.append(_problem(endpoint, key, result.message))
    elif not endpoint.baseline_of:  # a twin's models are its endpoint's: said once
        what = (
            "the target's fit (context, tensor parallelism, precision, GPU memory)"
            if key == "model"
            else "the draft's fit to the target and the GPU memory fit"
        )
        unchecked.append(Unchecked(endpoint.key(key), what, result.why))
    return None


def _model_findings(
    endpoint: EndpointConfig, target: ModelFacts, draft: ModelFacts | None, gpu: GpuSpec | None
) -> list[rules.Finding]:
    args = dict(endpoint.engine_args)
    version = endpoint.engine_release.version
    tp = endpoint.gpu_count
    tp_key = (
        "gpuCount" if tp != instances.gpu_count(endpoint.instance_type) else instance_key(endpoint)
    )
    findings = rules.tensor_parallel(target, tp, tp_key)
    findings += rules.context(
        target, requested_context(endpoint), context_key(endpoint), endpoint.engine
    )
    spec = endpoint.speculative
    if spec is not None:
        own = _speculators_findings(endpoint, draft)
        findings += own
        # a draft refused for its format or algorithm is not fitted as another kind of head
        fitted = None if any(f.error and f.key != "speculativeNumTokens" for f in own) else draft
        findings += rules.draft_fit(endpoint.engine, spec.algorithm, target, fitted, version)
        if draft is not None and spec.algorithm == "draft-model":
            findings += rules.tensor_parallel(draft, tp, "speculativeModel")
    # every type of an hp:instanceTypes fallback list must run the precision; the memory is
    # the same for all of them (the config refuses a list that differs in it)
    for instance_type in endpoint.operator.instance_types[1:]:
        fallback = gpu_spec(instance_type)
        if fallback is not None and fallback != gpu:
            findings += rules.precision(
                endpoint.engine, target, fallback, args, "instanceTypes", version
            )
    if gpu is not None:
        findings += rules.precision(endpoint.engine, target, gpu, args, "model", version)
    return _unique(findings)


def _speculators_target(draft: speculators.SpeculatorsDraft) -> rules.Finding:
    verifier = f"its verifier {draft.verifier}" if draft.verifier else "the target it was made for"
    return rules.Finding(
        "model",
        "is a speculators-format draft (speculators_config in its config.json), not a target "
        f"model; set hp:model to {verifier}, hp:speculativeModel to this draft and "
        f"hp:speculativeAlgorithm {draft.method}",
    )


def _speculators_findings(
    endpoint: EndpointConfig, draft: ModelFacts | None
) -> list[rules.Finding]:
    spec = endpoint.speculative
    if spec is None or draft is None or draft.speculators is None:
        return []
    stack = speculators.Stack(
        endpoint.engine,
        endpoint.engine_release.version,
        spec.algorithm,
        spec.num_tokens,
        "speculativeNumTokens" in endpoint.set_keys,
    )
    return [
        rules.Finding(key, message, error)
        for key, message, error in speculators.findings(draft.speculators, stack)
    ]


def _unique(findings: list[rules.Finding]) -> list[rules.Finding]:
    return list(dict.fromkeys(findings))


def _problem(endpoint: EndpointConfig, key: str, message: str) -> Problem:
    return Problem(endpoint.key(key), f"{message}{endpoint.inherited_note(key)}")


def instance_key(endpoint: EndpointConfig) -> str:
    """hp:instanceType, or the first of hp:instanceTypes when the endpoint has a list."""
    return "instanceTypes[0]" if endpoint.operator.instance_types else "instanceType"


def requested_context(endpoint: EndpointConfig) -> int | None:
    """hp:maxModelLen (or the engine's own flag in hp:engineArgs)."""
    for flag, value in endpoint.engine_args:
        if flag in _CONTEXT_FLAGS and value.strip().isdigit():
            return int(value)
    return None


def context_key(endpoint: EndpointConfig) -> str:
    """Where the context length was set: hp:maxModelLen, else the engine flag in hp:engineArgs."""
    if "maxModelLen" in endpoint.set_keys:
        return "maxModelLen"
    flag = next((f for f, _ in endpoint.engine_args if f in _CONTEXT_FLAGS), None)
    return f"engineArgs.{flag}" if flag else "maxModelLen"


def _fit(
    endpoint: EndpointConfig, target: ModelFacts, draft: ModelFacts | None, gpu: GpuSpec
) -> memory.Fit:
    spec = endpoint.speculative
    mtp_layers = target.mtp_layers if spec is not None and spec.algorithm == "mtp" else 0
    context = requested_context(endpoint) or target.max_context or VLLM_DEFAULT_CONTEXT
    return memory.fit(
        endpoint.engine,
        target,
        draft,
        gpu,
        endpoint.gpu_count,
        context,
        dict(endpoint.engine_args),
        mtp_layers,
        endpoint.engine_release.version,
    )


def _memory_problem(
    endpoint: EndpointConfig, target: ModelFacts, gpu: GpuSpec, fit: memory.Fit
) -> Problem | None:
    if fit.margin >= memory.WARN_MARGIN:
        return None
    gib = memory.GIB
    figures = (
        f"needs {fit.needed / gib:.1f} GiB per GPU, {endpoint.instance_type} has "
        f"{fit.usable / gib:.1f} GiB usable ({gpu.name}, "
        f"{fit.usable / gpu.memory_bytes:.2f} of {gpu.memory_bytes / gib:.1f} GiB): weights "
        f"{fit.target_weights / gib:.1f} + {fit.draft_weights / gib:.1f} GiB, KV cache of one "
        f"{fit.context}-token sequence {fit.kv_per_token * fit.context / gib:.1f} GiB"
    )
    weights_fit = fit.target_weights + fit.draft_weights < fit.usable
    if fit.margin >= 0:
        return _problem(
            endpoint,
            instance_key(endpoint),
            f"{figures}: under {memory.WARN_MARGIN:.0%} to spare, so activations may not fit",
        )
    if weights_fit and requested_context(endpoint) is None:
        return _problem(
            endpoint,
            "maxModelLen",
            f"is not set, so the engine takes the model's full context of {fit.context} "
            f"tokens: {figures}; set hp:maxModelLen to at most {fit.kv_room_tokens}",
        )
    if weights_fit:
        return _problem(
            endpoint,
            context_key(endpoint),
            f"{figures}; lower it to at most {fit.kv_room_tokens} or use a larger instance type",
        )
    return _problem(
        endpoint,
        instance_key(endpoint),
        f"{figures}; the weights alone do not fit: use an instance type with more GPU memory",
    )
