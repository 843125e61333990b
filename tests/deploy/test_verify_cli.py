"""`mlcc verify` end to end, through the real Kubernetes client and the bounded reads of
mlcc/deploy/cluster.py, against a local Kubernetes API (fake_kube_api.py)."""

from __future__ import annotations

import argparse
import shutil
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import deploy_samples as d
import pytest
import verify_samples as s
import yaml
from fake_kube_api import NAMESPACE, Behaviour, FakeKubeApi, Scene, status_body
from hostile_kube import send
from prometheus_fake import Answer, vector

from mlcc.cli.verify import command as verify_cli
from mlcc.deploy.cluster import LOG_LIMIT_BYTES, PAGE_SIZE
from mlcc.facts.operator import GROUP, PLURAL, VERSION

REPO_ROOT = Path(__file__).resolve().parents[2]
POD = "hp-dev-7c9f8d-x2k4q"

STACK_FILE = s.stack_file(
    extra="  hp:engineArgs:\n    max-model-len: 8192\n  hp:hfToken:\n"
    "    secure: v1:Zm9vYmFy:c2VjcmV0LXRva2VuLWNpcGhlcnRleHQ=\n"
)


def healthy_scene(log: str = s.VLLM_EAGLE3_LOG) -> Scene:
    env = s.rendered_env()
    return Scene(0, s.endpoint(env), [s.pod(POD, env)], logs={(POD, "model", False): log})


