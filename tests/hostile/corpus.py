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


# The cases of each (system, command) the suite runs by default, spread evenly over the group;
# MLCC_HOSTILE_CORPUS=all (or scripts/hostile_corpus.py) runs every case. A case planned costs
# 5-15 s on a shared 2-core machine (the offline program under Pulumi's mocks), a verify 2-8 s.
QUICK = {
    ("hub", "plan --preflight"): 5,
    ("aws", "plan --preflight"): 4,
    ("kubernetes", "verify --wait"): 9,
    ("prometheus", "verify --prometheus"): 4,
    ("engine", "bench"): 8,
    ("aws", "bench"): 2,
}


def quick(found: list[Case]) -> list[Case]:
    """The first known non-clean case of each reason (xfail: its strictness says when it is
    fixed), and QUICK's count of the others of each group, evenly spaced in the corpus's order."""
    first = {case.xfail: case.id for case in reversed(found) if case.xfail}
    chosen = set(first.values())
    for (system, command), count in QUICK.items():
        group = [c for c in found if (c.system, c.command) == (system, command) and not c.xfail]
        step = max(1.0, len(group) / count)
        chosen |= {group[int(i * step)].id for i in range(min(count, len(group)))}
    return [case for case in found if case.id in chosen]


def control_of(case: Case) -> Case:
    """The control of the case's command (bench through SageMaker: bench's)."""
    return controls()[case.command]
