"""A copied s3:// head end to end, through the real Kubernetes client and a local API
(fake_kube_api.py): what `mlcc verify` prints for it and how the deploy wait ends."""

from __future__ import annotations

import argparse
import shutil
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import copied_head_samples as h
import deploy_samples as d
import pytest
import verify_samples as s
from fake_kube_api import NAMESPACE, Behaviour, FakeKubeApi, Scene, status_body
from wait_stories import AT_ONCE_S, PATIENT, run_story

from mlcc.cli.verify import command as verify_cli
from mlcc.deploy import draft_head

REPO_ROOT = Path(__file__).resolve().parents[2]
STACK_FILE = s.stack_file(h.HEAD)
ETAG = 'config.json ETag "0123abcd", version id none, last modified 2026-12-06T12:00:00+00:00'
COPY_LOG_PATH = f"/api/v1/namespaces/{NAMESPACE}/pods/{d.POD}/log"


def scene(at: float = 0, **logs: object) -> Scene:
    return Scene(at, h.endpoint(), [h.pod()], logs=h.logs(**logs))  # type: ignore[arg-type]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copy(REPO_ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    (tmp_path / "Pulumi.dev.yaml").write_text(STACK_FILE, encoding="utf-8")
    return tmp_path


def verify(api: FakeKubeApi, project: Path) -> int:
    parser = argparse.ArgumentParser(prog="mlcc")
    verify_cli.register(parser.add_subparsers(dest="command", required=True))
    kubeconfig = api.kubeconfig(project / "kubeconfig")
    argv = ["verify", "--project-dir", str(project), "--kubeconfig", str(kubeconfig)]
    return verify_cli.run(parser.parse_args(argv))


def copy_reads(api: FakeKubeApi) -> list[dict[str, str]]:
    found = [urlparse(r) for r in api.requests]
    queries = [{k: v[-1] for k, v in parse_qs(u.query).items()} for u in found]
    return [q for u, q in zip(found, queries, strict=True) if q.get("container") == h.COPY]


def test_verify_prints_the_object_that_runs(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeKubeApi([scene()]) as api:
        assert verify(api, project) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        "PASS endpoint",
        "PASS endpoint env",
        "PASS pods",
        f"PASS pod {d.POD} env",
        f"PASS pod {d.POD} engine log",
        f"PASS pod {d.POD} acceptance",
        f"PASS pod {d.POD} draft source",
    ]
    assert lines[4].endswith(f"model={h.COPY_PATH}, num_spec_tokens=5")
    assert lines[6] == f"PASS pod {d.POD} draft source: mlcc-draft-copy copied {h.HEAD} ({ETAG})"
    tail, limit = str(draft_head.LOG_TAIL_LINES), str(draft_head.LOG_LIMIT_BYTES)
    assert copy_reads(api) == [{"container": h.COPY, "tailLines": tail, "limitBytes": limit}]


def test_verify_fails_a_pod_that_copied_another_head(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeKubeApi([scene(copied=h.OLD_HEAD)]) as api:
        assert verify(api, project) == 1
    [line] = [x for x in capsys.readouterr().out.splitlines() if "draft source" in x]
    assert line.startswith(f"FAIL pod {d.POD} draft source: mlcc-draft-copy copied {h.OLD_HEAD} ")


def test_verify_keeps_the_engine_log_check_of_the_copied_path(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeKubeApi([scene(draft=s.EAGLE3_DRAFT)]) as api:
        assert verify(api, project) == 1
    out = capsys.readouterr().out
    assert (
        f"FAIL pod {d.POD} engine log: the engine loaded draft {s.EAGLE3_DRAFT}, not the copied "
        f"head at {h.COPY_PATH}: " in out
    )
    assert f"PASS pod {d.POD} draft source: " in out  # the copy itself was the stack's


def test_verify_says_why_a_gone_copy_log_was_not_checked(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeKubeApi([scene(copied=None)]) as api:  # the fake answers 400: no such log
        assert verify(api, project) == 0
    [line] = [x for x in capsys.readouterr().out.splitlines() if "draft source" in x]
    assert line.startswith(
        f"SKIP pod {d.POD} draft source: not checked: the log of init container mlcc-draft-copy "
        "could not be read: 400 Bad Request: "
    )


# --- the deploy wait -----------------------------------------------------------------------


def test_the_wait_serves_a_copied_head_and_names_it(tmp_path: Path) -> None:
    starting = Scene(0, h.endpoint("DeploymentInProgress"), [h.pod(ready=False)])
    outcome, lines, _, api = run_story(tmp_path, [starting, scene(0.3)], target=h.TARGET)
    assert outcome.serving, outcome.message
    assert outcome.message.endswith(f"as configured; copied head {h.HEAD} ({ETAG})")
    assert "0/1 replicas ready" in lines[0]
    assert len(copy_reads(api)) == 1  # not before the pod was ready


def test_the_wait_fails_at_once_when_the_copy_names_another_head(tmp_path: Path) -> None:
    story = [scene(copied=h.OLD_HEAD)]
    outcome, _, elapsed, _ = run_story(tmp_path, story, settings=PATIENT, target=h.TARGET)
    assert not outcome.serving
    assert f"mlcc-draft-copy copied {h.OLD_HEAD} ({ETAG}), not the stack's {h.HEAD}; " in (
        outcome.message
    )
    assert elapsed < AT_ONCE_S


def test_the_wait_fails_at_once_when_the_engine_loaded_another_draft(tmp_path: Path) -> None:
    story = [scene(draft=s.EAGLE3_DRAFT)]
    outcome, _, elapsed, _ = run_story(tmp_path, story, settings=PATIENT, target=h.TARGET)
    assert not outcome.serving
    assert (
        f"pod {d.POD}: the engine loaded draft {s.EAGLE3_DRAFT}, not the copied head at "
        f"{h.COPY_PATH}: " in outcome.message
    )
    assert elapsed < AT_ONCE_S


def refuse_copy_logs(
    handler: BaseHTTPRequestHandler, path: str, query: dict[str, str], _index: int
) -> bool:
    """403 to the copy's log only (an RBAC rule narrower than the worker's)."""
    if path != COPY_LOG_PATH or query.get("container") != h.COPY:
        return False
    body = status_body(403, "Forbidden", 'pods "log" is forbidden for container mlcc-draft-copy')
    handler.send_response(403)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)
    return True


def test_an_unreadable_copy_log_does_not_fail_the_wait_and_is_said_once(tmp_path: Path) -> None:
    behaviour = Behaviour(custom=refuse_copy_logs)
    outcome, lines, _, _ = run_story(tmp_path, [scene()], behaviour, target=h.TARGET)
    assert outcome.serving, outcome.message
    said = [x for x in lines if "source not checked" in x]
    assert said == [outcome.message]
    assert outcome.message.endswith(
        f"as configured; the copied head's source not checked (pod {d.POD}: 403 Forbidden: "
        'pods "log" is forbidden for container mlcc-draft-copy)'
    )
