"""The endpoints of a stack: one from the top-level keys, or one per `hp:endpoints` entry.

Each entry overrides the endpoint keys of `mlcc.config.schema` (spelled without `hp:`); the
top-level keys are its defaults. Every problem names the key its value came from:
`hp:endpoints[1].speculativeModel` for a value the entry set, `hp:speculativeModel` for a
default. `baseline: true` adds a twin `<name>-baseline` without speculation. Pure.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field, replace

from mlcc import engine_contract
from mlcc.config import s3_draft_rules, speculative_keys
from mlcc.config.aws import instances
from mlcc.config.aws import rules as aws_rules
from mlcc.config.operator import rules as operator_rules
from mlcc.config.operator.features import OperatorSettings, parse_operator_settings
from mlcc.config.reader import Reader
from mlcc.config.scaling.autoscaling import Autoscaling
from mlcc.config.schema import ENDPOINT_KEYS, KEYS_BY_NAME
from mlcc.serving import model_hints
from mlcc.serving.engines import Engine, EngineRelease, release
from mlcc.serving.speculative import Problem, SpeculativeSpec

# The single endpoint keeps the Pulumi name it has always had, so existing stacks replace nothing.
SINGLE_RESOURCE_NAME = "endpoint"
BASELINE_SUFFIX = "-baseline"
MAX_NAME_LENGTH = 63
_ENTRY_FIELDS = ("name", *ENDPOINT_KEYS)
_ENDPOINT_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


@dataclass(frozen=True)
class EndpointConfig:
    name: str  # the CR's and the SageMaker endpoint's name
    resource_name: str  # the Pulumi name of its InferenceEndpoint component
    engine: Engine
    engine_release: EngineRelease
    model: str
    instance_type: str
    gpu_count: int
    replicas: int
    engine_args: tuple[tuple[str, str], ...]
    speculative: SpeculativeSpec | None
    autoscaling_raw: object = None  # decoded hp:autoscaling, checked once capacity is known
    autoscaling: Autoscaling | None = None
    baseline: bool = False
    baseline_of: str | None = None  # a twin: the endpoint it mirrors without speculation
    operator: OperatorSettings = field(default_factory=OperatorSettings)  # config/operator.py
    model_revision: str = "main"
    entry_path: str = ""  # "endpoints[1]" for an hp:endpoints entry, "" for the top-level keys
    entry_fields: frozenset[str] = frozenset()  # the keys the entry sets itself
    set_keys: frozenset[str] = frozenset()  # endpoint keys given a value other than the default
    # model_hints.name_hints, reported by preflight only where it read no config (preflight.md)
    name_hints: tuple[tuple[str, Problem], ...] = ()

    def key(self, name: str) -> str:
        """The stack key a problem with `name` (a key or key.path) of this endpoint names."""
        return f"hp:{self.entry_path}.{name}" if self.entry_path else f"hp:{name}"

    def inherited_note(self, name: str) -> str:
        """' (inherited from hp:name)' when an entry's value of `name` is the top-level one."""
        field = re.split(r"[.\[]", name, maxsplit=1)[0]
        if self.entry_path and field not in self.entry_fields and field in self.set_keys:
            return f" (inherited from hp:{field})"
        return ""

    @property
    def most_replicas(self) -> int:
        """The replicas the default instance groups are sized for: autoscaling's ceiling, when
        one is given (up to a HyperPod group's most nodes, botocore's ClusterInstanceCount;
        a larger one is refused), else hp:replicas."""
        raw = self.autoscaling_raw
        ceiling = raw.get("maxReplicas") if isinstance(raw, dict) else None
        most = aws_rules.integer_bounds("ClusterInstanceCount")[1]
        if isinstance(ceiling, int) and not isinstance(ceiling, bool) and 0 < ceiling <= most:
            return max(self.replicas, ceiling)
        return self.replicas


@dataclass(frozen=True)
class ReadEndpoint:
    """An endpoint and the reader that names its keys (for checks made after the infrastructure)."""

    config: EndpointConfig
    reader: Reader


def name_problem(name: str) -> str | None:
    if len(name) > MAX_NAME_LENGTH or not _ENDPOINT_NAME.match(name):
        return (
            f"must be 1-{MAX_NAME_LENGTH} lowercase letters, digits or '-', starting and "
            f"ending with a letter or digit (a Kubernetes and SageMaker name), got {name!r}"
        )
    return None


def parse_endpoints(reader: Reader, single_name: str) -> list[ReadEndpoint]:
    """Every endpoint of the stack, baseline twins included, in a stable order."""
    raw = reader.structured("endpoints")
    if raw in (None, []):
        endpoints = [ReadEndpoint(_endpoint(reader, single_name, SINGLE_RESOURCE_NAME), reader)]
    elif not isinstance(raw, list) or not all(isinstance(e, dict) for e in raw):
        reader.fail("endpoints", "must be a list of maps, each with a name: [{name: a, ...}]")
        return []
    else:
        if reader.is_set("endpointName"):
            reader.warn("endpointName", "ignored: each hp:endpoints entry has its own name")
        endpoints = [_entry(reader, index, entry) for index, entry in enumerate(raw)]
    endpoints += [twin for e in endpoints if (twin := _baseline_twin(e)) is not None]
    _check_unique_names(reader, endpoints)
    return endpoints


