"""`mlcc draft regenerate`'s work: every row of a dataset's train.jsonl and validation.jsonl sent
to the endpoint, at most `concurrency` requests in flight, each reply a row or a drop.

Rows are written in their input order (a window of at most 4 x concurrency rows waits for its
first one), so the same input and a deterministic endpoint give the same files. A row is
speculators' pre-tokenized form (speculators 0.9.0, speculators/cli/regenerate_responses.py,
`build_boundary_sample`: `input_ids` = prompt + completion token ids, `loss_mask` 0 over the
prompt and 1 over the completion; speculators/data_generation/preprocessing.py,
`_passthrough_pretokenized`, takes such rows as they are and drops the other columns), with the
regenerated conversation beside it for review.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

from mlcc.cli.draft import endpoint as ep
from mlcc.cli.draft.capture import is_text
from mlcc.cli.draft.dataset import bounded_lines

SPLITS = ("train.jsonl", "validation.jsonl")
MAX_ROW_BYTES = 64 * 1024 * 1024
WINDOW_PER_WORKER = 4
# Stop sending when the first replies all lacked token ids: the endpoint is not one that
# returns them, and every further request would be dropped the same way.
GIVE_UP_AFTER = 8


@dataclass(frozen=True)
class Sampling:
    model: str
    max_tokens: int
    temperature: float

    def body(self, prompt: list[dict[str, str]]) -> dict[str, Any]:
        return {
            "model": self.model,
            "messages": prompt,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "return_token_ids": True,
        }


@dataclass
class Counts:
    read: int = 0
    sent: int = 0
    train: int = 0
    validation: int = 0
    truncated: int = 0
    not_sent: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    tokens: Counter[str] = field(default_factory=Counter)  # len(input_ids) summed, per split
    first_detail: dict[str, str] = field(default_factory=dict)

    @property
    def written(self) -> int:
        return self.train + self.validation

    @property
    def request_drops(self) -> int:
        return sum(n for reason, n in self.dropped.items() if reason != ep.NOT_A_ROW)


def prompt_of(line: bytes | None) -> list[dict[str, str]]:
    """The row's conversation without its last (assistant) turn; Failed(NOT_A_ROW) otherwise."""
    if line is None:
        raise ep.Failed(ep.NOT_A_ROW, f"the line is longer than {MAX_ROW_BYTES} bytes")
    try:
        row = json.loads(line)
    except (ValueError, RecursionError):
        raise ep.Failed(ep.NOT_A_ROW, "the line is not JSON") from None
    turns = row.get("conversations") if isinstance(row, dict) else None
    if not isinstance(turns, list) or len(turns) < 2:
        raise ep.Failed(ep.NOT_A_ROW, "no conversations list of two turns or more")
    for turn in turns:
        if not (
            isinstance(turn, dict)
            and isinstance(turn.get("role"), str)
            and isinstance(turn.get("content"), str)
            and is_text(turn["role"] + turn["content"])
        ):
            raise ep.Failed(ep.NOT_A_ROW, "a turn is not {role, content} text")
    if turns[-1]["role"] != "assistant":
        raise ep.Failed(ep.NOT_A_ROW, "the last turn is not the assistant's")
    prompt = [{"role": t["role"], "content": t["content"]} for t in turns[:-1]]
    if not any(t["role"] == "user" for t in prompt):
        raise ep.Failed(ep.NOT_A_ROW, "the prompt has no user turn")
    return prompt


