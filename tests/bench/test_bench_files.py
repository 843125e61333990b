"""`mlcc bench` with hostile files and paths: `--prompts`, `--baseline`, `--out`,
`--project-dir`. Each is one clean `error:` line naming the flag and the file, before a single
request is sent (the fake engine counts them), never a traceback or a hang."""

from __future__ import annotations

import socket
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from bench_fake_engine import EngineBehaviour, FakeEngine
from hostile_files import (
    HOSTILE_FILES,
    Outcome,
    a_folder,
    assert_one_clean_error,
    fifo,
    honours_permission_bits,
    in_process,
    odd_contents,
    run_mlcc,
    too_long,
    written,
)
from hypothesis import given, settings

BENCH_JSON = (
    '{"label": "base", "ttft_ms": {"p50": 10}, "itl_ms": {"p50": 2.5}, "e2e_ms": {"p50": 40},'
    ' "output_tokens_per_s": 90.0}'
)


@pytest.fixture(scope="module")
def engine() -> Iterator[FakeEngine]:
    with FakeEngine(EngineBehaviour()) as fake:
        yield fake


def bench_argv(engine: FakeEngine, out: Path, *extra: str) -> list[str]:
    return [
        "bench", "--url", engine.url, "--model", engine.behaviour.model, "--requests", "1",
        "--max-tokens", "4", "--out", str(out), *extra,
    ]  # fmt: skip


def run_bench(engine: FakeEngine, argv: list[str], *, subprocess: bool) -> Outcome:
    """The CLI entry; in a subprocess (bounded by its timeout) where the case could block."""
    sent = len(engine.received)
    outcome = run_mlcc(*argv) if subprocess else in_process(*argv)
    assert len(engine.received) == sent, "a request was sent before the refusal"
    return outcome


@pytest.mark.parametrize("flag", ["--prompts", "--baseline"])
@pytest.mark.parametrize("kind", sorted(HOSTILE_FILES))
def test_a_hostile_input_file_is_one_line_before_any_request(
    tmp_path: Path, engine: FakeEngine, flag: str, kind: str
) -> None:
    path = HOSTILE_FILES[kind](tmp_path)
    argv = bench_argv(engine, tmp_path / "out", flag, str(path))
    outcome = run_bench(engine, argv, subprocess=kind == "a FIFO")
    assert_one_clean_error(outcome, naming=f"{flag} {str(path)[:60]}")
    assert not (tmp_path / "out" / "bench.json").exists()


OUT_CASES: dict[str, Callable[[Path], Path]] = {
    "a FIFO": fifo,
    "a name too long for the file system": too_long,
    "a file": lambda folder: written(folder, "results", "keep me"),
    "a path through a file": lambda folder: written(folder, "plain", "keep me") / "out",
    "a bench.json that is a folder": lambda folder: (
        a_folder(a_folder(folder, "out"), "bench.json").parent
    ),
}


@pytest.mark.parametrize("kind", sorted(OUT_CASES))
def test_a_hostile_out_is_refused_before_the_run(
    tmp_path: Path, engine: FakeEngine, kind: str
) -> None:
    out = OUT_CASES[kind](tmp_path)
    outcome = run_bench(engine, bench_argv(engine, out), subprocess=kind == "a FIFO")
    assert_one_clean_error(outcome, naming="--out ")
    assert outcome.code == 2


def test_an_unwritable_out_is_refused_before_the_run(tmp_path: Path, engine: FakeEngine) -> None:
    """Root writes anywhere: the command runs without root's override of permission bits."""
    locked = a_folder(tmp_path, "locked")
    locked.chmod(0o555)
    sent = len(engine.received)
    outcome = run_mlcc(*bench_argv(engine, locked), permission_bits=True)
    assert len(engine.received) == sent
    assert_one_clean_error(outcome, naming=f"--out {locked}: cannot write in this folder")
    assert outcome.code == 2


