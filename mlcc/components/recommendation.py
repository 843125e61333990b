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
from mlcc.config import StackConfig
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


def speculative_settings(config: StackConfig) -> SpeculativeWiring:
    optimize = config.optimize
    if optimize is None:
        source = (
            rec.SpeculativeSource.EXPLICIT if config.speculative else rec.SpeculativeSource.NONE
        )
        return SpeculativeWiring(
            pulumi.Output.from_input(config.speculative),
            pulumi.Output.from_input(source.value),
            None,
        )
    resource = SpeculativeRecommendation(
        RESOURCE_NAME,
        SpeculativeRecommendationArgs.from_settings(
            optimize, config.engine.value, job_name_prefix(config.stack)
        ),
    )
    if config.speculative is not None:  # explicit keys win; no need to wait for the job
        return SpeculativeWiring(
            pulumi.Output.from_input(config.speculative),
            pulumi.Output.from_input(rec.SpeculativeSource.EXPLICIT.value),
            resource,
        )
    outputs = pulumi.Output.all(
        usable=resource.usable,
        algorithm=resource.algorithm,
        draft_model=resource.draft_model,
        num_tokens=resource.num_tokens,
        reason=resource.reason,
    )
    choice = outputs.apply(lambda values: _choose(config, values))
    return SpeculativeWiring(
        choice.apply(lambda c: c.spec), choice.apply(lambda c: c.source.value), resource
    )


def _choose(config: StackConfig, values: dict[str, Any]) -> rec.SpeculativeChoice:
    choice = rec.choose_speculative(None, values, config.engine, config.engine_release)
    if choice.message:
        pulumi.log.warn(f"hp:optimize: {choice.message}")
    return choice
