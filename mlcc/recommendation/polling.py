"""Waiting for a recommendation job: capped backoff, progress, timeouts (pure; the caller
passes the describe and stop calls)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from mlcc.recommendation.parsing import (
    TERMINAL_STATUSES,
    JobStatus,
    as_str,
    job_identity,
    status_note,
)


class RecommendationJobError(Exception):
    """A recommendation job did not produce a result."""


class JobFailed(RecommendationJobError):
    def __init__(self, job_name: str, status: str, reason: str | None) -> None:
        self.job_name, self.status, self.reason = job_name, status, reason
        if reason:
            detail = reason
        elif status == JobStatus.STOPPED:
            detail = "it was stopped before finishing (StopAIRecommendationJob)"
        else:
            detail = "the API gave no FailureReason"
        super().__init__(f"recommendation job {job_name} ended {status}: {detail}")


class JobTimedOut(RecommendationJobError):
    def __init__(self, job_name: str, minutes: float, last_status: str) -> None:
        self.job_name, self.minutes, self.last_status = job_name, minutes, last_status
        super().__init__(
            f"recommendation job {job_name} was still {last_status} after {minutes:g} minutes; "
            "it has been stopped. Raise hp:optimize.timeoutMinutes and run again"
        )


@dataclass(frozen=True)
class Backoff:
    """Capped exponential backoff: initial, initial*factor, ... up to maximum seconds."""

    initial_seconds: float = 15.0
    factor: float = 2.0
    maximum_seconds: float = 120.0

    def delays(self) -> Iterable[float]:
        delay = self.initial_seconds
        while True:
            yield delay
            delay = min(delay * self.factor, self.maximum_seconds)


@dataclass(frozen=True)
class Progress:
    job_name: str
    status: str
    elapsed_seconds: float

    def render(self) -> str:
        minutes, seconds = divmod(int(self.elapsed_seconds), 60)
        note = status_note(self.status)
        status = f"{self.status[:64]!r}, {note}" if note else self.status
        return f"{self.job_name}: {status} ({minutes}m{seconds:02d}s elapsed)"


def wait_for_job(
    job_name: str,
    describe: Callable[[], Mapping[str, Any]],
    *,
    timeout_seconds: float,
    clock: Callable[[], float],
    sleep: Callable[[float], None],
    stop: Callable[[], None],
    backoff: Backoff = Backoff(),
    on_progress: Callable[[Progress], None] | None = None,
) -> Mapping[str, Any]:
    """Describe until the status is terminal and return that response. A status the API does
    not list is not terminal: it is shown as such, and waited on up to the timeout.

    On timeout, call `stop` (the job keeps costing money otherwise) and raise JobTimedOut.
    KeyboardInterrupt passes through untouched so that a CLI can leave the job running.
    """
    start = clock()
    delays = iter(backoff.delays())
    while True:
        response = describe()
        status = as_str(response.get("AIRecommendationJobStatus")) or "unknown"
        elapsed = clock() - start
        if on_progress is not None:
            on_progress(Progress(job_name, status, elapsed))
        if status in TERMINAL_STATUSES:
            return response
        remaining = timeout_seconds - elapsed
        if remaining <= 0:
            stop()
            raise JobTimedOut(job_name, timeout_seconds / 60, status)
        sleep(min(next(delays), remaining))


def require_completed(response: Mapping[str, Any]) -> Mapping[str, Any]:
    """The response when Completed; JobFailed (with the API's FailureReason) otherwise."""
    name, _, status = job_identity(response)
    if status != JobStatus.COMPLETED:
        raise JobFailed(name, status, as_str(response.get("FailureReason")))
    return response
