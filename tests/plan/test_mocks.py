"""The offline run records registrations without the caller's stack trace, and gives the SDK its
own stack-trace capture back afterwards, whether the program succeeds or raises."""

from __future__ import annotations

import pulumi
import pytest
from pulumi.runtime import resource as pulumi_resource

from mlcc.plan import mocks as offline


def test_registrations_carry_no_stack_trace_and_the_capture_is_restored() -> None:
    capture = pulumi_resource._get_stack_trace
    seen: list[int] = []

    def program() -> None:
        seen.append(len(pulumi_resource._get_stack_trace().frames))
        pulumi.ComponentResource("test:index:Thing", "thing")

    run = offline.run(program, config={})
    assert seen == [0]
    assert [r.type for r in run.registrations] == ["test:index:Thing"]
    assert pulumi_resource._get_stack_trace is capture


def test_the_capture_is_restored_when_the_program_raises() -> None:
    capture = pulumi_resource._get_stack_trace

    def program() -> None:
        raise pulumi.RunError("bad config")

    with pytest.raises(pulumi.RunError):
        offline.run(program, config={})
    assert pulumi_resource._get_stack_trace is capture