def row_of(prompt: list[dict[str, str]], reply: ep.Reply, where: str) -> str:
    key = json.dumps(prompt, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    row = {
        "id": hashlib.sha256(key.encode()).hexdigest()[:16],
        "input_ids": [*reply.prompt_token_ids, *reply.token_ids],
        "loss_mask": [0] * len(reply.prompt_token_ids) + [1] * len(reply.token_ids),
        "conversations": [*prompt, {"role": "assistant", "content": reply.answer}],
        "metadata": {
            "source": where,
            "finish_reason": reply.finish_reason,
            "prompt_tokens": len(reply.prompt_token_ids),
            "completion_tokens": len(reply.token_ids),
        },
    }
    return json.dumps(row, ensure_ascii=False) + "\n"


class Progress:
    """One stderr line at most every `every_s` seconds: done/total, drops, rate."""

    def __init__(self, total: int, every_s: float, out: IO[str]) -> None:
        self.total, self.every_s, self.out = total, every_s, out
        self.start = self.last = time.monotonic()
        self.done = self.failed = 0
        self.lock = threading.Lock()

    def count(self, failed: bool) -> None:
        with self.lock:
            self.done += 1
            self.failed += failed

    def maybe_print(self, final: bool = False) -> None:
        now = time.monotonic()
        if not final and now - self.last < self.every_s:
            return
        self.last = now
        with self.lock:
            done, failed = self.done, self.failed
        rate = done / (now - self.start) if now > self.start else 0.0
        print(
            f"regenerate: {done}/{self.total} done, {failed} dropped, {rate:.1f} prompts/s",
            file=self.out,
            flush=True,
        )


class Source(Protocol):
    """Where a dataset's train.jsonl and validation.jsonl are read from: a local folder
    (`Folder`) or an S3 prefix (mlcc/cli/draft/regen_s3.py)."""

    def lines(self) -> Iterator[tuple[str, int, bytes | None]]:
        """(split, line number, line or None when over MAX_ROW_BYTES) of every non-blank line,
        train.jsonl first."""
        ...


def split_lines(split: str, stream: IO[bytes]) -> Iterator[tuple[str, int, bytes | None]]:
    """The lines of one split file, each bounded (a longer one is read past, never held)."""
    for number, line in enumerate(bounded_lines(stream, MAX_ROW_BYTES), start=1):
        if line is None or line.strip():
            yield split, number, line


@dataclass(frozen=True)
class Folder:
    path: Path

    def lines(self) -> Iterator[tuple[str, int, bytes | None]]:
        for split in SPLITS:
            path = self.path / split
            if not path.is_file():  # a FIFO or a folder was refused before (regenerate.py)
                continue
            with path.open("rb") as file:
                yield from split_lines(split, file)


def count_rows(source: Source) -> int:
    return sum(1 for _ in source.lines())


Outcome = ep.Reply | ep.Failed | None  # None: not sent (gave up)


class Pool:
    def __init__(
        self, endpoint: ep.Endpoint, sampling: Sampling, concurrency: int, progress: Progress
    ) -> None:
        self.endpoint, self.sampling, self.progress = endpoint, sampling, progress
        self.concurrency = concurrency
        self.counts = Counts()
        self.lock = threading.Lock()
        self.give_up = threading.Event()
        self.replies: list[bool] = []  # the first GIVE_UP_AFTER: True when without token ids

    def _send(self, prompt: list[dict[str, str]]) -> Outcome:
        if self.give_up.is_set():
            return None
        with self.lock:
            self.counts.sent += 1
        try:
            outcome: Outcome = self.endpoint.chat(self.sampling.body(prompt))
        except ep.Failed as failure:
            outcome = failure
        with self.lock:
            if len(self.replies) < GIVE_UP_AFTER:
                lacking = isinstance(outcome, ep.Failed) and outcome.reason == ep.NO_TOKEN_IDS
                self.replies.append(lacking)
                if len(self.replies) == GIVE_UP_AFTER and all(self.replies):
                    self.give_up.set()
        self.progress.count(isinstance(outcome, ep.Failed))
        return outcome

    def run(self, source: Source, rows: Mapping[str, IO[str]], drops: IO[str]) -> Counts:
        window: deque[tuple[str, str, list[dict[str, str]], concurrent.futures.Future[Outcome]]]
        window = deque()
        pool = concurrent.futures.ThreadPoolExecutor(self.concurrency)
        try:
            for split, number, line in source.lines():
                self.counts.read += 1
                where = f"{split}:{number}"
                try:
                    prompt = prompt_of(line)
                except ep.Failed as failure:
                    self.progress.count(True)
                    self._drop(drops, where, failure)
                    continue
                window.append((split, where, prompt, pool.submit(self._send, prompt)))
                while len(window) >= self.concurrency * WINDOW_PER_WORKER:
                    self._finish(window.popleft(), rows, drops)
            while window:
                self._finish(window.popleft(), rows, drops)
        except BaseException:  # Ctrl-C, a full disk: the queued prompts are not sent
            self.give_up.set()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()
        self.progress.maybe_print(final=True)
        return self.counts

    def _finish(
        self,
        item: tuple[str, str, list[dict[str, str]], concurrent.futures.Future[Outcome]],
        rows: Mapping[str, IO[str]],
        drops: IO[str],
    ) -> None:
        split, where, prompt, future = item
        outcome = _wait(future, self.progress.maybe_print)
        self.progress.maybe_print()
        if outcome is None:
            self.counts.not_sent += 1
        elif isinstance(outcome, ep.Failed):
            self._drop(drops, where, outcome)
        else:
            rows[split].write(row_of(prompt, outcome, where))
            self.counts.tokens[split] += len(outcome.prompt_token_ids) + len(outcome.token_ids)
            self.counts.truncated += outcome.finish_reason == "length"
            if split == SPLITS[0]:
                self.counts.train += 1
            else:
                self.counts.validation += 1

    def _drop(self, drops: IO[str], where: str, failure: ep.Failed) -> None:
        self.counts.dropped[failure.reason] += 1
        self.counts.first_detail.setdefault(failure.reason, failure.detail)
        record = {"where": where, "reason": failure.reason, "detail": failure.detail}
        drops.write(json.dumps(record, ensure_ascii=False) + "\n")


def _wait(future: concurrent.futures.Future[Outcome], tick: Callable[[], None]) -> Outcome:
    while True:
        try:
            return future.result(timeout=0.5)
        except concurrent.futures.TimeoutError:
            tick()


def line_count(path: Path) -> int:
    with path.open("rb") as file:
        return sum(1 for line in file if line.strip())


def check_counts(counts: Counts, output: Path) -> list[str]:
    """What does not add up, re-read from the written files (empty when all is well)."""
    problems = []
    if counts.written + counts.request_drops != counts.sent:
        problems.append(
            f"rows written ({counts.written}) + requests dropped ({counts.request_drops}) "
            f"!= prompts sent ({counts.sent})"
        )
    if counts.sent + counts.dropped[ep.NOT_A_ROW] + counts.not_sent != counts.read:
        problems.append(f"not every one of the {counts.read} rows read was sent or dropped")
    on_disk = {split: line_count(output / split) for split in SPLITS}
    if (on_disk[SPLITS[0]], on_disk[SPLITS[1]]) != (counts.train, counts.validation):
        problems.append(f"the files hold {on_disk}, not {counts.train} and {counts.validation}")
    if line_count(output / "drops.jsonl") != sum(counts.dropped.values()):
        problems.append("drops.jsonl does not hold every drop")
    return problems
