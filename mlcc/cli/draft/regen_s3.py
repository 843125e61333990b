"""`mlcc draft regenerate --dataset s3://bucket/prefix/`: the dataset read from S3 itself.

The prefix is what `mlcc draft dataset --upload` (or `aws s3 sync`) wrote: train.jsonl,
validation.jsonl and provenance.json directly under it. One ListObjectsV2 (delimiter "/", every
page) finds them; provenance.json is read into memory (bounded), and each split's GetObject body
is streamed once, in chunks, into a spool folder inside --output (`spool`), its size and sha256
computed as it is written. The prompts are then read from the spool as from a local copy
(regen_pool.Folder: the same line bound), so the rows sent, and the rows and drops written, are
those of a local copy, and the objects are read once. The caller removes the spool. The client,
the one-line errors and the streaming sha256 are mlcc draft dataset's
(mlcc/cli/draft/s3_store.py, s3_input.py). Needs s3:ListBucket on the bucket and s3:GetObject on
the prefix.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlcc.cli.draft import s3_input, s3_store
from mlcc.cli.draft.dataset import InputError
from mlcc.cli.draft.regen_pool import SPLITS, Folder
from mlcc.serving.s3_draft import S3Folder

FLAG = "--dataset"
PROVENANCE = "provenance.json"
MOST_PROVENANCE_BYTES = 16 * 1024 * 1024
_CHUNK = 1 << 20


class DatasetError(Exception):
    """The S3 dataset cannot be read: one line for the user."""


def place(value: str) -> S3Folder:
    """The --dataset prefix; ValueError (one line) for one S3 would refuse, before any request."""
    try:
        return s3_store.place(value, need_prefix=False)
    except ValueError as error:
        raise ValueError(f"{FLAG}: {error}") from None


@dataclass
class S3Dataset:
    s3: Any
    where: S3Folder
    timeout_s: float
    present: dict[str, s3_input.Listed]  # file name -> its object
    sources: dict[str, dict[str, Any]] = field(default_factory=dict)  # as read
    provenance: Any = None  # the dataset's own provenance.json, None without one that parses

    def spool(self, into: Path) -> Folder:
        """Each split's object, copied once into `into`: the dataset as a local folder."""
        for split in SPLITS:
            listed = self.present.get(split)
            if listed is None:
                continue
            with self._opened(listed) as (stream, body), (into / split).open("wb") as file:
                while chunk := stream.read(_CHUNK):
                    file.write(chunk)
            self._record(listed, body)
        return Folder(into)

    def read_provenance(self) -> None:
        listed = self.present.get(PROVENANCE)
        if listed is None:
            return
        with self._opened(listed) as (stream, body):
            text = stream.read(MOST_PROVENANCE_BYTES + 1)
            while stream.read(_CHUNK):  # the rest only hashed, never held
                pass
        self._record(listed, body)
        try:
            self.provenance = json.loads(text) if len(text) <= MOST_PROVENANCE_BYTES else None
        except (ValueError, RecursionError):
            self.provenance = None

    def described(self) -> dict[str, Any]:
        """What provenance.json records of the dataset: where, and each object as read."""
        return {
            "path": self.where.uri,
            "provenance": self.provenance,
            "sources": [
                self.sources[name] for name in (*SPLITS, PROVENANCE) if name in self.sources
            ],
        }

    def _record(self, listed: s3_input.Listed, body: s3_input.HashingBody) -> None:
        seen = {"path": self.where.shown(listed.key), "size": body.size}
        digest = {"sha256": body.digest.hexdigest(), "etag": listed.etag.strip('"')}
        self.sources[listed.key.rsplit("/", 1)[-1]] = {**seen, **digest}

    def _opened(self, listed: s3_input.Listed) -> _Opened:
        return _Opened(self, listed)


class _Opened:
    """A GetObject body as a buffered byte stream that hashes what it reads; every failure of
    the request or of the body is DatasetError (one line naming the object)."""

    def __init__(self, dataset: S3Dataset, listed: s3_input.Listed) -> None:
        self.dataset, self.listed = dataset, listed
        self.name = dataset.where.shown(listed.key)
        self.answer: dict[str, Any] = {}

    def __enter__(self) -> tuple[io.BufferedReader, s3_input.HashingBody]:
        where, key = self.dataset.where, self.listed.key
        try:
            self.answer = self.dataset.s3.get_object(Bucket=where.bucket, Key=key)
        except Exception as error:  # every failure of the request: one line, never a traceback
            grant = s3_input.grant(error, "s3:GetObject", f"arn:aws:s3:::{where.bucket}/{key}")
            raise DatasetError(f"{FLAG}: {self.name}: {self._why(error)}{grant}") from None
        body = s3_input.HashingBody(self.answer["Body"])
        return io.BufferedReader(body, _CHUNK), body

    def __exit__(self, kind: Any, error: Any, trace: Any) -> None:
        self.answer["Body"].close()
        if isinstance(error, s3_input.BodyFailed):
            raise DatasetError(
                f"{FLAG}: {self.name}: reading it: {self._why(error.cause)}"
            ) from None

    def _why(self, error: BaseException) -> str:
        return s3_store.described(error, self.dataset.timeout_s)


def open_dataset(where: S3Folder, timeout_s: float) -> S3Dataset:
    """The dataset under `where`, its provenance.json read; DatasetError (one line) when the
    bucket or prefix cannot be listed, holds neither split, or an object cannot be read."""
    try:
        s3 = s3_store.client(timeout_s)
    except s3_store.S3Problem as error:
        raise DatasetError(f"{FLAG} {where.uri}: {error}") from None
    names = {f"{where.prefix}{name}" for name in (*SPLITS, PROVENANCE)}
    try:
        found = s3_input.list_prefix(s3, where, timeout_s, FLAG, names.__contains__, "/")
    except InputError as error:
        raise DatasetError(str(error)) from None
    present = {listed.key.rsplit("/", 1)[-1]: listed for listed in found}
    if not any(split in present for split in SPLITS):
        raise DatasetError(
            f"{FLAG} {where.uri}: no train.jsonl or validation.jsonl under this prefix (the "
            "files `mlcc draft dataset --upload` puts there)"
        )
    dataset = S3Dataset(s3, where, timeout_s, present)
    dataset.read_provenance()
    return dataset
