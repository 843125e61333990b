"""hp:speculativeSchedule at preview: what each engine release ignores or refuses, with sources."""

from __future__ import annotations

import json

import pytest

from mlcc.config.stack import ConfigError, Parsed, parse

BASE = {
    "hp:model": "meta-llama/Llama-3.1-8B-Instruct",
    "hp:speculativeAlgorithm": "eagle3",
    "hp:speculativeModel": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
    "hp:instanceType": "ml.g5.2xlarge",
    "aws:region": "us-east-1",
    "aws-native:region": "us-east-1",
}
SCHEDULE = json.dumps(
    [
        {"from": 1, "to": 8, "tokens": 5},
        {"from": 9, "to": 32, "tokens": 2},
        {"from": 33, "tokens": 0},
    ]
)


def parsed(**values: str) -> Parsed:
    return parse({**BASE, "hp:speculativeSchedule": SCHEDULE, **values}, stack="dev")


def errors(**values: str) -> list[str]:
    with pytest.raises(ConfigError) as raised:
        parsed(**values)
    return [str(p) for p in raised.value.problems]


def warnings(**values: str) -> list[str]:
    return [str(p) for p in parsed(**values).warnings]


@pytest.mark.parametrize(
    ("engine", "version"),
    [("vllm", "0.27.1"), ("vllm", "0.34.0"), ("sglang", "0.5.17"), ("sglang", "0.5.23")],
)
def test_the_example_passes_on_every_release(engine: str, version: str) -> None:
    config = parsed(**{"hp:engine": engine, "hp:engineVersion": version}).config
    spec = config.primary.speculative
    assert spec is not None and spec.schedule is not None
    assert spec.schedule.text() == "1-8: 5, 9-32: 2, 33+: 0"


def test_vllm_data_parallel_above_one() -> None:
    (line,) = errors(**{"hp:engineArgs": json.dumps({"data-parallel-size": 2})})
    assert line.startswith("hp:speculativeSchedule: vLLM drops the schedule")
    assert "_maybe_disable_dynamic_sd_for_data_parallel" in line
    parsed(**{"hp:engineArgs": json.dumps({"data-parallel-size": 1})})  # 1 is fine


def test_vllm_dp_under_its_short_alias() -> None:
    (line,) = errors(**{"hp:engineArgs": json.dumps({"dp": 4})})
    assert "data-parallel-size 4" in line


def test_tokens_above_num_tokens() -> None:
    (line,) = errors(**{"hp:speculativeNumTokens": "4"})
    assert line.startswith("hp:speculativeSchedule[0].tokens: 5 is above hp:speculativeNumTokens")
    assert "build_dynamic_sd_schedule_lookup" in line


def test_dspark_on_vllm_0_27_1_but_not_0_34_0() -> None:
    values = {"hp:speculativeAlgorithm": "dspark", "hp:speculativeModel": ""}
    (line,) = errors(**values, **{"hp:engineVersion": "0.27.1"})
    assert "V2 model runner" in line and "hp:engineVersion to 0.34.0" in line
    parsed(**values, **{"hp:engineVersion": "0.34.0"})


def test_the_cuda_graph_warning_on_vllm_0_27_1_only() -> None:
    old = [w for w in warnings(**{"hp:engineVersion": "0.27.1"}) if "PIECEWISE" in w]
    assert len(old) == 1 and "_maybe_override_dynamic_sd_cudagraph_mode" in old[0]
    assert not [w for w in warnings(**{"hp:engineVersion": "0.34.0"}) if "PIECEWISE" in w]


@pytest.mark.parametrize(
    ("values", "fragment"),
    [
        ({"hp:speculativeAlgorithm": "ngram", "hp:speculativeModel": ""}, "for NGRAM (ngram)"),
        ({"hp:speculativeAlgorithm": "draft-model"}, "for STANDALONE"),
        ({"hp:speculativeAlgorithm": "eagle2"}, "for top-k 4"),
        ({"hp:speculativeEagleTopk": "2"}, "for top-k 2"),
        ({"hp:engineArgs": json.dumps({"enable-dp-attention": True})}, "with attention DP"),
        ({"hp:engineArgs": json.dumps({"enable_multi_layer_eagle": True})}, "multi-layer EAGLE"),
        ({"hp:engineArgs": json.dumps({"enable-two-batch-overlap": True})}, "two-batch overlap"),
        ({"hp:engineArgs": json.dumps({"enable-pdmux": True})}, "with pdmux"),
    ],
)
def test_sglang_refuses_what_it_would_turn_off(values: dict[str, str], fragment: str) -> None:
    lines = errors(**{"hp:engine": "sglang"}, **values)
    mine = [line for line in lines if line.startswith("hp:speculativeSchedule:")]
    assert len(mine) == 1 and fragment in mine[0]
    assert "adaptive_unsupported_reason" in mine[0]


