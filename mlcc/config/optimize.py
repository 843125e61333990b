"""The hp:optimize object: validated settings of a SageMaker AI recommendation job.

Pure and light (no boto3, no Pulumi): `mlcc.config.stack` imports it to check hp:optimize. botocore
checks presence and types only, so the API's enums, URI patterns and limits are checked here;
tests compare them with the botocore service model. See docs/optimize.md.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeVar

from mlcc.config.aws import rules as aws_rules

T = TypeVar("T")


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

URI_PATTERN = re.compile(r"(https|s3)://([^/]+)/?(.*)")
MAX_URI_LENGTH = 1024
ROLE_ARN_PATTERN = re.compile(r"arn:aws[a-z\-]*:iam::\d{12}:role/?[a-zA-Z_0-9+=,.@\-_/]+")

DEFAULT_TIMEOUT_MINUTES = 180
MAX_TIMEOUT_MINUTES = 24 * 60

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
    return _s3_checked(text)


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
        return _s3_checked(text)
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
    return _s3_checked(text)


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
    number = whole_number(value)
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


def _s3_checked(text: str) -> tuple[str | None, str | None]:
    """An s3:// URI whose bucket and prefix S3 accepts (https:// URIs pass as they are)."""
    problem = aws_rules.s3_uri_problem(text) if text.startswith("s3://") else None
    return (None, problem) if problem else (text, None)


def _uri_ok(text: str) -> bool:
    match = URI_PATTERN.fullmatch(text)
    return match is not None and len(text) <= MAX_URI_LENGTH and bool(match.group(2))


def whole_number(value: Any) -> int | None:
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
