"""`mlcc bench --concurrency C1,C2,...` end to end against two batched fake engines (the
endpoint and its twin, tests/bench/bench_load_engine.py): the figures against what the fakes
did, the crossover against the model's, the schedule against the model's throughput."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from bench_load_engine import MODEL, LoadBehaviour, LoadEngine, LoadModel

from mlcc.bench.sweep.schedule import schedule_problems
from mlcc.cli import main

REPO = Path(__file__).resolve().parents[2]
LEVELS = (1, 4, 16)
# Acceptance collapses with the batch: the speedup at k = 4 is 1.88 at 1, 1.18 at 4, 0.60 at 16,
# so the crossover (about 5.8) lies between two levels, well away from both.
COLLAPSING = LoadModel(accept_half_batch=16)


def sweep(
    endpoint: LoadEngine, twin: LoadEngine, out: Path, *extra: str, levels: str = "1,4,16"
) -> int:
    return main(
        ["bench", "--url", endpoint.url, "--twin-url", twin.url, "--model", MODEL,
         "--concurrency", levels, "--per-user", "2", "--requests", "2", "--max-tokens", "16",
         "--ignore-eos", "--out", str(out), *extra]
    )  # fmt: skip


def load(out: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((out / "bench.json").read_text())
    return document


@pytest.mark.parametrize(("metrics", "noise"), [("vllm", 0.0), ("sglang", 0.2)])
def test_a_sweep_finds_the_crossover_and_a_schedule_that_pays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], metrics: str, noise: float
) -> None:
    model, k = COLLAPSING, 4
    with (
        LoadEngine(LoadBehaviour(model, k, metrics=metrics, noise=noise, seed=3)) as endpoint,
        LoadEngine(LoadBehaviour(model, 0, metrics=metrics, noise=noise, seed=4)) as twin,
    ):
        assert sweep(endpoint, twin, tmp_path, "--recommend") == 0
    document = load(tmp_path)
    assert document["kind"] == "concurrency sweep" and document["finished_levels"] == 3
    assert [lv["concurrency"] for lv in document["levels"]] == list(LEVELS)
    # Every request answered, on both sides, at every level and repeat (3 by default).
    for level in document["levels"]:
        requests = max(2 * level["concurrency"], 2)
        assert level["endpoint"]["completed"] == level["twin"]["completed"] == 3 * requests
    assert endpoint.counters.requests == twin.counters.requests == 3 * (2 + 8 + 32)
    # The acceptance the engine counted, over the whole sweep.
    spec = [lv["endpoint"]["speculative"] for lv in document["levels"]]
    assert sum(s["verify_steps"] for s in spec) == endpoint.counters.verify_steps
    if metrics == "vllm":
        assert sum(s["accepted_tokens"] for s in spec) == endpoint.counters.accepted
        for s in spec:
            assert s["drafts_per_step"] == k and len(s["acceptance_per_position"]) == k
    # The crossover's range holds the model's, computed from it.
    truth = model.crossover(k, 1.0)
    assert truth is not None and 4 < truth < 16
    found = document["crossover"]
    assert found["above"] is None or found["above"] <= truth
    assert found["at_most"] is None or truth <= found["at_most"]
    if (estimate := found["estimate"]) is not None:  # within the range; an open end is None
        assert found["above"] is None or found["above"] <= estimate
        assert found["at_most"] is None or estimate <= found["at_most"]
    # The schedule follows hp:speculativeSchedule's rules (whether it pays is judged on the
    # model in test_sweep_model.py: here the step times depend on how loaded the machine is).
    recommendation = document["recommendation"]
    schedule = recommendation["schedule"]
    assert schedule_problems(schedule, k) == []
    assert recommendation["num_speculative_tokens"] == k
    assert [lv["concurrency"] for lv in recommendation["levels"]] == list(LEVELS)
    out = capsys.readouterr()
    assert out.err.count("bench: concurrency") == 3 * 3  # a line per level and repeat
    assert "recommended hp:speculativeSchedule" in out.out
    assert len([line for line in out.out.splitlines() if line.startswith("  batch ")]) == len(
        schedule
    )


def test_an_interrupted_sweep_keeps_its_finished_levels(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from mlcc.cli.bench import sweep as bench_sweep

    real = bench_sweep._measure

    def stop_at_four(*args: Any) -> dict[str, Any]:
        if args[3] == 4:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(bench_sweep, "_measure", stop_at_four)
    with (
        LoadEngine(LoadBehaviour(COLLAPSING, 2)) as endpoint,
        LoadEngine(LoadBehaviour(COLLAPSING, 0)) as twin,
    ):
        assert sweep(endpoint, twin, tmp_path, "--repeats", "2", levels="1,4") == 130
    document = load(tmp_path)
    assert document["interrupted"] and document["finished_levels"] == 1
    assert [lv["concurrency"] for lv in document["levels"]] == [1]
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err == (
        "mlcc bench: error: interrupted between runs; the 1 finished level(s) are in "
        f"{tmp_path / 'bench.json'}"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--concurrency", "1,,4"], "--concurrency: '1,,4' is not a list of whole numbers"),
        (["--concurrency", "1,4,4"], "--concurrency: 4 is given twice in '1,4,4'"),
        (["--concurrency", "1,4"], "a sweep compares the endpoint with its baseline twin"),
        (["--concurrency", "1,4", "--twin-url", "x"], "--twin-url: 'x' is not http://"),
        (["--repeats", "1", "--twin-url", "http://h"], "--repeats: '1' must be from 2 to 20"),
        (["--min-speedup", "nan", "--twin-url", "http://h"], "--min-speedup: 'nan' must be"),
        (["--apply", "--twin-url", "http://h"], "--apply writes the schedule --recommend"),
        (["--recommend", "--apply", "--twin-url", "http://h"], "--apply needs --stack"),
    ],
)
def test_sweep_usage_errors_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code = main(["bench", "--url", "http://127.0.0.1:1", "--model", "m", *argv,
                 "--out", str(tmp_path)])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"mlcc bench: error: {message}") and len(err.splitlines()) == 1


def test_apply_writes_the_schedule_to_the_stack_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(REPO / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    stack_file = tmp_path / "Pulumi.lab.yaml"
    stack_file.write_text(
        "config:\n  aws:region: us-east-1  # the region\n  aws-native:region: us-east-1\n"
        "  hp:model: org/m\n  hp:engine: vllm\n"
        "  hp:speculativeAlgorithm: ngram\n  hp:speculativeNumTokens: 4\n  hp:baseline: true\n"
    )
    with (
        LoadEngine(LoadBehaviour(COLLAPSING, 4)) as endpoint,
        LoadEngine(LoadBehaviour(COLLAPSING, 0)) as twin,
    ):
        code = sweep(endpoint, twin, tmp_path / "out", "--recommend", "--apply", "--stack", "lab",
                     "--project-dir", str(tmp_path), "--repeats", "2", levels="1,16")  # fmt: skip
    assert code == 0, capsys.readouterr().err
    schedule = load(tmp_path / "out")["recommendation"]["schedule"]
    text = stack_file.read_text()
    assert text.startswith(
        "config:\n  aws:region: us-east-1  # the region\n  aws-native:region: us-east-1\n"
        "  hp:model: org/m\n  hp:engine: vllm\n"
    )
    from ruamel.yaml import YAML

    assert YAML(typ="safe").load(text)["config"]["hp:speculativeSchedule"] == schedule
    assert "applied the recommended schedule to Pulumi.lab.yaml" in capsys.readouterr().out
