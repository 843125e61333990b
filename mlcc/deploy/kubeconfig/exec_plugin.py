"""The kubeconfig's exec plugin (`aws eks get-token`), run bounded, its answer checked.

Why not the client's own run: `ExecProvider.run` (kubernetes/config/exec_provider.py, kubernetes
37) starts the plugin with `subprocess.Popen(...).communicate()`, with no timeout and its whole
stdout and stderr read into memory: a plugin that hangs holds the caller forever (at the first
load and at every token refresh, KubeConfigLoader._load_from_exec_plugin via the client's
refresh_api_key_hook), one that prints gigabytes grows memory without limit. And the loader uses
the answer's fields without a type check.

`BoundedExecProvider` is the client's `ExecProvider` (its `__init__` reads command, args, env,
cwd and provideClusterInfo) with `run` replaced: the same KUBERNETES_EXEC_INFO, the same
interactive mode (stdin and stderr are the terminal's when stdout is one), the same apiVersion
check, run by `process.run_bounded` (a deadline after which its process group is killed, stdout
at most EXEC_STDOUT_MAX_BYTES, the last EXEC_STDERR_KEEP_BYTES of stderr kept). Every way it
can fail is one AccessError line naming the plugin; `checked_status` checks the credential's
fields as the loader then uses them (ExecCredential, client.authentication.k8s.io: a `token`,
or `clientCertificateData` with `clientKeyData`; `expirationTimestamp` RFC 3339).
"""

from __future__ import annotations

import json
import shlex
import signal
import sys
from collections.abc import Mapping
from typing import Any

from kubernetes.config.dateutil import parse_rfc3339
from kubernetes.config.exec_provider import ExecProvider

from mlcc.deploy.snapshot import one_line
from mlcc.userfiles.paths import os_reason, shown_path
from mlcc.userfiles.process import Finished, Stopped, run_bounded

from .common import EXEC_STDERR_KEEP_BYTES, EXEC_STDOUT_MAX_BYTES, AccessError, what


def plugin_label(exec_config: object) -> str:
    """`the kubeconfig's exec plugin `aws eks get-token``: the command and its first two args."""
    config = exec_config if isinstance(exec_config, Mapping) else {}
    args = config.get("args")
    first = [str(arg) for arg in args[:2]] if isinstance(args, list) else []
    shown = [str(config.get("command")), *first]
    return f"the kubeconfig's exec plugin `{one_line(shlex.join(shown), 120)}`"


def check_exec_config(exec_config: object) -> None:
    """The user's `exec` map has the fields the client's ExecProvider reads, typed as it uses
    them (a list where text belongs would end in a TypeError inside subprocess)."""
    label = plugin_label(exec_config)
    if not isinstance(exec_config, Mapping):
        raise AccessError(f"the kubeconfig's user has `exec: {what(exec_config)}`, not a map")
    for key in ("command", "apiVersion"):
        if not isinstance(exec_config.get(key), str) or not exec_config[key]:
            raise AccessError(f"{label}: exec.{key} is {what(exec_config.get(key))}, not text")
    args = exec_config.get("args")
    if args is not None and not (isinstance(args, list) and all(isinstance(a, str) for a in args)):
        raise AccessError(f"{label}: exec.args is {what(args)}, not a list of text")
    env = exec_config.get("env")
    entries = env if isinstance(env, list) else [env] if env is not None else []
    for entry in entries:
        fields = entry if isinstance(entry, Mapping) else {}
        if not all(isinstance(fields.get(key), str) for key in ("name", "value")):
            raise AccessError(f"{label}: exec.env holds {what(entry)}, not a `name` and `value`")


_EXTENSION = "client.authentication.k8s.io/exec"


