"""Which operator features cannot work with an endpoint's engine, speculation or operator.

Refused (`reader.fail`) or warned (`reader.warn`) at preview, naming the key; each rule cites
where it comes from (docs/operator-features.md has the table). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from mlcc import engine_contract
from mlcc.config.aws import instances
from mlcc.config.aws import rules as aws_rules
from mlcc.config.operator import capture
from mlcc.config.operator.features import OperatorSettings
from mlcc.config.reader import Reader
from mlcc.facts.operator import KV_CACHE_CONNECTOR_FLAG, OPERATOR_PROBE_TIMEOUT_SECONDS
from mlcc.serving.engines import Engine
from mlcc.serving.speculative import SpeculativeSpec

# The operator's init container is named prefetch-<name>-inf and must fit Kubernetes' 63
# characters (aws-samples/llm_model_hub hyperpod_docs/ISSUES_FIXED.md, issue 3).
INIT_CONTAINER_NAME_ROOM = 63 - len("prefetch-") - len("-inf")
CHAT_PATH = "v1/chat/completions"
# The first operator version with each field, from the schema history of the CRD files in
# aws/sagemaker-hyperpod-cli (docs/operator-features.md, "hp:operatorVersion").
MINIMUM_OPERATOR: dict[str, tuple[int, int]] = {
    "requestLimits": (3, 1),
    "tls": (3, 1),
    "dnsHostedZoneId": (3, 1),
    "dataCapture": (3, 1),
    "capture": (3, 1),
    "pdSpec": (3, 2),
    "modelCache": (3, 3),
    "loadBalancer.idleTimeoutSeconds": (3, 3),
}
# The Hugging Face model source every endpoint uses came with operator 3.1 (PR #416).
MINIMUM_FOR_ANY_ENDPOINT = (3, 1)
# aws/sagemaker-hyperpod-cli#431 (open): operator 3.2.0 drops l2CacheBackend redis and forces its
# own sagemaker-hyperpod connector; no release up to 3.7 says it is fixed.
LAST_OPERATOR_IGNORING_REDIS = (3, 7)
# vLLM 0.27.1 vllm/config/vllm.py VllmConfig._verify_kv_transfer_compat: a KV connector with
# this allocator setting is refused at start-up unless the cumem allocator is on (sleep mode
# turns it on, vllm/config/model.py).
EXPANDABLE_SEGMENTS = "expandable_segments:True"
CUMEM_FLAGS = ("enable-cumem-allocator", "enable-sleep-mode")
# vLLM 0.27.1 flags that configure a KV connector (vllm/engine/arg_utils.py, vllm/config/vllm.py).
VLLM_CONNECTOR_FLAGS = ("kv-offloading-size", "kv-transfer-config")
# hp:kvCache has the operator configure vLLM's KV connector itself (KV_CACHE_CONNECTOR_FLAG, an
# assumed fact with what was seen: docs/operator-facts.md). vLLM parses --kv-transfer-config as
# one value (argparse keeps the last), and --kv-offloading-size replaces the connector of a given
# config (vllm/config/vllm.py VllmConfig._post_init_kv_transfer_config): either way one of the
# two connectors is silently lost.
OPERATOR_CONNECTOR_FLAGS = {
    KV_CACHE_CONNECTOR_FLAG: (
        "it adds its own --kv-transfer-config and vLLM keeps only one of the two"
    ),
    "kv-offloading-size": "vLLM replaces the operator's connector with its own offloading one",
}
# SGLang 0.5.17 flags that offload the KV cache (hierarchical cache, LMCache).
SGLANG_OFFLOAD_FLAGS = ("enable-hierarchical-cache", "enable-lmcache")
SGLANG_OFFLOAD_REPORTS = (
    "sgl-project/sglang#28771 (EAGLE acceptance length decays over hours with HiCache), "
    "sgl-project/sglang#30393 (lower acceptance with HiCache replay)"
)
SPECULATIVE_OFFLOAD_REPORTS = (
    "LMCache/LMCache#3388 (EAGLE-3 with the LMCache connector: failed retrievals and "
    "degenerate output), vllm-project/vllm#46971 and vllm-project/vllm#52735 (KV offload "
    "stores but never serves prefix hits with EAGLE/MTP), vllm-project/vllm#48919 (offload "
    "with speculation fails to start at block size 256)"
)
PD_SPECULATIVE_REPORTS = (
    "vllm-project/vllm#55055 (unverified MTP draft tokens stay in the decode instance's KV "
    "cache), sgl-project/sglang#39150 (P/D refuses decode radix caching with speculation; "
    "acceptance unvalidated), sgl-project/sglang#30393 (lower acceptance with P/D)"
)


@dataclass(frozen=True)
class EndpointFacts:
    """What the rules need to know of the endpoint besides its operator settings."""

    name: str
    engine: Engine
    engine_version: str
    speculative: SpeculativeSpec | None
    instance_type: str
    gpu_count: int
    engine_args: Mapping[str, str]
    autoscaling: bool
    scales_on_invocations: bool = False  # hp:autoscaling's metric: the SageMaker endpoint's


def check(reader: Reader, settings: OperatorSettings, facts: EndpointFacts) -> None:
    _operator_version(reader, settings)
    _kv_cache(reader, settings, facts)
    _sglang_offload(reader, facts)
    _routing(reader, settings, facts)
    _instance_types(reader, settings, facts)
    _pd_spec(reader, settings, facts)
    _worker_args(reader, settings, facts)
    _user_connector(reader, settings, facts)
    _env(reader, settings, facts)
    _tls_and_dns(reader, settings)
    _probes(reader, settings, facts)
    capture.check(
        reader,
        settings.capture,
        data_capture=bool(settings.data_capture),
        sagemaker_endpoint=settings.sagemaker_endpoint,
    )
    if not settings.sagemaker_endpoint and facts.scales_on_invocations:
        reader.fail(
            "sagemakerEndpoint",
            "hp:autoscaling on invocations counts the SageMaker endpoint's Invocations; keep "
            "the endpoint, or scale on metric queueDepth or a hp:autoscaling.cloudWatchTrigger",
        )
    if settings.metrics.get("enabled") is False and facts.autoscaling:
        reader.fail("metrics.enabled", "autoscaling scales on the engine's metrics; keep it on")
    if len(facts.name) > INIT_CONTAINER_NAME_ROOM:
        reader.warn(
            "name" if reader.entry_path else "endpointName",
            f"{facts.name!r} is longer than {INIT_CONTAINER_NAME_ROOM} characters: the "
            f"operator's init container prefetch-<name>-inf would pass Kubernetes' 63",
        )


def _operator_version(reader: Reader, settings: OperatorSettings) -> None:
    version = settings.operator_version
    if version < MINIMUM_FOR_ANY_ENDPOINT:
        reader.fail(
            "operatorVersion",
            "every endpoint uses the Hugging Face model source, which needs operator 3.1 or "
            "newer; upgrade the amazon-sagemaker-hyperpod-inference add-on",
        )
    for key, needed in MINIMUM_OPERATOR.items():
        if version < needed and _asks_for(settings, key):
            reader.fail(
                key,
                f"needs operator {needed[0]}.{needed[1]} or newer; hp:operatorVersion is "
                f"{version[0]}.{version[1]}",
            )


def _asks_for(settings: OperatorSettings, key: str) -> bool:
    values: dict[str, object] = {
        "requestLimits": settings.request_limits,
        "tls": settings.tls.get("customCertificateConfig"),
        "dnsHostedZoneId": settings.dns_hosted_zone_id,
        "dataCapture": settings.data_capture,
        "capture": settings.capture,
        "pdSpec": settings.pd_spec,
        "modelCache": settings.model_cache,
        "loadBalancer.idleTimeoutSeconds": settings.load_balancer.get("idleTimeoutSeconds"),
    }
    return bool(values[key])


def _kv_cache(reader: Reader, settings: OperatorSettings, facts: EndpointFacts) -> None:
    cache = settings.kv_cache
    flag = _engine_connector(facts)
    if flag is not None and facts.speculative is not None and cache is None:
        _warn_offload_with_speculation(reader, f"engineArgs.{flag}", facts.speculative)
    if cache is None:
        return
    if facts.engine is Engine.SGLANG:
        # The operator's webhook: "KVCacheSpec can only be configured for vLLM model server at
        # this moment" (aws-samples/llm_model_hub ISSUES_FIXED.md, issue 2); AWS docs "KV caching
        # and intelligent routing": vLLM-based containers only.
        reader.fail("kvCache", "the operator accepts KV caching for vLLM only; use hp:engine vllm")
        return
    if cache.l2_backend == "redis" and settings.operator_version <= LAST_OPERATOR_IGNORING_REDIS:
        reader.fail(
            "kvCache.l2Backend",
            "redis is ignored by operator 3.2-3.7 (aws/sagemaker-hyperpod-cli#431: it forces its "
            "own tiered-storage connector); use tieredstorage",
        )
    if facts.speculative is not None:
        _warn_offload_with_speculation(reader, "kvCache", facts.speculative)


def _user_connector(reader: Reader, settings: OperatorSettings, facts: EndpointFacts) -> None:
    """A KV connector of the user's (hp:engineArgs or hp:workerArgs, in any spelling vLLM
    accepts) beside the one the operator configures for hp:kvCache (OPERATOR_CONNECTOR_FLAGS).
    SGLang with hp:kvCache is refused on its own (_kv_cache)."""
    if settings.kv_cache is None or facts.engine is not Engine.VLLM:
        return
    inherited = reader.entry_path and "kvCache" not in reader.entry
    cache_key = "hp:kvCache" if inherited else reader.key("kvCache")
    given = reader.structured("engineArgs")
    found = [
        (f"engineArgs.{_shown_flag(name)}", base)
        for name in (given if isinstance(given, dict) else {})
        if (base := _connector_base(facts, str(name)))
    ]
    for index, token in enumerate(settings.worker_args):
        if token.startswith("--") and (base := _connector_base(facts, token)):
            found.append((f"workerArgs[{index}]", base))
    already = {p.key for p in reader.problems.errors}  # a bad value is reported once
    for key, base in found:
        if reader.key(key) in already:
            continue
        reader.fail(
            key,
            f"sets vLLM's KV connector, and {cache_key} has the operator configure one: "
            f"{OPERATOR_CONNECTOR_FLAGS[base]}; remove this flag or {cache_key}",
        )


def _connector_base(facts: EndpointFacts, flag: str) -> str | None:
    """The connector flag `flag` names (`--kv_transfer_config=...`, `kv-transfer-config.kv_role`,
    an unambiguous prefix), as vLLM's argparse resolves it (engine_contract.resolve_flag)."""
    key = engine_contract.canonical_flag(
        facts.engine.value, flag.partition("=")[0], facts.engine_version
    )
    base = key.partition(".")[0]
    return base if base in OPERATOR_CONNECTOR_FLAGS else None


