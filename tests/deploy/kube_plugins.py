"""Kubeconfigs and exec plugins for the hostile-kubeconfig tests: each plugin is a small
executable Python script (its shebang this interpreter) that a real process runs."""

from __future__ import annotations

import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import yaml

API_VERSION = "client.authentication.k8s.io/v1beta1"
UNREACHABLE = "https://127.0.0.1:9"  # never asked: loading a kubeconfig sends no request


def plugin(folder: Path, body: str, name: str = "get-token") -> Path:
    """An exec plugin running `body` (Python, with json, os, sys, time imported)."""
    script = folder / name
    source = f"#!{sys.executable}\nimport json, os, sys, time\n{textwrap.dedent(body)}\n"
    script.write_text(source, encoding="utf-8")
    script.chmod(0o755)
    return script


def credential(status: object, api_version: str = API_VERSION) -> str:
    """Python source printing an ExecCredential with this `status`."""
    answer = {"apiVersion": api_version, "kind": "ExecCredential", "status": status}
    return f"print(json.dumps({answer!r}))"


def exec_user(command: Path | str, **more: Any) -> dict[str, Any]:
    return {
        "exec": {
            "apiVersion": API_VERSION,
            "command": str(command),
            "args": ["eks", "get-token", "--cluster-name", "hp"],
            **more,
        }
    }


def kubeconfig(
    path: Path,
    *,
    user: dict[str, Any] | None = None,
    cluster: dict[str, Any] | None = None,
    server: str = UNREACHABLE,
    context: bool = True,
    users: bool = True,
) -> Path:
    """A kubeconfig of one cluster `c`, one user `u` and one context `x` (current); with
    `context=False` or `users=False` those entries are left out (for another file to give)."""
    config: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": server, **(cluster or {})}}],
    }
    if users:
        config["users"] = [{"name": "u", "user": user if user is not None else {"token": "t"}}]
    if context:
        config["contexts"] = [{"name": "x", "context": {"cluster": "c", "user": "u"}}]
        config["current-context"] = "x"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def gone(pid: int, within_s: float = 3.0) -> bool:
    """Whether process `pid` has ended (exited or a zombie) within `within_s`."""
    until = time.monotonic() + within_s
    while True:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        if time.monotonic() >= until:
            return False
        time.sleep(0.02)


def pids(folder: Path) -> list[int]:
    """The pids the plugins wrote to `folder/*.pid`."""
    return [int(p.read_text()) for p in sorted(folder.glob("*.pid")) if p.read_text().strip()]
