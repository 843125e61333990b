"""The signs that what the cluster shows is about the spec just applied (issue #43 item 5a):
status.observedGeneration holds the wait only when written; the pods' worker must carry the
spec's image and variables."""

from __future__ import annotations

import copy

import deploy_samples as d
import verify_samples as s

from mlcc.deploy.new_spec import observed_generation, pod_runs_spec
from mlcc.deploy.readiness import FAILED_STATE, generation_observed, read
from mlcc.deploy.snapshot import LogRequest, Snapshot, Target
from mlcc.deploy.verify import READY_STATE

TARGET = Target("inference", "hp-dev", s.expectation(), generation=2)
READY_LOGS = {LogRequest(d.POD, d.WORKER, previous=False): s.VLLM_EAGLE3_LOG}


def test_a_missing_observed_generation_holds_nothing() -> None:
    endpoint = d.endpoint(READY_STATE, observed=None)
    assert observed_generation(endpoint) is None
    assert generation_observed(TARGET, endpoint)
    reading = read(TARGET, Snapshot(endpoint, [d.pod(ready=True)], logs=READY_LOGS))
    assert reading.serving, reading.waiting_for


def test_a_written_older_generation_still_holds() -> None:
    assert not generation_observed(TARGET, d.endpoint(READY_STATE, observed=1))
    assert observed_generation(d.endpoint(READY_STATE, observed=True)) is None  # not a number


def test_pods_of_an_older_spec_are_not_replicas_of_the_new_one() -> None:
    endpoint = d.endpoint(READY_STATE, observed=None)
    old = copy.deepcopy(d.pod(ready=True))
    (worker,) = [c for c in old["spec"]["containers"] if c["image"] == s.IMAGE]
    changed = endpoint["spec"]["worker"]["environmentVariables"][0]
    for item in worker["env"]:
        if item["name"] == changed["name"]:
            item["value"] = changed["value"] + "-old"
    assert not pod_runs_spec(old, endpoint)
    assert pod_runs_spec(d.pod(ready=True), endpoint)
    reading = read(TARGET, Snapshot(endpoint, [old], logs=READY_LOGS))
    assert not reading.serving and reading.waiting_for == "1 ready replicas"
    renamed = copy.deepcopy(endpoint)
    renamed["spec"]["worker"]["image"] = s.IMAGE + "-new"
    assert not pod_runs_spec(d.pod(ready=True), renamed)


def test_a_failed_state_of_an_unknown_generation_waits_for_the_grace_period() -> None:
    reading = read(TARGET, Snapshot(d.endpoint(FAILED_STATE, observed=None, message="old")))
    assert reading.signs and not reading.signs[0].immediate
    known = read(TARGET, Snapshot(d.endpoint(FAILED_STATE, observed=2, message="new")))
    assert known.signs[0].immediate
