"""Which head a copied s3:// draft runs (mlcc/deploy/draft_head.py): the copy's marker as the
real copy script prints it, `mlcc verify`'s line for it, and the deploy wait's decisions on it
and on vLLM's logged draft."""

from __future__ import annotations

import copied_head_samples as h
import deploy_samples as d
import verify_samples as s
from draft_copy_run import copy_log

from mlcc.deploy import draft_head
from mlcc.deploy.readiness import judge, read
from mlcc.deploy.snapshot import LogRequest, Snapshot
from mlcc.deploy.verify import Observed

COPY_LOG = LogRequest(d.POD, h.COPY, False)
ETAG = 'config.json ETag "0123abcd", version id none, last modified 2026-12-06T12:00:00+00:00'


def test_the_marker_is_read_from_what_the_copy_prints() -> None:
    printed = copy_log(h.HEAD)
    marker = draft_head.marker_of(f"an error line the CLI printed\n{printed}")
    assert marker is not None
    assert (marker.uri, marker.etag, marker.version) == (h.HEAD, '"0123abcd"', None)
    assert marker.shown == f"{h.HEAD} ({ETAG})"


def test_a_log_without_a_marker_has_none() -> None:
    for log in ("", "upload failed: access denied\n", "{not json\n", '{"config": {}}\n', "[1]\n"):
        assert draft_head.marker_of(log) is None, log
    assert draft_head.marker_of("{" * 100_000 + "\n") is None  # nesting past the parser's depth


def test_the_stack_uri_is_compared_as_the_copy_writes_it() -> None:
    written_without_slash = s.expectation(speculativeModel=h.HEAD.rstrip("/"))
    assert draft_head.stack_uri(written_without_slash) == h.HEAD
    assert draft_head.stack_uri(s.expectation()) is None  # a Hub draft: nothing copied


# --- mlcc verify ---------------------------------------------------------------------------


def observed() -> Observed:
    return Observed("inference", "hp-dev", h.endpoint(), [h.pod()], "selector app=hp-dev")


def test_verify_names_the_object_that_runs() -> None:
    logs = {d.POD: copy_log(h.HEAD)}
    [check] = draft_head.source_checks(observed(), logs, {}, h.expectation())
    assert check.line == f"PASS pod {d.POD} draft source: mlcc-draft-copy copied {h.HEAD} ({ETAG})"


def test_verify_fails_a_copy_of_another_head() -> None:
    logs = {d.POD: copy_log(h.OLD_HEAD)}
    [check] = draft_head.source_checks(observed(), logs, {}, h.expectation())
    assert not check.passed
    assert check.detail == (
        f"mlcc-draft-copy copied {h.OLD_HEAD} ({ETAG}), not the stack's {h.HEAD} "
        "(hp:speculativeModel): the pod runs another head"
    )


def test_verify_says_why_the_source_was_not_checked() -> None:
    why = '400 Bad Request: container "mlcc-draft-copy" in pod "hp-dev-7c9f8d-x2k4q" not found'
    [gone] = draft_head.source_checks(observed(), {}, {d.POD: why}, h.expectation())
    assert gone.line == (
        f"SKIP pod {d.POD} draft source: not checked: the log of init container mlcc-draft-copy "
        f"could not be read: {why}"
    )
    assert gone.passed
    [bare] = draft_head.source_checks(observed(), {d.POD: ""}, {}, h.expectation())
    assert bare.skipped and bare.detail.startswith("not checked: the log of init container ")


def test_verify_reads_no_copy_for_a_hub_draft_or_a_pod_not_ready() -> None:
    assert draft_head.source_checks(observed(), {}, {}, s.expectation()) == []
    starting = Observed("inference", "hp-dev", h.endpoint(), [h.pod(ready=False)], "")
    assert draft_head.source_checks(starting, {}, {}, h.expectation()) == []


# --- the deploy wait -----------------------------------------------------------------------


def test_the_wait_serves_and_names_the_copied_head() -> None:
    reading = read(h.TARGET, Snapshot(h.endpoint(), [h.pod()], logs=h.snapshot_logs()))
    assert reading.serving, reading
    assert reading.progress.endswith(
        f"1/1 replicas ready; speculation on, as configured; copied head {h.HEAD} ({ETAG})"
    )


def test_the_wait_fails_when_the_engine_loaded_another_draft() -> None:
    logs = h.snapshot_logs(draft=s.EAGLE3_DRAFT)
    reading = read(h.TARGET, Snapshot(h.endpoint(), [h.pod()], logs=logs))
    verdict, _ = judge(reading, {}, now=0.0, grace_s=60)
    assert verdict.outcome == "failed"
    assert verdict.message.startswith(
        f"InferenceEndpointConfig inference/hp-dev: pod {d.POD}: the engine loaded draft "
        f"{s.EAGLE3_DRAFT}, not the copied head at {h.COPY_PATH}: method=eagle3"
    )


def test_the_wait_fails_when_the_copy_names_another_head() -> None:
    logs = h.snapshot_logs(copied=h.OLD_HEAD)
    reading = read(h.TARGET, Snapshot(h.endpoint(), [h.pod()], logs=logs))
    verdict, _ = judge(reading, {}, now=0.0, grace_s=60)
    assert verdict.outcome == "failed"
    assert verdict.message.startswith(
        f"InferenceEndpointConfig inference/hp-dev: pod {d.POD}: the init container "
        f"mlcc-draft-copy copied {h.OLD_HEAD} ({ETAG}), not the stack's {h.HEAD}; "
    )


def test_an_unreadable_copy_log_is_said_and_never_waited_for() -> None:
    why = "no answer within 20 s"
    snapshot = Snapshot(
        h.endpoint(), [h.pod()], logs=h.snapshot_logs(copied=None), log_errors={COPY_LOG: why}
    )
    reading = read(h.TARGET, snapshot)
    assert reading.serving
    assert reading.progress.endswith(
        f"speculation on, as configured; the copied head's source not checked (pod {d.POD}: {why})"
    )
    unread = read(h.TARGET, Snapshot(h.endpoint(), [h.pod()], logs=h.snapshot_logs(copied=None)))
    assert unread.serving
    assert unread.progress.endswith(f"not checked (pod {d.POD}: its log was not read)")


def test_a_pod_that_copied_the_previous_head_runs_an_older_spec() -> None:
    # Its env is the new spec's (the same local path): only its copy's arguments differ.
    old = h.pod(head=h.OLD_HEAD)
    logs = h.snapshot_logs(copied=h.OLD_HEAD)
    reading = read(h.TARGET, Snapshot(h.endpoint(), [old], logs=logs))
    assert not reading.serving
    assert reading.signs == ()
    assert reading.waiting_for == "1 ready replicas"
    assert "0/1 replicas ready" in reading.progress


def test_a_hub_draft_reads_no_copy() -> None:
    assert draft_head.log_requests(s.expectation(), [d.pod(ready=True)]) == []
    assert draft_head.log_requests(h.expectation(), [h.pod()]) == [COPY_LOG]
    assert draft_head.log_requests(h.expectation(), [h.pod(ready=False)]) == []
