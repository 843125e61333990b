"""`mlcc verify` end to end, with the Kubernetes client replaced by a small fake."""

from __future__ import annotations

import argparse
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import verify_samples as s
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from mlcc.cli import verify as verify_cli
from mlcc.facts.operator import GROUP, PLURAL, VERSION

REPO_ROOT = Path(__file__).resolve().parents[2]
POD = "hp-dev-7c9f8d-x2k4q"

STACK_FILE = f"""\
config:
  aws:region: us-east-1
  aws-native:region: us-east-1
  hp:engine: vllm
  hp:model: {s.TARGET}
  hp:image: {s.IMAGE}
  hp:namespace: inference
  hp:speculativeAlgorithm: eagle3
  hp:speculativeModel: {s.EAGLE3_DRAFT}
  hp:speculativeNumTokens: 5
  hp:engineArgs:
    max-model-len: 8192
  hp:hfToken:
    secure: v1:Zm9vYmFy:c2VjcmV0LXRva2VuLWNpcGhlcnRleHQ=
"""


def v1_pod(name: str, env: list[dict[str, object]]) -> client.V1Pod:
    """A pod as the real client returns it (model objects, snake_case attributes)."""

    def container(name: str, image: str, env: list[dict[str, object]]) -> client.V1Container:
        variables = [
            client.V1EnvVar(name=str(e["name"]), value=str(e["value"]) if "value" in e else None)
            for e in env
        ]
        return client.V1Container(name=name, image=image, env=variables)

    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, namespace="inference", labels={"app": "hp-dev"}),
        spec=client.V1PodSpec(
            containers=[
                container("nginx", s.SIDECAR_IMAGE, [{"name": "PORT", "value": "80"}]),
                container("model", s.IMAGE, env),
            ]
        ),
        status=client.V1PodStatus(phase="Running"),
    )


@dataclass
class FakeCluster:
    """Answers the three calls `mlcc verify` makes, and records them."""

    endpoint: dict[str, Any] | None
    pods: list[client.V1Pod]
    logs: dict[tuple[str, str], str]
    endpoint_error: ApiException | None = None
    calls: list[tuple[Any, ...]] = field(default_factory=list)

    def get_namespaced_custom_object(
        self,
        group: str,
        version: str,
        namespace: str,
        plural: str,
        name: str,
        *,
        _request_timeout: verify_cli.Timeout | None = None,
    ) -> dict[str, Any]:
        self.calls.append(("get", group, version, namespace, plural, name))
        if self.endpoint_error:
            raise self.endpoint_error
        if self.endpoint is None:
            raise ApiException(status=404, reason="Not Found")
        return self.endpoint

    def list_namespaced_pod(
        self,
        namespace: str,
        *,
        label_selector: str | None = None,
        _request_timeout: verify_cli.Timeout | None = None,
    ) -> client.V1PodList:
        self.calls.append(("list", namespace, label_selector))
        return client.V1PodList(items=self.pods)

    def read_namespaced_pod_log(
        self,
        name: str,
        namespace: str,
        *,
        container: str | None = None,
        _request_timeout: verify_cli.Timeout | None = None,
    ) -> str:
        self.calls.append(("log", name, namespace, container))
        if (name, str(container)) not in self.logs:
            raise ApiException(status=400, reason="Bad Request")
        return self.logs[(name, str(container))]

    def factory(self, kubeconfig: str | None, context: str | None) -> verify_cli.KubernetesApis:
        self.calls.append(("config", kubeconfig, context))
        serializer = client.ApiClient().sanitize_for_serialization
        return verify_cli.KubernetesApis(custom=self, core=self, to_dict=serializer)