def _shown_flag(name: str) -> str:
    return name if name.isprintable() and len(name) <= 60 else repr(name[:60])


def _warn_offload_with_speculation(reader: Reader, key: str, spec: SpeculativeSpec) -> None:
    reader.warn(
        key,
        f"KV cache offload with {spec.algorithm} on vLLM has open reports: "
        f"{SPECULATIVE_OFFLOAD_REPORTS}; compare with hp:baseline before relying on it",
    )


def _sglang_offload(reader: Reader, facts: EndpointFacts) -> None:
    flag = next((f for f in SGLANG_OFFLOAD_FLAGS if facts.engine_args.get(f) == "true"), None)
    if facts.engine is Engine.SGLANG and flag and facts.speculative is not None:
        reader.warn(
            f"engineArgs.{flag}",
            f"KV cache offload with {facts.speculative.algorithm} on SGLang has open reports: "
            f"{SGLANG_OFFLOAD_REPORTS}; compare with hp:baseline before relying on it",
        )


def _engine_connector(facts: EndpointFacts) -> str | None:
    """The vLLM flag that configures a KV connector itself (vllm/config/vllm.py: offloading
    sets OffloadingConnector or LMCacheMPConnector), if hp:engineArgs has one."""
    if facts.engine is not Engine.VLLM:
        return None
    return next((flag for flag in VLLM_CONNECTOR_FLAGS if flag in facts.engine_args), None)


