"""Kubernetes-only mode (hp:kubeconfig): only pulumi-kubernetes resources, and no AWS call."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any, ClassVar

import pulumi
import pytest
from program_runs import CR_TYPE, IMAGE, REPO, in_repo, run_main, stack_values

from mlcc.config import stack as config
from mlcc.config.kubernetes_only import KubeconfigCluster
from mlcc.plan import mocks as offline
from mlcc.preflight import run as preflight_run

KUBERNETES_ONLY_TYPES = [
    "hp:index:EndpointNamespace",
    "hp:index:EndpointsReadiness",
    "hp:index:InferenceEndpoint",
    "hp:index:InferenceEndpoint",
    "hp:index:KubeconfigAccess",
    CR_TYPE,
    CR_TYPE,
    "kubernetes:core/v1:Namespace",
    "pulumi:providers:kubernetes",
]


class NoCallMocks(offline.RecordingMocks):
    """Records every invoke (data source) the program makes: AWS lookups are invokes."""

    calls: ClassVar[list[str]] = []

    def call(self, args: Any) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        NoCallMocks.calls.append(args.token)
        return super().call(args)


@pytest.fixture(scope="module")
def run() -> offline.OfflineRun:
    patch = pytest.MonkeyPatch()
    patch.setattr(offline, "RecordingMocks", NoCallMocks)
    try:
        return run_main(stack="kubernetes")
    finally:
        patch.undo()


def test_only_kubernetes_resources_are_declared(run: offline.OfflineRun) -> None:
    assert sorted(r.type for r in run.registrations) == sorted(KUBERNETES_ONLY_TYPES)
    assert not [t for t in (r.type for r in run.registrations) if t.startswith("aws")]


def test_no_aws_call_is_made(run: offline.OfflineRun) -> None:
    assert NoCallMocks.calls == []


def test_the_provider_reads_the_kubeconfig_file_and_context(run: offline.OfflineRun) -> None:
    provider = run.one("pulumi:providers:kubernetes")
    # As the stack gives it: the provider expands `~` itself, and the state is the same on
    # every machine.
    assert provider.inputs["kubeconfig"] == "~/.kube/config"
    assert "context" not in provider.inputs  # "" = the file's current-context
    assert run.outputs["image"].startswith("123456789012.dkr.ecr.us-east-1.amazonaws.com/")


def test_the_endpoints_run_the_given_image(run: offline.OfflineRun) -> None:
    images = {r.inputs["spec"]["worker"]["image"] for r in run.of_type(CR_TYPE)}
    assert images == {run.outputs["image"]}


def run_for_real(tmp_path: Path, **overrides: str) -> offline.OfflineRun:
    """As `pulumi preview`/`up` run it: the program's own checks on (preflight off)."""
    values = stack_values("kubernetes", {"hp:preflight": "off", **overrides})
    with in_repo():
        return offline.run(
            offline.program_file(REPO / "__main__.py"),
            config=values.values,
            secret_keys=values.secret_keys,
            stack="kubernetes",
            preflight=True,
        )


def refusal(caplog: pytest.LogCaptureFixture, tmp_path: Path, **overrides: str) -> list[str]:
    """The `error:` lines of a refused run (the mock engine logs them on the root logger)."""
    with caplog.at_level(logging.ERROR), pytest.raises(pulumi.RunError, match="1 error above"):
        run_for_real(tmp_path, **overrides)
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


