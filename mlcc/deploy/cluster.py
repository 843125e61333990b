"""The Kubernetes API as the deploy wait and `mlcc verify` read it (the official client).

Every request carries a timeout (`_request_timeout`, and a deadline for the whole answer) and no
retry of its own, so an API server that accepts a connection and never answers ends in an
`ApiError` within that timeout. The client comes from `mlcc/deploy/kubeconfig.py`. The
`kubernetes` package is imported inside the functions, so callers start without it.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from mlcc.deploy.snapshot import one_line
from mlcc.facts.operator import GROUP, PLURAL, VERSION

DEFAULT_REQUEST_TIMEOUT_S = 20.0
LOG_LIMIT_BYTES = 4 * 1024 * 1024
PERMANENT_STATUSES = frozenset({401, 403})


class ApiError(Exception):
    """A request failed; 401/403 are permanent, anything else may heal (5xx, timeouts)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status

    @property
    def permanent(self) -> bool:
        return self.status in PERMANENT_STATUSES


def api_reason(error: BaseException, timeout_s: float) -> str:
    """One line for a failed request: the API's status and message, or what the network did."""
    status = getattr(error, "status", None)
    if status:
        reason = getattr(error, "reason", None) or ""
        said = _status_message(getattr(error, "body", None))
        shown = f": {said}" if said and said != reason else ""
        return one_line(f"{status} {reason}{shown}", 240)
    if isinstance(error, DeadlineExceeded):
        return str(error)
    text = f"{type(error).__name__}: {error}"
    if "timed out" in text.lower() or "Timeout" in text:
        return f"no answer within {timeout_s:g} s"
    if "refused" in text.lower():
        return "connection refused"
    return one_line(text, 240)


def _status_message(body: object) -> str:
    """The `message` of a Kubernetes Status body, if the body is one."""
    try:
        decoded = json.loads(body) if isinstance(body, (str, bytes)) else None
    except (ValueError, RecursionError):  # not JSON, or nested too deep to decode
        return ""
    return str(decoded.get("message") or "") if isinstance(decoded, dict) else ""


# --- requests ------------------------------------------------------------------------------


class DeadlineExceeded(Exception):
    def __init__(self, seconds: float) -> None:
        super().__init__(f"no complete answer within {seconds:g} s")


def within(seconds: float, request: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """`request(...)`, or DeadlineExceeded once it has run `seconds` (twice for connect + read).

    The client's timeouts bound each socket operation, not the answer: a server trickling a
    byte at a time would hold a request forever. The request runs in a daemon thread.
    """
    result: list[Any] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            result.append(request(*args, **kwargs))
        except BaseException as error:  # re-raised in the caller's thread
            failure.append(error)

    worker = threading.Thread(target=run, daemon=True, name="kubernetes-request")
    worker.start()
    worker.join(2 * seconds)
    if worker.is_alive():
        raise DeadlineExceeded(2 * seconds)
    if failure:
        raise failure[0]
    return result[0]


class Cluster:
    """The reads the deploy wait makes, each with `request_timeout_s`; results as JSON dicts."""

    def __init__(
        self,
        client_api: Any,
        request_timeout_s: float = DEFAULT_REQUEST_TIMEOUT_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        from kubernetes import client

        self._api_client = client_api
        self.custom = client.CustomObjectsApi(client_api)
        self.core = client.CoreV1Api(client_api)
        self.timeout_s = request_timeout_s
        self._clock = clock

    def _call(self, what: str, request: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        timeout = (self.timeout_s, self.timeout_s)
        try:
            return within(self.timeout_s, request, *args, _request_timeout=timeout, **kwargs)
        except Exception as error:
            status = getattr(error, "status", None)
            reason = api_reason(error, self.timeout_s)
            raise ApiError(f"cannot {what}: {reason}", status if status else None) from None

    def endpoint(self, namespace: str, name: str) -> dict[str, Any] | None:
        try:
            found = self._call(
                f"read {PLURAL}/{name} in {namespace}",
                self.custom.get_namespaced_custom_object,
                GROUP,
                VERSION,
                namespace,
                PLURAL,
                name,
            )
        except ApiError as error:
            if error.status == 404:
                return None
            raise
        if not isinstance(found, Mapping):
            raise ApiError(f"cannot read {PLURAL}/{name} in {namespace}: the answer is no object")
        return dict(found)

    def pods(self, namespace: str, selector: str | None) -> list[dict[str, Any]]:
        found = self._call(
            f"list pods in {namespace}",
            self.core.list_namespaced_pod,
            namespace,
            label_selector=selector,
        )
        return list(self._api_client.sanitize_for_serialization(found).get("items") or [])

    def events(self, namespace: str, name: str) -> list[dict[str, Any]]:
        """The events about one object (the API filters them, a busy namespace has many)."""
        found = self._call(
            f"list the events of {name} in {namespace}",
            self.core.list_namespaced_event,
            namespace,
            field_selector=f"involvedObject.name={name}",
            limit=100,
        )
        return list(self._api_client.sanitize_for_serialization(found).get("items") or [])

    def log(self, namespace: str, pod: str, container: str, previous: bool) -> str | None:
        """The container's log as text (bad bytes replaced), or None when there is none."""
        try:
            response = self._call(
                f"read the log of {pod}",
                self.core.read_namespaced_pod_log,
                pod,
                namespace,
                container=container,
                previous=previous,
                limit_bytes=LOG_LIMIT_BYTES,
                _preload_content=False,
            )
        except ApiError as error:
            if error.permanent:
                raise
            return None
        return bytes(response.data).decode("utf-8", errors="replace")

    def wait_for_change(
        self, namespace: str, name: str, resource_version: str | None, seconds: float
    ) -> bool:
        """Watch the endpoint for up to `seconds`; True when it changed or the time passed.

        False when the watch dropped early (closed, refused, an error event): the caller waits
        out the rest, so a watch that keeps failing never turns the loop into a busy one.
        """
        from kubernetes import watch

        started = self._clock()
        watcher = watch.Watch()  # type: ignore[no-untyped-call]
        stream = watcher.stream(  # type: ignore[no-untyped-call]
            self.custom.list_namespaced_custom_object,
            GROUP,
            VERSION,
            namespace,
            PLURAL,
            field_selector=f"metadata.name={name}",
            resource_version=resource_version,
            timeout_seconds=max(1, int(seconds)),
            _request_timeout=(self.timeout_s, max(seconds, 0.01)),
        )
        try:
            event = within(seconds, next, stream, None)
        except Exception:  # dropped, refused, an ERROR event, or no event before the timeout
            event = None
        finally:
            watcher.stop()  # type: ignore[no-untyped-call]
            # ValueError: still reading in `within`'s thread, which ends with the socket.
            with contextlib.suppress(ValueError):
                stream.close()
        return event is not None or self._clock() - started >= seconds * 0.9
