"""Reading DescribeAIRecommendationJob responses into RecommendedSpeculation.

Each response goes through a Stubber on a real sagemaker client first, so it is valid against
the botocore model (an invented shape would fail in add_response).
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from botocore.exceptions import ParamValidationError
from botocore.stub import Stubber
from hypothesis import given, settings
from hypothesis import strategies as st
from recommendation_stubs import (
    EAGLE3_DRAFT,
    describe_response,
    eagle3_recommendation,
    kernel_tuning_detail,
    recommendation,
    sagemaker_client,
    speculative_detail,
)

from mlcc.cli.optimize.output import print_job_report
from mlcc.recommendation import keys, parsing
from mlcc.serving import speculative

JOB = "mlcc-speculative-0123456789"


def described(response: dict[str, Any]) -> dict[str, Any]:
    """What boto3 returns for `response` (validated against the model by the Stubber)."""
    client = sagemaker_client()
    with Stubber(client) as stubber:
        stubber.add_response("describe_ai_recommendation_job", response)
        return dict(client.describe_ai_recommendation_job(AIRecommendationJobName=JOB))


def top(
    *recommendations: dict[str, Any], status: str = "Completed"
) -> parsing.RecommendedSpeculation:
    response = describe_response(JOB, status, list(recommendations))
    return parsing.top_recommendation(described(response))


def test_invented_shapes_are_rejected_by_the_model() -> None:
    bad = describe_response(JOB, "Completed", [recommendation()])
    bad["Recommendations"][0]["OptimizationDetails"] = [
        {"OptimizationName": "SpeculativeDecoding", "SpeculativeDecodingConfig": {}}
    ]
    with pytest.raises(ParamValidationError, match="OptimizationType"):
        described(bad)


def test_eagle3_recommendation_is_read_completely() -> None:
    result = top(eagle3_recommendation())
    assert result.usable
    assert (result.algorithm, result.draft_model, result.num_tokens) == ("eagle3", EAGLE3_DRAFT, 4)
    assert result.optimization_types == ("SpeculativeDecoding", "KernelTuning")
    assert result.optimization_config == {
        "method": "eagle3",
        "draft_model": EAGLE3_DRAFT,
        "num_speculative_tokens": "4",
    }
    assert result.description == "ml.g6e.2xlarge with speculative decoding"
    assert [m.render() for m in result.expected_performance] == [
        "ttft-ms (p50): 182.5 ms",
        "throughput: 1450 tokens/s",
    ]
    assert result.job_name == JOB
    assert result.job_arn.endswith(f":ai-recommendation-job/{JOB}")
    assert result.instance_type == "ml.g6e.2xlarge"
    assert result.model_package_arn is not None and ":model-package/" in result.model_package_arn
    assert result.reason is None


def test_only_the_first_recommendation_is_the_top_one() -> None:
    second = recommendation([speculative_detail({"method": "ngram"})])
    assert top(eagle3_recommendation(), second).algorithm == "eagle3"
    assert top(second, eagle3_recommendation()).algorithm == "ngram"


def test_all_recommendations_are_listed_in_order() -> None:
    response = described(
        describe_response(
            JOB, "Completed", [eagle3_recommendation(), recommendation([kernel_tuning_detail()])]
        )
    )
    listed = parsing.parse_recommendations(response)
    assert [r.usable for r in listed] == [True, False]


@pytest.mark.parametrize(
    "config",
    [
        {"Method": "EAGLE3", "DraftModel": EAGLE3_DRAFT, "NumSpeculativeTokens": "4"},
        {"speculative-method": "eagle-3", "draft_model_id": EAGLE3_DRAFT, "num_tokens": "4"},
        {"technique": "Eagle3", "speculative_model": EAGLE3_DRAFT, "speculative_num_steps": "4"},
        {"ALGORITHM": "eagle3", "model": EAGLE3_DRAFT, "NUM_SPECULATIVE_TOKENS": "4"},
        {
            "speculative_config": json.dumps(
                {"method": "eagle3", "model": EAGLE3_DRAFT, "num_speculative_tokens": 4}
            )
        },
    ],
)
def test_plausible_key_spellings_are_recognised(config: dict[str, str]) -> None:
    result = top(recommendation([speculative_detail(config)]))
    assert (result.algorithm, result.draft_model, result.num_tokens) == ("eagle3", EAGLE3_DRAFT, 4)


@pytest.mark.parametrize(
    ("method", "algorithm"),
    [
        ("EAGLE", "eagle"),
        ("eagle2", "eagle2"),
        ("STANDALONE", "draft-model"),
        ("draft_model", "draft-model"),
        ("NGRAM", "ngram"),
        ("NEXTN", "mtp"),
        ("mtp", "mtp"),
    ],
)
def test_engine_method_names_map_to_ours(method: str, algorithm: str) -> None:
    config = {"method": method, "draft_model": EAGLE3_DRAFT}
    assert top(recommendation([speculative_detail(config)])).algorithm == algorithm


def test_vllm_speculative_config_env_var_is_read() -> None:
    env = {
        "SM_VLLM_MODEL": "/opt/ml/model",
        "SM_VLLM_SPECULATIVE_CONFIG": json.dumps(
            {"method": "eagle3", "model": EAGLE3_DRAFT, "num_speculative_tokens": 3}
        ),
    }
    result = top(recommendation([speculative_detail({})], env=env))
    assert (result.algorithm, result.draft_model, result.num_tokens) == ("eagle3", EAGLE3_DRAFT, 3)


def test_lmi_style_env_vars_are_read_but_not_the_target_model() -> None:
    env = {
        "OPTION_MODEL_ID": "meta-llama/Llama-3.1-8B-Instruct",
        "OPTION_SPECULATIVE_ALGORITHM": "draft_model",
        "OPTION_SPECULATIVE_DRAFT_MODEL": "meta-llama/Llama-3.2-1B-Instruct",
        "OPTION_SPECULATIVE_LENGTH": "5",
    }
    result = top(recommendation([speculative_detail({})], env=env))
    assert result.algorithm == "draft-model"
    assert result.draft_model == "meta-llama/Llama-3.2-1B-Instruct"
    assert result.num_tokens == 5


def test_optimization_config_wins_over_environment() -> None:
    env = {"SM_SGLANG_SPECULATIVE_ALGORITHM": "EAGLE", "SM_SGLANG_SPECULATIVE_NUM_STEPS": "7"}
    detail = speculative_detail({"method": "eagle3", "draft_model": EAGLE3_DRAFT})
    result = top(recommendation([detail], env=env))
    assert (result.algorithm, result.num_tokens) == ("eagle3", 7)


def test_huggingface_url_becomes_a_hub_id() -> None:
    config = {"method": "eagle3", "draft_model": f"https://huggingface.co/{EAGLE3_DRAFT}/tree/main"}
    assert top(recommendation([speculative_detail(config)])).draft_model == EAGLE3_DRAFT


@pytest.mark.parametrize(
    ("draft", "why"),
    [
        ("s3://models-bucket/eagle-head/", "a s3:// URI"),
        ("/opt/ml/additional-model-data/draft", "a path inside the service's container"),
        ("arn:aws:sagemaker:us-east-1:123456789012:model-package/draft/1", "an ARN"),
        ("https://huggingface.co/datasets/org/name", "a https:// URI"),
        ("just-a-name", "not of the form org/name"),
    ],
)
def test_non_hub_drafts_are_refused_with_a_reason(draft: str, why: str) -> None:
    result = top(recommendation([speculative_detail({"method": "eagle3", "draft_model": draft})]))
    assert not result.usable
    assert result.algorithm == "eagle3"
    assert result.draft_model is None
    assert result.reason is not None
    assert result.reason.startswith("no speculative recommendation: eagle3 needs a draft model")
    assert why in result.reason and "not a Hugging Face model id" in result.reason


def test_missing_draft_mentions_the_artifacts_in_s3() -> None:
    channels = [{"ChannelName": "draft", "Uri": "s3://out/job/speculator/"}]
    result = top(recommendation([speculative_detail({"method": "EAGLE"})], s3_channels=channels))
    assert not result.usable
    assert result.reason is not None
    assert "names no draft model" in result.reason and "s3://out/job/speculator/" in result.reason
    assert result.artifact_uris == ("s3://out/job/speculator/",)


def test_algorithms_without_a_draft_are_usable_and_drop_a_draft() -> None:
    result = top(recommendation([speculative_detail({"method": "ngram", "model": EAGLE3_DRAFT})]))
    assert result.usable
    assert (result.algorithm, result.draft_model) == ("ngram", None)
    assert any("takes no draft model" in note for note in result.notes)


def test_no_speculative_detail_is_a_normal_outcome() -> None:
    result = top(recommendation([], env={"SM_VLLM_MAX_MODEL_LEN": "8192"}))
    assert not result.usable
    assert result.algorithm is None
    assert result.reason == (
        "no speculative recommendation: the top recommendation applies no SpeculativeDecoding "
        "optimization (applied: none)"
    )


def test_kernel_tuning_only() -> None:
    result = top(recommendation([kernel_tuning_detail()]))
    assert not result.usable
    assert result.reason is not None and "(applied: KernelTuning)" in result.reason
    assert result.optimization_config == {}


def test_unknown_keys_are_kept_raw_and_explained() -> None:
    config = {"acceptance_rate": "0.71", "speculator_artifact": "s3://out/spec/"}
    result = top(recommendation([speculative_detail(config)]))
    assert not result.usable
    assert result.optimization_config == config
    assert result.reason is not None
    assert "no recognisable method" in result.reason
    assert "acceptance_rate, speculator_artifact" in result.reason


def test_unknown_method_value_is_not_guessed() -> None:
    result = top(recommendation([speculative_detail({"method": "medusa", "draft_model": "a/b"})]))
    assert not result.usable and result.algorithm is None
    assert result.reason is not None and "'medusa'" in result.reason


def test_token_count_out_of_range_is_dropped_with_a_note() -> None:
    config = {"method": "ngram", "num_speculative_tokens": "99"}
    result = top(recommendation([speculative_detail(config)]))
    assert result.usable and result.num_tokens is None
    assert any("'99'" in note for note in result.notes)


def test_no_recommendations_at_all() -> None:
    result = top()
    assert result.reason == "no speculative recommendation: the job returned no recommendations"


def test_a_job_that_is_not_completed_has_no_recommendation() -> None:
    response = described(describe_response(JOB, "Failed", failure_reason="Model not found in S3"))
    result = parsing.top_recommendation(response)
    assert result.reason == "no speculative recommendation: job is Failed: Model not found in S3"


def test_secret_looking_environment_values_are_redacted() -> None:
    env = {"HF_TOKEN": "hf_abc", "SM_VLLM_API_KEY": "k", "SM_VLLM_MAX_MODEL_LEN": "8192"}
    result = top(recommendation([kernel_tuning_detail()], env=env))
    assert result.environment_variables == {
        "HF_TOKEN": "<redacted>",
        "SM_VLLM_API_KEY": "<redacted>",
        "SM_VLLM_MAX_MODEL_LEN": "8192",
    }
    assert "hf_abc" not in json.dumps(result.outputs())


def test_outputs_are_plain_json() -> None:
    outputs = top(eagle3_recommendation()).outputs()
    assert json.loads(json.dumps(outputs)) == outputs
    assert outputs["usable"] is True
    assert outputs["expected_performance"][0] == {
        "metric": "ttft-ms",
        "value": "182.5",
        "stat": "p50",
        "unit": "ms",
    }


def test_garbage_never_crashes_the_parser() -> None:
    odd: dict[str, Any] = {
        "AIRecommendationJobStatus": "Completed",
        "Recommendations": [None, "x", {"OptimizationDetails": "nope", "ExpectedPerformance": [1]}],
    }
    result = parsing.top_recommendation(odd)
    assert not result.usable
    assert result.reason is not None


KEY_SPELLINGS = st.sampled_from(
    [*keys.ALGORITHM_KEYS, *keys.DRAFT_MODEL_KEYS, *keys.NUM_TOKENS_KEYS, "Method", "DraftModel"]
)
VALUES = st.one_of(
    st.sampled_from(["eagle3", "EAGLE", "ngram", "NEXTN", "medusa", "4", "0", EAGLE3_DRAFT]),
    st.sampled_from(["s3://b/k", "/opt/ml/draft", f"https://huggingface.co/{EAGLE3_DRAFT}"]),
    st.text(max_size=30),
)


@settings(max_examples=300, deadline=None)
@given(
    config=st.dictionaries(st.one_of(KEY_SPELLINGS, st.text(max_size=20)), VALUES, max_size=6),
    env=st.dictionaries(
        st.sampled_from([*keys.JSON_CONFIG_ENV_VARS, "SM_SGLANG_SPECULATIVE_ALGORITHM", "X"]),
        VALUES,
        max_size=3,
    ),
    with_detail=st.booleans(),
)
def test_parser_never_crashes_and_never_invents(
    config: dict[str, str], env: dict[str, str], with_detail: bool
) -> None:
    details = [speculative_detail(config)] if with_detail else [kernel_tuning_detail()]
    response = describe_response(JOB, "Completed", [recommendation(details, env=env)])
    result = parsing.top_recommendation(response)
    seen = " ".join([*config.values(), *env.values()])
    if result.usable:
        assert result.algorithm in keys.ALGORITHMS
    if result.draft_model is not None:
        assert result.draft_model in seen  # taken from the response, never made up
    if result.num_tokens is not None:
        assert 1 <= result.num_tokens <= speculative.MAX_NUM_TOKENS
    assert result.usable == (result.reason is None)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("12.5", None),
        (" 0 ", None),
        ("1e3", None),
        ("-0.1", "the API gave '-0.1', a negative figure"),
        ("nan", "the API gave 'nan', not a finite number"),
        ("-Infinity", "the API gave '-Infinity', not a finite number"),
        ("", "the API gave '', not a number"),
        ("12 ms", "the API gave '12 ms', not a number"),
    ],
)
def test_an_expected_figure_is_a_finite_number_not_below_zero(
    value: str, problem: str | None
) -> None:
    assert parsing.figure_problem(value) == problem


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=12,
)
FIGURES = st.sampled_from(["12.5", "-5", "NaN", "inf", "1e400", "", "9" * 40, "0"])
WORD = st.text(alphabet="abcp9-/", max_size=8)  # no "; " or ": ": the test splits on them
METRIC = st.fixed_dictionaries(
    {"Metric": WORD, "Value": FIGURES | JSON},
    optional={"Stat": WORD | st.integers(), "Unit": WORD | st.none()},
)
RECOMMENDATION = st.fixed_dictionaries(
    {},
    optional={
        "ExpectedPerformance": st.lists(METRIC, max_size=3) | JSON,
        "DeploymentConfiguration": st.fixed_dictionaries(
            {}, optional={"InstanceType": st.sampled_from(["ml.g5.xlarge", "ml.z9.huge"]) | JSON}
        )
        | JSON,
        "OptimizationDetails": JSON,
        "RecommendationDescription": JSON,
    },
)
DESCRIBED = st.fixed_dictionaries(
    {},
    optional={
        "AIRecommendationJobName": JSON,
        "AIRecommendationJobStatus": st.sampled_from(["Completed", "Pending", ""]) | JSON,
        "FailureReason": JSON,
        "Recommendations": st.lists(RECOMMENDATION, max_size=2) | JSON,
    },
)


@settings(max_examples=200, deadline=None)
@given(response=DESCRIBED, as_json=st.booleans())
def test_any_describe_reply_prints_true_figures_or_unknown(
    response: dict[str, Any], as_json: bool
) -> None:
    """Whatever a DescribeAIRecommendationJob reply holds, the report prints; a figure it shows
    is a finite number not below 0, every other one says unknown."""
    out = io.StringIO()
    print_job_report(response, out, as_json=as_json)
    text = out.getvalue()
    if as_json:
        for item in json.loads(text)["recommendations"]:
            for metric in item["expected_performance"]:
                assert metric["value"] is None or parsing.figure_problem(metric["value"]) is None
        return
    for line in text.splitlines():
        assert len(line) <= 2003
        if line.startswith("  expected:"):
            for shown in line.removeprefix("  expected:").split("; "):
                value = shown.split(": ", 1)[1]
                assert value.startswith("unknown (") or not value.split()[0].startswith("-")
