"""Writes trainer_80.log and trainer_wide.log: the console lines of a `speculators train` run,
from speculators 0.9.0's own logging set-up and the records its trainer emits.

Run with speculators 0.9.0 installed (not by the tests, which read the files it wrote):

    cd tests/draft/trainer_logs
    python record.py > trainer_80.log
    COLUMNS=200 python record.py > trainer_wide.log

The records are the trainer's, with made-up values: train/logger.py `setup_root_logger` and
`setup_metric_logger` (no metric backend), the messages of train/trainer.py (`setup_trainer`,
`run_training`, `train_epoch`'s metric dict with a `profile` at log_freq 1, `val_epoch`,
`maybe_save_checkpoint`, `maybe_update_best`), the per-step metric names of
models/eagle3/metrics.py with ttt_steps 3, and an unrelated line as torchrun prints one.
"""

import logging
import sys

from speculators.train.logger import setup_metric_logger, setup_root_logger

setup_root_logger()
setup_metric_logger(loggers=[], run_name=None, output_dir="/tmp/speculators-logs")
root = logging.getLogger("speculators")
metric = logging.getLogger("speculators.metrics")
SAVE = "/opt/sagemaker/draft-training/llama-3.1-8b-eagle3/checkpoints"


def step(epoch: int, global_step: int, loss: float) -> None:
    train = {}
    for k in range(3):
        train[f"loss_{k}"] = loss / 3 + 0.1 * k
        train[f"full_acc_{k}"] = 0.61 - 0.12 * k
        train[f"cond_acc_{k}"] = 0.7 - 0.05 * k
    train["error_records"] = 0.0
    train["loss"] = loss
    profile = {
        "fetch_ms": 3.2,
        "fwd_ms": 180.4,
        "bwd_ms": 350.9,
        "opt_ms": 20.1,
        "step_ms": 554.6,
        "tokens_per_s": 14771.3,
        "fetch_frac": 0.006,
        "queue_ms": 1.1,
        "h2d_ms": 0.9,
        "clip_ms": 4.2,
        "memory_mb": {"queue": 8123.0, "fetch": 8200.5, "fwd": 15022.1},
    }
    metric.info(
        {
            "train": train,
            "profile": profile,
            "epoch": epoch,
            "lr": 9.5e-05 - global_step * 1e-08,
            "global_step": global_step,
        },
        extra={"step": global_step},
    )


print("[W1206 16:40:02.123000 1 torch/distributed/run.py:793] Setting OMP_NUM_THREADS", flush=True)
root.info(f"No previous training checkpoint found in '{SAVE}'. Starting fresh training run.")
root.info("Training epoch 1/2 started")
for s in range(0, 3):
    step(0, s, 9.0 - s * 0.5)
root.info("Training epoch 1/2 completed")
root.info(f"Saving checkpoint to {SAVE}/0")
root.info(f"Checkpoint saved to {SAVE}/0")
root.info("Validation epoch 1/2 started")
root.info("Validation epoch 1/2 completed")
metric.info(
    {
        "val": {
            "loss_0_epoch": 2.7,
            "full_acc_0_epoch": 0.64,
            "full_acc_1_epoch": 0.5,
            "full_acc_2_epoch": 0.38,
            "loss_epoch": 8.1,
        },
        "epoch": 0,
    },
    extra={"step": 3},
)
root.info("Updated checkpoint_best -> 0 (loss_epoch=8.100000)")
root.info("Training epoch 2/2 started")
for s in range(3, 5):
    step(1, s, 7.9 - (s - 3) * 0.25)
sys.stdout.flush()
