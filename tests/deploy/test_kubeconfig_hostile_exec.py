"""A kubeconfig's exec plugin that hangs, forks, floods or answers wrongly: real processes run
by `api_client` (and, at a token refresh, by a request of mlcc.deploy.cluster), each outcome one
AccessError line naming the plugin, within the plugin's deadline, with nothing left running."""

from __future__ import annotations

import datetime
import json
import time
import tracemalloc
from pathlib import Path

import deploy_samples as d
import pytest
import verify_samples as s
from fake_kube_api import NAMESPACE, TOKEN, FakeKubeApi, Scene
from hypothesis import given
from hypothesis import strategies as st
from kube_plugins import credential, exec_user, gone, kubeconfig, pids, plugin
from kubernetes.config.dateutil import parse_rfc3339

from mlcc.deploy.cluster import ApiError, Cluster
from mlcc.deploy.kubeconfig import AccessError, api_client
from mlcc.deploy.kubeconfig.exec_plugin import checked_status
from mlcc.deploy.snapshot import Target
from mlcc.deploy.waiter import WaitSettings, wait_for_endpoints

SERVING = Scene(0, d.endpoint("DeploymentComplete"))
DEADLINE_S = 0.5  # for the plugins that hang
ANSWER_S = 20.0  # for those that answer (a Python start on a loaded machine)
# The deadline, the process group's kill, a machine ten times slower; far under the 60 s the
# hanging plugins sleep, so that ending within it proves they were stopped.
ON_TIME_S = DEADLINE_S + 20.0


@pytest.fixture(autouse=True, scope="module")
def _client_imported() -> None:
    """`api_client` imports the kubernetes client the first time: not what is timed here."""
    import kubernetes.client  # noqa: F401

    import mlcc.deploy.kubeconfig.loader  # noqa: F401


def load_error(
    tmp_path: Path, body: str, deadline_s: float = ANSWER_S, **exec_more: object
) -> tuple[str, float]:
    """The AccessError line of a kubeconfig whose plugin runs `body`, and how long it took."""
    script = plugin(tmp_path, body)
    path = kubeconfig(tmp_path / "kc", user=exec_user(script, **exec_more))
    started = time.monotonic()
    with pytest.raises(AccessError) as raised:
        api_client(str(path), exec_timeout_s=deadline_s)
    line = str(raised.value)
    assert "\n" not in line and len(line) < 600, line
    assert f"the kubeconfig's exec plugin `{script}" in line, line
    return line, time.monotonic() - started


def test_a_plugin_that_hangs_is_stopped_with_its_whole_process_group(tmp_path: Path) -> None:
    line, took = load_error(
        tmp_path,
        f"""
        child = os.fork()
        if child == 0:
            time.sleep(60)
            os._exit(0)
        open({str(tmp_path / "child.pid")!r}, "w").write(str(child))
        open({str(tmp_path / "plugin.pid")!r}, "w").write(str(os.getpid()))
        sys.stderr.write("waiting for the token service\\n")
        sys.stderr.flush()
        time.sleep(60)
        """,
        DEADLINE_S,
    )
    assert line.endswith(
        "did not finish within 0.5 s and was stopped (its last words: waiting for the token "
        "service)"
    )
    assert DEADLINE_S <= took < ON_TIME_S
    assert len(pids(tmp_path)) == 2 and all(gone(pid) for pid in pids(tmp_path))


def test_a_plugin_that_closes_its_pipes_and_runs_on_is_stopped(tmp_path: Path) -> None:
    line, took = load_error(
        tmp_path,
        f"""
        open({str(tmp_path / "plugin.pid")!r}, "w").write(str(os.getpid()))
        os.close(1)
        os.close(2)
        time.sleep(60)
        """,
        DEADLINE_S,
    )
    assert line.endswith("did not finish within 0.5 s and was stopped")
    assert took < ON_TIME_S and all(gone(pid) for pid in pids(tmp_path))


