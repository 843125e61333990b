"""Does an EAGLE-3 training job fit its node? The estimate of docs/draft-training-status.md
("Fit"), pure: `check(job)` returns an `Outcome` whose errors refuse the job.

Each term follows speculators 0.9.0 (the pinned release; its wheel's files are cited):

- Hidden-state generation: vLLM serves the target at the job's tensor-parallel size, so each
  of its GPUs holds target weights / tp plus the KV cache of one training sequence
  (`total_seq_len`, train/config/schema.py), in the usable share of its memory (vLLM's
  gpu-memory-utilization, the pinned release's default: mlcc/preflight/memory.py).
- The draft (models/eagle3/core.py, models/eagle3/model_definitions.py, model.py
  DraftVocabMixin): embed_tokens (target vocab x hidden), lm_head and verifier_lm_head (draft
  vocab x hidden each), all frozen; trainable: fc (aux layers x hidden -> hidden), the first
  decoder layer (q/k/v read 2 x hidden), further layers, norms. The decoder's MLP width is the
  target's intermediate_size, or 3 x hidden for a mixture of experts
  (models/utils.py resolve_draft_intermediate_size). Master weights stay fp32
  (train/config/schema.py hidden_states_dtype), so frozen and trainable weights take 4 bytes,
  and gradients of the trainable ones 4 bytes.
- The optimizer (train/optimizers.py build_optimizers; the release's default is "muon"):
  AdamW keeps exp_avg and exp_avg_sq (8 bytes a parameter), Muon one momentum_buffer (4 bytes)
  for the 2D matrices and AdamW for the rest (torch.optim Muon and AdamW, torch 2.14.1).
- Activations (train/trainer.py: autocast at hidden_states_dtype; core.py forward: the ttt_steps
  passes over one packed sequence of total_seq_len tokens): ASSUMED, a lower bound counted from
  the tensors each pass keeps for backward (each layer's input, q, k, v, attention output, three
  residual-stream tensors, the MLP's gate, up, activation and product, the logits) plus the
  batch (aux + last hidden states, the targets over the draft vocabulary, fc's output); norms'
  fp32 copies, attention statistics and the loss's intermediates are not counted.
- Disk for offline hidden states: each sample's `hs_i.safetensors` holds hidden_states
  [seq_len, aux layers + 1, hidden] and token_ids [seq_len] (train/data.py: `[:, :-1]` are the
  aux layers, `[:, -1]` the last; data_generation/offline.py check_hidden_states). Element size:
  the target's compute dtype (ASSUMED: vLLM's extract_hidden_states writes the tensor it
  captured); token ids 8 bytes (ASSUMED int64). An 8B Llama (hidden 4096, 3 aux layers) in
  bfloat16: 4 x 4096 x 2 = 32 KiB a token. Online training keeps none (train/config/schema.py
  on_generate: "discarded once loaded"). Plus the target's weights (vLLM downloads them to the
  node) and every checkpoint (train/checkpointer.py save_checkpoint: the state dict and the
  optimizer state, both converted to bfloat16; one per epoch unless checkpoint_freq says
  otherwise, all kept; train/trainer.py maybe_save_checkpoint: with --checkpoint-freq N >= 1
  epoch 0 and every Nth, below 1 several saves into each epoch's one folder).
- With --fsdp-shard (train/trainer.py _setup_model_fsdp) the weights, gradients and optimizer
  state are split over the trainer's GPUs; without it each GPU holds them whole.

Nothing counts CUDA's own context or the allocator's slack, so a refusal means the job cannot
fit; under 10% to spare is a warning. The disk is checked only when both the node's volume and
the dataset's tokens are known (tokens do not matter online); otherwise the caller says why it
was not (mlcc/preflight/training_part.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from mlcc.preflight.facts import DTYPE_BYTES, ModelFacts, with_estimate
from mlcc.preflight.gpus import GpuSpec
from mlcc.preflight.memory import GIB, kv_bytes_per_token, loaded_weight_bytes, utilization
from mlcc.preflight.outcome import Outcome
from mlcc.serving.engines import Engine
from mlcc.serving.speculative import Problem

WARN_MARGIN = 0.10
FP32 = 4
CHECKPOINT_BYTES = 2  # train/checkpointer.py save_checkpoint float_dtype=torch.bfloat16
TOKEN_ID_BYTES = 8  # assumed: token_ids saved as int64
# speculators 0.9.0 defaults (train/config/schema.py; aux layers: models/eagle3/core.py)
DEFAULT_TOTAL_SEQ_LEN = 8192
DEFAULT_TTT_STEPS = 3
DEFAULT_AUX_LAYERS = 3
DEFAULT_EPOCHS = 20


@dataclass(frozen=True)
class FitKeys:
    """The stack keys a refusal names. vLLM's tensor-parallel size is no key of its own: it is
    every GPU of the node offline and 1 online (mlcc/manifest/training_script.py), so the
    instance group (or hp:draftTraining.instanceType, for a cluster the stack does not create)
    and hp:draftTraining.hiddenStates change it."""

    instance_group: str = "hp:draftTraining.instanceGroup"
    disk: str = "hp:instanceGroups[].ebsVolumeSizeGb"
    tokens: str = "hp:draftTraining.dataset"
    hidden_states: str = "hp:draftTraining.hiddenStates"


@dataclass(frozen=True)
class TrainingJob:
    """What the fit needs to know of one training job and its node."""

    target: ModelFacts  # the target's config.json facts (mlcc/preflight/facts.py)
    instance_type: str
    gpu: GpuSpec  # one GPU of the instance type
    gpu_count: int  # GPUs on one node
    tokens: int | None  # training tokens: the dataset's prompt and answer tokens (None: unknown)
    disk_gib: float | None  # the volume the job writes to (the node's EBS volume); None: unknown
    tensor_parallel: int = 1  # vLLM's, for hidden-state generation
    mode: Literal["offline", "online"] = "offline"
    total_seq_len: int = DEFAULT_TOTAL_SEQ_LEN
    num_layers: int = 1
    draft_vocab_size: int | None = None  # None: the target's vocabulary
    aux_layers: int = DEFAULT_AUX_LAYERS
    ttt_steps: int = DEFAULT_TTT_STEPS
    optimizer: Literal["muon", "adamw"] = "muon"
    epochs: int = DEFAULT_EPOCHS
    checkpoints: int | None = None  # None: one per epoch
    fsdp_shard: bool = False  # --fsdp-shard: weights, gradients and state split over the GPUs
    keys: FitKeys = FitKeys()


@dataclass(frozen=True)
class DraftShape:
    """The draft's parameter counts (elements)."""

    frozen: int  # embed_tokens, lm_head, verifier_lm_head, verifier_norm
    matrices: int  # trainable 2D weights: fc, attention and MLP projections
    vectors: int  # trainable norms

    @property
    def trainable(self) -> int:
        return self.matrices + self.vectors


