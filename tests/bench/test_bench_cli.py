"""`mlcc bench` end to end against the fake engine: figures against its ground truth."""

from __future__ import annotations

import json
import socket
import statistics
from pathlib import Path
from typing import Any

import pytest
from bench_fake_engine import EngineBehaviour, FakeEngine

from mlcc.cli import main

TOLERANCE = 0.15
# The fake shares this process (and the GIL) with the client on a loaded CI machine: the client's
# clock runs from before it connects to after it reads, the fake's from the request it parsed to
# the chunk it wrote. With twice as many busy processes as cores that gap reached 10-14 ms (21 ms
# through the SageMaker fake); the slack allows several times that, and the fake's chunks are far
# enough apart that a figure taken at the wrong chunk is late by more than the slack.
SLACK_MS = 40.0


def bench(engine: FakeEngine, out: Path, *extra: str, requests: int = 6) -> int:
    return main(
        [
            "bench", "--url", engine.url, "--model", engine.behaviour.model,
            "--requests", str(requests), "--concurrency", "3", "--max-tokens", "16",
            "--out", str(out), *extra,
        ]
    )  # fmt: skip


def load(out: Path) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((out / "bench.json").read_text())
    return result


def close(measured: float, truth: float, tolerance: float = TOLERANCE) -> bool:
    return abs(measured - truth) <= tolerance * truth


def close_ms(measured: float, truth: float) -> bool:
    return truth <= measured <= truth * (1 + TOLERANCE) + SLACK_MS


def median(values: list[float]) -> float:
    return statistics.median(values)


def test_latencies_follow_tokens_not_chunks(tmp_path: Path) -> None:
    behaviour = EngineBehaviour(ttft_s=0.03, token_interval_s=0.025, chunk_tokens=(1, 4, 1, 3, 4))
    with FakeEngine(behaviour) as engine:
        assert bench(engine, tmp_path) == 0
    run, truth = load(tmp_path), engine.timings
    assert (run["completed"], run["failed"]) == (6, 0)
    # The fake's own record, not its configured delays: a busy CPU makes its sleeps overshoot.
    assert close_ms(run["ttft_ms"]["p50"], median([t.ttft_ms for t in truth]))
    # 13 tokens in 5 chunks: per chunk about 75 ms, per token about 25 ms (a TTFT taken at the
    # second chunk would be 100 ms late, well past the slack).
    assert close(run["itl_ms"]["p50"], median([t.itl_ms for t in truth]))
    assert close_ms(run["e2e_ms"]["mean"], statistics.mean(t.e2e_ms for t in truth))
    assert run["per_request"][0]["output_tokens"] == 13
    assert run["per_request"][0]["chunks"] == 5


def test_throughput_is_tokens_over_wall_time(tmp_path: Path) -> None:
    behaviour = EngineBehaviour(ttft_s=0.08, token_interval_s=0.008, chunk_tokens=(1, 2, 2, 2))
    with FakeEngine(behaviour) as engine:
        assert bench(engine, tmp_path, requests=6) == 0
    run, truth = load(tmp_path), engine.timings
    # Two waves of three concurrent requests, 7 tokens each: all tokens over the time from the
    # first request to the last token the fake wrote.
    span = max(t.token_times[-1] for t in truth) - min(t.received for t in truth)
    assert close(run["output_tokens_per_s"], 6 * 7 / span)
    assert run["output_tokens"] == 42


def test_vllm_counters_summed_over_engines_and_differenced(tmp_path: Path) -> None:
    behaviour = EngineBehaviour(chunk_tokens=(1, 3, 1, 5, 2), drafts_per_step=4, engines=3)
    with FakeEngine(behaviour) as engine:
        engine.record(10**6 - 1)  # traffic before the run must not count
        assert bench(engine, tmp_path, "--engine", "vllm", requests=5) == 0
    spec = load(tmp_path)["speculative"]
    steps, accepted = 5 * 4, 5 * (2 + 0 + 4 + 1)
    assert spec["draft_tokens"] == steps * 4
    assert spec["accepted_tokens"] == accepted
    assert spec["acceptance_rate"] == pytest.approx(accepted / (steps * 4))
    assert spec["mean_accepted_tokens"] == pytest.approx(1 + accepted / steps)
    assert spec["acceptance_per_position"] == pytest.approx([3 / 4, 2 / 4, 1 / 4, 1 / 4])
    assert load(tmp_path)["label"] == "speculative"


def test_sglang_figures_from_its_counters(tmp_path: Path) -> None:
    behaviour = EngineBehaviour(metrics="sglang", chunk_tokens=(1, 2, 4, 3), drafts_per_step=3)
    with FakeEngine(behaviour) as engine:
        assert bench(engine, tmp_path, requests=4) == 0
    run = load(tmp_path)
    spec = run["speculative"]
    steps, accepted = 4 * 3, 4 * (1 + 3 + 2)
    assert spec["verify_steps"] == steps
    assert spec["accepted_tokens"] == accepted
    assert spec["acceptance_rate"] == pytest.approx(accepted / (steps * 3))
    assert spec["mean_accepted_tokens"] == pytest.approx(1 + accepted / steps)
    assert run["engine"] == "sglang"


@pytest.mark.parametrize("metrics", ["plain", None])
def test_no_speculative_metrics_gives_null(tmp_path: Path, metrics: str | None) -> None:
    with FakeEngine(EngineBehaviour(metrics=metrics)) as engine:
        assert bench(engine, tmp_path, requests=2) == 0
    run = load(tmp_path)
    assert run["speculative"] is None
    assert run["label"] == "no-speculation"


