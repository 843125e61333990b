"""Stacks for the observability tests: a vLLM and an SGLang endpoint, each with its twin."""

from __future__ import annotations

import json
from typing import Any

from mlcc.config.stack import StackConfig, parse

NAMESPACE = "inference"
ENDPOINTS: list[dict[str, Any]] = [
    {
        "name": "llama",
        "speculativeAlgorithm": "eagle3",
        "speculativeModel": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
        "baseline": True,
    },
    {
        "name": "qwen",
        "engine": "sglang",
        "model": "Qwen/Qwen3-8B",
        "speculativeAlgorithm": "ngram",
        "speculativeNumTokens": 4,
        "baseline": True,
    },
    {"name": "plain", "model": "Qwen/Qwen3-8B"},
]
BASE = {
    "aws:region": "us-east-1",
    "aws-native:region": "us-east-1",
    "hp:model": "meta-llama/Llama-3.1-8B-Instruct",
    "hp:instanceType": "ml.g5.12xlarge",
    "hp:namespace": NAMESPACE,
    "hp:endpoints": json.dumps(ENDPOINTS),
    "hp:instanceGroups": json.dumps(
        [{"name": "g5", "instanceType": "ml.g5.12xlarge", "instanceCount": 5}]
    ),
}


def stack(observability: object = "file", **values: str) -> StackConfig:
    raw = {**BASE, **values, "hp:observability": json.dumps(observability)}
    return parse(raw, stack="dev").config