@dataclass(frozen=True)
class TrainingFit:
    """The figures, in bytes (per GPU for memory, per node for disk)."""

    usable_serving: float  # vLLM's share of one GPU
    serving: float  # target weights / tp + KV cache of one sequence
    weights: float  # draft weights in fp32 (frozen + trainable)
    gradients: float
    optimizer: float
    activations: float
    train_gpu: float  # all of one GPU: vLLM is stopped (offline) or elsewhere (online)
    hidden_states: float
    target_files: float
    checkpoints: float
    disk: float
    weights_estimated: bool
    disk_checked: bool = True  # False: the volume or (offline) the tokens are unknown

    @property
    def training(self) -> float:
        return self.weights + self.gradients + self.optimizer + self.activations

    @property
    def disk_needed(self) -> float:
        return self.hidden_states + self.target_files + self.checkpoints


def draft_shape(job: TrainingJob) -> DraftShape:
    target = job.target
    hidden, vocab = target.hidden_size, target.vocab_size
    draft_vocab = job.draft_vocab_size or vocab
    q_width = target.num_heads * target.head_dim
    kv_width = target.num_kv_heads * target.head_dim
    inter = target.intermediate_size or 3 * hidden
    matrices = job.aux_layers * hidden * hidden  # fc
    vectors = hidden  # the final norm
    for layer in range(job.num_layers):
        width = 2 * hidden if layer == 0 else hidden  # the first layer reads cat(embeds, hidden)
        matrices += width * (q_width + 2 * kv_width) + q_width * hidden + 3 * hidden * inter
        vectors += (3 if layer == 0 else 2) * hidden  # + hidden_norm in the first layer
    frozen = vocab * hidden + 2 * draft_vocab * hidden + hidden
    return DraftShape(frozen, matrices, vectors)


def activation_bytes(job: TrainingJob, element: int) -> float:
    """The assumed lower bound of what one training step keeps for backward."""
    target = job.target
    hidden = target.hidden_size
    draft_vocab = job.draft_vocab_size or target.vocab_size
    q_width = target.num_heads * target.head_dim
    kv_width = target.num_kv_heads * target.head_dim
    inter = target.intermediate_size or 3 * hidden
    per_pass = draft_vocab  # the logits
    for layer in range(job.num_layers):
        width = 2 * hidden if layer == 0 else hidden
        per_pass += width + 2 * q_width + 2 * kv_width + 3 * hidden + 4 * inter
    batch = (job.aux_layers + 1) * hidden + draft_vocab + hidden  # inputs, targets, fc output
    return float(job.total_seq_len * element * (batch + job.ttt_steps * per_pass))


