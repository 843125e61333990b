"""hp:draftTraining: the parsed job and every refusal, each naming the key to change."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from training_stacks import BASE, DATASET, OUTPUT, TRAINING, parsed, problems, training_config

from mlcc.config import draft_training
from mlcc.config.draft_training import HiddenStates, JobOperator
from mlcc.config.stack import ConfigError, parse
from mlcc.engine_contract import names
from mlcc.facts import speculators_train

KEY = "hp:draftTraining"
GROUPS = json.dumps(
    [
        {"name": "infer", "instanceType": "ml.g5.12xlarge", "instanceCount": 1},
        {"name": "train", "instanceType": "ml.g6e.48xlarge", "instanceCount": 1},
        {"name": "small", "instanceType": "ml.g5.2xlarge", "instanceCount": 1},
        {"name": "cpu", "instanceType": "ml.m5.xlarge", "instanceCount": 1},
    ]
)


def test_an_empty_key_declares_no_job() -> None:
    assert parse(BASE, stack="dev").config.draft_training is None
    assert parse({**BASE, f"{KEY}": "{}"}, stack="dev").config.draft_training is None


def test_the_job_takes_the_group_and_the_stack_target_with_the_documented_defaults() -> None:
    config = training_config()
    assert (config.instance_group, config.instance_type, config.gpus) == (
        "gpu",
        "ml.g5.12xlarge",
        4,
    )
    assert (config.dataset, config.output) == (DATASET, OUTPUT)
    assert (config.target_model, config.target_revision) == (
        "meta-llama/Llama-3.1-8B-Instruct",
        "main",
    )
    assert config.engine_version == names.PINNED_VERSIONS["vllm"]
    assert (config.epochs, config.seq_length) == (20, 8192)  # speculators 0.9.0's defaults
    assert config.hidden_states is HiddenStates.OFFLINE
    assert config.operator is JobOperator.HYPERPOD
    assert config.speculators_version == speculators_train.PINNED_VERSION == "0.9.0"
    assert config.name == "hp-dev-draft" and config.trainer_args == () and config.image is None


def test_a_named_group_gives_its_instance_type_and_gpus() -> None:
    config = parsed({**TRAINING, "instanceGroup": "train"}, instanceGroups=GROUPS).config
    assert config.draft_training is not None
    assert (config.draft_training.instance_type, config.draft_training.gpus) == (
        "ml.g6e.48xlarge",
        8,
    )


def test_a_prefix_without_its_slash_is_the_same_folder() -> None:
    config = training_config(output=OUTPUT.rstrip("/"))
    assert config.output == OUTPUT


@pytest.mark.parametrize(
    ("group", "why"),
    [
        ("nope", "'nope' is not a GPU instance group"),
        ("cpu", "'cpu' is not a GPU instance group"),
        ("", "is required"),
    ],
)
def test_only_a_gpu_group_of_the_cluster_is_accepted_and_the_refusal_names_them(
    group: str, why: str
) -> None:
    found = problems({**TRAINING, "instanceGroup": group}, instanceGroups=GROUPS)
    message = found[f"{KEY}.instanceGroup"]
    assert why in message and "(infer, small, train)" in message


def test_an_instance_type_that_contradicts_the_group_is_refused() -> None:
    found = problems({**TRAINING, "instanceType": "ml.p5.48xlarge"})
    assert "group gpu runs ml.g5.12xlarge" in found[f"{KEY}.instanceType"]


def test_a_cluster_the_stack_does_not_create_needs_the_instance_type() -> None:
    existing = "arn:aws:sagemaker:us-east-1:123456789012:cluster/abcdef123456"
    found = problems(TRAINING, clusterName=existing)
    assert "is required for a cluster this stack does not create" in found[f"{KEY}.instanceType"]
    found = problems({**TRAINING, "instanceType": "ml.x9.huge"}, clusterName=existing)
    assert "not a GPU instance type" in found[f"{KEY}.instanceType"]
    config = parsed({**TRAINING, "instanceType": "ml.g6e.12xlarge"}, clusterName=existing).config
    assert config.draft_training is not None and config.draft_training.gpus == 4


def test_an_sglang_target_is_refused_naming_why() -> None:
    message = problems(TRAINING, engine="sglang", maxModelLen="")[KEY]
    assert "hp:engine is sglang" in message and "SGLang does not load speculators-format" in message


def test_a_vllm_release_without_hidden_state_extraction_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pinned = names.PINNED_VERSIONS["vllm"]
    table = dict(names.SPECULATIVE_NAMES["vllm"])
    table[pinned] = table[pinned] - {draft_training.EXTRACT_METHOD}
    monkeypatch.setitem(names.SPECULATIVE_NAMES, "vllm", table)
    assert "no extract_hidden_states speculative method" in problems(TRAINING)[KEY]


@pytest.mark.parametrize(
    ("changes", "key", "words"),
    [
        ({"dataset": "https://example.com/x"}, "dataset", "s3://bucket/prefix"),
        ({"dataset": None}, "dataset", "is required"),
        ({"output": "s3://Bad_Bucket/x/"}, "output", "bucket name"),
        ({"output": DATASET}, "output", "dataset's prefix"),
        ({"dataset": "s3://bkt/d*/"}, "dataset", "must not contain *: the stack writes"),
        ({"output": "s3://bkt/out?/x/"}, "output", "must not contain ?: the stack writes"),
        ({"output": "s3://bkt/o?t*/"}, "output", "must not contain * or ?"),
        ({"epochs": 0}, "epochs", "from 1 to 1000"),
        ({"epochs": True}, "epochs", "from 1 to 1000"),
        ({"seqLength": "8k"}, "seqLength", "whole number"),
        ({"hiddenStates": "both"}, "hiddenStates", "offline, online"),
        ({"operator": "slurm"}, "operator", "hyperpod, job"),
        ({"speculatorsVersion": "0.8.0"}, "speculatorsVersion", "0.9.0"),
        ({"image": "not an image"}, "image", "tag or digest"),
        ({"trainerArgs": ["--lr", "1"]}, "trainerArgs", "must be a map"),
        ({"colour": "blue"}, "colour", "unknown field"),
    ],
)
def test_each_bad_field_is_one_error_naming_it(
    changes: dict[str, object], key: str, words: str
) -> None:
    training = {k: v for k, v in {**TRAINING, **changes}.items() if v is not None}
    found = problems(training)
    assert words in found[f"{KEY}.{key}"]


def test_every_problem_is_reported_at_once() -> None:
    found = problems({"instanceGroup": "x", "dataset": "nope", "output": "", "epochs": -1})
    assert {f"{KEY}.instanceGroup", f"{KEY}.dataset", f"{KEY}.output", f"{KEY}.epochs"} <= set(
        found
    )


def test_a_value_that_is_not_an_object_is_refused() -> None:
    assert "must be an object" in problems([1, 2])[KEY]  # type: ignore[arg-type]


def test_online_needs_a_second_gpu_for_the_server() -> None:
    found = problems(
        {**TRAINING, "instanceGroup": "small", "hiddenStates": "online"}, instanceGroups=GROUPS
    )
    assert "online needs a node with 2 or more GPUs" in found[f"{KEY}.hiddenStates"]


def test_the_training_operator_job_warns_that_the_stack_does_not_install_the_add_on() -> None:
    warned = {p.key: p.message for p in parsed().warnings}
    assert "does not install" in warned[f"{KEY}.operator"]
    assert f"{KEY}.operator" not in {
        p.key for p in parsed({**TRAINING, "operator": "job"}).warnings
    }


def test_a_group_the_endpoints_fill_warns_that_the_job_waits_for_a_node() -> None:
    # The default group: one ml.g5.12xlarge, all 4 GPUs taken by the endpoint.
    warned = {p.key: p.message for p in parsed().warnings}
    assert "endpoints use 4 of the 4 GPUs" in warned[f"{KEY}.instanceGroup"]
    assert "instanceCount of group gpu" in warned[f"{KEY}.instanceGroup"]
    # A group of its own (ml.g6e.48xlarge, no endpoint on it): no warning.
    free = parsed({**TRAINING, "instanceGroup": "train"}, instanceGroups=GROUPS)
    assert f"{KEY}.instanceGroup" not in {p.key for p in free.warnings}
    # Two nodes of the endpoint's type: one is free for the job.
    two = json.dumps([{"name": "gpu", "instanceType": "ml.g5.12xlarge", "instanceCount": 2}])
    assert f"{KEY}.instanceGroup" not in {p.key for p in parsed(instanceGroups=two).warnings}


def test_the_job_name_stays_a_kubernetes_name_for_the_longest_endpoint_name() -> None:
    name = "e" * 63
    config = parsed(endpointName=name).config.draft_training
    assert config is not None and config.name == "e" * 57 + "-draft" and len(config.name) == 63


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
_FIELDS = st.sampled_from([*draft_training.FIELDS, "x"])


@given(st.dictionaries(_FIELDS, _JSON, max_size=6) | _JSON)
def test_any_value_is_a_config_or_one_refusal_never_a_traceback(value: object) -> None:
    try:
        found = parse({**BASE, KEY: json.dumps(value)}, stack="dev").config.draft_training
    except ConfigError as error:
        assert error.problems and all(p.key.startswith("hp:") for p in error.problems)
    else:
        assert found is None or found.dataset.startswith("s3://")
