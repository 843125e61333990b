"""The deploy wait's stories on a local Kubernetes API: timings, the endpoint, one run."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import deploy_samples as d
import verify_samples as s
from fake_kube_api import Behaviour, FakeKubeApi, Scene

from mlcc.deploy.cluster import Cluster
from mlcc.deploy.kubeconfig import api_client
from mlcc.deploy.snapshot import Target
from mlcc.deploy.waiter import Outcome, WaitSettings, wait_for_endpoints

FAST = WaitSettings(timeout_s=6.0, poll_s=0.05, grace_s=0.15, api_grace_s=0.2)
PATIENT = replace(FAST, timeout_s=30.0, grace_s=30.0, api_grace_s=30.0)
# A story that must end at once under PATIENT ends within this: far under its 30 s graces, so
# it proves no grace was waited out, and far over the second the story takes, so that a machine
# ten times slower passes it too.
AT_ONCE_S = 10.0
TARGET = Target("inference", "hp-dev", s.expectation(), generation=2)
READY_LOGS = {(d.POD, d.WORKER, False): s.VLLM_EAGLE3_LOG}


def deadline_at_the_first_watch(timeout_s: float) -> Callable[[FakeKubeApi], Callable[[], float]]:
    """A `clock_of` that stands still until the wait has read the story and begun its first
    pause (a watch), then is past the deadline: a story that ends at its deadline decides on
    what the wait read, not on how fast a loaded machine read it before a short deadline."""

    def clock_of(api: FakeKubeApi) -> Callable[[], float]:
        def clock() -> float:
            watches = sum("watch=" in request for request in list(api.requests))
            return 0.0 if watches < 1 else timeout_s + 1

        return clock

    return clock_of


def run_story(
    tmp_path: Path,
    scenes: list[Scene],
    behaviour: Behaviour | None = None,
    settings: WaitSettings = FAST,
    request_timeout_s: float = 5.0,
    target: Target = TARGET,
    clock_of: Callable[[FakeKubeApi], Callable[[], float]] | None = None,
) -> tuple[Outcome, list[str], float, FakeKubeApi]:
    """One wait on `scenes`; `clock_of(api)`, when given, is the wait's clock (the reads' too)
    in place of the machine's, so that a story decides its deadline on what the API saw.
    Each read has 5 s by default (the wait's deadline cuts it shorter): the fake shares this
    process, and a read slowed by a loaded machine is not an API failure."""
    lines: list[str] = []
    with FakeKubeApi(scenes, behaviour) as api:
        kubeconfig = api.kubeconfig(tmp_path / "kubeconfig")
        clock = clock_of(api) if clock_of else time.monotonic
        cluster = Cluster(api_client(str(kubeconfig)), request_timeout_s, clock)
        started = time.monotonic()
        [outcome] = wait_for_endpoints(
            cluster, [target], settings, lambda _target, line: lines.append(line), clock
        )
        elapsed = time.monotonic() - started
    return outcome, lines, elapsed, api
