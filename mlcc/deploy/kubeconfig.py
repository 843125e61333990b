"""A kubernetes client from a kubeconfig, as the deploy wait and `mlcc verify` use it.

A kubeconfig whose exec plugin (`aws eks get-token`) is missing, fails or hangs is one
`AccessError` line naming the plugin: the client itself would only log the plugin's raw output
and go on without credentials. The `kubernetes` package is imported inside `api_client`.
"""

from __future__ import annotations

import logging
import os
import shlex
import shutil
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from mlcc.deploy.snapshot import one_line
from mlcc.userfiles import UserFileError, read_text, shown_path
from mlcc.userfiles.reading import read_bytes

EXEC_PLUGIN_TIMEOUT_S = 30.0
KUBECONFIG_MAX_BYTES = 16 * 1024 * 1024  # a kubeconfig with many clusters and embedded certs
CREDENTIAL_FILE_MAX_BYTES = 1024 * 1024  # a certificate, a key or a token file
# The files a kubeconfig's cluster and user may name, read by the client unless the `-data`
# (or `token`) key beside them holds the content (kubernetes/config/kube_config.py, FileOrData).
_FILE_KEYS = (
    ("clusters", "cluster", "certificate-authority", "certificate-authority-data"),
    ("users", "user", "client-certificate", "client-certificate-data"),
    ("users", "user", "client-key", "client-key-data"),
    ("users", "user", "tokenFile", "token"),
)


class AccessError(Exception):
    """The kubeconfig cannot give a working client; the message is one line."""


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
    if not isinstance(kubeconfig, Mapping):
        _check_named_files(loaded, context, file)
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
        if plugin is None:
            raise AccessError(f"loading the kubeconfig did not finish within {exec_timeout_s:g} s")
        shown = shlex.join([plugin[0], *plugin[1][:2]])
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
    try:  # mlcc.userfiles: a FIFO or a folder is refused before a byte is read, never blocks
        text = read_text(file, "kubeconfig", KUBECONFIG_MAX_BYTES)
    except UserFileError as error:
        raise AccessError(str(error)) from None
    try:
        return _mapping(yaml.safe_load(text), f"kubeconfig {shown_path(file)}"), file
    except (yaml.YAMLError, RecursionError) as error:
        reason = "nested too deeply" if isinstance(error, RecursionError) else str(error)
        raise AccessError(
            f"kubeconfig {shown_path(file)} is not YAML: {one_line(reason, 200)}"
        ) from None


def _mapping(value: object, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise AccessError(f"{what} is not a kubeconfig (a YAML map)")
    return value


def _check_named_files(kubeconfig: Mapping[str, Any], context: str | None, file: Path) -> None:
    """Each file the context's cluster and user name must be a regular file of at most
    CREDENTIAL_FILE_MAX_BYTES (relative paths resolve next to the kubeconfig, as the client
    resolves them): a FIFO would block the client's loader, which runs without a deadline of
    its own. One AccessError naming the kubeconfig key and the path."""
    name = context or kubeconfig.get("current-context")
    chosen = _named(kubeconfig.get("contexts"), "context").get(str(name), {})
    for plural, field, key, data_key in _FILE_KEYS:
        entries = kubeconfig.get(plural)
        wanted = chosen.get(field)
        for index, entry in enumerate(entries if isinstance(entries, list) else []):
            if not isinstance(entry, Mapping) or str(entry.get("name")) != str(wanted):
                continue
            section = mapping_of(entry.get(field))
            value = section.get(key)
            if value is None or section.get(data_key):
                continue
            where = f"{plural}[{index}].{field}.{key}"
            if not isinstance(value, str) or not value:
                raise AccessError(f"kubeconfig {shown_path(file)}: {where} is no file name")
            path = Path(os.path.normpath(os.path.join(file.parent.absolute(), value)))
            try:
                read_bytes(
                    path, f"kubeconfig {shown_path(file)}: {where}", CREDENTIAL_FILE_MAX_BYTES
                )
            except UserFileError as error:
                raise AccessError(str(error)) from None


def mapping_of(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}
