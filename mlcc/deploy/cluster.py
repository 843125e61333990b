"""The Kubernetes API as the deploy wait and `mlcc verify` read it (the official client).

Every request carries a timeout (`_request_timeout`) and no retry of its own, so an API server
that accepts a connection and never answers ends in an `ApiError` within that timeout. A kubeconfig
whose exec plugin (`aws eks get-token`) is missing, fails or hangs is one `AccessError` line
naming the plugin: the client itself would only log the plugin's raw output and go on without
credentials. The `kubernetes` package is imported inside the functions, so callers start without.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shlex
import shutil
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

from mlcc.deploy.snapshot import one_line
from mlcc.deploy.verify import GROUP, PLURAL, VERSION

DEFAULT_REQUEST_TIMEOUT_S = 20.0
EXEC_PLUGIN_TIMEOUT_S = 30.0
LOG_LIMIT_BYTES = 4 * 1024 * 1024
PERMANENT_STATUSES = frozenset({401, 403})


class AccessError(Exception):
    """The kubeconfig cannot give a working client; the message is one line."""


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


# --- configuration -------------------------------------------------------------------------


def exec_plugin(kubeconfig: Mapping[str, Any], context: str | None) -> tuple[str, list[str]] | None:
    """The exec plugin (command, args) of the context's user, if it has one."""
    name = context or kubeconfig.get("current-context")
    contexts = _named(kubeconfig.get("contexts"), "context")
    user = contexts.get(str(name), {}).get("user")
    plugin = _named(kubeconfig.get("users"), "user").get(str(user), {}).get("exec")
    if not isinstance(plugin, Mapping) or not plugin.get("command"):
        return None
    args = plugin.get("args")
    return str(plugin["command"]), [str(a) for a in args] if isinstance(args, list) else []


def _named(entries: object, field: str) -> dict[str, Mapping[str, Any]]:
    """A kubeconfig list (`- name: x, <field>: {...}`) by name; malformed entries are skipped."""
    found: dict[str, Mapping[str, Any]] = {}
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, Mapping) and isinstance(entry.get(field), Mapping):
            found[str(entry.get("name"))] = entry[field]
    return found


def _plugin_problem(plugin: tuple[str, list[str]], exec_messages: list[str]) -> str | None:
    shown = shlex.join([plugin[0], *plugin[1][:2]])
    if shutil.which(plugin[0]) is None:
        return (
            f"the kubeconfig's exec plugin `{shown}` was not found: install {plugin[0]} "
            "(the AWS CLI for `aws eks get-token`) or put it on PATH"
        )
    if exec_messages:
        said = exec_messages[-1].removeprefix("exec: ")
        detail = [line for line in said.splitlines() if line.strip()]
        return f"the kubeconfig's exec plugin `{shown}` failed: {one_line(detail[-1], 200)}"
    return None


class _ExecMessages(logging.Handler):
    """Collects the client's `exec: ...` log lines instead of letting them print raw."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message.startswith("exec:"):
            self.messages.append(message)


def api_client(
    kubeconfig: str | Mapping[str, Any] | None,
    context: str | None = None,
    exec_timeout_s: float = EXEC_PLUGIN_TIMEOUT_S,
) -> Any:
    """A configured `kubernetes.client.ApiClient`, or AccessError.

    `kubeconfig` is a file path, the kubeconfig itself as a map (Pulumi's EKS component exports
    it as JSON), or None for $KUBECONFIG / ~/.kube/config, or the pod's service account inside a
    cluster.
    """
    from kubernetes import client
    from kubernetes import config as kube_config

    configuration = client.Configuration()
    if kubeconfig is None and _in_cluster():
        kube_config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
        return _finish(client, configuration)
    loaded, file = _kubeconfig_dict(kubeconfig)
    plugin = exec_plugin(loaded, context)
    capture = _ExecMessages()
    failure: list[BaseException] = []

    def load() -> None:
        try:
            if isinstance(kubeconfig, Mapping):
                kube_config.load_kube_config_from_dict(  # type: ignore[no-untyped-call]
                    config_dict=dict(loaded), context=context, client_configuration=configuration
                )
            else:  # from the file, so that relative certificate paths resolve next to it
                kube_config.load_kube_config(  # type: ignore[no-untyped-call]
                    config_file=str(file) if kubeconfig else None,
                    context=context,
                    client_configuration=configuration,
                    persist_config=False,
                )
        except BaseException as error:  # reported by the caller's thread
            failure.append(error)

    root = logging.getLogger()
    root.addHandler(capture)
    try:
        loader = threading.Thread(target=load, daemon=True)
        loader.start()
        loader.join(exec_timeout_s)
    finally:
        root.removeHandler(capture)
    if loader.is_alive():
        shown = shlex.join([plugin[0], *plugin[1][:2]]) if plugin else "the kubeconfig"
        raise AccessError(
            f"the kubeconfig's exec plugin `{shown}` did not finish within {exec_timeout_s:g} s"
        )
    if plugin is not None:
        problem = _plugin_problem(plugin, capture.messages)
        if problem:
            raise AccessError(problem)
    if failure:
        raise AccessError(one_line(" ".join(str(failure[0]).split()) or type(failure[0]).__name__))
    return _finish(client, configuration)


def _finish(client: Any, configuration: Any) -> Any:
    configuration.retries = False  # one attempt per request: the wait loop decides on retries
    return client.ApiClient(configuration)


def _in_cluster() -> bool:
    default = Path(os.environ.get("KUBECONFIG", "~/.kube/config")).expanduser()
    return "KUBERNETES_SERVICE_HOST" in os.environ and not default.exists()


def _kubeconfig_dict(kubeconfig: str | Mapping[str, Any] | None) -> tuple[Mapping[str, Any], Path]:
    """The kubeconfig as a map (to find its exec plugin), and the file it came from."""
    if isinstance(kubeconfig, Mapping):
        return kubeconfig, Path()
    path = kubeconfig or os.environ.get("KUBECONFIG", "~/.kube/config").split(os.pathsep)[0]
    file = Path(path).expanduser()
    if file.exists() and not file.is_file():  # a FIFO would block the read forever
        raise AccessError(f"kubeconfig {file} is not a regular file")
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise AccessError(f"cannot read kubeconfig {file}: {one_line(str(error), 200)}") from None
    try:
        return _mapping(yaml.safe_load(text), f"kubeconfig {file}"), file
    except yaml.YAMLError as error:
        raise AccessError(f"kubeconfig {file} is not YAML: {one_line(str(error), 200)}") from None


def _mapping(value: object, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise AccessError(f"{what} is not a kubeconfig (a YAML map)")
    return value


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

    def events(self, namespace: str) -> list[dict[str, Any]]:
        found = self._call(
            f"list events in {namespace}", self.core.list_namespaced_event, namespace, limit=500
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
