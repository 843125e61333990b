"""Thin fetchers: a model's config.json and weight size, from the Hub or a local directory.

Everything goes through `huggingface_hub`: its endpoint (`HF_ENDPOINT`), offline mode
(`HF_HUB_OFFLINE`: the cache only), cache (`HF_HUB_CACHE` / `HF_HOME`) and token
(the endpoint's hp:hfToken, else what the library finds: `HF_TOKEN`, a stored login).

The library retries a failed or timed-out request with a 60 s timeout and backoff
(`file_download._ETAG_RETRY_TIMEOUT`, `http_backoff`), so each fetch runs under a deadline that
its HTTP transport enforces: every request's timeout is cut to the time left, and a request
started after the deadline fails at once with `DeadlineExceeded`, which the library does not
retry. A silent Hub therefore costs the deadline, not minutes.
"""

from __future__ import annotations

import contextvars
import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx2
from huggingface_hub import HfApi, constants, errors, hf_hub_download
from huggingface_hub.utils import _http

from mlcc.preflight.facts import ModelFacts, NotAModelConfig, model_facts, with_estimate

CONFIG_FILE = "config.json"
INDEX_FILE = "model.safetensors.index.json"
MAX_JSON_BYTES = 4 * 1024 * 1024  # a config or index larger than this is not one
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt")
# safetensors dtype names (the Hub's `safetensors.parameters` keys) -> bytes per parameter
_SAFETENSORS_BYTES = {
    "F64": 8,
    "F32": 4,
    "I64": 8,
    "I32": 4,
    "BF16": 2,
    "F16": 2,
    "F8_E4M3": 1,
    "F8_E5M2": 1,
    "I8": 1,
    "U8": 1,
}
_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "preflight_deadline", default=None
)


class DeadlineExceeded(httpx2.RequestError):
    """The fetch's deadline has passed (not a TimeoutException, so nothing retries it)."""


@dataclass(frozen=True)
class ModelRef:
    model: str  # a Hub id, or an absolute directory
    revision: str
    token: str | None  # None: the library's own (HF_TOKEN, a stored login)


@dataclass(frozen=True)
class Fetched:
    facts: ModelFacts


@dataclass(frozen=True)
class Refused:
    """The source answered, and the answer is that the engine could not load this model."""

    message: str


@dataclass(frozen=True)
class Unreachable:
    """The source could not say within the deadline (or at all, offline without a cache)."""

    why: str


FetchResult = Fetched | Refused | Unreachable


class _DeadlineTransport(httpx2.BaseTransport):
    def __init__(self) -> None:
        self._inner = httpx2.HTTPTransport()

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        deadline = _deadline.get()
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise DeadlineExceeded("the deadline passed", request=request)
            request.extensions["timeout"] = {
                k: left if v is None else min(v, left)
                for k, v in {
                    "connect": None,
                    "read": None,
                    "write": None,
                    "pool": None,
                    **request.extensions.get("timeout", {}),
                }.items()
            }
        return self._inner.handle_request(request)

    def close(self) -> None:
        self._inner.close()


def _client() -> httpx2.Client:
    """The library's default client (its request hook: offline mode, request ids), with the
    deadline transport and a bounded redirect chain."""
    return httpx2.Client(
        event_hooks={"request": [_http.hf_request_event_hook]},
        follow_redirects=True,
        max_redirects=10,
        timeout=None,
        transport=_DeadlineTransport(),
    )


_installed = False


_install_lock = threading.Lock()


def install_deadline_client() -> None:
    """Route huggingface_hub's shared client through the deadline transport (once per process:
    the program and mlcc plan use the library for nothing else)."""
    global _installed
    with _install_lock:
        if not _installed:
            _http.set_client_factory(_client)
            _installed = True


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    token = _deadline.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _deadline.reset(token)


def fetch(ref: ModelRef, seconds: float) -> FetchResult:
    """The model's facts, or why not. Never raises for anything the source answers."""
    if ref.model.startswith("/"):
        return _local(Path(ref.model))
    install_deadline_client()
    with deadline(seconds):
        try:
            config_path = _download(ref, CONFIG_FILE)
            config = _read_json(config_path)
            return Fetched(with_estimate(model_facts(config, _weight_bytes(ref, seconds))))
        except _Failure as failure:
            return failure.result
        except NotAModelConfig as error:
            return Refused(f"its {CONFIG_FILE} {error}")


class _Failure(Exception):
    def __init__(self, result: Refused | Unreachable) -> None:
        super().__init__(str(result))
        self.result = result


def _download(ref: ModelRef, filename: str) -> Path:
    try:
        return Path(
            hf_hub_download(
                ref.model,
                filename,
                revision=ref.revision,
                token=ref.token,
                endpoint=os.environ.get("HF_ENDPOINT") or None,
                cache_dir=os.environ.get("HF_HUB_CACHE") or None,
                local_files_only=_offline(),
            )
        )
    except Exception as error:  # every answer of the source becomes one line, never a traceback
        raise _Failure(_classified(ref, filename, error)) from None


