"""`--plot`: the latency figure with the optional matplotlib, one line without it."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench_fake_engine import EngineBehaviour, FakeEngine

from mlcc.bench import report
from mlcc.cli import main


def run_with_plot(engine: FakeEngine, out: Path, *extra: str) -> int:
    return main(
        ["bench", "--url", engine.url, "--model", engine.behaviour.model, "--requests", "3",
         "--plot", "--out", str(out), *extra]
    )  # fmt: skip


def test_plot_draws_new_against_baseline(tmp_path: Path) -> None:
    with FakeEngine(EngineBehaviour(metrics="plain")) as engine:
        assert main(["bench", "--url", engine.url, "--model", engine.behaviour.model,
                     "--requests", "3", "--out", str(tmp_path / "base")]) == 0  # fmt: skip
        assert run_with_plot(engine, tmp_path / "new", "--baseline", str(tmp_path / "base")) == 0
    png = (tmp_path / "new" / "latency.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 10_000


def test_plot_without_matplotlib_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(report, "plot_available", lambda: False)
    with FakeEngine(EngineBehaviour()) as engine:
        assert run_with_plot(engine, tmp_path) == 2
        assert engine.received == []
    assert capsys.readouterr().err == (
        "mlcc bench: error: --plot needs matplotlib: pip install 'mlcc-hyperpod[plot]'\n"
    )
