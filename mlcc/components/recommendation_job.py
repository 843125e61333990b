"""hp:optimize in the stack: the RecommendationJob component and each endpoint's speculative
settings.

`recommendation_job` declares the job only when some endpoint will use its result, i.e. lacks
explicit hp:speculative* keys; otherwise nothing is created (or paid for).
`speculative_for_endpoint` picks what one endpoint runs: explicit keys (without waiting for the
job), else a usable recommendation that fits the engine, else no speculation with a warning.
See docs/optimize.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
from pulumi import dynamic

from mlcc.config.optimize import OptimizeSettings
from mlcc.recommendation.choice import SpeculativeChoice, choose_speculative
from mlcc.recommendation.provider import RecommendationJobProvider, job_inputs
from mlcc.serving.engines import Engine, EngineRelease
from mlcc.serving.speculative import SpeculativeSpec

RESOURCE_NAME = "speculative-recommendation"
FORMER_RUN_TYPE = "pulumi-python:dynamic/hp:SpeculativeRecommendation"
# The outputs choose_speculative reads.
CHOICE_OUTPUTS = ("usable", "algorithm", "draft_model", "num_tokens", "reason")


class RecommendationJobRun(dynamic.Resource, module="hp", name="RecommendationJobRun"):
    """One run of a SageMaker AI recommendation job; outputs describe its top recommendation."""

    job_name: pulumi.Output[str]
    job_arn: pulumi.Output[str]
    workload_config_name: pulumi.Output[str]
    status: pulumi.Output[str]
    algorithm: pulumi.Output[str | None]
    draft_model: pulumi.Output[str | None]
    num_tokens: pulumi.Output[int | None]
    usable: pulumi.Output[bool]
    reason: pulumi.Output[str | None]
    notes: pulumi.Output[list[str]]
    optimization_types: pulumi.Output[list[str]]
    optimization_config: pulumi.Output[dict[str, str]]
    environment_variables: pulumi.Output[dict[str, str]]
    description: pulumi.Output[str | None]
    expected_performance: pulumi.Output[list[dict[str, Any]]]
    instance_type: pulumi.Output[str | None]
    model_package_arn: pulumi.Output[str | None]
    artifact_uris: pulumi.Output[list[str]]

    def __init__(
        self,
        name: str,
        inputs: dict[str, Any],
        opts: pulumi.ResourceOptions | None = None,
        provider: RecommendationJobProvider | None = None,
    ) -> None:
        super().__init__(provider or RecommendationJobProvider(), name, inputs, opts)


@dataclass(frozen=True)
class RecommendationJobArgs:
    stack: str
    settings: OptimizeSettings
    engine: Engine


class RecommendationJob(pulumi.ComponentResource):
    """A recommendation job for the stack (tagged with it) and its speculative result."""

    job_name: pulumi.Output[str]
    # The run's usable/algorithm/draft_model/num_tokens/reason, as choose_speculative reads them.
    recommended: pulumi.Output[dict[str, Any]]

    def __init__(
        self,
        name: str,
        args: RecommendationJobArgs,
        opts: pulumi.ResourceOptions | None = None,
        provider: RecommendationJobProvider | None = None,
    ) -> None:
        super().__init__("hp:index:RecommendationJob", name, None, opts)
        inputs = job_inputs(args.settings, args.engine.value, args.stack)
        # The run's identity before it had a component: a stack from then keeps its (paid) job.
        former = pulumi.Alias(name=name, type_=FORMER_RUN_TYPE, parent=pulumi.ROOT_STACK_RESOURCE)
        self.run = RecommendationJobRun(
            f"{name}-run", inputs, pulumi.ResourceOptions(parent=self, aliases=[former]), provider
        )
        self.job_name = self.run.job_name
        self.recommended = pulumi.Output.all(
            **{key: getattr(self.run, key) for key in CHOICE_OUTPUTS}
        )
        self.register_outputs({"jobName": self.job_name, "recommended": self.recommended})


@dataclass(frozen=True)
class SpeculativeWiring:
    spec: pulumi.Output[SpeculativeSpec | None]
    source: pulumi.Output[str]  # a SpeculativeSource value
    job: RecommendationJob | None


def recommendation_job(
    stack: str, optimize: OptimizeSettings | None, engine: Engine, needed: bool
) -> RecommendationJob | None:
    """The stack's job, or None without hp:optimize or when every endpoint sets its own keys."""
    if optimize is None:
        return None
    if not needed:
        pulumi.log.info(
            "hp:optimize: no recommendation job is created because explicit "
            "hp:speculativeAlgorithm settings win over its result"
        )
        return None
    return RecommendationJob(RESOURCE_NAME, RecommendationJobArgs(stack, optimize, engine))


def speculative_for_endpoint(
    job: RecommendationJob | None,
    explicit: SpeculativeSpec | None,
    engine: Engine,
    release: EngineRelease,
) -> SpeculativeWiring:
    if explicit is not None or job is None:  # known now: no need to wait for the job
        known = choose_speculative(explicit, None, engine, release)
        return SpeculativeWiring(
            pulumi.Output.from_input(known.spec), pulumi.Output.from_input(known.source.value), job
        )
    choice = job.recommended.apply(lambda values: _choose(values, engine, release))
    return SpeculativeWiring(
        choice.apply(lambda c: c.spec), choice.apply(lambda c: c.source.value), job
    )


def _choose(values: dict[str, Any], engine: Engine, release: EngineRelease) -> SpeculativeChoice:
    choice = choose_speculative(None, values, engine, release)
    if choice.message:
        pulumi.log.warn(f"hp:optimize: {choice.message}")
    return choice