def test_an_unreadable_prompt_file_is_refused(tmp_path: Path, engine: FakeEngine) -> None:
    prompts = written(tmp_path, "prompts.jsonl", '{"prompt": "hi"}\n')
    prompts.chmod(0o000)
    assert honours_permission_bits(prompts)
    argv = bench_argv(engine, tmp_path / "out", "--prompts", str(prompts))
    outcome = run_mlcc(*argv, permission_bits=True)
    assert_one_clean_error(outcome, naming=f"--prompts {prompts}: permission denied")


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (
            '{"label": 5, "ttft_ms": {}, "itl_ms": {}, "e2e_ms": {}, "output_tokens_per_s": 1}',
            "label",
        ),
        (BENCH_JSON.replace('"p50": 10', '"p50": "fast"'), "ttft_ms.p50 is not a number"),
        (BENCH_JSON.replace('{"p50": 2.5}', "[2.5]"), "itl_ms is not an object"),
        (BENCH_JSON[:-1] + ', "speculative": {"acceptance_rate": "high"}}', "acceptance_rate"),
        (BENCH_JSON[:-1] + ', "per_request": [1, 2]}', "per_request"),
        ("[1, 2]", "not a JSON object"),
        ("7", "not a JSON object"),
    ],
)
def test_a_baseline_whose_figures_are_not_numbers_is_refused(
    tmp_path: Path, engine: FakeEngine, content: str, reason: str
) -> None:
    baseline = written(tmp_path, "bench.json", content)
    outcome = in_process(*bench_argv(engine, tmp_path / "out", "--baseline", str(baseline)))
    assert_one_clean_error(outcome, naming=f"--baseline {baseline}: is not a bench.json")
    assert reason in outcome.err


@pytest.mark.parametrize("max_tokens", ["1e400", "9" * 50, "-3", "true", "1000000001", '"8"'])
def test_an_absurd_max_tokens_in_a_prompt_file_is_refused(
    tmp_path: Path, engine: FakeEngine, max_tokens: str
) -> None:
    prompts = written(tmp_path, "p.jsonl", f'{{"prompt": "hi", "max_tokens": {max_tokens}}}\n')
    outcome = in_process(*bench_argv(engine, tmp_path / "out", "--prompts", str(prompts)))
    assert_one_clean_error(outcome, naming=f"{prompts}:1: max_tokens must be a whole number")


@pytest.mark.parametrize("kind", ["a FIFO", "a name too long for the file system", "invalid UTF-8"])
def test_a_hostile_project_dir_is_one_line(tmp_path: Path, kind: str) -> None:
    project = HOSTILE_FILES[kind](tmp_path)
    argv = ["bench", "--stack", "dev", "--project-dir", str(project), "--out", str(tmp_path / "o")]
    # A FIFO could block the open: it runs in a subprocess, bounded by its timeout.
    outcome = run_mlcc(*argv) if kind == "a FIFO" else in_process(*argv)
    assert_one_clean_error(outcome, naming=str(project)[:60])
    assert outcome.code == 2


@pytest.fixture(scope="module")
def closed_port() -> Iterator[str]:
    """A URL whose port refuses connections: bound, never listening."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


@settings(max_examples=40)
@given(content=odd_contents)
@pytest.mark.parametrize("flag", ["--prompts", "--baseline"])
def test_any_input_file_content_is_read_or_refused_in_one_line(
    closed_port: str, flag: str, content: bytes
) -> None:
    """Whatever the file holds: refused naming the flag, or read (then the closed port ends the
    run before any figure)."""
    with tempfile.TemporaryDirectory() as folder:
        path = written(Path(folder), "input.json", content)
        argv = ["bench", "--url", closed_port, "--model", "m", "--out", folder, flag, str(path)]
        outcome = in_process(*argv)
    assert outcome.code in (1, 2)
    assert "Traceback" not in outcome.err
    (line,) = outcome.error_lines
    assert line.isprintable()
    assert f"{flag} {path}" in line or f"cannot reach {closed_port}" in line
