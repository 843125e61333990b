"""`mlcc bench` against a hostile server on 127.0.0.1: it ends within --timeout whatever the
server does, counts cut streams as failed, and gives no figure that cannot be true."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from bench_fake_engine import HOSTILE_MODES, EngineBehaviour, FakeEngine

from mlcc.bench import runner
from mlcc.cli import main

CHAT = "/v1/chat/completions"
TIMEOUT = "0.3"  # six times the fake's TRICKLE_S
DEADLINE_ERROR = f"no complete answer within {TIMEOUT} s (--timeout)"
# Under timeout + runner.GRACE_S (LONG_GRACE_S here): a run that ends within it ended at the
# deadline, not by giving up on requests still blocked; and with room for a machine ten times
# slower than the 0.3 s such a run takes.
LONG_GRACE_S = 30.0
HOSTILE_RUN_LIMIT_S = 15.0


@pytest.fixture(autouse=True)
def long_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "GRACE_S", LONG_GRACE_S)


def bench(engine: FakeEngine, out: Path, *extra: str, requests: int = 3) -> int:
    return main(
        [
            "bench", "--url", engine.url, "--model", engine.behaviour.model,
            "--requests", str(requests), "--concurrency", "3", "--max-tokens", "16",
            "--out", str(out), *extra,
        ]
    )  # fmt: skip


def request_threads_left() -> list[str]:
    threads = [t for t in threading.enumerate() if t.name.startswith("bench-request-")]
    for thread in threads:
        thread.join(timeout=1)
    return [t.name for t in threads if t.is_alive()]


def load(out: Path) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((out / "bench.json").read_text())
    return result


@pytest.mark.parametrize("mode", HOSTILE_MODES)
def test_timeout_is_a_deadline_for_the_whole_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str
) -> None:
    """The server sends a byte (or an event) every TRICKLE_S, well within any per-read
    timeout: only a deadline for the whole request ends it."""
    with FakeEngine(EngineBehaviour(hostile={CHAT: mode})) as engine:
        start = time.monotonic()
        code = bench(engine, tmp_path, "--timeout", TIMEOUT)
        elapsed = time.monotonic() - start
        # Each request's socket was shut down at its deadline: none was left blocked behind.
        assert request_threads_left() == []
    assert elapsed < HOSTILE_RUN_LIMIT_S, f"{mode}: the run took {elapsed:.2f} s"
    assert code == 1
    run = load(tmp_path)
    assert (run["completed"], run["failed"]) == (0, 3)
    assert run["errors"] == {DEADLINE_ERROR: 3}
    last = capsys.readouterr().err.splitlines()[-1]
    assert last == f"mlcc bench: error: 3 of 3 requests failed: {DEADLINE_ERROR}"


@pytest.mark.parametrize("mode", ["hang", "trickle-headers", "trickle-body"])
def test_a_hostile_models_check_ends_within_the_timeout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str
) -> None:
    with FakeEngine(EngineBehaviour(hostile={"/v1/models": mode})) as engine:
        start = time.monotonic()
        code = bench(engine, tmp_path, "--timeout", TIMEOUT)
        elapsed = time.monotonic() - start
    assert elapsed < HOSTILE_RUN_LIMIT_S
    assert code == 1
    assert capsys.readouterr().err == (
        f"mlcc bench: error: cannot reach {engine.url}: {DEADLINE_ERROR}\n"
    )


@pytest.mark.parametrize("mode", ["hang", "trickle-body"])
def test_a_hostile_metrics_scrape_costs_one_timeout_and_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str
) -> None:
    # The requests answer at once, far within the timeout: only the scrape meets its deadline.
    behaviour = EngineBehaviour(hostile={"/metrics": mode}, ttft_s=0, token_interval_s=0)
    with FakeEngine(behaviour) as engine:
        start = time.monotonic()
        code = bench(engine, tmp_path, "--timeout", TIMEOUT)
        elapsed = time.monotonic() - start
    assert elapsed < HOSTILE_RUN_LIMIT_S  # the scrape before the run; none after it
    assert code == 0
    assert load(tmp_path)["completed"] == 3
    warning = f"no engine metrics (cannot read {engine.url}/metrics: {DEADLINE_ERROR})"
    assert warning in capsys.readouterr().err


def test_a_stream_without_done_failed(tmp_path: Path) -> None:
    with FakeEngine(EngineBehaviour(send_done=False)) as engine:
        assert bench(engine, tmp_path) == 1
    run = load(tmp_path)
    assert run["completed"] == 0
    assert run["errors"] == {"the stream ended before its data: [DONE]": 3}
    # No token was counted: the rate is unknown, not 0 tokens/s (nor a $ per token).
    assert run["output_tokens"] is None and run["output_tokens_per_s"] is None
    assert run["unknown"]["output_tokens_per_s"] == "no request completed (3 sent, all failed)"


def test_a_stream_without_its_usage_failed_when_the_others_have_one(tmp_path: Path) -> None:
    with FakeEngine(EngineBehaviour(usage_skip_every=2, chunk_tokens=(1, 2))) as engine:
        assert bench(engine, tmp_path, requests=4) == 0
    run = load(tmp_path)
    assert (run["completed"], run["failed"]) == (2, 2)
    assert run["output_tokens"] == 2 * 3
    assert list(run["errors"]) == [
        "the stream ended without its usage chunk (other streams of the run had one)"
    ]


@pytest.mark.parametrize(
    ("told", "reason"),
    [
        (-5, "usage.completion_tokens is negative (-5)"),
        (2.5, "usage.completion_tokens is 2.5, not a count"),
        ("7", 'usage.completion_tokens is "7", not a count'),
        (True, "usage.completion_tokens is true, not a count"),
        (1, "usage.completion_tokens is 1, fewer than its 3 chunks"),
        (10**30, f"usage.completion_tokens is {10**30}, over max_tokens 16"),
    ],
)
def test_an_impossible_usage_count_gives_unknown_token_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], told: Any, reason: str
) -> None:
    with FakeEngine(EngineBehaviour(usage_tokens=told, chunk_tokens=(1, 2, 3))) as engine:
        assert bench(engine, tmp_path) == 0
    run = load(tmp_path)
    assert run["completed"] == 3  # the latencies are true; the token counts are not
    assert run["ttft_ms"]["p50"] > 0
    assert run["output_tokens"] is None and run["output_tokens_per_s"] is None
    assert run["itl_ms"]["p50"] is None
    expected = f"3 request(s) reported an impossible token count; request 1: {reason}"
    assert run["unknown"]["output_tokens_per_s"] == expected
    out = capsys.readouterr().out
    assert f"output tokens/s unknown: {expected}" in out
    assert "output tokens/s" in out and "unknown" in out.split("output tokens/s", 1)[1]


def vllm_text(drafts: float, draft_tokens: float, accepted: float) -> str:
    return (
        f'vllm:spec_decode_num_drafts_total{{engine="0"}} {drafts}\n'
        f'vllm:spec_decode_num_draft_tokens_total{{engine="0"}} {draft_tokens}\n'
        f'vllm:spec_decode_num_accepted_tokens_total{{engine="0"}} {accepted}\n'
    )


@pytest.mark.parametrize(
    ("before", "after", "reason"),
    [
        (vllm_text(10, 40, 20), vllm_text(5, 60, 30), "went down from 10 to 5"),
        (vllm_text(10, 40, 20), vllm_text("+Inf", 60, 30), "read inf"),
        (vllm_text(10, 40, 20), vllm_text(20, "NaN", 30), "read nan"),
        (vllm_text(10, 40, 20), vllm_text(20, 60, 70), "50 tokens accepted of 20 drafted"),
        (vllm_text(10, 40, -1), vllm_text(20, 60, 3), "read -1"),
    ],
)
def test_bad_counters_give_unknown_speculative_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], before: str, after: str, reason: str
) -> None:
    with FakeEngine(EngineBehaviour(metrics_texts=[before, after])) as engine:
        assert bench(engine, tmp_path) == 0
    spec = load(tmp_path)["speculative"]
    assert spec["source"] == "vllm counters"
    assert reason in spec["unknown"]
    figures = ("acceptance_rate", "mean_accepted_tokens", "draft_tokens", "accepted_tokens")
    assert all(spec[name] is None for name in figures)
    assert reason in load(tmp_path)["unknown"]["speculative"]
    out = capsys.readouterr().out
    assert "speculative figures unknown:" in out
    assert "%" not in out  # no acceptance rate printed


def test_ctrl_c_partway_writes_the_requests_finished(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The third request hangs; Ctrl-C then ends the run with the first two written."""
    behaviour = EngineBehaviour(hostile={CHAT: "hang"}, hostile_from=3)
    with FakeEngine(behaviour) as engine:

        def interrupt_when_the_third_arrives() -> None:
            while len(engine.received) < 3:
                time.sleep(0.01)
            os.kill(os.getpid(), signal.SIGINT)

        threading.Thread(target=interrupt_when_the_third_arrives, daemon=True).start()
        start = time.monotonic()
        code = main(
            ["bench", "--url", engine.url, "--model", behaviour.model, "--requests", "5",
             "--concurrency", "1", "--timeout", "30", "--out", str(tmp_path)]
        )  # fmt: skip
        assert time.monotonic() - start < 10
    assert code == 130
    run = load(tmp_path)
    assert (run["interrupted"], run["sent"], run["completed"], run["failed"]) == (True, 3, 2, 1)
    assert run["output_tokens"] == 2 * engine.tokens_per_request()
    err = capsys.readouterr().err.splitlines()[-1]
    assert err == (
        f"mlcc bench: error: interrupted after 3 of 5 requests "
        f"(their figures are in {tmp_path / 'bench.json'})"
    )


def test_a_transport_timeout_at_the_deadline_is_the_deadline_before_the_watchdog_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """botocore's read timeout is set to --timeout: it can end the read a moment before the
    deadline's watchdog wakes. The request still failed at the deadline, and says so."""
    from mlcc.bench import runner
    from mlcc.bench.client import deadline as deadlines
    from mlcc.bench.client.transport import RequestError

    monkeypatch.setattr(deadlines._WATCHDOG, "watch", lambda deadline: None)  # never wakes

    def send(path: str, body: dict[str, Any], mark_sent: Any, deadline: Any) -> Any:
        mark_sent()
        time.sleep(max(0.0, deadline.at - time.monotonic()))
        raise RequestError('Read timeout on endpoint URL: "http://127.0.0.1/invocations"')
        yield b""  # a generator, as every sender is

    result = runner.timed_request(send, "/v1/chat/completions", {"max_tokens": 4}, 0.05)
    assert result.error == "no complete answer within 0.05 s (--timeout)"
