"""Reading DescribeAIRecommendationJob replies: job status and each recommendation's
speculative-decoding settings, in this project's terms (pure).

What the API does NOT give: no draft-model ARN, no token count, no SpeculativeDecodingConfig.
A recommendation reports `OptimizationDetails[]` entries of type `SpeculativeDecoding` /
`KernelTuning` whose `OptimizationConfig` is an undocumented string map, plus
`DeploymentConfiguration.EnvironmentVariables`; `mlcc.recommendation.keys` reads those.
Anything we cannot read becomes "no speculative recommendation" with the reason, never an
invented value. Every field is read defensively: a reply may lack fields the model requires.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from typing import Any

from mlcc.recommendation.keys import (
    ALGORITHMS,
    ALGORITHMS_NEEDING_DRAFT,
    FoundValues,
    find_in_env,
    find_in_map,
    normalise_algorithm,
    normalise_draft_model,
    parse_num_tokens,
    redact_environment,
)


class JobStatus(StrEnum):
    """AIRecommendationJobStatus, exactly as the API spells it (no IN_PROGRESS, no Pending)."""

    IN_PROGRESS = "InProgress"
    COMPLETED = "Completed"
    FAILED = "Failed"
    STOPPING = "Stopping"
    STOPPED = "Stopped"


TERMINAL_STATUSES = frozenset({JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.STOPPED})
KNOWN_STATUSES = frozenset(status.value for status in JobStatus)


def status_note(status: str) -> str | None:
    """What to say of a status the API's model does not list (botocore's enum for
    AIRecommendationJobStatus is JobStatus), or None."""
    if status in KNOWN_STATUSES:
        return None
    listed = ", ".join(status.value for status in JobStatus)
    return f"a status the SageMaker API does not list ({listed})"


SPECULATIVE_DECODING = "SpeculativeDecoding"


# A figure of ExpectedPerformance (a string in the model) is shown only when it is a number a
# measurement can be: finite, not negative, written in at most this many characters.
MAX_FIGURE_CHARS = 32


@dataclass(frozen=True)
class ExpectedMetric:
    metric: str
    value: str  # as the API gave it
    stat: str | None = None
    unit: str | None = None

    @property
    def unknown(self) -> str | None:
        """Why `value` is not shown as a figure, or None."""
        return figure_problem(self.value)

    def render(self) -> str:
        stat = f" ({self.stat})" if self.stat else ""
        unit = f" {self.unit}" if self.unit else ""
        if self.unknown:
            return f"{self.metric}{stat}: unknown ({self.unknown})"
        return f"{self.metric}{stat}: {self.value.strip()}{unit}"


def figure_problem(value: str) -> str | None:
    """Why an ExpectedPerformance value is no figure (negative, NaN, infinite, not a number,
    too long), or None."""
    text = value.strip()
    shown = repr(text[:MAX_FIGURE_CHARS]) + ("..." if len(text) > MAX_FIGURE_CHARS else "")
    if len(text) > MAX_FIGURE_CHARS:
        return f"the API gave {shown}, too long to be a figure"
    try:
        number = Decimal(text)
    except InvalidOperation:
        return f"the API gave {shown}, not a number"
    if not number.is_finite():
        return f"the API gave {shown}, not a finite number"
    if number < 0:
        return f"the API gave {shown}, a negative figure"
    return None


@dataclass(frozen=True)
class RecommendedSpeculation:
    """What one recommendation says about speculative decoding, in our terms."""

    job_name: str
    job_arn: str
    status: str
    algorithm: str | None = None
    draft_model: str | None = None
    num_tokens: int | None = None
    optimization_types: tuple[str, ...] = ()
    optimization_config: Mapping[str, str] = field(default_factory=dict)
    environment_variables: Mapping[str, str] = field(default_factory=dict)
    description: str | None = None
    expected_performance: tuple[ExpectedMetric, ...] = ()
    instance_type: str | None = None
    model_package_arn: str | None = None
    artifact_uris: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    reason: str | None = None

    @property
    def usable(self) -> bool:
        """True when the stack can apply it: a known algorithm and a Hub draft if it needs one."""
        return self.reason is None

    def summary(self) -> str:
        if not self.usable:
            return str(self.reason)
        parts = [f"algorithm={self.algorithm}"]
        if self.draft_model:
            parts.append(f"draft={self.draft_model}")
        if self.num_tokens is not None:
            parts.append(f"tokens={self.num_tokens}")
        return " ".join(parts)

    def outputs(self) -> dict[str, Any]:
        """Plain, JSON-compatible form (provider outputs, `mlcc optimize --show --json`)."""
        return {
            "job_name": self.job_name,
            "job_arn": self.job_arn,
            "status": self.status,
            "algorithm": self.algorithm,
            "draft_model": self.draft_model,
            "num_tokens": self.num_tokens,
            "usable": self.usable,
            "reason": self.reason,
            "notes": list(self.notes),
            "optimization_types": list(self.optimization_types),
            "optimization_config": dict(self.optimization_config),
            "environment_variables": dict(self.environment_variables),
            "description": self.description,
            "expected_performance": [
                {
                    "metric": m.metric,
                    "value": None if m.unknown else m.value.strip(),
                    "stat": m.stat,
                    "unit": m.unit,
                    **({"unknown": m.unknown} if m.unknown else {}),
                }
                for m in self.expected_performance
            ],
            "instance_type": self.instance_type,
            "model_package_arn": self.model_package_arn,
            "artifact_uris": list(self.artifact_uris),
        }


def parse_recommendations(response: Mapping[str, Any]) -> list[RecommendedSpeculation]:
    """Every recommendation of a DescribeAIRecommendationJob response, in the API's order."""
    job = job_identity(response)
    return [
        _parse_one(job, item)
        for item in as_list(response.get("Recommendations"))
        if isinstance(item, Mapping)
    ]


