"""A draft whose own config.json shows the wrong EAGLE format for the algorithm is refused, at
`mlcc plan --preflight` and at `pulumi preview` (the program's check_before_deploy), through the
real huggingface_hub client against the fake Hub; the name-based warning stays only where no
config was read."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_hub import FakeHub
from local_aws import LocalAWS
from preview_run import aws_served, hub_served, plan_dev, preview, speculative_stack

from mlcc.config import stack as config
from mlcc.preflight.facts import model_facts
from mlcc.preflight.models import models_part
from mlcc.preflight.outcome import Mode, settle
from mlcc.preflight.rules import head_format

LLAMA_8B = "meta-llama/Llama-3.1-8B-Instruct"
EAGLE3_HEAD = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"  # LlamaForCausalLMEagle3
EAGLE1_HEAD = "yuhuili/EAGLE-LLaMA3-Instruct-8B"  # LlamaForCausalLM, 1 layer
PLAIN_EAGLE3_HEAD = "safeailab/llama31-8b-draft-head"  # LlamaForCausalLM + draft_vocab_size
EAGLE3_UNDER_EAGLE = (
    "is an EAGLE-3 head (architecture LlamaForCausalLMEagle3 in its config.json), and eagle "
    "runs EAGLE-1 heads"
)
EAGLE1_UNDER_EAGLE3 = (
    "is an EAGLE-1 head (its fc weight takes 8192 inputs, 2 x hidden size 4096, in its "
    "safetensors header), and eagle3 needs an EAGLE-3 head"
)


hub = pytest.fixture(hub_served, name="hub")


def parsed(algorithm: str, draft: str, **more: str) -> config.Parsed:
    return speculative_stack(algorithm, LLAMA_8B, draft, **more)


def found(algorithm: str, draft: str) -> list[str]:
    errors, warnings = settle(models_part(parsed(algorithm, draft).config, 5), Mode.STRICT)
    return [str(p) for p in [*errors, *warnings]]


@pytest.mark.parametrize(
    ("algorithm", "draft", "message"),
    [
        ("eagle", EAGLE3_HEAD, EAGLE3_UNDER_EAGLE),
        ("eagle2", EAGLE3_HEAD, EAGLE3_UNDER_EAGLE.replace("and eagle", "and eagle2")),
        (
            "eagle",
            PLAIN_EAGLE3_HEAD,
            "is an EAGLE-3 head (draft_vocab_size 32000 in its config.json), and eagle runs",
        ),
        ("eagle3", EAGLE1_HEAD, EAGLE1_UNDER_EAGLE3),
    ],
)
def test_a_head_of_the_other_format_is_refused_from_its_config(
    hub: FakeHub, algorithm: str, draft: str, message: str
) -> None:
    (line,) = found(algorithm, draft)
    assert line.startswith(f"hp:speculativeModel: {message}")
    fix = "eagle3" if "EAGLE-3 head (" in message else "eagle (or eagle2)"
    assert f"set hp:speculativeAlgorithm {fix}" in line


@pytest.mark.parametrize(
    ("algorithm", "draft"),
    [("eagle3", EAGLE3_HEAD), ("eagle3", PLAIN_EAGLE3_HEAD), ("eagle", EAGLE1_HEAD)],
)
def test_a_head_of_the_algorithms_format_passes(hub: FakeHub, algorithm: str, draft: str) -> None:
    assert found(algorithm, draft) == []


def test_an_entry_names_its_own_key_and_a_full_model_keeps_its_own_refusal(hub: FakeHub) -> None:
    entries = (
        '[{"name": "a"}, {"name": "b", "speculativeAlgorithm": "eagle3", '
        f'"speculativeModel": "{EAGLE1_HEAD}"}}]'
    )
    stack = parsed("eagle3", EAGLE3_HEAD, endpoints=entries).config
    errors, _ = settle(models_part(stack, 5), Mode.STRICT)
    (line,) = [str(e) for e in errors]  # the first endpoint's head fits
    assert line.startswith(f"hp:endpoints[1].speculativeModel: {EAGLE1_UNDER_EAGLE3}")
    model = found("eagle3", "meta-llama/Llama-3.2-1B")
    assert not any("EAGLE-1 head" in line for line in model)
    assert any("is a full LlamaForCausalLM model of 16 layers" in line for line in model)


@pytest.mark.parametrize(
    ("config_json", "expected"),
    [
        ({"architectures": ["LlamaForCausalLMEagle"]}, ("eagle", "architecture")),  # SGLang's
        ({"architectures": ["EagleLlamaForCausalLM"]}, ("eagle", "architecture")),  # vLLM's
        ({"architectures": ["Eagle3DeepseekV2ForCausalLM"]}, ("eagle3", "architecture")),
        (
            {"architectures": ["LlamaForCausalLM"], "eagle_config": {"use_aux_hidden_state": True}},
            ("eagle3", "eagle_config"),
        ),
        ({"architectures": ["MedusaModel"]}, None),  # not an EAGLE head: cannot tell
        ({"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 16}, None),  # a full model
    ],
)
def test_the_format_comes_from_the_engines_registries_and_eagle3_fields(
    config_json: dict[str, object], expected: tuple[str, str] | None
) -> None:
    shape = {
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "vocab_size": 128256,
        "num_hidden_layers": 1,
    }
    shown = head_format(model_facts({**shape, **config_json}, None))
    if expected is None:
        assert shown is None
    else:
        assert shown is not None
        assert (shown[0], shown[1].split(" ")[0]) == expected


aws = pytest.fixture(aws_served, name="aws")
plan = plan_dev


def test_mlcc_plan_preflight_refuses_and_plain_plan_keeps_the_name_warning(
    hub: FakeHub,
    aws: LocalAWS,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_fake_reader")
    swap = ("--set", "hp:speculativeAlgorithm=eagle")
    assert plan(tmp_path, monkeypatch, "--preflight", *swap) == 1
    err = capsys.readouterr().err
    assert f"error: hp:speculativeModel: {EAGLE3_UNDER_EAGLE}" in err
    assert "looks like an EAGLE-3 head" not in err  # never a warning beside the refusal
    assert plan(tmp_path, monkeypatch, *swap) == 0  # offline: no config read, the name warns
    err = capsys.readouterr().err
    assert f"warning: hp:speculativeModel: {EAGLE3_HEAD} looks like an EAGLE-3 head" in err
    assert "error:" not in err


def test_pulumi_preview_refuses_and_the_name_warns_only_without_preflight(
    hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    (line,) = preview(parsed("eagle3", EAGLE1_HEAD).config, monkeypatch)
    assert line.startswith(f"error: hp:speculativeModel: {EAGLE1_UNDER_EAGLE3}")
    assert preview(parsed("eagle", EAGLE1_HEAD).config, monkeypatch) == []
    off = parsed("eagle3", EAGLE1_HEAD, preflight="off")
    assert off.warnings == ()  # the name hint waits for preflight's answer
    assert preview(off.config, monkeypatch) == [
        f"hp:speculativeModel: {EAGLE1_HEAD} looks like an EAGLE(-1/2) head, not EAGLE-3; use "
        "eagle or eagle2"
    ]
