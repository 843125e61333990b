"""Stack config -> frozen, validated dataclasses. No resources are created here.

`parse` is pure: it takes the raw string values Pulumi hands a program (`hp:*`, `aws:region`,
`aws-native:region`) and returns the typed config plus warnings, or raises `ConfigError`
carrying every problem at once, each naming the key to change. The keys themselves are declared
once, in `mlcc.config.schema`. `from_pulumi` is the adapter used by `__main__.py`.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace

from mlcc.config import image_tag, infrastructure, kubernetes_only
from mlcc.config.aws import capacity, cuda_fit
from mlcc.config.aws import rules as aws_rules
from mlcc.config.budget import Budget, parse_budget
from mlcc.config.deploy_wait import DeployWait, parse_deploy_wait
from mlcc.config.endpoints import (
    EndpointConfig,
    ReadEndpoint,
    engine_of,
    name_problem,
    parse_endpoints,
)
from mlcc.config.infrastructure import InfrastructureConfig, NewCluster
from mlcc.config.observability import ObservabilitySettings, parse_observability
from mlcc.config.optimize import OptimizeSettings, parse_optimize_settings
from mlcc.config.reader import Reader
from mlcc.config.refusal import refuse
from mlcc.config.scaling import autoscaling as scaling
from mlcc.config.schema import KEYS_BY_QUALIFIED, PROJECT
from mlcc.facts.operator import OPERATOR_NAMESPACE
from mlcc.serving.engines import EngineRelease
from mlcc.serving.speculative import Problem

REGION_KEY = "aws:region"
NATIVE_REGION_KEY = "aws-native:region"
PROFILE_KEY = "aws:profile"  # the AWS provider's named profile; preflight's calls use it too
PROVIDER_KEYS = (REGION_KEY, NATIVE_REGION_KEY, PROFILE_KEY)
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_IMAGE_REF = re.compile(
    r"^[a-z0-9][a-z0-9._/:-]*(@sha256:[0-9a-f]{64}|:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})$"
)
# Namespaces Kubernetes, the inference operator and its add-ons own: an endpoint there would be
# mixed up with (or deleted along with) the system's own objects.
SYSTEM_NAMESPACES = frozenset(
    {OPERATOR_NAMESPACE, "aws-hyperpod", "cert-manager", "keda", "amazon-cloudwatch"}
)


@dataclass(frozen=True)
class Secret:
    """A secret string whose repr never shows the value."""

    value: str = field(repr=False)

    def __repr__(self) -> str:
        return "Secret([redacted])"


@dataclass(frozen=True)
class StackConfig:
    stack: str
    region: str
    namespace: str
    hf_token: Secret | None
    hf_token_secret_name: str  # the Kubernetes Secret holding hf_token (one per namespace)
    image: str | None  # a prebuilt image of `image_release` (the top-level hp:engine)
    image_release: EngineRelease
    optimize: OptimizeSettings | None
    endpoints: tuple[EndpointConfig, ...]
    infrastructure: InfrastructureConfig
    deploy_wait: DeployWait = field(default_factory=DeployWait)
    preflight: str = "auto"  # hp:preflight: auto, strict or off (mlcc.preflight.outcome.Mode)
    aws_profile: str = ""  # aws:profile; "" lets boto3 take the environment's credentials
    budget: Budget | None = None  # hp:budget (mlcc/config/budget.py)
    # hp:observability (mlcc/config/observability/, docs/observability.md)
    observability: ObservabilitySettings = field(default_factory=ObservabilitySettings)

    @property
    def primary(self) -> EndpointConfig:
        """The first endpoint: the one the top-level keys (or the first entry) describe."""
        return self.endpoints[0]


@dataclass(frozen=True)
class Parsed:
    config: StackConfig
    warnings: tuple[Problem, ...]


class ConfigError(Exception):
    def __init__(self, problems: Collection[Problem]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


def parse(
    values: Mapping[str, str],
    *,
    stack: str,
    secret_keys: Collection[str] = (),
    environment_region: str = "",
) -> Parsed:
    """Validate raw stack config (`hp:key` -> string) into a StackConfig, or raise ConfigError."""
    reader = Reader(values)
    _check_unknown_keys(reader)
    aws_free = bool(reader.string("kubeconfig"))
    region = _region(reader, environment_region, required=not aws_free)
    single_name = _single_endpoint_name(reader, stack)
    read = parse_endpoints(reader, single_name)
    infra = infrastructure.parse(
        reader,
        stack=stack,
        region=region,
        demand=capacity.node_demand(
            [(e.config.instance_type, e.config.most_replicas) for e in read]
        ),
    )
    _check_native_region(reader, region, infra, environment_region)
    _check_cuda_fit(reader, read, not isinstance(infra.cluster, NewCluster))
    configs = [e.config for e in read]
    endpoints = tuple(_placed(e, infra, [c for c in configs if c is not e.config]) for e in read)
    if not reader.problems.errors:  # an endpoint's refused autoscaling would skew the counts
        capacity.check_shared_nodes(reader, infra, endpoints)
    config = StackConfig(
        stack=stack,
        region=region,
        namespace=_namespace(reader),
        hf_token=_hf_token(reader, secret_keys),
        hf_token_secret_name=f"{single_name}-hf-token",
        image=_image(reader),
        image_release=engine_of(reader)[1],
        optimize=_optimize(reader),
        deploy_wait=parse_deploy_wait(reader),
        endpoints=endpoints,
        infrastructure=infra,
        preflight=_preflight(reader),
        aws_profile=reader.values.get(PROFILE_KEY, "").strip(),
        budget=_budget(reader),
        observability=_observability(reader, endpoints),
    )
    _warn_unused_stack_keys(reader, config)
    if infra.calls_no_aws:
        kubernetes_only.check_stack(reader, _wanted(config))
    errors = reader.problems.unique_errors()
    if errors or not endpoints:
        raise ConfigError(errors or [Problem(f"{PROJECT}:endpoints", "lists no endpoint")])
    return Parsed(config, tuple(reader.problems.unique_warnings()))


def _wanted(config: StackConfig) -> kubernetes_only.Wanted:
    return kubernetes_only.Wanted(
        image=config.image,
        image_release=config.image_release,
        releases=[e.engine_release for e in config.endpoints],
        optimize=config.optimize is not None,
        observability=config.observability.target,
    )


def _warn_unused_stack_keys(reader: Reader, config: StackConfig) -> None:
    endpoints = config.endpoints
    if config.image and all(e.engine_release != config.image_release for e in endpoints):
        reader.warn("image", "ignored: no endpoint runs the engine release of hp:engine")
    if config.optimize and all(e.speculative or e.baseline_of for e in endpoints):
        reader.warn(
            "optimize",
            "ignored: every endpoint sets hp:speculativeAlgorithm itself, so no recommendation "
            "job is created",
        )


def _check_cuda_fit(reader: Reader, read: list[ReadEndpoint], existing_cluster: bool) -> None:
    """Each endpoint's engine image against the nodes' NVIDIA driver; a prebuilt hp:image by the
    release its tag names (mlcc/config/image_tag.py)."""
    driver = cuda_fit.node_driver(reader, existing_cluster=existing_cluster)
    prebuilt = engine_of(reader)[1] if reader.string("image") else None
    if prebuilt is not None:
        image_tag.check(reader, reader.string("image"), prebuilt, driver)
    for entry in read:
        release = entry.config.engine_release
        if release != prebuilt:
            cuda_fit.check(entry.reader, release.engine.value, release.version, driver)


def _check_unknown_keys(reader: Reader) -> None:
    for qualified in sorted(reader.values):
        if qualified.startswith(f"{PROJECT}:") and qualified not in KEYS_BY_QUALIFIED:
            guess = difflib.get_close_matches(qualified, KEYS_BY_QUALIFIED, n=1)
            hint = f"; did you mean {guess[0]}?" if guess else ""
            shown = qualified if qualified.isprintable() else repr(qualified)
            reader.problems.errors.append(Problem(shown, f"is not a known key{hint}"))


def _region(reader: Reader, environment_region: str, *, required: bool = True) -> str:
    """aws:region (or the AWS_REGION the providers would read): one real region. Kubernetes-only
    mode needs none, but one that is set must still be a region."""
    region = (reader.values.get(REGION_KEY) or environment_region).strip()
    if not region and not required:
        return region
    problem = aws_rules.region_problem(region)
    if problem:
        reader.problems.errors.append(Problem(REGION_KEY, problem))
    return region


def _check_native_region(
    reader: Reader, region: str, infra: InfrastructureConfig, environment_region: str
) -> None:
    """The aws-native provider (the HyperPod cluster) does not read aws:region, only its own
    key or AWS_REGION."""
    native = (reader.values.get(NATIVE_REGION_KEY) or environment_region).strip()
    if infra.calls_no_aws:
        return  # no AWS provider is used
    if native and native != region:
        message = f"is {native!r} but aws:region is {region!r}; set both to the same region"
    elif not native and isinstance(infra.cluster, NewCluster):
        message = (
            f"is not set, and the HyperPod cluster is created through the aws-native provider, "
            f"which does not read aws:region: `pulumi config set {NATIVE_REGION_KEY} "
            f"{region or '<region>'}`"
        )
    else:
        return
    reader.problems.errors.append(Problem(NATIVE_REGION_KEY, message))


def _placed(
    read: ReadEndpoint, infra: InfrastructureConfig, others: list[EndpointConfig]
) -> EndpointConfig:
    """The endpoint checked against the instance groups, with its autoscaling settings."""
    endpoint = read.config
    capacity.check_endpoint_fits(read.reader, infra, endpoint)
    room = capacity.pods_that_fit(infra, endpoint, others)
    settings, problems = scaling.parse_autoscaling(endpoint.autoscaling_raw, "autoscaling", room)
    for path, message in problems:
        read.reader.fail(path, message)
    if settings is None:
        return endpoint
    if not settings.min_replicas <= endpoint.replicas <= settings.max_replicas:
        read.reader.warn(
            "replicas",
            f"{endpoint.replicas} is outside autoscaling's {settings.min_replicas}-"
            f"{settings.max_replicas}; the endpoint starts with "
            f"{max(settings.min_replicas, 1)} and scales from there",
        )
    return replace(endpoint, autoscaling=settings)


def _namespace(reader: Reader) -> str:
    namespace = reader.string("namespace")
    if len(namespace) > 63 or not _DNS_LABEL.match(namespace):
        reader.fail(
            "namespace",
            f"must be a Kubernetes namespace name (lowercase letters, digits, '-', at most 63), "
            f"got {namespace!r}",
        )
    elif namespace.startswith("kube-") or namespace in SYSTEM_NAMESPACES:
        reader.fail(
            "namespace",
            f"{namespace} belongs to Kubernetes or the inference operator; use a namespace of "
            "your own, such as inference",
        )
    return namespace


def derived_endpoint_name(stack: str) -> str:
    name = re.sub(r"[^a-z0-9]+", "-", f"{PROJECT}-{stack}".lower()).strip("-")
    return name[:63].rstrip("-")


def _single_endpoint_name(reader: Reader, stack: str) -> str:
    name = reader.string("endpointName") or derived_endpoint_name(stack)
    problem = name_problem(name)
    if problem:
        reader.fail("endpointName", problem)
    return name


def _hf_token(reader: Reader, secret_keys: Collection[str]) -> Secret | None:
    token = reader.raw("hfToken")
    if not token.strip():
        return None
    if f"{PROJECT}:hfToken" not in secret_keys:
        reader.fail(
            "hfToken",
            "is stored in plaintext; set it again with "
            "`pulumi config set --secret hp:hfToken <token>`",
        )
    return Secret(token.strip())


def _image(reader: Reader) -> str | None:
    image = reader.string("image")
    if not image:
        return None  # build ours from images/<engine>
    if not _IMAGE_REF.match(image):
        reader.fail("image", f"is not an image reference with a tag or digest: {image!r}")
    elif "@sha256:" not in image:
        reader.warn(
            "image",
            "is pinned by a mutable tag; pods will not roll when the tag is "
            "re-pushed. Pin it by digest (@sha256:...)",
        )
    return image


PREFLIGHT_MODES = ("auto", "strict", "off")


def _observability(reader: Reader, endpoints: tuple[EndpointConfig, ...]) -> ObservabilitySettings:
    # An endpoint without hp:speculative* keys speculates when hp:optimize's job recommends it.
    optimized = bool(reader.structured("optimize"))
    speculative = [e.name for e in endpoints if may_speculate(e, optimized=optimized)]
    settings, issues = parse_observability(
        reader.structured("observability"), reader.key("observability"), speculative
    )
    for key, message in issues:
        reader.problems.errors.append(Problem(key, message))
    return settings


def may_speculate(endpoint: EndpointConfig, *, optimized: bool) -> bool:
    """Explicit hp:speculative* keys, or (not a twin) a recommendation job's choice."""
    return endpoint.speculative is not None or (optimized and not endpoint.baseline_of)


