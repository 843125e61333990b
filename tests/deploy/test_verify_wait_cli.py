"""`mlcc verify` against a local Kubernetes API through the real client and a kubeconfig:
`--wait` (the code `pulumi up` runs), request timeouts, and kubeconfig exec plugins."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import stat
import time
from pathlib import Path

import deploy_samples as d
import pytest
import verify_samples as s
from fake_kube_api import TOKEN, Behaviour, FakeKubeApi, Scene
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mlcc.cli.verify import command as verify_cli
from mlcc.deploy.cluster import Cluster
from mlcc.deploy.kubeconfig import AccessError, api_client
from mlcc.deploy.snapshot import Target
from mlcc.deploy.waiter import WaitSettings, failures, wait_for_endpoints

REPO_ROOT = Path(__file__).resolve().parents[2]
TIMINGS = WaitSettings(poll_s=0.05, grace_s=0.1, api_grace_s=0.1)
STACK_FILE = s.stack_file(extra="  hp:endpointName: hp-dev\n")
SERVING = Scene(
    0,
    d.endpoint("DeploymentComplete"),
    [d.pod(ready=True)],
    logs={(d.POD, d.WORKER, False): s.VLLM_EAGLE3_LOG},
)
CRASHING = Scene(
    0,
    d.endpoint("DeploymentInProgress"),
    [d.pod(waiting=("CrashLoopBackOff", "back-off 10s"), terminated=d.crashed(1), restarts=2)],
    logs={(d.POD, d.WORKER, True): d.VLLM_VALUE_ERROR_LOG},
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copy(REPO_ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    (tmp_path / "Pulumi.dev.yaml").write_text(STACK_FILE, encoding="utf-8")
    return tmp_path


def verify(
    project: Path,
    api: FakeKubeApi,
    *argv: str,
    kubeconfig: Path | None = None,
    timings: WaitSettings = TIMINGS,
) -> int:
    parser = argparse.ArgumentParser(prog="mlcc")
    verify_cli.register(parser.add_subparsers(dest="command", required=True))
    path = kubeconfig or api.kubeconfig(project / "kubeconfig")
    args = parser.parse_args(
        ["verify", "--project-dir", str(project), "--kubeconfig", str(path), *argv]
    )
    return verify_cli.run(args, wait_timings=timings)


def test_wait_then_check_a_slowly_starting_endpoint(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenes = [Scene(0, d.endpoint("DeploymentInProgress"), [d.pod()]), SERVING]
    scenes[1] = Scene(0.2, SERVING.endpoint, SERVING.pods, logs=SERVING.logs)
    with FakeKubeApi(scenes) as api:
        assert verify(project, api, "--wait", "--timeout", "0.5") == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[0].startswith("PASS wait: InferenceEndpointConfig inference/hp-dev: ")
    assert lines[0].endswith("speculation on, as configured")
    assert [line.split(":")[0] for line in lines[1:4]] == [
        "PASS endpoint",
        "PASS endpoint env",
        "PASS pods",
    ]
    assert "mlcc verify: InferenceEndpointConfig inference/hp-dev: DeploymentInProgress" in (
        captured.err
    )


def test_wait_fails_with_the_reason_pulumi_up_gives(
    project: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with FakeKubeApi([CRASHING]) as api:
        assert verify(project, api, "--wait") == 1
        cluster = Cluster(api_client(str(api.kubeconfig(tmp_path / "kc2"))), 0.5)
        target = Target("inference", "hp-dev", s.expectation(endpointName="hp-dev"))
        [reason] = failures(wait_for_endpoints(cluster, [target], TIMINGS, lambda *_: None))
    assert capsys.readouterr().out.splitlines() == [f"FAIL wait: {reason}"]
    assert "CrashLoopBackOff" in reason and "ValueError: To serve at least one request" in reason


def test_wait_times_out_with_the_state_reached(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenes = [Scene(0, d.endpoint("DeploymentPending"))]
    started = time.monotonic()
    with FakeKubeApi(scenes) as api:
        # 1.2 s: the wait must read the endpoint before its deadline, also on a loaded machine
        assert verify(project, api, "--wait", "--timeout", "0.02") == 1
    assert 1.2 <= time.monotonic() - started < 30  # the deadline held, not hung
    (line,) = capsys.readouterr().out.splitlines()
    assert line.startswith("FAIL wait: InferenceEndpointConfig inference/hp-dev did not serve")
    assert "DeploymentPending, 0/1 replicas ready" in line


@pytest.mark.parametrize("timeout", ["0", "-1", "nan", "inf", "1e12", "ten", ""])
def test_a_timeout_that_is_no_number_of_minutes_is_a_usage_error(
    project: Path, capsys: pytest.CaptureFixture[str], timeout: str
) -> None:
    with FakeKubeApi([SERVING]) as api, pytest.raises(SystemExit) as exited:
        verify(project, api, "--wait", "--timeout", timeout)
    assert exited.value.code == 2
    assert "--timeout" in capsys.readouterr().err


def test_an_api_server_that_never_answers_ends_verify_within_its_request_timeout(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    started = time.monotonic()
    with FakeKubeApi([SERVING], Behaviour(answer="hang")) as api:
        assert verify(project, api, "--request-timeout", "0.2") == 1
    assert time.monotonic() - started < 20  # the fake holds a request 30 s: the timeout ended it
    (line,) = capsys.readouterr().out.splitlines()
    assert line == (
        "FAIL cluster: cannot read inferenceendpointconfigs/hp-dev in inference: "
        "no answer within 0.2 s"
    )


def test_an_api_server_that_trickles_its_answer_is_given_up_on_too(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each byte comes well within the read timeout (25 times over, also on a loaded machine);
    the answer never completes in time."""
    started = time.monotonic()
    with FakeKubeApi([SERVING], Behaviour(trickle_s=0.02)) as api:
        assert verify(project, api, "--request-timeout", "0.5") == 1
    assert time.monotonic() - started < 20  # the whole answer, a byte per 20 ms, takes over 30 s
    (line,) = capsys.readouterr().out.splitlines()
    assert line == (
        "FAIL cluster: cannot read inferenceendpointconfigs/hp-dev in inference: "
        "no complete answer within 1 s"
    )


