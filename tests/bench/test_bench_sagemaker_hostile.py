"""`mlcc bench --sagemaker-endpoint` against a hostile SageMaker runtime, through a real boto3
client redirected with AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME: frames botocore cannot read, answers
that are not the engine's, parts too large or without end, errors mid-stream, each error the
`sagemaker-runtime` model lists, throttling without end, credentials that stop working, stalls.
Every run ends within its deadline, with one error line, and every figure is true or unknown."""

from __future__ import annotations

import json
import sys
import threading
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from bench_fake_engine import EngineBehaviour, FakeEngine
from bench_fake_sagemaker import (
    FRAME_MODES,
    HUGE_PART_BYTES,
    ErrorAnswer,
    FakeSageMaker,
    error_answer,
    payload_part,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from mlcc.bench import runner
from mlcc.bench.client import sagemaker
from mlcc.bench.client.transport import MAX_ERROR_BODY_BYTES
from mlcc.cli import main

ENDPOINT = "hp-dev"
TIMEOUT = "0.5"  # the tests of the deadline itself
DEADLINE_ERROR = f"no complete answer within {TIMEOUT} s (--timeout)"
# Well under TIMEOUT + runner.GRACE_S (LONG_GRACE_S here): these runs end at their deadline, or
# before it; and with room for a machine ten times slower.
LONG_GRACE_S = 30.0
RUN_LIMIT_S = 15.0
# The other tests: a deadline no answer meets by accident on a busy machine, and a bound on
# the run well under it (a run that hung would reach it).
SLACK_TIMEOUT = "30"
SLACK_RUN_LIMIT_S = 15.0
# botocore's event-stream parser refuses a payload over 24 MiB from the frame's prelude
# (botocore/eventstream.py, _MAX_PAYLOAD_LENGTH), before the frame arrives.
BOTOCORE_MAX_PAYLOAD = 24 * 1024 * 1024


pytestmark = pytest.mark.usefixtures("offline_aws")


@pytest.fixture(autouse=True)
def warm_client(offline_aws: None) -> None:
    """A first client loads botocore's models (about a second on a busy machine): not part of
    the times these tests bound, nor of the memory they measure."""
    sagemaker.sagemaker_client("us-east-1", 1.0)


@pytest.fixture(autouse=True)
def long_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "GRACE_S", LONG_GRACE_S)


def bench(
    monkeypatch: pytest.MonkeyPatch,
    fake: FakeSageMaker,
    out: Path,
    *extra: str,
    requests: int = 2,
    timeout: str = SLACK_TIMEOUT,
) -> int:
    monkeypatch.setenv("AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME", fake.url)
    return main(
        ["bench", "--sagemaker-endpoint", ENDPOINT, "--model", fake.engine.behaviour.model,
         "--requests", str(requests), "--concurrency", "2", "--timeout", timeout,
         "--max-tokens", "16", "--usd-per-hour", "12", "--out", str(out), *extra]
    )  # fmt: skip


def load(out: Path) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((out / "bench.json").read_text())
    return result


def last_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.splitlines()[-1]


def request_threads_left() -> list[str]:
    threads = [t for t in threading.enumerate() if t.name.startswith("bench-request-")]
    for thread in threads:
        thread.join(timeout=2)
    return [t.name for t in threads if t.is_alive()]


def assert_nothing_known(run: dict[str, Any]) -> None:
    """No request completed: no latency, no rate, no $ per token, each null and said why."""
    assert run["completed"] == 0
    assert run["ttft_ms"]["p50"] is None and run["itl_ms"]["p50"] is None
    assert run["output_tokens_per_s"] is None
    assert run["unknown"]["output_tokens_per_s"].startswith("no request completed")
    assert run["cost"]["usd_per_million_output_tokens"] is None
    assert run["cost"]["unknown"] == "no output tokens/s to divide the price by"