def test_a_child_that_keeps_stdout_open_does_not_hold_the_answer(tmp_path: Path) -> None:
    """The plugin answers and exits; a child it forked keeps its stdout open: the answer is
    used after a short linger, long before the deadline, and the child is stopped."""
    script = plugin(
        tmp_path,
        f"""
        {credential({"token": "from-the-plugin"})}
        sys.stdout.flush()
        child = os.fork()
        if child == 0:
            time.sleep(60)
            os._exit(0)
        open({str(tmp_path / "child.pid")!r}, "w").write(str(child))
        """,
    )
    path = kubeconfig(tmp_path / "kc", user=exec_user(script))
    started = time.monotonic()
    client = api_client(str(path), exec_timeout_s=60.0)
    assert time.monotonic() - started < ANSWER_S  # long before the 60 s deadline
    assert client.configuration.api_key["BearerToken"] == "Bearer from-the-plugin"
    assert len(pids(tmp_path)) == 1 and gone(pids(tmp_path)[0])


def test_a_plugin_printing_gigabytes_is_stopped_after_the_first_mebibyte(tmp_path: Path) -> None:
    counted = tmp_path / "written"
    body = f"""
        chunk = b"x" * 65536
        written = 0
        while written < 64 * 1024 * 1024:
            written += os.write(1, chunk)
            with open({str(counted)!r}, "a") as count:
                count.write(f"{{written}}\\n")
        """
    tracemalloc.start()
    try:
        line, took = load_error(tmp_path, body)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert line.endswith("printed more than 1 MiB (an ExecCredential is a few KiB) and was stopped")
    written = max(int(count) for count in counted.read_text().split())
    assert 1024 * 1024 <= written < 4 * 1024 * 1024, written  # the cap, a pipe's buffer, a chunk
    assert peak < 8 * 1024 * 1024, peak
    assert took < ON_TIME_S


def test_an_exit_with_ten_mebibytes_of_stderr_shows_its_last_line(tmp_path: Path) -> None:
    line, _ = load_error(
        tmp_path,
        """
        sys.stderr.write("usage: aws [options]\\n" * (10 * 1024 * 1024 // 21))
        sys.stderr.write("An error occurred (AccessDeniedException): not authorized\\n")
        sys.exit(3)
        """,
    )
    assert line.endswith("exited 3: An error occurred (AccessDeniedException): not authorized")


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("print('Enter MFA code:')", "printed no ExecCredential (not JSON: Expecting value"),
        ("pass", "printed no ExecCredential (not JSON: Expecting value"),
        ("sys.stdout.buffer.write(b'\\xff\\xfe\\x00garbage')", "printed no ExecCredential"),
        ("print('[' * 200000)", "printed no ExecCredential (not JSON: nested too deeply)"),
        ("print('{\"a\": ' + '9' * 5000 + '}')", "printed no ExecCredential (not JSON:"),
        ("print('[1, 2]')", "printed a list, not an ExecCredential"),
        ("print(json.dumps({'kind': 'ExecCredential', 'status': {}}))", "without `apiVersion`"),
        (
            credential({"token": "t"}, "client.authentication.k8s.io/v1alpha1"),
            "answered apiVersion client.authentication.k8s.io/v1alpha1, not the kubeconfig's "
            "exec.apiVersion client.authentication.k8s.io/v1beta1",
        ),
        (credential([]), "printed an ExecCredential whose status is a list"),
        (credential("token"), "printed an ExecCredential whose status is text ('token')"),
        (credential({"token": 5}), "printed status.token that is int (5), not text"),
        (credential({"token": ""}), "printed an empty status.token"),
        (
            credential({"token": "a\r\nX-Injected: 1"}),
            "status.token with characters other than ASCII text",
        ),
        (credential({"clientCertificateData": "PEM"}), "without clientKeyData"),
        (
            credential({"clientCertificateData": ["PEM"], "clientKeyData": "k"}),
            "status.clientCertificateData that is a list, not text",
        ),
        (credential({}), "with neither status.token nor status.clientCertificateData"),
        (
            credential({"token": "t", "expirationTimestamp": "tomorrow"}),
            "status.expirationTimestamp 'tomorrow', not an RFC 3339 time",
        ),
        (
            credential({"token": "t", "expirationTimestamp": "2026-13-45T99:99:99Z"}),
            "not an RFC 3339 time",
        ),
        (
            credential({"token": "t", "expirationTimestamp": 1700000000}),
            "status.expirationTimestamp that is int (1700000000), not text",
        ),
        ("os.kill(os.getpid(), 15)", "was killed by SIGTERM"),
        ("sys.exit(4)", "exited 4"),
    ],
)
def test_a_wrong_answer_is_one_line_naming_the_plugin(tmp_path: Path, body: str, said: str) -> None:
    line, _ = load_error(tmp_path, body)
    assert said in line, line


