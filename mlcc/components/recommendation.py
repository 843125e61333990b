"""Wiring hp:optimize into the stack: the recommendation resource and the speculative choice.

Without hp:optimize nothing is created and the explicit hp:speculative* keys are used as they
are. With it, a SpeculativeRecommendation runs the job at `pulumi up`; the endpoint then gets
the explicit settings when hp:speculativeAlgorithm is set, else the recommendation when it is
usable and the engine accepts it, else no speculation (with a warning saying why).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi

from mlcc import recommendation as rec
from mlcc.engines import Engine, EngineRelease
from mlcc.providers.recommendation import (
    SpeculativeRecommendation,
    SpeculativeRecommendationArgs,
)
from mlcc.speculative import SpeculativeSpec

RESOURCE_NAME = "speculative-recommendation"


@dataclass(frozen=True)
class SpeculativeWiring:
    spec: pulumi.Output[SpeculativeSpec | None]
    source: pulumi.Output[str]
    recommendation: SpeculativeRecommendation | None


def job_name_prefix(stack: str) -> str:
    """`hp-<stack>-speculative`: `mlcc optimize --list --stack` finds these jobs too."""
    return f"hp-{stack}-speculative"


def recommendation_job(
    stack: str, optimize: rec.OptimizeSettings | None, engine: Engine, needed: bool
) -> SpeculativeRecommendation | None:
    if optimize is None or not needed:
        return None
    return SpeculativeRecommendation(
        RESOURCE_NAME,
        SpeculativeRecommendationArgs.from_settings(optimize, engine.value, job_name_prefix(stack)),
    )


def speculative_for_endpoint(
    job: SpeculativeRecommendation | None,
    explicit: SpeculativeSpec | None,
    engine: Engine,
    release: EngineRelease,
) -> SpeculativeWiring:
    if job is None or explicit is not None:
        source = rec.SpeculativeSource.EXPLICIT if explicit else rec.SpeculativeSource.NONE
        return SpeculativeWiring(
            pulumi.Output.from_input(explicit), pulumi.Output.from_input(source.value), None
        )
    outputs = pulumi.Output.all(
        usable=job.usable,
        algorithm=job.algorithm,
        draft_model=job.draft_model,
        num_tokens=job.num_tokens,
        reason=job.reason,
    )
    choice = outputs.apply(lambda values: _choose(engine, release, values))
    return SpeculativeWiring(
        choice.apply(lambda c: c.spec), choice.apply(lambda c: c.source.value), job
    )


def _choose(
    engine: Engine, release: EngineRelease, values: dict[str, Any]
) -> rec.SpeculativeChoice:
    choice = rec.choose_speculative(None, values, engine, release)
    if choice.message:
        pulumi.log.warn(f"hp:optimize: {choice.message}")
    return choice