def _budget(reader: Reader) -> Budget | None:
    text = reader.string("budget")
    if not text.strip():
        return None
    budget = parse_budget(text)
    if isinstance(budget, str):
        reader.fail("budget", budget)
        return None
    return budget


def _preflight(reader: Reader) -> str:
    mode = reader.string("preflight").lower() or "auto"
    if mode not in PREFLIGHT_MODES:
        reader.fail("preflight", f"must be auto, strict or off, got {mode!r}")
        return "auto"
    return mode


def _optimize(reader: Reader) -> OptimizeSettings | None:
    """hp:optimize, validated by the same rules as the recommendation provider's check."""
    value = reader.structured("optimize")
    if value is None:
        return None
    if not isinstance(value, dict):
        reader.fail("optimize", "must be an object such as {goal: latency, modelS3Uri: s3://...}")
        return None
    settings, errors = parse_optimize_settings(value) if value else (None, [])
    for error in errors:
        reader.fail(f"optimize.{error.key}", error.message)
    return settings


def environment_region() -> str:
    """The region the AWS providers fall back to when the stack sets none."""
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or ""


def from_pulumi() -> Parsed:
    """Read this stack's config through the Pulumi runtime; errors become one RunError."""
    import pulumi
    from pulumi import runtime
    from pulumi.runtime.config import CONFIG

    merged = {**runtime.get_config_env(), **CONFIG.get()}
    values = {
        k: str(v) for k, v in merged.items() if k.startswith(f"{PROJECT}:") or k in PROVIDER_KEYS
    }
    secret_keys = {k for k in values if runtime.is_config_secret(k)}
    secret_keys |= set(runtime.get_config_secret_keys_env())
    try:
        parsed = parse(
            values,
            stack=pulumi.get_stack(),
            secret_keys=secret_keys,
            environment_region=environment_region(),
        )
    except ConfigError as error:
        refuse(error.problems)
    for warning in parsed.warnings:
        pulumi.log.warn(str(warning))
    return parsed
