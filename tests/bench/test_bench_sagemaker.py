"""`mlcc bench --sagemaker-endpoint` through a real boto3 client against a local server that
speaks the binary event stream: PayloadParts that split SSE lines, and a mid-stream error."""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from typing import Any

import pytest
from bench_fake_engine import EngineBehaviour, FakeEngine
from bench_fake_sagemaker import FakeSageMaker, encode_message, payload_part
from botocore.eventstream import EventStreamBuffer

from mlcc.bench import runner
from mlcc.cli import main

ENDPOINT = "hp-dev"
TIMEOUT_S = 0.3  # six times the fake's TRICKLE_S


pytestmark = pytest.mark.usefixtures("offline_aws")


def test_encoded_frames_decode_with_botocores_parser() -> None:
    buffer = EventStreamBuffer()
    buffer.add_data(payload_part(b"data: {}\n") + encode_message([(":a", "b")], b"x"))
    first, second = list(buffer)
    assert first.headers[":event-type"] == "PayloadPart"
    assert first.payload == b"data: {}\n"
    assert (second.headers, second.payload) == ({":a": "b"}, b"x")


def bench(
    monkeypatch: pytest.MonkeyPatch, fake: FakeSageMaker, out: Path, *extra: str, requests: int = 4
) -> int:
    monkeypatch.setenv("AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME", fake.url)
    return main(
        ["bench", "--sagemaker-endpoint", ENDPOINT, "--model", fake.engine.behaviour.model,
         "--requests", str(requests), "--concurrency", "2", "--out", str(out), *extra]
    )  # fmt: skip


def load(out: Path) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((out / "bench.json").read_text())
    return result


# The client's clock runs from before it signs and sends to after botocore decodes a frame, the
# fake's from the request it parsed to the frame it wrote: on a loaded machine (two busy processes
# per core) that gap reached 21 ms. SLACK_MS allows several times that, and the fake's tokens are
# far enough apart that a figure taken at the wrong frame is late by more than the slack.
SLACK_MS = 60.0


def test_same_figures_through_sagemaker(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    behaviour = EngineBehaviour(ttft_s=0.1, token_interval_s=0.03, chunk_tokens=(1, 3, 2, 4))
    with FakeEngine(behaviour) as engine, FakeSageMaker(engine, ENDPOINT) as fake:
        code = bench(monkeypatch, fake, tmp_path, "--metrics-url", engine.url + "/metrics")
    assert code == 0
    run = load(tmp_path)
    assert (run["completed"], run["target"]) == (4, f"sagemaker:{ENDPOINT}")
    # Compared with what the fake really did (its sleeps overshoot on a busy CPU). The client
    # cannot see a token before the fake writes it; a TTFT taken at the second frame would be
    # 3 x 30 ms late, past the slack.
    ttft = statistics.median(t.ttft_ms for t in fake.timings)  # about 100 ms
    itl = statistics.median(t.itl_ms for t in fake.timings)  # about 30 ms
    assert ttft <= run["ttft_ms"]["p50"] <= ttft * 1.15 + SLACK_MS
    assert abs(run["itl_ms"]["p50"] - itl) <= 0.15 * itl + SLACK_MS / 9  # 10 tokens, 9 gaps
    assert run["per_request"][0]["output_tokens"] == 10
    assert run["speculative"]["accepted_tokens"] == 4 * (2 + 1 + 3)
    path, headers, body = fake.requests[0]
    assert path == f"/endpoints/{ENDPOINT}/invocations-response-stream"
    assert headers["Content-Type"] == "application/json"
    assert body["stream"] is True and body["model"] == behaviour.model


def test_model_stream_error_fails_the_request(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeEngine(EngineBehaviour()) as engine, FakeSageMaker(engine, ENDPOINT, 2) as fake:
        assert bench(monkeypatch, fake, tmp_path) == 1
    assert load(tmp_path)["failed"] == 4
    last = capsys.readouterr().err.splitlines()[-1]
    assert last.startswith("mlcc bench: error: 4 of 4 requests failed: stream error:")
    assert "ModelStreamError" in last and "connection reset by the model" in last


def test_unknown_endpoint_is_a_clear_failure(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeEngine(EngineBehaviour()) as engine, FakeSageMaker(engine, "other") as fake:
        assert bench(monkeypatch, fake, tmp_path) == 1
    last = capsys.readouterr().err.splitlines()[-1]
    assert last == "mlcc bench: error: 4 of 4 requests failed: ValidationError: Endpoint not found"


@pytest.mark.parametrize("hostile", ["trickle-frames", "trickle-headers", "hang"])
def test_timeout_is_a_deadline_through_sagemaker(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, hostile: str
) -> None:
    """botocore's read timeout bounds each read; a byte every TRICKLE_S never trips it."""
    # trickle-headers is waited out to the grace's end: a shorter grace will do. The others end
    # at the deadline: a grace of 30 s, far over the bound, shows they do not wait for it.
    monkeypatch.setattr(runner, "GRACE_S", 0.5 if hostile == "trickle-headers" else 30.0)
    behaviour = EngineBehaviour()
    with FakeEngine(behaviour) as engine, FakeSageMaker(engine, ENDPOINT, hostile=hostile) as fake:
        start = time.monotonic()
        code = bench(monkeypatch, fake, tmp_path, "--timeout", str(TIMEOUT_S), requests=2)
        elapsed = time.monotonic() - start
    # Within the deadline, and the run's grace for a transport it cannot stop: botocore
    # before the answer's headers holds no socket within reach. Where it does hold one, the
    # run ends before that grace would.
    # Room for a machine ten times slower than the second such a run takes.
    limit = TIMEOUT_S + (runner.GRACE_S + 10 if hostile == "trickle-headers" else 15)
    assert elapsed < limit, f"{hostile}: {elapsed:.2f} s"
    assert code == 1
    run = load(tmp_path)
    assert run["errors"] == {f"no complete answer within {TIMEOUT_S:g} s (--timeout)": 2}