def _routing(reader: Reader, settings: OperatorSettings, facts: EndpointFacts) -> None:
    if settings.routing and facts.engine is Engine.SGLANG:
        # AWS docs "KV caching and intelligent routing": "currently support only vLLM-based
        # inference containers"; the router does discover SGLang pods (ISSUES_FIXED.md, issue 7).
        reader.warn("routing", "AWS documents intelligent routing for vLLM containers only")
    if settings.routing != "kvaware":
        return
    # kvaware routes by where the LMCache controller says a prompt's KV blocks are (AWS docs "KV
    # caching and intelligent routing"); without the cache every pod reports none.
    if settings.kv_cache is None:
        reader.fail("routing", "kvaware routes by the KV cache; set hp:kvCache, or use prefixaware")
    # The kvaware router tokenizes only a completions "prompt" (vllm-project/production-stack
    # src/vllm_router/routers/routing_logic.py KvawareRouter.route_request, "TODO: Handle chat
    # completions"); chat requests fall back to session or QPS routing.
    if (settings.invocation_path or CHAT_PATH) == CHAT_PATH:
        reader.fail(
            "routing",
            "kvaware cannot route the chat path v1/chat/completions (its router reads only a "
            "completions prompt); set hp:invocationPath v1/completions or use prefixaware",
        )


