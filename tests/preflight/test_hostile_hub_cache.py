"""A broken or locked local Hub cache (HF_HUB_CACHE) is named, never blamed on the Hub or the
model (issue #43, item 8): a cached copy above the config limit that is not the Hub's file, a
cached file that cannot be read, a lock another process holds while the file is downloaded."""

from __future__ import annotations

import fcntl
import hashlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_hub import MODELS
from test_hostile_hub import LLAMA, cache, cached_config, fetched, unreachable

from mlcc.preflight.hub import Fetched, Refused

__all__ = ["cache"]  # the fixture, used by name
REPO_FOLDER = "models--meta-llama--Llama-3.1-8B-Instruct"


def an_hour_old(path: Path) -> None:
    """Written by an earlier run, not by this download."""
    earlier = time.time() - 3600
    os.utime(path, (earlier, earlier))


def test_an_oversized_cached_copy_is_the_caches_not_the_models(cache: Path) -> None:
    assert isinstance(fetched({}), Fetched)
    blob = Path(os.path.realpath(cached_config(cache)))
    blob.write_bytes(b"{" + b" " * (5 * 1024 * 1024) + b"}")
    an_hour_old(blob)
    why = unreachable(fetched({}))
    assert f"the Hub cache's {blob} (config.json) is over 4 MiB" in why, why
    assert "not the Hub's file" in why and "delete it and run again" in why


def test_a_cached_file_that_cannot_be_read_names_the_cached_file(cache: Path) -> None:
    """A folder where the blob is (root reads any file whatever its mode: a folder stands for
    every cached file that cannot be read)."""
    assert isinstance(fetched({}), Fetched)
    blob = Path(os.path.realpath(cached_config(cache)))
    blob.unlink()
    blob.mkdir()
    why = unreachable(fetched({}))
    assert why.startswith("the Hub cache's ") and "config.json" in why, why
    assert "is a folder, not a file" in why
    assert "delete it and run again" in why


@pytest.fixture
def lock_held(cache: Path) -> Iterator[Path]:
    """The cache's lock on config.json's blob, held (flock) as another process would hold it."""
    etag = hashlib.sha256((MODELS / LLAMA / "config.json").read_bytes()).hexdigest()
    lock = cache / ".locks" / REPO_FOLDER / f"{etag}.lock"
    lock.parent.mkdir(parents=True)
    descriptor = os.open(lock, os.O_RDWR | os.O_CREAT)
    fcntl.flock(descriptor, fcntl.LOCK_EX)
    try:
        yield lock
    finally:
        os.close(descriptor)


def test_a_lock_held_by_another_process_is_named_not_the_hubs_silence(lock_held: Path) -> None:
    why = unreachable(fetched({}))
    assert why.startswith(f"the Hub cache's lock {lock_held} is held by another process"), why
    assert "did not answer" not in why


def test_an_oversized_copy_the_hub_gave_is_still_the_models(cache: Path) -> None:
    """Just downloaded (its blob newer than the fetch): the answer is the Hub's."""
    from fake_hub import HubAnswer

    big = HubAnswer(b'{"pad": "' + b"x" * (5 * 1024 * 1024) + b'"}')
    result = fetched({(LLAMA, "config.json"): big})
    assert isinstance(result, Refused) and "its config.json is over 4 MiB" in result.message
