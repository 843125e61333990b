"""SageMaker AI recommendation jobs: settings, names, requests, polling and result parsing.

Pure: no boto3 or Pulumi imports. The dynamic provider (`mlcc.providers.recommendation`) and
`mlcc optimize` do the I/O and call into this module. Facts about the API are in
`shared/reference/aws-recommendation-api.md`; shapes were read from the botocore model, which
the Stubber-based tests validate against. botocore checks presence and types only, so names,
URIs, enums and list limits are validated here.

What the API does NOT give us (reference §6, §7): no draft-model ARN, no token count, no
`SpeculativeDecodingConfig`. A recommendation reports `OptimizationDetails[]` entries of type
`SpeculativeDecoding` / `KernelTuning` whose `OptimizationConfig` is a string map with keys AWS
does not document, plus `DeploymentConfiguration.EnvironmentVariables`. The key lists below are
therefore educated guesses, kept as data so that they are easy to extend; anything we cannot
read becomes "no speculative recommendation" with the reason, never an invented value.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, TypeVar

from mlcc import speculative
from mlcc.engines import Engine, EngineRelease

T = TypeVar("T")

# --------------------------------------------------------------------------------------------
# API enums (botocore sagemaker model, 1.44.8)


class Goal(StrEnum):
    LATENCY = "latency"
    THROUGHPUT = "throughput"
    COST = "cost"


# PerformanceTarget.Constraints[].Metric: there is no "latency" metric; latency is ttft-ms.
GOAL_METRICS: dict[Goal, str] = {
    Goal.LATENCY: "ttft-ms",
    Goal.THROUGHPUT: "throughput",
    Goal.COST: "cost",
}


class JobStatus(StrEnum):
    """AIRecommendationJobStatus, exactly as the API spells it (no IN_PROGRESS, no Pending)."""

    IN_PROGRESS = "InProgress"
    COMPLETED = "Completed"
    FAILED = "Failed"
    STOPPING = "Stopping"
    STOPPED = "Stopped"


TERMINAL_STATUSES = frozenset({JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.STOPPED})

SPECULATIVE_DECODING = "SpeculativeDecoding"
KERNEL_TUNING = "KernelTuning"

_SIZES_8 = ("xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge")
_SIZES_G7 = ("2xlarge", "4xlarge", "8xlarge", "12xlarge", "24xlarge", "48xlarge")
INSTANCE_TYPES: frozenset[str] = frozenset(
    [f"ml.{family}.{size}" for family in ("g5", "g6", "g6e") for size in (*_SIZES_8, "48xlarge")]
    + [f"ml.{family}.{size}" for family in ("g7", "g7e") for size in _SIZES_G7]
    + ["ml.p3.2xlarge", "ml.p3.8xlarge", "ml.p3.16xlarge", "ml.p4d.24xlarge", "ml.p4de.24xlarge"]
    + ["ml.p5.4xlarge", "ml.p5.48xlarge", "ml.p5e.48xlarge", "ml.p5en.48xlarge"]
    + ["ml.p6-b200.48xlarge"]
)
MAX_INSTANCE_TYPES = 3
# Where the dev guide lists the feature (it may spread; so this is a note, not an error).
DOCUMENTED_REGIONS = frozenset(
    {"us-east-1", "us-east-2", "us-west-2", "ap-southeast-1", "ap-northeast-1"}
    | {"eu-central-1", "eu-west-1"}
)

# InferenceSpecification.Framework is LMI | VLLM. There is no SGLang framework: for an SGLang
# stack the job runs without InferenceSpecification, so the service picks its own container; the
# speculative result is still translated for SGLang by the algorithm table.
ENGINE_FRAMEWORKS: dict[str, str | None] = {"vllm": "VLLM", "sglang": None}
NO_FRAMEWORK_NOTE = (
    "the recommendation API has no SGLang framework (InferenceSpecification.Framework is LMI or "
    "VLLM), so the job runs without one and the service chooses the serving container; its "
    "speculative settings are translated to SGLang by hp:speculativeAlgorithm"
)

NAME_PATTERN = re.compile(r"[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}")
MAX_NAME_LENGTH = 63
URI_PATTERN = re.compile(r"(https|s3)://([^/]+)/?(.*)")
MAX_URI_LENGTH = 1024
ROLE_ARN_PATTERN = re.compile(r"arn:aws[a-z\-]*:iam::\d{12}:role/?[a-zA-Z_0-9+=,.@\-_/]+")

DEFAULT_TIMEOUT_MINUTES = 180
MAX_TIMEOUT_MINUTES = 24 * 60
DATASET_CHANNEL = "dataset"
# `benchmark.type` accepts only aiperf (dev guide, workload config page).
DEFAULT_WORKLOAD_SPEC = json.dumps({"benchmark": {"type": "aiperf"}}, separators=(",", ":"))

# --------------------------------------------------------------------------------------------
# Our speculative names and bounds come from the algorithm table (DESIGN.md §3).

ALGORITHMS = tuple(speculative.ALGORITHMS)
ALGORITHMS_NEEDING_DRAFT = frozenset(
    a.name for a in speculative.ALGORITHMS.values() if a.needs_draft
)
MAX_SPECULATIVE_TOKENS = speculative.MAX_NUM_TOKENS

# --------------------------------------------------------------------------------------------
# Settings (the hp:optimize object)

SETTINGS_KEYS = (
    "goal",
    "dataset",
    "modelS3Uri",
    "roleArn",
    "instanceTypes",
    "timeoutMinutes",
    "outputS3Uri",
)


@dataclass(frozen=True)
class FieldError:
    """One bad setting; `key` is the camelCase key inside hp:optimize (or a provider input)."""

    key: str
    message: str

    def render(self, prefix: str = "hp:optimize") -> str:
        return f"{prefix}.{self.key}: {self.message}"


@dataclass(frozen=True)
class OptimizeSettings:
    goal: Goal
    model_s3_uri: str
    role_arn: str
    dataset: str | None = None
    instance_types: tuple[str, ...] = ()
    timeout_minutes: int = DEFAULT_TIMEOUT_MINUTES
    output_s3_uri: str | None = None

    @property
    def metric(self) -> str:
        return GOAL_METRICS[self.goal]

    @property
    def output_location(self) -> str:
        """Where the job writes artifacts: explicit, else next to the model in its bucket."""
        if self.output_s3_uri:
            return self.output_s3_uri
        bucket = URI_PATTERN.fullmatch(self.model_s3_uri)
        assert bucket is not None  # validated at construction by parse_optimize_settings
        return f"s3://{bucket.group(2)}/mlcc-recommendations/"

    def to_mapping(self) -> dict[str, Any]:
        """The camelCase object form (hp:optimize), the inverse of parse_optimize_settings."""
        out: dict[str, Any] = {
            "goal": self.goal.value,
            "modelS3Uri": self.model_s3_uri,
            "roleArn": self.role_arn,
            "instanceTypes": list(self.instance_types),
            "timeoutMinutes": self.timeout_minutes,
        }
        if self.dataset is not None:
            out["dataset"] = self.dataset
        if self.output_s3_uri is not None:
            out["outputS3Uri"] = self.output_s3_uri
        return out


def parse_optimize_settings(
    raw: Mapping[str, Any],
) -> tuple[OptimizeSettings | None, list[FieldError]]:
    """Validate the hp:optimize object; returns settings or every error found, never both."""
    errors = [
        FieldError(key, f"unknown key; valid keys are {', '.join(SETTINGS_KEYS)}")
        for key in raw
        if key not in SETTINGS_KEYS
    ]
    goal = _collect(errors, "goal", validate_goal(raw.get("goal")))
    model = _collect(errors, "modelS3Uri", validate_model_s3_uri(raw.get("modelS3Uri")))
    role = _collect(errors, "roleArn", validate_role_arn(raw.get("roleArn")))
    dataset = _collect(errors, "dataset", validate_dataset(raw.get("dataset")))
    types = _collect(errors, "instanceTypes", validate_instance_types(raw.get("instanceTypes")))
    timeout = _collect(errors, "timeoutMinutes", validate_timeout(raw.get("timeoutMinutes")))
    output = _collect(errors, "outputS3Uri", validate_output_s3_uri(raw.get("outputS3Uri")))
    if errors:
        return None, errors
    assert goal is not None and model is not None and role is not None
    assert types is not None and timeout is not None
    settings = OptimizeSettings(goal, model, role, dataset, types, timeout, output)
    return settings, []


def _collect(errors: list[FieldError], key: str, result: tuple[T, str | None]) -> T:
    value, message = result
    if message is not None:
        errors.append(FieldError(key, message))
    return value


def validate_goal(value: Any) -> tuple[Goal | None, str | None]:
    valid = ", ".join(g.value for g in Goal)
    if value is None:
        return None, f"required; one of {valid}"
    try:
        return Goal(str(value).strip().lower()), None
    except ValueError:
        return None, f"unknown goal {value!r}; one of {valid} (latency is sent as ttft-ms)"


def validate_model_s3_uri(value: Any) -> tuple[str | None, str | None]:
    if value is None or value == "":
        return None, (
            "required: the s3:// prefix of the model's Hugging Face checkpoint (safetensors), "
            "e.g. s3://my-bucket/models/Llama-3.1-8B-Instruct/"
        )
    text = str(value)
    if not text.startswith("s3://") or not _uri_ok(text):
        return None, (
            f"{text!r} is not an s3:// URI; the recommendation job reads the model checkpoint "
            "from S3 (upload the Hugging Face safetensors files to s3://BUCKET/PREFIX/)"
        )
    return text, None


def validate_role_arn(value: Any) -> tuple[str | None, str | None]:
    example = "arn:aws:iam::123456789012:role/SageMakerRecommendation"
    if value is None or value == "":
        return None, f"required: the IAM role the job runs as, e.g. {example}"
    text = str(value)
    if len(text) > 2048 or not ROLE_ARN_PATTERN.fullmatch(text):
        return None, f"{text!r} is not an IAM role ARN (expected e.g. {example})"
    return text, None


def validate_dataset(value: Any) -> tuple[str | None, str | None]:
    if value is None or value == "":
        return None, None
    text = str(value)
    if _uri_ok(text):
        return text, None
    if text.startswith("hf://"):
        kind = "a Hugging Face reference"
    elif "://" in text:
        kind = f"a {text.split('://', 1)[0]}:// URI"
    else:
        kind = "a bare name (a registered or Hub dataset name)"
    return None, (
        f"{text!r} is {kind}, but the recommendation API accepts only s3:// or https:// URIs "
        "for the dataset (CreateAIWorkloadConfig DatasetConfig S3Uri); stage it first, e.g. "
        "`huggingface-cli download --repo-type dataset ORG/NAME --local-dir data && "
        "aws s3 cp --recursive data s3://BUCKET/datasets/NAME/`, then set that s3:// URI"
    )


def validate_output_s3_uri(value: Any) -> tuple[str | None, str | None]:
    if value is None or value == "":
        return None, None
    text = str(value)
    if not _uri_ok(text):
        return None, f"{text!r} is not an s3:// or https:// URI for the job's output"
    return text, None


def validate_instance_types(value: Any) -> tuple[tuple[str, ...] | None, str | None]:
    if value is None:
        return (), None
    if isinstance(value, str) or not isinstance(value, Sequence):
        return None, "must be a list of instance types, e.g. [ml.g6e.2xlarge, ml.g5.12xlarge]"
    types = tuple(str(item) for item in value)
    if len(types) > MAX_INSTANCE_TYPES:
        return None, f"at most {MAX_INSTANCE_TYPES} instance types per job, got {len(types)}"
    unknown = [t for t in types if t not in INSTANCE_TYPES]
    if unknown:
        return None, (
            f"not accepted by the recommendation API: {', '.join(unknown)}; valid are "
            f"{', '.join(sorted(INSTANCE_TYPES))}"
        )
    if len(set(types)) != len(types):
        return None, "lists an instance type twice"
    return types, None


def validate_timeout(value: Any) -> tuple[int | None, str | None]:
    if value is None:
        return DEFAULT_TIMEOUT_MINUTES, None
    number = _as_int(value)
    if number is None or not 1 <= number <= MAX_TIMEOUT_MINUTES:
        return None, (
            f"{value!r} is not a whole number of minutes between 1 and {MAX_TIMEOUT_MINUTES} "
            "(jobs take tens of minutes to hours)"
        )
    return number, None


def framework_for_engine(engine: str) -> tuple[str | None, str | None]:
    """(InferenceSpecification.Framework or None, a note explaining a missing framework)."""
    key = engine.strip().lower()
    if key not in ENGINE_FRAMEWORKS:
        raise ValueError(f"unknown engine {engine!r}; one of {', '.join(ENGINE_FRAMEWORKS)}")
    framework = ENGINE_FRAMEWORKS[key]
    return framework, (None if framework else NO_FRAMEWORK_NOTE)


def _uri_ok(text: str) -> bool:
    match = URI_PATTERN.fullmatch(text)
    return match is not None and len(text) <= MAX_URI_LENGTH and bool(match.group(2))


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    if isinstance(value, str):
        text = value.strip()
        if re.fullmatch(r"[+-]?\d+", text):
            return int(text)
        if re.fullmatch(r"[+-]?\d+\.0*", text):
            return int(float(text))
    return None


# --------------------------------------------------------------------------------------------
# Names


def is_valid_name(name: str) -> bool:
    """AIRecommendationJobName / AIWorkloadConfigName: <= 63, alphanumerics and inner hyphens."""
    return len(name) <= MAX_NAME_LENGTH and NAME_PATTERN.fullmatch(name) is not None


def build_name(base: str, salt: str, hash_length: int = 10) -> str:
    """A valid name: `base` cleaned and truncated, then a hash of base and salt.

    The same (base, salt) always gives the same name (so an interrupted run can find its job
    again); different salts give different names. Invalid characters become hyphens.
    """
    digest = hashlib.sha256(f"{base}\0{salt}".encode()).hexdigest()[:hash_length]
    cleaned = re.sub(r"[^a-zA-Z0-9-]+", "-", base).strip("-")
    room = MAX_NAME_LENGTH - hash_length - 1
    stem = cleaned[:room].rstrip("-")
    return f"{stem}-{digest}" if stem else f"mlcc-{digest}"


# --------------------------------------------------------------------------------------------
# Requests (shapes validated by the Stubber tests)


def workload_config_request(name: str, settings: OptimizeSettings) -> dict[str, Any]:
    request: dict[str, Any] = {
        "AIWorkloadConfigName": name,
        "AIWorkloadConfigs": {"WorkloadSpec": {"Inline": DEFAULT_WORKLOAD_SPEC}},
    }
    if settings.dataset:
        request["DatasetConfig"] = {
            "InputDataConfig": [
                {
                    "ChannelName": DATASET_CHANNEL,
                    "DataSource": {"S3DataSource": {"S3Uri": settings.dataset}},
                }
            ]
        }
    return request


def recommendation_job_request(
    job_name: str, workload_config_name: str, settings: OptimizeSettings, engine: str
) -> dict[str, Any]:
    framework, _ = framework_for_engine(engine)
    request: dict[str, Any] = {
        "AIRecommendationJobName": job_name,
        "ModelSource": {"S3": {"S3Uri": settings.model_s3_uri}},
        "OutputConfig": {"S3OutputLocation": settings.output_location},
        "AIWorkloadConfigIdentifier": workload_config_name,
        "PerformanceTarget": {"Constraints": [{"Metric": settings.metric}]},
        "RoleArn": settings.role_arn,
        "OptimizeModel": True,
    }
    if framework:
        request["InferenceSpecification"] = {"Framework": framework}
    if settings.instance_types:
        request["ComputeSpec"] = {"InstanceTypes": list(settings.instance_types)}
    return request


# --------------------------------------------------------------------------------------------
# Parsing DescribeAIRecommendationJob
#
# GUESSWORK, by design: AWS documents neither the OptimizationConfig keys nor the environment
# variables of a recommendation. Keys are compared after removing case and separators
# ("NumSpeculativeTokens" == "num_speculative_tokens" == "num-speculative-tokens").

ALGORITHM_KEYS = (
    "method",
    "algorithm",
    "technique",
    "speculative_method",
    "speculative_algorithm",
    "speculative_decoding_method",
    "speculative_decoding_algorithm",
    "speculative_technique",
    "decoding_algorithm",
)
DRAFT_MODEL_KEYS = (
    "draft_model",
    "draft_model_id",
    "draft_model_path",
    "speculative_model",
    "speculative_draft_model",
    "speculative_draft_model_path",
    "speculative_draft_model_id",
    "model",
    "model_id",
)
NUM_TOKENS_KEYS = (
    "num_speculative_tokens",
    "num_tokens",
    "speculative_num_steps",
    "speculative_num_tokens",
    "num_speculative_steps",
    "speculative_length",
    "num_steps",
)
# Environment variables whose value is a whole speculative config as JSON (vLLM style).
JSON_CONFIG_ENV_VARS = (
    "SM_VLLM_SPECULATIVE_CONFIG",
    "OPTION_SPECULATIVE_CONFIG",
    "VLLM_SPECULATIVE_CONFIG",
    "SPECULATIVE_CONFIG",
)
# Prefixes of serving-container env vars (AWS DLC, LMI, ours) removed before key matching.
# Only variables whose name mentions SPECULATIVE are read: SM_VLLM_MODEL is the target model.
ENV_PREFIXES = ("SM_VLLM_", "SM_SGLANG_", "OPTION_", "OPTION.", "HP_", "VLLM_", "SGLANG_")

# Method values as engines and AWS spell them -> our names (compared like keys).
ALGORITHM_ALIASES: dict[str, str] = {
    "eagle": "eagle",
    "eagle1": "eagle",
    "eagle2": "eagle2",
    "eagle3": "eagle3",
    "draft_model": "draft-model",
    "draft": "draft-model",
    "standalone": "draft-model",
    "draft_model_speculative_decoding": "draft-model",
    "ngram": "ngram",
    "prompt_lookup": "ngram",
    "mtp": "mtp",
    "nextn": "mtp",
    "deepseek_mtp": "mtp",
}
SECRET_NAME_PARTS = ("TOKEN", "SECRET", "PASSWORD", "CREDENTIAL", "API_KEY", "ACCESS_KEY")
REDACTED = "<redacted>"

HUB_NON_MODEL_PATHS = frozenset({"datasets", "spaces", "collections", "docs", "api"})
HF_URL_PATTERN = re.compile(
    r"https://(?:www\.)?(?:huggingface\.co|hf\.co)/"
    r"(?P<id>[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*)(?:/(?:tree|resolve)/.*)?/?"
)


def canonical_key(key: str) -> str:
    return re.sub(r"[^a-z0-9]", "", key.lower())


_ALGORITHM_KEYS = frozenset(canonical_key(k) for k in ALGORITHM_KEYS)
_DRAFT_MODEL_KEYS = frozenset(canonical_key(k) for k in DRAFT_MODEL_KEYS)
_NUM_TOKENS_KEYS = frozenset(canonical_key(k) for k in NUM_TOKENS_KEYS)
_ALGORITHM_ALIASES = {canonical_key(k): v for k, v in ALGORITHM_ALIASES.items()}


@dataclass(frozen=True)
class ExpectedMetric:
    metric: str
    value: str
    stat: str | None = None
    unit: str | None = None

    def render(self) -> str:
        stat = f" ({self.stat})" if self.stat else ""
        unit = f" {self.unit}" if self.unit else ""
        return f"{self.metric}{stat}: {self.value}{unit}"


@dataclass(frozen=True)
class SpeculativeRecommendation:
    """What one recommendation says about speculative decoding, in our terms."""

    job_name: str
    job_arn: str
    status: str
    algorithm: str | None = None
    draft_model: str | None = None
    num_tokens: int | None = None
    optimization_types: tuple[str, ...] = ()
    optimization_config: Mapping[str, str] = field(default_factory=dict)
    environment_variables: Mapping[str, str] = field(default_factory=dict)
    description: str | None = None
    expected_performance: tuple[ExpectedMetric, ...] = ()
    instance_type: str | None = None
    model_package_arn: str | None = None
    artifact_uris: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    reason: str | None = None

    @property
    def usable(self) -> bool:
        """True when the stack can apply it: a known algorithm and a Hub draft if it needs one."""
        return self.reason is None

    def summary(self) -> str:
        if not self.usable:
            return str(self.reason)
        parts = [f"algorithm={self.algorithm}"]
        if self.draft_model:
            parts.append(f"draft={self.draft_model}")
        if self.num_tokens is not None:
            parts.append(f"tokens={self.num_tokens}")
        return " ".join(parts)

    def outputs(self) -> dict[str, Any]:
        """Plain, JSON-compatible form (provider outputs, `mlcc optimize --show --json`)."""
        return {
            "job_name": self.job_name,
            "job_arn": self.job_arn,
            "status": self.status,
            "algorithm": self.algorithm,
            "draft_model": self.draft_model,
            "num_tokens": self.num_tokens,
            "usable": self.usable,
            "reason": self.reason,
            "notes": list(self.notes),
            "optimization_types": list(self.optimization_types),
            "optimization_config": dict(self.optimization_config),
            "environment_variables": dict(self.environment_variables),
            "description": self.description,
            "expected_performance": [
                {"metric": m.metric, "value": m.value, "stat": m.stat, "unit": m.unit}
                for m in self.expected_performance
            ],
            "instance_type": self.instance_type,
            "model_package_arn": self.model_package_arn,
            "artifact_uris": list(self.artifact_uris),
        }


@dataclass(frozen=True)
class _Found:
    """Raw speculative values found in one source, before normalisation."""

    algorithm: str | None = None
    draft_model: str | None = None
    num_tokens: str | None = None

    def merged_over(self, fallback: _Found) -> _Found:
        return _Found(
            self.algorithm or fallback.algorithm,
            self.draft_model or fallback.draft_model,
            self.num_tokens or fallback.num_tokens,
        )

    @property
    def empty(self) -> bool:
        return not (self.algorithm or self.draft_model or self.num_tokens)


def parse_recommendations(response: Mapping[str, Any]) -> list[SpeculativeRecommendation]:
    """Every recommendation of a DescribeAIRecommendationJob response, in the API's order."""
    job = _job_identity(response)
    return [
        _parse_one(job, item)
        for item in _as_list(response.get("Recommendations"))
        if isinstance(item, Mapping)
    ]