def _entry(reader: Reader, index: int, entry: dict[str, object]) -> ReadEndpoint:
    path = f"endpoints[{index}]"
    entry_reader = reader.for_entry(entry, path)
    for unknown in sorted(set(map(str, entry)) - set(_ENTRY_FIELDS)):
        reader.fail(f"{path}.{_shown_name(unknown)}", _unknown_field_message(unknown))
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        reader.fail(f"{path}.name", "is required: the endpoint's name, e.g. llama-eagle3")
        name = f"endpoint-{index}"
    elif problem := name_problem(name.strip()):
        reader.fail(f"{path}.name", problem)
    name = name.strip()
    endpoint = replace(
        _endpoint(entry_reader, name, name),
        entry_path=path,
        entry_fields=frozenset(str(field) for field in entry),
    )
    return ReadEndpoint(endpoint, entry_reader)


def _unknown_field_message(field: str) -> str:
    if field in KEYS_BY_NAME:  # a stack key: one value for every endpoint
        return f"is not an endpoint field; hp:{field} is set once, at the top level"
    guess = difflib.get_close_matches(field, _ENTRY_FIELDS, n=1)
    hint = f"did you mean {guess[0]}?" if guess else f"fields: {', '.join(_ENTRY_FIELDS)}"
    return f"is not an endpoint field; {hint}"


def _baseline_twin(endpoint: ReadEndpoint) -> ReadEndpoint | None:
    config = endpoint.config
    if not config.baseline:
        return None
    name = f"{config.name}{BASELINE_SUFFIX}"
    if len(name) > MAX_NAME_LENGTH:
        endpoint.reader.fail(
            "baseline",
            f"the twin's name {name!r} is longer than {MAX_NAME_LENGTH} characters; "
            f"shorten the endpoint name to {MAX_NAME_LENGTH - len(BASELINE_SUFFIX)} at most",
        )
    if config.speculative is None and not endpoint.reader.is_set("optimize"):
        endpoint.reader.warn("baseline", "speculation is off here, so the twin is the same")
    twin = replace(
        config,
        name=name,
        resource_name=f"{config.resource_name}{BASELINE_SUFFIX}",
        speculative=None,
        baseline=False,
        baseline_of=config.name,
        name_hints=(),
        operator=replace(config.operator, capture=None),  # the twin's traffic is bench traffic
    )
    return ReadEndpoint(twin, endpoint.reader)


def _check_unique_names(reader: Reader, endpoints: list[ReadEndpoint]) -> None:
    """A repeated name is reported where it was set: an entry's name or its baseline twin."""
    seen: set[str] = set()
    for endpoint in endpoints:
        name = endpoint.config.name
        if name in seen:
            key = "baseline" if endpoint.config.baseline_of else "name"
            endpoint.reader.fail(key, f"the endpoint name {name!r} is used more than once")
        seen.add(name)


def _endpoint(reader: Reader, name: str, resource_name: str) -> EndpointConfig:
    engine, engine_release = engine_of(reader)
    operator = parse_operator_settings(reader)
    instance_type, gpu_count = _instance(reader, operator.instance_types)
    spec = speculative_keys.read(reader, engine, engine_release)
    endpoint = EndpointConfig(
        name=name,
        resource_name=resource_name,
        engine=engine,
        engine_release=engine_release,
        model=_model(reader),
        model_revision=speculative_keys.hub_revision(reader, "modelRevision"),
        instance_type=instance_type,
        gpu_count=gpu_count,
        replicas=_replicas(reader),
        engine_args=_engine_args(reader, engine, engine_release.version),
        speculative=spec,
        autoscaling_raw=reader.structured("autoscaling"),
        baseline=reader.boolean("baseline"),
        operator=operator,
        set_keys=frozenset(k for k in ENDPOINT_KEYS if reader.present(k)),
        name_hints=tuple(
            (k, reader.relay(p)) for k, p in model_hints.name_hints(spec, reader.string("model"))
        ),
    )
    speculative_keys.check_schedule(
        reader, spec, engine_release, endpoint.engine_args, endpoint.model
    )
    operator_rules.check(reader, operator, _facts(endpoint))
    s3_draft_rules.check(reader, operator, spec)
    return endpoint


def _facts(endpoint: EndpointConfig) -> operator_rules.EndpointFacts:
    raw = endpoint.autoscaling_raw
    return operator_rules.EndpointFacts(
        name=endpoint.name,
        engine=endpoint.engine,
        engine_version=endpoint.engine_release.version,
        speculative=endpoint.speculative,
        instance_type=endpoint.instance_type,
        gpu_count=endpoint.gpu_count,
        engine_args=dict(endpoint.engine_args),
        autoscaling=raw not in (None, {}, False),
        scales_on_invocations=raw is True
        or (
            isinstance(raw, dict)
            and raw != {}
            and str(raw.get("metric", "invocations")).casefold() == "invocations"
            and "cloudWatchTrigger" not in raw
        ),
    )


