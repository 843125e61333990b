"""A Kubernetes API that trickles its headers a byte at a time: each request is given up at its
deadline, but its thread (and socket) runs on until the server ends the headers. The wait holds
at most MAX_UNFINISHED of them, then sends nothing more until one ends, and ends by its
deadline with one line."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from pathlib import Path

import deploy_samples as d
import pytest
from fake_kube_api import Behaviour, Scene
from hostile_kube import trickled_headers
from wait_stories import FAST, READY_LOGS, run_story

from mlcc.deploy.answers import MAX_UNFINISHED


def request_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name == "kubernetes-request" and t.is_alive()}


# The API grace leaves room for the bound to be reached first even on a starved machine: four
# requests given up at 0.6 s each take 2.4 s on an idle one (a 3 s grace lost that race under
# load, and the wait then rightly said the API kept failing).
@pytest.mark.parametrize("api_grace_s", [8.0, 30.0])
def test_headers_trickled_a_byte_at_a_time_leave_a_bounded_number_of_threads(
    tmp_path: Path, api_grace_s: float
) -> None:
    stop, peak, sampling = threading.Event(), [0], threading.Event()
    before = request_threads()

    def sample() -> None:
        while not sampling.wait(0.02):
            peak[0] = max(peak[0], len(request_threads() - before))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    settings = replace(FAST, timeout_s=12.0, api_grace_s=api_grace_s)
    try:
        outcome, _, elapsed, api = run_story(
            tmp_path,
            [Scene(0, d.endpoint("DeploymentComplete"), [d.pod(ready=True)], logs=READY_LOGS)],
            Behaviour(custom=trickled_headers(0.2, stop)),
            settings,
            request_timeout_s=0.3,
        )
    finally:
        sampling.set()
        stop.set()
    # Each request is given up after 0.6 s (its socket reads never time out: a byte comes every
    # 0.2 s): about 20 requests in 12 s without the bound, each thread living on. (On a starved
    # machine a socket read may still time out, ending its thread and letting one more go.)
    assert MAX_UNFINISHED <= len(api.requests) <= MAX_UNFINISHED + 2
    assert peak[0] <= MAX_UNFINISHED
    assert elapsed < settings.timeout_s + 2
    assert not outcome.serving and "\n" not in outcome.message
    if api_grace_s < settings.timeout_s:
        assert outcome.message.endswith(
            f"the Kubernetes API has not finished {MAX_UNFINISHED} earlier requests: none is "
            "sent until one of them ends (each was given up at its deadline)"
        )
    else:
        assert "did not serve within 0.2 minutes" in outcome.message
    deadline = time.monotonic() + 5  # once the server ends them, so do the threads
    while request_threads() - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not request_threads() - before
