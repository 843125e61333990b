"""The Kubernetes API as the deploy wait and `mlcc verify` read it (the official client's
transport, with the bounds of docs/deploy.md, "Limits").

Every request goes through `_open`: the client builds it (its auth, including an exec plugin's
token refresh), sends it with no retry of its own and a timeout, and the answer is read by
`mlcc.deploy.answers.read_bounded` (a size limit and a deadline), never by the client's model
classes. A request never outlasts the wait's own deadline (`until`). Lists are read a page at
a time (`limit`, `continue`) up to a cap, and what was not read is said. The watch between
rounds is read a line at a time, each line bounded. The `kubernetes` package is imported
inside the functions, so callers start without it.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from mlcc.deploy.answers import (
    AnswerError,
    DeadlineExceeded,
    Response,
    Unfinished,
    json_object,
    read_bounded,
    within,
)
from mlcc.deploy.kubeconfig import AccessError
from mlcc.deploy.snapshot import items_of, mapping, one_line
from mlcc.facts.operator import GROUP, PLURAL, VERSION

DEFAULT_REQUEST_TIMEOUT_S = 20.0
MAX_ANSWER_BYTES = 8 * 1024 * 1024  # one object or one page of a list
ERROR_BODY_BYTES = 64 * 1024  # the Status body of a refusal: its message is all we show
LOG_LIMIT_BYTES = 4 * 1024 * 1024  # the head of a running engine's log (its config line)
PREVIOUS_LOG_BYTES = 1024 * 1024  # the tail of a crashed run's log (why it stopped)
PREVIOUS_LOG_LINES = 500
PAGE_SIZE = 250
MAX_PAGES = 8  # at most 2,000 pods, and 2,000 events per object
EVENT_PAGE_SIZE = 250
WATCH_LINE_BYTES = 2 * 1024 * 1024  # one watch event (one object)
WATCH_MAX_BYTES = 16 * 1024 * 1024  # all the events of one pause that changed nothing
MAX_RETRY_AFTER_S = 60.0
PERMANENT_STATUSES = frozenset({401, 403})

Change = Literal["changed", "relist", "quiet", "dropped"]


class ApiError(Exception):
    """A request failed; 401/403 are permanent, anything else may heal (5xx, timeouts)."""

    def __init__(
        self,
        message: str,
        status: int | None = None,
        retry_after: float | None = None,
        final: bool = False,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after  # 429/503's Retry-After, seconds (capped)
        self.final = final  # the kubeconfig's exec plugin failed at a token refresh

    @property
    def permanent(self) -> bool:
        return self.final or self.status in PERMANENT_STATUSES


class TimeRanOut(ApiError):
    """No request was sent: the wait's own deadline had passed (no fault of the API's)."""


@dataclass(frozen=True)
class Listing:
    """The items of a list that were read, and what was not (None: everything was read)."""

    items: list[dict[str, Any]]
    unread: str | None = None


def api_reason(error: BaseException, timeout_s: float) -> str:
    """One line for a failed request: the API's status and message, or what the network did."""
    status = getattr(error, "status", None)
    if status:
        reason = getattr(error, "reason", None) or ""
        said = status_message(getattr(error, "body", None))
        shown = f": {said}" if said and said != reason else ""
        return one_line(f"{status} {reason}{shown}", 240)
    if isinstance(error, (AnswerError, AccessError)):  # AccessError: a token refresh failed
        return str(error)
    text = f"{type(error).__name__}: {error}"
    if "timed out" in text.lower() or "Timeout" in text:
        return f"no answer within {timeout_s:g} s"
    if "refused" in text.lower():
        return "connection refused"
    return one_line(text, 240)


def status_message(body: object) -> str:
    """The `message` of a Kubernetes Status body, if the body is one."""
    try:
        raw = body.encode() if isinstance(body, str) else body
        decoded = json_object(raw) if isinstance(raw, bytes) else None
    except AnswerError:
        return ""
    return one_line(str(decoded.get("message") or ""), 200) if decoded else ""


