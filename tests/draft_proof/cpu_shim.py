"""The declared CPU shim of the offline proof: `speculators train` on a machine without an
accelerator. It lives only in the tests; nothing of the program or the training job uses it.

    PROOF_PYTHON tests/draft_proof/cpu_shim.py train --speculator-type eagle3 ...

speculators 0.9.0 as released trains on an accelerator: with the PyPI torch (a CUDA build)
`torch.accelerator.current_accelerator()` says "cuda" even where no GPU is, and four places
then reach for CUDA. Each patch below names the function it replaces and why; everything else
(the CLI, the config resolution, the model, the loss, the data loader, the optimizer, the
checkpointer's writes) is speculators' own code. `--draft-attn-impl sdpa` and
`--loss-implementation eager` are passed as flags (the defaults, flex attention and the fused
loss, compile kernels for the GPU).
"""

from __future__ import annotations

import sys
import time
from typing import Any

import torch

CPU = torch.device("cpu")
PATCHED: list[str] = []


def _patch_device_moves() -> None:
    """speculators/train/trainer.py, `Trainer.__init__`: `self.local_rank = get_local_rank()`
    (0) is where `setup_model` moves the model (`self.model.to(self.local_rank)`) and where
    `train_epoch`/`val_epoch` move each batch (`v.to(self.local_rank, non_blocking=True)`); the
    integer 0 means cuda:0. The trainer module's `get_local_rank` answers the CPU device instead.
    `self.device_type` (`acc.type if acc is not None else "cuda"`) is the autocast device of
    every step; it is set to "cpu", so autocast runs the bf16 steps on the CPU instead of
    switching itself off with a warning (the model's float32 weights against bf16 hidden
    states would then not multiply)."""
    from speculators.train import trainer

    trainer.get_local_rank = lambda: CPU  # type: ignore[assignment]
    original_init = trainer.Trainer.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        self.device_type = "cpu"

    trainer.Trainer.__init__ = init  # type: ignore[method-assign]
    PATCHED.append("trainer.get_local_rank, Trainer.device_type: the CPU")


def _patch_step_timer() -> None:
    """speculators/train/trainer.py, `_StepTimer.mark` and `_StepTimer.now`: each calls
    `torch.accelerator.synchronize()` to time the GPU's work, which raises "Found no NVIDIA
    driver" without one. On the CPU the work is done when the call returns: the same timer,
    without the synchronize."""
    from speculators.train import trainer

    def mark(self: Any, name: str) -> None:
        if self.enabled:
            self._marks[name] = time.perf_counter()

    def now(self: Any) -> float | None:
        return time.perf_counter() if self.enabled else None

    trainer._StepTimer.mark = mark  # type: ignore[attr-defined]
    trainer._StepTimer.now = now  # type: ignore[attr-defined]
    PATCHED.append("trainer._StepTimer.mark/now: no accelerator synchronize")


def _patch_checkpoint_load_device() -> None:
    """speculators/train/checkpointer.py, `get_current_device` (from speculators/utils/util.py):
    the device a resumed run loads its checkpoint's weights and optimizer state onto
    (`safe_open(..., device=...)`, `torch.load(map_location=...)`), "cuda:N" from the current
    accelerator. Loaded onto the CPU instead."""
    from speculators.train import checkpointer

    checkpointer.get_current_device = lambda: "cpu"
    PATCHED.append("checkpointer.get_current_device: cpu")


def apply() -> None:
    _patch_device_moves()
    _patch_step_timer()
    _patch_checkpoint_load_device()
    print("cpu shim: " + "; ".join(PATCHED), file=sys.stderr)


if __name__ == "__main__":
    apply()
    from speculators.cli import app

    sys.argv = ["speculators", *sys.argv[1:]]
    app()