def paths(api: FakeKubeApi) -> list[tuple[str, dict[str, str]]]:
    """The requests the API got: each path and its query."""
    found = [urlparse(r) for r in api.requests]
    return [(u.path, {k: v[-1] for k, v in parse_qs(u.query).items()}) for u in found]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copy(REPO_ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    (tmp_path / "Pulumi.dev.yaml").write_text(STACK_FILE, encoding="utf-8")
    return tmp_path


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="mlcc")
    verify_cli.register(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(["verify", *argv])


def run(api: FakeKubeApi, project: Path, *argv: str, kubeconfig: Path | None = None) -> int:
    """`mlcc verify` through the real client and a kubeconfig naming the local API."""
    path = kubeconfig or api.kubeconfig(project / "kubeconfig")
    return verify_cli.run(parse("--project-dir", str(project), "--kubeconfig", str(path), *argv))


ENDPOINT_PATH = f"/apis/{GROUP}/{VERSION}/namespaces/{NAMESPACE}/{PLURAL}/hp-dev"


def test_a_healthy_endpoint_prints_pass_lines_and_exits_0(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeKubeApi([healthy_scene()]) as api:
        assert run(api, project) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        "PASS endpoint",
        "PASS endpoint env",
        "PASS pods",
        f"PASS pod {POD} env",
        f"PASS pod {POD} engine log",
        f"PASS pod {POD} acceptance",
    ]
    assert lines[4].endswith(
        f"speculation is on: method=eagle3, model={s.EAGLE3_DRAFT}, num_spec_tokens=5"
    )


def test_the_cluster_is_asked_for_the_stacks_endpoint_its_pods_and_the_worker_log(
    project: Path,
) -> None:
    with FakeKubeApi([healthy_scene()]) as api:
        assert run(api, project, "--stack", "dev") == 0
    assert paths(api) == [
        (ENDPOINT_PATH, {}),
        (
            f"/api/v1/namespaces/{NAMESPACE}/pods",
            {"labelSelector": "app=hp-dev", "limit": str(PAGE_SIZE)},
        ),
        (
            f"/api/v1/namespaces/{NAMESPACE}/pods/{POD}/log",
            {"container": "model", "previous": "false", "limitBytes": str(LOG_LIMIT_BYTES)},
        ),
    ]


def kubeconfig_elsewhere(api: FakeKubeApi, project: Path) -> Path:
    """The fake's kubeconfig (context `fake`), whose current context is `hp`: a server nobody
    listens on."""
    kubeconfig = api.kubeconfig(project / "kubeconfig")
    config = yaml.safe_load(kubeconfig.read_text())
    config["clusters"].append({"name": "gone", "cluster": {"server": "http://127.0.0.1:9"}})
    config["contexts"].append({"name": "hp", "context": {"cluster": "gone", "user": "fake"}})
    config["current-context"] = "hp"
    kubeconfig.write_text(yaml.safe_dump(config), encoding="utf-8")
    return kubeconfig


def test_the_kubeconfig_context_chosen_is_the_one_used(project: Path) -> None:
    with FakeKubeApi([healthy_scene()]) as api:
        # The current context names a server nobody listens on; --context picks the fake's.
        kubeconfig = kubeconfig_elsewhere(api, project)
        assert run(api, project, "--context", "fake", kubeconfig=kubeconfig) == 0
        assert run(api, project, "--request-timeout", "2", kubeconfig=kubeconfig) == 1
    assert [path for path, _ in paths(api)].count(ENDPOINT_PATH) == 1


def test_a_kubernetes_only_stack_is_verified_on_its_own_kubeconfig_and_context(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --kubeconfig, the cluster `pulumi up` deployed to: hp:kubeconfig, hp:kubeContext."""
    with FakeKubeApi([healthy_scene()]) as api:
        kubeconfig = kubeconfig_elsewhere(api, project)
        stack = STACK_FILE.replace("  aws:region: us-east-1\n  aws-native:region: us-east-1\n", "")
        stack += f"  hp:kubeconfig: {kubeconfig}\n  hp:kubeContext: fake\n"
        (project / "Pulumi.dev.yaml").write_text(stack, encoding="utf-8")
        assert verify_cli.run(parse("--project-dir", str(project))) == 0
        unknown_context = stack.replace("kubeContext: fake", "kubeContext: x")
        (project / "Pulumi.dev.yaml").write_text(unknown_context, encoding="utf-8")
        assert verify_cli.run(parse("--project-dir", str(project))) == 1
    error = capsys.readouterr().err
    assert "check hp:kubeconfig and hp:kubeContext" in error
    assert "aws eks update-kubeconfig" not in error


def test_namespace_overrides_the_stack_and_endpoint_picks_one_of_its_endpoints(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeKubeApi([healthy_scene()]) as api:
        assert run(api, project, "--namespace", "serving", "--endpoint", "hp-dev") == 1
        assert paths(api)[0][0] == f"/apis/{GROUP}/{VERSION}/namespaces/serving/{PLURAL}/hp-dev"
        assert "FAIL endpoint: InferenceEndpointConfig serving/hp-dev not found" in (
            capsys.readouterr().out
        )
        assert run(api, project, "--endpoint", "llama-eagle3") == 2
    assert "no endpoint 'llama-eagle3'; choose one of: hp-dev" in capsys.readouterr().err


def test_every_endpoint_of_the_stack_is_verified_under_its_name(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stack = (project / "Pulumi.dev.yaml").read_text()
    entries = "  hp:endpoints:\n    - name: hp-dev\n      baseline: true\n"
    (project / "Pulumi.dev.yaml").write_text(stack + entries, encoding="utf-8")
    with FakeKubeApi([healthy_scene()]) as api:
        assert run(api, project) == 1  # the twin was not applied
    out = capsys.readouterr().out
    assert out.startswith("hp-dev:\n  PASS ")
    assert "\nhp-dev-baseline:\n  FAIL endpoint: " in out
    assert (ENDPOINT_PATH + "-baseline", {}) in paths(api)


def test_speculation_silently_off_exits_1_with_a_fail_line(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeKubeApi([healthy_scene(s.VLLM_SPECULATION_OFF_LOG)]) as api:
        assert run(api, project) == 1
    out = capsys.readouterr().out
    assert f"FAIL pod {POD} engine log: speculative_config=None: speculation is OFF" in out
    assert "PASS endpoint env:" in out


def test_a_missing_endpoint_exits_1_after_one_line(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeKubeApi([Scene(0, None)]) as api:
        assert run(api, project) == 1
    assert capsys.readouterr().out == (
        "FAIL endpoint: InferenceEndpointConfig inference/hp-dev not found "
        "(was `pulumi up` run for this stack?)\n"
    )
    assert paths(api) == [(ENDPOINT_PATH, {})]


def test_a_refused_read_is_a_fail_line_not_a_traceback(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def forbidden(h: BaseHTTPRequestHandler, _p: str, _q: dict[str, str], _i: int) -> bool:
        send(h, 403, status_body(403, "Forbidden", "Forbidden"))
        return True

    with FakeKubeApi([healthy_scene()], Behaviour(custom=forbidden)) as api:
        assert run(api, project) == 1
    assert capsys.readouterr().out == (
        f"FAIL cluster: cannot read {PLURAL}/hp-dev in inference: 403 Forbidden\n"
    )


def test_an_unreadable_log_is_reported(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scene = healthy_scene()
    scene.logs.clear()
    with FakeKubeApi([scene]) as api:
        assert run(api, project) == 1
    assert f"FAIL pod {POD} engine log: the log could not be read: 400 Bad Request" in (
        capsys.readouterr().out
    )


def test_without_a_selector_pods_are_found_by_name(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scene = healthy_scene()
    assert scene.endpoint is not None
    del scene.endpoint["status"]["selector"]
    unrelated = s.pod("unrelated-5d8c-abcde", [])
    unrelated["metadata"]["labels"] = {"app": "unrelated"}
    with FakeKubeApi([Scene(0, scene.endpoint, [*scene.pods, unrelated], logs=scene.logs)]) as api:
        assert run(api, project) == 0
    assert (f"/api/v1/namespaces/{NAMESPACE}/pods", {"limit": str(PAGE_SIZE)}) in paths(api)
    assert (
        "PASS pods: 1 selected by label app=hp-dev or Deployment hp-dev's pod names"
        in capsys.readouterr().out
    )


def test_two_stacks_and_no_choice_is_a_usage_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "Pulumi.prod.yaml").write_text(STACK_FILE, encoding="utf-8")
    with FakeKubeApi([healthy_scene()]) as api:
        assert run(api, project) == 2
    assert capsys.readouterr().err == (
        "mlcc verify: error: choose a stack with --stack (dev, prod)\n"
    )
    assert api.requests == []


def test_an_unknown_stack_is_a_usage_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeKubeApi([healthy_scene()]) as api:
        assert run(api, project, "--stack", "staging") == 2
    assert "no stack file Pulumi.staging.yaml; stacks here: dev" in capsys.readouterr().err


def test_an_invalid_stack_config_exits_1_naming_the_key(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "Pulumi.dev.yaml").write_text(
        STACK_FILE.replace("hp:speculativeAlgorithm: eagle3", "hp:speculativeAlgorithm: eagle4"),
        encoding="utf-8",
    )
    with FakeKubeApi([healthy_scene()]) as api:
        assert run(api, project) == 1
    assert capsys.readouterr().err.startswith(
        "error: hp:speculativeAlgorithm: unknown algorithm 'eagle4'"
    )
    assert api.requests == []


def test_an_unknown_flag_is_argparses_usage_error() -> None:
    with pytest.raises(SystemExit) as exit_info:
        parse("--bogus")
    assert exit_info.value.code == 2


def test_unusable_kube_access_exits_1_naming_the_path_and_the_fix(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = project / "no-such-kubeconfig"
    assert verify_cli.run(parse("--project-dir", str(project), "--kubeconfig", str(missing))) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(
        f"mlcc verify: error: cannot configure Kubernetes access from kubeconfig {missing}:"
    )
    assert line.endswith(
        'write it with: aws eks update-kubeconfig --name "$(pulumi stack output eksClusterName '
        f'--stack dev)" --region us-east-1 --kubeconfig {missing}'
    )


def test_an_unreadable_default_kubeconfig_is_named_too(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = project / "broken-kubeconfig"
    broken.write_text("apiVersion: v1\nkind: Config\nclusters: 3\n", encoding="utf-8")
    monkeypatch.setenv("KUBECONFIG", str(broken))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    assert verify_cli.run(parse("--project-dir", str(project))) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert f"from kubeconfig {broken}: " in line
    assert "aws eks update-kubeconfig" in line and "--kubeconfig" not in line


def test_live_figures_join_the_checks_and_a_floor_above_them_fails_the_run(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from prometheus_fake import PrometheusFake
    from test_live_hostile import healthy

    fake = PrometheusFake(healthy).start()
    try:
        with FakeKubeApi([healthy_scene()]) as api:
            assert run(api, project, "--prometheus", fake.url) == 0
            assert capsys.readouterr().out.splitlines()[-1] == (
                "PASS live: acceptance 60.0%, mean accepted length 2.80, 40.0 output tokens/s over "
                f"the last 5 min (Prometheus {fake.url})"
            )
            floor = ("--acceptance-floor", "0.75", "--window-minutes", "2")
            assert run(api, project, "--prometheus", fake.url, *floor) == 1
            last = capsys.readouterr().out.splitlines()[-1]
            assert last.startswith("FAIL live: acceptance 60.0%")
            assert last.endswith(
                f"below the floor 75% (--acceptance-floor) (Prometheus {fake.url})"
            )
            window = ("[120s]", "offset 120s")
            for query in fake.queries[-5:]:
                assert 'namespace="inference",pod=~"hp-dev-' in query
                assert any(w in query for w in window), query
    finally:
        fake.stop()


def collapsed(query: str, at: float) -> Answer:
    """vLLM's figures at 2% acceptance: 6 of 300 drafted tokens accepted."""
    from test_live_hostile import healthy

    if "accepted_tokens" in query and "offset" not in query:
        return vector("6", at)
    return healthy(query, at)


@pytest.mark.parametrize(
    ("observability", "floor"),
    [("", "30%"), ("  hp:observability: {target: file, acceptanceFloor: 0.05}\n", "5%")],
)
def test_without_acceptance_floor_the_stack_s_floor_fails_a_collapsed_endpoint(
    project: Path, capsys: pytest.CaptureFixture[str], observability: str, floor: str
) -> None:
    """The alert rules' floor (hp:observability acceptanceFloor, 0.3 unless set) is verify's
    default: 2% acceptance is a FAIL naming the key to change."""
    from prometheus_fake import PrometheusFake

    (project / "Pulumi.dev.yaml").write_text(STACK_FILE + observability, encoding="utf-8")
    fake = PrometheusFake(collapsed).start()
    try:
        with FakeKubeApi([healthy_scene()]) as api:
            assert run(api, project, "--prometheus", fake.url) == 1
            last = capsys.readouterr().out.splitlines()[-1]
            assert last.startswith("FAIL live: acceptance 2.0%")
            assert last.endswith(
                f"below the floor {floor} (hp:observability.acceptanceFloor, or "
                f"--acceptance-floor) (Prometheus {fake.url})"
            )
            assert run(api, project, "--prometheus", fake.url, "--acceptance-floor", "0") == 0
    finally:
        fake.stop()


def test_a_live_source_that_cannot_be_used_is_one_fail_line(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeKubeApi([healthy_scene()]) as api:
        assert run(api, project, "--amp-workspace", "not-a-workspace") == 1
    assert capsys.readouterr().out.splitlines()[-1] == (
        "FAIL live: cannot ask for live figures: --amp-workspace must be a workspace ID (ws-...) "
        "or its query URL (https://aps-workspaces.<region>.amazonaws.com/workspaces/ws-...), got "
        "'not-a-workspace'"
    )
    with pytest.raises(SystemExit) as usage:
        parse("--prometheus", "http://x", "--acceptance-floor", "60")
    assert usage.value.code == 2
    assert "--acceptance-floor: '60' must be from 0 to 1 (0.5 = 50%)" in capsys.readouterr().err


def test_a_pod_evicted_and_replaced_by_a_ready_one_is_skipped_not_failed(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An evicted pod stays listed until garbage-collected, its log gone: history once a newer
    pod is ready, so its log is not even asked for; while none is, it still fails."""
    gone = "hp-dev-7c9f8d-a1"
    evicted = d.evicted_pod(gone, "2026-12-04T03:50:00Z")
    logs = {(POD, "model", False): s.VLLM_EAGLE3_LOG}
    endpoint = s.endpoint(s.rendered_env())
    replaced = Scene(0, endpoint, [evicted, d.pod(ready=True, created=d.STARTED)], logs=logs)
    with FakeKubeApi([replaced]) as api:
        assert run(api, project) == 0
    assert not [p for p, _ in paths(api) if p.endswith(f"/{gone}/log")]
    lines = capsys.readouterr().out.splitlines()
    assert f"SKIP pod {gone}: evicted, replaced by {POD}" in lines
    assert not [x for x in lines if x.startswith("FAIL")]
    unreplaced = Scene(0, endpoint, [evicted, d.pod(created=d.STARTED)], logs=logs)
    with FakeKubeApi([unreplaced]) as api:
        assert run(api, project) == 1
    assert f"FAIL pod {gone} engine log: the log could not be read" in capsys.readouterr().out