@pytest.mark.parametrize(
    ("exec_more", "said"),
    [
        ({"args": ["eks", "get-token", 5]}, "exec.args is a list, not a list of text"),
        ({"args": "eks get-token"}, "exec.args is text ('eks get-token'), not a list of text"),
        ({"env": [{"name": "AWS_PROFILE"}]}, "exec.env holds a map, not a `name` and `value`"),
        ({"env": "AWS_PROFILE=x"}, "exec.env holds text ('AWS_PROFILE=x')"),
        ({"apiVersion": None}, "exec.apiVersion is null, not text"),
    ],
)
def test_an_exec_entry_of_the_wrong_shape_is_one_line(
    tmp_path: Path, exec_more: dict[str, object], said: str
) -> None:
    line, _ = load_error(tmp_path, f"open({str(tmp_path / 'ran')!r}, 'w')", **exec_more)
    assert said in line, line
    assert not (tmp_path / "ran").exists()


def test_the_plugin_gets_the_client_s_exec_info(tmp_path: Path) -> None:
    """KUBERNETES_EXEC_INFO as the client's ExecProvider.run builds it, with provideClusterInfo:
    the cluster's entry and its exec extension as `config` (a YAML date in it shown as text)."""
    seen = tmp_path / "info.json"
    script = plugin(
        tmp_path,
        f"""
        open({str(seen)!r}, "w").write(os.environ["KUBERNETES_EXEC_INFO"])
        {credential({"token": "t"})}
        """,
    )
    extension = {"name": "client.authentication.k8s.io/exec", "extension": {"audience": "a"}}
    cluster = {"extensions": ["odd", extension], "created": datetime.date(2026, 1, 2)}
    path = kubeconfig(
        tmp_path / "kc", user=exec_user(script, provideClusterInfo=True), cluster=cluster
    )
    assert api_client(str(path)).configuration.api_key["BearerToken"] == "Bearer t"
    info = json.loads(seen.read_text())
    assert info["apiVersion"] == "client.authentication.k8s.io/v1beta1"
    assert info["kind"] == "ExecCredential" and info["spec"]["interactive"] is False
    assert info["spec"]["cluster"]["config"] == {"audience": "a"}
    assert info["spec"]["cluster"]["created"] == "2026-01-02"


def test_a_plugin_that_cannot_be_run_is_one_line(tmp_path: Path) -> None:
    script = plugin(tmp_path, "pass")
    script.chmod(0o644)
    path = kubeconfig(tmp_path / "kc", user=exec_user(script))
    with pytest.raises(AccessError, match=r"eks get-token` cannot be run: permission denied$"):
        api_client(str(path))
    path = kubeconfig(tmp_path / "kc", user=exec_user(tmp_path / "absent"))
    with pytest.raises(AccessError, match=r"get-token` was not found: install .*/absent \("):
        api_client(str(path))


def refreshing_plugin(tmp_path: Path, second_run: str) -> Path:
    """A plugin that answers at once with a token expiring within the client's 5 minutes of
    skew (kubernetes/config/kube_config.py, EXPIRY_SKEW_PREVENTION_DELAY), so the first request
    runs it again; then it runs `second_run`."""
    soon = datetime.datetime.now(datetime.UTC) + datetime.timedelta(minutes=1)
    status = {"token": TOKEN, "expirationTimestamp": soon.strftime("%Y-%m-%dT%H:%M:%SZ")}
    runs = tmp_path / "runs"
    return plugin(
        tmp_path,
        f"""
        runs = {str(runs)!r}
        count = int(open(runs).read()) if os.path.exists(runs) else 0
        open(runs, "w").write(str(count + 1))
        if count == 0:
            {credential(status)}
            sys.exit(0)
        open({str(tmp_path / "refresh.pid")!r}, "w").write(str(os.getpid()))
        {second_run}
        """,
    )


