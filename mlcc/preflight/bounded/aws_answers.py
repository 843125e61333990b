"""Bounds on what preflight reads from AWS: a size limit per answer, a page guard per list.

botocore reads a whole answer into memory before parsing it (`AWSResponse.content`), and its
paginators follow `NextToken` for as long as AWS gives one (raising only when a token repeats
at once). So each client's HTTP session is wrapped: an answer whose Content-Length, or whose
bytes as they arrive, pass MAX_ANSWER_BYTES fails with `AnswerTooLarge`, before botocore keeps
it. Lists are read through `pages`: at most MAX_PAGES pages, and a token seen before ends the
list (`ListNeverEnds`). Both are `AnswerProblem`s, which the caller turns into one "not
checked" line; neither is retried (botocore's standard mode retries only connection errors,
timeouts, throttling and 5xx answers).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mlcc.engine_contract.values import printable
from mlcc.preflight.bounded.parallel import note

# Far above any answer preflight asks for: a page of 100 Price List products is about 300 kB.
MAX_ANSWER_BYTES = 16 * 1024 * 1024
# The longest list preflight reads is SageMaker's quotas (about 2,000: 20 pages of 100).
MAX_PAGES = 100
_CHUNK = 64 * 1024


class AnswerProblem(Exception):
    """An AWS answer preflight will not read on; the message says why, in a few words."""


class AnswerTooLarge(AnswerProblem):
    pass


class ListNeverEnds(AnswerProblem):
    pass


class _BoundedRaw:
    """urllib3's response, read in chunks that stop at MAX_ANSWER_BYTES."""

    def __init__(self, raw: Any) -> None:
        self._raw = raw

    def stream(self, amt: int = _CHUNK, decode_content: bool | None = None) -> Iterator[bytes]:
        seen = 0
        for chunk in self._raw.stream(amt, decode_content=decode_content):
            seen += len(chunk)
            if seen > MAX_ANSWER_BYTES:
                self._raw.close()
                raise AnswerTooLarge(too_large())
            yield chunk

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


class _BoundedSession:
    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def send(self, request: Any) -> Any:
        response = self._inner.send(request)
        declared = str(response.headers.get("content-length", "")).strip()
        if declared.isdigit() and int(declared) > MAX_ANSWER_BYTES:
            response.raw.close()
            raise AnswerTooLarge(too_large())
        response.raw = _BoundedRaw(response.raw)
        return response

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def too_large() -> str:
    return f"an answer of more than {MAX_ANSWER_BYTES >> 20} MiB (not read)"


def bounded(client: Any) -> Any:
    """`client`, its answers read under MAX_ANSWER_BYTES (botocore's endpoint keeps its HTTP
    session in `_endpoint.http_session`, as it has since 2019)."""
    endpoint = getattr(client, "_endpoint", None)
    session = getattr(endpoint, "http_session", None)
    if endpoint is not None and session is not None and not isinstance(session, _BoundedSession):
        endpoint.http_session = _BoundedSession(session)
        client.meta.events.register("needs-retry", _note_retry)
    return client


def _note_retry(response: Any = None, attempts: int = 0, **_: Any) -> None:
    """botocore's `needs-retry` event, before its retry handler decides: the attempt's error
    code, kept for the "no answer within" line (returns None: the decision stays botocore's)."""
    parsed = response[1] if isinstance(response, tuple) and len(response) == 2 else None
    error = parsed.get("Error") if isinstance(parsed, dict) else None
    code = error.get("Code") if isinstance(error, dict) else None
    if isinstance(code, str) and code:
        note(f"attempt {attempts} answered {printable(code[:60])}")


def pages(client: Any, operation: str, **params: Any) -> Iterator[dict[str, Any]]:
    """The pages of a paginated call, at most MAX_PAGES, each token once."""
    seen: set[str] = set()
    for number, page in enumerate(client.get_paginator(operation).paginate(**params), 1):
        if not isinstance(page, dict):
            raise AnswerProblem("a page that is not a JSON object")
        note(f"{number} pages read")
        yield page
        token = next((page[k] for k in ("NextToken", "nextToken") if page.get(k)), None)
        if token is None:
            return
        if not isinstance(token, str):
            raise ListNeverEnds(f"a NextToken that is not a string (page {number})")
        if token in seen:
            raise ListNeverEnds(f"its pages repeat (the same NextToken after {number} pages)")
        seen.add(token)
        if number >= MAX_PAGES:
            raise ListNeverEnds(f"the list did not end within {MAX_PAGES} pages (stopped there)")