def _instance_types(reader: Reader, settings: OperatorSettings, facts: EndpointFacts) -> None:
    types = settings.instance_types
    if not types:
        return
    for index, instance_type in enumerate(types):
        if problem := aws_rules.hyperpod_type_problem(instance_type):
            reader.fail(f"instanceTypes[{index}]", problem)
    first = types[0]
    for index, other in enumerate(types[1:], start=1):
        counts = instances.gpu_count(first), instances.gpu_count(other)
        memory = instances.gpu_memory_mib(first), instances.gpu_memory_mib(other)
        if None in counts or None in memory:
            reader.fail(f"instanceTypes[{index}]", f"{other} is not a GPU type this project knows")
        elif counts[0] != counts[1] or memory[0] != memory[1]:
            reader.fail(
                f"instanceTypes[{index}]",
                f"{other} ({counts[1]} GPUs of {memory[1]} MiB) differs from {first} "
                f"({counts[0]} of {memory[0]} MiB): tensor parallelism and the memory fit are "
                "fixed per endpoint",
            )


def _pd_spec(reader: Reader, settings: OperatorSettings, facts: EndpointFacts) -> None:
    if not settings.pd_spec:
        return
    if facts.engine is Engine.SGLANG:
        # The CRD's pdSpec carries vLLM arguments ("Additional vLLM args for this role").
        reader.fail("pdSpec", "the operator's disaggregated prefill/decode runs vLLM only")
    types = settings.instance_types or (facts.instance_type,)
    without_efa = [t for t in types if t not in instances.EFA_INSTANCE_TYPES]
    if without_efa:
        reader.fail(
            "pdSpec",
            f"prefill and decode pods move the KV cache over EFA; {', '.join(without_efa)} "
            "has none (use e.g. ml.p5.48xlarge)",
        )
    if facts.speculative is not None and not settings.experimental:
        reader.fail(
            "pdSpec",
            f"is not offered with speculative decoding: no evidence it works, and public "
            f"reports of lost draft KV and acceptance ({PD_SPECULATIVE_REPORTS}); set "
            "hp:experimental true to try it anyway",
        )


