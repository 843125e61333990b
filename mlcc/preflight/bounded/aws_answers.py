"""Bounds on what preflight reads from AWS: a size limit per answer, a page guard per list.

botocore reads a whole answer into memory before parsing it (`AWSResponse.content`, inside its
HTTP session's `send`), and its paginators follow `NextToken` for as long as AWS gives one
(raising only when a token repeats at once). So each client's HTTP session is wrapped: it asks
botocore's session to stream the body, then reads it a chunk at a time; an answer whose
Content-Length, or whose bytes as they arrive (without a length, chunked, never ending), pass
MAX_ANSWER_BYTES fails with `AnswerTooLarge` there, before botocore keeps it. Lists are read
through `pages`: at most MAX_PAGES pages, and a token seen before ends the list
(`ListNeverEnds`). Both are `AnswerProblem`s, which the caller turns into one "not checked"
line; neither is retried (botocore's standard mode retries only connection errors, timeouts,
throttling and 5xx answers). An answer whose values are not of its model's types is one too
(`check_types`, on botocore's `after-call` event).
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
        """botocore's session reads the whole body before it returns, unless the request
        streams its output (`stream_output`): so it is asked to stream, and the body is read
        here, through the bound, as botocore would have read it (`AWSResponse.content`)."""
        streams = bool(getattr(request, "stream_output", False))
        request.stream_output = True
        try:
            response = self._inner.send(request)
        finally:
            request.stream_output = streams
        declared = str(response.headers.get("content-length", "")).strip()
        if declared.isdigit() and int(declared) > MAX_ANSWER_BYTES:
            response.raw.close()
            raise AnswerTooLarge(too_large())
        response.raw = _BoundedRaw(response.raw)
        if not streams:
            response.content  # noqa: B018 - read now, under the bound, and kept
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
        client.meta.events.register("after-call", check_types)
    return client


def check_types(parsed: Any = None, model: Any = None, http_response: Any = None, **_: Any) -> None:
    """botocore's `after-call` event: an answer whose values are not of the types its model
    gives (a quota written as "12" where the model has a Double) is malformed, never read as
    if the value were missing."""
    if getattr(http_response, "status_code", 200) >= 300 or not isinstance(parsed, dict):
        return  # an error: botocore's own handling
    shape = getattr(model, "output_shape", None)
    if shape is not None and (problem := type_problem(parsed, shape, "")):
        name = getattr(model, "name", "the answer")
        raise AnswerProblem(f"a malformed answer: {problem} (botocore's model of {name})")


_PYTHON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "long": (int,),
    "float": (int, float),
    "double": (int, float),
    "boolean": (bool,),
    "blob": (bytes, bytearray),
}


def type_problem(value: Any, shape: Any, path: str) -> str:
    """The first value of a parsed answer whose type is not its shape's ("" : none)."""
    kind = shape.type_name
    if kind == "structure":
        if not isinstance(value, dict):
            return _wrong(path, value, kind)
        for name, member in shape.members.items():
            if name in value and (found := type_problem(value[name], member, _at(path, name))):
                return found
        return ""
    if kind == "list":
        if not isinstance(value, list):
            return _wrong(path, value, kind)
        items = (type_problem(v, shape.member, f"{path}[{i}]") for i, v in enumerate(value))
        return next((f for f in items if f), "")
    if kind == "map":
        if not isinstance(value, dict):
            return _wrong(path, value, kind)
        entries = (type_problem(v, shape.value, _at(path, k)) for k, v in value.items())
        return next((f for f in entries if f), "")
    expected = _PYTHON_TYPES.get(kind)
    if kind == "blob" and hasattr(value, "read"):
        return ""  # a streaming payload (S3 GetObject's Body), read later under the same bound
    if expected is None:
        return ""  # a timestamp, a document: botocore converts or keeps them as they are
    numeric_bool = isinstance(value, bool) and kind != "boolean"
    return _wrong(path, value, kind) if numeric_bool or not isinstance(value, expected) else ""


def _at(path: str, name: object) -> str:
    return f"{path}.{name}" if path else str(name)


def _wrong(path: str, value: Any, kind: str) -> str:
    shown = printable(repr(value)[:40])
    return f"{path or 'the answer'} is {shown}, where the model has a {kind}"


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
