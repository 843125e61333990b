"""The stories of docs/e2e.md: the real Pulumi CLI, engine and Kubernetes provider run the
program in Kubernetes-only mode against a real API server, with the operator stand-in playing
the operator. Each story asserts how it ends, what it says, and how long it took.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes.client.exceptions import ApiException
from local_cluster import LocalCluster, core_api, custom_api, require_built
from operator_standin import FINALIZER, OperatorStandIn
from pulumi_project import BIN, PROVIDER, REPO, PulumiProject, Result, install_provider
from stories import (
    Story,
    crash_loop,
    registration_failure,
    slow_success,
    wrong_speculation,
)
from test_readme_commands import code_lines, command_text

from mlcc.facts.operator import GROUP, PLURAL, VERSION

IMAGE = (
    "123456789012.dkr.ecr.us-east-1.amazonaws.com/hp-vllm@sha256:"
    "4b1e0c5d9f3a2b7c8e6d5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c"
)
CR_TYPE = "kubernetes:inference.sagemaker.aws.amazon.com/v1:InferenceEndpointConfig"
REGISTRATION_ERROR = "AccessDenied: the execution role may not sagemaker:CreateEndpoint (e2e)"
ENGINE_ERROR = "ValueError: num_speculative_tokens must be positive, got 0 (e2e)"
# The deploy wait's promise (docs/deploy.md): a failure sign fails the wait after its 60 s
# grace; rounds are 10 s apart. What the engine adds: starting the program, applying, the
# operator's first answer.
CRASH_FAILS_WITHIN_S = 60 + 2 * 10 + 60


@pytest.fixture(scope="module")
def pulumi_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_built([name for name in ("pulumi", PROVIDER) if not (BIN / name).is_file()])
    home = tmp_path_factory.mktemp("pulumi-home")
    install_provider(home)
    return home


def stack_project(
    folder: Path, home: Path, cluster: LocalCluster, namespace: str, **values: str
) -> PulumiProject:
    """A Kubernetes-only stack on the local cluster, set with the real `pulumi config set`."""
    project = PulumiProject.create(folder, home)
    settings = {
        "hp:kubeconfig": str(cluster.kubeconfig),
        "hp:kubeContext": "local",
        "hp:image": IMAGE,
        "hp:model": "meta-llama/Llama-3.1-8B-Instruct",
        "hp:namespace": namespace,
        "hp:preflight": "off",  # the Hub cannot be reached here
        **values,
    }
    for key, value in settings.items():
        project.config_set(key, value)
    return project


def readme_config_lines() -> list[list[str]]:
    """Every `pulumi config set` line of the README and the manual, as argv after `pulumi`."""
    lines = [shlex.split(line) for line in code_lines(command_text())]
    commands = [words[1:] for words in lines if words[:3] == ["pulumi", "config", "set"]]
    return [[w.replace("hf_...", "hf_e2eToken") for w in words] for words in commands]


def live_endpoint(cluster: LocalCluster, namespace: str, name: str) -> dict[str, Any]:
    api = custom_api(cluster.api_client())
    found = api.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name)
    assert isinstance(found, dict)
    return found


def planned_endpoints(project: PulumiProject, out: Path) -> dict[str, dict[str, Any]]:
    """What `mlcc plan` writes for the same stack file, by endpoint name."""
    mlcc = Path(sys.executable).with_name("mlcc")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [str(mlcc), "plan", "--stack", project.stack, "--out", str(out)]
    done = subprocess.run(
        command, cwd=project.folder, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    manifests = [yaml.safe_load(p.read_text()) for p in sorted((out / "manifests").rglob("*"))]
    return {
        m["metadata"]["name"]: m
        for m in manifests
        if isinstance(m, dict) and m.get("kind") == "InferenceEndpointConfig"
    }


def differences(planned: Any, live: Any, path: str = "") -> list[str]:
    """Where the live object differs from the planned one; a field only the live object has is
    a server-side default (the CRD's), not a difference."""
    if isinstance(planned, Mapping) and isinstance(live, Mapping):
        found: list[str] = []
        for key, value in planned.items():
            if key not in live:
                found.append(f"{path}.{key}: planned, not stored")
            else:
                found += differences(value, live[key], f"{path}.{key}")
        return found
    if isinstance(planned, list) and isinstance(live, list) and len(planned) == len(live):
        return [
            d
            for i, (p, v) in enumerate(zip(planned, live, strict=True))
            for d in differences(p, v, f"{path}[{i}]")
        ]
    return [] if planned == live else [f"{path}: planned {planned!r}, stored {live!r}"]


def wait_gone(cluster: LocalCluster, namespace: str, timeout_s: float = 60) -> None:
    core = core_api(cluster.api_client())
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            core.read_namespace(namespace)
        except ApiException as error:
            if error.status == 404:
                return
            raise
        time.sleep(0.5)
    raise AssertionError(f"namespace {namespace} still exists after {timeout_s:.0f} s")


@pytest.fixture(scope="module")
def standin(cluster: LocalCluster) -> Iterator[OperatorStandIn]:
    with OperatorStandIn(cluster, default=slow_success(3.0)) as running:
        yield running
    assert running.errors == [], running.errors


def test_readme_config_lines_then_preview(
    tmp_path: Path, pulumi_home: Path, cluster: LocalCluster
) -> None:
    project = stack_project(tmp_path, pulumi_home, cluster, "preview")
    commands = readme_config_lines()
    assert len(commands) >= 8, commands
    for argv in commands:
        project.cli(*argv, "--stack", project.stack).check()
    preview = project.run("preview", "--diff", "--non-interactive").check()
    assert CR_TYPE in preview.output
    planned = planned_endpoints(project, tmp_path / "plan")
    for name, manifest in planned.items():
        assert name in preview.output
        for variable in manifest["spec"]["worker"]["environmentVariables"]:
            assert variable["name"] in preview.output, variable
    assert "hf_e2eToken" not in preview.output  # the token is a secret, never shown

    project.config_set("hp:speculativeNumTokens", "0")
    refused = project.run("preview", "--non-interactive")
    assert refused.code != 0, str(refused)
    # The program's own line, and nothing created.
    line = "error: hp:speculativeNumTokens: must be between 1 and 16, got 0"
    assert line in refused.output, str(refused)
    assert "1 errored" in refused.output and CR_TYPE not in refused.output, str(refused)


def test_a_kubeconfig_the_provider_cannot_read_fails_the_preview(
    tmp_path: Path, pulumi_home: Path, cluster: LocalCluster
) -> None:
    """The provider takes a path it cannot read for the kubeconfig's text, finds the cluster
    unreachable and previews every object as if it could be created (exit 0): the program says
    so first."""
    project = stack_project(tmp_path, pulumi_home, cluster, "missing-kubeconfig")
    project.config_set("hp:kubeconfig", str(tmp_path / "nowhere" / "config"))
    refused = project.run("preview", "--non-interactive")
    assert refused.code != 0, str(refused)
    line = f"error: hp:kubeconfig: kubeconfig {tmp_path}/nowhere/config: no such file or folder"
    assert line in refused.output, str(refused)
    assert CR_TYPE not in refused.output, str(refused)


def test_up_serves_updates_refreshes_verifies_and_destroys(
    tmp_path: Path, pulumi_home: Path, cluster: LocalCluster, standin: OperatorStandIn
) -> None:
    namespace = "story-up"
    project = stack_project(
        tmp_path / "project",
        pulumi_home,
        cluster,
        namespace,
        **{"hp:speculativeAlgorithm": "eagle3"},
        **{"hp:speculativeModel": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"},
        **{"hp:speculativeNumTokens": "5", "hp:endpointName": "llama"},
    )
    up = project.run("up", "--yes", "--non-interactive").check()
    live = live_endpoint(cluster, namespace, "llama")
    assert live["status"]["state"] == "DeploymentComplete", live["status"]
    # The deploy wait's progress, on the custom resource, in the engine's own output.
    assert "InferenceEndpointConfig story-up/llama: DeploymentInProgress" in up.output, str(up)
    assert "llama: DeploymentComplete, 1/1 replicas ready" in up.output, str(up)
    assert "speculation on, as configured" in up.output, str(up)
    planned = planned_endpoints(project, tmp_path / "plan")["llama"]
    assert differences(planned["spec"], live["spec"]) == []
    assert differences(planned["metadata"], live["metadata"]) == []

    project.config_set("hp:speculativeNumTokens", "4")
    update = project.run("up", "--yes", "--non-interactive").check()
    live = live_endpoint(cluster, namespace, "llama")
    assert live["metadata"]["generation"] == 2
    assert live["status"]["observedGeneration"] == 2
    assert "speculation on, as configured" in update.output, str(update)
    assert "~ 1 updated" in update.output or "1 updated" in update.output, str(update)

    project.run("refresh", "--yes", "--non-interactive", "--expect-no-changes").check()
    project.run("up", "--yes", "--non-interactive", "--expect-no-changes").check()

    verify = mlcc_verify(project)
    assert verify.code == 0, str(verify)
    standin.stories["llama"] = wrong_speculation()
    restart_pods(cluster, namespace, "llama")
    verify = mlcc_verify(project, wait_s=60)
    assert verify.code != 0 and "speculation" in verify.output.lower(), str(verify)
    del standin.stories["llama"]

    held = live_endpoint(cluster, namespace, "llama")["metadata"]["finalizers"]
    assert FINALIZER in held
    destroy = project.run("destroy", "--yes", "--non-interactive").check()
    # The endpoint first, gone only once the operator let go of it, then its namespace.
    text = destroy.output
    endpoint_gone = text.index("InferenceEndpointConfig endpoint deleted")
    assert endpoint_gone < text.index("Namespace endpoint-namespace deleting"), text
    assert "- 8 deleted" in text, text
    wait_gone(cluster, namespace)
    state = json.loads(project.cli("stack", "export", "--stack", project.stack).check().output)
    assert [r["type"] for r in state["deployment"].get("resources") or []] == []


def failed_up(
    folder: Path, home: Path, cluster: LocalCluster, standin: OperatorStandIn, story: Story
) -> Result:
    """`pulumi up` of one endpoint (named after its folder) the stand-in plays `story` for; it
    must fail, and the stack is destroyed after."""
    name = folder.name.replace("_", "-").lower()[:40].strip("-")
    standin.stories[name] = story
    project = stack_project(folder, home, cluster, name, **{"hp:endpointName": name})
    up = project.run("up", "--yes", "--non-interactive", timeout=CRASH_FAILS_WITHIN_S + 120)
    assert up.code != 0, str(up)
    project.run("destroy", "--yes", "--non-interactive").check()
    return up


def test_a_crash_loop_fails_up_naming_the_engine_error(
    tmp_path: Path, pulumi_home: Path, cluster: LocalCluster, standin: OperatorStandIn
) -> None:
    up = failed_up(tmp_path, pulumi_home, cluster, standin, crash_loop(ENGINE_ERROR))
    assert ENGINE_ERROR in up.output, str(up)
    assert "CrashLoopBackOff" in up.output, str(up)
    assert up.seconds < CRASH_FAILS_WITHIN_S, str(up)


def test_a_failed_registration_fails_up_at_once_quoting_the_operator(
    tmp_path: Path, pulumi_home: Path, cluster: LocalCluster, standin: OperatorStandIn
) -> None:
    story = registration_failure(REGISTRATION_ERROR)
    up = failed_up(tmp_path, pulumi_home, cluster, standin, story)
    assert "its SageMaker endpoint registration is CreationFailed" in up.output, str(up)
    assert REGISTRATION_ERROR in up.output, str(up)
    assert up.seconds < 60, str(up)  # at once: waiting cannot help (docs/deploy.md)


def test_the_pr_workflow_preview_of_the_kubernetes_only_example(
    tmp_path: Path, pulumi_home: Path, cluster: LocalCluster
) -> None:
    """`.github/workflows/preview.yml` runs `pulumi preview --diff` on each stack file."""
    workflow = (REPO / ".github" / "workflows" / "preview.yml").read_text()
    assert "command: preview" in workflow and "diff: true" in workflow
    project = PulumiProject.create(tmp_path, pulumi_home, stack="kubernetes")
    example = (REPO / "examples" / "Pulumi.kubernetes.yaml").read_text()
    (tmp_path / "Pulumi.kubernetes.yaml").write_text(example)
    project.config_set("hp:kubeconfig", str(cluster.kubeconfig))
    project.config_set("hp:preflight", "off")
    preview = project.run("preview", "--diff", "--non-interactive").check()
    assert CR_TYPE in preview.output
    assert "aws:" not in preview.output


def mlcc_verify(project: PulumiProject, wait_s: float = 0) -> Result:
    """The real `mlcc verify` on the stack file, reaching the cluster through hp:kubeconfig."""
    mlcc = Path(sys.executable).with_name("mlcc")
    argv = [str(mlcc), "verify", "--project-dir", str(project.folder), "--stack", project.stack]
    argv += ["--request-timeout", "5"]
    if wait_s:
        argv += ["--wait", "--timeout", f"{wait_s / 60:g}"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False, env=env)
    return Result(argv, done.returncode, done.stdout + done.stderr, time.monotonic() - started)


def restart_pods(cluster: LocalCluster, namespace: str, name: str) -> None:
    core = core_api(cluster.api_client())
    for pod in core.list_namespaced_pod(namespace, label_selector=f"app={name}").items:
        core.delete_namespaced_pod(pod.metadata.name, namespace, grace_period_seconds=0)
