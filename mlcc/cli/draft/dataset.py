"""`mlcc draft dataset`'s work: capture files -> train.jsonl, validation.jsonl, drops.jsonl and
provenance.json in one streaming pass (memory: one line, and one digest per kept conversation).

Each row is `{"conversations": [{"role", "content"}, ..., {"role": "assistant", ...}]}`, the
on-policy conversation format `speculators prepare-data` reads: speculators 0.9.0,
speculators/data_generation/preprocessing.py (`_preprocess_batch` reads the `conversations`
column; `_normalize_conversation` takes `role`/`content` turns).
"""

from __future__ import annotations

import hashlib
import io
import json
import stat
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from mlcc import userfiles
from mlcc.cli.draft import capture
from mlcc.userfiles import shown_path

DEFAULT_MAX_RECORD_BYTES = 1 << 20
SKIP_CHUNK = 1 << 20
PROVENANCE_VERSION = 1


class InputError(Exception):
    """The input or output cannot be used at all: one line for the user."""


@dataclass
class Split:
    validation_fraction: float
    seed: int

    def is_validation(self, key: str) -> bool:
        digest = hashlib.sha256(f"{self.seed}\0{key}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64 < self.validation_fraction


@dataclass
class Tally:
    read: int = 0
    train: int = 0
    validation: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    earliest: tuple[datetime, str] | None = None
    latest: tuple[datetime, str] | None = None
    sources: list[dict[str, Any]] = field(default_factory=list)

    @property
    def kept(self) -> int:
        return self.train + self.validation

    def saw_time(self, text: str | None) -> None:
        if text is None:
            return
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return
        if moment.tzinfo is None:  # the documented form carries Z; a naive one is left out
            return
        if self.earliest is None or moment < self.earliest[0]:
            self.earliest = (moment, text)
        if self.latest is None or moment > self.latest[0]:
            self.latest = (moment, text)


def capture_files(root: Path) -> list[Path]:
    """The `.jsonl` regular files: `root` itself, or under it (recursively, sorted; FIFOs,
    sockets and devices named *.jsonl are left out, and symlinked folders are not followed)."""
    try:
        mode = root.stat().st_mode
    except OSError as error:
        raise InputError(
            f"--input {shown_path(root)}: {error.strerror or 'cannot be read'}"
        ) from None
    if stat.S_ISREG(mode):
        return [root]
    if not stat.S_ISDIR(mode):
        raise InputError(f"--input {shown_path(root)}: neither a regular file nor a folder")
    found = []
    try:
        for path in root.rglob("*.jsonl"):
            if path.is_file() and not path.is_symlink():
                found.append(path)
    except OSError as error:
        raise InputError(
            f"--input {shown_path(root)}: {error.strerror or 'cannot be listed'}"
        ) from None
    return sorted(found)


def bounded_lines(file: IO[bytes], most: int) -> Iterator[bytes | None]:
    """Each line (without its end), or None for a line longer than `most` bytes, which is read
    past in chunks and never held whole."""
    while True:
        line = file.readline(most + 1)
        if not line:
            return
        if line.endswith(b"\n") or len(line) <= most:  # a whole line, or the last one
            yield line.rstrip(b"\r\n")
            continue
        while (rest := file.readline(SKIP_CHUNK)) and not rest.endswith(b"\n"):
            pass
        yield None


class HashingReader(io.RawIOBase):
    """A byte source (a file, an S3 object's body) as a raw stream, its sha256 and size taken
    as it is read: the bytes recorded are the bytes read."""

    def __init__(self, source: Any) -> None:
        self._source = source
        self.digest = hashlib.sha256()
        self.size = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._read(len(buffer))
        buffer[: len(data)] = data
        self.digest.update(data)
        self.size += len(data)
        return len(data)

    def _read(self, most: int) -> bytes:
        return bytes(self._source.read(most))


def check_output_files(output: Path, names: tuple[str, ...]) -> None:
    """UserFileError naming --output when one of the files to write there is no regular file
    (a FIFO would block its open for ever)."""
    for name in names:
        kind = userfiles.file_kind(output / name, "--output")
        if kind not in (None, userfiles.FILE):
            raise userfiles.UserFileError(
                f"--output {shown_path(output / name)}: is {kind}, not a file; move it away "
                "or choose another --output"
            )


class Writer:
    """The output folder's three JSON Lines files, written as records are read."""

    def __init__(self, output: Path) -> None:
        try:
            check_output_files(output, ("train.jsonl", "validation.jsonl", "drops.jsonl"))
        except userfiles.UserFileError as error:
            raise InputError(str(error)) from None
        try:
            output.mkdir(parents=True, exist_ok=True)
            self.train = (output / "train.jsonl").open("w", encoding="utf-8")
            self.validation = (output / "validation.jsonl").open("w", encoding="utf-8")
            self.drops = (output / "drops.jsonl").open("w", encoding="utf-8")
        except OSError as error:
            raise InputError(
                f"--output {shown_path(output)}: {error.strerror or 'cannot write'}"
            ) from None

    def close(self) -> None:
        for file in (self.train, self.validation, self.drops):
            file.close()


def _row(conversation: capture.Conversation) -> str:
    return json.dumps({"conversations": conversation.messages()}, ensure_ascii=False) + "\n"


class Reading:
    """One dataset being written: the tally, the prompts seen, the output files. Streams of
    capture lines go in through `read_lines` (a local file, or an S3 object's body:
    mlcc/cli/draft/s3_input.py), in the order they are given."""

    def __init__(self, output: Path, split: Split, most: int) -> None:
        self.tally = Tally()
        self.seen: set[bytes] = set()
        self.writer = Writer(output)
        self.split, self.most = split, most

    def __enter__(self) -> Reading:
        return self

    def __exit__(self, *exc: object) -> None:
        self.writer.close()

    def drop(self, name: str, line: int, reason: str) -> None:
        self.tally.dropped[reason] += 1
        self.writer.drops.write(json.dumps({"where": f"{name}:{line}", "reason": reason}) + "\n")

    def read_lines(self, stream: IO[bytes], name: str) -> None:
        """Every record of `stream` (lines over the bound read past, never held): a row or a
        drop whose `where` is `name:LINE`."""
        tally, writer = self.tally, self.writer
        for number, line in enumerate(bounded_lines(stream, self.most), start=1):
            if line is not None and not line.strip():
                continue  # a blank line is no record
            tally.read += 1
            if line is None:
                self.drop(name, number, capture.OVERSIZED)
                continue
            try:
                record = capture.load(line)
                tally.saw_time(capture.inference_time(record))
                conversation = capture.parse_record(record)
            except capture.Dropped as dropped:
                self.drop(name, number, dropped.reason)
                continue
            key = hashlib.sha256(conversation.key().encode()).digest()
            if key in self.seen:
                self.drop(name, number, capture.DUPLICATE)
                continue
            self.seen.add(key)
            if self.split.is_validation(conversation.key()):
                tally.validation += 1
                writer.validation.write(_row(conversation))
            else:
                tally.train += 1
                writer.train.write(_row(conversation))

    def read_file(self, path: Path, name: str) -> None:
        try:
            with path.open("rb", buffering=0) as file:
                hashing = HashingReader(file)
                self.read_lines(io.BufferedReader(hashing, SKIP_CHUNK), name)
            size, sha256 = hashing.size, hashing.digest.hexdigest()
        except OSError as error:
            self.drop(name, 0, capture.UNREADABLE)
            self.tally.read += 1
            self.tally.sources.append({"path": name, "error": error.strerror or str(error)})
            return
        self.tally.sources.append({"path": name, "size": size, "sha256": sha256})


def build(
    root: Path, output: Path, split: Split, max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES
) -> Tally:
    """Read every capture file under `root` and write the dataset into `output`."""
    files = [path for path in capture_files(root) if not _inside(path, output)]
    with Reading(output, split, max_record_bytes) as reading:
        for path in files:
            reading.read_file(path, _shown(path, root))
    return reading.tally


def _inside(path: Path, folder: Path) -> bool:
    """Whether `path` is in `folder`: an earlier run's output under --input is not input (its
    drops.jsonl would be read while it is written)."""
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except OSError:
        return False


def _shown(path: Path, root: Path) -> str:
    return str(path.relative_to(root)) if path != root else path.name


def provenance(
    tally: Tally, root: Path | str, split: Split, max_record_bytes: int, version: str
) -> Any:
    return {
        "provenanceVersion": PROVENANCE_VERSION,
        "tool": {"name": "mlcc draft dataset", "version": version},
        "input": str(root),
        "sources": tally.sources,
        "inferenceTime": {
            "earliest": tally.earliest[1] if tally.earliest else None,
            "latest": tally.latest[1] if tally.latest else None,
        },
        "counts": {
            "read": tally.read,
            "kept": tally.kept,
            "train": tally.train,
            "validation": tally.validation,
            "dropped": {reason: tally.dropped[reason] for reason in capture.DROP_REASONS},
        },
        "split": {"validationFraction": split.validation_fraction, "seed": split.seed},
        "maxRecordBytes": max_record_bytes,
        "format": "speculators 0.9.0 conversations (JSON Lines)",
    }