def test_a_missing_kubeconfig_is_one_error_before_anything_is_created(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    [line] = refusal(caplog, tmp_path, **{"hp:kubeconfig": str(tmp_path / "missing")})
    assert re.fullmatch(r"hp:kubeconfig: kubeconfig .*/missing: no such file or folder", line)


def test_a_context_the_kubeconfig_lacks_is_one_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(KUBECONFIG)
    overrides = {"hp:kubeconfig": str(kubeconfig), "hp:kubeContext": "other"}
    [line] = refusal(caplog, tmp_path, **overrides)
    assert line.startswith("hp:kubeContext: ") and "Expected object with name other" in line
    run = run_for_real(tmp_path, **{"hp:kubeconfig": str(kubeconfig), "hp:kubeContext": "lab"})
    assert run.one("pulumi:providers:kubernetes").inputs["context"] == "lab"


KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
contexts: [{name: lab, context: {cluster: c, user: u}}]
users: [{name: u, user: {token: t}}]
current-context: lab
"""


def values(**overrides: str) -> dict[str, str]:
    return {
        "hp:kubeconfig": "/tmp/kubeconfig",
        "hp:kubeContext": "lab",
        "hp:model": "meta-llama/Llama-3.1-8B-Instruct",
        "hp:image": IMAGE,
        "hp:namespace": "inference",
        **{k if ":" in k else f"hp:{k}": v for k, v in overrides.items()},
    }


def problems(**overrides: str) -> str:
    with pytest.raises(config.ConfigError) as error:
        config.parse(values(**overrides), stack="lab")
    return str(error.value)


def test_no_region_is_needed() -> None:
    parsed = config.parse(values(), stack="lab").config
    assert parsed.infrastructure.cluster == KubeconfigCluster("/tmp/kubeconfig", "lab")
    assert parsed.region == ""
    assert parsed.infrastructure.calls_no_aws


def test_a_region_that_is_set_must_still_be_one() -> None:
    assert "aws:region" in problems(**{"aws:region": "moon-1"})


def test_the_image_is_required() -> None:
    text = problems(image="")
    assert text.startswith("hp:image: is required in Kubernetes-only mode (hp:kubeconfig)")
    assert "@sha256" in text


def test_an_endpoint_of_another_release_is_refused() -> None:
    endpoints = '[{"name": "a"}, {"name": "b", "engineVersion": "0.34.0"}]'
    assert "hp:endpoints[1].engineVersion: runs vllm 0.34.0, but in Kubernetes-only" in problems(
        endpoints=endpoints
    )


def test_aws_only_features_are_refused() -> None:
    assert "hp:clusterName: selects an existing HyperPod cluster through AWS" in problems(
        clusterName="my-cluster"
    )
    assert "hp:observability: target amp creates an AMP" in problems(
        observability='{"target": "amp", "ampWorkspace": "ws-0123456789abcdef0123456789abcdef0"}'
    )


def test_a_context_without_a_kubeconfig_is_refused() -> None:
    with pytest.raises(config.ConfigError) as error:
        config.parse(
            {**values(kubeconfig=""), "aws:region": "us-east-1", "aws-native:region": "us-east-1"},
            stack="lab",
        )
    assert "hp:kubeContext: names a context of hp:kubeconfig, which is not set" in str(error.value)


def test_create_only_keys_are_ignored_with_a_warning() -> None:
    parsed = config.parse(values(kubernetesVersion="1.32"), stack="lab")
    assert [str(w) for w in parsed.warnings if "kubernetesVersion" in str(w)] == [
        "hp:kubernetesVersion: ignored: hp:kubeconfig selects a cluster that already exists"
    ]


def test_preflight_runs_only_the_models_part() -> None:
    parsed = config.parse(values(), stack="lab").config
    seen: list[str] = []

    def part(name: str) -> preflight_run.Part:
        def record(_config: config.StackConfig, _seconds: float) -> preflight_run.Outcome:
            seen.append(name)
            return preflight_run.Outcome()

        return record

    patch = pytest.MonkeyPatch()
    patch.setattr(preflight_run, "AWS_FREE_PARTS", [part("models")])
    patch.setattr(preflight_run, "PARTS", [part("models"), part("account"), part("prices")])
    try:
        preflight_run.run_parts(parsed, 1.0)
    finally:
        patch.undo()
    assert seen == ["models"]