def top_recommendation(response: Mapping[str, Any]) -> SpeculativeRecommendation:
    """Recommendations[0] (the docs deploy the first; there is no rank field), or why none."""
    name, arn, status = _job_identity(response)
    if status != JobStatus.COMPLETED:
        failure = _as_str(response.get("FailureReason"))
        detail = f": {failure}" if failure else ""
        return SpeculativeRecommendation(
            name, arn, status, reason=f"no speculative recommendation: job is {status}{detail}"
        )
    recommendations = parse_recommendations(response)
    if not recommendations:
        return SpeculativeRecommendation(
            name,
            arn,
            status,
            reason="no speculative recommendation: the job returned no recommendations",
        )
    return recommendations[0]


def _job_identity(response: Mapping[str, Any]) -> tuple[str, str, str]:
    return (
        _as_str(response.get("AIRecommendationJobName")) or "",
        _as_str(response.get("AIRecommendationJobArn")) or "",
        _as_str(response.get("AIRecommendationJobStatus")) or "",
    )


def _parse_one(job: tuple[str, str, str], item: Mapping[str, Any]) -> SpeculativeRecommendation:
    details = [d for d in _as_list(item.get("OptimizationDetails")) if isinstance(d, Mapping)]
    types = tuple(_as_str(d.get("OptimizationType")) or "" for d in details)
    speculative = [d for d in details if d.get("OptimizationType") == SPECULATIVE_DECODING]
    config = _string_map(speculative[0].get("OptimizationConfig")) if speculative else {}
    deployment = _as_mapping(item.get("DeploymentConfiguration"))
    env = _string_map(deployment.get("EnvironmentVariables"))
    found = _find_in_map(config).merged_over(_find_in_env(env))
    base = SpeculativeRecommendation(
        *job,
        optimization_types=types,
        optimization_config=config,
        environment_variables=redact_environment(env),
        description=_as_str(item.get("RecommendationDescription")),
        expected_performance=_expected_performance(item.get("ExpectedPerformance")),
        instance_type=_as_str(deployment.get("InstanceType")),
        model_package_arn=_as_str(_as_mapping(item.get("ModelDetails")).get("ModelPackageArn")),
        artifact_uris=tuple(
            uri
            for channel in _as_list(deployment.get("S3"))
            if (uri := _as_str(_as_mapping(channel).get("Uri")))
        ),
    )
    return _interpret(base, found, has_detail=bool(speculative))


