"""Thin fetchers: a model's config.json and weight size, from the Hub or a local directory.

Everything goes through `huggingface_hub`: its endpoint (`HF_ENDPOINT`), offline mode
(`HF_HUB_OFFLINE`: the cache only), cache (`HF_HUB_CACHE` / `HF_HOME`) and token
(the endpoint's hp:hfToken, else what the library finds: `HF_TOKEN`, a stored login).

Each fetch runs under a deadline, every answer under a size limit, with no compression
(mlcc/preflight/bounded/hub_http.py): a silent Hub costs the deadline, not minutes, and a huge
one a bounded read. A file from the Hub cache is believed only when its bytes have the hash the
cache names it by (mlcc/preflight/bounded/hub_cache.py): a damaged cache is blamed, by its path,
not the Hub. Every value of config.json goes through one typed reader
(mlcc/preflight/bounded/values.py); which size figure is believed is mlcc/preflight/weight_size.py.
"""

from __future__ import annotations

import contextvars
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import httpx2
from huggingface_hub import HfApi, constants, errors, file_download, hf_hub_download
from huggingface_hub.utils import _http

from mlcc.preflight.bounded.hub_cache import (
    CacheFault,
    CacheLocked,
    HubMismatch,
    TooLarge,
    bounded_lock,
    cache_problem,
    cached_bytes,
)
from mlcc.preflight.bounded.hub_http import (
    MAX_ANSWER_BYTES,
    AnswerTooLarge,
    CompressedAnswer,
    DeadlineExceeded,
    DeadlineTransport,
    deadline,
    last_attempt,
    time_left,
)
from mlcc.preflight.facts import ModelFacts, NotAModelConfig, model_facts, with_estimate
from mlcc.preflight.head_weights import with_fc_width
from mlcc.preflight.weight_size import INDEX_FILE, believable, index_figures, listed_size
from mlcc.userfiles.reading import UserFileError, parse_json, read_bytes

CONFIG_FILE = "config.json"
MAX_JSON_BYTES = 4 * 1024 * 1024  # a config larger than this is not one
MAX_INDEX_BYTES = MAX_ANSWER_BYTES  # an index lists every tensor: 100k of them take ~10 MB
CONTRADICTION = 0.05  # the index's total_size and its files' sizes differ by more: not believed
_started: contextvars.ContextVar[float] = contextvars.ContextVar("fetch_started", default=0.0)


@dataclass(frozen=True)
class ModelRef:
    model: str  # a Hub id, or an absolute directory
    revision: str
    token: str | None  # None: the library's own (HF_TOKEN, a stored login)


@dataclass(frozen=True)
class Fetched:
    facts: ModelFacts
    notes: tuple[str, ...] = ()  # what the Hub said that was not believed (warnings)


@dataclass(frozen=True)
class Refused:
    """The source answered, and the answer is that the engine could not load this model."""

    message: str


@dataclass(frozen=True)
class Unreachable:
    """The source could not say within the deadline (or at all, offline without a cache)."""

    why: str


FetchResult = Fetched | Refused | Unreachable


