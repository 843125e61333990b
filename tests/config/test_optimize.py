"""hp:optimize validation (pure, no AWS)."""

from __future__ import annotations

import pytest
from recommendation_stubs import DATASET_S3_URI, MODEL_S3_URI, ROLE_ARN

from mlcc.config import optimize as rec

VALID = {"goal": "latency", "modelS3Uri": MODEL_S3_URI, "roleArn": ROLE_ARN}


def errors_for(**changes: object) -> dict[str, str]:
    raw = {**VALID, **changes}
    settings, errors = rec.parse_optimize_settings({k: v for k, v in raw.items() if v is not None})
    assert (settings is None) == bool(errors)
    return {e.key: e.message for e in errors}


@pytest.mark.parametrize(
    ("goal", "metric"), [("latency", "ttft-ms"), ("throughput", "throughput"), ("COST", "cost")]
)
def test_goal_maps_to_the_api_metric(goal: str, metric: str) -> None:
    settings, _ = rec.parse_optimize_settings({**VALID, "goal": goal})
    assert settings is not None
    assert settings.metric == metric


def test_minimal_settings_take_documented_defaults() -> None:
    settings, errors = rec.parse_optimize_settings(VALID)
    assert errors == []
    assert settings == rec.OptimizeSettings(rec.Goal.LATENCY, MODEL_S3_URI, ROLE_ARN)
    assert settings.timeout_minutes == rec.DEFAULT_TIMEOUT_MINUTES
    assert settings.output_location == "s3://models-bucket/mlcc-recommendations/"


def test_unknown_goal_lists_the_valid_ones() -> None:
    assert "latency, throughput, cost" in errors_for(goal="fast")["goal"]


@pytest.mark.parametrize("dataset", ["hf://datasets/anon8231489123/ShareGPT", "hf://org/name"])
def test_hf_dataset_is_rejected_with_how_to_stage_it(dataset: str) -> None:
    message = errors_for(dataset=dataset)["dataset"]
    assert "Hugging Face reference" in message
    assert "accepts only s3:// or https://" in message
    assert "aws s3 cp" in message


def test_registered_dataset_name_is_rejected() -> None:
    message = errors_for(dataset="sharegpt-v3")["dataset"]
    assert "bare name" in message and "only s3:// or https://" in message


@pytest.mark.parametrize(
    "dataset", [DATASET_S3_URI, "https://example.com/data/prompts.jsonl", "s3://bucket"]
)
def test_s3_and_https_datasets_are_accepted(dataset: str) -> None:
    assert errors_for(dataset=dataset) == {}


@pytest.mark.parametrize(
    "uri", ["https://bucket.s3.amazonaws.com/model/", "hf://meta-llama/Llama-3.1-8B", "/models"]
)
def test_model_must_be_an_s3_uri(uri: str) -> None:
    assert "not an s3:// URI" in errors_for(modelS3Uri=uri)["modelS3Uri"]


def test_missing_required_keys_are_each_reported() -> None:
    settings, errors = rec.parse_optimize_settings({})
    assert settings is None
    assert {e.key for e in errors} == {"goal", "modelS3Uri", "roleArn"}
    assert all("required" in e.message for e in errors)


@pytest.mark.parametrize(
    "arn",
    ["arn:aws:iam::123456789012:user/alice", "role/SageMaker", "arn:aws:iam::12345:role/x"],
)
def test_role_must_be_an_iam_role_arn(arn: str) -> None:
    assert "not an IAM role ARN" in errors_for(roleArn=arn)["roleArn"]


def test_at_most_three_instance_types() -> None:
    four = ["ml.g5.xlarge", "ml.g5.2xlarge", "ml.g6.xlarge", "ml.g6e.xlarge"]
    assert "at most 3" in errors_for(instanceTypes=four)["instanceTypes"]


def test_instance_types_come_from_the_api_enum() -> None:
    message = errors_for(instanceTypes=["ml.g5.xlarge", "ml.g4dn.xlarge", "g6e.2xlarge"])[
        "instanceTypes"
    ]
    assert "ml.g4dn.xlarge, g6e.2xlarge" in message


def test_instance_types_must_be_a_list() -> None:
    assert "must be a list" in errors_for(instanceTypes="ml.g5.xlarge")["instanceTypes"]


def test_instance_type_enum_matches_the_botocore_model() -> None:
    import boto3

    model = boto3.client("sagemaker", region_name="us-east-1").meta.service_model
    shape = model.shape_for("AIRecommendationInstanceType")
    assert frozenset(shape.enum) == rec.INSTANCE_TYPES
    assert len(rec.INSTANCE_TYPES) == 46


@pytest.mark.parametrize("value", [0, -5, 1.5, "ten", True, rec.MAX_TIMEOUT_MINUTES + 1])
def test_timeout_must_be_positive_and_bounded(value: object) -> None:
    assert "whole number of minutes" in errors_for(timeoutMinutes=value)["timeoutMinutes"]


@pytest.mark.parametrize(("value", "minutes"), [(30, 30), ("90", 90), (120.0, 120)])
def test_timeout_accepts_whole_numbers_as_config_delivers_them(value: object, minutes: int) -> None:
    settings, _ = rec.parse_optimize_settings({**VALID, "timeoutMinutes": value})
    assert settings is not None and settings.timeout_minutes == minutes


def test_unknown_key_is_reported_with_valid_keys() -> None:
    message = errors_for(datset=DATASET_S3_URI)["datset"]
    assert "unknown key" in message and "dataset" in message


def test_every_error_is_reported_at_once() -> None:
    keys = errors_for(goal="x", dataset="hf://a/b", instanceTypes=["ml.x"], roleArn="r")
    assert set(keys) == {"goal", "dataset", "instanceTypes", "roleArn"}


def test_errors_render_with_the_config_path() -> None:
    error = rec.FieldError("dataset", "bad")
    assert error.render() == "hp:optimize.dataset: bad"


def test_settings_round_trip_through_their_mapping() -> None:
    settings, _ = rec.parse_optimize_settings(
        {**VALID, "dataset": DATASET_S3_URI, "instanceTypes": ["ml.g5.xlarge"]}
    )
    assert settings is not None
    assert rec.parse_optimize_settings(settings.to_mapping()) == (settings, [])


def test_framework_comes_from_the_engine() -> None:
    assert rec.framework_for_engine("vllm") == ("VLLM", None)
    framework, note = rec.framework_for_engine("sglang")
    assert framework is None
    assert note is not None and "no SGLang framework" in note
    with pytest.raises(ValueError, match="unknown engine"):
        rec.framework_for_engine("tgi")


def test_framework_enum_matches_the_botocore_model() -> None:
    import boto3

    model = boto3.client("sagemaker", region_name="us-east-1").meta.service_model
    frameworks = set(
        model.shape_for("AIRecommendationInferenceSpecification").members["Framework"].enum
    )
    assert {f for f in rec.ENGINE_FRAMEWORKS.values() if f} <= frameworks
    assert "SGLANG" not in frameworks


def test_config_imports_only_the_settings_part() -> None:
    """`mlcc.config.stack` must stay light: hp:optimize brings no parsing, polling, AWS calls or
    Pulumi resources with it."""
    import subprocess
    import sys

    heavy = (
        "mlcc.recommendation",
        "mlcc.recommendation.choice",
        "mlcc.components",
    )
    code = (
        f"HEAVY = {heavy!r}; import sys, mlcc.config.stack; "
        "print(sorted(m for m in sys.modules if m.startswith(HEAVY)))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout
    assert loaded.strip() == "[]"
