"""Stack values with hp:draftTraining, shared by the draft-training tests."""

from __future__ import annotations

import json
from typing import Any

from mlcc.config.draft_training import DraftTrainingConfig
from mlcc.config.stack import ConfigError, Parsed, parse
from mlcc.serving.speculative import Problem

IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/hp-vllm@sha256:" + "a" * 64
REGIONS = {"aws:region": "us-east-1", "aws-native:region": "us-east-1"}
BASE = {"hp:model": "meta-llama/Llama-3.1-8B-Instruct", "hp:image": IMAGE, **REGIONS}
DATASET = "s3://traffic-bucket/datasets/run1/"
OUTPUT = "s3://heads-bucket/llama-8b/run1/"
# The default group of a stack without hp:instanceGroups: `gpu`, one ml.g5.12xlarge (4 GPUs).
TRAINING: dict[str, Any] = {"instanceGroup": "gpu", "dataset": DATASET, "output": OUTPUT}


def parsed(training: dict[str, Any] | None = None, **values: str) -> Parsed:
    raw = {**BASE, **{f"hp:{k}": v for k, v in values.items()}}
    raw["hp:draftTraining"] = json.dumps(TRAINING if training is None else training)
    return parse(raw, stack="dev")


def training_config(**changes: Any) -> DraftTrainingConfig:
    found = parsed({**TRAINING, **changes}).config.draft_training
    assert found is not None
    return found


def problems(training: dict[str, Any], **values: str) -> dict[str, str]:
    """key -> message of every error the stack is refused with."""
    try:
        parsed(training, **values)
    except ConfigError as error:
        return {p.key: p.message for p in error.problems}
    raise AssertionError("the stack was accepted")


def warnings(training: dict[str, Any], **values: str) -> list[Problem]:
    return list(parsed(training, **values).warnings)