def engine_of(reader: Reader) -> tuple[Engine, EngineRelease]:
    name = reader.string("engine").lower()
    if name not in {e.value for e in Engine}:
        reader.fail("engine", f"must be vllm or sglang, got {name!r}")
        name = Engine.VLLM.value
    engine = Engine(name)
    version = reader.string("engineVersion").removeprefix("v")
    problem = engine_contract.version_problem(engine.value, version or None)
    if problem is not None:
        reader.fail("engineVersion", problem)
        version = ""
    return engine, release(engine, version or None)


def _model(reader: Reader) -> str:
    if not reader.present("model"):
        reader.raw("model")  # reports the missing required key
        return ""
    model = reader.string("model")
    problem = (
        "is blank; set a Hugging Face model id (org/name)"
        if not model
        else engine_contract.model_id_problem(model)
    )
    if problem:
        reader.fail("model", problem)
    return model


def _instance(reader: Reader, fallbacks: tuple[str, ...]) -> tuple[str, int]:
    """The instance type (the first of hp:instanceTypes when set) and the GPUs per pod."""
    key = "instanceTypes[0]" if fallbacks else "instanceType"
    instance_type = fallbacks[0] if fallbacks else reader.string("instanceType")
    requested = reader.integer("gpuCount", optional=True)
    # Only the groups' types take pods, and HyperPod groups take only its own types, whatever
    # hp:gpuCount says; operator_rules checks each entry of hp:instanceTypes.
    if problem := aws_rules.hyperpod_type_problem(instance_type):
        if not fallbacks:
            reader.fail(key, problem)
        return instance_type, requested or 1
    available = instances.gpu_count(instance_type)
    if requested is None:
        if available is None:
            reader.fail(
                key,
                f"{instance_type} is not a GPU type this project knows; use a GPU type "
                "(g5, g6, g6e, p4d, p5, ...) or set hp:gpuCount",
            )
        return instance_type, available or 1
    if available is None and not instances.is_gpu_family(instance_type):
        reader.fail(
            key,
            f"{instance_type} has no NVIDIA GPU (HyperPod's GPU types are the ml.g* and ml.p* "
            "families); hp:gpuCount cannot give it one",
        )
        return instance_type, requested
    if not 1 <= requested <= (available or 16):
        limit = f"{instance_type} has {available}" if available else "at most 16"
        reader.fail(
            "gpuCount", f"must be between 1 and {available or 16} ({limit}), got {requested}"
        )
    return instance_type, requested


def _replicas(reader: Reader) -> int:
    replicas = reader.integer("replicas")
    if replicas is not None and not 1 <= replicas <= 100:
        reader.fail("replicas", f"must be between 1 and 100, got {replicas}")
    return replicas or 1


def _engine_args(reader: Reader, engine: Engine, version: str) -> tuple[tuple[str, str], ...]:
    """hp:engineArgs checked against the engine's own flags (engine_contract), plus the
    engine-neutral keys such as hp:maxModelLen written as the engine's flag."""
    values = reader.mapping("engineArgs", "flag names to values")
    repeated = dict(engine_contract.duplicate_flag_problems(engine.value, values, version))
    args: dict[str, str] = {}
    for raw_name, value in values.items():
        problem = repeated.get(raw_name) or engine_contract.engine_arg_problem(
            engine.value, raw_name, value, version
        )
        if problem:
            reader.fail(f"engineArgs.{_shown_name(raw_name)}", problem)
        else:
            args[engine_contract.long_flag(engine.value, raw_name, version)] = _flag_value(value)
    for name, flags in engine_contract.NEUTRAL_SETTINGS.items():
        _add_neutral_setting(reader, engine, version, (name, flags[engine.value]), values, args)
    return tuple(sorted(args.items()))


def _add_neutral_setting(
    reader: Reader,
    engine: Engine,
    version: str,
    setting: tuple[str, str],
    engine_args: dict[str, object],
    args: dict[str, str],
) -> None:
    name, flag = setting
    text = reader.string(name)
    if not text:
        return
    problem = engine_contract.count_problem(text)
    same = [
        f for f in engine_args if engine_contract.neutral_setting(engine.value, f, version) == name
    ]
    if problem:
        reader.fail(name, problem)
    elif same:
        reader.fail(name, f"is also set as hp:engineArgs.{same[0]}; keep one of them")
    else:
        args[flag] = text


def _shown_name(name: str) -> str:
    """A flag name as typed, unless it holds characters that would break the line."""
    return name if name.isprintable() and len(name) <= 60 else repr(name[:60])


def _flag_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return json.dumps(value, separators=(",", ":"))
    return str(value).strip()
