"""What `mlcc optimize --list` and `--show` print: tables and reports, or JSON (pure)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, TextIO

from mlcc.recommendation.parsing import JobStatus, RecommendedSpeculation, parse_recommendations

if TYPE_CHECKING:
    from mlcc.recommendation.api import JobSummary


def print_job_list(jobs: Sequence[JobSummary], out: TextIO, *, as_json: bool) -> None:
    if as_json:
        rows = [
            {"name": j.name, "status": j.status, "created": _iso(j.created), "ended": _iso(j.ended)}
            for j in jobs
        ]
        print(json.dumps(rows, indent=2), file=out)
        return
    if not jobs:
        print("no recommendation jobs", file=out)
        return
    width = max(len(job.name) for job in jobs)
    print(f"{'JOB':<{width}}  {'STATUS':<10}  CREATED", file=out)
    for job in jobs:
        print(f"{job.name:<{width}}  {job.status:<10}  {_iso(job.created)}", file=out)


def print_job_report(response: Mapping[str, Any], out: TextIO, *, as_json: bool) -> str:
    """Print a DescribeAIRecommendationJob reply; returns the job status."""
    name = str(response.get("AIRecommendationJobName", ""))
    status = str(response.get("AIRecommendationJobStatus", ""))
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
    print(f"{name}: {status}" + (f": {failure}" if failure else ""), file=out)
    if status in (JobStatus.IN_PROGRESS, JobStatus.STOPPING):
        print(f"  not finished; wait with: mlcc optimize --wait --job {name}", file=out)
    if status == JobStatus.COMPLETED and not recommendations:
        print("  the job returned no recommendations", file=out)
    for index, item in enumerate(recommendations, start=1):
        _print_recommendation(index, item, out)
    return status


def _print_recommendation(index: int, item: RecommendedSpeculation, out: TextIO) -> None:
    top = " (top)" if index == 1 else ""
    print(f"\nrecommendation {index}{top}: {item.description or '(no description)'}", file=out)
    if item.instance_type:
        print(f"  instance:       {item.instance_type}", file=out)
    if item.expected_performance:
        performance = "; ".join(m.render() for m in item.expected_performance)
        print(f"  expected:       {performance}", file=out)
    print(f"  optimizations:  {', '.join(item.optimization_types) or 'none'}", file=out)
    print(f"  speculative:    {item.summary()}", file=out)
    if item.optimization_config:
        print(f"  raw config:     {json.dumps(dict(item.optimization_config))}", file=out)
    for note in item.notes:
        print(f"  note:           {note}", file=out)
    if item.model_package_arn:
        print(f"  model package:  {item.model_package_arn}", file=out)


def _iso(value: datetime | None) -> str:
    return value.isoformat() if value else ""
