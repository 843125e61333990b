"""Kubeconfig files and the files they name, hostile: FIFOs, folders, oversize and missing files,
YAML alias bombs, and KUBECONFIG lists of several files, merged as the kubernetes client merges
them. Each is one AccessError line naming the key and the path, long before the loader's limit,
and the entries checked are those the client then uses (shown by what the real client loads)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
import yaml
from kube_plugins import exec_user, kubeconfig, pids, plugin

from mlcc.deploy.kubeconfig import CREDENTIAL_FILE_MAX_BYTES, AccessError, api_client

FAST_S = 3.0  # the loader's last-resort limit is the plugin's deadline + 10 s


@pytest.fixture(autouse=True, scope="module")
def _client_imported() -> None:
    """`api_client` imports the kubernetes client the first time: not what is timed here."""
    import kubernetes.client  # noqa: F401

    import mlcc.deploy.kubeconfig.loader  # noqa: F401


def refused(kubeconfig_arg: str | None) -> tuple[str, float]:
    started = time.monotonic()
    with pytest.raises(AccessError) as raised:
        api_client(kubeconfig_arg, exec_timeout_s=30.0)
    line = str(raised.value)
    assert "\n" not in line, line
    return line, time.monotonic() - started


def fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def hanging_plugin(tmp_path: Path) -> Path:
    return plugin(
        tmp_path, f"open({str(tmp_path / 'plugin.pid')!r}, 'w').write('1')\ntime.sleep(60)"
    )


def test_a_certificate_that_is_a_fifo_is_named_not_the_exec_plugin(tmp_path: Path) -> None:
    fifo(tmp_path / "client.crt")
    user = {**exec_user(hanging_plugin(tmp_path)), "client-certificate": "client.crt"}
    line, took = refused(str(kubeconfig(tmp_path / "kc", user=user)))
    assert line == (
        f"kubeconfig {tmp_path / 'kc'}: users[0].user.client-certificate "
        f"{tmp_path / 'client.crt'}: is a FIFO (named pipe), not a file"
    )
    assert took < FAST_S and pids(tmp_path) == []  # refused before the plugin ran


def test_a_kubeconfig_that_is_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    line, took = refused(str(fifo(tmp_path / "kc")))
    assert line == f"kubeconfig {tmp_path / 'kc'}: is a FIFO (named pipe), not a file"
    assert took < FAST_S


@pytest.mark.parametrize(
    ("key", "make", "said"),
    [
        (
            "certificate-authority",
            lambda p: p.write_bytes(b"-" * (CREDENTIAL_FILE_MAX_BYTES + 1)),
            f"is too large ({CREDENTIAL_FILE_MAX_BYTES + 1:,} bytes; at most "
            f"{CREDENTIAL_FILE_MAX_BYTES:,})",
        ),
        ("client-key", lambda p: p.mkdir(), "is a folder, not a file"),
        ("tokenFile", lambda p: None, "no such file or folder"),
    ],
)
def test_a_named_file_that_is_no_small_regular_file_is_one_line(
    tmp_path: Path, key: str, make: object, said: str
) -> None:
    target = tmp_path / "named"
    make(target)  # type: ignore[operator]
    where = "clusters[0].cluster" if key == "certificate-authority" else "users[0].user"
    entry = {key: "named"}
    path = kubeconfig(
        tmp_path / "kc",
        cluster=entry if where.startswith("clusters") else None,
        user=None if where.startswith("clusters") else entry,
    )
    line, took = refused(str(path))
    assert line == f"kubeconfig {path}: {where}.{key} {target}: {said}"
    assert took < FAST_S


def test_a_file_name_of_the_wrong_type_is_one_line(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "kc", cluster={"certificate-authority": 5})
    line, _ = refused(str(path))
    where = "clusters[0].cluster.certificate-authority"
    assert line == f"kubeconfig {path}: {where} is int (5), not a file name"


@pytest.mark.parametrize("server", ["ht!tp://x y", "127.0.0.1:6443", "https://", "http://[::1"])
def test_a_server_that_is_no_url_is_one_line_naming_the_key(tmp_path: Path, server: str) -> None:
    """The client would send nothing anywhere, after a FutureWarning from urllib3: the line
    names the key instead of "the cluster never answered"."""
    path = kubeconfig(tmp_path / "kc", server=server)
    line, _ = refused(str(path))
    assert line == (
        f"kubeconfig {path}: clusters[0].cluster.server is '{server}', not an "
        "http(s)://HOST[:PORT] URL"
    )


def test_a_server_of_the_wrong_type_is_one_line(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "kc", cluster={"server": 6443})
    line, _ = refused(str(path))
    assert line == f"kubeconfig {path}: clusters[0].cluster.server is int (6443), not a URL"


def test_the_data_key_wins_over_the_file_as_in_the_client(tmp_path: Path) -> None:
    fifo(tmp_path / "token")
    path = kubeconfig(tmp_path / "kc", user={"token": "inline", "tokenFile": "token"})
    client = api_client(str(path))
    assert client.configuration.api_key["BearerToken"] == "Bearer inline"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
            + "".join(
                f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
                for p, c in zip("abcdefgh", "bcdefghi", strict=True)
            )
            + "users: [{name: u, user: {token: t, extra: *i}}]\n",
            "its YAML aliases (*name) expand it past 64 MiB",
        ),
        (
            "loop: &l [*l]\nusers: [{name: u, user: *l}]\n",
            "its YAML aliases (*name) refer to themselves",
        ),
        ("users: 3\n", "users is int (3), not a list"),
        ("clusters: [{server: x}]\n", "clusters[0] is a map, not a map with a name"),
        ("- a\n", "is not a kubeconfig (a YAML map)"),
    ],
)
def test_a_kubeconfig_of_the_wrong_shape_is_one_line(tmp_path: Path, text: str, said: str) -> None:
    path = tmp_path / "kc"
    path.write_text(text, encoding="utf-8")
    line, took = refused(str(path))
    assert line.startswith(f"kubeconfig {path}") and line.endswith(said), line
    assert took < FAST_S


def two_files(tmp_path: Path) -> tuple[Path, Path]:
    """KUBECONFIG=first:second, in two folders; the first has the cluster and the context, the
    second the user, with a relative tokenFile (read next to the second file)."""
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    first = kubeconfig(tmp_path / "one" / "config", users=False)
    second = kubeconfig(tmp_path / "two" / "config", user={"tokenFile": "token"}, context=False)
    return first, second


def test_every_kubeconfig_listed_is_merged_as_the_client_merges_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = two_files(tmp_path)
    (second.parent / "token").write_text("from-the-second-file", encoding="utf-8")
    monkeypatch.setenv(
        "KUBECONFIG", os.pathsep.join([str(tmp_path / "absent"), str(first), str(second)])
    )
    client = api_client(None)
    assert client.configuration.api_key["BearerToken"] == "Bearer from-the-second-file"


def test_a_fifo_named_by_the_second_kubeconfig_is_named_with_that_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = two_files(tmp_path)
    fifo(second.parent / "token")
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([str(first), str(second)]))
    line, took = refused(None)
    assert line == (
        f"kubeconfig {second}: users[0].user.tokenFile {second.parent / 'token'}: "
        "is a FIFO (named pipe), not a file"
    )
    assert took < FAST_S


def test_a_second_kubeconfig_that_is_a_fifo_is_refused_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = kubeconfig(tmp_path / "kc")
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([str(first), str(fifo(tmp_path / "pipe"))]))
    line, took = refused(None)
    assert line == f"kubeconfig {tmp_path / 'pipe'}: is a FIFO (named pipe), not a file"
    assert took < FAST_S


def test_the_first_file_defining_a_user_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "two").mkdir()
    first = kubeconfig(tmp_path / "kc", user={"token": "first"})
    fifo(tmp_path / "two" / "token")  # the second file's user would block: it is not the one used
    second = kubeconfig(tmp_path / "two" / "kc", user={"tokenFile": "token"})
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([str(first), str(second)]))
    assert api_client(None).configuration.api_key["BearerToken"] == "Bearer first"


def test_the_current_context_is_the_last_file_s_as_in_the_client(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kubernetes/config/kube_config.py, KubeConfigMerger.load_config: each file's
    current-context overwrites the one before."""
    first = kubeconfig(tmp_path / "kc", user={"token": "first"})
    config = yaml.safe_load(first.read_text())
    config["users"].append({"name": "v", "user": {"token": "second"}})
    config["contexts"].append({"name": "y", "context": {"cluster": "c", "user": "v"}})
    first.write_text(yaml.safe_dump(config), encoding="utf-8")
    second = tmp_path / "kc2"
    second.write_text("current-context: y\n", encoding="utf-8")
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([str(first), str(second)]))
    assert api_client(None).configuration.api_key["BearerToken"] == "Bearer second"


def test_a_certificate_path_resolves_next_to_the_cluster_s_file_as_in_the_client(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """KubeConfigLoader._load_cluster_info resolves the user's client-certificate from the
    folder of the file that defines the cluster."""
    first, second = two_files(tmp_path)
    config = yaml.safe_load(second.read_text())
    config["users"][0]["user"] = {"token": "t", "client-certificate": "client.crt"}
    second.write_text(yaml.safe_dump(config), encoding="utf-8")
    (second.parent / "client.crt").write_text("PEM", encoding="utf-8")  # not where it is read
    fifo(first.parent / "client.crt")
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([str(first), str(second)]))
    line, _ = refused(None)
    assert line.startswith(f"kubeconfig {second}: users[0].user.client-certificate {first.parent}")


def test_none_of_the_listed_kubeconfigs_existing_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([str(tmp_path / "a"), str(tmp_path / "b")]))
    line, _ = refused(None)
    assert line == f"none of the KUBECONFIG files exists ({tmp_path / 'a'}, {tmp_path / 'b'})"
