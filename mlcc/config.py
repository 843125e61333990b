"""Stack config -> frozen, validated dataclasses. No resources are created here.

`KEYS` is the one declaration of every `hp:*` key (type, default, description); Pulumi.yaml
repeats it for the CLI and a test keeps the two equal. `parse` is pure: it takes the raw string
values Pulumi hands a program and returns the typed config plus warnings, or raises
`ConfigError` carrying every problem at once, each naming the key to change.
`from_pulumi` is the adapter used by `__main__.py`; it turns `ConfigError` into `pulumi.RunError`.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Literal

from mlcc import infrastructure, instances, speculative
from mlcc.engines import Engine, EngineRelease, known_versions, release
from mlcc.optimize_settings import OptimizeSettings, parse_optimize_settings
from mlcc.speculative import Problem, SpeculativeSpec

PROJECT = "hp"
REQUIRED = object()

ConfigType = Literal["string", "integer", "boolean"] | None


@dataclass(frozen=True)
class Key:
    name: str
    type: ConfigType
    default: object
    description: str

    @property
    def qualified(self) -> str:
        return f"{PROJECT}:{self.name}"

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


KEYS: tuple[Key, ...] = (
    Key("engine", "string", "vllm", "Serving engine: vllm or sglang."),
    Key(
        "engineVersion",
        "string",
        "",
        "Engine version of the image; empty = the version the project pins. Set it when "
        "hp:image is a prebuilt image with another known engine version.",
    ),
    Key("model", "string", REQUIRED, "Hugging Face model id of the target model (org/name)."),
    Key("instanceType", "string", "ml.g5.12xlarge", "SageMaker instance type of the GPU nodes."),
    Key(
        "gpuCount", None, "", "GPUs per instance (integer); empty = looked up from hp:instanceType."
    ),
    Key("replicas", "integer", 1, "Number of model pods."),
    Key("namespace", "string", "default", "Kubernetes namespace of the endpoint."),
    Key(
        "endpointName",
        "string",
        "",
        "Endpoint (and SageMaker model) name; empty = derived from the stack name.",
    ),
    Key(
        "hfToken",
        "string",
        "",
        "Hugging Face token for gated models; set with --secret. Empty = no token.",
    ),
    Key(
        "optimize",
        None,
        {},
        "SageMaker AI recommendation job for the speculative settings: {goal "
        "(latency|throughput|cost), modelS3Uri, roleArn, dataset, instanceTypes, "
        "timeoutMinutes, outputS3Uri}; empty = no job. Explicit hp:speculative* keys win.",
    ),
    Key(
        "engineArgs",
        None,
        {},
        "Extra engine flags as a map, e.g. {max-model-len: 8192}; speculative flags are "
        "set with the hp:speculative* keys.",
    ),
    Key(
        "image",
        "string",
        "",
        "Prebuilt serve image URI (pin it by digest); empty = build images/<engine> and push "
        "it to this stack's ECR repository.",
    ),
    Key(
        "speculativeAlgorithm",
        "string",
        "",
        "draft-model, eagle, eagle2, eagle3, ngram or mtp; empty = speculation off.",
    ),
    Key(
        "speculativeModel",
        "string",
        "",
        "Draft model: Hugging Face id or absolute path in the image (draft-model, eagle*).",
    ),
    Key(
        "speculativeNumTokens",
        "integer",
        speculative.DEFAULT_NUM_TOKENS,
        "Tokens drafted per step (vLLM num_speculative_tokens, SGLang num_steps).",
    ),
    Key(
        "speculativeEagleTopk",
        None,
        "",
        "EAGLE branching per step (integer, SGLang); empty = 1, or 4 for eagle2.",
    ),
    Key(
        "speculativeNumDraftTokens",
        None,
        "",
        "SGLang tokens verified per step for an EAGLE tree (integer); empty = derived.",
    ),
    *(Key(*spec) for spec in infrastructure.KEY_SPECS),
)
KEYS_BY_NAME = {key.qualified: key for key in KEYS}

_HF_MODEL_ID = re.compile(r"^[a-zA-Z0-9_.-]+/[a-zA-Z0-9_.-]+$")  # the CRD's modelId pattern
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_ENDPOINT_NAME = re.compile(r"^[a-z0-9](-*[a-z0-9]){0,62}$")
_FLAG_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_IMAGE_REF = re.compile(
    r"^[a-z0-9][a-z0-9._/:-]*(@sha256:[0-9a-f]{64}|:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})$"
)
# Flags the program itself owns; setting them through hp:engineArgs would fight the program.
_RESERVED_FLAGS = {
    "model",
    "model-path",
    "port",
    "host",
    "tensor-parallel-size",
    "tp-size",
    "tp",
    "served-model-name",
}


@dataclass(frozen=True)
class Secret:
    """A secret string whose repr never shows the value."""

    value: str = field(repr=False)

    def __repr__(self) -> str:
        return "Secret([redacted])"


@dataclass(frozen=True)
class StackConfig:
    stack: str
    engine: Engine
    engine_release: EngineRelease
    model: str
    instance_type: str
    gpu_count: int
    replicas: int
    namespace: str
    endpoint_name: str
    hf_token: Secret | None
    engine_args: tuple[tuple[str, str], ...]
    image: str | None
    optimize: OptimizeSettings | None
    speculative: SpeculativeSpec | None
    infrastructure: infrastructure.InfrastructureConfig


@dataclass(frozen=True)
class Parsed:
    config: StackConfig
    warnings: tuple[Problem, ...]


class ConfigError(Exception):
    def __init__(self, problems: Collection[Problem]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class _Reader:
    """Typed access to raw values that records a Problem instead of raising."""

    def __init__(self, values: Mapping[str, str]) -> None:
        self.values = values
        self.errors: list[Problem] = []
        self.warnings: list[Problem] = []

    def fail(self, key: str, message: str) -> None:
        self.errors.append(Problem(f"{PROJECT}:{key}", message))

    def warn(self, key: str, message: str) -> None:
        self.warnings.append(Problem(f"{PROJECT}:{key}", message))

    def raw(self, name: str) -> str:
        key = KEYS_BY_NAME[f"{PROJECT}:{name}"]
        value = self.values.get(key.qualified)
        if value is not None:
            return value
        if key.required:
            self.fail(name, f"is required; set it with `pulumi config set {key.qualified} ...`")
            return ""
        default = key.default
        return json.dumps(default) if isinstance(default, dict) else str(default)

    def string(self, name: str) -> str:
        return self.raw(name).strip()

    def integer(self, name: str, *, optional: bool = False) -> int | None:
        text = self.raw(name).strip()
        if optional and text == "":
            return None
        try:
            return int(text)
        except ValueError:
            self.fail(name, f"must be a whole number, got {text!r}")
            return None

    def mapping(self, name: str) -> dict[str, object]:
        text = self.raw(name)
        try:
            value = json.loads(text) if text.strip() else {}
        except json.JSONDecodeError:
            value = None
        if not isinstance(value, dict):
            self.fail(name, "must be a map of flag names to values")
            return {}
        return value


def parse(
    values: Mapping[str, str],
    *,
    stack: str,
    secret_keys: Collection[str] = (),
) -> Parsed:
    """Validate raw stack config (`hp:key` -> string) into a StackConfig, or raise ConfigError."""
    reader = _Reader(values)
    _check_unknown_keys(reader)
    engine, engine_release = _engine(reader)
    model = _model(reader)
    instance_type, gpu_count = _instance(reader)
    replicas = _replicas(reader)
    config = StackConfig(
        stack=stack,
        engine=engine,
        engine_release=engine_release,
        model=model,
        instance_type=instance_type,
        gpu_count=gpu_count,
        replicas=replicas,
        namespace=_namespace(reader),
        endpoint_name=_endpoint_name(reader, stack),
        hf_token=_hf_token(reader, secret_keys),
        engine_args=_engine_args(reader, engine),
        image=_image(reader),
        optimize=_optimize(reader),
        speculative=_speculative(reader, engine, engine_release),
        infrastructure=infrastructure.parse(
            reader,
            stack=stack,
            instance_type=instance_type,
            replicas=replicas,
            gpu_count=gpu_count,
        ),
    )
    if reader.errors:
        raise ConfigError(reader.errors)
    return Parsed(config, tuple(reader.warnings))


def _check_unknown_keys(reader: _Reader) -> None:
    for qualified in sorted(reader.values):
        if qualified.startswith(f"{PROJECT}:") and qualified not in KEYS_BY_NAME:
            guess = difflib.get_close_matches(qualified, KEYS_BY_NAME, n=1)
            hint = f"; did you mean {guess[0]}?" if guess else ""
            reader.errors.append(Problem(qualified, f"is not a known key{hint}"))


def _engine(reader: _Reader) -> tuple[Engine, EngineRelease]:
    name = reader.string("engine").lower()
    if name not in {e.value for e in Engine}:
        reader.fail("engine", f"must be vllm or sglang, got {name!r}")
        name = Engine.VLLM.value
    engine = Engine(name)
    version = reader.string("engineVersion")
    if version and version not in known_versions(engine):
        reader.fail(
            "engineVersion",
            f"{engine.value} {version!r} is not a version whose flags this project knows; "
            f"known: {', '.join(known_versions(engine))}",
        )
        version = ""
    return engine, release(engine, version or None)


def _model(reader: _Reader) -> str:
    model = reader.string("model")
    if model and not _HF_MODEL_ID.match(model):
        reader.fail("model", f"must be a Hugging Face model id (org/name), got {model!r}")
    return model


def _instance(reader: _Reader) -> tuple[str, int]:
    instance_type = reader.string("instanceType")
    override = reader.integer("gpuCount", optional=True)
    if not instances.INSTANCE_TYPE_PATTERN.match(instance_type):
        reader.fail(
            "instanceType",
            f"must be a SageMaker type such as ml.g5.12xlarge, got {instance_type!r}",
        )
        return instance_type, override or 1
    if override is not None:
        if not 1 <= override <= 16:
            reader.fail("gpuCount", f"must be between 1 and 16, got {override}")
        return instance_type, override
    known = instances.gpu_count(instance_type)
    if known is None:
        reader.fail(
            "instanceType",
            f"{instance_type} is not a GPU type this project knows; "
            "use a GPU type (g5, g6, g6e, p4d, p5, ...) or set hp:gpuCount",
        )
        return instance_type, 1
    return instance_type, known


def _replicas(reader: _Reader) -> int:
    replicas = reader.integer("replicas")
    if replicas is not None and not 1 <= replicas <= 100:
        reader.fail("replicas", f"must be between 1 and 100, got {replicas}")
    return replicas or 1


def _namespace(reader: _Reader) -> str:
    namespace = reader.string("namespace")
    if len(namespace) > 63 or not _DNS_LABEL.match(namespace):
        reader.fail(
            "namespace",
            f"must be a Kubernetes namespace name (lowercase letters, "
            f"digits, '-', at most 63), got {namespace!r}",
        )
    return namespace


def derived_endpoint_name(stack: str) -> str:
    name = re.sub(r"[^a-z0-9]+", "-", f"{PROJECT}-{stack}".lower()).strip("-")
    return name[:63].rstrip("-")


def _endpoint_name(reader: _Reader, stack: str) -> str:
    name = reader.string("endpointName") or derived_endpoint_name(stack)
    if not _ENDPOINT_NAME.match(name):
        reader.fail(
            "endpointName",
            f"must be 1-63 lowercase letters, digits or '-', starting "
            f"and ending with a letter or digit (it is also the Kubernetes object "
            f"name), got {name!r}",
        )
    return name


def _hf_token(reader: _Reader, secret_keys: Collection[str]) -> Secret | None:
    token = reader.raw("hfToken")
    if not token:
        return None
    if "hp:hfToken" not in secret_keys:
        reader.fail(
            "hfToken",
            "is stored in plaintext; set it again with "
            "`pulumi config set --secret hp:hfToken <token>`",
        )
    return Secret(token)


def _engine_args(reader: _Reader, engine: Engine) -> tuple[tuple[str, str], ...]:
    args: list[tuple[str, str]] = []
    for raw_name, value in reader.mapping("engineArgs").items():
        flag = raw_name.strip().lstrip("-").replace("_", "-").lower()
        problem = _engine_arg_problem(flag, value, engine)
        if problem:
            reader.fail(f"engineArgs.{raw_name}", problem)
            continue
        args.append((flag, _flag_value(value)))
    return tuple(sorted(args))


# Common flags under the other engine's name: forwarding them would stop the engine at start-up
# with "unrecognized arguments", so they are refused with the right name.
_OTHER_ENGINE_FLAGS: dict[Engine, dict[str, str]] = {
    Engine.SGLANG: {
        "max-model-len": "context-length",
        "gpu-memory-utilization": "mem-fraction-static",
        "max-num-seqs": "max-running-requests",
        "enforce-eager": "disable-cuda-graph",
    },
    Engine.VLLM: {
        "context-length": "max-model-len",
        "mem-fraction-static": "gpu-memory-utilization",
        "max-running-requests": "max-num-seqs",
        "disable-cuda-graph": "enforce-eager",
    },
}


def _engine_arg_problem(flag: str, value: object, engine: Engine) -> str | None:
    if not _FLAG_NAME.match(flag):
        return "is not a flag name (letters, digits and '-')"
    if flag.startswith("speculative") or flag in {"spec-method", "spec-model", "spec-tokens"}:
        return "speculative settings go in the hp:speculative* keys, not in hp:engineArgs"
    if flag in _RESERVED_FLAGS:
        return "is set by the program from the other hp:* keys; remove it from hp:engineArgs"
    if flag in _OTHER_ENGINE_FLAGS[engine]:
        return (
            f"is not a {engine.value} flag; {engine.value} calls it "
            f"{_OTHER_ENGINE_FLAGS[engine][flag]}"
        )
    if value is None or isinstance(value, list):
        return "needs a string, number, boolean or map value"
    return None


def _flag_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def _image(reader: _Reader) -> str | None:
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


def _optimize(reader: _Reader) -> OptimizeSettings | None:
    """hp:optimize, validated by the same rules as the recommendation provider's check."""
    text = reader.raw("optimize").strip()
    try:
        value = json.loads(text) if text else {}
    except json.JSONDecodeError:
        value = None
    if not isinstance(value, dict):
        reader.fail("optimize", "must be an object such as {goal: latency, modelS3Uri: s3://...}")
        return None
    settings, errors = parse_optimize_settings(value) if value else (None, [])
    for error in errors:
        reader.fail(f"optimize.{error.key}", error.message)
    return settings