def top_recommendation(response: Mapping[str, Any]) -> RecommendedSpeculation:
    """Recommendations[0] (the docs deploy the first; there is no rank field), or why none."""
    name, arn, status = job_identity(response)
    if status != JobStatus.COMPLETED:
        failure = as_str(response.get("FailureReason"))
        detail = f": {failure}" if failure else ""
        return RecommendedSpeculation(
            name, arn, status, reason=f"no speculative recommendation: job is {status}{detail}"
        )
    recommendations = parse_recommendations(response)
    if not recommendations:
        return RecommendedSpeculation(
            name,
            arn,
            status,
            reason="no speculative recommendation: the job returned no recommendations",
        )
    return recommendations[0]


def job_identity(response: Mapping[str, Any]) -> tuple[str, str, str]:
    return (
        as_str(response.get("AIRecommendationJobName")) or "",
        as_str(response.get("AIRecommendationJobArn")) or "",
        as_str(response.get("AIRecommendationJobStatus")) or "",
    )


def _parse_one(job: tuple[str, str, str], item: Mapping[str, Any]) -> RecommendedSpeculation:
    details = [d for d in as_list(item.get("OptimizationDetails")) if isinstance(d, Mapping)]
    types = tuple(as_str(d.get("OptimizationType")) or "" for d in details)
    speculative_details = [d for d in details if d.get("OptimizationType") == SPECULATIVE_DECODING]
    config = (
        string_map(speculative_details[0].get("OptimizationConfig")) if speculative_details else {}
    )
    deployment = as_mapping(item.get("DeploymentConfiguration"))
    env = string_map(deployment.get("EnvironmentVariables"))
    found = find_in_map(config).merged_over(find_in_env(env))
    base = RecommendedSpeculation(
        *job,
        optimization_types=types,
        optimization_config=config,
        environment_variables=redact_environment(env),
        description=as_str(item.get("RecommendationDescription")),
        expected_performance=_expected_performance(item.get("ExpectedPerformance")),
        instance_type=as_str(deployment.get("InstanceType")),
        model_package_arn=as_str(as_mapping(item.get("ModelDetails")).get("ModelPackageArn")),
        artifact_uris=tuple(
            uri
            for channel in as_list(deployment.get("S3"))
            if (uri := as_str(as_mapping(channel).get("Uri")))
        ),
    )
    return _interpret(base, found, has_detail=bool(speculative_details))


def _interpret(
    base: RecommendedSpeculation, found: FoundValues, *, has_detail: bool
) -> RecommendedSpeculation:
    if found.empty:
        return _replace(base, reason=_nothing_found_reason(base, has_detail))
    notes: list[str] = []
    algorithm = normalise_algorithm(found.algorithm)
    num_tokens = parse_num_tokens(found.num_tokens, notes)
    draft, draft_problem = normalise_draft_model(found.draft_model)
    if algorithm is None:
        what = repr(found.algorithm) if found.algorithm else "no method key"
        unknown = (
            f"no speculative recommendation: unrecognised speculative method ({what}); "
            f"known methods map to {', '.join(ALGORITHMS)}"
        )
        return _replace(base, draft_model=draft, num_tokens=num_tokens, reason=unknown)
    if algorithm not in ALGORITHMS_NEEDING_DRAFT:
        if found.draft_model:
            notes.append(f"{algorithm} takes no draft model; ignored {found.draft_model!r}")
        return _replace(base, algorithm=algorithm, num_tokens=num_tokens, notes=tuple(notes))
    reason: str | None = None
    if draft is None:
        why = draft_problem or "the recommendation names no draft model"
        if base.artifact_uris:
            why += f" (its artifacts, possibly a trained draft: {', '.join(base.artifact_uris)})"
        reason = f"no speculative recommendation: {algorithm} needs a draft model and {why}"
    return _replace(
        base,
        algorithm=algorithm,
        draft_model=draft,
        num_tokens=num_tokens,
        notes=tuple(notes),
        reason=reason,
    )


def _nothing_found_reason(base: RecommendedSpeculation, has_detail: bool) -> str:
    if has_detail:
        keys = ", ".join(sorted(base.optimization_config)) or "none"
        return (
            "no speculative recommendation: the SpeculativeDecoding entry has no recognisable "
            f"method, draft model or token count (OptimizationConfig keys: {keys})"
        )
    applied = ", ".join(t for t in base.optimization_types if t) or "none"
    return (
        "no speculative recommendation: the top recommendation applies no SpeculativeDecoding "
        f"optimization (applied: {applied})"
    )


def _replace(base: RecommendedSpeculation, **changes: Any) -> RecommendedSpeculation:
    return replace(base, **changes)


def _expected_performance(value: Any) -> tuple[ExpectedMetric, ...]:
    metrics = []
    for entry in as_list(value):
        entry_map = as_mapping(entry)
        metric, number = as_str(entry_map.get("Metric")), as_str(entry_map.get("Value"))
        if metric and number is not None:
            metrics.append(
                ExpectedMetric(
                    metric, number, as_str(entry_map.get("Stat")), as_str(entry_map.get("Unit"))
                )
            )
    return tuple(metrics)


def as_mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else []


def as_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def string_map(value: Any) -> dict[str, str]:
    return {str(k): v for k, v in as_mapping(value).items() if isinstance(v, str)}
