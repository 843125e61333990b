"""The kubeconfig files the client will merge, read bounded, and the entries it will use.

`read_sources`: `--kubeconfig`'s one path, or each path of KUBECONFIG (separated by os.pathsep,
as the client's KubeConfigMerger splits it; empty and missing paths skipped, as it skips them),
or ~/.kube/config. Each is read by mlcc.userfiles: a FIFO, a folder, a device or a file over
KUBECONFIG_MAX_BYTES is one line naming it, before a byte is read. The client's merger opens
each path with a plain open(), which a FIFO blocks forever; it is handed only paths read here.

`chosen`: the context, cluster and user the client will use, each from the file it takes them
from (KubeConfigMerger in kubernetes/config/kube_config.py): for each name, the first file that
defines it; `current-context` from the last file that sets it (the merger overwrites it file
after file).

`check_named_files`: each certificate, key and token file the chosen cluster and user name must
be a regular file of at most CREDENTIAL_FILE_MAX_BYTES (a FIFO would block the client's loader).
A relative path resolves as the client resolves it (KubeConfigLoader._load_cluster_info and
_load_user_token): the cluster's certificate-authority and the user's client-certificate and
client-key next to the file that defines the cluster, the user's tokenFile next to the file that
defines the user; for a kubeconfig given as a map, in the working folder.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from mlcc.deploy.snapshot import one_line
from mlcc.engine_contract.values import printable
from mlcc.userfiles import UserFileError, read_text, shown_path
from mlcc.userfiles.reading import read_bytes

from .common import CREDENTIAL_FILE_MAX_BYTES, KUBECONFIG_MAX_BYTES, AccessError, what

DEFAULT_PATH = "~/.kube/config"
# What the kubeconfig holds once YAML aliases are expanded: the client copies it into strings
# (KubeConfigMerger names each entry by str(entry); json.dumps for provideClusterInfo).
EXPANDED_MAX = 4 * KUBECONFIG_MAX_BYTES
_LISTS = (("clusters", "cluster"), ("contexts", "context"), ("users", "user"))


@dataclass(frozen=True)
class Source:
    """One kubeconfig: the file it was read from (None: given as a map), and its content."""

    path: Path | None
    config: Mapping[str, Any]

    @property
    def label(self) -> str:
        return f"kubeconfig {shown_path(self.path)}" if self.path else "the stack's kubeconfig"

    @property
    def folder(self) -> str:
        """Where the client resolves a relative path this file names."""
        return os.path.abspath(os.path.dirname(self.path)) if self.path else ""


@dataclass(frozen=True)
class Entry:
    """A `cluster:` or `user:` map, where it is (`users[1].user`) and the file it is in."""

    source: Source
    where: str
    value: Mapping[str, Any]


@dataclass(frozen=True)
class Chosen:
    cluster: Entry | None
    user: Entry | None


def listed_paths(kubeconfig: str | None) -> list[Path]:
    """The kubeconfig files to merge, in order: --kubeconfig, else KUBECONFIG, else the default."""
    if kubeconfig:
        return [Path(kubeconfig).expanduser()]
    listed = os.environ.get("KUBECONFIG") or DEFAULT_PATH
    parts = [Path(part).expanduser() for part in listed.split(os.pathsep) if part]
    return parts or [Path(DEFAULT_PATH).expanduser()]


def existing(paths: Sequence[Path]) -> list[Path]:
    """The paths the client's merger reads (it skips those for which os.path.exists is false)."""
    return [path for path in paths if os.path.exists(path)]


def read_sources(kubeconfig: str | None) -> list[Source]:
    """Each kubeconfig file the client will merge, read bounded and checked; or AccessError."""
    paths = listed_paths(kubeconfig)
    if len(paths) == 1:  # read even when missing: the line says so, naming it
        return [_source(paths[0])]
    found = existing(paths)
    if not found:
        shown = ", ".join(shown_path(path) for path in paths[:4])
        raise AccessError(f"none of the KUBECONFIG files exists ({shown})")
    return [_source(path) for path in found]


def source_of_map(config: Mapping[str, Any]) -> Source:
    """A kubeconfig given as a map (Pulumi's EKS component exports it as JSON)."""
    source = Source(None, config)
    _check_lists(source)
    return source


def _source(path: Path) -> Source:
    try:  # mlcc.userfiles: a FIFO or a folder is refused before a byte is read, never blocks
        text = read_text(path, "kubeconfig", KUBECONFIG_MAX_BYTES)
    except UserFileError as error:
        raise AccessError(str(error)) from None
    try:
        loaded = yaml.safe_load(text)
    except (yaml.YAMLError, RecursionError) as error:
        reason = "nested too deeply" if isinstance(error, RecursionError) else str(error)
        raise AccessError(
            f"kubeconfig {shown_path(path)} is not YAML: {one_line(reason, 200)}"
        ) from None
    if not isinstance(loaded, Mapping):
        raise AccessError(f"kubeconfig {shown_path(path)} is not a kubeconfig (a YAML map)")
    size = expanded_size(loaded, EXPANDED_MAX)
    if size is None or size > EXPANDED_MAX:
        why = "refer to themselves" if size is None else f"expand it past {EXPANDED_MAX >> 20} MiB"
        raise AccessError(f"kubeconfig {shown_path(path)}: its YAML aliases (*name) {why}")
    source = Source(path, loaded)
    _check_lists(source)
    return source