def test_speedup_against_a_baseline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Intervals of tens of ms: a loaded machine's scheduling delays (a few ms) stay small beside
    # them, so the measured ratios and the engines' own stay close.
    plain = EngineBehaviour(metrics="plain", ttft_s=0.05, token_interval_s=0.04)
    fast = EngineBehaviour(ttft_s=0.05, token_interval_s=0.02)
    with FakeEngine(plain) as base_engine:
        assert bench(base_engine, tmp_path / "base", "--label", "base") == 0
    with FakeEngine(fast) as new_engine:
        assert bench(new_engine, tmp_path / "new", "--baseline", str(tmp_path / "base")) == 0
    base, new = load(tmp_path / "base"), load(tmp_path / "new")
    speedup = new["speedup"]
    # The ratios of the two runs' own figures (each figure against the fake's record is
    # test_latencies_follow_tokens_not_chunks'): a ratio of two measured figures against a ratio
    # of two records compounds the client's delays on a loaded machine (tens of ms beside a
    # 50 ms TTFT) twice.
    for figure, ratio in (("itl_ms", "itl_p50"), ("ttft_ms", "ttft_p50")):
        assert speedup[ratio] == pytest.approx(base[figure]["p50"] / new[figure]["p50"], rel=1e-3)
    assert speedup["itl_p50"] > 1.3  # about 2: the faster engine is seen faster
    truth = new["output_tokens_per_s"] / base["output_tokens_per_s"]
    assert speedup["output_tokens_per_s"] == pytest.approx(truth)
    table = capsys.readouterr().out
    assert "speedup" in table and "base" in table


def test_most_requests_failing_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeEngine(EngineBehaviour(fail_every=1)) as engine:
        assert bench(engine, tmp_path, requests=4) == 1
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error == "mlcc bench: error: 4 of 4 requests failed: HTTP 500: engine overloaded"
    assert load(tmp_path)["failed"] == 4


def test_a_few_failures_are_reported_not_fatal(tmp_path: Path) -> None:
    with FakeEngine(EngineBehaviour(fail_every=3)) as engine:
        assert bench(engine, tmp_path, requests=6) == 0
    run = load(tmp_path)
    assert (run["completed"], run["failed"]) == (4, 2)
    assert run["errors"] == {"HTTP 500: engine overloaded": 2}


def test_wrong_model_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeEngine(EngineBehaviour()) as engine:
        code = main(["bench", "--url", engine.url, "--model", "nope", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 1
    assert err == (
        f"mlcc bench: error: model 'nope' is not served at {engine.url}; "
        "use --model with one of: fake/model\n"
    )


def test_wrong_model_without_a_models_list(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeEngine(EngineBehaviour(serve_models_list=False)) as engine:
        code = main(["bench", "--url", engine.url, "--model", "nope", "--requests", "2",
                     "--out", str(tmp_path)])  # fmt: skip
    assert code == 1
    assert "HTTP 404: The model `nope` does not exist." in capsys.readouterr().err


def test_unreachable_url_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    code = main(["bench", "--url", url, "--model", "m", "--out", str(tmp_path)])
    assert code == 1
    assert capsys.readouterr().err == f"mlcc bench: error: cannot reach {url}: connection refused\n"


def test_stream_without_usage_falls_back_to_chunks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeEngine(EngineBehaviour(report_usage=False, chunk_tokens=(1, 2, 2))) as engine:
        assert bench(engine, tmp_path, requests=2) == 0
    run = load(tmp_path)
    assert run["usage_reported"] is False
    assert run["per_request"][0]["output_tokens"] == 3
    assert "tokens counted as chunks" in capsys.readouterr().out


def test_prompts_file_drives_the_api_and_body(tmp_path: Path) -> None:
    prompts = tmp_path / "p.jsonl"
    prompts.write_text(
        '{"prompt": "hello", "max_tokens": 7}\n\n'
        '{"messages": [{"role": "user", "content": "hi"}]}\n'
    )
    with FakeEngine(EngineBehaviour()) as engine:
        assert bench(engine, tmp_path / "out", "--prompts", str(prompts), requests=3) == 0
        received = sorted(engine.received, key=lambda request: request[0])
    assert [(path, "prompt" in b, b["max_tokens"]) for path, b in received] == [
        ("/v1/chat/completions", False, 16),
        ("/v1/completions", True, 7),
        ("/v1/completions", True, 7),
    ]
    assert all(b["stream"] and b["stream_options"] == {"include_usage": True} for _, b in received)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--model", "m"], "give --url BASE_URL, --sagemaker-endpoint NAME or --stack NAME"),
        (["--url", "http://127.0.0.1:1"], "give --model NAME (the served model name)"),
        (["--url", "ftp://x", "--model", "m"], "--url: 'ftp://x' is not http://HOST[:PORT]"),
    ],
)
def test_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code = main(["bench", *argv, "--out", str(tmp_path)])
    assert code in (1, 2)
    err = capsys.readouterr().err
    assert err.startswith(f"mlcc bench: error: {message}")
    assert len(err.splitlines()) == 1


def test_bad_baseline_stops_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "bench.json").write_text('{"label": "x"}')
    with FakeEngine(EngineBehaviour()) as engine:
        assert bench(engine, tmp_path / "o", "--baseline", str(tmp_path)) == 1
        assert engine.received == []
    assert "is not a bench.json" in capsys.readouterr().err
