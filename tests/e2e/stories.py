"""What the operator stand-in plays for an endpoint: a `Story`, and the ones tests name.

Times are seconds from the moment the stand-in first sees a generation of the endpoint, kept
short so that a test runs in seconds.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Story:
    # DeploymentComplete no earlier than this after a generation was first seen (and only once
    # the Deployment's pods are all updated and ready).
    deploy_s: float = 0.3
    # The SageMaker endpoint's registration: CreationInProgress (UpdateInProgress) once the
    # deployment is complete, then this much later CreationCompleted (UpdateCompleted) ...
    register_s: float = 0.3
    # ... or CreationFailed with a False condition carrying this message.
    registration_error: str | None = None
    # The worker container crashes at start with this line last in its log, again and again.
    crash_error: str | None = None
    crash_backoff_s: float = 1.0  # between two restarts of a crashing container
    # The engine starts without the speculative settings its env asks for.
    speculation_lost: bool = False


def slow_success(delay_s: float = 2.0) -> Story:
    """Serves: the deployment completes after `delay_s`, the registration half as long later."""
    return Story(deploy_s=delay_s, register_s=delay_s / 2)


def crash_loop(error_line: str) -> Story:
    """The engine dies at start with `error_line`; the state stays DeploymentInProgress."""
    return Story(crash_error=error_line)


def registration_failure(message: str) -> Story:
    """The pods serve; the SageMaker endpoint's registration fails with `message`."""
    return Story(registration_error=message)


def wrong_speculation() -> Story:
    """Everything completes, but the engine log shows speculation off."""
    return Story(speculation_lost=True)