def _speculative(
    reader: _Reader, engine: Engine, engine_release: EngineRelease
) -> SpeculativeSpec | None:
    algorithm = reader.string("speculativeAlgorithm").lower()
    draft = reader.string("speculativeModel") or None
    num_tokens = reader.integer("speculativeNumTokens")
    topk = reader.integer("speculativeEagleTopk", optional=True)
    draft_tokens = reader.integer("speculativeNumDraftTokens", optional=True)
    if not algorithm:
        _warn_unused_speculative_keys(reader, draft, topk, draft_tokens)
        return None
    if algorithm not in speculative.ALGORITHMS:
        reader.fail(
            "speculativeAlgorithm",
            f"unknown algorithm {algorithm!r}; valid: "
            f"{', '.join(speculative.ALGORITHMS)} (or remove the key to turn it off)",
        )
        return None
    if draft and not speculative.ALGORITHMS[algorithm].needs_draft:
        reader.warn("speculativeModel", f"ignored: {algorithm} takes no draft model")
        draft = None
    if num_tokens is None:  # already reported as not a number
        num_tokens = speculative.DEFAULT_NUM_TOKENS
    spec = SpeculativeSpec(algorithm, draft, num_tokens, topk, draft_tokens)
    checked = speculative.check(spec, engine, engine_release)
    reader.errors.extend(checked.errors)
    reader.warnings.extend(checked.warnings)
    reader.warnings.extend(speculative.model_warnings(spec, reader.string("model")))
    return spec


def _warn_unused_speculative_keys(
    reader: _Reader, draft: str | None, topk: int | None, draft_tokens: int | None
) -> None:
    for name, value in (
        ("speculativeModel", draft),
        ("speculativeEagleTopk", topk),
        ("speculativeNumDraftTokens", draft_tokens),
    ):
        if value is not None:
            reader.warn(name, "ignored: hp:speculativeAlgorithm is not set, speculation is off")


def from_pulumi() -> Parsed:
    """Read this stack's config through the Pulumi runtime; errors become one RunError."""
    import pulumi
    from pulumi import runtime
    from pulumi.runtime.config import CONFIG

    merged = {**runtime.get_config_env(), **CONFIG.get()}
    values = {k: str(v) for k, v in merged.items() if k.startswith(f"{PROJECT}:")}
    secret_keys = {k for k in values if runtime.is_config_secret(k)}
    secret_keys |= set(runtime.get_config_secret_keys_env())
    try:
        parsed = parse(values, stack=pulumi.get_stack(), secret_keys=secret_keys)
    except ConfigError as error:
        raise pulumi.RunError(f"invalid stack configuration:\n{error}") from None
    for warning in parsed.warnings:
        pulumi.log.warn(str(warning))
    return parsed