FRAME_ERRORS = {
    "bad-crc": "the event stream cannot be read (ChecksumMismatch: Checksum mismatch",
    "bad-prelude-crc": "the event stream cannot be read (ChecksumMismatch: Checksum mismatch",
    "truncated-prelude": "the stream ended before its data: [DONE]",
    "unknown-header-type": "the event stream cannot be read (KeyError: 42)",
    # botocore skips an event whose type is no name of the model's ResponseStream
    "int-event-type": "the stream ended before its data: [DONE]",
    "frame-2gb": "the event stream cannot be read (InvalidPayloadLength: Payload length of "
    "2147483632 exceeded the maximum of 25165824)",
    "error-message": "stream error: x",
    "unknown-exception": "stream error: an error without a code or a message",
}


@pytest.mark.parametrize("mode", FRAME_MODES)
def test_a_frame_botocore_cannot_read_fails_the_request_in_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str
) -> None:
    with (
        FakeEngine(EngineBehaviour()) as engine,
        FakeSageMaker(engine, ENDPOINT, hostile=mode) as fake,
    ):
        start = time.monotonic()
        code = bench(monkeypatch, fake, tmp_path)
        elapsed = time.monotonic() - start
        assert request_threads_left() == []
    assert code == 1 and elapsed < SLACK_RUN_LIMIT_S, f"{mode}: {elapsed:.2f} s"
    run = load(tmp_path)
    assert_nothing_known(run)
    [(error, count)] = run["errors"].items()
    assert error.startswith(FRAME_ERRORS[mode]) and count == 2
    assert last_error(capsys).startswith(f"mlcc bench: error: 2 of 2 requests failed: {error}")


