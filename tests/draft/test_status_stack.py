"""`mlcc draft status --stack NAME`: the namespace, job name, kind and cluster come from the
stack's hp:draftTraining (a Kubernetes-only stack whose hp:kubeconfig names the local API of
tests/draft/fake_jobs_api.py); flags given as well win; a stack without the key is one error."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from fake_jobs_api import Cluster, FakeJobsApi
from test_status import RUNNING, hyperpod_job, pod

from mlcc.cli import main

REPO = Path(__file__).resolve().parents[2]
IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/hp-vllm@sha256:" + "a" * 64
NAMESPACE = "training"


def project(tmp_path: Path, kubeconfig: Path, training: str | None) -> Path:
    """Pulumi.yaml and Pulumi.dev.yaml: a Kubernetes-only stack on the fake API."""
    folder = tmp_path / "project"
    folder.mkdir()
    shutil.copy(REPO / "Pulumi.yaml", folder / "Pulumi.yaml")
    text = (
        "config:\n"
        "  hp:model: meta-llama/Llama-3.1-8B-Instruct\n"
        f"  hp:image: {IMAGE}\n"
        f"  hp:kubeconfig: {kubeconfig}\n"
        "  hp:kubeContext: fake\n"
        f"  hp:namespace: {NAMESPACE}\n"
    )
    if training is not None:
        text += (
            "  hp:draftTraining:\n"
            "    instanceType: ml.g5.12xlarge\n"
            "    dataset: s3://traffic-bucket/datasets/run1/\n"
            "    output: s3://heads-bucket/llama-8b/run1/\n"
            f"    operator: {training}\n"
        )
    (folder / "Pulumi.dev.yaml").write_text(text, encoding="utf-8")
    return folder


def batch_job(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "status": {"active": 1, "ready": 1, "startTime": "2026-12-06T16:40:00Z"},
    }


def status(folder: Path, *extra: str) -> int:
    argv = ["draft", "status", "--stack", "dev", "--project-dir", str(folder)]
    return main([*argv, "--request-timeout", "5", *extra])


def test_the_stack_names_the_job_its_kind_and_its_cluster(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mlcc.config.stack import parse
    from mlcc.stackfiles import resolve as stackfiles

    kubeconfig = tmp_path / "kubeconfig"
    folder = project(tmp_path, kubeconfig, "job")
    values = stackfiles.resolve(
        stackfiles.load_project(folder), stackfiles.load_stack(folder, "dev"), stack="dev"
    )
    training = parse(values.values, stack="dev").config.draft_training
    assert training is not None
    name = training.name
    cluster = Cluster(
        batch_jobs={name: batch_job(name)},
        pods=[pod(f"{name}-x7k2p", {"batch.kubernetes.io/job-name": name})],
    )
    with FakeJobsApi(cluster) as api:
        api.kubeconfig(kubeconfig)  # the file the stack's hp:kubeconfig names
        assert status(folder) == 0
        assert api.requests[0].startswith(f"/apis/batch/v1/namespaces/{NAMESPACE}/jobs/{name}")
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"Job {NAMESPACE}/{name}: Running, 1 pod (1 running), 0 restarts"


def test_flags_given_win_over_the_stack(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cluster = Cluster(
        hyperpod_jobs={"other-run": hyperpod_job(RUNNING)},
    )
    with FakeJobsApi(cluster) as api:
        folder = project(tmp_path, api.kubeconfig(tmp_path / "kubeconfig"), "job")
        # the stack says a batch/v1 Job; --kind and --job say another HyperPodPyTorchJob
        assert status(folder, "--kind", "hyperpod", "--job", "other-run") == 0
        paths = [r.split("?")[0] for r in api.requests]
    assert paths[0] == (
        f"/apis/sagemaker.amazonaws.com/v1/namespaces/{NAMESPACE}/hyperpodpytorchjobs/other-run"
    )
    assert capsys.readouterr().out.startswith("HyperPodPyTorchJob training/other-run: Running")


def test_a_stack_without_draft_training_is_one_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeJobsApi(Cluster()) as api:
        folder = project(tmp_path, api.kubeconfig(tmp_path / "kubeconfig"), None)
        assert status(folder) == 2
        assert api.requests == []
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "mlcc draft status: error: stack dev has no hp:draftTraining, so it declares no "
        "training job: set hp:draftTraining (docs/draft-training.md), or give --namespace and "
        "--job"
    ]


def test_without_stack_or_names_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["draft", "status", "--namespace", "training"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "mlcc draft status: error: give --job, or --stack NAME to read them from the stack"
    ]


def test_an_unknown_stack_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = project(tmp_path, tmp_path / "kubeconfig", "job")
    assert main(["draft", "status", "--stack", "prod", "--project-dir", str(folder)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("mlcc draft status: error: ") and "prod" in line


def test_a_job_not_created_yet_says_how_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeJobsApi(Cluster()) as api:
        folder = project(tmp_path, api.kubeconfig(tmp_path / "kubeconfig"), "hyperpod")
        assert status(folder) == 3
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("mlcc draft status: error: no HyperPodPyTorchJob ")
    assert line.endswith(
        f"in namespace {NAMESPACE}; stack dev's hp:draftTraining job is created by `pulumi up`"
    )
