"""`EndpointsReadiness` under Pulumi's mocks, waiting on a local Kubernetes API.

The mocks answer the custom resource as the Kubernetes provider does after an apply (with
`metadata.generation`), so the component runs the real deploy wait in the Pulumi runtime: the
progress goes to Pulumi's log, a failure fails the program with the endpoint's reason.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import deploy_samples as d
import pulumi
import pytest
import verify_samples as s
import yaml
from fake_kube_api import FakeKubeApi, Scene
from program_runs import run_main

from mlcc.components.endpoint import InferenceEndpoint, InferenceEndpointArgs
from mlcc.components.readiness import (
    NOT_WAITED,
    SERVING,
    EndpointsReadiness,
    EndpointsReadinessArgs,
    ReadinessTarget,
)
from mlcc.deploy.waiter import WaitSettings
from mlcc.manifest import workload
from mlcc.plan import mocks as offline

CR_TYPE = "kubernetes:inference.sagemaker.aws.amazon.com/v1:InferenceEndpointConfig"
FAST = WaitSettings(timeout_s=5.0, poll_s=0.05, grace_s=0.15, api_grace_s=0.2)


class AppliedMocks(offline.RecordingMocks):
    """The CR comes back with the generation the API server gave it, as after a real apply."""

    def new_resource(
        self, args: pulumi.runtime.MockResourceArgs
    ) -> tuple[str | None, dict[str, Any]]:
        resource_id, outputs = super().new_resource(args)
        if args.typ == CR_TYPE:
            outputs["metadata"] = {**outputs["metadata"], "generation": 2}
        return resource_id, outputs


def run_program(kubeconfig: str, *, preview: bool = False, applied: bool = True) -> str:
    config = s.stack_config()
    endpoint = config.primary
    serving: list[str] = []

    def program() -> None:
        component = InferenceEndpoint(
            "endpoint",
            InferenceEndpointArgs(
                workload=workload.from_endpoint(config, endpoint),
                image=s.IMAGE,
                speculative=endpoint.speculative,
            ),
        )
        target = ReadinessTarget(
            component.custom_resource, config.namespace, endpoint, endpoint.speculative
        )
        readiness = EndpointsReadiness(
            "endpoints", EndpointsReadinessArgs([target], kubeconfig, FAST)
        )
        readiness.serving.apply(serving.append)

    mocks = AppliedMocks() if applied else offline.RecordingMocks()
    pulumi.runtime.set_mocks(mocks, project="hp", stack="dev", preview=preview)

    @pulumi.runtime.test  # type: ignore[untyped-decorator]
    def execute() -> None:
        program()

    execute()
    return serving[0] if serving else ""


def kubeconfig_json(api: FakeKubeApi, tmp_path: Path) -> str:
    """The kubeconfig as Pulumi's EKS component exports it: JSON text."""
    return json.dumps(yaml.safe_load(api.kubeconfig(tmp_path / "kc").read_text()))


def test_the_program_waits_until_the_endpoint_serves_and_logs_progress(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    scenes = [
        Scene(0, d.endpoint("DeploymentInProgress"), [d.pod()]),
        Scene(
            0.15,
            d.endpoint("DeploymentComplete"),
            [d.pod(ready=True)],
            logs={(d.POD, d.WORKER, False): s.VLLM_EAGLE3_LOG},
        ),
    ]
    caplog.set_level(logging.INFO)
    with FakeKubeApi(scenes) as api:
        assert run_program(kubeconfig_json(api, tmp_path)) == SERVING
    progress = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert any("DeploymentInProgress, 0/1 replicas ready" in line for line in progress)


def test_a_failing_endpoint_fails_the_program_with_its_reason(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    said = "Deployment hp-dev exceeded its progress deadline"
    scenes = [Scene(0, d.endpoint("DeploymentFailed", message=said))]
    with FakeKubeApi(scenes) as api, pytest.raises(pulumi.RunError) as raised:
        run_program(kubeconfig_json(api, tmp_path))
    assert str(raised.value).startswith("1 of 1 endpoints did not serve (hp-dev)")
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert any(said in line and "is DeploymentFailed" in line for line in errors)


def test_a_preview_or_a_run_that_applied_nothing_does_not_wait(tmp_path: Path) -> None:
    scenes = [Scene(0, d.endpoint("DeploymentFailed", message="would fail"))]
    with FakeKubeApi(scenes) as api:
        kubeconfig = kubeconfig_json(api, tmp_path)
        assert run_program(kubeconfig, applied=False) == NOT_WAITED
        assert run_program(kubeconfig, preview=True) in (NOT_WAITED, "")  # "": still unknown
        assert api.requests == []


def test_wait_for_endpoints_false_declares_no_wait() -> None:
    waiting = run_main(stack="dev").of_type("hp:index:EndpointsReadiness")
    assert [r.name for r in waiting] == ["readiness"]
    assert run_main({"hp:waitForEndpoints": "false"}).of_type("hp:index:EndpointsReadiness") == []