def test_payloads_that_are_not_the_engines_events_carry_no_output(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with (
        FakeEngine(EngineBehaviour()) as engine,
        FakeSageMaker(engine, ENDPOINT, hostile="not-sse") as fake,
    ):
        assert bench(monkeypatch, fake, tmp_path) == 1
    run = load(tmp_path)
    assert run["errors"] == {"the stream carried no output": 2}
    assert_nothing_known(run)
    assert (
        last_error(capsys)
        == "mlcc bench: error: 2 of 2 requests failed: the stream carried no output"
    )


def test_a_100_mib_payload_part_is_refused_from_its_prelude(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with (
        FakeEngine(EngineBehaviour()) as engine,
        FakeSageMaker(engine, ENDPOINT, hostile="huge-part") as fake,
    ):
        assert bench(monkeypatch, fake, tmp_path) == 1
        assert request_threads_left() == []
    [error] = load(tmp_path)["errors"]
    assert "InvalidPayloadLength: Payload length of 104857600" in error
    # The connection was closed, not read: of 2 x 100 MiB, the fake wrote what the sockets'
    # buffers took, far below even one frame botocore would accept.
    assert fake.sent_bytes < BOTOCORE_MAX_PAYLOAD < 2 * HUGE_PART_BYTES


def test_endless_tiny_parts_end_at_the_deadline_in_bounded_memory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with (
        FakeEngine(EngineBehaviour()) as engine,
        FakeSageMaker(engine, ENDPOINT, hostile="tiny-parts-forever") as fake,
    ):
        tracemalloc.start()
        try:
            start = time.monotonic()
            code = bench(monkeypatch, fake, tmp_path, timeout=TIMEOUT)
            elapsed = time.monotonic() - start
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert code == 1 and elapsed < RUN_LIMIT_S
    assert load(tmp_path)["errors"] == {DEADLINE_ERROR: 2}
    # Content events without end, in parts of a byte (tens of thousands of parts): counted as
    # they pass, none kept. The peak (the fake's own buffers included) stays under a fixed
    # 8 MiB, whatever the fake managed to send (about 8 MiB here when the machine is idle).
    assert peak < 8 * 1024 * 1024, peak
    assert fake.sent_bytes > 512 * 1024


def test_a_stream_that_stalls_midway_fails_at_its_deadline_not_as_a_fast_request(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with (
        FakeEngine(EngineBehaviour()) as engine,
        FakeSageMaker(engine, ENDPOINT, hostile="stall-mid-stream") as fake,
    ):
        start = time.monotonic()
        code = bench(monkeypatch, fake, tmp_path, timeout=TIMEOUT)
        elapsed = time.monotonic() - start
        assert request_threads_left() == []
    assert code == 1 and float(TIMEOUT) <= elapsed < RUN_LIMIT_S
    run = load(tmp_path)
    assert run["errors"] == {DEADLINE_ERROR: 2}
    assert_nothing_known(run)
    assert all(row["e2e_ms"] is None for row in run["per_request"])
    assert last_error(capsys) == f"mlcc bench: error: 2 of 2 requests failed: {DEADLINE_ERROR}"


@pytest.mark.parametrize("shape", ["ModelStreamError", "InternalStreamFailure"])
def test_an_error_event_mid_stream_fails_the_request(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str], shape: str
) -> None:
    with (
        FakeEngine(EngineBehaviour()) as engine,
        FakeSageMaker(engine, ENDPOINT, break_after=3, stream_error=shape) as fake,
    ):
        assert bench(monkeypatch, fake, tmp_path) == 1
    run = load(tmp_path)
    expected = f"stream error: {shape}: connection reset by the model"
    assert run["errors"] == {expected: 2}
    assert_nothing_known(run)  # output arrived, but no stream ended: nothing completed
    assert last_error(capsys) == f"mlcc bench: error: 2 of 2 requests failed: {expected}"


LOG_STREAM = "arn:aws:logs:us-east-1:123456789012:log-group:/aws/sagemaker/Endpoints/hp-dev"


@pytest.mark.parametrize(
    ("code", "fields", "expected"),
    [
        ("ValidationError", {"Message": "Endpoint hp-dev not found."},
         "ValidationError: Endpoint hp-dev not found."),
        ("ModelError",
         {"Message": "Received client error from primary", "OriginalStatusCode": 400,
          "OriginalMessage": '{"error": {"message": "max_tokens too large"}}',
          "LogStreamArn": LOG_STREAM},
         "ModelError: Received client error from primary (the model answered HTTP 400)"),
        ("ModelError", {"Message": "odd", "OriginalStatusCode": -7},  # no status HTTP carries
         "ModelError: odd"),
        ("ServiceUnavailable", {"Message": "down"}, "ServiceUnavailable: down"),
        ("InternalFailure", {"Message": "boom"}, "InternalFailure: boom"),
        ("ModelNotReadyException", {"Message": "loading the model"},
         "ModelNotReadyException: loading the model"),
        ("ValidationError", {"Message": "x" * 50_000}, "ValidationError: " + "x" * 200 + "..."),
    ],
)  # fmt: skip
def test_each_modeled_error_is_one_line(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    code: str,
    fields: dict[str, Any],
    expected: str,
) -> None:
    answer = error_answer(code, fields)  # its status and members from botocore's model
    with (
        FakeEngine(EngineBehaviour()) as engine,
        FakeSageMaker(engine, ENDPOINT, errors=[answer]) as fake,
    ):
        assert bench(monkeypatch, fake, tmp_path) == 1
    run = load(tmp_path)
    assert run["errors"] == {expected: 2}
    assert_nothing_known(run)
    assert last_error(capsys) == f"mlcc bench: error: 2 of 2 requests failed: {expected}"


def test_throttling_without_end_is_not_retried_whatever_the_environment_says(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "10")
    monkeypatch.setenv("AWS_RETRY_MODE", "adaptive")  # its rate limiter would sleep first
    throttled = error_answer("ThrottlingException", {"message": "Rate exceeded"})
    with (
        FakeEngine(EngineBehaviour()) as engine,
        FakeSageMaker(engine, ENDPOINT, errors=[throttled]) as fake,
    ):
        start = time.monotonic()
        assert bench(monkeypatch, fake, tmp_path, requests=6) == 1
        elapsed = time.monotonic() - start
    assert len(fake.requests) == 6  # one attempt each
    assert elapsed < SLACK_RUN_LIMIT_S
    assert load(tmp_path)["errors"] == {"ThrottlingException: Rate exceeded": 6}
    assert last_error(capsys).endswith("6 of 6 requests failed: ThrottlingException: Rate exceeded")


def test_the_client_bounds_each_read_and_never_retries() -> None:
    client = sagemaker.sagemaker_client("us-east-1", 7.5)
    config = client.meta.config
    assert (config.connect_timeout, config.read_timeout) == (7.5, 7.5)
    assert config.retries == {"total_max_attempts": 1, "mode": "standard"}


def test_credentials_that_expire_mid_run_fail_only_the_later_requests(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    expired = error_answer(
        "ExpiredTokenException",
        {"message": "The security token included in the request is expired"},
    )
    with (
        FakeEngine(EngineBehaviour()) as engine,
        FakeSageMaker(engine, ENDPOINT, errors=[expired], errors_from=4) as fake,
    ):
        assert bench(monkeypatch, fake, tmp_path, requests=6) == 0  # most completed
    run = load(tmp_path)
    assert (run["completed"], run["failed"]) == (4, 2)
    assert run["errors"] == {
        "ExpiredTokenException: The security token included in the request is expired": 2
    }
    assert run["output_tokens"] == 4 * engine.tokens_per_request()  # the completed ones only
    assert run["cost"]["usd_per_million_output_tokens"] is not None


CREDENTIAL_PROCESS = """\
import json, pathlib, sys
calls = pathlib.Path(sys.argv[1])
count = int(calls.read_text()) if calls.exists() else 0
calls.write_text(str(count + 1))
if count >= 1:
    sys.exit("the identity provider refused: session revoked")
print(json.dumps({"Version": 1, "AccessKeyId": "AKIDTESTING", "SecretAccessKey": "testing",
                  "SessionToken": "token", "Expiration": "2000-01-01T00:00:00Z"}))
"""


def test_a_credential_provider_that_starts_failing_fails_each_request_in_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The process gives credentials once, already expired, then fails: botocore asks it again
    before each request (its mandatory refresh) and each request fails with botocore's word."""
    script = tmp_path / "credentials.py"
    script.write_text(CREDENTIAL_PROCESS)
    config = tmp_path / "config"
    config.write_text(
        f"[default]\ncredential_process = {sys.executable} {script} {tmp_path / 'calls'}\n"
    )
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", None)  # a new process's: it reads the config
    out = tmp_path / "out"
    with FakeEngine(EngineBehaviour()) as engine, FakeSageMaker(engine, ENDPOINT) as fake:
        # A process per request: a second each on a busy machine.
        assert bench(monkeypatch, fake, out, timeout="30") == 1
    assert fake.requests == []  # nothing was sent unsigned
    [(error, count)] = load(out)["errors"].items()
    assert count == 2 and "custom-process" in error
    assert "the identity provider refused: session revoked" in error
    assert last_error(capsys) == f"mlcc bench: error: 2 of 2 requests failed: {error}"


@pytest.mark.parametrize("length", ["declared", "no-length"])
def test_a_huge_error_answer_is_not_read(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str], length: str
) -> None:
    hostile = None if length == "declared" else "no-length"
    with (
        FakeEngine(EngineBehaviour()) as engine,
        FakeSageMaker(engine, ENDPOINT, huge_error_bytes=HUGE_PART_BYTES, hostile=hostile) as fake,
    ):
        assert bench(monkeypatch, fake, tmp_path) == 1
        assert request_threads_left() == []
    expected = "an error answer (HTTP 500) of more than 64 KiB (not read)"
    assert load(tmp_path)["errors"] == {expected: 2}
    assert fake.sent_bytes < 16 * 1024 * 1024 < 2 * HUGE_PART_BYTES  # the sockets' buffers
    assert MAX_ERROR_BODY_BYTES == 64 * 1024
    assert last_error(capsys) == f"mlcc bench: error: 2 of 2 requests failed: {expected}"


@pytest.mark.parametrize("told", [0, -1, 2.0, 10**6])
def test_an_impossible_usage_count_through_sagemaker_gives_unknown_rates_and_cost(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str], told: Any
) -> None:
    with (
        FakeEngine(EngineBehaviour(usage_tokens=told)) as engine,
        FakeSageMaker(engine, ENDPOINT) as fake,
    ):
        assert bench(monkeypatch, fake, tmp_path) == 0
    run = load(tmp_path)
    assert run["completed"] == 2 and run["ttft_ms"]["p50"] > 0  # true without the count
    assert run["output_tokens_per_s"] is None and run["itl_ms"]["p50"] is None
    assert run["cost"]["usd_per_million_output_tokens"] is None
    out = capsys.readouterr().out
    assert "$ per 1M output tokens: unknown (no output tokens/s to divide the price by)" in out


def test_errors_are_checked_against_the_model() -> None:
    """The fake's error answers take only members of the model's shapes."""
    with pytest.raises(AssertionError, match="Unknown parameter"):
        error_answer("ModelError", {"Message": "x", "StatusCode": 400})
    assert error_answer("ModelError", {"Message": "x"}) == ErrorAnswer(
        424, "ModelError", b'{"Message": "x"}'
    )


def test_an_endpoint_url_botocore_cannot_use_is_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME", "http://[::1")
    code = main(["bench", "--sagemaker-endpoint", ENDPOINT, "--model", "m", "--out", str(tmp_path)])
    assert code == 1
    assert capsys.readouterr().err == (
        "mlcc bench: error: cannot create a SageMaker client: "
        "AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME='http://[::1' is not a value botocore accepts: "
        "fix or unset it\n"
    )


@pytest.fixture(scope="module")
def raw_sagemaker() -> Iterator[FakeSageMaker]:
    with (
        FakeEngine(EngineBehaviour(ttft_s=0, token_interval_s=0)) as engine,
        FakeSageMaker(engine, ENDPOINT, hostile="raw") as fake,
    ):
        yield fake


def good_stream(engine: FakeEngine) -> bytes:
    return b"".join(payload_part(data) for _, data, _ in engine.events(chat=True))


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_any_bytes_after_good_frames_end_in_one_result(
    raw_sagemaker: FakeSageMaker, data: st.DataObject
) -> None:
    """A good event stream, cut, corrupted or followed by any bytes: each request ends with one
    result, its error one line, within its deadline; never an exception."""
    good = good_stream(raw_sagemaker.engine)
    cut = data.draw(st.integers(0, len(good)), label="cut")
    flips = data.draw(st.lists(st.integers(0, max(len(good) - 1, 0)), max_size=3), label="flips")
    corrupted = bytearray(good[:cut])
    for at in flips:
        if at < len(corrupted):
            corrupted[at] ^= 0xFF
    raw_sagemaker.raw_body = bytes(corrupted) + data.draw(st.binary(max_size=64), label="tail")
    client = sagemaker.sagemaker_client("us-east-1", 5.0, endpoint_url=raw_sagemaker.url)
    send = sagemaker.sagemaker_sender(client, ENDPOINT)
    start = time.monotonic()
    result = runner.timed_request(send, "/v1/chat/completions", {"max_tokens": 64}, 5.0)
    assert time.monotonic() - start < 5.0 + 10  # its deadline, with room for a slow machine
    if result.ok:  # only a stream that reached its [DONE] intact
        assert raw_sagemaker.raw_body.startswith(good[: good.rindex(b"[DONE]")])
    else:
        assert result.error and "\n" not in result.error and len(result.error) < 400
