"""The training fit check (mlcc/preflight/training_fit.py): an 8B and a 70B Llama target on
g5-, p4- and p5-class nodes, each figure recomputed here from the formula of its docstring."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from mlcc.preflight.facts import ModelFacts, model_facts
from mlcc.preflight.gpus import gpu_spec
from mlcc.preflight.rules import release_tables
from mlcc.preflight.training_fit import (
    FitKeys,
    TrainingJob,
    check,
    draft_shape,
    estimate,
)
from mlcc.serving.engines import Engine

UTILIZATION = float(release_tables(Engine.VLLM)["gpu_memory_utilization"])  # the pinned default
MODELS = Path(__file__).resolve().parents[1] / "preflight" / "models" / "meta-llama"
GIB = 1024**3
MIB = 1024**2


def target(name: str) -> ModelFacts:
    folder = MODELS / name
    config = json.loads((folder / "config.json").read_text())
    index = json.loads((folder / "model.safetensors.index.json").read_text())
    return model_facts(config, int(index["metadata"]["total_size"]))


LLAMA_8B = target("Llama-3.1-8B-Instruct")
LLAMA_70B = target("Llama-3.1-70B-Instruct")


def job(
    instance: str, gpus: int, tokens: int | None, disk_gib: float | None = 500, **more: object
) -> TrainingJob:
    spec = gpu_spec(instance)
    assert spec is not None
    model = more.pop("target", LLAMA_8B)
    assert isinstance(model, ModelFacts)
    return TrainingJob(model, instance, spec, gpus, tokens, disk_gib, **more)  # type: ignore[arg-type]


# The 8B's draft by hand: hidden 4096, 32 heads x 128, 8 KV heads x 128, MLP 14336, vocab
# 128256, draft vocab 32000, one decoder layer whose q/k/v read 2 x 4096, fc 3 x 4096 -> 4096.
H, Q, KV, MLP, V = 4096, 32 * 128, 8 * 128, 14336, 128256
FC = 3 * H * H
LAYER = 2 * H * (Q + 2 * KV) + Q * H + 3 * H * MLP
NORMS = H + 3 * H


def frozen(draft_vocab: int) -> int:
    return V * H + 2 * draft_vocab * H + H


def activations(draft_vocab: int, seq: int = 8192, steps: int = 3) -> int:
    per_pass = draft_vocab + 2 * H + 2 * Q + 2 * KV + 3 * H + 4 * MLP
    return seq * 2 * ((3 + 1) * H + draft_vocab + H + steps * per_pass)


def training(draft_vocab: int, optimizer: str = "muon", seq: int = 8192) -> int:
    trainable = FC + LAYER + NORMS
    state = 8 * trainable if optimizer == "adamw" else 4 * (FC + LAYER) + 8 * NORMS
    weights = 4 * (frozen(draft_vocab) + trainable)
    return weights + 4 * trainable + state + activations(draft_vocab, seq)


def test_the_draft_shape_is_speculators_eagle3_head() -> None:
    shape = draft_shape(job("ml.g5.12xlarge", 4, 1, draft_vocab_size=32000))
    assert (shape.frozen, shape.matrices, shape.vectors) == (frozen(32000), FC + LAYER, NORMS)
    # a second layer reads hidden, not 2 x hidden, and has two norms
    two = draft_shape(job("ml.g5.12xlarge", 4, 1, draft_vocab_size=32000, num_layers=2))
    assert two.matrices - shape.matrices == H * (Q + 2 * KV) + Q * H + 3 * H * MLP
    assert two.vectors - shape.vectors == 2 * H


def test_an_8b_target_fits_a_g5_node_with_a_32k_draft_vocabulary() -> None:
    tokens = 10_000_000
    fit_job = job("ml.g5.12xlarge", 4, tokens, draft_vocab_size=32000)
    fit = estimate(fit_job)
    # vLLM: 16,060,522,496 bytes of weights at tp 1 plus 32 layers x 2 x 8 x 128 x 2 bytes a
    # token of KV cache for one 8192-token sequence, in 90% of 22888 MiB
    assert fit.serving == 16_060_522_496 + 32 * 2 * 8 * 128 * 2 * 8192
    assert fit.usable_serving == pytest.approx(22888 * MIB * UTILIZATION)
    assert fit.training == training(32000)
    # 32 KiB a token (3 aux layers + the last, 4096 wide, bfloat16) plus an 8-byte token id
    assert fit.hidden_states == tokens * (4 * 4096 * 2 + 8)
    assert 4 * 4096 * 2 == 32 * 1024
    outcome = check(fit_job)
    assert outcome.errors == ()
    assert outcome.warnings == ()
    (headline,) = outcome.lines["draftTraining"]
    assert headline == (
        f"training fit: vLLM {fit.serving / GIB:.1f} GiB of {fit.usable_serving / GIB:.1f} GiB "
        f"per GPU, training {training(32000) / GIB:.1f} GiB of 22.4 GiB, disk "
        f"{fit.disk_needed / GIB:.1f} GiB of 500.0 GiB"
    )


def test_the_full_vocabulary_and_16k_sequences_do_not_fit_an_a10g() -> None:
    refused = check(job("ml.g5.2xlarge", 1, 1_000_000, total_seq_len=16384))
    needed = training(V, seq=16384)
    assert needed > 22888 * MIB  # the formula says no, before the check does
    (error,) = refused.errors
    assert error.key == "hp:draftTraining.instanceGroup"
    assert f"{needed / GIB:.1f} GiB" in error.message
    assert "does not fit one GPU of ml.g5.2xlarge (NVIDIA A10G, 22 GiB)" in error.message
    assert "muon state" in error.message
    # the same job fits an A100 40GB (p4d) and an H100 (p5)
    assert check(job("ml.p4d.24xlarge", 8, 1_000_000, total_seq_len=16384)).errors == ()
    assert check(job("ml.p5.48xlarge", 8, 1_000_000, total_seq_len=16384)).errors == ()
    # at 8192 tokens it just fits, with a warning: under 10% of the GPU to spare
    near = check(job("ml.g5.2xlarge", 1, 1_000_000))
    assert near.errors == ()
    assert training(V) > 0.9 * 22888 * MIB
    assert [w.message.split(":")[0] for w in near.warnings] == [
        "the draft's training nearly fills a GPU"
    ]


def test_adamw_keeps_two_states_per_parameter() -> None:
    muon = estimate(job("ml.p5.48xlarge", 8, 1))
    adamw = estimate(job("ml.p5.48xlarge", 8, 1, optimizer="adamw"))
    assert adamw.optimizer - muon.optimizer == 4 * (FC + LAYER)
    assert adamw.training == training(V, "adamw")


def test_a_70b_target_does_not_fit_vllm_on_four_a10g() -> None:
    refused = check(job("ml.g5.12xlarge", 4, 1, target=LLAMA_70B, tensor_parallel=4))
    serving = 141_107_412_992 / 4 + 80 * 2 * 2 * 128 * 2 * 8192  # 8 KV heads / tp 4 = 2
    assert serving > 22888 * MIB * UTILIZATION
    messages = [e.message for e in refused.errors if "vLLM cannot serve" in e.message]
    assert messages == [
        f"vLLM cannot serve the target for hidden-state generation on ml.g5.12xlarge (NVIDIA "
        f"A10G, 22 GiB): {serving / GIB:.1f} GiB per GPU (weights / tensor-parallel 4, plus the "
        f"KV cache of one 8192-token sequence) > {22888 * MIB * UTILIZATION / GIB:.1f} GiB usable; "
        "choose an instance group with more or larger GPUs (hp:draftTraining.instanceGroup)"
    ]
    # eight H100s at tp 4 serve it
    fits = check(job("ml.p5.48xlarge", 8, 1, target=LLAMA_70B, tensor_parallel=4))
    assert not [e for e in fits.errors if "vLLM" in e.message]


def test_fifty_million_tokens_do_not_fit_the_default_volume() -> None:
    tokens = 50_000_000
    fit_job = job("ml.p5.48xlarge", 8, tokens, disk_gib=500, draft_vocab_size=32000)
    fit = estimate(fit_job)
    hidden = tokens * (4 * 4096 * 2 + 8)
    saved = V * H + 32000 * H + FC + LAYER + NORMS  # the state dict without the verifier's head
    checkpoint = 2 * (saved + (FC + LAYER) + 2 * NORMS)  # weights and muon/adamw state, bf16
    assert fit.checkpoints == 20 * checkpoint
    needed = hidden + 16_060_522_496 + 20 * checkpoint
    assert fit.disk_needed == needed
    (error,) = check(fit_job).errors
    assert error.key == "hp:instanceGroups[].ebsVolumeSizeGb"
    most = int((500 * GIB - 16_060_522_496 - 20 * checkpoint) / (4 * 4096 * 2 + 8))
    assert error.message == (
        f"the job needs {needed / GIB:.1f} GiB of disk ({hidden / GIB:.1f} GiB hidden states "
        f"(50,000,000 tokens x 32.0 KiB), {16_060_522_496 / GIB:.1f} GiB target weights, "
        f"{20 * checkpoint / GIB:.1f} GiB in 20 checkpoints) and the node has 500.0 GiB: raise "
        f"it to at least {-(-needed // GIB)}, or train on at most {most:,} tokens "
        "(hp:draftTraining.dataset)"
    )
    # that many tokens fit, and one checkpoint frees room
    assert check(replace(fit_job, tokens=most)).errors == ()
    assert check(replace(fit_job, disk_gib=-(-needed // GIB))).errors == ()


def test_online_training_keeps_no_hidden_states_but_needs_a_gpu_beside_vllm() -> None:
    online = estimate(job("ml.p5.48xlarge", 8, 50_000_000, mode="online"))
    assert online.hidden_states == 0
    (error,) = check(job("ml.p5.4xlarge", 1, 1, mode="online")).errors
    assert error.message == (
        "ml.p5.4xlarge has 1 GPU and the job needs 2 (1 for vLLM at tensor-parallel size 1, one "
        "more for the trainer in online mode): choose an instance group whose nodes have more "
        "GPUs (hp:draftTraining.instanceGroup)"
    )


def test_refusals_name_the_keys_the_preflight_part_gives() -> None:
    keys = FitKeys(
        instance_group="hp:draftTraining.instanceGroup", disk="hp:instanceGroups[2].ebsVolumeSizeGb"
    )
    refused = check(
        job("ml.g5.2xlarge", 1, 100_000_000, disk_gib=100, keys=keys, total_seq_len=16384)
    )
    assert sorted(e.key for e in refused.errors) == [
        "hp:draftTraining.instanceGroup",
        "hp:instanceGroups[2].ebsVolumeSizeGb",
    ]


def test_a_nearly_full_gpu_warns() -> None:
    # the GPU just above the training's need: under 10% to spare
    needed = training(32000)
    spec = gpu_spec("ml.g5.12xlarge")
    assert spec is not None
    tight = replace(spec, memory_mib=-(-int(needed * 1.05) // MIB))
    spread = job("ml.g5.12xlarge", 4, 1, draft_vocab_size=32000, tensor_parallel=2)
    outcome = check(replace(spread, gpu=tight))
    assert outcome.errors == ()
    assert [w.message.split(":")[0] for w in outcome.warnings] == [
        "the draft's training nearly fills a GPU"
    ]


def test_fsdp_splits_weights_gradients_and_state_but_not_activations() -> None:
    whole = estimate(job("ml.g5.12xlarge", 4, 1, total_seq_len=16384))
    sharded_job = job("ml.g5.12xlarge", 4, 1, total_seq_len=16384, fsdp_shard=True)
    sharded = estimate(sharded_job)
    assert sharded.weights == whole.weights / 4
    assert sharded.gradients == whole.gradients / 4
    assert sharded.optimizer == whole.optimizer / 4
    assert sharded.activations == whole.activations == activations(V, seq=16384)
    # 16,384 tokens over the full vocabulary: the activations alone exceed an A10G
    assert activations(V, seq=16384) > 22888 * MIB
    (error,) = check(sharded_job).errors
    assert error.message.endswith("choose an instance group with larger GPUs")
    (unsharded,) = check(job("ml.g5.12xlarge", 4, 1, total_seq_len=16384)).errors
    assert unsharded.message.endswith("(or shard the draft over the GPUs: --fsdp-shard)")


def test_the_docs_figures_are_the_checks() -> None:
    text = " ".join(
        (Path(__file__).resolve().parents[2] / "docs" / "draft-training-status.md")
        .read_text()
        .split()
    )
    small = estimate(job("ml.g5.2xlarge", 1, 50_000_000, draft_vocab_size=32000))
    full = estimate(job("ml.g5.2xlarge", 1, 1, total_seq_len=16384))
    assert (
        f"vLLM {small.serving / GIB:.1f} GiB per GPU, training {small.training / GIB:.1f} GiB "
        f"({small.weights / GIB:.1f} GiB weights, {small.gradients / GIB:.1f} GiB gradients, "
        f"{small.optimizer / GIB:.1f} GiB Muon state, {small.activations / GIB:.1f} GiB "
        "activations)"
    ) in text
    assert f"16,384-token sequences it needs {full.training / GIB:.1f} GiB" in text
    assert f"50 million tokens of hidden states take {small.hidden_states / GIB:,.0f} GiB" in text


def test_online_refusals_offer_offline_and_an_unknown_disk_is_not_checked() -> None:
    # online on four A10G: vLLM has one GPU for the 8B (16 GiB of weights plus the KV cache)
    online = job("ml.g5.12xlarge", 4, None, disk_gib=None, mode="online", total_seq_len=131072)
    (error,) = [e for e in check(online).errors if "vLLM cannot serve" in e.message]
    assert error.message.endswith(
        "(hp:draftTraining.instanceGroup), or set hp:draftTraining.hiddenStates to offline "
        "(vLLM then has all 4 GPUs)"
    )
    # offline with unknown tokens: memory checked, the disk not, and the line says so
    unknown = check(job("ml.p5.48xlarge", 8, None, disk_gib=1, draft_vocab_size=32000))
    assert unknown.errors == () and unknown.warnings == ()
    (line,) = unknown.lines["draftTraining"]
    assert line.endswith("disk not checked")
    # online needs no tokens: a 1 GiB volume is refused for the target's weights alone
    (disk,) = check(job("ml.p5.48xlarge", 8, None, disk_gib=1, mode="online")).errors
    assert disk.key == "hp:instanceGroups[].ebsVolumeSizeGb"
