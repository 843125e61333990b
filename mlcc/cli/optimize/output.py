"""What `mlcc optimize --list` and `--show` print: tables and reports, or JSON (pure)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, TextIO

from mlcc.config.aws.instances import gpu_count
from mlcc.engine_contract.values import printable
from mlcc.recommendation.parsing import (
    JobStatus,
    RecommendedSpeculation,
    as_str,
    parse_recommendations,
    status_note,
)

if TYPE_CHECKING:
    from mlcc.recommendation.api import JobSummary

# A report line: a description or a failure reason the API sends may be of any length.
MAX_LINE_CHARS = 2000


def print_job_list(jobs: Sequence[JobSummary], out: TextIO, *, as_json: bool) -> None:
    if as_json:
        rows = [
            {"name": j.name, "status": j.status, "created": _iso(j.created), "ended": _iso(j.ended)}
            for j in jobs
        ]
        print(json.dumps(rows, indent=2), file=out)
        return
    if not jobs:
        _emit(out, "no recommendation jobs")
        return
    width = max(len(job.name) for job in jobs)  # names are the model's: at most 63
    _emit(out, f"{'JOB':<{width}}  {'STATUS':<10}  CREATED")
    for job in jobs:
        _emit(out, f"{job.name:<{width}}  {job.status:<10}  {_iso(job.created)}")


def print_job_report(response: Mapping[str, Any], out: TextIO, *, as_json: bool) -> str:
    """Print a DescribeAIRecommendationJob reply; returns the job status."""
    name = as_str(response.get("AIRecommendationJobName")) or "(a job without a name)"
    status = as_str(response.get("AIRecommendationJobStatus")) or ""
    failure = response.get("FailureReason")
    recommendations = parse_recommendations(response) if status == JobStatus.COMPLETED else []
    if as_json:
        document = {
            "job": name,
            "status": status,
            "failureReason": failure if isinstance(failure, str) else None,
            "recommendations": [r.outputs() for r in recommendations],
        }
        print(json.dumps(document, indent=2), file=out)
        return status
    _emit(out, f"{name}: {status}" + (f": {failure}" if isinstance(failure, str) else ""))
    if note := status_note(status):
        _emit(out, f"  {note}: no recommendations are read")
    if status in (JobStatus.IN_PROGRESS, JobStatus.STOPPING):
        _emit(out, f"  not finished; wait with: mlcc optimize --wait --job {name}")
    if status == JobStatus.COMPLETED and not recommendations:
        _emit(out, "  the job returned no recommendations")
    for index, item in enumerate(recommendations, start=1):
        _print_recommendation(index, item, out)
    return status


def _print_recommendation(index: int, item: RecommendedSpeculation, out: TextIO) -> None:
    top = " (top)" if index == 1 else ""
    _emit(out, "")
    _emit(out, f"recommendation {index}{top}: {item.description or '(no description)'}")
    if item.instance_type:
        known = gpu_count(item.instance_type) is not None
        note = "" if known else " (not in the project's GPU table: its GPUs are unknown)"
        _emit(out, f"  instance:       {item.instance_type}{note}")
    if item.expected_performance:
        performance = "; ".join(m.render() for m in item.expected_performance)
        _emit(out, f"  expected:       {performance}")
    _emit(out, f"  optimizations:  {', '.join(item.optimization_types) or 'none'}")
    _emit(out, f"  speculative:    {item.summary()}")
    if item.optimization_config:
        _emit(out, f"  raw config:     {json.dumps(dict(item.optimization_config))}")
    for note in item.notes:
        _emit(out, f"  note:           {note}")
    if item.model_package_arn:
        _emit(out, f"  model package:  {item.model_package_arn}")


def _iso(value: datetime | None) -> str:
    return value.isoformat() if value else ""


def _emit(out: TextIO, line: str) -> None:
    """One line of the report: the service's names and reasons with control characters escaped
    (a newline inside a failure reason stays inside its line), at most MAX_LINE_CHARS."""
    shown = printable(line[: MAX_LINE_CHARS + 1])
    print(shown if len(shown) <= MAX_LINE_CHARS else shown[:MAX_LINE_CHARS] + "...", file=out)
