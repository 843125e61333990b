"""The training progress in the last lines of a `speculators train` log (speculators 0.9.0), pure.

What the trainer writes (its wheel's files):

- train/logger.py `setup_root_logger`: one `rich.logging.RichHandler` on the root logger,
  format "%(message)s", datefmt "[%X]". Rich lays each record out in columns: the time (only
  when it changed since the record before), the level padded to 8, the message, the source
  file:line on the right of the first line; a message longer than the column is wrapped onto
  lines indented by 20 spaces, at spaces, and a word longer than the column (a path) is cut
  anywhere. Without a terminal the width is $COLUMNS, else 80.
- `FormatDictFilter`: a metric record (a dict) becomes "key=value, ..." with nested keys joined
  by "/" (train/loss_0=5.123, lr/Muon=0.020), floats as %.3f or %.2e, ints as %d.
- train/trainer.py `Trainer.train_epoch`: every log_freq steps {"train": {loss, loss_<k>,
  full_acc_<k>, cond_acc_<k>, error_records}, "profile": ..., "epoch", "lr", "global_step"};
  `val_epoch`: {"val": {<metric>_epoch ...}, "epoch"}; `run_training`: "Training epoch E/N
  started|completed"; `maybe_save_checkpoint`: "Checkpoint saved to PATH";
  `maybe_update_best`: "Updated checkpoint_best -> E (loss_epoch=X)"; `setup_trainer`:
  "Resuming mid-epoch from epoch=E local_step=S global_step=G." or "Resuming training on epoch
  E."; models/eagle3/metrics.py names the per-step metrics (k = 0 .. ttt_steps - 1).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_START = re.compile(
    r"^(?:\[(?P<time>[^\]]{1,20})\]|\s{0,12})\s(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL)"
    r"\s+(?P<text>\S.*?)\s*$"
)
_MORE = re.compile(r"^\s{20}(?P<text>\S.*?)\s*$")
_SOURCE = re.compile(r"\s+[\w.<>-]+\.py:\d+$")  # the first line's file:line column
# Counts are ASCII digits, at most 18 (an int() of any of them, never Python's 4,300-digit limit)
_EPOCH = re.compile(r"^Training epoch ([0-9]{1,18})/([0-9]{1,18}) (started|completed)")
_SAVED = re.compile(r"^Checkpoint saved to (.+)$")
_BEST = re.compile(r"^Updated checkpoint_best -> (\S+) \(loss_epoch=([^)]+)\)")
_RESUMED = re.compile(
    r"^Resuming mid-epoch from epoch=([0-9]{1,18}) local_step=([0-9]{1,18}) "
    r"global_step=([0-9]{1,18})|^Resuming training on epoch ([0-9]{1,18})"
)
_PAIR = re.compile(r"([A-Za-z0-9_/.-]+)=([^,\s]+)")


@dataclass(frozen=True)
class Record:
    time: str | None  # the last time rich printed, at or before this record
    level: str
    text: str  # the message, its wrapped lines joined by one space


@dataclass(frozen=True)
class Progress:
    """What the tail of the log says; None where it says nothing."""

    epoch: int | None = None  # 1-based, as the trainer counts in "Training epoch E/N"
    epochs: int | None = None
    epoch_done: bool = False
    step: int | None = None  # global_step of the last metric record
    metrics: tuple[tuple[str, str], ...] = ()  # train/* of the last metric record, in order
    lr: str | None = None
    tokens_per_s: str | None = None  # profile/tokens_per_s of the last metric record
    validation: tuple[tuple[str, str], ...] = ()  # val/* of the last validation record
    validation_epoch: int | None = None  # 0-based, as the record says
    checkpoint: str | None = None
    best: tuple[str, str] | None = None  # (epoch, loss_epoch)
    resumed: str | None = None
    time: str | None = None  # the time of the last trainer record (the pod's clock)
    errors: tuple[str, ...] = ()  # ERROR / CRITICAL records, last first

    @property
    def empty(self) -> bool:
        return self.epoch is None and self.step is None and self.checkpoint is None


def records(lines: Iterable[str]) -> list[Record]:
    """The log's records, each wrapped message joined again. Lines of other programs are left
    out (they end a record)."""
    found: list[Record] = []
    time: str | None = None
    parts: list[str] = []
    level = ""
    for raw in lines:
        line = raw.rstrip("\r\n")
        start = _START.match(line)
        if start is not None:
            if parts:
                found.append(Record(time, level, " ".join(parts)))
            time = start["time"] or time
            level = start["level"]
            parts = [_SOURCE.sub("", start["text"])]
            continue
        more = _MORE.match(line)
        if more is not None and parts:
            parts.append(more["text"])
            continue
        if parts:
            found.append(Record(time, level, " ".join(parts)))
            parts = []
    if parts:
        found.append(Record(time, level, " ".join(parts)))
    return found


def progress(lines: Iterable[str]) -> Progress:
    """The newest of each kind of trainer line in `lines`."""
    fields: dict[str, object] = {}
    errors: list[str] = []
    time: str | None = None
    for record in records(lines):
        text = record.text
        known = True
        if record.level in ("ERROR", "CRITICAL"):
            errors.append(text)
        elif match := _EPOCH.match(text):
            fields.update(epoch=int(match[1]), epochs=int(match[2]))
            fields["epoch_done"] = match[3] == "completed"
        elif match := _SAVED.match(text):
            fields["checkpoint"] = match[1].replace(" ", "")  # a path cut by rich is joined
        elif match := _BEST.match(text):
            fields["best"] = (match[1], match[2])
        elif match := _RESUMED.match(text):
            fields["resumed"] = (
                f"epoch {int(match[1]) + 1}, step {match[3]}"
                if match[1] is not None
                else f"epoch {int(match[4]) + 1}"
            )
        elif text.startswith(("train/", "val/")):
            _metrics(text, fields)
        else:
            known = False
        if known:
            time = record.time
    return Progress(
        epoch=_int(fields.get("epoch")),
        epochs=_int(fields.get("epochs")),
        epoch_done=bool(fields.get("epoch_done")),
        step=_int(fields.get("step")),
        metrics=_pairs(fields.get("metrics")),
        lr=_str(fields.get("lr")),
        tokens_per_s=_str(fields.get("tokens_per_s")),
        validation=_pairs(fields.get("validation")),
        validation_epoch=_int(fields.get("validation_epoch")),
        checkpoint=_str(fields.get("checkpoint")),
        best=_best(fields.get("best")),
        resumed=_str(fields.get("resumed")),
        time=time,
        errors=tuple(reversed(errors)),
    )


def _metrics(text: str, fields: dict[str, object]) -> None:
    pairs = _PAIR.findall(text)
    values = dict(pairs)
    if text.startswith("train/"):
        fields["metrics"] = tuple(
            (k.removeprefix("train/"), v) for k, v in pairs if k.startswith("train/")
        )
        if (step := _count(values.get("global_step"))) is not None:
            fields["step"] = step
        fields["tokens_per_s"] = values.get("profile/tokens_per_s")
        lrs = [(k.removeprefix("lr/"), v) for k, v in pairs if k.startswith("lr/")]
        fields["lr"] = values.get("lr") or " / ".join(f"{k} {v}" for k, v in lrs) or None
    else:
        fields["validation"] = tuple(
            (k.removeprefix("val/"), v) for k, v in pairs if k.startswith("val/")
        )
        if (epoch := _count(values.get("epoch"))) is not None:
            fields["validation_epoch"] = epoch


def summary(found: Progress) -> list[str]:
    """The progress lines `mlcc draft status` prints (stable order; nothing when empty)."""
    lines: list[str] = []
    head: list[str] = []
    if found.epoch is not None:
        state = "done" if found.epoch_done else "running"
        head.append(f"epoch {found.epoch}/{found.epochs} {state}")
    if found.step is not None:
        head.append(f"step {found.step}")
    metrics = dict(found.metrics)
    if "loss" in metrics:
        head.append(f"loss {metrics['loss']}")
    accuracy = _per_step(metrics, "full_acc_")
    if accuracy:
        head.append(f"full_acc {accuracy}")
    if found.lr:
        head.append(f"lr {found.lr}")
    if found.tokens_per_s:
        head.append(f"{found.tokens_per_s} tokens/s")
    if head:
        at = f" (at {found.time})" if found.time else ""
        lines.append("progress: " + ", ".join(head) + at)
    if found.validation:
        values = dict(found.validation)
        shown = [f"loss {values['loss_epoch']}"] if "loss_epoch" in values else []
        accuracy = _per_step({k.removesuffix("_epoch"): v for k, v in values.items()}, "full_acc_")
        shown += [f"full_acc {accuracy}"] if accuracy else []
        epoch = found.validation_epoch
        where = f" after epoch {epoch + 1}" if epoch is not None else ""
        lines.append(f"validation{where}: {', '.join(shown) or 'no loss logged'}")
    if found.checkpoint:
        best = f" (best: {found.best[0]}, loss {found.best[1]})" if found.best else ""
        lines.append(f"newest checkpoint: {found.checkpoint}{best}")
    if found.resumed:
        lines.append(f"resumed from a checkpoint at {found.resumed}")
    if found.errors:
        lines.append(f"last error: {found.errors[0][:200]}")
    return lines


def _per_step(metrics: dict[str, str], prefix: str) -> str:
    steps = sorted(
        (number, v)
        for k, v in metrics.items()
        if k.startswith(prefix) and (number := _count(k.removeprefix(prefix))) is not None
    )
    return "/".join(v for _, v in steps)


def _count(text: str | None) -> int | None:
    """`text` as a whole number when it is 1 to 18 ASCII digits (`"²".isdigit()` is true, and
    int() refuses it)."""
    if text is None or not (text.isascii() and text.isdigit() and len(text) <= 18):
        return None
    return int(text)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _pairs(value: object) -> tuple[tuple[str, str], ...]:
    return value if isinstance(value, tuple) else ()


def _best(value: object) -> tuple[str, str] | None:
    return value if isinstance(value, tuple) and len(value) == 2 else None
