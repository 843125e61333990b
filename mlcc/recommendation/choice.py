"""Which speculative settings an endpoint runs: explicit hp:speculative* keys win over a
recommendation, which must fit the engine; otherwise speculation stays off (pure)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from mlcc.config.optimize import whole_number
from mlcc.recommendation.keys import ALGORITHMS_NEEDING_DRAFT
from mlcc.serving import speculative
from mlcc.serving.engines import Engine, EngineRelease

NOT_RUN_MESSAGE = (
    "the recommendation job has not run yet (it runs at `pulumi up`); until it has, the endpoint "
    "is shown without speculation, or set hp:speculativeAlgorithm to choose yourself"
)


class SpeculativeSource(StrEnum):
    EXPLICIT = "explicit"
    RECOMMENDATION = "recommendation"
    NONE = "none"


@dataclass(frozen=True)
class SpeculativeChoice:
    spec: speculative.SpeculativeSpec | None
    source: SpeculativeSource
    # Why a recommendation was not used (shown as a warning), or None.
    message: str | None = None


def choose_speculative(
    explicit: speculative.SpeculativeSpec | None,
    recommended: Mapping[str, Any] | None,
    engine: Engine,
    release: EngineRelease,
) -> SpeculativeChoice:
    """What the endpoint runs: hp:speculativeAlgorithm (and its keys) when set, else a usable
    recommendation that the engine accepts, else no speculation.

    `recommended` holds a recommendation job's outputs (usable, algorithm, draft_model,
    num_tokens, reason). Precedence is all-or-nothing: mixing an explicit algorithm with a
    recommended draft could pair a draft with the wrong method.
    """
    if explicit is not None:
        return SpeculativeChoice(explicit, SpeculativeSource.EXPLICIT)
    if recommended is None:  # no job: hp:optimize unset, or every endpoint sets its own keys
        return SpeculativeChoice(None, SpeculativeSource.NONE)
    if recommended.get("usable") is None:  # offline plan: the job has not run
        return SpeculativeChoice(None, SpeculativeSource.NONE, NOT_RUN_MESSAGE)
    spec, problem = recommended_spec(recommended, engine, release)
    if spec is None:
        return SpeculativeChoice(None, SpeculativeSource.NONE, f"{problem}; speculation stays off")
    return SpeculativeChoice(spec, SpeculativeSource.RECOMMENDATION)


def recommended_spec(
    recommended: Mapping[str, Any], engine: Engine, release: EngineRelease
) -> tuple[speculative.SpeculativeSpec | None, str | None]:
    """(the recommendation as a spec the engine accepts, None) or (None, why it cannot be used)."""
    algorithm = recommended.get("algorithm")
    if not recommended.get("usable") or algorithm not in speculative.ALGORITHMS:
        return None, str(recommended.get("reason") or "no speculative recommendation")
    num_tokens = whole_number(recommended.get("num_tokens")) or speculative.DEFAULT_NUM_TOKENS
    draft = recommended.get("draft_model") if algorithm in ALGORITHMS_NEEDING_DRAFT else None
    spec = speculative.SpeculativeSpec(str(algorithm), draft or None, num_tokens)
    errors = speculative.check(spec, engine, release).errors
    if errors:
        problems = "; ".join(str(e) for e in errors)
        return None, f"the recommendation ({spec.algorithm}) does not fit this stack: {problems}"
    return spec, None
