"""The offline proof that a trained draft is real: issue #45, item 6 (docs/draft-proof.md).

A tiny Llama-shaped target with random weights and a tokenizer made here (4 layers, hidden 64,
256 tokens), nothing downloaded; `speculators train --dry-run` (speculators 0.9.0) writes an
eagle3 head for it; the program's preflight, the serve wrapper's dry run and vLLM 0.34.0's own
argument parsing and config validation on the CPU accept it as an eagle3 draft for that target.
Then a few real training steps on the CPU through the declared shim (cpu_shim.py), from that
head, on hidden states generated offline from the target, and a resumed run: the losses are
finite, the checkpoints are written, their weights moved, and the same checks accept them.

Run by `make draft-proof` (marker `draft_proof`, left out of `make test`): it needs the proof
interpreter, with torch, speculators and vLLM, that the target creates.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from proof_run import (
    HERE,
    LAYER_IDS,
    TOKENS,
    Step,
    head_config,
    preflight,
    proof_python,
    run,
    speculators_cli,
    vllm_checks,
    wrapper_argv,
)

pytestmark = pytest.mark.draft_proof

HIDDEN, WIDE = 64, 96
FIRST_STEPS, RESUMED_STEPS = 4, 8
# The flags of every speculators run: explicit target layer ids, and the attention and loss
# implementations that run on the CPU (the defaults compile GPU kernels). The dry runs shape the
# head (one decoder layer); the training runs start from the dry run's head (--from-pretrained,
# which speculators refuses beside shaping flags).
COMMON = [
    "--speculator-type", "eagle3",
    "--target-layer-ids", *map(str, LAYER_IDS),
    "--draft-attn-impl", "sdpa",
    "--loss-implementation", "eager",
]  # fmt: skip
LOSS = re.compile(r"train/loss=([0-9.eE+-]+|nan|inf)")
# Each tensor of two checkpoints: equal or not (run in the proof interpreter, which has torch).
COMPARE = """
import json, sys
from safetensors.torch import load_file
a, b = load_file(sys.argv[1]), load_file(sys.argv[2])
same = {k: bool((a[k].float() == b[k].float()).all()) for k in sorted(a.keys() & b.keys())}
print(json.dumps(same))
"""


@dataclass(frozen=True)
class Proof:
    root: Path
    target: Path
    head: Path  # the dry run's, for the target
    wide_head: Path  # the dry run's, for a 96-wide target of the same vocabulary
    trained: Path  # the first training run's checkpoint
    resumed: Path  # the resumed run's checkpoint
    released: Step  # speculators' own `train`, without the shim
    first: Step
    second: Step
    python: str


@pytest.fixture(scope="module")
def proof(tmp_path_factory: pytest.TempPathFactory) -> Proof:
    python = proof_python()
    root = tmp_path_factory.mktemp("proof")
    target, wide = root / "target", root / "wide-target"
    run(python, [str(HERE / "make_target.py"), str(target)], root)
    run(python, [str(HERE / "make_target.py"), str(wide), str(WIDE)], root)
    cli = speculators_cli(python)
    for verifier, head in ((target, root / "head"), (wide, root / "wide-head")):
        dry_run = [
            cli, "train", "--dry-run", *COMMON, "--num-layers", "1",
            "--verifier-name-or-path", str(verifier),
            "--save-path", str(head), "--data-path", str(root / "no-data"),
        ]  # fmt: skip
        run(python, dry_run, root)
    data = root / "data"
    run(python, [str(HERE / "make_data.py"), "rows", str(target), str(root / "rows.jsonl")], root)
    prepare = [
        cli, "prepare-data", "--model", str(target), "--data", str(root / "rows.jsonl"),
        "--output", str(data), "--seq-length", "64", "--num-preprocessing-workers", "1",
    ]  # fmt: skip
    run(python, prepare, root)
    layer_ids = [str(k) for k in LAYER_IDS]
    run(
        python,
        [str(HERE / "make_data.py"), "hidden-states", str(target), str(data), *layer_ids],
        root,
    )
    ckpt = root / "checkpoints"
    flags = [
        "train", *COMMON,
        "--verifier-name-or-path", str(target),
        "--from-pretrained", str(root / "head"),
        "--data-path", str(data),
        "--total-seq-len", "128", "--num-workers", "0", "--on-missing", "raise",
        "--train-data-ratio", "0.75", "--lr", "1e-3", "--log-freq", "1",
    ]  # fmt: skip
    # speculators' own console script, the same flags, no shim: must fail (the test says why)
    unshimmed = [*flags, "--save-path", str(root / "unshimmed"), "--max-steps", "1"]
    released = run(python, [cli, *unshimmed], root, fails=True)
    training = [str(HERE / "cpu_shim.py"), *flags, "--save-path", str(ckpt)]
    first = run(python, [*training, "--epochs", "1", "--max-steps", str(FIRST_STEPS)], root)
    trained = root / "trained"
    # the first run's checkpoint, kept as it was (the resumed run writes beside it)
    trained.mkdir()
    for path in (ckpt / "0").iterdir():
        (trained / path.name).write_bytes(path.read_bytes())
    second = run(python, [*training, "--epochs", "2", "--max-steps", str(RESUMED_STEPS)], root)
    return Proof(
        root,
        target,
        root / "head",
        root / "wide-head",
        trained,
        ckpt / "1",
        released,
        first,
        second,
        python,
    )


@pytest.fixture(scope="module")
def vllm(proof: Proof) -> dict[str, dict[str, object]]:
    """vLLM's verdict on each head, as the wrapper's argv serves it with the tiny target: one
    vLLM process for all of them (its import is most of the time)."""
    heads = {
        "dry-run": proof.head,
        "trained": proof.trained,
        "resumed": proof.resumed,
        "wide": proof.wide_head,
    }
    cases = [(wrapper_argv(head), proof.target) for head in heads.values()]
    return dict(zip(heads, vllm_checks(proof.python, cases, proof.root), strict=True))


def test_the_dry_run_writes_an_eagle3_head_for_the_target(proof: Proof) -> None:
    config = head_config(proof.head)
    assert config["speculators_model_type"] == "eagle3"
    assert config["eagle_aux_hidden_state_layer_ids"] == list(LAYER_IDS)
    layer = config["transformer_layer_config"]
    assert isinstance(layer, dict)
    assert (layer["hidden_size"], layer["vocab_size"]) == (HIDDEN, 256)
    speculators = config["speculators_config"]
    assert isinstance(speculators, dict)
    assert speculators["algorithm"] == "eagle3"
    assert speculators["verifier"]["name_or_path"] == str(proof.target)
    assert speculators["proposal_methods"][0]["speculative_tokens"] == TOKENS
    assert (proof.head / "model.safetensors").stat().st_size > 0


def test_preflight_accepts_the_dry_run_head_as_the_targets_eagle3_draft(proof: Proof) -> None:
    errors, warnings, outcome = preflight(proof.target, proof.head, proof.root / "hub-1")
    assert (errors, warnings, outcome.unchecked) == ([], [], ())
    assert outcome.read == {"hp:model", "hp:speculativeModel"}  # both read, the head locally
    (line,) = outcome.lines["hp-proof"]
    assert line.startswith("memory: ")


def test_preflight_refuses_a_head_made_for_a_wider_target(proof: Proof) -> None:
    """The control: the same check refuses a head whose fc takes 3 x 96 wide hidden states."""
    errors, _, _ = preflight(proof.target, proof.wide_head, proof.root / "hub-2")
    assert len(errors) == 1
    assert errors[0].startswith("hp:speculativeModel: ")
    assert "96" in errors[0] and "64" in errors[0]


def test_the_serve_wrappers_dry_run_serves_the_local_head(proof: Proof) -> None:
    argv = wrapper_argv(proof.head)
    assert argv[:3] == ["vllm", "serve", "proof/tiny-llama"]
    spec = json.loads(argv[argv.index("--speculative-config") + 1])
    assert spec == {"method": "eagle3", "model": str(proof.head), "num_speculative_tokens": TOKENS}


def test_vllm_accepts_the_dry_run_head_as_an_eagle3_draft_for_the_target(
    proof: Proof, vllm: dict[str, dict[str, object]]
) -> None:
    assert vllm["dry-run"] == {
        "ok": True,
        "method": "eagle3",
        "num_speculative_tokens": TOKENS,
        "draft": str(proof.head),
        "draft_architectures": ["Eagle3LlamaForCausalLM"],
        "draft_hidden_size": HIDDEN,
        "target": str(proof.target),
        "target_hidden_size": HIDDEN,
    }


def test_speculators_as_released_does_not_train_without_an_accelerator(proof: Proof) -> None:
    """Why the shim exists: the same run without it stops at the first CUDA call."""
    assert "Found no NVIDIA driver" in proof.released.output
    assert not (proof.root / "unshimmed" / "0").exists()


def test_training_steps_run_on_the_cpu_with_finite_losses(proof: Proof) -> None:
    assert "cpu shim: " in proof.first.stderr
    losses = [float(x) for x in LOSS.findall(proof.first.output)]
    assert len(losses) == FIRST_STEPS
    assert all(math.isfinite(x) and x > 0 for x in losses), losses
    state = json.loads((proof.trained / "training_state.json").read_text())
    assert state["global_step"] == FIRST_STEPS
    validation = json.loads((proof.trained / "val_metrics.json").read_text())
    assert math.isfinite(validation["loss_epoch"]) and validation["loss_epoch"] > 0


def test_the_steps_moved_the_heads_weights(proof: Proof) -> None:
    step = run(
        proof.python,
        [
            "-c",
            COMPARE,
            str(proof.head / "model.safetensors"),
            str(proof.trained / "model.safetensors"),
        ],
        proof.root,
    )
    same = json.loads(step.stdout)
    assert same, "the checkpoints share no tensor"
    # the trained layers moved; the embeddings and the lm head are the target's, frozen
    moved = sorted(name for name, equal in same.items() if not equal)
    assert any(name.startswith("fc.") for name in moved), same
    assert any(name.startswith("layers.0.") for name in moved), same


def test_a_resumed_run_loads_its_checkpoint_on_the_cpu_and_goes_on(proof: Proof) -> None:
    assert "Resuming training on epoch 1" in proof.second.output
    state = json.loads((proof.resumed / "training_state.json").read_text())
    assert state == {"epoch": 1, "local_step": 0, "global_step": RESUMED_STEPS}
    losses = [float(x) for x in LOSS.findall(proof.second.output)]
    assert losses and all(math.isfinite(x) for x in losses), losses


@pytest.mark.parametrize("which", ["trained", "resumed"])
def test_the_trained_checkpoints_are_accepted_like_the_dry_run_head(
    proof: Proof, vllm: dict[str, dict[str, object]], which: str
) -> None:
    head = proof.trained if which == "trained" else proof.resumed
    assert head_config(head)["speculators_model_type"] == "eagle3"
    errors, warnings, _ = preflight(proof.target, head, proof.root / f"hub-{which}")
    assert (errors, warnings) == ([], [])
    verdict = vllm[which]
    assert (verdict["ok"], verdict["method"], verdict["draft"]) == (True, "eagle3", str(head))
    assert verdict["draft_hidden_size"] == HIDDEN


def test_vllm_itself_does_not_refuse_the_wider_targets_head(
    proof: Proof, vllm: dict[str, dict[str, object]]
) -> None:
    """Why preflight's check exists: vLLM's config validation takes a head whose fc expects
    96-wide hidden states beside a 64-wide target (it would fail only when the weights load)."""
    verdict = vllm["wide"]
    assert (verdict["ok"], verdict["draft_hidden_size"], verdict["target_hidden_size"]) == (
        True,
        WIDE,
        HIDDEN,
    )
