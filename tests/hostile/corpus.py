"""The hostile corpus: every case of the four outside systems (and the served endpoint), in a
stable order, and the healthy control of each command (the memory baseline, tests/hostile/
classify.py). Run it with `python -m pytest tests/hostile` or `python scripts/hostile_corpus.py`."""

from __future__ import annotations

import aws_cases
import engine_cases
import hub_cases
import kube_cases
import prometheus_cases
from classify import Case

MODULES = (hub_cases, aws_cases, kube_cases, prometheus_cases, engine_cases)
SYSTEMS = ("hub", "aws", "kubernetes", "prometheus", "engine")


def controls() -> dict[str, Case]:
    """The command -> its control, a run where every answer is good."""
    found = [module.control() for module in (hub_cases, kube_cases, prometheus_cases, engine_cases)]
    return {case.command: case for case in found}


def cases() -> list[Case]:
    found = [case for module in MODULES for case in module.cases()]
    ids = [case.id for case in found]
    assert len(set(ids)) == len(ids), "two cases of the same name"
    return found


def control_of(case: Case) -> Case:
    """The control of the case's command (bench through SageMaker: bench's)."""
    return controls()[case.command]