def test_verify_without_wait_reads_through_the_real_client(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeKubeApi([SERVING]) as api:
        assert verify(project, api) == 0, capsys.readouterr().out


def plugin(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "get-token"
    script.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def exec_user(command: str) -> dict[str, object]:
    return {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": command,
            "args": ["eks", "get-token", "--cluster-name", "hp"],
        }
    }


def test_a_working_exec_plugin_authenticates(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    credential = (
        '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential",'
        f'"status":{{"token":"{TOKEN}"}}}}'
    )
    script = plugin(tmp_path, f"echo '{credential}'")
    with FakeKubeApi([SERVING]) as api:
        kubeconfig = api.kubeconfig(tmp_path / "kc", user=exec_user(str(script)))
        assert verify(project, api, kubeconfig=kubeconfig) == 0, capsys.readouterr()


def test_a_missing_exec_plugin_is_one_line_naming_it(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeKubeApi([SERVING]) as api:
        kubeconfig = api.kubeconfig(tmp_path / "kc", user=exec_user("aws-cli-that-is-not-here"))
        assert verify(project, api, kubeconfig=kubeconfig) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert "exec plugin `aws-cli-that-is-not-here eks get-token` was not found" in line
    assert api.requests == []


def test_a_failing_exec_plugin_is_one_line_with_its_last_word(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = plugin(
        tmp_path,
        "echo 'usage: aws [options] <command>' >&2\n"
        "echo '' >&2\n"
        "echo 'An error occurred (ExpiredTokenException): The security token included in the "
        "request is expired' >&2\nexit 255",
    )
    with FakeKubeApi([SERVING]) as api:
        kubeconfig = api.kubeconfig(tmp_path / "kc", user=exec_user(str(script)))
        assert verify(project, api, kubeconfig=kubeconfig) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert f"exec plugin `{script} eks get-token` exited 255: An error occurred " in line
    assert "usage: aws" not in line
    assert "aws eks update-kubeconfig" in line


def test_an_exec_plugin_that_hangs_is_given_up_on(tmp_path: Path) -> None:
    script = plugin(tmp_path, "exec sleep 30")
    with FakeKubeApi([SERVING]) as api:
        kubeconfig = api.kubeconfig(tmp_path / "kc", user=exec_user(str(script)))
        started = time.monotonic()
        with pytest.raises(AccessError, match=r"did not finish within 0\.2 s and was stopped"):
            api_client(str(kubeconfig), exec_timeout_s=0.2)
    assert time.monotonic() - started < 20  # the plugin sleeps 30 s: the timeout stopped it


@pytest.mark.parametrize(
    "text",
    ["clusters: 3\n", "- a\n- b\n", "contexts: [1, {name: x}]\nusers: oops\n", ": : :\n"],
)
def test_a_malformed_kubeconfig_is_one_access_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "kc"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(AccessError) as raised:
        api_client(str(path))
    assert "\n" not in str(raised.value)


def test_exec_plugin_path_lookup_uses_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bare command name is looked up on PATH, as the client runs it."""
    script = plugin(tmp_path, "exit 1")
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    with FakeKubeApi([SERVING]) as api:
        kubeconfig = api.kubeconfig(tmp_path / "kc", user=exec_user(script.name))
        with pytest.raises(AccessError, match="exec plugin `get-token eks get-token` exited 1"):
            api_client(str(kubeconfig))


# A failing API is given up on (api_grace_s) long before the timeout (--timeout 0.005: 0.3 s).
HOSTILE_TIMINGS = WaitSettings(poll_s=0.01, grace_s=0.02, api_grace_s=0.02)
HOSTILE_BODIES = st.one_of(
    st.binary(max_size=200),
    st.just(b"\xff\xfe not utf-8 \x80"),
    st.just(b"[" * 5000 + b"]" * 5000),
    st.just(b'{"kind": "Status", "code": ' + b"9" * 5000 + b"}"),
    st.just(b'{"metadata": "x", "status": [1, 2], "spec": "y"}'),
    st.just(b'{"status": {"state": "DeploymentComplete", "selector": 7}}'),
    st.builds(lambda n: b'{"items": ' + json.dumps([{"metadata": n}]).encode() + b"}", st.text()),
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    status=st.sampled_from([200, 201, 204, 301, 400, 401, 403, 404, 409, 429, 500, 502, 503]),
    content_type=st.sampled_from(["application/json", "text/plain", "application/octet-stream"]),
    body=HOSTILE_BODIES,
    wait=st.booleans(),
)
def test_any_answer_of_the_api_ends_verify_with_lines_not_a_traceback(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    status: int,
    content_type: str,
    body: bytes,
    wait: bool,
) -> None:
    with FakeKubeApi([SERVING], Behaviour(raw=(status, content_type, body))) as api:
        started = time.monotonic()
        code = verify(
            project,
            api,
            "--request-timeout",
            "1",
            *(["--wait", "--timeout", "0.005"] if wait else []),
            timings=HOSTILE_TIMINGS,
        )
        elapsed = time.monotonic() - started
    out, err = capsys.readouterr()
    assert code in (0, 1)
    assert elapsed < 10
    assert "Traceback" not in out + err
    lines = out.splitlines()
    assert lines and all(line.startswith(("PASS ", "FAIL ", "  ", "hp-dev:")) for line in lines)
