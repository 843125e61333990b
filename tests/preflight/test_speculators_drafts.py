"""Drafts in the speculators format (a `speculators_config` in their config.json): preflight reads
the head from `transformer_layer_config` and the method and token count from the draft's own
config, as vLLM does, through the real huggingface_hub client against the fake Hub; at
`mlcc plan --preflight` and `pulumi preview`; and the wrapper passes the draft the way vLLM's
`--speculative-config` needs it (method and num_speculative_tokens filled)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_hub import MODELS, FakeHub
from local_aws import LocalAWS
from preview_run import aws_served, hub_served, plan_dev, preview, speculative_stack
from serve_harness import dry_run_argv

from mlcc.config import stack as config
from mlcc.preflight.facts import NotAModelConfig, model_facts
from mlcc.preflight.models import models_part
from mlcc.preflight.outcome import Mode, settle
from mlcc.preflight.speculators import Stack, findings
from mlcc.serving.engines import Engine
from mlcc.serving.speculative import speculative_env

QWEN_8B = "Qwen/Qwen3-8B"  # hidden 4096, vocabulary 151936: the head's shapes
LLAMA_8B = "meta-llama/Llama-3.1-8B-Instruct"
HEAD = "speculators-format/qwen3-moe-eagle3-head"  # speculative_tokens 3, eagle3
MISTRAL_HEAD = "speculators-format/mistral-123b-eagle3-head"  # hidden 12288, vocab 131072


hub = pytest.fixture(hub_served, name="hub")


def parsed(algorithm: str, draft: str = HEAD, target: str = QWEN_8B, **more: str) -> config.Parsed:
    return speculative_stack(algorithm, target, draft, **more)


def checked(algorithm: str, **more: str) -> tuple[list[str], list[str], tuple[str, ...]]:
    outcome = models_part(parsed(algorithm, **more).config, 5)
    errors, warnings = settle(outcome, Mode.STRICT)
    return [str(e) for e in errors], [str(w) for w in warnings], outcome.lines.get("hp-t", ())


def test_a_head_that_fits_passes_and_is_sized_from_transformer_layer_config(hub: FakeHub) -> None:
    errors, warnings, lines = checked("eagle3", speculativeNumTokens="3")
    assert (errors, warnings) == ([], [])
    # the draft's weights: one 4096-wide layer over a 32000-token draft vocabulary, counted
    # from transformer_layer_config (before, preflight refused it: "config.json has no
    # hidden_size")
    (line,) = lines
    assert line.startswith("memory: 3.8 + 0.5 GiB weights")


def test_an_unset_token_count_that_contradicts_the_draft_is_refused_naming_both(
    hub: FakeHub,
) -> None:
    errors, _, _ = checked("eagle3")
    assert errors == [
        "hp:speculativeNumTokens: is not set, so 5 tokens a step would be drafted, and the "
        "draft's config says 3 (its speculators_config proposes 3 tokens a step); set "
        "hp:speculativeNumTokens to 3"
    ]


def test_a_count_that_contradicts_the_draft_is_refused_naming_both(hub: FakeHub) -> None:
    errors, _, _ = checked("eagle3", speculativeNumTokens="4")
    assert errors == [
        "hp:speculativeNumTokens: is 4, and the draft's config says 3 (its speculators_config "
        "proposes 3 tokens a step); set hp:speculativeNumTokens to 3"
    ]


@pytest.mark.parametrize(("algorithm", "method"), [("eagle", "eagle"), ("draft-model", "")])
def test_an_algorithm_that_contradicts_the_draft_is_refused_naming_both(
    hub: FakeHub, algorithm: str, method: str
) -> None:
    errors, _, _ = checked(algorithm, speculativeNumTokens="3")
    (line,) = errors  # not also fitted as an EAGLE-1 head or a draft model
    assert line.startswith(
        f"hp:speculativeAlgorithm: is {algorithm}, and the draft is a speculators-format eagle3 "
        "draft (speculators_model_type eagle3 in its config.json)"
    )
    assert line.endswith("; set hp:speculativeAlgorithm eagle3")
    assert f"under the {method or 'draft_model'} method" in line


def test_sglang_does_not_read_the_format(hub: FakeHub) -> None:
    errors, _, _ = checked("eagle3", speculativeNumTokens="3", engine="sglang")
    (line,) = errors
    assert line.startswith(
        "hp:speculativeModel: is a speculators-format draft (speculators_config in its "
        "config.json), and SGLang 0.5.17 does not read that format"
    )


def test_the_fit_checks_read_the_heads_shapes(hub: FakeHub) -> None:
    errors, _, _ = checked(
        "eagle3", draft=MISTRAL_HEAD, target=LLAMA_8B, speculativeNumTokens="3", hfToken="t"
    )
    assert errors == [
        "hp:speculativeModel: draft hidden size 12288, target 4096: the head was trained for "
        "another target",
        "hp:speculativeModel: draft vocabulary 131072 tokens, target 128256: the head was "
        "trained for another tokenizer",
    ]


def test_a_draft_given_as_the_target_is_refused_naming_its_verifier(hub: FakeHub) -> None:
    values = {"aws:region": "us-east-1", "aws-native:region": "us-east-1", "hp:model": HEAD}
    stack = config.parse(values, stack="t", secret_keys={"hp:hfToken"}).config
    errors, _ = settle(models_part(stack, 5), Mode.STRICT)
    assert [str(e) for e in errors] == [
        "hp:model: is a speculators-format draft (speculators_config in its config.json), not a "
        "target model; set hp:model to its verifier /model/from_s3, hp:speculativeModel to this "
        "draft and hp:speculativeAlgorithm eagle3"
    ]


def vendored(name: str) -> dict[str, object]:
    loaded: dict[str, object] = json.loads((MODELS / name / "config.json").read_text())
    return loaded


@pytest.mark.parametrize(
    ("model_type", "version", "refusal"),
    [
        ("peagle", "0.34.0", "refuses it: 'P-EAGLE (parallel drafting EAGLE-3) is not supported.'"),
        ("peagle", "0.27.1", "turns on its parallel drafting only when the draft itself"),
        ("dflash2", "0.27.1", "vLLM 0.27.1 reads only eagle3, peagle, dflash, dspark"),
        ("eagle", "0.34.0", "vLLM 0.34.0 reads only eagle3, peagle, dflash, dflash2, dspark"),
        ("eagle3", "0.34.0", None),
    ],
)
def test_the_types_each_vllm_release_reads(
    model_type: str, version: str, refusal: str | None
) -> None:
    config_json = vendored(HEAD) | {"speculators_model_type": model_type}
    draft = model_facts(config_json, None).speculators
    assert draft is not None
    stack = Stack(Engine.VLLM, version, draft.method, 3, True)
    found = findings(draft, stack)
    if refusal is None:
        assert found == []
    else:
        ((key, message, error),) = found
        assert (key, error) == ("speculativeModel", True)
        assert refusal in message


def test_an_eagle3_head_of_another_layer_type_and_a_missing_layer_config() -> None:
    layer = vendored(HEAD)["transformer_layer_config"]
    assert isinstance(layer, dict)
    draft = model_facts(vendored(HEAD) | {"transformer_layer_config": layer}, None)
    assert draft.architecture == "Eagle3LlamaForCausalLM"  # vLLM algos.py names it so
    gemma = vendored(HEAD) | {"transformer_layer_config": {**layer, "model_type": "gemma"}}
    speculators = model_facts(gemma, None).speculators
    assert speculators is not None
    ((_, message, _),) = findings(speculators, Stack(Engine.VLLM, "0.27.1", "eagle3", 3, True))
    assert "with a gemma transformer_layer_config" in message
    no_layer = {k: v for k, v in vendored(HEAD).items() if k != "transformer_layer_config"}
    with pytest.raises(NotAModelConfig, match="no transformer_layer_config"):
        model_facts(no_layer, None)


def test_the_wrapper_passes_the_draft_with_method_and_count_filled() -> None:
    # vllm/config/speculative.py: a --speculative-config draft without num_speculative_tokens
    # fails ("A speculative model was provided, but `num_speculative_tokens` was not
    # provided"); a speculators config has no n_predict to default it from.
    endpoint = parsed("eagle3", speculativeNumTokens="3").config.endpoints[0]
    env = {**speculative_env(endpoint.speculative), "SM_VLLM_MODEL": QWEN_8B}
    argv = dry_run_argv("vllm", env)
    given = json.loads(argv[argv.index("--speculative-config") + 1])
    assert given == {"method": "eagle3", "model": HEAD, "num_speculative_tokens": 3}


aws = pytest.fixture(aws_served, name="aws")


def plan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *extra: str) -> int:
    swap = [f"hp:model={QWEN_8B}", f"hp:speculativeModel={HEAD}"]
    return plan_dev(tmp_path, monkeypatch, *(a for s in swap for a in ("--set", s)), *extra)


def test_mlcc_plan_preflight_reads_the_draft(
    hub: FakeHub,
    aws: LocalAWS,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert plan(tmp_path, monkeypatch, "--preflight") == 1  # the dev stack sets 5
    err = capsys.readouterr().err
    assert "error: hp:speculativeNumTokens: is 5, and the draft's config says 3" in err
    assert "has no hidden_size" not in err
    assert plan(tmp_path, monkeypatch, "--preflight", "--set", "hp:speculativeNumTokens=3") == 0
    capsys.readouterr()
    swap = ("--set", "hp:speculativeAlgorithm=eagle")
    assert plan(tmp_path, monkeypatch, "--preflight", *swap) == 1
    err = capsys.readouterr().err
    assert "error: hp:speculativeAlgorithm: is eagle, and the draft is a speculators-format" in err


def test_pulumi_preview_refuses_the_contradiction_and_passes_the_fit(
    hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert preview(parsed("eagle3", speculativeNumTokens="3").config, monkeypatch) == []
    (line,) = preview(parsed("eagle3").config, monkeypatch)
    assert line.startswith("error: hp:speculativeNumTokens: is not set, so 5 tokens")


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"transformer_layer_config": None}, "has a speculators_config but no transformer_layer"),
        ({"transformer_layer_config": "llama"}, "no transformer_layer_config object"),
        ({"transformer_layer_config": {"hidden_size": 4096}}, "has no num_attention_heads"),
        ({"transformer_layer_config": {"hidden_size": True}}, "hidden_size is true, not a"),
        ({"speculators_config": [], "speculators_model_type": None}, "speculators_model_type is"),
    ],
)
def test_a_malformed_draft_is_one_line_naming_the_draft(
    hub: FakeHub, change: dict[str, object], said: str
) -> None:
    hub.repos["broken/speculator"] = {"config.json": json.dumps(vendored(HEAD) | change).encode()}
    errors, warnings = settle(
        models_part(parsed("eagle3", draft="broken/speculator").config, 5), Mode.STRICT
    )
    (line,) = [str(e) for e in [*errors, *warnings]]
    assert line.startswith("hp:speculativeModel: ")
    assert said in line