def _client() -> httpx2.Client:
    """The library's default client (its request hook: offline mode, request ids), with the
    deadline transport and a bounded redirect chain."""
    return httpx2.Client(
        event_hooks={"request": [_http.hf_request_event_hook]},
        follow_redirects=True,
        max_redirects=10,
        timeout=None,
        transport=DeadlineTransport(),
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
            locks = file_download.__dict__  # its downloads wait for a lock no longer than us
            locks["WeakFileLock"] = bounded_lock(locks["WeakFileLock"], time_left)
            _installed = True


def fetch(ref: ModelRef, seconds: float) -> FetchResult:
    """The model's facts, or why not. Never raises for anything the source answers."""
    if ref.model.startswith("/"):
        return _local(Path(ref.model))
    install_deadline_client()
    _started.set(time.time() - 1)  # the file system's clock may round a second down
    with deadline(seconds):
        try:
            config = _read_json(_download(ref, CONFIG_FILE), MAX_JSON_BYTES)
            size, notes = _weight_bytes(ref, seconds)
            facts = with_estimate(model_facts(config, size))
            facts = with_fc_width(facts, ref.model, ref.revision, ref.token)
            return Fetched(facts, notes)
        except Failure as failure:
            return failure.result
        except NotAModelConfig as error:
            return Refused(f"its {CONFIG_FILE} {error}")


class Failure(Exception):
    """A read's end: the result to return (mlcc.preflight.s3_head raises it too)."""

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
        raise Failure(_classified(ref, filename, error)) from None


def _offline() -> bool:
    return constants.HF_HUB_OFFLINE or constants._is_true(os.environ.get("HF_HUB_OFFLINE"))


def _classified(ref: ModelRef, filename: str, error: Exception) -> Refused | Unreachable:
    where = os.environ.get("HF_ENDPOINT") or constants.ENDPOINT
    has_token = bool(ref.token or os.environ.get("HF_TOKEN"))
    if isinstance(error, CacheLocked):
        return Unreachable(str(error))
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
        return _no_answer(where, filename)
    if isinstance(error, errors.EntryNotFoundError):
        return Refused(f"{ref.model} at {ref.revision} has no {filename}")
    if isinstance(error, errors.HfHubHTTPError) and error.response is not None:
        return Unreachable(f"{where} answered HTTP {error.response.status_code} for {filename}")
    if isinstance(error, DeadlineExceeded | httpx2.TimeoutException):
        return _no_answer(where, filename)
    if isinstance(error, AnswerTooLarge):
        return Refused(f"its {filename} is over {MAX_ANSWER_BYTES >> 20} MiB on {where}")
    if isinstance(error, CompressedAnswer):
        return Unreachable(f"{where} {error} for {filename}")
    if isinstance(error, OSError) and not isinstance(error, httpx2.HTTPError):
        return Unreachable(cache_problem(error, os.environ.get("HF_HUB_CACHE") or _cache()))
    if isinstance(error, httpx2.TooManyRedirects):
        return Unreachable(f"{where} redirected {filename} in a loop")
    return Unreachable(f"{filename} from {where}: {type(error).__name__}: {_first_line(error)}")


def _no_answer(where: str, filename: str) -> Unreachable:
    reason = last_attempt(threading.get_ident())
    last = f"; last attempt: {reason}" if reason else ""
    return Unreachable(f"{where} did not answer for {filename} in time{last}")


def _first_line(error: Exception) -> str:
    text = str(error).strip().splitlines()
    return text[0][:200] if text else "no detail"


def _cache() -> str:
    return str(constants.HF_HUB_CACHE)


def _read_json(path: Path, max_bytes: int) -> object:
    """A file hf_hub_download returned: the cache's fault or the model's, one line each."""
    try:
        data = cached_bytes(path, max_bytes, _started.get())
    except HubMismatch as mismatch:
        where = os.environ.get("HF_ENDPOINT") or constants.ENDPOINT
        raise Failure(Unreachable(f"{where}: {mismatch}")) from None
    except TooLarge as fault:
        raise Failure(Refused(str(fault))) from None
    except CacheFault as fault:
        raise Failure(Unreachable(str(fault))) from None
    return parsed_json(data, f"its {path.name}")


def parsed_json(data: bytes, where: str) -> object:
    """A JSON file's value; text that is not UTF-8 or not JSON is a Failure naming `where`."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise Failure(Refused(f"{where} is not UTF-8 text")) from None
    problem, value = parse_json(text)
    if problem is not None:
        raise Failure(Refused(f"{where} {problem}"))
    return value


def _weight_bytes(ref: ModelRef, seconds: float) -> tuple[int | None, tuple[str, ...]]:
    """(bytes, notes): the files' sizes in the Hub's file metadata, else the safetensors index's
    total_size, else the metadata's parameter counts; None when no source gives a believable
    size (mlcc/preflight/weight_size.py: a whole number of bytes, up to a limit). An index whose
    total_size contradicts its files' sizes is not believed, and a note says so."""
    notes: list[str] = []
    shards: frozenset[str] | None = None  # the index's files, when there is an index
    index_total = None
    try:
        index = _read_json(_download(ref, INDEX_FILE), MAX_INDEX_BYTES)
    except Failure as failure:
        if not (isinstance(failure.result, Refused) and INDEX_FILE in failure.result.message):
            return None, ()
    else:
        index_total, shards = index_figures(index, notes)
    if _offline():
        return index_total, tuple(notes)
    try:
        info = HfApi(endpoint=os.environ.get("HF_ENDPOINT") or None).model_info(
            ref.model, revision=ref.revision, token=ref.token, files_metadata=True, timeout=seconds
        )
    except Exception:  # the size is then the index's or unknown, and the memory check says so
        return index_total, tuple(notes)
    listed = listed_size(info, shards, notes)
    if listed is None:
        return index_total, tuple(notes)
    if index_total is not None and abs(listed - index_total) > CONTRADICTION * listed:
        notes.append(
            f"its {INDEX_FILE} says the weights take {index_total:,} bytes, its files on the "
            f"Hub {listed:,}: the files' sizes are used"
        )
        return listed, tuple(notes)
    return index_total or listed, tuple(notes)


def _local(directory: Path) -> FetchResult:
    config = directory / CONFIG_FILE
    if not config.is_file():
        return Unreachable(f"{directory} is a path inside the image, not on this machine")
    try:
        facts_config = parsed_json(_local_bytes(config, MAX_JSON_BYTES), f"its {CONFIG_FILE}")
        index = directory / INDEX_FILE
        notes: list[str] = []
        size = None
        if index.is_file():
            read = parsed_json(_local_bytes(index, MAX_INDEX_BYTES), f"its {index.name}")
            size, _ = index_figures(read, notes)
        else:
            files = [p for p in directory.glob("*.safetensors") if p.is_file()]
            size = believable(sum(p.stat().st_size for p in files))
        facts = with_estimate(model_facts(facts_config, size))
        return Fetched(with_fc_width(facts, str(directory)), tuple(notes))
    except OSError as error:
        return Unreachable(f"cannot read {directory}: {error.strerror or error}")
    except Failure as failure:
        return failure.result
    except NotAModelConfig as error:
        return Refused(f"its {CONFIG_FILE} {error}")


def _local_bytes(path: Path, max_bytes: int) -> bytes:
    try:
        return read_bytes(path, "", max_bytes)
    except UserFileError as error:
        raise Failure(Refused(f"its {path.name}: {error}")) from None
