"""Prometheus's hostile answers (issue #37, item 4) to `mlcc verify --prometheus URL`: the classes
of tests/observability/test_live_hostile.py (series missing, stale, NaN, reset; not JSON; a query
that times out; answers too large or dripping), served by tests/observability/prometheus_fake.py
while the fake Kubernetes API (tests/deploy/fake_kube_api.py) serves an endpoint that serves.

Each is one `FAIL live: cannot check the live figures ...` line saying why, and no live figure
(no acceptance %, no tokens/s) from a bad answer."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from classify import Case, Invocation, Oracle, all_of, never, says
from kube_cases import REQUEST_S, serving, verified
from plan_cases import exit_in
from prometheus_fake import Answer, PrometheusFake
from test_live_hostile import CASES, PREFIX, healthy

Script = Callable[[str, float], Answer]


@contextmanager
def queried(where: Path, script: Script, url: str | None = None) -> Iterator[Invocation]:
    fake = PrometheusFake(script).start()
    try:
        live = ["--prometheus", url or fake.url, "--acceptance-floor", "0.5"]
        with verified(where, [serving()], None, None, *live, wait=False) as invocation:
            # every query within --request-timeout; a handful of queries
            yield Invocation(invocation.argv, invocation.env, 8 * REQUEST_S + 2)
    finally:
        fake.stop()


def live_case(name: str, script: Script, oracle: Oracle, url: str | None = None) -> Case:
    def serve(where: Path) -> AbstractContextManager[Invocation]:
        return queried(where, script, url)

    return Case(name, "prometheus", "verify --prometheus", serve, oracle)


def cannot_check(reason: str) -> Oracle:
    """One FAIL live line with the reason, and no figure on it."""
    reason = reason.removesuffix(" (fake)")
    return all_of(
        exit_in(1),
        says(PREFIX.removesuffix("5 min: ")),
        says(reason),
        never(r"^(PASS|FAIL) live: acceptance \d", r"live: .*\d% ", r"tokens/s over"),
    )


def control() -> Case:
    return live_case("healthy", healthy, all_of(exit_in(0), says("PASS live: acceptance 60.0%")))


def cases() -> list[Case]:
    found = [
        live_case(name, script, cannot_check(reason)) for name, (script, reason) in CASES.items()
    ]
    found.append(
        live_case(
            "nothing listens",
            healthy,
            cannot_check("cannot reach it: "),
            url="http://127.0.0.1:9",
        )
    )
    found.append(
        live_case(
            "a URL with no scheme",
            healthy,
            all_of(exit_in(1, 2), never(r"live: acceptance \d")),
            url="127.0.0.1:9",
        )
    )
    return found