def estimate(job: TrainingJob) -> TrainingFit:
    target = with_estimate(job.target)
    element = min(DTYPE_BYTES.get(target.dtype, 2), 2)  # autocast / served at 16 bits
    shape = draft_shape(job)
    tp = max(1, job.tensor_parallel)
    loaded = loaded_weight_bytes(target, {}) if target.weight_bytes is not None else math.nan
    serving = loaded / tp + kv_bytes_per_token(target, tp, {}) * job.total_seq_len
    if job.optimizer == "adamw":
        optimizer = float(2 * FP32 * shape.trainable)
    else:
        optimizer = float(FP32 * shape.matrices + 2 * FP32 * shape.vectors)
    if job.fsdp_shard:  # train/trainer.py _setup_model_fsdp: fully_shard over the trainer's GPUs
        share = max(1, training_gpus(job))
        weights, gradients, optimizer = (
            float(FP32 * (shape.frozen + shape.trainable)) / share,
            float(FP32 * shape.trainable) / share,
            optimizer / share,
        )
    else:  # replicated on each GPU (DDP, or one GPU)
        weights, gradients = (
            float(FP32 * (shape.frozen + shape.trainable)),
            float(FP32 * shape.trainable),
        )
    hidden_states = 0.0
    if job.mode == "offline":
        per_token = (job.aux_layers + 1) * target.hidden_size * element + TOKEN_ID_BYTES
        hidden_states = float((job.tokens or 0) * per_token)
    checkpoints = job.checkpoints if job.checkpoints is not None else job.epochs
    saved = (
        shape.frozen
        - target.hidden_size
        - (job.draft_vocab_size or target.vocab_size) * (target.hidden_size)
    )  # verifier_lm_head and verifier_norm are not saved (core.py _keys_to_ignore_on_save)
    state_elements = (
        2 * shape.trainable if job.optimizer == "adamw" else shape.matrices + 2 * shape.vectors
    )
    per_checkpoint = CHECKPOINT_BYTES * (saved + shape.trainable + state_elements)
    return TrainingFit(
        usable_serving=job.gpu.memory_bytes * utilization(Engine.VLLM, {}, job.gpu, tp),
        serving=serving,
        weights=weights,
        gradients=gradients,
        optimizer=float(optimizer),
        activations=activation_bytes(job, element),
        train_gpu=float(job.gpu.memory_bytes),
        hidden_states=hidden_states,
        target_files=float(target.weight_bytes) if target.weight_bytes is not None else 0.0,
        checkpoints=float(checkpoints * per_checkpoint),
        disk=(job.disk_gib or 0.0) * GIB,
        disk_checked=disk_checked(job),
        weights_estimated=target.weights_estimated,
    )


def disk_checked(job: TrainingJob) -> bool:
    """Whether the disk can be checked: the volume is known, and offline the tokens too."""
    return job.disk_gib is not None and (job.tokens is not None or job.mode == "online")


def training_gpus(job: TrainingJob) -> int:
    """The trainer's GPUs: all of the node's once vLLM stopped (offline), the rest (online)."""
    return job.gpu_count if job.mode == "offline" else job.gpu_count - job.tensor_parallel


