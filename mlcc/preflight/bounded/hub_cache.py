"""Reading a file huggingface_hub put in its cache, blaming the cache for what is the cache's.

The library keeps each file once, as `blobs/<hash>` (sha256 for an LFS file, the git blob sha1
for any other: its ETag), and links `snapshots/<commit>/<file>` to it; a file already there is
not downloaded again. So a truncated or foreign file in the cache would be read as the Hub's
answer. Before a cached file is believed, its link must lead to a blob and the blob's bytes must
have the blob's hash: otherwise the cache, named by its path, is at fault, not the model. The
read itself is the user-file reader's (mlcc/userfiles/reading.py): a regular file only (a FIFO
or a device is refused before a byte is read), at most `max_bytes`; a cached copy above that is
the model's only when its bytes have its hash (a download this large would have been one).

The library waits for a lock on a file it downloads (`.locks/.../<hash>.lock`) without end:
under preflight it waits until the fetch's deadline, then the lock, held by another process, is
named (`bounded_lock`), never the Hub's silence.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from filelock import Timeout

from mlcc.userfiles.reading import UserFileError, read_bytes

_HEX = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


class CacheFault(Exception):
    """The cached copy cannot be the Hub's answer; the message names the path and what to do."""


class TooLarge(CacheFault):
    """The file (the Hub's answer, as far as its hash tells) is above the caller's limit."""


class CacheLocked(Exception):
    """Another process holds the cache's lock on the file past the fetch's deadline."""


class HubMismatch(Exception):
    """A file downloaded just now whose bytes do not have the hash (ETag) the Hub gave it."""


def cached_bytes(path: Path, max_bytes: int, since: float = math.inf) -> bytes:
    """The bytes of a file `hf_hub_download` returned, checked against its blob's name. A blob
    written at `since` (a time.time()) or later was downloaded by this fetch: a mismatch there
    is the Hub's answer (`HubMismatch`), not the cache's."""
    try:
        data = read_bytes(path, "the Hub cache's", max_bytes)
    except UserFileError as error:
        if "too large" in str(error):
            raise _too_large(path, max_bytes, since) from None
        raise CacheFault(f"{error}; delete it and run again") from None
    if not path.is_symlink():
        return data  # a cache without links (copied files): nothing to check against
    blob = Path(os.path.realpath(path))
    if blob.parent.name != "blobs" or not _HEX.fullmatch(blob.name):
        raise CacheFault(
            f"the Hub cache's {path} leads to {blob}, not to a file the Hub client wrote "
            "(blobs/<hash>); delete it and run again"
        )
    if _digest(data, len(blob.name)) != blob.name:
        if blob.stat().st_mtime >= since:
            raise HubMismatch(
                f"its {path.name} does not have the hash its ETag gives ({blob.name[:12]}...)"
            )
        raise CacheFault(
            f"the Hub cache's {blob} ({path.name}) is damaged: its {len(data):,} bytes do not "
            "have the hash it is named by (a truncated or replaced download); delete it and "
            "run again"
        )
    return data


def _too_large(path: Path, max_bytes: int, since: float) -> CacheFault:
    """A file above `max_bytes`: the model's (TooLarge) when just downloaded, or when the
    cached copy has the hash its blob is named by; else the cache's copy is at fault."""
    blob = Path(os.path.realpath(path))
    named = path.is_symlink() and blob.parent.name == "blobs" and _HEX.fullmatch(blob.name)
    if not named or blob.stat().st_mtime >= since or _file_digest(blob) == blob.name:
        return TooLarge(f"its {path.name} is over {max_bytes >> 20} MiB")
    return CacheFault(
        f"the Hub cache's {blob} ({path.name}) is over {max_bytes >> 20} MiB and does not "
        "have the hash it is named by (not the Hub's file); delete it and run again"
    )


def _file_digest(blob: Path, most: int = 64 * 1024 * 1024) -> str:
    """The blob's hash as its name is written (streamed: at most `most` bytes are read; a
    larger file is no answer the Hub client kept, and gets no hash)."""
    size = blob.stat().st_size
    if size > most:
        return ""
    digest = hashlib.sha256() if len(blob.name) == 64 else hashlib.sha1(usedforsecurity=False)
    if len(blob.name) != 64:
        digest.update(b"blob %d\0" % size)
    with blob.open("rb") as stream:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _digest(data: bytes, width: int) -> str:
    if width == 64:
        return hashlib.sha256(data).hexdigest()
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def bounded_lock(original: Callable[..., Any], time_left: Callable[[], float | None]) -> Any:
    """huggingface_hub's `WeakFileLock`, waiting no longer than the fetch's deadline; a lock
    still held then is `CacheLocked`, naming its file."""

    @contextlib.contextmanager
    def lock(lock_file: str | Path, *, timeout: float | None = None) -> Iterator[Any]:
        left = time_left()
        if left is not None:
            timeout = max(left, 0.01) if timeout is None else min(timeout, max(left, 0.01))
        try:
            with original(lock_file, timeout=timeout) as held:
                yield held
        except Timeout as waited:
            if str(waited.lock_file) != str(lock_file):
                raise
            raise CacheLocked(
                f"the Hub cache's lock {lock_file} is held by another process (a download of "
                "the same file, or a process that hangs): wait for it, or stop it, and run again"
            ) from None

    return lock


def cache_problem(error: OSError, cache: str) -> str:
    """One line for a cache the client could not write or read (it is never the Hub's fault)."""
    where = error.filename or cache
    reason = error.strerror or type(error).__name__
    return (
        f"the Hub cache cannot be used: {where}: {reason}; set HF_HUB_CACHE (or HF_HOME) to a "
        "folder this user can write"
    )
