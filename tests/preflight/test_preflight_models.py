"""The models part of preflight against a fake Hub serving real config.json files."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_hub import TOKEN, FakeHub, HubBehaviour

from mlcc.config import stack as config
from mlcc.preflight.models import models_part
from mlcc.preflight.outcome import Mode, Outcome, settle

LLAMA_8B = "meta-llama/Llama-3.1-8B-Instruct"
EAGLE3_HEAD = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"


@pytest.fixture
def hub_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    yield


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
    # 16.06 GB / 4 GPUs = 3.7 GiB; the head 1.6 GB / 4; 24 GiB x 0.92 usable.
    assert line.startswith("memory: 3.7 + 0.4 GiB weights, KV room ")
    assert line.endswith("tokens of 8192 needed, 22.1 GiB usable per GPU")


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
        "hp:instanceType: needs 33.5 GiB per GPU, ml.g5.12xlarge has 22.1 GiB usable"
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
        outcome = check(hub, monkeypatch, seconds=1.5, **eagle3())
        elapsed = time.monotonic() - started
    assert elapsed < 6  # not the library's 60 s retry
    assert outcome.errors == ()
    (model, *_rest) = outcome.unchecked
    assert model.key == "hp:model" and "did not answer" in model.why
    auto_errors, auto_warnings = settle(outcome, Mode.AUTO)
    assert auto_errors == [] and str(auto_warnings[0]).startswith(
        "hp:model: not checked: the target's fit"
    )
