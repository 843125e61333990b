"""`mlcc draft dataset --input s3://bucket/prefix/`: the capture files read from S3 itself.

ListObjectsV2 (botocore's paginator: every page, ContinuationToken) lists the prefix; the keys
ending in `.jsonl` are read in the order a local copy's files are (mlcc/cli/draft/dataset.py
`capture_files`: sorted by path segments), each GetObject body streamed through the same
per-line bound as a local file (`Reading.read_lines`: a line over --max-record-bytes is read past
in chunks, never held), so rows, drops and counts are those of a local copy of the same
objects. Each source in provenance.json is the object's URI, its size, the sha256 of the bytes
read (computed while streaming, as for a local file) and its ETag.

A failure (no such bucket, access denied, no .jsonl object, no answer, a body cut short) ends
the command with one line naming the object; the output folder then holds what was read so far
and no provenance.json. Needs s3:ListBucket on the bucket and s3:GetObject on the prefix.
"""

from __future__ import annotations

import io
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from mlcc.cli.draft import dataset as draft_dataset
from mlcc.cli.draft import s3_store
from mlcc.cli.draft.dataset import InputError, Split, Tally
from mlcc.serving.s3_draft import S3Folder

PROGRESS_EVERY_S = 5.0
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Listed:
    key: str
    size: int
    etag: str


class BodyFailed(Exception):
    """Reading an object's body failed (not an OSError: the line reader lets it through)."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


class HashingBody(draft_dataset.HashingReader):
    """An S3 object's streaming body as a raw byte stream, its sha256 and size as it is read;
    a failure of the read is BodyFailed (one line, by the caller)."""

    def _read(self, most: int) -> bytes:
        try:
            return super()._read(most)
        except Exception as error:  # a timeout or a cut body: one line, by the caller
            raise BodyFailed(error) from None


def capture_objects(s3: Any, where: S3Folder, timeout_s: float) -> list[Listed]:
    """The `.jsonl` objects under the prefix, in a local copy's file order."""
    found = list_prefix(s3, where, timeout_s, "--input", lambda key: key.endswith(".jsonl"))
    if not found:
        raise InputError(f"--input {where.uri}: no .jsonl objects under this prefix")
    return sorted(found, key=lambda listed: listed.key.split("/"))


def list_prefix(
    s3: Any,
    where: S3Folder,
    timeout_s: float,
    flag: str,
    keep: Callable[[str], bool],
    delimiter: str | None = None,
) -> list[Listed]:
    """Every object under the prefix whose key `keep`s (all ListObjectsV2 pages; with a
    delimiter, only the prefix's own objects); InputError (one line naming `flag`) on a
    failure."""
    found: list[Listed] = []
    request = {"Bucket": where.bucket, "Prefix": where.prefix}
    if delimiter:
        request["Delimiter"] = delimiter
    try:
        for page in s3.get_paginator("list_objects_v2").paginate(**request):
            for item in page.get("Contents", []):
                key = str(item.get("Key", ""))
                if keep(key) and not key.endswith("/"):
                    found.append(Listed(key, int(item.get("Size", 0)), str(item.get("ETag", ""))))
    except Exception as error:  # every failure of the listing: one line, never a traceback
        raise InputError(
            f"{flag} {where.uri}: listing it: {s3_store.described(error, timeout_s)}"
            f"{grant(error, 's3:ListBucket', f'arn:aws:s3:::{where.bucket}')}"
        ) from None
    return found


def grant(error: Exception, action: str, resource: str) -> str:
    from botocore.exceptions import ClientError

    if isinstance(error, ClientError) and "AccessDenied" in str(
        error.response.get("Error", {}).get("Code", "")
    ):
        return f" (grant {action} on {resource})"
    return ""


def build(
    uri: str,
    output: Path,
    split: Split,
    most: int,
    timeout_s: float,
    progress: IO[str] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Tally:
    """Read every `.jsonl` object under `uri` and write the dataset into `output`."""
    try:
        where = s3_store.place(uri, need_prefix=False)
    except ValueError as error:
        raise InputError(f"--input: {error}") from None
    try:
        s3 = s3_store.client(timeout_s)
    except s3_store.S3Problem as error:
        raise InputError(f"--input {where.uri}: {error}") from None
    objects = capture_objects(s3, where, timeout_s)
    total = sum(listed.size for listed in objects)
    shown_progress = progress if progress is not None else sys.stderr
    print(
        f"reading {len(objects)} .jsonl objects ({total >> 20} MiB) under {where.uri}",
        file=shown_progress,
        flush=True,
    )
    last = clock()
    read_bytes = 0
    with draft_dataset.Reading(output, split, most) as reading:
        for index, listed in enumerate(objects):
            _read_object(s3, where, listed, reading, timeout_s)
            read_bytes += listed.size
            if clock() - last >= PROGRESS_EVERY_S and index + 1 < len(objects):
                last = clock()
                print(
                    f"read {index + 1} of {len(objects)} objects "
                    f"({read_bytes >> 20} of {total >> 20} MiB), {reading.tally.kept} rows",
                    file=shown_progress,
                    flush=True,
                )
    return reading.tally


def _read_object(
    s3: Any,
    where: S3Folder,
    listed: Listed,
    reading: draft_dataset.Reading,
    timeout_s: float,
) -> None:
    name = where.shown(listed.key)
    try:
        answer = s3.get_object(Bucket=where.bucket, Key=listed.key)
    except Exception as error:  # every failure of the request: one line, never a traceback
        granted = grant(error, "s3:GetObject", f"arn:aws:s3:::{where.bucket}/{listed.key}")
        raise InputError(
            f"--input: {name}: {s3_store.described(error, timeout_s)}{granted}; "
            f"{reading.tally.read} records read before it, no provenance.json written"
        ) from None
    body = HashingBody(answer["Body"])
    try:
        with io.BufferedReader(body, _CHUNK) as stream:
            reading.read_lines(stream, name)
    except BodyFailed as failed:
        raise InputError(
            f"--input: {name}: reading it: {s3_store.described(failed.cause, timeout_s)}; "
            "no provenance.json written"
        ) from None
    finally:
        answer["Body"].close()
    reading.tally.sources.append(
        {
            "path": name,
            "size": body.size,
            "sha256": body.digest.hexdigest(),
            "etag": str(answer.get("ETag", listed.etag)).strip('"'),
        }
    )
