"""The draft loop's Kubernetes parts (docs/draft-training.md, docs/draft-serving.md) through the
real Pulumi CLI, engine and Kubernetes provider, against a real API server, in Kubernetes-only
mode (docs/e2e.md):

- hp:draftTraining with `operator: job`: `pulumi up` creates the batch/v1 Job, the real
  controller-manager makes its pod and the real scheduler puts it on a kwok GPU node of the
  instance type; `mlcc draft status --stack` reads them back;
- an s3:// hp:speculativeModel: the InferenceEndpointConfig the API server stores (against the
  vendored CRD) carries the copy's init container and model volume, the engine the local path;
- `pulumi destroy` removes both;
- `operator: hyperpod` on a cluster without the HyperPod training operator's CRD is refused.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as kube
from kubernetes.client.exceptions import ApiException
from local_cluster import (
    GPU_RESOURCE,
    INSTANCE_TYPE_LABEL,
    LocalCluster,
    core_api,
    custom_api,
    require_built,
)
from operator_standin import OperatorStandIn
from pulumi_project import BIN, PROVIDER, REPO, PulumiProject, Result, install_provider
from test_stories import live_endpoint, stack_project

from mlcc.facts.operator import GROUP, PLURAL, VERSION
from mlcc.manifest import draft_copy
from mlcc.serving import s3_draft

INSTANCE_TYPE = "ml.g5.12xlarge"  # the kwok nodes' (conftest.py), 4 GPUs (gpus.json)
HEAD = "s3://team-drafts/llama-8b/run-3/checkpoint-best/"
DRAFT_PATH = f"/opt/ml/model/{s3_draft.DRAFT_DIRECTORY}"  # under the default model mount
JOB_LABEL = "hp.mlcc/draft-training"


@pytest.fixture(scope="module")
def pulumi_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_built([name for name in ("pulumi", PROVIDER) if not (BIN / name).is_file()])
    home = tmp_path_factory.mktemp("pulumi-home")
    install_provider(home)
    return home


def training(project: PulumiProject, operator: str) -> None:
    """hp:draftTraining for a cluster the stack does not create: the nodes' instance type."""
    values = {
        "operator": operator,
        "instanceType": INSTANCE_TYPE,
        "dataset": "s3://team-data/datasets/run1/",
        "output": "s3://team-drafts/llama-8b/run-4/",
        "epochs": "2",
    }
    for field, value in values.items():
        project.config_set(f"hp:draftTraining.{field}", value, "--path")


