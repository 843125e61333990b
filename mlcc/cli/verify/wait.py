"""`mlcc verify --wait`: the deploy wait `pulumi up` runs, then the checks (docs/deploy.md).

The wait is `mlcc.deploy.waiter.wait_for_endpoints`, the very code of
mlcc/components/readiness.py; its progress goes to stderr, and a failure is one
`FAIL wait: <reason>` line per endpoint, the same reason `pulumi up` reports.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import replace

from mlcc.config.deploy_wait import MAX_TIMEOUT_MINUTES
from mlcc.config.endpoints import EndpointConfig
from mlcc.deploy.cluster import Cluster
from mlcc.deploy.expectation import expectation_for
from mlcc.deploy.snapshot import Target
from mlcc.deploy.waiter import WaitSettings, failures, wait_for_endpoints
from mlcc.engine_contract.values import printable
from mlcc.userfiles.numbers import flag_type

# --timeout: at most what hp:deployTimeoutMinutes takes; --request-timeout: 0.1 to 600 s.
minutes = flag_type("minutes", 0, MAX_TIMEOUT_MINUTES, above=True)
seconds = flag_type("seconds", 0.1, 600)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--wait",
        action="store_true",
        help="first wait as `pulumi up` does until every endpoint serves (or fails with the "
        "reason), then check",
    )
    parser.add_argument(
        "--timeout",
        type=minutes,
        metavar="MINUTES",
        help="how long --wait waits; default: hp:deployTimeoutMinutes",
    )


def wait(
    cluster: Cluster,
    namespace: str,
    endpoints: Sequence[EndpointConfig],
    timeout_minutes: float,
    timings: WaitSettings | None = None,
) -> bool:
    """Print one PASS/FAIL `wait` line per endpoint; True when every endpoint serves.

    `timings`: the polling interval and graces (tests shorten them); the timeout is replaced.
    """
    targets = [Target(namespace, e.name, expectation_for(e)) for e in endpoints]

    def progress(_target: Target, line: str) -> None:
        print(f"mlcc verify: {printable(line)}", file=sys.stderr, flush=True)

    settings = replace(timings or WaitSettings(), timeout_s=timeout_minutes * 60)
    outcomes = wait_for_endpoints(cluster, targets, settings, progress)
    for line in failures(outcomes):
        print(f"FAIL wait: {printable(line)}")
    for outcome in outcomes:
        if outcome.serving:
            print(f"PASS wait: {printable(outcome.message)}")
    return all(o.serving for o in outcomes)