def _retry_after(headers: Any) -> float | None:
    """Retry-After in seconds (RFC 9110; an HTTP date is not honoured), capped."""
    try:
        value = float(str(headers.get("Retry-After") or "").strip())
    except (ValueError, AttributeError):
        return None
    return min(value, MAX_RETRY_AFTER_S) if value >= 0 else None


class Cluster:
    """The reads the deploy wait makes, each with `request_timeout_s`; results as JSON dicts."""

    def __init__(
        self,
        client_api: Any,
        request_timeout_s: float = DEFAULT_REQUEST_TIMEOUT_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._api_client = client_api
        self.timeout_s = request_timeout_s
        self._clock = clock
        self._until: float | None = None
        self.unfinished = Unfinished()  # shared by the copies `until` makes

    def until(self, deadline: float) -> Cluster:
        """The same reads, none of them lasting past `deadline` (of `clock`)."""
        bounded = copy.copy(self)
        bounded._until = deadline
        return bounded

    def _seconds(self) -> float:
        """This request's timeout: the request timeout, or what is left before `until`."""
        if self._until is None:
            return self.timeout_s
        left = self._until - self._clock()
        if left <= 0:
            raise TimeRanOut("the wait's time ran out")
        return min(self.timeout_s, left)

    def _open(
        self, what: str, path: str, query: Sequence[tuple[str, object]], read_s: float | None = None
    ) -> tuple[Response, float]:
        """The open answer of a 2xx GET, and the deadline for reading it; else ApiError."""
        seconds = self._seconds()
        read_timeout = min(read_s, seconds) if read_s is not None else seconds
        deadline = self._clock() + 2 * seconds

        def send() -> Any:
            request = self._api_client.param_serialize(
                "GET",
                path,
                query_params=list(query),
                header_params={"Accept": "application/json"},
                auth_settings=["BearerToken"],
            )
            method, url, headers = request[0], request[1], request[2]
            return self._api_client.call_api(
                method, url, header_params=headers, _request_timeout=(seconds, read_timeout)
            )

        try:
            # `send` runs the exec plugin when the token expired
            answer = within(seconds, send, unfinished=self.unfinished)
        except AccessError as error:  # it failed (mlcc.deploy.kubeconfig.loader): one line
            raise ApiError(f"cannot {what}: {error}", final=True) from None
        except Exception as error:
            raise ApiError(f"cannot {what}: {api_reason(error, seconds)}") from None
        response = answer.response
        status = int(answer.status)
        if 200 <= status <= 299:
            return response, deadline
        try:
            body, _ = read_bounded(
                response,
                ERROR_BODY_BYTES,
                deadline,
                cut=True,
                clock=self._clock,
                seconds=2 * seconds,
            )
        except Exception as error:  # an answer never completed is no answer, whatever its status
            raise ApiError(f"cannot {what}: {api_reason(error, seconds)}") from None
        said = status_message(body)
        reason = one_line(str(answer.reason or ""), 80)
        shown = f": {said}" if said and said != reason else ""
        retry = _retry_after(response.headers) if status in (429, 503) else None
        later = f" (retry after {retry:g} s)" if retry is not None else ""
        line = one_line(f"cannot {what}: {status} {reason}{shown}{later}", 300)
        raise ApiError(line, status, retry)

    def _json(
        self, what: str, path: str, query: Sequence[tuple[str, object]] = ()
    ) -> dict[str, Any]:
        response, deadline = self._open(what, path, query)
        try:
            body, _ = read_bounded(
                response, MAX_ANSWER_BYTES, deadline, clock=self._clock, seconds=2 * self.timeout_s
            )
            return json_object(body)
        except (AnswerError, OSError, ValueError) as error:
            raise ApiError(f"cannot {what}: {api_reason(error, self.timeout_s)}") from None
        except Exception as error:  # urllib3's ProtocolError, ReadTimeoutError, ...
            raise ApiError(f"cannot {what}: {api_reason(error, self.timeout_s)}") from None

    def endpoint(self, namespace: str, name: str) -> dict[str, Any] | None:
        path = f"/apis/{GROUP}/{VERSION}/namespaces/{_part(namespace)}/{PLURAL}/{_part(name)}"
        return self._json_or_none(f"read {PLURAL}/{name} in {namespace}", path)

    def _json_or_none(self, what: str, path: str) -> dict[str, Any] | None:
        """`_json`, None when the API says 404 (no such object, or kind)."""
        try:
            return self._json(what, path)
        except ApiError as error:
            if error.status == 404:
                return None
            raise

    def _list(
        self, what: str, path: str, query: list[tuple[str, object]], page: int, noun: str
    ) -> Listing:
        """Every page up to MAX_PAGES; items that are not objects are skipped and counted."""
        found: list[dict[str, Any]] = []
        token, seen, skipped = "", set(), 0
        for _ in range(MAX_PAGES):
            paging = [("limit", page), *([("continue", token)] if token else [])]
            answer = self._json(what, path, [*query, *paging])
            before = len(found)
            listed = items_of(answer.get("items"))
            skipped += len(answer.get("items") or []) - len(listed) if _is_list(answer) else 0
            found.extend(dict(item) for item in listed)
            if len(found) > MAX_PAGES * page:  # a server that ignores `limit`
                extra = len(found) - MAX_PAGES * page
                return Listing(
                    found[: MAX_PAGES * page],
                    f"{extra} more {noun} (at most {MAX_PAGES * page} are read)",
                )
            metadata = mapping(answer.get("metadata"))
            following = metadata.get("continue")
            token = following if isinstance(following, str) else ""
            if not token:
                return Listing(found, _skipped(skipped, noun))
            if token in seen:  # this page's items may be the last one's again: left out
                return Listing(
                    found[:before], f"{noun} after the first {before} (the API repeated a page)"
                )
            seen.add(token)
        left = metadata.get("remainingItemCount")
        more = f"{left} more {noun}" if isinstance(left, int) and left > 0 else f"more {noun}"
        return Listing(found, f"{more} (at most {MAX_PAGES * page} are read)")

    def pods(self, namespace: str, selector: str | None) -> Listing:
        query: list[tuple[str, object]] = [("labelSelector", selector)] if selector else []
        path = f"/api/v1/namespaces/{_part(namespace)}/pods"
        return self._list(f"list pods in {namespace}", path, query, PAGE_SIZE, "pods")

    def events(self, namespace: str, name: str) -> Listing:
        """The events about one object (the API filters them, a busy namespace has many)."""
        query: list[tuple[str, object]] = [("fieldSelector", f"involvedObject.name={name}")]
        path = f"/api/v1/namespaces/{_part(namespace)}/events"
        what = f"list the events of {name} in {namespace}"
        return self._list(what, path, query, EVENT_PAGE_SIZE, f"events of {name}")

    def log(self, namespace: str, pod: str, container: str, previous: bool) -> str | None:
        """The container's log as text (bad bytes replaced), or None when there is none: the
        head of a running container's log, the tail of a crashed run's. 401/403 is ApiError."""
        try:
            return self.read_log(namespace, pod, container, previous)
        except ApiError as error:
            if error.permanent:
                raise
            return None

    def read_log(self, namespace: str, pod: str, container: str, previous: bool) -> str:
        """`log`, or ApiError saying why there is none (refused, cut short, too slow)."""
        limit = PREVIOUS_LOG_BYTES if previous else LOG_LIMIT_BYTES
        query: list[tuple[str, object]] = [
            ("container", container),
            ("previous", "true" if previous else "false"),
            ("limitBytes", limit),
            *([("tailLines", PREVIOUS_LOG_LINES)] if previous else []),
        ]
        return self.log_text(namespace, pod, query, limit)

    def log_text(
        self, namespace: str, pod: str, query: Sequence[tuple[str, object]], limit: int
    ) -> str:
        """A pod's log read with `query` (container, tailLines, ...), its first `limit` bytes
        as text (bad bytes replaced); ApiError saying why there is none."""
        path = f"/api/v1/namespaces/{_part(namespace)}/pods/{_part(pod)}/log"
        what = f"read the log of {pod}"
        response, deadline = self._open(what, path, query)
        try:
            body, _ = read_bounded(
                response, limit, deadline, cut=True, clock=self._clock, seconds=2 * self.timeout_s
            )
        except Exception as error:  # cut short, or too slow: read again next round
            raise ApiError(f"cannot {what}: {api_reason(error, self.timeout_s)}") from None
        return body.decode("utf-8", errors="replace")

    def wait_for_change(
        self, namespace: str, name: str, resource_version: str, seconds: float
    ) -> Change:
        """Watch the endpoint for up to about `seconds`: `changed` (an event with another
        resourceVersion), `relist` (410 Gone: the version is too old, read again), `quiet` (the
        time passed) or `dropped` (closed early, refused, garbage, or events that changed
        nothing past WATCH_MAX_BYTES): the caller waits out the rest, so a watch that keeps
        failing or flooding never turns the loop into a busy one."""
        started = self._clock()
        query: list[tuple[str, object]] = [
            ("watch", "true"),
            ("fieldSelector", f"metadata.name={name}"),
            ("resourceVersion", resource_version),
            ("timeoutSeconds", max(1, int(seconds))),
        ]
        path = f"/apis/{GROUP}/{VERSION}/namespaces/{_part(namespace)}/{PLURAL}"
        try:
            response, _ = self._open(f"watch {name}", path, query, read_s=max(seconds, 0.01))
        except ApiError as error:
            return "relist" if error.status == 410 else "dropped"
        try:
            found = _first_change(response, resource_version, started + seconds, self._clock)
        except Exception:  # a read timeout (the time passed), a reset, ...
            found = None
        finally:
            response.close()
        if found is not None:
            return found
        return "quiet" if self._clock() - started >= seconds * 0.9 else "dropped"


def _first_change(
    response: Response, version: str, deadline: float, clock: Callable[[], float]
) -> Change | None:
    """Read watch events a line at a time until one changes the object (or says 410)."""
    buffer, total = b"", 0
    while clock() < deadline and total <= WATCH_MAX_BYTES:
        chunk = response.read1(64 * 1024)
        if not chunk:
            return None
        total += len(chunk)
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        if len(buffer) > WATCH_LINE_BYTES:
            return "dropped"  # one event larger than any object: not worth holding
        for line in lines:
            change = _event_change(line, version)
            if change is not None:
                return change
    return "dropped" if total > WATCH_MAX_BYTES else None


def _event_change(line: bytes, version: str) -> Change | None:
    if not line.strip():
        return None
    try:
        event = json_object(line)
    except AnswerError:
        return "dropped"
    kind, found = event.get("type"), mapping(event.get("object"))
    if kind == "ERROR":
        return "relist" if found.get("code") == 410 else "dropped"
    if kind in ("ADDED", "MODIFIED", "DELETED"):
        seen = mapping(found.get("metadata")).get("resourceVersion")
        # resourceVersions are opaque (API conventions): only "another one" is meaningful.
        return "changed" if seen != version else None
    return None  # BOOKMARK, or a type no source lists: nothing to re-read


def _is_list(answer: Mapping[str, Any]) -> bool:
    return isinstance(answer.get("items"), list)


def _skipped(count: int, noun: str) -> str | None:
    return f"{count} {noun} that are not objects" if count else None


def _part(text: str) -> str:
    """One path segment (the client quotes path parameters the same way)."""
    from urllib.parse import quote

    return quote(text, safe="")


__all__ = ["ApiError", "Cluster", "DeadlineExceeded", "Listing"]
