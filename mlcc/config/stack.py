"""Stack config -> frozen, validated dataclasses. No resources are created here.

`parse` is pure: it takes the raw string values Pulumi hands a program (`hp:*`, `aws:region`,
`aws-native:region`) and returns the typed config plus warnings, or raises `ConfigError`
carrying every problem at once, each naming the key to change. The keys themselves are declared
once, in `mlcc.config.schema`; the stack-wide ones are read in `mlcc.config.stack_keys`, the AWS
providers' in `mlcc.config.provider_keys`. `from_pulumi` is the adapter used by `__main__.py`.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace

from mlcc.config import image_tag, infrastructure, kubernetes_only, s3_draft_credentials
from mlcc.config.aws import capacity, cuda_fit
from mlcc.config.budget import Budget
from mlcc.config.deploy_wait import DeployWait, parse_deploy_wait
from mlcc.config.draft_training import DraftTrainingConfig, parse_draft_training
from mlcc.config.endpoints import (
    EndpointConfig,
    ReadEndpoint,
    engine_of,
    name_problem,
    parse_endpoints,
)
from mlcc.config.infrastructure import InfrastructureConfig, NewCluster
from mlcc.config.observability import ObservabilitySettings
from mlcc.config.optimize import OptimizeSettings
from mlcc.config.provider_keys import (
    PROFILE_KEY,
    PROVIDER_KEYS,
    check_native_region,
    environment_region,
    read_region,
)
from mlcc.config.reader import Reader
from mlcc.config.refusal import refuse
from mlcc.config.scaling import autoscaling as scaling
from mlcc.config.schema import KEYS_BY_QUALIFIED, PROJECT
from mlcc.config.stack_keys import (
    Secret,
    read_budget,
    read_hf_token,
    read_image,
    read_namespace,
    read_observability,
    read_optimize,
    read_preflight,
)
from mlcc.serving.engines import EngineRelease
from mlcc.serving.speculative import Problem


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
    draft_training: DraftTrainingConfig | None = None  # docs/draft-training.md

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
    region = read_region(reader, environment_region, required=not aws_free)
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
    check_native_region(reader, region, infra, environment_region)
    _check_cuda_fit(reader, read, not isinstance(infra.cluster, NewCluster))
    s3_draft_credentials.check_credentials(read, isinstance(infra.cluster, NewCluster))
    configs = [e.config for e in read]
    endpoints = tuple(_placed(e, infra, [c for c in configs if c is not e.config]) for e in read)
    if not reader.problems.errors:  # an endpoint's refused autoscaling would skew the counts
        capacity.check_shared_nodes(reader, infra, endpoints)
    config = StackConfig(
        stack=stack,
        region=region,
        namespace=read_namespace(reader),
        hf_token=read_hf_token(reader, secret_keys),
        hf_token_secret_name=f"{single_name}-hf-token",
        image=read_image(reader),
        image_release=engine_of(reader)[1],
        optimize=read_optimize(reader),
        deploy_wait=parse_deploy_wait(reader),
        endpoints=endpoints,
        infrastructure=infra,
        preflight=read_preflight(reader),
        aws_profile=reader.values.get(PROFILE_KEY, "").strip(),
        budget=read_budget(reader),
        observability=read_observability(reader, endpoints),
        draft_training=parse_draft_training(reader, endpoints, infra, single_name),
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
        capture=kubernetes_only.capture_keys(config.endpoints),
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


def derived_endpoint_name(stack: str) -> str:
    name = re.sub(r"[^a-z0-9]+", "-", f"{PROJECT}-{stack}".lower()).strip("-")
    return name[:63].rstrip("-")


def _single_endpoint_name(reader: Reader, stack: str) -> str:
    name = reader.string("endpointName") or derived_endpoint_name(stack)
    problem = name_problem(name)
    if problem:
        reader.fail("endpointName", problem)
    return name


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