def test_sglang_attn_dp_size_on_0_5_23() -> None:
    values = {"hp:engine": "sglang", "hp:engineVersion": "0.5.23"}
    (line,) = errors(**values, **{"hp:engineArgs": json.dumps({"attn-dp-size": 2})})
    assert "attention DP (hp:engineArgs attn-dp-size 2)" in line


def test_mtp_is_adapted_on_sglang() -> None:
    values = {
        "hp:engine": "sglang",
        "hp:speculativeAlgorithm": "mtp",
        "hp:model": "deepseek-ai/DeepSeek-V3",
    }
    spec = parsed(**values).config.primary.speculative
    assert spec is not None and spec.schedule is not None


def test_sglang_steps_must_be_among_the_tokens() -> None:
    (line,) = errors(**{"hp:engine": "sglang", "hp:speculativeNumTokens": "6"})
    assert line.startswith("hp:speculativeSchedule: SGLang starts at --speculative-num-steps 6")
    assert "_init_adaptive_speculative_params" in line and "to 5" in line
    # vLLM has no such rule: 6 is only the cap there
    parsed(**{"hp:speculativeNumTokens": "6"})


def test_sglang_padding_warning_for_a_range_ending_off_its_graph_sizes() -> None:
    schedule = json.dumps([{"from": 1, "to": 9, "tokens": 5}, {"from": 10, "tokens": 2}])
    found = [
        w
        for w in warnings(**{"hp:engine": "sglang", "hp:speculativeSchedule": schedule})
        if "CUDA-graph size" in w
    ]
    assert len(found) == 1 and "ending at 9" in found[0]
    assert not [w for w in warnings(**{"hp:engine": "sglang"}) if "CUDA-graph size" in w]


def test_a_closed_last_range_is_carried_forward_with_a_warning() -> None:
    schedule = json.dumps([{"from": 1, "to": 16, "tokens": 5}])
    found = [w for w in warnings(**{"hp:speculativeSchedule": schedule}) if "above 16" in w]
    assert found and found[0].startswith("hp:speculativeSchedule[0].to:")


def test_ignored_when_speculation_is_off() -> None:
    found = warnings(**{"hp:speculativeAlgorithm": ""})
    assert (
        "hp:speculativeSchedule: ignored: hp:speculativeAlgorithm is not set, speculation is off"
        in found
    )


@pytest.mark.parametrize(
    ("engine", "args"),
    [
        ("sglang", {"speculative-adaptive": True}),
        ("sglang", {"speculative_adaptive_config": "/tmp/x.json"}),
        ("vllm", {"speculative-config": {"num_speculative_tokens_per_batch_size": [[1, 1, 1]]}}),
        ("vllm", {"speculative-config.num_speculative_tokens_per_batch_size": "[[1,1,1]]"}),
    ],
)
def test_the_engines_own_keys_in_engine_args_name_the_schedule(
    engine: str, args: dict[str, object]
) -> None:
    lines = errors(**{"hp:engine": engine, "hp:engineArgs": json.dumps(args)})
    assert any("a load-aware schedule goes in hp:speculativeSchedule" in line for line in lines)


def test_an_entry_names_its_path_and_the_twin_has_no_schedule() -> None:
    entry = {
        "name": "fast",
        "engine": "sglang",
        "baseline": True,
        "speculativeSchedule": [{"from": 1, "tokens": 4}],
    }
    values = {"hp:endpoints": json.dumps([entry])}
    (line,) = errors(**values)
    assert line.startswith("hp:endpoints[0].speculativeSchedule: SGLang starts at")
    entry["speculativeSchedule"] = [{"from": 1, "tokens": 5}]
    endpoints = parsed(**{"hp:endpoints": json.dumps([entry])}).config.endpoints
    assert [e.speculative.schedule is not None for e in endpoints if e.speculative] == [True]
    assert [e.name for e in endpoints if e.speculative is None] == ["fast-baseline"]