def _interpret(
    base: SpeculativeRecommendation, found: _Found, *, has_detail: bool
) -> SpeculativeRecommendation:
    if found.empty:
        return _replace(base, reason=_nothing_found_reason(base, has_detail))
    notes: list[str] = []
    algorithm = normalise_algorithm(found.algorithm)
    num_tokens = _parse_num_tokens(found.num_tokens, notes)
    draft, draft_problem = normalise_draft_model(found.draft_model)
    if algorithm is None:
        what = repr(found.algorithm) if found.algorithm else "no method key"
        unknown = (
            f"no speculative recommendation: unrecognised speculative method ({what}); "
            f"known methods map to {', '.join(ALGORITHMS)}"
        )
        return _replace(base, draft_model=draft, num_tokens=num_tokens, reason=unknown)
    if algorithm not in ALGORITHMS_NEEDING_DRAFT:
        if found.draft_model:
            notes.append(f"{algorithm} takes no draft model; ignored {found.draft_model!r}")
        return _replace(base, algorithm=algorithm, num_tokens=num_tokens, notes=tuple(notes))
    reason: str | None = None
    if draft is None:
        why = draft_problem or "the recommendation names no draft model"
        if base.artifact_uris:
            why += f" (its artifacts, possibly a trained draft: {', '.join(base.artifact_uris)})"
        reason = f"no speculative recommendation: {algorithm} needs a draft model and {why}"
    return _replace(
        base,
        algorithm=algorithm,
        draft_model=draft,
        num_tokens=num_tokens,
        notes=tuple(notes),
        reason=reason,
    )