def expanded_size(root: object, cap: int) -> int | None:
    """About how many bytes `root` takes written out with its aliases expanded (a shared node
    counted at each place it is used), computed once per node; None when it contains itself."""
    sizes: dict[int, int] = {}
    started: set[int] = set()
    stack: list[tuple[object, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if not isinstance(node, (dict, list)) or (not done and id(node) in sizes):
            continue
        children = [*node.keys(), *node.values()] if isinstance(node, dict) else node
        if done:
            total = 2 + sum(
                _scalar_size(c) if id(c) not in sizes else sizes[id(c)] for c in children
            )
            sizes[id(node)] = min(total, cap + 1)
            continue
        if id(node) in started:
            return None  # reached again before it was sized: it is inside itself
        started.add(id(node))
        stack.append((node, True))
        stack.extend((c, False) for c in children if isinstance(c, (dict, list)))
    return sizes.get(id(root), _scalar_size(root))


def _scalar_size(value: object) -> int:
    return len(value) + 2 if isinstance(value, str) else 8


def _check_lists(source: Source) -> None:
    """`clusters`, `contexts` and `users` are lists of maps with a `name`, as the client's merger
    and loader index them (anything else ends in a TypeError or KeyError inside the client)."""
    for plural, _ in _LISTS:
        entries = source.config.get(plural)
        if entries is None:
            continue
        if not isinstance(entries, list):
            raise AccessError(f"{source.label}: {plural} is {what(entries)}, not a list")
        for index, entry in enumerate(entries):
            if not isinstance(entry, Mapping) or "name" not in entry:
                raise AccessError(
                    f"{source.label}: {plural}[{index}] is {what(entry)}, not a map with a name"
                )


def chosen(sources: Sequence[Source], context: str | None) -> Chosen:
    """The cluster and user of the context the client will use (None where it has none)."""
    name: object = context
    if name is None:
        for source in sources:
            if "current-context" in source.config:
                name = source.config["current-context"]
    found = _first(sources, "contexts", "context", name)
    fields = found.value if found else {}
    cluster = _first(sources, "clusters", "cluster", fields.get("cluster"))
    user = _first(sources, "users", "user", fields["user"]) if "user" in fields else None
    return Chosen(cluster, user)


def _first(sources: Sequence[Source], plural: str, field: str, name: object) -> Entry | None:
    if name is None:
        return None
    for source in sources:
        for index, entry in enumerate(source.config.get(plural) or []):
            if entry["name"] == name:
                value = entry.get(field)
                where = f"{plural}[{index}].{field}"
                return Entry(source, where, value if isinstance(value, Mapping) else {})
    return None


def check_server(picked: Chosen) -> None:
    """The chosen cluster's `server` is an http(s) URL with a host, as the client needs it to
    send anything; else one AccessError naming the kubeconfig key."""
    cluster = picked.cluster
    if cluster is None or "server" not in cluster.value:
        return  # the client says which part is missing
    value = cluster.value["server"]
    where = f"{cluster.source.label}: {cluster.where}.server"
    if not isinstance(value, str):
        raise AccessError(f"{where} is {what(value)}, not a URL")
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - parsing the port is what refuses a bad one
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        shown = printable(value[:60] + ("..." if len(value) > 60 else ""))
        raise AccessError(f"{where} is '{shown}', not an http(s)://HOST[:PORT] URL")


def check_named_files(picked: Chosen) -> None:
    """Each file the chosen cluster and user name is a regular file of at most
    CREDENTIAL_FILE_MAX_BYTES; else one AccessError naming the kubeconfig key and the path."""
    cluster, user = picked.cluster, picked.user
    # (entry, key, the key whose content wins over the file, the entry whose file it is next to)
    keys = (
        (cluster, "certificate-authority", "certificate-authority-data", cluster),
        (user, "client-certificate", "client-certificate-data", cluster),
        (user, "client-key", "client-key-data", cluster),
        (user, "tokenFile", "token", user),
    )
    for entry, key, data_key, beside in keys:
        if entry is None or key not in entry.value or data_key in entry.value:
            continue  # FileOrData reads the file only when the data key is absent
        value = entry.value[key]
        where = f"{entry.source.label}: {entry.where}.{key}"
        if not isinstance(value, str) or not value:
            raise AccessError(f"{where} is {what(value)}, not a file name")
        folder = (beside or entry).source.folder
        path = Path(os.path.normpath(os.path.join(folder, value)))
        try:
            read_bytes(path, where, CREDENTIAL_FILE_MAX_BYTES)
        except UserFileError as error:
            raise AccessError(str(error)) from None
