"""The operator's features of one endpoint, read from its keys (docs/operator-features.md). Pure.

Each value is checked and kept in the CRD's own field names, so the manifest only composes
them; the combinations that cannot work with the endpoint's engine and speculation are in
`mlcc.config.operator.rules`. Every problem names the key (`hp:kvCache.l2Backend`, or
`hp:endpoints[1].kvCache.l2Backend` for an entry's value).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from mlcc import engine_contract
from mlcc.config.aws import rules as aws_rules
from mlcc.config.operator import capture as capture_key
from mlcc.config.operator import fields
from mlcc.config.operator.keys import VENDORED_OPERATOR_VERSION
from mlcc.config.reader import Reader
from mlcc.engine_contract.values import shown_value

ROUTING_STRATEGIES = ("prefixaware", "kvaware", "session", "roundrobin")
L2_BACKENDS = ("tieredstorage", "redis")
KUBERNETES_FIELDS = frozenset({"initContainers", "volumes", "serviceAccountName", "schedulerName"})
NODE_AFFINITY_FIELDS = frozenset(
    {
        "requiredDuringSchedulingIgnoredDuringExecution",
        "preferredDuringSchedulingIgnoredDuringExecution",
    }
)
DATA_CAPTURE_FIELDS = frozenset({"s3Uri", "sagemakerEndpoint", "loadBalancer", "modelPod"})
PD_FIELDS = frozenset(
    {"prefillSpec", "decodingSpec", "routingThreshold", "topologySpec", "autoScalingSpec"}
)
# The CRD's pattern of dnsConfig.hostedZoneId.
HOSTED_ZONE = re.compile(r"^Z[A-Z0-9]+$")
# The hyp CLI's template 1.2 pattern for model_version.
MODEL_VERSION = re.compile(r"^\d{1,4}\.\d{1,4}\.\d{1,4}$")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Variables the program or the operator owns in the model container.
OWNED_ENV_PREFIXES = ("SM_VLLM_", "SM_SGLANG_", "HP_", "MLCC_")
OWNED_ENV = frozenset({"HF_TOKEN", "HF_MODEL_ID", "MODEL_ID", "HF_HOME"})
VERSION = re.compile(r"^(\d+)\.(\d+)$")


@dataclass(frozen=True)
class KvCache:
    l1: bool
    l2_backend: str | None = None
    l2_url: str | None = None
    config_file: str | None = None

    def spec(self) -> dict[str, object]:
        """`spec.kvCacheSpec`, as the hyp CLI's template writes it."""
        rendered: dict[str, object] = {
            "enableL1Cache": self.l1,
            "enableL2Cache": self.l2_backend is not None,
        }
        if self.l2_backend is not None:
            l2: dict[str, object] = {"l2CacheBackend": self.l2_backend}
            if self.l2_url:
                l2["l2CacheLocalUrl"] = self.l2_url
            rendered["l2CacheSpec"] = l2
        if self.config_file:
            rendered["cacheConfigFile"] = self.config_file
        return rendered