def healthy_cluster(log: str = s.VLLM_EAGLE3_LOG) -> FakeCluster:
    env = s.rendered_env()
    return FakeCluster(
        endpoint=s.endpoint(env), pods=[v1_pod(POD, env)], logs={(POD, "model"): log}
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copy(REPO_ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    (tmp_path / "Pulumi.dev.yaml").write_text(STACK_FILE, encoding="utf-8")
    return tmp_path


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="mlcc")
    verify_cli.register(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(["verify", *argv])


def run(cluster: FakeCluster, project: Path, *argv: str) -> int:
    return verify_cli.run(parse("--project-dir", str(project), *argv), api_factory=cluster.factory)


def test_a_healthy_endpoint_prints_pass_lines_and_exits_0(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = healthy_cluster()
    assert run(cluster, project) == 0
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
    cluster = healthy_cluster()
    run(cluster, project, "--stack", "dev", "--kubeconfig", "/tmp/kc", "--context", "hp")
    assert cluster.calls == [
        ("config", "/tmp/kc", "hp"),
        ("get", GROUP, VERSION, "inference", PLURAL, "hp-dev"),
        ("list", "inference", "app=hp-dev"),
        ("log", POD, "inference", "model"),
    ]


def test_namespace_overrides_the_stack_and_endpoint_picks_one_of_its_endpoints(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = healthy_cluster()
    cluster.endpoint = None
    assert run(cluster, project, "--namespace", "serving", "--endpoint", "hp-dev") == 1
    assert ("get", GROUP, VERSION, "serving", PLURAL, "hp-dev") in cluster.calls
    assert run(cluster, project, "--endpoint", "llama-eagle3") == 2
    assert "no endpoint 'llama-eagle3'; choose one of: hp-dev" in capsys.readouterr().err


def test_every_endpoint_of_the_stack_is_verified_under_its_name(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stack = (project / "Pulumi.dev.yaml").read_text()
    entries = "  hp:endpoints:\n    - name: hp-dev\n      baseline: true\n"
    (project / "Pulumi.dev.yaml").write_text(stack + entries, encoding="utf-8")
    cluster = healthy_cluster()
    assert run(cluster, project) == 1  # the twin's pods are the healthy endpoint's
    out = capsys.readouterr().out
    assert out.startswith("hp-dev:\n  PASS ")
    assert "\nhp-dev-baseline:\n  " in out
    assert ("get", GROUP, VERSION, "inference", PLURAL, "hp-dev-baseline") in cluster.calls


def test_speculation_silently_off_exits_1_with_a_fail_line(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(healthy_cluster(s.VLLM_SPECULATION_OFF_LOG), project) == 1
    out = capsys.readouterr().out
    assert f"FAIL pod {POD} engine log: speculative_config=None: speculation is OFF" in out
    assert "PASS endpoint env:" in out


def test_a_missing_endpoint_exits_1_after_one_line(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = healthy_cluster()
    cluster.endpoint = None
    assert run(cluster, project) == 1
    assert capsys.readouterr().out == (
        "FAIL endpoint: InferenceEndpointConfig inference/hp-dev not found "
        "(was `pulumi up` run for this stack?)\n"
    )
    assert [c[0] for c in cluster.calls] == ["config", "get"]


def test_a_refused_read_is_a_fail_line_not_a_traceback(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = healthy_cluster()
    cluster.endpoint_error = ApiException(status=403, reason="Forbidden")
    assert run(cluster, project) == 1
    assert capsys.readouterr().out == (
        f"FAIL cluster: cannot read {PLURAL}/hp-dev in inference: 403 Forbidden\n"
    )


def test_an_unreadable_log_is_reported(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cluster = healthy_cluster()
    cluster.logs = {}
    assert run(cluster, project) == 1
    assert f"FAIL pod {POD} engine log: the log could not be read: 400 Bad Request" in (
        capsys.readouterr().out
    )


def test_without_a_selector_pods_are_found_by_name(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = healthy_cluster()
    assert cluster.endpoint is not None
    del cluster.endpoint["status"]["selector"]
    unrelated = v1_pod("unrelated-5d8c-abcde", [])
    unrelated.metadata.labels = {"app": "unrelated"}
    cluster.pods.append(unrelated)
    assert run(cluster, project) == 0
    assert ("list", "inference", None) in cluster.calls
    assert (
        "PASS pods: 1 selected by label app=hp-dev or Deployment hp-dev's pod names"
        in capsys.readouterr().out
    )


def test_two_stacks_and_no_choice_is_a_usage_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "Pulumi.prod.yaml").write_text(STACK_FILE, encoding="utf-8")
    cluster = healthy_cluster()
    assert run(cluster, project) == 2
    assert capsys.readouterr().err == (
        "mlcc verify: error: choose a stack with --stack (dev, prod)\n"
    )
    assert cluster.calls == []


def test_an_unknown_stack_is_a_usage_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(healthy_cluster(), project, "--stack", "staging") == 2
    assert "no stack file Pulumi.staging.yaml; stacks here: dev" in capsys.readouterr().err


def test_an_invalid_stack_config_exits_1_naming_the_key(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "Pulumi.dev.yaml").write_text(
        STACK_FILE.replace("hp:speculativeAlgorithm: eagle3", "hp:speculativeAlgorithm: eagle4"),
        encoding="utf-8",
    )
    cluster = healthy_cluster()
    assert run(cluster, project) == 1
    assert capsys.readouterr().err.startswith(
        "error: hp:speculativeAlgorithm: unknown algorithm 'eagle4'"
    )
    assert cluster.calls == []


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


def test_the_real_client_is_configured_from_the_given_kubeconfig(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        """\
apiVersion: v1
kind: Config
clusters:
- name: hyperpod
  cluster: {server: "https://ABCDEF.gr7.us-east-1.eks.amazonaws.com"}
users:
- name: ci
  user: {token: not-a-real-token}
contexts:
- name: hp
  context: {cluster: hyperpod, user: ci}
current-context: hp
""",
        encoding="utf-8",
    )
    apis = verify_cli.kubernetes_apis(str(kubeconfig), None)
    assert isinstance(apis.custom, client.CustomObjectsApi)
    assert isinstance(apis.core, client.CoreV1Api)
    host = apis.core.api_client.configuration.host
    assert host == "https://ABCDEF.gr7.us-east-1.eks.amazonaws.com"
    pod_dict = apis.to_dict(v1_pod(POD, [{"name": "A", "value": "1"}]))
    assert pod_dict["metadata"]["name"] == POD
    assert pod_dict["spec"]["containers"][1]["env"] == [{"name": "A", "value": "1"}]


def test_live_figures_join_the_checks_and_a_floor_above_them_fails_the_run(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from prometheus_fake import PrometheusFake
    from test_live_hostile import healthy

    fake = PrometheusFake(healthy).start()
    try:
        assert run(healthy_cluster(), project, "--prometheus", fake.url) == 0
        assert capsys.readouterr().out.splitlines()[-1] == (
            "PASS live: acceptance 60.0%, mean accepted length 2.80, 40.0 output tokens/s over "
            f"the last 5 min (Prometheus {fake.url})"
        )
        floor = ("--acceptance-floor", "0.75", "--window-minutes", "2")
        assert run(healthy_cluster(), project, "--prometheus", fake.url, *floor) == 1
        last = capsys.readouterr().out.splitlines()[-1]
        assert last.startswith("FAIL live: acceptance 60.0%")
        assert last.endswith(f"below the floor 75% (--acceptance-floor) (Prometheus {fake.url})")
        window = ("[120s]", "offset 120s")
        for query in fake.queries[-5:]:
            assert 'namespace="inference",pod=~"hp-dev-' in query
            assert any(w in query for w in window), query
    finally:
        fake.stop()


def test_a_live_source_that_cannot_be_used_is_one_fail_line(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(healthy_cluster(), project, "--amp-workspace", "not-a-workspace") == 1
    assert capsys.readouterr().out.splitlines()[-1] == (
        "FAIL live: cannot ask for live figures: --amp-workspace must be a workspace ID (ws-...) "
        "or its query URL (https://aps-workspaces.<region>.amazonaws.com/workspaces/ws-...), got "
        "'not-a-workspace'"
    )
    with pytest.raises(SystemExit) as usage:
        parse("--prometheus", "http://x", "--acceptance-floor", "60")
    assert usage.value.code == 2
    assert "--acceptance-floor: '60' must be from 0 to 1 (0.5 = 50%)" in capsys.readouterr().err