def _nothing_found_reason(base: SpeculativeRecommendation, has_detail: bool) -> str:
    if has_detail:
        keys = ", ".join(sorted(base.optimization_config)) or "none"
        return (
            "no speculative recommendation: the SpeculativeDecoding entry has no recognisable "
            f"method, draft model or token count (OptimizationConfig keys: {keys})"
        )
    applied = ", ".join(t for t in base.optimization_types if t) or "none"
    return (
        "no speculative recommendation: the top recommendation applies no SpeculativeDecoding "
        f"optimization (applied: {applied})"
    )


def _replace(base: SpeculativeRecommendation, **changes: Any) -> SpeculativeRecommendation:
    return replace(base, **changes)


def normalise_algorithm(value: str | None) -> str | None:
    """Map an engine/AWS method name to one of ALGORITHMS, or None when unknown."""
    if not value:
        return None
    return _ALGORITHM_ALIASES.get(canonical_key(value))


def normalise_draft_model(value: str | None) -> tuple[str | None, str | None]:
    """(Hugging Face id or None, why the value is not usable). Accepts `org/name` or a Hub URL."""
    if not value:
        return None, None
    text = value.strip()
    url = HF_URL_PATTERN.fullmatch(text)
    if url and _is_hub_model_id(url.group("id")):
        return url.group("id"), None
    if speculative.is_hf_id(text):
        return text, None
    if "://" in text:
        scheme = text.split("://", 1)[0]
        where = f"a {scheme}:// URI"
    elif text.startswith("/"):
        where = "a path inside the service's container"
    elif text.startswith("arn:"):
        where = "an ARN"
    else:
        where = "not of the form org/name"
    return None, (
        f"the draft model {text!r} is {where}, not a Hugging Face model id; the endpoint loads "
        "drafts from the Hub (or a path baked into the image), so publish the draft to the Hub "
        "and set hp:speculativeModel yourself"
    )