@dataclass(frozen=True)
class OperatorSettings:
    """What an endpoint asks of the operator; the defaults render nothing new but the
    program's probes."""

    operator_version: tuple[int, int] = (3, 3)
    instance_types: tuple[str, ...] = ()  # the fallback list; empty = hp:instanceType alone
    kv_cache: KvCache | None = None
    routing: str | None = None
    # Laid over the program's probes; None = the operator's own (hp:probes: operator).
    probes: Mapping[str, Mapping[str, object]] | None = field(default_factory=dict)
    request_limits: Mapping[str, int] = field(default_factory=dict)
    tls: Mapping[str, object] = field(default_factory=dict)  # spec.tlsConfig
    dns_hosted_zone_id: str | None = None
    sagemaker_endpoint: bool = True
    data_capture: Mapping[str, object] = field(default_factory=dict)
    capture: capture_key.Capture | None = None  # hp:capture (mlcc.config.operator.capture)
    load_balancer: Mapping[str, object] = field(default_factory=dict)
    model_version: str | None = None
    endpoint_tags: tuple[tuple[str, str], ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    container_port: int | None = None
    model_volume_mount: Mapping[str, str] = field(default_factory=dict)
    resources: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    worker_args: tuple[str, ...] = ()
    working_dir: str | None = None
    metrics: Mapping[str, object] = field(default_factory=dict)
    invocation_path: str | None = None
    kubernetes: Mapping[str, object] = field(default_factory=dict)
    node_affinity: Mapping[str, object] = field(default_factory=dict)
    initial_replica_count: int | None = None
    prefetch: bool = False
    model_cache: Mapping[str, object] = field(default_factory=dict)
    pd_spec: Mapping[str, object] = field(default_factory=dict)
    experimental: bool = False


def parse_operator_settings(reader: Reader) -> OperatorSettings:
    """Every operator key of one endpoint; problems go to the reader."""
    return OperatorSettings(
        operator_version=operator_version(reader),
        instance_types=_instance_types(reader),
        kv_cache=_kv_cache(reader),
        routing=fields.choice(reader, "routing", ROUTING_STRATEGIES),
        probes=fields.probes(reader),
        request_limits=fields.request_limits(reader),
        tls=fields.tls(reader),
        dns_hosted_zone_id=fields.pattern(reader, "dnsHostedZoneId", HOSTED_ZONE, "a zone id Z..."),
        sagemaker_endpoint=reader.boolean("sagemakerEndpoint"),
        data_capture=fields.crd_object(reader, "dataCapture", DATA_CAPTURE_FIELDS),
        capture=capture_key.parse(reader),
        load_balancer=fields.load_balancer(reader),
        model_version=fields.pattern(reader, "modelVersion", MODEL_VERSION, "major.minor.patch"),
        endpoint_tags=_endpoint_tags(reader),
        env=_env(reader),
        container_port=fields.bounded(reader, "containerPort", 1024, 65535),
        model_volume_mount=fields.volume_mount(reader),
        resources=fields.resources(reader),
        worker_args=_worker_args(reader),
        working_dir=reader.string("workingDir") or None,
        metrics=fields.metrics(reader),
        invocation_path=_invocation_path(reader),
        kubernetes=fields.crd_object(reader, "kubernetes", KUBERNETES_FIELDS),
        node_affinity=fields.crd_object(reader, "nodeAffinity", NODE_AFFINITY_FIELDS),
        initial_replica_count=_initial_replica_count(reader),
        prefetch=reader.boolean("prefetch"),
        model_cache=fields.model_cache(reader),
        pd_spec=fields.crd_object(reader, "pdSpec", PD_FIELDS),
        experimental=reader.boolean("experimental"),
    )


def operator_version(reader: Reader) -> tuple[int, int]:
    text = reader.string("operatorVersion").removeprefix("v")
    match = VERSION.match(text)
    if not match:
        reader.fail("operatorVersion", f"must be major.minor such as 3.3, got {shown_value(text)}")
        text = VENDORED_OPERATOR_VERSION
        match = VERSION.match(text)
        assert match is not None
    return int(match.group(1)), int(match.group(2))


def _instance_types(reader: Reader) -> tuple[str, ...]:
    if "instanceType" in reader.entry and "instanceTypes" not in reader.entry:
        return ()  # the entry's own type wins over a top-level list
    raw = reader.structured("instanceTypes")
    if raw in (None, []):
        return ()
    if not isinstance(raw, list) or not all(isinstance(t, str) and t.strip() for t in raw):
        reader.fail("instanceTypes", "must be a list of instance types, e.g. [ml.g6e.12xlarge]")
        return ()
    types = tuple(t.strip() for t in raw)
    if len(set(types)) != len(types):
        reader.fail("instanceTypes", "lists a type more than once")
    entry_sets_types = "instanceTypes" in reader.entry
    both_here = (
        "instanceType" in reader.entry
        if entry_sets_types
        else reader.is_set("instanceType") and "instanceType" not in reader.entry
    )
    if both_here:
        reader.fail(
            "instanceTypes",
            "is exclusive with hp:instanceType (the CRD's instanceType and instanceTypes); "
            "keep one of them",
        )
    return types


def _kv_cache(reader: Reader) -> KvCache | None:
    raw = reader.mapping("kvCache", "KV cache settings")
    if not raw:
        return None
    fields.unknown(reader, "kvCache", raw, {"l1", "l2Backend", "l2Url", "configFile"})
    l1 = raw.get("l1", True)
    if not isinstance(l1, bool):
        reader.fail("kvCache.l1", f"must be true or false, got {shown_value(str(l1))}")
        l1 = True
    backend = raw.get("l2Backend")
    if backend is not None and str(backend).lower() not in L2_BACKENDS:
        reader.fail("kvCache.l2Backend", f"must be one of {', '.join(L2_BACKENDS)}")
        backend = None
    backend = str(backend).lower() if backend is not None else None
    url = fields.optional_text(reader, "kvCache.l2Url", raw.get("l2Url"))
    if backend == "redis" and not url:
        reader.fail("kvCache.l2Url", "is required with l2Backend: redis (redis://host:6379)")
    if url and backend != "redis":
        reader.fail("kvCache.l2Url", "is only for l2Backend: redis (tieredstorage has its own)")
    config_file = fields.optional_text(reader, "kvCache.configFile", raw.get("configFile"))
    if not l1 and backend is None and not config_file:
        reader.fail("kvCache", "turns every tier off; remove the key for no KV cache")
    return KvCache(l1, backend, url, config_file)


def _endpoint_tags(reader: Reader) -> tuple[tuple[str, str], ...]:
    tags = fields.string_map(reader, "endpointTags", "tag names to values")
    for name, problem in aws_rules.tag_problems(dict(tags)):
        reader.fail("endpointTags" if name is None else f"endpointTags.{name[:60]}", problem)
    return tags


def _env(reader: Reader) -> tuple[tuple[str, str], ...]:
    values = fields.string_map(reader, "env", "variable names to values")
    for name, _value in values:
        if not ENV_NAME.match(name):
            reader.fail(f"env.{name[:60]}", "is not an environment variable name")
        elif engine_contract.is_secret_flag(name.lower().replace("_", "-")):
            reader.fail(
                f"env.{name}",
                "looks like a secret, which hp:env would store in plain text in the manifest; "
                "pass it through a Kubernetes Secret (hp:hfToken for the Hub token)",
            )
        elif name in OWNED_ENV or name.startswith(OWNED_ENV_PREFIXES):
            reader.fail(
                f"env.{name}",
                "is set by the program from the other hp:* keys (engine flags go in "
                "hp:engineArgs, the token in hp:hfToken); remove it from hp:env",
            )
    return values


def _worker_args(reader: Reader) -> tuple[str, ...]:
    command = reader.structured("workerCommand")
    if command not in (None, []):
        reader.fail(
            "workerCommand",
            "is refused: a container command replaces the serve wrapper, which turns the "
            "speculative settings into engine flags, so speculation would silently be off; "
            "put engine flags in hp:engineArgs or hp:workerArgs",
        )
    raw = reader.structured("workerArgs")
    if raw in (None, []):
        return ()
    if not isinstance(raw, list) or not all(isinstance(a, str | int | float) for a in raw):
        reader.fail("workerArgs", "must be a list of arguments, e.g. [--max-num-seqs, '64']")
        return ()
    return tuple(str(a) for a in raw)


def _invocation_path(reader: Reader) -> str | None:
    path = reader.string("invocationPath").lstrip("/")
    if path and not re.match(r"^[A-Za-z0-9\-_./]+$", path):
        reader.fail("invocationPath", f"must be a URL path such as v1/completions, got {path!r}")
    return path or None


def _initial_replica_count(reader: Reader) -> int | None:
    count = fields.bounded(reader, "initialReplicaCount", 0, 100)
    if count is not None:
        reader.warn(
            "initialReplicaCount",
            "has no effect since operator 3.2 (the CRD deprecates it); hp:replicas sets the "
            "start and hp:autoscaling the floor",
        )
    return count
