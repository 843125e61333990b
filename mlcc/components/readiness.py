"""`pulumi up` ends when the endpoints serve, or fails fast with the reason (docs/deploy.md).

`EndpointsReadiness` runs the deploy wait of `mlcc/deploy/waiter.py` (the same code as
`mlcc verify --wait`) once the InferenceEndpointConfigs are applied: its output resolves when every
endpoint serves and fails the update otherwise. It runs in the program, not in a provider, so
its progress goes to Pulumi's own output under each endpoint's custom resource, and the wait
follows the generation the Kubernetes provider just applied. In a preview, or where nothing was
applied (no generation: mock runs), nothing is waited for.

pulumi-kubernetes's own await (`pulumi.com/waitFor`) gates each custom resource on the operator
having taken it up; what it cannot do (fail on a crash loop with the engine's words, check
speculation) happens here.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

import pulumi
import pulumi_kubernetes as k8s

from mlcc.config.endpoints import EndpointConfig
from mlcc.deploy.cluster import Cluster
from mlcc.deploy.expectation import Expectation, expectation_for
from mlcc.deploy.kubeconfig import AccessError, api_client
from mlcc.deploy.snapshot import Target
from mlcc.deploy.waiter import Outcome, WaitSettings, wait_for_endpoints
from mlcc.serving.speculative import SpeculativeSpec

NOT_WAITED = "not waited for (preview)"
SERVING = "serving"


@dataclass(frozen=True)
class ReadinessTarget:
    custom_resource: k8s.apiextensions.CustomResource
    namespace: str
    endpoint: EndpointConfig
    # What the endpoint runs: its explicit settings or a recommendation job's result.
    speculative: pulumi.Input[SpeculativeSpec | None]

    def expectation(self, speculative: SpeculativeSpec | None) -> Expectation:
        return expectation_for(replace(self.endpoint, speculative=speculative))


@dataclass(frozen=True)
class EndpointsReadinessArgs:
    targets: Sequence[ReadinessTarget]
    kubeconfig: pulumi.Input[str]  # the kubeconfig as JSON, or a kubeconfig file's path
    settings: WaitSettings
    context: str = ""  # of a kubeconfig file; "" = its current-context


def applied_generation(metadata: object) -> int | None:
    """metadata.generation of the object the provider applied (None when nothing was)."""
    value = (
        metadata.get("generation")
        if isinstance(metadata, Mapping)
        else getattr(metadata, "generation", None)
    )
    # Numbers cross Pulumi's RPC as floats.
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value) if float(value).is_integer() else None


class EndpointsReadiness(pulumi.ComponentResource):
    """`serving` resolves to "serving" once every endpoint serves as configured."""

    serving: pulumi.Output[str]

    def __init__(
        self, name: str, args: EndpointsReadinessArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("hp:index:EndpointsReadiness", name, None, opts)
        targets = [_applied_target(t) for t in args.targets]
        self.serving = pulumi.Output.all(args.kubeconfig, *targets).apply(
            lambda values: _wait(args, values[0], list(values[1:]))
        )
        self.register_outputs({"serving": self.serving})


def _applied_target(target: ReadinessTarget) -> pulumi.Output[Target | None]:
    # The provider sets the applied object's fields as outputs; CustomResource has no typed ones.
    # The output holds plain data, so it is read as it is, not unwrapped level by level.
    metadata: pulumi.Output[Any] = cast(Any, target.custom_resource).metadata
    generation = metadata.apply(applied_generation)
    return pulumi.Output.all(generation, target.speculative).apply(
        lambda values: _target(target, values[0], values[1])
    )


def _kubeconfig(kubeconfig: object) -> Mapping[str, Any] | str:
    """A file's path as it is; the kubeconfig itself (JSON text, or a map) as a map."""
    if isinstance(kubeconfig, str) and not kubeconfig.lstrip().startswith("{"):
        return kubeconfig
    config = json.loads(kubeconfig) if isinstance(kubeconfig, str) else kubeconfig
    if not isinstance(config, Mapping):
        raise AccessError("the stack's kubeconfig is not a kubeconfig (a map)")
    return config


def _target(
    target: ReadinessTarget, generation: int | None, speculative: SpeculativeSpec | None
) -> Target | None:
    """The deploy wait's target, or None when nothing was applied."""
    if generation is None:
        return None
    expectation = target.expectation(speculative)
    return Target(target.namespace, target.endpoint.name, expectation, generation)


async def _wait(args: EndpointsReadinessArgs, kubeconfig: Any, applied: list[Target | None]) -> str:
    targets = [t for t in applied if t is not None]
    if pulumi.runtime.is_dry_run() or len(targets) < len(applied):
        return NOT_WAITED
    loop = asyncio.get_running_loop()
    resources = {t.endpoint.name: t.custom_resource for t in args.targets}

    def progress(target: Target, line: str) -> None:
        loop.call_soon_threadsafe(pulumi.log.info, line, resources[target.name])

    def run() -> list[Outcome]:
        cluster = Cluster(api_client(_kubeconfig(kubeconfig), args.context or None))
        return wait_for_endpoints(cluster, targets, args.settings, progress)

    try:
        outcomes = await loop.run_in_executor(None, run)
    except (AccessError, ValueError) as error:
        raise pulumi.RunError(f"hp:waitForEndpoints: cannot reach the cluster: {error}") from None
    failed = [o for o in outcomes if not o.serving and not o.stopped]
    for outcome in failed:
        pulumi.log.error(outcome.message, resources[outcome.target.name])
    if failed:
        names = ", ".join(o.target.name for o in failed)
        raise pulumi.RunError(
            f"{len(failed)} of {len(targets)} endpoints did not serve ({names}); the reason is "
            "logged on each. `mlcc verify --wait` runs the same check again."
        )
    return SERVING
