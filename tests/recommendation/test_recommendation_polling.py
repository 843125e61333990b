"""wait_for_job with a fake clock (no test sleeps) against a stubbed sagemaker client."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.stub import Stubber
from recommendation_stubs import (
    FakeClock,
    eagle3_recommendation,
    expect_describe,
    expect_stop,
    sagemaker_client,
)

from mlcc.recommendation import api, polling

JOB = "mlcc-speculative-0123456789"


def wait(client: Any, clock: FakeClock, timeout: float, **kwargs: Any) -> Any:
    return polling.wait_for_job(
        JOB,
        lambda: api.describe_job(client, JOB) or {},
        timeout_seconds=timeout,
        clock=clock,
        sleep=clock.sleep,
        stop=lambda: api.stop_job(client, JOB),
        **kwargs,
    )


def test_backoff_is_exponential_and_capped() -> None:
    delays = polling.Backoff(10, 2, 45).delays()
    assert [next(iter(delays)) for _ in range(5)] == [10, 20, 40, 45, 45]


def test_polls_until_completed_with_backoff_and_reports_progress() -> None:
    client, clock = sagemaker_client(), FakeClock()
    progress: list[polling.Progress] = []
    with Stubber(client) as stubber:
        for _ in range(4):
            expect_describe(stubber, JOB, "InProgress")
        expect_describe(stubber, JOB, "Completed", recommendations=[eagle3_recommendation()])
        response = wait(
            client, clock, 3600, backoff=polling.Backoff(15, 2, 60), on_progress=progress.append
        )
        stubber.assert_no_pending_responses()
    assert response["AIRecommendationJobStatus"] == "Completed"
    assert clock.sleeps == [15, 30, 60, 60]
    assert [p.status for p in progress] == ["InProgress"] * 4 + ["Completed"]
    assert progress[-1].render() == f"{JOB}: Completed (2m45s elapsed)"


@pytest.mark.parametrize("status", ["Failed", "Stopped"])
def test_failed_and_stopped_are_terminal(status: str) -> None:
    client, clock = sagemaker_client(), FakeClock()
    with Stubber(client) as stubber:
        expect_describe(stubber, JOB, "InProgress")
        expect_describe(stubber, JOB, status, failure_reason="CUDA out of memory")
        response = wait(client, clock, 3600)
    assert response["AIRecommendationJobStatus"] == status
    with pytest.raises(polling.JobFailed, match=f"ended {status}: CUDA out of memory"):
        polling.require_completed(response)


def test_stopped_without_reason_says_it_was_stopped() -> None:
    with pytest.raises(polling.JobFailed, match="stopped before finishing"):
        polling.require_completed(
            {"AIRecommendationJobName": JOB, "AIRecommendationJobStatus": "Stopped"}
        )


def test_stopping_is_not_terminal() -> None:
    client, clock = sagemaker_client(), FakeClock()
    with Stubber(client) as stubber:
        expect_describe(stubber, JOB, "Stopping")
        expect_describe(stubber, JOB, "Stopped")
        response = wait(client, clock, 3600)
        stubber.assert_no_pending_responses()
    assert response["AIRecommendationJobStatus"] == "Stopped"


def test_timeout_stops_the_job_and_never_oversleeps() -> None:
    client, clock = sagemaker_client(), FakeClock()
    with Stubber(client) as stubber:
        for _ in range(4):
            expect_describe(stubber, JOB, "InProgress")
        expect_stop(stubber, JOB)
        with pytest.raises(polling.JobTimedOut) as raised:
            wait(client, clock, 100, backoff=polling.Backoff(30, 2, 60))
        stubber.assert_no_pending_responses()
    assert clock.sleeps == [30, 60, 10]
    assert "still InProgress after 1.66667 minutes; it has been stopped" in str(raised.value)
    assert "timeoutMinutes" in str(raised.value)


def test_keyboard_interrupt_leaves_the_job_alone() -> None:
    client, clock = sagemaker_client(), FakeClock()

    def interrupted_sleep(_seconds: float) -> None:
        raise KeyboardInterrupt

    with Stubber(client) as stubber:
        expect_describe(stubber, JOB, "InProgress")
        with pytest.raises(KeyboardInterrupt):
            polling.wait_for_job(
                JOB,
                lambda: api.describe_job(client, JOB) or {},
                timeout_seconds=3600,
                clock=clock,
                sleep=interrupted_sleep,
                stop=lambda: api.stop_job(client, JOB),
            )
        stubber.assert_no_pending_responses()  # no StopAIRecommendationJob was queued or made


def test_a_status_the_api_does_not_list_is_shown_as_such_and_waited_to_the_timeout() -> None:
    client, clock = sagemaker_client(), FakeClock()
    seen: list[str] = []
    with Stubber(client) as stubber:
        for _ in range(3):  # at 0, 15 and 20 s
            expect_describe(stubber, JOB, "Pending\nSoon")
        expect_stop(stubber, JOB)
        with pytest.raises(polling.JobTimedOut):
            wait(client, clock, 20, backoff=polling.Backoff(15, 2, 60),
                 on_progress=lambda progress: seen.append(progress.render()))  # fmt: skip
        stubber.assert_no_pending_responses()
    assert seen[0] == (
        f"{JOB}: 'Pending\\nSoon', a status the SageMaker API does not list (InProgress, "
        "Completed, Failed, Stopping, Stopped) (0m00s elapsed)"
    )
