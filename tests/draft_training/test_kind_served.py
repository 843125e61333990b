"""Kubernetes-only mode: the program asks the cluster whether it serves HyperPodPyTorchJob before
declaring one (mlcc/components/draft_training.py, `check_kind_served`), against the local API of
tests/draft/fake_jobs_api.py. Without the check the provider previews the job as creatable and
`pulumi up` fails a minute later, after the endpoints were created (docs/e2e.md)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from fake_jobs_api import Cluster, FakeJobsApi
from training_stacks import training_config

from mlcc.components import draft_training as component
from mlcc.config.kubernetes_only import KubeconfigCluster


@pytest.fixture
def said(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    lines: dict[str, list[str]] = {"refused": [], "warned": []}
    monkeypatch.setattr(component, "refuse", lambda problems: lines["refused"].extend(problems))
    monkeypatch.setattr(component.pulumi.log, "warn", lambda text: lines["warned"].append(text))
    return lines


def check(api: FakeJobsApi, tmp_path: Path, operator: str = "hyperpod") -> None:
    kubeconfig = api.kubeconfig(tmp_path / "kubeconfig")
    config = training_config(operator=operator)
    component.check_kind_served(config, KubeconfigCluster(str(kubeconfig), "fake"))


def test_a_cluster_with_the_training_operator_passes(
    tmp_path: Path, said: dict[str, list[str]]
) -> None:
    with FakeJobsApi(Cluster(operator_installed=True)) as api:
        check(api, tmp_path)
        assert api.requests == ["/apis/sagemaker.amazonaws.com/v1"]
    assert said == {"refused": [], "warned": []}


def test_a_cluster_without_it_is_refused_naming_the_key(
    tmp_path: Path, said: dict[str, list[str]]
) -> None:
    with FakeJobsApi(Cluster(operator_installed=False)) as api:
        check(api, tmp_path)
    assert said["refused"] == [
        "hp:draftTraining.operator: is hyperpod, but the cluster (hp:kubeconfig) does not serve "
        "HyperPodPyTorchJob (sagemaker.amazonaws.com/v1): the HyperPod training operator add-on "
        "is not installed. Install it, or set operator: job to run a plain Kubernetes Job"
    ]


def test_a_plain_job_asks_nothing(tmp_path: Path, said: dict[str, list[str]]) -> None:
    with FakeJobsApi(Cluster(operator_installed=False)) as api:
        check(api, tmp_path, operator="job")
        assert api.requests == []
    assert said == {"refused": [], "warned": []}


def test_a_cluster_that_cannot_be_read_is_a_warning_not_a_refusal(
    tmp_path: Path, said: dict[str, list[str]]
) -> None:
    with FakeJobsApi(Cluster()) as api:
        kubeconfig = api.kubeconfig(tmp_path / "kubeconfig")
    with socket.socket() as sock:  # a port nothing listens on (the fake is closed)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    text = kubeconfig.read_text().replace(api.url, f"http://127.0.0.1:{port}")
    kubeconfig.write_text(text)
    component.check_kind_served(training_config(), KubeconfigCluster(str(kubeconfig), "fake"))
    assert said["refused"] == []
    assert len(said["warned"]) == 1, said
    assert said["warned"][0].startswith(
        "hp:draftTraining.operator: could not check that the cluster serves HyperPodPyTorchJob"
    )