def _worker_args(reader: Reader, settings: OperatorSettings, facts: EndpointFacts) -> None:
    """hp:workerArgs under hp:engineArgs' rules: the serve wrapper appends them to argv."""
    args = settings.worker_args
    index = 0
    while index < len(args):
        flag_index, token = index, args[index]
        index += 1
        if not token.startswith("--") or token == "--":
            reader.fail(f"workerArgs[{flag_index}]", f"expected a --flag, got {token!r}")
            continue
        name, has_value, inline = token[2:].partition("=")
        value: object = inline if has_value else True
        if not has_value and index < len(args) and not args[index].startswith("--"):
            value, index = args[index], index + 1
        problem = engine_contract.engine_arg_problem(
            facts.engine.value, name, value, facts.engine_version
        )
        if problem:
            shown = problem.replace("hp:engineArgs", "hp:workerArgs")
            reader.fail(f"workerArgs[{flag_index}]", f"{token}: {shown}")


def _env(reader: Reader, settings: OperatorSettings, facts: EndpointFacts) -> None:
    env = dict(settings.env)
    for name in env:
        if name.startswith("LMCACHE_"):
            # aws/sagemaker-hyperpod-cli#431: the operator strips or overrides LMCACHE_* in the
            # model pod, so the setting would silently not apply.
            reader.fail(f"env.{name}", "the operator strips LMCACHE_* variables; use hp:kvCache")
    connector = settings.kv_cache is not None or bool(settings.pd_spec)
    connector = connector or _engine_connector(facts) is not None
    allocator = env.get("PYTORCH_CUDA_ALLOC_CONF", "")
    cumem = any(facts.engine_args.get(flag) == "true" for flag in CUMEM_FLAGS)
    if facts.engine is Engine.VLLM and connector and EXPANDABLE_SEGMENTS in allocator and not cumem:
        reader.fail(
            "env.PYTORCH_CUDA_ALLOC_CONF",
            "vLLM refuses expandable_segments:True with a KV connector (hp:kvCache, hp:pdSpec, "
            "KV offload flags) unless hp:engineArgs enable-cumem-allocator is true; remove it",
        )


def _tls_and_dns(reader: Reader, settings: OperatorSettings) -> None:
    # The CRD's dnsConfig: "Requires tlsConfig.customCertificateConfig to be set."
    if settings.dns_hosted_zone_id and "customCertificateConfig" not in settings.tls:
        reader.fail(
            "dnsHostedZoneId",
            "needs your own certificate: set hp:tls.acmCertificateArn and hp:tls.domainName",
        )


def _probes(reader: Reader, settings: OperatorSettings, facts: EndpointFacts) -> None:
    # SGLang's /health answers in about 1 s (1.007 s measured); the operator's default readiness
    # probe waits OPERATOR_PROBE_TIMEOUT_SECONDS, so the pod never turns ready
    # (aws-samples/llm_model_hub hyperpod_docs/ISSUES_FIXED.md, issue 6).
    if facts.engine is not Engine.SGLANG:
        return
    if settings.probes is None:
        reader.warn(
            "probes",
            "operator keeps the operator's own readiness probe, which waits "
            f"{OPERATOR_PROBE_TIMEOUT_SECONDS} s, and SGLang's "
            "/health takes about 1 s, so the pod may never turn ready; remove hp:probes for "
            "the program's probes (a 5 s timeout)",
        )
        return
    timeout = settings.probes.get("readiness", {}).get("timeoutSeconds")
    if isinstance(timeout, int) and timeout <= OPERATOR_PROBE_TIMEOUT_SECONDS:
        reader.warn("probes.readiness.timeoutSeconds", "SGLang's /health takes about 1 s; use 5")