def _offline() -> bool:
    return constants.HF_HUB_OFFLINE or constants._is_true(os.environ.get("HF_HUB_OFFLINE"))


def _classified(ref: ModelRef, filename: str, error: Exception) -> Refused | Unreachable:
    where = os.environ.get("HF_ENDPOINT") or constants.ENDPOINT
    has_token = bool(ref.token or os.environ.get("HF_TOKEN"))
    if isinstance(error, errors.GatedRepoError):
        reading = "the token cannot read it" if has_token else "no token was given"
        return Refused(
            f"{ref.model} is gated and {reading}; accept its licence on the Hub with the "
            "token's account, then set hp:hfToken (or HF_TOKEN for mlcc plan)"
        )
    if isinstance(error, errors.RevisionNotFoundError):
        return Refused(f"{ref.model} has no revision {ref.revision!r}")
    if isinstance(error, errors.RepositoryNotFoundError):
        status = error.response.status_code if error.response is not None else 404
        reading = "the token cannot read it" if has_token else "needs a token"
        private = f" (or it is private and {reading})"
        return Refused(f"{ref.model} is not on {where} (HTTP {status}){private}")
    if isinstance(error, errors.LocalEntryNotFoundError):
        if _offline():
            return Unreachable(f"HF_HUB_OFFLINE is set and {filename} is not in the Hub cache")
        return Unreachable(f"{where} did not answer for {filename} in time")
    if isinstance(error, errors.EntryNotFoundError):
        return Refused(f"{ref.model} at {ref.revision} has no {filename}")
    if isinstance(error, errors.HfHubHTTPError) and error.response is not None:
        return Unreachable(f"{where} answered HTTP {error.response.status_code} for {filename}")
    if isinstance(error, DeadlineExceeded | httpx2.TimeoutException):
        return Unreachable(f"{where} did not answer for {filename} in time")
    if isinstance(error, httpx2.TooManyRedirects):
        return Unreachable(f"{where} redirected {filename} in a loop")
    return Unreachable(f"{filename} from {where}: {type(error).__name__}: {_first_line(error)}")


def _first_line(error: Exception) -> str:
    text = str(error).strip().splitlines()
    return text[0][:200] if text else "no detail"


def _read_json(path: Path) -> object:
    try:
        if path.stat().st_size > MAX_JSON_BYTES:
            raise _Failure(Refused(f"its {path.name} is over {MAX_JSON_BYTES >> 20} MiB"))
        return json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError:
        raise _Failure(Refused(f"its {path.name} is not UTF-8 text")) from None
    except (ValueError, RecursionError):
        raise _Failure(Refused(f"its {path.name} is not JSON")) from None
    except OSError as error:
        raise _Failure(Unreachable(f"cannot read {path.name} ({error.strerror})")) from None


def _weight_bytes(ref: ModelRef, seconds: float) -> int | None:
    """The safetensors index's total_size; for a single-file checkpoint, the sizes of its
    weight files in the Hub's file metadata. None when neither says."""
    try:
        index = _read_json(_download(ref, INDEX_FILE))
    except _Failure as failure:
        if not (isinstance(failure.result, Refused) and INDEX_FILE in failure.result.message):
            return None
    else:
        total = index.get("metadata", {}).get("total_size") if isinstance(index, dict) else None
        return int(total) if isinstance(total, int | float) and total > 0 else None
    if _offline():
        return None
    try:
        info = HfApi(endpoint=os.environ.get("HF_ENDPOINT") or None).model_info(
            ref.model, revision=ref.revision, token=ref.token, files_metadata=True, timeout=seconds
        )
    except Exception:  # the size is then unknown, and the memory check says so
        return None
    sizes = {s.rfilename: s.size or 0 for s in info.siblings or []}
    for suffix in _WEIGHT_SUFFIXES:
        total = sum(size for name, size in sizes.items() if name.endswith(suffix))
        if total:
            return total
    # The Hub's safetensors metadata: parameters per dtype.
    parameters = getattr(info.safetensors, "parameters", None) or {}
    counted = sum(count * _SAFETENSORS_BYTES.get(dtype, 2) for dtype, count in parameters.items())
    return int(counted) or None


def _local(directory: Path) -> FetchResult:
    config = directory / CONFIG_FILE
    if not config.is_file():
        return Unreachable(f"{directory} is a path inside the image, not on this machine")
    try:
        facts_config = _read_json(config)
        index = directory / INDEX_FILE
        size = None
        if index.is_file():
            total = _read_json(index)
            size = total.get("metadata", {}).get("total_size") if isinstance(total, dict) else None
        else:
            size = sum(p.stat().st_size for p in directory.glob("*.safetensors")) or None
        return Fetched(with_estimate(model_facts(facts_config, int(size) if size else None)))
    except _Failure as failure:
        return failure.result
    except NotAModelConfig as error:
        return Refused(f"its {CONFIG_FILE} {error}")