class BoundedExecProvider(ExecProvider):
    """The client's ExecProvider, its plugin run with a deadline and bounded output."""

    def __init__(self, exec_config: Any, cwd: str | None, cluster: Any, timeout_s: float) -> None:
        check_exec_config(getattr(exec_config, "value", exec_config))
        super().__init__(exec_config, cwd, cluster)  # type: ignore[no-untyped-call]
        self.label = plugin_label(getattr(exec_config, "value", exec_config))
        self.timeout_s = timeout_s

    def run(self, previous_response: object = None) -> Mapping[str, Any]:
        """The ExecCredential's status, as the client's `run` returns it, or AccessError."""
        interactive = hasattr(sys.stdout, "isatty") and sys.stdout.isatty()
        # As ExecProvider.run builds it (kubernetes/config/exec_provider.py).
        info: dict[str, Any] = {
            "apiVersion": self.api_version,
            "kind": "ExecCredential",
            "spec": {"interactive": interactive},
        }
        if previous_response:
            info["spec"]["response"] = previous_response
        if self.cluster:  # provideClusterInfo: the cluster's entry, its exec extension as config
            cluster = info["spec"]["cluster"] = dict(self.cluster.value)
            extensions = cluster.get("extensions")
            for extension in extensions if isinstance(extensions, list) else []:
                if isinstance(extension, Mapping) and extension.get("name") == _EXTENSION:
                    cluster["config"] = extension.get("extension")
                    break
        # default=str: a YAML date in the cluster's entry is no JSON type (the client fails).
        self.env["KUBERNETES_EXEC_INFO"] = json.dumps(info, default=str)
        finished = self._finished(interactive)
        if finished.code != 0:
            raise AccessError(f"{self.label} {_exit_reason(finished, interactive)}")
        return checked_status(self._credential(finished.stdout), self.label)

    def _finished(self, interactive: bool) -> Finished:
        try:
            return run_bounded(
                self.args,
                env=self.env,
                cwd=self.cwd,
                timeout_s=self.timeout_s,
                stdout_max=EXEC_STDOUT_MAX_BYTES,
                stderr_keep=EXEC_STDERR_KEEP_BYTES,
                interactive=interactive,
            )
        except Stopped as stopped:
            if stopped.why == "stdout":
                raise AccessError(
                    f"{self.label} printed more than {EXEC_STDOUT_MAX_BYTES >> 20} MiB "
                    "(an ExecCredential is a few KiB) and was stopped"
                ) from None
            said = _last_line(stopped.stderr_tail)
            raise AccessError(
                f"{self.label} did not finish within {self.timeout_s:g} s and was stopped"
                f"{f' (its last words: {said})' if said else ''}"
            ) from None
        except FileNotFoundError as error:
            if self.cwd and error.filename == self.cwd:
                raise AccessError(
                    f"{self.label} cannot be run in {shown_path(self.cwd)}: no such folder"
                ) from None
            command = self.args[0]
            raise AccessError(
                f"{self.label} was not found: install {one_line(command, 80)} (the AWS CLI for "
                "`aws eks get-token`) or put it on PATH"
            ) from None
        except OSError as error:
            raise AccessError(f"{self.label} cannot be run: {os_reason(error)}") from None

    def _credential(self, stdout: bytes) -> object:
        """The `status` of the ExecCredential the plugin printed."""
        try:
            data = json.loads(stdout)
        except (ValueError, RecursionError) as error:
            reason = "nested too deeply" if isinstance(error, RecursionError) else str(error)
            raise AccessError(
                f"{self.label} printed no ExecCredential (not JSON: {one_line(reason, 120)})"
            ) from None
        if not isinstance(data, Mapping):
            raise AccessError(f"{self.label} printed {what(data)}, not an ExecCredential")
        for key in ("apiVersion", "kind", "status"):
            if key not in data:
                raise AccessError(f"{self.label} printed an ExecCredential without `{key}`")
        if data["apiVersion"] != self.api_version:
            raise AccessError(
                f"{self.label} answered apiVersion {one_line(str(data['apiVersion']), 80)}, not "
                f"the kubeconfig's exec.apiVersion {one_line(str(self.api_version), 80)}"
            )
        return data["status"]


def checked_status(status: object, label: str) -> Mapping[str, Any]:
    """The ExecCredential's `status`, when its fields are of the types the client uses."""
    if not isinstance(status, Mapping):
        raise AccessError(f"{label} printed an ExecCredential whose status is {what(status)}")
    if "token" in status:
        _text(status, "token", label)
    elif "clientCertificateData" in status:
        _text(status, "clientCertificateData", label)
        if "clientKeyData" not in status:
            raise AccessError(f"{label} printed status.clientCertificateData without clientKeyData")
        _text(status, "clientKeyData", label)
    else:
        raise AccessError(
            f"{label} printed an ExecCredential with neither status.token nor "
            "status.clientCertificateData"
        )
    if "expirationTimestamp" in status:
        stamp = status["expirationTimestamp"]
        try:
            parse_rfc3339(_text(status, "expirationTimestamp", label))  # type: ignore[no-untyped-call]
        except (ValueError, OverflowError):
            raise AccessError(
                f"{label} printed status.expirationTimestamp {one_line(repr(stamp), 60)}, "
                "not an RFC 3339 time"
            ) from None
    return status


def _text(status: Mapping[str, Any], key: str, label: str) -> str:
    value = status[key]
    if not isinstance(value, str):
        raise AccessError(f"{label} printed status.{key} that is {what(value)}, not text")
    if not value.strip():
        raise AccessError(f"{label} printed an empty status.{key}")
    if key == "token" and not all(" " <= c <= "~" for c in value):  # a Bearer header's text
        raise AccessError(f"{label} printed a status.token with characters other than ASCII text")
    return value


def _exit_reason(finished: Finished, interactive: bool) -> str:
    if finished.code < 0:
        try:
            name = signal.Signals(-finished.code).name
        except ValueError:
            name = str(-finished.code)
        return f"was killed by {name}"
    said = _last_line(finished.stderr_tail)
    if said:
        return f"exited {finished.code}: {said}"
    return f"exited {finished.code}{' (its message is above)' if interactive else ''}"


def _last_line(tail: bytes) -> str:
    lines = [line for line in tail.decode("utf-8", "replace").splitlines() if line.strip()]
    return one_line(lines[-1], 200) if lines else ""