def _is_hub_model_id(candidate: str) -> bool:
    # huggingface.co/datasets/... and /spaces/... are not models.
    return speculative.is_hf_id(candidate) and candidate.split("/")[0] not in HUB_NON_MODEL_PATHS


def _parse_num_tokens(value: str | None, notes: list[str]) -> int | None:
    if value is None:
        return None
    number = _as_int(value)
    if number is None or not 1 <= number <= MAX_SPECULATIVE_TOKENS:
        notes.append(
            f"ignored speculative token count {value!r} (not an integer in "
            f"1..{MAX_SPECULATIVE_TOKENS}); the stack default applies"
        )
        return None
    return number


def _find_in_map(values: Mapping[str, str]) -> _Found:
    """Recognised keys in one string map; values that are JSON objects are searched too."""
    found = _Found()
    for key, value in values.items():
        nested = _json_object(value)
        if nested is not None:
            found = found.merged_over(_find_in_map(nested))
            continue
        found = _Found(
            _first(found.algorithm, key, value, _ALGORITHM_KEYS),
            _first(found.draft_model, key, value, _DRAFT_MODEL_KEYS),
            _first(found.num_tokens, key, value, _NUM_TOKENS_KEYS),
        )
    return found


def _find_in_env(env: Mapping[str, str]) -> _Found:
    found = _Found()
    for name in JSON_CONFIG_ENV_VARS:
        nested = _json_object(env.get(name, ""))
        if nested is not None:
            found = found.merged_over(_find_in_map(nested))
    speculative = {
        _strip_env_prefix(name): value
        for name, value in env.items()
        if "SPECULATIVE" in name.upper() and name not in JSON_CONFIG_ENV_VARS
    }
    return found.merged_over(_find_in_map(speculative))


