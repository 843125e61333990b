"""`mlcc bench`'s dollars per million output tokens and what speculation saves (mlcc.bench.cost).

The figures are checked against the run's own measured throughput (bench.json), and the
throughput against the fake engine's own record, so the arithmetic and the measurement are each
held to their truth.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest
from bench_fake_engine import EngineBehaviour, FakeEngine
from test_bench_cli import SLACK_MS, TOLERANCE, bench, load

from mlcc.bench import cost
from mlcc.preflight.cost import prices

REPO = Path(__file__).resolve().parents[2]


def cents(amount: Decimal) -> str:
    return str(amount.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def per_million(usd_per_hour: Decimal, tokens_per_s: float) -> Decimal:
    return usd_per_hour * 1_000_000 / (Decimal(str(tokens_per_s)) * 3600)


def test_dollars_per_million_tokens_and_the_saving_against_the_twin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    price = Decimal("7.09")  # test data, not AWS's figure
    slow = EngineBehaviour(ttft_s=0.02, token_interval_s=0.02, chunk_tokens=(1, 2, 2, 2))
    fast = EngineBehaviour(ttft_s=0.02, token_interval_s=0.005, chunk_tokens=(1, 2, 2, 2))
    with FakeEngine(slow) as engine:
        assert bench(engine, tmp_path / "base", "--usd-per-hour", str(price)) == 0
    base_truth = engine.timings
    with FakeEngine(fast) as engine:
        args = ["--usd-per-hour", str(price), "--baseline", str(tmp_path / "base")]
        assert bench(engine, tmp_path / "new", *args) == 0
    new_truth = engine.timings
    base, new = load(tmp_path / "base"), load(tmp_path / "new")
    # The throughputs the figures divide by are the fakes' own: the run's span is the fake's,
    # give or take the client's own time around it (SLACK_MS on a loaded machine), which is a
    # large share of the fast run's fifth of a second.
    for run, truth in ((base, base_truth), (new, new_truth)):
        span = max(t.token_times[-1] for t in truth) - min(t.received for t in truth)
        measured = run["output_tokens"] / run["output_tokens_per_s"]
        assert abs(measured - span) <= TOLERANCE * span + SLACK_MS / 1000, (measured, span)
    own = per_million(price, new["output_tokens_per_s"])
    other = per_million(price, base["output_tokens_per_s"])
    ratio = Decimal(str(new["output_tokens_per_s"])) / Decimal(str(base["output_tokens_per_s"]))
    assert new["cost"] == {
        "usd_per_hour": str(price),
        "price_source": "--usd-per-hour",
        "usd_per_million_output_tokens": cents(own),
        "baseline_usd_per_million_output_tokens": cents(other),
        "saving_usd_per_million_output_tokens": cents(other - own),
        "throughput_ratio": float(ratio),
        "saving_percent": str(((1 - 1 / ratio) * 100).quantize(Decimal("0.1"), ROUND_HALF_UP)),
    }
    assert Decimal(new["cost"]["saving_usd_per_million_output_tokens"]) > 0
    printed = capsys.readouterr().out
    assert f"  $ per 1M output tokens: ${cents(own)} (at ${price}/h, --usd-per-hour)" in printed
    assert f"  speculation saves ${cents(other - own)} per 1M output tokens" in printed


def test_without_a_price_the_figure_says_so_and_the_saving_is_a_ratio() -> None:
    run = {"output_tokens_per_s": 300.0}
    baseline = {"output_tokens_per_s": 120.0}
    found = cost.figures(None, "no price: give --usd-per-hour, or --stack", run, baseline)
    assert found["usd_per_million_output_tokens"] is None
    assert found["saving_usd_per_million_output_tokens"] is None
    assert found["throughput_ratio"] == 2.5
    assert found["saving_percent"] == "60.0"
    lines = cost.lines(found)
    assert (
        lines[0] == "  $ per 1M output tokens: unknown (no price: give --usd-per-hour, or --stack)"
    )
    assert (
        lines[1] == "  speculation saves 60.0% per output token "
        "(throughput x2.50; no price to put dollars on it)"
    )


def test_with_a_stack_the_price_is_the_endpoints_share_of_its_nodes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dev stack's nodes have no snapshot row: no price, and the run says why."""
    from mlcc.cli.bench import cost as bench_cost

    class Args:
        usd_per_hour = None
        stack = "dev"
        project_dir = str(REPO)
        price_list = False

    price, why = bench_cost.hourly_price(Args(), "hp-dev")  # type: ignore[arg-type]
    assert price is None
    assert ("us-east-1", "ml.g5.12xlarge") not in prices.snapshot()
    assert (
        why
        == "no price (ml.g5.12xlarge: no snapshot row for us-east-1: the price needs --preflight)"
    )


@pytest.mark.parametrize("given", ["0", "-1", "abc", "nan", "inf"])
def test_a_bad_price_stops_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], given: str
) -> None:
    with FakeEngine(EngineBehaviour()) as engine:
        assert bench(engine, tmp_path, "--usd-per-hour", given) == 2
    assert "--usd-per-hour: must be a number of dollars above 0" in capsys.readouterr().err
    assert not (tmp_path / "bench.json").exists()


@pytest.mark.parametrize(
    ("price", "run", "baseline", "expected"),
    [
        # More digits than a figure can have: unknown, never a traceback or a rounded lie.
        (Decimal("1e30"), {"output_tokens_per_s": 1e-5}, None,
         {"usd_per_million_output_tokens": None, "unknown": "too large to be a price per token"}),
        # No rate to divide by: the price is known, the figure is not, and says why.
        (Decimal("12"), {"output_tokens_per_s": None}, None,
         {"usd_per_million_output_tokens": None,
          "unknown": "no output tokens/s to divide the price by"}),
        # A baseline file (it may hold anything) with an absurd rate: no ratio, no saving.
        (None, {"output_tokens_per_s": 1.0}, {"output_tokens_per_s": 1e300},
         {"throughput_ratio": 1e-300, "saving_percent": None}),
        (None, {"output_tokens_per_s": 1e300}, {"output_tokens_per_s": 5e-324},
         {"throughput_ratio": None, "saving_percent": "100.0"}),
    ],
)  # fmt: skip
def test_absurd_amounts_give_unknown_not_a_traceback(
    price: Decimal | None, run: dict[str, float], baseline: dict[str, float] | None,
    expected: dict[str, object],
) -> None:  # fmt: skip
    found = cost.figures(price, "--usd-per-hour" if price else "no price", run, baseline)
    assert {key: found[key] for key in expected} == expected
    for line in cost.lines(found):
        assert "None" not in line and "inf" not in line
