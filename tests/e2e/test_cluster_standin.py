"""The deploy wait and `mlcc verify` against a real local control plane and the operator
stand-in: the InferenceEndpointConfig the program renders, pods placed by the real scheduler
and run by kwok, logs read through the real API server."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import e2e_endpoints as e
import verify_samples as s
from crd_schema import crd_validator
from local_cluster import LocalCluster, apps_api, core_api, custom_api, extensions_api
from operator_standin import FINALIZER, WORKER, OperatorStandIn
from stories import crash_loop, registration_failure, slow_success, wrong_speculation

from mlcc.deploy.cluster import Cluster
from mlcc.deploy.kubeconfig import api_client
from mlcc.deploy.snapshot import Target
from mlcc.deploy.waiter import Outcome, WaitSettings, wait_for_endpoints

REPO = Path(__file__).resolve().parents[2]
NAME = "hp-dev"  # the sample stack's endpoint
SETTINGS = WaitSettings(timeout_s=40.0, poll_s=0.2, grace_s=1.5, api_grace_s=10.0)
ENGINE_ERROR = (
    "ValueError: The decoder prompt (length 9000) is longer than the maximum model length of 8192"
)
REGISTRATION_ERROR = (
    "The account-level service limit 'ml.g5.12xlarge for endpoint usage' is 0 Instances"
)


def wait(
    cluster: LocalCluster, namespace: str, generation: int | None = None, **stack: str | None
) -> tuple[Outcome, list[str]]:
    """`mlcc.deploy.waiter.wait_for_endpoints`, as `pulumi up` runs it, on one endpoint."""
    lines: list[str] = []
    target = Target(namespace, NAME, s.expectation(namespace=namespace, **stack), generation)
    reads = Cluster(api_client(str(cluster.kubeconfig)), request_timeout_s=5.0)
    [outcome] = wait_for_endpoints(reads, [target], SETTINGS, lambda _t, line: lines.append(line))
    return outcome, lines


def deploy(cluster: LocalCluster, namespace: str, **stack: str | None) -> dict[str, Any]:
    return e.apply(cluster.api_client(), e.rendered_endpoint(namespace=namespace, **stack))


def verify(cluster: LocalCluster, project: Path) -> subprocess.CompletedProcess[str]:
    """The real `mlcc verify` CLI, as a user runs it after `pulumi up`, on this checkout's code
    (the venv's editable install may point at another one)."""
    mlcc = Path(sys.executable).with_name("mlcc")
    argv = [str(mlcc), "verify", "--project-dir", str(project), "--stack", "dev"]
    argv += ["--kubeconfig", str(cluster.kubeconfig), "--request-timeout", "5"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False, env=env)


def project(tmp_path: Path, namespace: str) -> Path:
    (tmp_path / "Pulumi.yaml").write_text((REPO / "Pulumi.yaml").read_text(), encoding="utf-8")
    (tmp_path / "Pulumi.dev.yaml").write_text(e.stack_file(namespace=namespace), encoding="utf-8")
    return tmp_path


def worker_pods(cluster: LocalCluster, namespace: str) -> list[Any]:
    core = core_api(cluster.api_client())
    pods = core.list_namespaced_pod(namespace, label_selector=f"app={NAME}").items
    return [p for p in pods if p.metadata.deletion_timestamp is None]


def assert_status_valid(cluster: LocalCluster, namespace: str) -> dict[str, Any]:
    """The endpoint as the stand-in left it, valid against the operator's vendored CRD."""
    found = e.read(cluster.api_client(), namespace, NAME)
    errors = [x.message for x in crd_validator("inferenceendpointconfigs.yaml").iter_errors(found)]
    assert errors == [], errors
    return found


def test_the_cluster_starts_and_serves(cluster: LocalCluster) -> None:
    assert cluster.startup_s < 30, f"startup took {cluster.startup_s:.1f} s"
    nodes = core_api(cluster.api_client()).list_node().items
    assert len(nodes) >= 1
    node = nodes[0]
    assert node.status.allocatable["nvidia.com/gpu"] == "4"
    assert node.metadata.labels["node.kubernetes.io/instance-type"] == "ml.g5.12xlarge"
    assert node.status.daemon_endpoints.kubelet_endpoint.port == cluster.kubelet_port
    crds = extensions_api(cluster.api_client()).list_custom_resource_definition()
    names = {c.metadata.name for c in crds.items}
    assert "inferenceendpointconfigs.inference.sagemaker.aws.amazon.com" in names


def test_a_written_pod_log_is_read_back_through_the_api_server(cluster: LocalCluster) -> None:
    core = core_api(cluster.api_client())
    pod = {
        "metadata": {"name": "logger", "namespace": "default"},
        "spec": {"containers": [{"name": WORKER, "image": s.IMAGE}]},
    }
    core.create_namespaced_pod("default", pod)
    deadline = time.monotonic() + 20
    while core.read_namespaced_pod("logger", "default").status.phase != "Running":
        assert time.monotonic() < deadline, "kwok did not run the pod"
        time.sleep(0.05)
    cluster.write_log("default", "logger", WORKER, "first line\nsecond line")
    cluster.write_log("default", "logger", WORKER, "the run before", previous=True)
    read = core.read_namespaced_pod_log
    assert read("logger", "default", container=WORKER) == "first line\nsecond line\n"
    assert read("logger", "default", container=WORKER, previous=True) == "the run before\n"
    assert read("logger", "default", container=WORKER, limit_bytes=5) == "first"


def test_slow_success_serves_after_the_registration(
    cluster: LocalCluster, standin: OperatorStandIn, tmp_path: Path
) -> None:
    standin.stories["slow/hp-dev"] = slow_success(1.5)
    started = time.monotonic()
    deploy(cluster, "slow")
    outcome, lines = wait(cluster, "slow", generation=1)
    assert outcome.serving, outcome.message
    assert time.monotonic() - started >= 1.5
    assert any("CreationInProgress" in line for line in lines), lines
    found = assert_status_valid(cluster, "slow")
    assert found["status"]["endpoints"]["sagemaker"]["state"] == "CreationCompleted"
    assert found["metadata"]["finalizers"] == [FINALIZER]
    result = verify(cluster, project(tmp_path, "slow"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "PASS pod hp-dev-" in result.stdout and "speculation is on" in result.stdout


def test_an_update_rolls_the_pods_and_serves_the_new_generation(
    cluster: LocalCluster, standin: OperatorStandIn
) -> None:
    api = cluster.api_client()
    deploy(cluster, "update")
    assert wait(cluster, "update", generation=1)[0].serving
    changed = e.rendered_endpoint(namespace="update", speculativeNumTokens="3")
    custom_api(api).patch_namespaced_custom_object(
        e.GROUP, e.VERSION, "update", e.PLURAL, NAME, {"spec": changed["spec"]}
    )
    outcome, lines = wait(cluster, "update", generation=2, speculativeNumTokens="3")
    assert outcome.serving, outcome.message
    assert any("UpdateInProgress" in line or "not yet observed" in line for line in lines)
    status = assert_status_valid(cluster, "update")["status"]
    assert status["observedGeneration"] == 2
    assert status["endpoints"]["sagemaker"]["state"] == "UpdateCompleted"
    [pod] = worker_pods(cluster, "update")
    env = {v.name: v.value for v in pod.spec.containers[0].env}
    assert '"num_speculative_tokens":3' in env["SM_VLLM_SPECULATIVE_CONFIG"]


def test_a_crash_loop_fails_the_wait_naming_the_engine_error(
    cluster: LocalCluster, standin: OperatorStandIn
) -> None:
    standin.stories["crash/hp-dev"] = crash_loop(ENGINE_ERROR)
    deploy(cluster, "crash")
    outcome, _ = wait(cluster, "crash", generation=1)
    assert not outcome.serving
    assert "CrashLoopBackOff" in outcome.message and ENGINE_ERROR in outcome.message
    assert outcome.message.startswith("InferenceEndpointConfig crash/hp-dev: pod hp-dev-")
    assert assert_status_valid(cluster, "crash")["status"]["state"] == "DeploymentInProgress"
    [pod] = worker_pods(cluster, "crash")
    assert pod.status.container_statuses[0].last_state.terminated.exit_code == 1
    events = core_api(cluster.api_client()).list_namespaced_event("crash").items
    assert any(x.reason == "BackOff" and x.type == "Warning" for x in events)


def test_a_failed_registration_fails_the_wait_quoting_the_operator(
    cluster: LocalCluster, standin: OperatorStandIn
) -> None:
    standin.stories["register/hp-dev"] = registration_failure(REGISTRATION_ERROR)
    deploy(cluster, "register")
    outcome, _ = wait(cluster, "register", generation=1)
    assert not outcome.serving
    assert "registration is CreationFailed: CreationFailed: " + REGISTRATION_ERROR in (
        outcome.message
    )
    conditions = assert_status_valid(cluster, "register")["status"]["conditions"]
    assert {"type": "SageMakerEndpointRegistered", "status": "False"}.items() <= conditions[
        -1
    ].items()


def test_verify_fails_when_the_engine_runs_without_speculation(
    cluster: LocalCluster, standin: OperatorStandIn, tmp_path: Path
) -> None:
    standin.stories["wrong/hp-dev"] = wrong_speculation()
    deploy(cluster, "wrong")
    outcome, _ = wait(cluster, "wrong", generation=1)
    assert not outcome.serving
    assert "speculation is OFF" in outcome.message
    result = verify(cluster, project(tmp_path, "wrong"))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "FAIL pod hp-dev-" in result.stdout
    assert "speculative_config=None: speculation is OFF" in result.stdout


def test_deleting_the_endpoint_waits_for_the_finalizer_then_completes(
    cluster: LocalCluster, standin: OperatorStandIn
) -> None:
    api = cluster.api_client()
    fast = replace(standin.default, deploy_s=0.1, register_s=0.1)
    standin.stories["gone/hp-dev"] = fast
    deploy(cluster, "gone")
    assert wait(cluster, "gone", generation=1)[0].serving
    custom_api(api).delete_namespaced_custom_object(e.GROUP, e.VERSION, "gone", e.PLURAL, NAME)
    e.wait_gone(api, "gone", NAME, timeout_s=30)
    assert worker_pods(cluster, "gone") == []
    deployments = apps_api(api).list_namespaced_deployment("gone").items
    assert deployments == []