def _strip_env_prefix(name: str) -> str:
    for prefix in ENV_PREFIXES:
        if name.upper().startswith(prefix):
            return name[len(prefix) :]
    return name


def _first(current: str | None, key: str, value: str, keys: frozenset[str]) -> str | None:
    if current:
        return current
    if canonical_key(key) not in keys:
        return None
    return value.strip() or None


def _json_object(value: str) -> dict[str, str] | None:
    if not value.lstrip().startswith("{"):
        return None
    try:
        parsed = json.loads(value)
    except ValueError:
        return None
    if not isinstance(parsed, dict):
        return None
    texts = {str(k): _scalar_text(v) for k, v in parsed.items()}
    return {k: v for k, v in texts.items() if v is not None}


def _scalar_text(value: Any) -> str | None:
    """JSON scalars as the strings an OptimizationConfig would hold; nested objects as JSON."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (str, int, float)):
        return str(value)
    if isinstance(value, dict):
        return json.dumps(value)
    return None


def redact_environment(env: Mapping[str, str]) -> dict[str, str]:
    """Copy of env with values of secret-looking names replaced (outputs end up in state)."""
    return {
        name: REDACTED if any(part in name.upper() for part in SECRET_NAME_PARTS) else value
        for name, value in env.items()
    }


def _expected_performance(value: Any) -> tuple[ExpectedMetric, ...]:
    metrics = []
    for entry in _as_list(value):
        entry_map = _as_mapping(entry)
        metric, number = _as_str(entry_map.get("Metric")), _as_str(entry_map.get("Value"))
        if metric and number is not None:
            metrics.append(
                ExpectedMetric(
                    metric, number, _as_str(entry_map.get("Stat")), _as_str(entry_map.get("Unit"))
                )
            )
    return tuple(metrics)


def _as_mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else []


def _as_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _string_map(value: Any) -> dict[str, str]:
    return {str(k): v for k, v in _as_mapping(value).items() if isinstance(v, str)}


# --------------------------------------------------------------------------------------------
# Polling


class RecommendationJobError(Exception):
    """A recommendation job did not produce a result."""


class JobFailed(RecommendationJobError):
    def __init__(self, job_name: str, status: str, reason: str | None) -> None:
        self.job_name, self.status, self.reason = job_name, status, reason
        if reason:
            detail = reason
        elif status == JobStatus.STOPPED:
            detail = "it was stopped before finishing (StopAIRecommendationJob)"
        else:
            detail = "the API gave no FailureReason"
        super().__init__(f"recommendation job {job_name} ended {status}: {detail}")


class JobTimedOut(RecommendationJobError):
    def __init__(self, job_name: str, minutes: float, last_status: str) -> None:
        self.job_name, self.minutes, self.last_status = job_name, minutes, last_status
        super().__init__(
            f"recommendation job {job_name} was still {last_status} after {minutes:g} minutes; "
            "it has been stopped. Raise hp:optimize.timeoutMinutes and run again"
        )


@dataclass(frozen=True)
class Backoff:
    """Capped exponential backoff: initial, initial*factor, ... up to maximum seconds."""

    initial_seconds: float = 15.0
    factor: float = 2.0
    maximum_seconds: float = 120.0

    def delays(self) -> Iterable[float]:
        delay = self.initial_seconds
        while True:
            yield delay
            delay = min(delay * self.factor, self.maximum_seconds)


@dataclass(frozen=True)
class Progress:
    job_name: str
    status: str
    elapsed_seconds: float

    def render(self) -> str:
        minutes, seconds = divmod(int(self.elapsed_seconds), 60)
        return f"{self.job_name}: {self.status} ({minutes}m{seconds:02d}s elapsed)"


def wait_for_job(
    job_name: str,
    describe: Callable[[], Mapping[str, Any]],
    *,
    timeout_seconds: float,
    clock: Callable[[], float],
    sleep: Callable[[float], None],
    stop: Callable[[], None],
    backoff: Backoff = Backoff(),
    on_progress: Callable[[Progress], None] | None = None,
) -> Mapping[str, Any]:
    """Describe until the status is terminal and return that response.

    On timeout, call `stop` (the job keeps costing money otherwise) and raise JobTimedOut.
    KeyboardInterrupt passes through untouched so that a CLI can leave the job running.
    """
    start = clock()
    delays = iter(backoff.delays())
    while True:
        response = describe()
        status = _as_str(response.get("AIRecommendationJobStatus")) or "unknown"
        elapsed = clock() - start
        if on_progress is not None:
            on_progress(Progress(job_name, status, elapsed))
        if status in TERMINAL_STATUSES:
            return response
        remaining = timeout_seconds - elapsed
        if remaining <= 0:
            stop()
            raise JobTimedOut(job_name, timeout_seconds / 60, status)
        sleep(min(next(delays), remaining))


def require_completed(response: Mapping[str, Any]) -> Mapping[str, Any]:
    """The response when Completed; JobFailed (with the API's FailureReason) otherwise."""
    name, _, status = _job_identity(response)
    if status != JobStatus.COMPLETED:
        raise JobFailed(name, status, _as_str(response.get("FailureReason")))
    return response


# --------------------------------------------------------------------------------------------
# Feeding the stack: explicit hp:speculative* keys win over a recommendation.


NOT_RUN_MESSAGE = (
    "the recommendation job has not run yet (it runs at `pulumi up`); until it has, the endpoint "
    "is shown without speculation, or set hp:speculativeAlgorithm to choose yourself"
)


class SpeculativeSource(StrEnum):
    EXPLICIT = "explicit"
    RECOMMENDATION = "recommendation"
    NONE = "none"


@dataclass(frozen=True)
class SpeculativeChoice:
    spec: speculative.SpeculativeSpec | None
    source: SpeculativeSource
    # Why a recommendation was not used (shown as a warning), or None.
    message: str | None = None


def choose_speculative(
    explicit: speculative.SpeculativeSpec | None,
    recommended: Mapping[str, Any] | None,
    engine: Engine,
    release: EngineRelease,
) -> SpeculativeChoice:
    """What the endpoint runs: hp:speculativeAlgorithm (and its keys) when set, else a usable
    recommendation that the engine accepts, else no speculation.

    `recommended` holds the SpeculativeRecommendation outputs (usable, algorithm, draft_model,
    num_tokens, reason). Precedence is all-or-nothing: mixing an explicit algorithm with a
    recommended draft could pair a draft with the wrong method.
    """
    if explicit is not None:
        return SpeculativeChoice(explicit, SpeculativeSource.EXPLICIT)
    if recommended is None:
        return SpeculativeChoice(None, SpeculativeSource.NONE)
    if recommended.get("usable") is None:  # offline plan: the job has not run
        return SpeculativeChoice(None, SpeculativeSource.NONE, NOT_RUN_MESSAGE)
    algorithm = recommended.get("algorithm")
    if not recommended.get("usable") or algorithm not in speculative.ALGORITHMS:
        reason = recommended.get("reason") or "no speculative recommendation"
        return SpeculativeChoice(None, SpeculativeSource.NONE, f"{reason}; speculation stays off")
    num_tokens = _as_int(recommended.get("num_tokens")) or speculative.DEFAULT_NUM_TOKENS
    draft = recommended.get("draft_model") if algorithm in ALGORITHMS_NEEDING_DRAFT else None
    spec = speculative.SpeculativeSpec(str(algorithm), draft or None, num_tokens)
    errors = speculative.check(spec, engine, release).errors
    if errors:
        problems = "; ".join(str(e) for e in errors)
        return SpeculativeChoice(
            None,
            SpeculativeSource.NONE,
            f"the recommendation ({spec.algorithm}) does not fit this stack: {problems}; "
            "speculation stays off",
        )
    return SpeculativeChoice(spec, SpeculativeSource.RECOMMENDATION)
