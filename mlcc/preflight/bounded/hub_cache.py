"""Reading a file huggingface_hub put in its cache, blaming the cache for what is the cache's.

The library keeps each file once, as `blobs/<hash>` (sha256 for an LFS file, the git blob sha1
for any other: its ETag), and links `snapshots/<commit>/<file>` to it; a file already there is
not downloaded again. So a truncated or foreign file in the cache would be read as the Hub's
answer. Before a cached file is believed, its link must lead to a blob and the blob's bytes must
have the blob's hash: otherwise the cache, named by its path, is at fault, not the model. The
read itself is the user-file reader's (mlcc/userfiles/reading.py): a regular file only (a FIFO
or a device is refused before a byte is read), at most `max_bytes`.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from pathlib import Path

from mlcc.userfiles.reading import UserFileError, read_bytes

_HEX = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


class CacheFault(Exception):
    """The cached copy cannot be the Hub's answer; the message names the path and what to do."""


class HubMismatch(Exception):
    """A file downloaded just now whose bytes do not have the hash (ETag) the Hub gave it."""


def cached_bytes(path: Path, max_bytes: int, since: float = math.inf) -> bytes:
    """The bytes of a file `hf_hub_download` returned, checked against its blob's name. A blob
    written at `since` (a time.time()) or later was downloaded by this fetch: a mismatch there
    is the Hub's answer (`HubMismatch`), not the cache's."""
    try:
        data = read_bytes(path, "the Hub cache's", max_bytes)
    except UserFileError as error:
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


def _digest(data: bytes, width: int) -> str:
    if width == 64:
        return hashlib.sha256(data).hexdigest()
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def cache_problem(error: OSError, cache: str) -> str:
    """One line for a cache the client could not write or read (it is never the Hub's fault)."""
    where = error.filename or cache
    reason = error.strerror or type(error).__name__
    return (
        f"the Hub cache cannot be used: {where}: {reason}; set HF_HUB_CACHE (or HF_HOME) to a "
        "folder this user can write"
    )