def check(job: TrainingJob) -> Outcome:
    """Refusals (errors) and near misses (warnings) of one job, with the headline line."""
    keys = job.keys
    errors: list[Problem] = []
    warnings: list[Problem] = []
    tp = job.tensor_parallel
    if tp > job.gpu_count or training_gpus(job) < 1:
        need = tp if job.mode == "offline" else tp + 1
        errors.append(
            Problem(
                keys.instance_group,
                f"{job.instance_type} has {job.gpu_count} GPU{'s' * (job.gpu_count != 1)} and "
                f"the job needs {need} ({tp} for vLLM at tensor-parallel size {tp}"
                f"{', one more for the trainer in online mode' if job.mode == 'online' else ''})"
                f": choose an instance group whose nodes have more GPUs ({keys.instance_group})"
                f"{_offline_hint(job)}",
            )
        )
        return Outcome(errors=tuple(errors))
    fit = estimate(job)
    name = f"{job.instance_type} ({job.gpu.name}, {job.gpu.memory_mib / 1024:.0f} GiB)"
    if math.isnan(fit.serving):
        warnings.append(
            Problem(
                keys.instance_group,
                "not checked: the target's weights on vLLM's GPUs (their size is unknown: a "
                "mixture of experts without a size on the Hub)",
            )
        )
    elif fit.serving > fit.usable_serving:
        errors.append(
            Problem(
                keys.instance_group,
                f"vLLM cannot serve the target for hidden-state generation on {name}: "
                f"{_gib(fit.serving)} per GPU (weights / tensor-parallel {tp}, plus the KV "
                f"cache of one {job.total_seq_len}-token sequence) > {_gib(fit.usable_serving)} "
                f"usable; choose an instance group with more or larger GPUs "
                f"({keys.instance_group}){_offline_hint(job)}",
            )
        )
    elif _near(fit.serving, fit.usable_serving):
        warnings.append(
            Problem(
                keys.instance_group,
                f"vLLM's GPUs are nearly full: {_gib(fit.serving)} of "
                f"{_gib(fit.usable_serving)} usable",
            )
        )
    if fit.training > fit.train_gpu:
        errors.append(
            Problem(
                keys.instance_group,
                f"the draft's training does not fit one GPU of {name}: {_gib(fit.training)} "
                f"({_gib(fit.weights)} fp32 weights, {_gib(fit.gradients)} gradients, "
                f"{_gib(fit.optimizer)} {job.optimizer} state, {_gib(fit.activations)} "
                f"activations for {job.total_seq_len} tokens x {job.ttt_steps} steps) > "
                f"{_gib(fit.train_gpu)}; choose an instance group with larger GPUs"
                f"{'' if job.fsdp_shard else ' (or shard the draft over the GPUs: --fsdp-shard)'}",
            )
        )
    elif _near(fit.training, fit.train_gpu):
        warnings.append(
            Problem(
                keys.instance_group,
                f"the draft's training nearly fills a GPU: {_gib(fit.training)} of "
                f"{_gib(fit.train_gpu)} (activations are a lower bound)",
            )
        )
    if not fit.disk_checked:
        pass  # the caller says why (an Unchecked line)
    elif fit.disk_needed > fit.disk:
        errors.append(Problem(keys.disk, _disk_refusal(job, fit)))
    elif _near(fit.disk_needed, fit.disk):
        warnings.append(
            Problem(
                keys.disk, f"the disk is nearly full: {_gib(fit.disk_needed)} of {_gib(fit.disk)}"
            )
        )
    return Outcome(
        errors=tuple(errors), warnings=tuple(warnings), lines={"draftTraining": (line(fit),)}
    )


def _offline_hint(job: TrainingJob) -> str:
    """Online, vLLM has one GPU; offline it has all of the node's."""
    if job.mode != "online" or job.gpu_count < 2:
        return ""
    return f", or set {job.keys.hidden_states} to offline (vLLM then has all {job.gpu_count} GPUs)"


def _disk_refusal(job: TrainingJob, fit: TrainingFit) -> str:
    parts = []
    if fit.hidden_states:
        tokens = job.tokens or 0
        per_token = fit.hidden_states / tokens if tokens else 0.0
        parts.append(
            f"{_gib(fit.hidden_states)} hidden states ({tokens:,} tokens x "
            f"{per_token / 1024:.1f} KiB)"
        )
    parts.append(f"{_gib(fit.target_files)} target weights")
    count = job.checkpoints if job.checkpoints is not None else job.epochs
    parts.append(f"{_gib(fit.checkpoints)} in {count} checkpoints")
    fewer = ""
    if fit.hidden_states:
        room = fit.disk - fit.target_files - fit.checkpoints
        per_token = fit.hidden_states / (job.tokens or 1)
        most = max(0, int(room / per_token))
        fewer = f", or train on at most {most:,} tokens ({job.keys.tokens})"
    return (
        f"the job needs {_gib(fit.disk_needed)} of disk ({', '.join(parts)}) and the node "
        f"has {_gib(fit.disk)}: raise it to at least {math.ceil(fit.disk_needed / GIB)}"
        f"{fewer}"
    )


def line(fit: TrainingFit) -> str:
    """The plan headline's figures."""
    serving = "unknown" if math.isnan(fit.serving) else _gib(fit.serving)
    estimated = " (target weights estimated from config.json)" if fit.weights_estimated else ""
    disk = (
        f"disk {_gib(fit.disk_needed)} of {_gib(fit.disk)}"
        if fit.disk_checked
        else "disk not checked"
    )
    return (
        f"training fit: vLLM {serving} of {_gib(fit.usable_serving)} per GPU, training "
        f"{_gib(fit.training)} of {_gib(fit.train_gpu)}, {disk}{estimated}"
    )


def _near(needed: float, room: float) -> bool:
    return room > 0 and (room - needed) / room < WARN_MARGIN


def _gib(value: float) -> str:
    return f"{value / GIB:.1f} GiB"