def mlcc_status(project: PulumiProject) -> Result:
    """The real `mlcc draft status --stack` on the stack file, as a user runs it."""
    mlcc = Path(sys.executable).with_name("mlcc")
    argv = [str(mlcc), "draft", "status", "--stack", project.stack, "--request-timeout", "5"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    started = time.monotonic()
    done = subprocess.run(
        argv, cwd=project.folder, capture_output=True, text=True, timeout=120, env=env
    )
    return Result(argv, done.returncode, done.stdout + done.stderr, time.monotonic() - started)


def finished_job(cluster: LocalCluster, namespace: str, name: str, timeout_s: float = 60) -> Any:
    """The Job once the real Job controller marked it Complete (kwok v0.8.0's default
    `pod-complete` stage ends a Job's pods with exit 0 as soon as they run)."""
    batch = kube.BatchV1Api(cluster.api_client())
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        job = batch.read_namespaced_job(name, namespace)
        if any(c.type == "Complete" and c.status == "True" for c in job.status.conditions or []):
            return job
        time.sleep(0.5)
    raise AssertionError(f"Job {name} not Complete within {timeout_s:.0f} s: {job.status}")


def absent(read: Any, *args: str) -> bool:
    try:
        read(*args)
    except ApiException as error:
        if error.status == 404:
            return True
        raise
    return False


def test_training_job_and_s3_head_up_status_destroy(
    tmp_path: Path, pulumi_home: Path, cluster: LocalCluster, standin: OperatorStandIn
) -> None:
    namespace = "draft-loop"
    project = stack_project(
        tmp_path / "project",
        pulumi_home,
        cluster,
        namespace,
        **{"hp:endpointName": "llama", "hp:instanceType": INSTANCE_TYPE},
        **{"hp:speculativeAlgorithm": "eagle3", "hp:speculativeModel": HEAD},
        **{"hp:speculativeNumTokens": "3"},
    )
    training(project, "job")
    up = project.run("up", "--yes", "--non-interactive").check()
    assert "kubernetes:batch/v1:Job draft-training created" in up.output, str(up)
    assert "llama: DeploymentComplete, 1/1 replicas ready" in up.output, str(up)
    api = cluster.api_client()
    core = core_api(api)

    # The Job as the program rendered it; its pod where the real scheduler put it.
    jobs = kube.BatchV1Api(api).list_namespaced_job(namespace, label_selector=JOB_LABEL).items
    assert [j.metadata.name for j in jobs] == ["llama-draft"], jobs
    template = jobs[0].spec.template.spec
    assert template.node_selector == {INSTANCE_TYPE_LABEL: INSTANCE_TYPE}
    assert template.containers[0].resources.limits == {GPU_RESOURCE: "4"}
    job = finished_job(cluster, namespace, "llama-draft")
    selector = "batch.kubernetes.io/job-name=llama-draft"
    pods = core.list_namespaced_pod(namespace, label_selector=selector).items
    assert [p.status.phase for p in pods] == ["Succeeded"], pods
    node = core.read_node(pods[0].spec.node_name)
    assert node.metadata.labels[INSTANCE_TYPE_LABEL] == INSTANCE_TYPE
    assert node.status.allocatable[GPU_RESOURCE] == "4"

    # `mlcc draft status --stack` on the same stack file: the real Job's conditions and pod.
    status = mlcc_status(project)
    assert status.code == 0 and "Traceback" not in status.output, str(status)
    lines = [line.strip() for line in status.output.splitlines()]
    pod = pods[0].metadata.name
    assert lines[0] == f"Job {namespace}/llama-draft: Complete, 1 pod (1 succeeded), 0 restarts"
    assert [c.type for c in job.status.conditions] == ["SuccessCriteriaMet", "Complete"]
    assert lines[1].startswith("SuccessCriteriaMet=True (CompletionsReached: "), lines
    assert lines[2].startswith("Complete=True (CompletionsReached: "), lines
    assert f"pod {pod}  Succeeded  ready 0/1  restarts 0  node {node.metadata.name}" in lines
    # No trainer log: kwok runs no container and serves no log it was not given.
    assert lines[-1].startswith(f"progress: unknown ({pod}: cannot read the log of {pod}: "), lines

    # The endpoint: the copy of the head, as the API server stored it against the vendored CRD.
    spec = live_endpoint(cluster, namespace, "llama")["spec"]
    volume = spec["worker"]["modelVolumeMount"]
    assert volume == {"name": "model-weights", "mountPath": "/opt/ml/model"}
    copy = spec["kubernetes"]["initContainers"]
    assert [c["name"] for c in copy] == [s3_draft.INIT_CONTAINER]
    assert copy[0]["image"] == draft_copy.AWS_CLI_IMAGE
    assert copy[0]["volumeMounts"] == [{"name": "model-weights", "mountPath": "/mlcc-model"}]
    assert f"aws s3 sync --only-show-errors {HEAD} /mlcc-model/mlcc-draft" in copy[0]["args"][0]
    assert spec["kubernetes"]["volumes"] == [{"name": "model-weights", "emptyDir": {}}]
    assert "serviceAccountName" not in spec["kubernetes"]  # Kubernetes-only: none made
    env = {v["name"]: v.get("value", "") for v in spec["worker"]["environmentVariables"]}
    assert [k for k, v in env.items() if DRAFT_PATH in v], env
    assert not [k for k, v in env.items() if "s3://" in v], env
    # The stand-in's Deployment runs the copy first, into the model volume the worker mounts.
    served = core.list_namespaced_pod(namespace, label_selector="app=llama").items
    assert [c.name for c in served[0].spec.init_containers] == [s3_draft.INIT_CONTAINER]
    assert [v.name for v in served[0].spec.volumes if v.empty_dir] == ["model-weights"]

    destroy = project.run("destroy", "--yes", "--non-interactive").check()
    assert "kubernetes:batch/v1:Job draft-training deleted" in destroy.output, str(destroy)
    batch, endpoints = kube.BatchV1Api(api), custom_api(api)
    assert absent(batch.read_namespaced_job, "llama-draft", namespace)
    assert absent(
        endpoints.get_namespaced_custom_object, GROUP, VERSION, namespace, PLURAL, "llama"
    )


def test_a_hyperpod_job_without_the_training_operator_is_refused(
    tmp_path: Path, pulumi_home: Path, cluster: LocalCluster
) -> None:
    """The provider previews a HyperPodPyTorchJob the cluster does not serve as creatable, and
    `pulumi up` then fails after the endpoint was created (docs/e2e.md): the program refuses
    the stack at preview, naming the key."""
    project = stack_project(
        tmp_path,
        pulumi_home,
        cluster,
        "no-training-operator",
        **{"hp:endpointName": "plain", "hp:instanceType": INSTANCE_TYPE},
    )
    training(project, "hyperpod")
    refused = project.run("preview", "--non-interactive")
    assert refused.code != 0, str(refused)
    line = (
        "error: hp:draftTraining.operator: is hyperpod, but the cluster (hp:kubeconfig) does not "
        "serve HyperPodPyTorchJob (sagemaker.amazonaws.com/v1): the HyperPod training operator "
        "add-on is not installed. Install it, or set operator: job to run a plain Kubernetes Job"
    )
    assert line in refused.output, str(refused)
    assert "HyperPodPyTorchJob draft-training" not in refused.output, str(refused)
    assert "InferenceEndpointConfig" not in refused.output, str(refused)
    # `mlcc draft status` on the same stack says the same of the cluster (exit 3).
    status = mlcc_status(project)
    assert status.code == 3 and "Traceback" not in status.output, str(status)
    assert "the cluster does not serve HyperPodPyTorchJob" in status.output, str(status)
