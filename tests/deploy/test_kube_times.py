"""Times the Kubernetes API writes (creationTimestamp, lastTimestamp, eventTime,
lastTransitionTime), hostile ones too. The deploy wait and `mlcc verify` print no duration
computed from them (the wait's own durations, the timeout and how long the API kept failing,
come from the reader's monotonic clock); they order by them: which event is the last one shown,
which condition of the operator's is the newest. A time that is none (not text, no zone, no
date, far in the future) is older than any other, so it is never the one shown as newest."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import deploy_samples as d
import pytest
from fake_kube_api import Scene
from hypothesis import given
from hypothesis import strategies as st
from kube_fuzz import JSON
from wait_stories import FAST, deadline_at_the_first_watch, run_story

from mlcc.deploy.pods import last_event
from mlcc.deploy.readiness import operator_message
from mlcc.deploy.snapshot import FUTURE_SKEW_S, Snapshot, moment

NOW = datetime(2026, 12, 4, 5, 0, tzinfo=UTC).timestamp()
AT_4 = datetime(2026, 12, 4, 4, 0, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(
    ("written", "seconds"),
    [
        ("2026-12-04T04:00:00Z", AT_4),
        ("2026-12-04T04:00:00.250000Z", AT_4 + 0.25),  # MicroTime (eventTime)
        ("2026-12-04T04:00:00.250000001Z", AT_4 + 0.25),  # nanoseconds: microseconds kept
        ("2026-12-04T06:00:00+02:00", AT_4),
        ("2026-12-03T23:00:00-05:00", AT_4),
        ("2026-12-04t04:00:00z", AT_4),
    ],
)
def test_the_times_the_api_writes_are_read(written: str, seconds: float) -> None:
    assert moment(written, NOW) == pytest.approx(seconds)


@pytest.mark.parametrize(
    "written",
    [
        "2026-12-04T04:00:00",  # no zone: which hour is it?
        "2026-12-04 04:00:00Z",
        "2026-13-45T04:00:00Z",
        "0000-01-01T00:00:00Z",
        "9999-12-31T23:59:59Z",  # far past the reader's clock
        "Thursday",
        "",
        " 2026-12-04T04:00:00Z",
        1796356800,
        1.7e9,
        None,
        True,
        ["2026-12-04T04:00:00Z"],
        {"time": "2026-12-04T04:00:00Z"},
    ],
)
def test_a_time_that_is_none_is_unknown(written: object) -> None:
    assert moment(written, NOW) is None


def test_a_time_a_little_ahead_of_the_readers_clock_is_believed() -> None:
    ahead = datetime.fromtimestamp(NOW + FUTURE_SKEW_S - 1, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert moment(ahead, NOW) == NOW + FUTURE_SKEW_S - 1
    assert moment("9999-12-31T23:59:59Z") is not None  # without a clock, only the form counts


def event(reason: str, **times: str | None) -> dict[str, object]:
    found = d.event(d.POD, reason, f"{reason} happened")
    del found["lastTimestamp"]
    for key, value in times.items():
        if key == "created":
            found["metadata"]["creationTimestamp"] = value  # type: ignore[index]
        else:
            found[key] = value
    return found


def shown(*events: dict[str, object]) -> str | None:
    snapshot = Snapshot(d.endpoint("DeploymentInProgress"), events=events, read_at=NOW)
    return last_event(snapshot, [d.POD])


def test_the_last_event_is_the_newest_by_time_not_by_text() -> None:
    # As text "04:00:00Z" sorts after "04:00:00.5Z", and "05:00:00+02:00" after "04:00:00Z".
    assert shown(
        event("Pulled", lastTimestamp="2026-12-04T04:00:00Z"),
        event("Started", eventTime="2026-12-04T04:00:00.500000Z"),
    ) == ("Started: Started happened")
    assert shown(
        event("Pulled", lastTimestamp="2026-12-04T04:00:00Z"),
        event("Pulling", lastTimestamp="2026-12-04T05:00:00+02:00"),
    ) == ("Pulled: Pulled happened")


@pytest.mark.parametrize(
    "hostile",
    ["9999-12-31T23:59:59Z", "not a time", "2026-12-04T04:30:00", "", "2026-02-30T00:00:00Z"],
)
def test_an_event_of_no_believable_time_is_never_shown_as_the_last(hostile: str) -> None:
    assert shown(
        event("Scheduled", lastTimestamp="2026-12-04T04:00:00Z"),
        event("Bogus", lastTimestamp=hostile),
        event("Pulled", lastTimestamp="2026-12-04T04:10:00Z"),
    ) == ("Pulled: Pulled happened")
    # Alone, it is still the last event: what the API said, not a time it gave.
    assert shown(event("Bogus", lastTimestamp=hostile)) == "Bogus: Bogus happened"


def test_a_last_time_before_the_events_creation_counts_as_its_creation() -> None:
    early = event("Pulled", lastTimestamp="2020-01-01T00:00:00Z", created="2026-12-04T04:20:00Z")
    later = event("Started", lastTimestamp="2026-12-04T04:10:00Z")
    assert shown(later, early) == "Pulled: Pulled happened"


@given(st.lists(JSON, min_size=1, max_size=4), st.lists(JSON, min_size=1, max_size=4))
def test_any_times_give_a_last_event_of_the_list_and_no_traceback(
    last: list[object], created: list[object]
) -> None:
    events = [
        {**event(f"R{i}"), "lastTimestamp": t, "eventTime": t, "metadata": {"creationTimestamp": c}}
        for i, (t, c) in enumerate(zip(last, created, strict=False))
    ]
    said = shown(*events)
    assert said in {f"R{i}: R{i} happened" for i in range(len(events))}


def conditions(*times: str) -> dict[str, object]:
    found = d.endpoint("DeploymentFailed")
    found["status"]["conditions"] = [
        {
            "type": f"T{i}",
            "status": "False",
            "reason": f"R{i}",
            "message": f"said at {at}",
            "lastTransitionTime": at,
        }
        for i, at in enumerate(times)
    ]
    return found


def test_the_operators_newest_condition_is_the_newest_believable_one() -> None:
    found = conditions("2026-12-04T04:10:00Z", "9999-01-01T00:00:00Z", "2026-12-04T04:00:00")
    assert operator_message(found, NOW) == "R0: said at 2026-12-04T04:10:00Z"
    found = conditions("2026-12-04T06:00:00+02:00", "2026-12-04T04:00:00.500000Z")
    assert operator_message(found, NOW) == "R1: said at 2026-12-04T04:00:00.500000Z"


def test_the_wait_shows_the_last_event_of_a_believable_time(tmp_path: Path) -> None:
    recent = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    events = [
        {**d.event(d.POD, "Pulling", "pulling the image"), "lastTimestamp": recent},
        {**d.event(d.POD, "Forged", "from the year 9999"), "lastTimestamp": "9999-12-31T23:59:59Z"},
        {**d.event(d.POD, "Undated", "no zone"), "lastTimestamp": "2999-01-01T00:00:00"},
    ]
    scene = Scene(0, d.endpoint("DeploymentInProgress"), [d.pod()], events)
    at_the_watch = deadline_at_the_first_watch(0.6)
    outcome, lines, _, _ = run_story(
        tmp_path, [scene], settings=replace(FAST, timeout_s=0.6), clock_of=at_the_watch
    )
    assert lines and lines[0].endswith("last event: Pulling: pulling the image")
    assert outcome.message.startswith(
        "InferenceEndpointConfig inference/hp-dev did not serve within 0.01 minutes"
    )