def test_a_token_refresh_runs_the_plugin_again(tmp_path: Path) -> None:
    script = refreshing_plugin(tmp_path, credential({"token": TOKEN}))
    with FakeKubeApi([SERVING]) as api:
        cluster = Cluster(api_client(str(api.kubeconfig(tmp_path / "kc", user=exec_user(script)))))
        assert cluster.endpoint(NAMESPACE, "hp-dev") == api.endpoint(0)
    assert (tmp_path / "runs").read_text() == "2"  # the fake API answers only with its token


def test_a_token_refresh_that_hangs_ends_the_request_in_one_line(tmp_path: Path) -> None:
    script = refreshing_plugin(tmp_path, "time.sleep(60)")
    with FakeKubeApi([SERVING]) as api:
        path = api.kubeconfig(tmp_path / "kc", user=exec_user(script))
        cluster = Cluster(api_client(str(path), exec_timeout_s=DEADLINE_S), 5.0)
        started = time.monotonic()
        with pytest.raises(ApiError) as raised:
            cluster.endpoint(NAMESPACE, "hp-dev")
        took = time.monotonic() - started
        requests = list(api.requests)
    assert str(raised.value) == (
        f"cannot read inferenceendpointconfigs/hp-dev in {NAMESPACE}: the kubeconfig's exec "
        f"plugin `{script} eks get-token` did not finish within 0.5 s and was stopped"
    )
    assert raised.value.permanent  # not retried as if the API were failing
    assert DEADLINE_S <= took < ON_TIME_S and requests == []  # the expired token was not sent
    assert gone(pids(tmp_path)[0])


def test_the_deploy_wait_ends_at_once_on_a_refresh_that_fails(tmp_path: Path) -> None:
    script = refreshing_plugin(tmp_path, "sys.stderr.write('ExpiredToken\\n'); sys.exit(255)")
    settings = WaitSettings(timeout_s=60.0, poll_s=0.05, grace_s=30.0, api_grace_s=30.0)
    target = Target(NAMESPACE, "hp-dev", s.expectation(endpointName="hp-dev"))
    with FakeKubeApi([SERVING]) as api:
        path = api.kubeconfig(tmp_path / "kc", user=exec_user(script))
        cluster = Cluster(api_client(str(path), exec_timeout_s=DEADLINE_S), 5.0)
        started = time.monotonic()
        [outcome] = wait_for_endpoints(cluster, [target], settings, lambda *_: None)
    assert time.monotonic() - started < ON_TIME_S
    assert not outcome.serving
    assert outcome.message.endswith(f"`{script} eks get-token` exited 255: ExpiredToken")
    assert "\n" not in outcome.message


STATUS_KEYS = st.sampled_from(
    ["token", "clientCertificateData", "clientKeyData", "expirationTimestamp", "other"]
)
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=30)
    | st.sampled_from(["2026-01-02T03:04:05Z", "2026-02-30T00:00:00Z", "", "\x00\n", "tök\xa0"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(STATUS_KEYS, inner, max_size=4),
    max_leaves=8,
)


@given(status=JSON_VALUES | st.dictionaries(STATUS_KEYS, JSON_VALUES, max_size=4))
def test_any_status_is_taken_typed_or_refused_in_one_line(status: object) -> None:
    """What the client's loader then reads of it (kube_config.py, _load_from_exec_plugin) is
    text of the right form, or the plugin is named in one line."""
    label = "the kubeconfig's exec plugin `aws eks get-token`"
    try:
        checked = checked_status(status, label)
    except AccessError as refused:
        assert str(refused).startswith(f"{label} printed ") and "\n" not in str(refused)
        return
    if "token" in checked:
        assert isinstance(checked["token"], str) and checked["token"].isascii()
        assert checked["token"].isprintable()
    else:
        assert isinstance(checked["clientCertificateData"], str)
        assert isinstance(checked["clientKeyData"], str)
    if "expirationTimestamp" in checked:
        assert parse_rfc3339(checked["expirationTimestamp"]).year >= 1
