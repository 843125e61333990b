"""The models part of preflight against a fake Hub serving real config.json files."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from fake_hub import TOKEN, FakeHub, HubBehaviour

from mlcc.config import stack as config
from mlcc.preflight.models import models_part
from mlcc.preflight.outcome import Mode, Outcome, settle

LLAMA_8B = "meta-llama/Llama-3.1-8B-Instruct"
EAGLE3_HEAD = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"


def stack(**keys: str) -> config.StackConfig:
    values = {"aws:region": "us-east-1", "aws-native:region": "us-east-1"}
    values |= {f"hp:{k}": v for k, v in keys.items()}
    return config.parse(values, stack="t", secret_keys={"hp:hfToken"}).config


def check(
    hub: FakeHub, monkeypatch: pytest.MonkeyPatch, seconds: float = 5, **keys: str
) -> Outcome:
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    return models_part(stack(**keys), seconds)


def messages(outcome: Outcome) -> list[str]:
    errors, warnings = settle(outcome, Mode.STRICT)
    return [str(p) for p in [*errors, *warnings]]


def eagle3(model: str = LLAMA_8B, draft: str = EAGLE3_HEAD, **more: str) -> dict[str, str]:
    return {
        "model": model,
        "speculativeAlgorithm": "eagle3",
        "speculativeModel": draft,
        "maxModelLen": "8192",
        **more,
    }


def test_the_dev_stack_fits_with_its_figures(
    hub_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeHub() as hub:
        outcome = check(hub, monkeypatch, **eagle3())
    assert messages(outcome) == []
    (line,) = outcome.lines["hp-t"]
    # 16.06 GB / 4 GPUs = 3.7 GiB; the head, counted from its config (0.93 G float16
    # parameters), / 4; 22.4 GiB (EC2: 22888 MiB) x 0.92 usable.
    assert line.startswith("memory: 3.7 + 0.4 GiB weights, KV room ")
    assert line.endswith(
        "tokens of 8192 needed, 20.6 GiB usable per GPU (weights estimated from config.json)"
    )


def test_a_llama_head_on_qwen3_is_refused_with_both_vocabularies(
    hub_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeHub() as hub:
        outcome = check(hub, monkeypatch, **eagle3(model="Qwen/Qwen3-8B"))
    assert (
        "hp:speculativeModel: draft vocabulary 128256 tokens, target 151936: the head was "
        "trained for another tokenizer" in messages(outcome)
    )


def test_an_entry_names_its_own_key_and_a_hidden_size_mismatch(
    hub_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    entries = (
        '[{"name": "a", "speculativeAlgorithm": "ngram"}, {"name": "b", "speculativeAlgorithm": '
        f'"eagle3", "speculativeModel": "{EAGLE3_HEAD}", '
        '"model": "meta-llama/Llama-3.1-70B-Instruct", "instanceType": "ml.p4de.24xlarge"}]'
    )
    with FakeHub() as hub:
        outcome = check(hub, monkeypatch, model=LLAMA_8B, maxModelLen="8192", endpoints=entries)
    assert (
        "hp:endpoints[1].speculativeModel: draft hidden size 4096, target 8192: the head was "
        "trained for another target" in messages(outcome)
    )


def test_mtp_needs_a_target_with_mtp_layers(hub_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeHub() as hub:
        llama = check(
            hub, monkeypatch, model=LLAMA_8B, speculativeAlgorithm="mtp", maxModelLen="8192"
        )
        deepseek = check(
            hub,
            monkeypatch,
            model="deepseek-ai/DeepSeek-V3",
            speculativeAlgorithm="mtp",
            speculativeNumTokens="1",
            instanceType="ml.p5e.48xlarge",
            maxModelLen="8192",
        )
    assert any(
        m.startswith("hp:speculativeAlgorithm: mtp drafts with the target's own")
        and "LlamaForCausalLM" in m
        for m in messages(llama)
    )
    assert not any("speculativeAlgorithm" in m for m in messages(deepseek))
    # 688.6 GB of FP8 weights over 8 H200: 80.2 GiB per GPU, which fits.
    assert outcome_line(deepseek).startswith("memory: 80.2 + 0.0 GiB weights")


def outcome_line(outcome: Outcome) -> str:
    return next(line for lines in outcome.lines.values() for line in lines)


def test_70b_on_four_a10g_cannot_fit(hub_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeHub() as hub:
        outcome = check(
            hub, monkeypatch, model="meta-llama/Llama-3.1-70B-Instruct", maxModelLen="8192"
        )
    (message,) = messages(outcome)
    assert message.startswith(
        "hp:instanceType: needs 33.5 GiB per GPU, ml.g5.12xlarge has 20.6 GiB usable"
    )
    assert "the weights alone do not fit" in message


def test_the_full_context_default_is_refused_where_it_cannot_fit(
    hub_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeHub() as hub:
        outcome = check(hub, monkeypatch, model=LLAMA_8B, instanceType="ml.g5.2xlarge")
    (message,) = messages(outcome)
    assert message.startswith(
        "hp:maxModelLen: is not set, so the engine takes the model's full context of 131072 tokens"
    )
    assert "set hp:maxModelLen to at most " in message


def test_context_tensor_parallel_and_dtype(hub_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeHub() as hub:
        long = check(hub, monkeypatch, model=LLAMA_8B, maxModelLen="200000")
        three = check(hub, monkeypatch, model=LLAMA_8B, maxModelLen="8192", gpuCount="3")
        bf16_t4 = check(
            hub,
            monkeypatch,
            model="meta-llama/Llama-3.2-1B-Instruct",
            instanceType="ml.g4dn.xlarge",
            maxModelLen="8192",
            engineArgs='{"dtype": "bfloat16"}',
        )
        auto_t4 = check(
            hub,
            monkeypatch,
            model="meta-llama/Llama-3.2-1B-Instruct",
            instanceType="ml.g4dn.xlarge",
            maxModelLen="8192",
        )
        sglang_bf16_t4 = check(
            hub,
            monkeypatch,
            model="meta-llama/Llama-3.2-1B-Instruct",
            instanceType="ml.g4dn.xlarge",
            maxModelLen="8192",
            engine="sglang",
            engineArgs='{"dtype": "bfloat16"}',
        )
    assert messages(long)[0].startswith(
        "hp:maxModelLen: 200000 tokens is above the model's context of 131072"
    )
    assert messages(three)[0].startswith(
        "hp:gpuCount: 32 attention heads do not divide across 3 GPUs"
    )
    assert messages(bf16_t4) == [
        "hp:engineArgs.dtype: vLLM supports bfloat16 only from compute capability 8.0, and NVIDIA "
        "T4 has 7.5; remove it (auto uses float16 there) or set float16"
    ]
    assert messages(auto_t4) == [] and messages(sglang_bf16_t4) == []
    # the Hub's safetensors metadata: 1235814400 BF16 parameters = 2.3 GiB on one T4
    assert outcome_line(auto_t4).startswith("memory: 2.3 + 0.0 GiB weights")
    assert "estimated" not in outcome_line(auto_t4)


def test_gated_needs_a_token_that_reads_it(hub_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeHub(HubBehaviour(gated={LLAMA_8B})) as hub:
        anonymous = check(hub, monkeypatch, **eagle3())
        wrong = check(hub, monkeypatch, **eagle3(), hfToken="hf_someone_else")
        right = check(hub, monkeypatch, **eagle3(), hfToken=TOKEN)
        monkeypatch.setenv("HF_TOKEN", TOKEN)
        from_env = check(hub, monkeypatch, **eagle3())
    assert messages(anonymous) == [
        f"hp:model: {LLAMA_8B} is gated and no token was given; accept its licence on the "
        "Hub with the token's account, then set hp:hfToken (or HF_TOKEN for mlcc plan)"
    ]
    assert messages(wrong)[0].startswith(
        f"hp:model: {LLAMA_8B} is gated and the token cannot read it"
    )
    assert messages(right) == [] and messages(from_env) == []


def test_a_missing_model_and_revision(hub_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeHub() as hub:
        missing = check(hub, monkeypatch, **eagle3(draft="nobody/no-such-head"))
        revision = check(hub, monkeypatch, **eagle3(modelRevision="v9"))
    assert messages(missing)[0].startswith(
        "hp:speculativeModel: nobody/no-such-head is not on http://127.0.0.1"
    )
    assert messages(revision) == [f"hp:model: {LLAMA_8B} has no revision 'v9'"]


@pytest.mark.parametrize(
    ("kind", "says"),
    [
        ("html", "its config.json is not JSON"),
        ("huge", "its config.json is over 4 MiB"),
        ("utf8", "its config.json is not UTF-8 text"),
        ("redirect", "redirected config.json in a loop"),
    ],
)
def test_malformed_answers_are_one_line(
    hub_env: None, monkeypatch: pytest.MonkeyPatch, kind: str, says: str
) -> None:
    with FakeHub(HubBehaviour(malformed={LLAMA_8B: kind})) as hub:
        outcome = check(hub, monkeypatch, **eagle3())
    (message,) = messages(outcome)
    assert message.startswith("hp:model: ") and says in message


@pytest.mark.parametrize(
    "behaviour", [HubBehaviour(slow={LLAMA_8B: 30}), HubBehaviour(silent=True)]
)
def test_a_slow_or_silent_hub_costs_the_deadline_and_says_what_was_not_checked(
    hub_env: None, monkeypatch: pytest.MonkeyPatch, behaviour: HubBehaviour
) -> None:
    with FakeHub(behaviour) as hub:
        started = time.monotonic()
        outcome = check(hub, monkeypatch, seconds=0.3, **eagle3())
        elapsed = time.monotonic() - started
    assert elapsed < 20  # not the library's 60 s retry, nor the hub's 30 s
    assert outcome.errors == ()
    (model, *_rest) = outcome.unchecked
    assert model.key == "hp:model" and "did not answer" in model.why
    # The transport stopped the fetch at the deadline: preflight did not give up on a stuck one.
    assert "the Hub did not answer within" not in model.why, model.why
    auto_errors, auto_warnings = settle(outcome, Mode.AUTO)
    assert auto_errors == [] and str(auto_warnings[0]).startswith(
        "hp:model: not checked: the target's fit"
    )


def test_published_heads_and_drafts_against_their_targets(
    hub_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeHub() as hub:
        qwen_head = check(hub, monkeypatch, **eagle3("Qwen/Qwen3-8B", "specforge/qwen3-8b-eagle3"))
        big_head = check(hub, monkeypatch, **eagle3(draft="specforge/llama3-70B-eagle3"))
        small_draft = check(
            hub,
            monkeypatch,
            model=LLAMA_8B,
            speculativeAlgorithm="draft-model",
            speculativeModel="meta-llama/Llama-3.2-1B",
            maxModelLen="8192",
        )
        other_tokenizer = check(
            hub,
            monkeypatch,
            model="Qwen/Qwen3-8B",
            speculativeAlgorithm="draft-model",
            speculativeModel="meta-llama/Llama-3.2-1B",
            maxModelLen="8192",
        )
        model_as_head = check(hub, monkeypatch, **eagle3(draft="meta-llama/Llama-3.2-1B"))
    assert messages(qwen_head) == []
    # no weight size listed for the head: counted from its config.json
    assert outcome_line(qwen_head).endswith("(weights estimated from config.json)")
    assert (
        "hp:speculativeModel: draft hidden size 8192, target 4096: the head was trained for "
        "another target" in messages(big_head)
    )
    assert messages(small_draft) == []
    assert outcome_line(small_draft).startswith("memory: 3.7 + 0.6 GiB weights")
    assert messages(other_tokenizer) == [
        "hp:speculativeModel: draft vocabulary 128256 tokens, target 151936: a draft model must "
        "share the target's tokenizer"
    ]
    assert (
        "hp:speculativeModel: is a full LlamaForCausalLM model of 16 layers, not an EAGLE head; "
        "use hp:speculativeAlgorithm draft-model" in messages(model_as_head)
    )


def test_engines_differ_on_mtp_and_eagle3_targets(
    hub_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    deepseek = {
        "model": "deepseek-ai/DeepSeek-V3",
        "instanceType": "ml.p5e.48xlarge",
        "maxModelLen": "8192",
    }
    with FakeHub() as hub:
        vllm_head = check(
            hub,
            monkeypatch,
            **deepseek,
            speculativeAlgorithm="eagle3",
            speculativeModel="specforge/deepseek-v3-671b-eagle3",
        )
        sglang_mtp = check(
            hub,
            monkeypatch,
            **deepseek,
            engine="sglang",
            speculativeAlgorithm="mtp",
            speculativeNumTokens="1",
        )
        sglang_qwen_mtp = check(
            hub,
            monkeypatch,
            model="Qwen/Qwen3-8B",
            engine="sglang",
            speculativeAlgorithm="mtp",
            speculativeNumTokens="1",
            maxModelLen="8192",
        )
    assert vllm_head.errors == () and sglang_mtp.errors == ()
    assert messages(sglang_qwen_mtp)[0].startswith(
        "hp:speculativeAlgorithm: mtp drafts with the target's own multi-token-prediction "
        "layers, and sglang 0.5.17 knows none for Qwen3ForCausalLM"
    )


def test_a_local_model_directory_is_read_from_disk(
    hub_env: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from fake_hub import MODELS

    from mlcc.preflight.hub import Fetched, ModelRef, Unreachable, fetch

    local = tmp_path / "head"
    local.mkdir()
    (local / "config.json").write_bytes(
        (MODELS / "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B/config.json").read_bytes()
    )
    found = fetch(ModelRef(str(local), "main", None), 1)
    missing = fetch(ModelRef("/opt/ml/model/draft", "main", None), 1)
    assert isinstance(found, Fetched) and found.facts.draft_vocab_size == 32000
    assert isinstance(missing, Unreachable) and "inside the image" in missing.why


def test_offline_mode_reads_the_warm_cache_and_says_what_is_missing(
    hub_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeHub() as hub:
        assert messages(check(hub, monkeypatch, **eagle3())) == []  # warms the cache
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
        warm = check(hub, monkeypatch, **eagle3())
        cold = check(hub, monkeypatch, **eagle3(model="Qwen/Qwen3-8B"))
        requests = len(hub.requests)
        check(hub, monkeypatch, **eagle3())
        assert len(hub.requests) == requests  # offline: no request at all
    assert messages(warm) == []
    assert any("HF_HUB_OFFLINE is set" in u.why for u in cold.unchecked)


def test_a_thin_margin_is_a_warning_naming_the_figures(
    hub_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeHub() as hub:
        outcome = check(
            hub,
            monkeypatch,
            model=LLAMA_8B,
            instanceType="ml.g5.2xlarge",
            maxModelLen="44000",
        )
    assert outcome.errors == ()
    (warning,) = outcome.warnings
    assert warning.key == "hp:instanceType"
    assert (
        "under 10% to spare" in warning.message
        and "ml.g5.2xlarge has 20.6 GiB usable" in warning.message
    )


def test_keys_name_where_the_value_was_set(hub_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    entries = '[{"name": "a", "engineArgs": {"max-model-len": 300000}}]'
    with FakeHub() as hub:
        engine_flag = check(hub, monkeypatch, model=LLAMA_8B, endpoints=entries)
        inherited = check(
            hub,
            monkeypatch,
            model="meta-llama/Llama-3.1-70B-Instruct",
            maxModelLen="8192",
            endpoints='[{"name": "a"}]',
            instanceType="ml.g5.12xlarge",
        )
    assert messages(engine_flag)[0].startswith(
        "hp:endpoints[0].engineArgs.max-model-len: 300000 tokens is above the model's context"
    )
    (message,) = messages(inherited)
    assert message.startswith("hp:endpoints[0].instanceType: needs 33.5 GiB per GPU")
    assert message.endswith("(inherited from hp:instanceType)")


def test_hp_preflight_takes_three_modes() -> None:
    assert stack(model=LLAMA_8B).preflight == "auto"
    assert stack(model=LLAMA_8B, preflight="STRICT").preflight == "strict"
    with pytest.raises(config.ConfigError, match="hp:preflight: must be auto, strict or off"):
        stack(model=LLAMA_8B, preflight="sometimes")


def test_an_nvfp4_kv_cache_needs_a_blackwell_gpu_in_vllm(
    hub_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeHub() as hub:
        l40s = check(
            hub,
            monkeypatch,
            **eagle3(instanceType="ml.g6e.12xlarge"),
            engineArgs='{"kv-cache-dtype": "nvfp4"}',
        )
        b200 = check(
            hub,
            monkeypatch,
            **eagle3(instanceType="ml.p6-b200.48xlarge"),
            engineArgs='{"kv-cache-dtype": "nvfp4"}',
        )
        fp8_t4 = check(
            hub,
            monkeypatch,
            model="meta-llama/Llama-3.2-1B-Instruct",
            instanceType="ml.g4dn.xlarge",
            maxModelLen="8192",
            engineArgs='{"kv-cache-dtype": "fp8"}',
        )
    assert messages(l40s) == [
        "hp:engineArgs.kv-cache-dtype: vLLM stores an nvfp4 KV cache only on compute capability "
        "10.x (B200, GB200), and NVIDIA L40S has 8.9; use fp8 or auto"
    ]
    assert messages(b200) == [] and messages(fp8_t4) == []


def test_revisions_are_checked_and_default_to_main() -> None:
    endpoint = stack(**eagle3()).primary
    assert endpoint.model_revision == "main"
    assert endpoint.speculative is not None and endpoint.speculative.draft_revision == "main"
    with pytest.raises(config.ConfigError) as refused:
        stack(**eagle3(modelRevision="../etc", speculativeModelRevision="a b"))
    lines = str(refused.value).splitlines()
    assert (
        "hp:modelRevision: must be a branch, tag or commit of the Hub repository, got '../etc'"
        in lines
    )
    assert any(line.startswith("hp:speculativeModelRevision: must be a branch") for line in lines)


def test_every_fallback_instance_type_must_run_the_checkpoint(
    hub_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeHub() as hub:
        outcome = check(
            hub,
            monkeypatch,
            model=LLAMA_8B,
            engine="sglang",
            maxModelLen="8192",
            instanceTypes='["ml.p5.48xlarge", "ml.p4de.24xlarge"]',
            engineArgs='{"quantization": "w8a8_fp8"}',
        )
    assert messages(outcome) == [
        "hp:instanceTypes: w8a8_fp8 quantization needs compute capability 8.9 in sglang, and "
        "NVIDIA A100 80GB has 8.0; use an unquantized checkpoint or a newer instance type"
    ]


def test_memory_names_the_first_type_of_a_fallback_list(
    hub_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeHub() as hub:
        outcome = check(
            hub,
            monkeypatch,
            model="meta-llama/Llama-3.1-70B-Instruct",
            maxModelLen="8192",
            endpoints='[{"name": "a"}]',
            instanceTypes='["ml.g5.12xlarge", "ml.g5.24xlarge"]',
        )
    (message,) = messages(outcome)
    assert message.startswith("hp:endpoints[0].instanceTypes[0]: needs 33.5 GiB per GPU")
    assert message.endswith("(inherited from hp:instanceTypes)")
