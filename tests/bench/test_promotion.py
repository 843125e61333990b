"""The promotion rule (mlcc/bench/promotion.py) on sweep levels built by the sweep's own figure
functions (level_figures, candidate_entry) from runs whose throughput and counters are known:
each head's tokens/s is the load model's (tests/bench/bench_load_engine.py) times a known noise
per repeat, and its acceptance the counters of a known share of drafted tokens."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from bench_load_engine import LoadModel

from mlcc.bench.promotion import EVEN, FASTER, SLOWER, UNKNOWN, Rule, decide
from mlcc.bench.sweep.figures import level_figures
from mlcc.bench.sweep.heads import candidate_entry

K = 4
CURRENT = LoadModel(draft_s=0.002, accept_first=0.5)
NOISE = (1.0, 1.03, 0.97)  # each repeat's factor on a run's tokens/s


def run(rate: float, acceptance: float | None, steps: int = 1000) -> dict[str, Any]:
    spec = None
    if acceptance is not None:
        drafted = steps * K
        spec = {"verify_steps": steps, "draft_tokens": drafted,
                "accepted_tokens": round(acceptance * drafted)}  # fmt: skip
    return {"output_tokens_per_s": rate, "per_request": [], "speculative": spec, "completed": 1}


def runs(model: LoadModel, k: int, batch: int, noise: Sequence[float]) -> list[dict[str, Any]]:
    share = sum(model.acceptance(k, batch)) / k if k else None
    return [run(model.throughput(k, batch) * factor, share) for factor in noise]


def levels(
    candidate: LoadModel,
    batches: Sequence[int] = (1, 4, 16),
    noise: Sequence[float] = NOISE,
    counters: bool = True,
) -> list[dict[str, Any]]:
    found = []
    for batch in batches:
        current = runs(CURRENT, K, batch, NOISE)
        new = runs(candidate, K, batch, noise)
        twin = runs(CURRENT, 0, batch, (1.0, 1.0, 1.0))
        if not counters:
            new = [r | {"speculative": None} for r in new]
        level = level_figures(batch, 8, current, twin, None)
        level["candidate"] = candidate_entry(level, current, new, twin, None)
        found.append(level)
    return found


def test_the_level_entry_holds_both_speedups_and_the_head_to_head_ratio() -> None:
    better = LoadModel(draft_s=0.002, accept_first=0.9)
    level = levels(better, (4,))[0]
    over_twin = level["candidate"]["speedup"]["output_tokens_per_s"]
    assert over_twin["mean"] == pytest.approx(better.speedup(K, 4), rel=1e-3)
    head_to_head = level["candidate"]["over_current"]["output_tokens_per_s"]
    truth = better.throughput(K, 4) / CURRENT.throughput(K, 4)
    assert head_to_head["mean"] == pytest.approx(truth)  # the same noise on both: exact
    assert head_to_head["low"] == pytest.approx(truth) == head_to_head["high"]
    spec = level["candidate"]["figures"]["speculative"]
    assert spec["acceptance_rate"] == pytest.approx(sum(better.acceptance(K, 4)) / K, abs=1e-3)


def test_a_better_head_wins_at_every_level() -> None:
    decision = decide(levels(LoadModel(draft_s=0.002, accept_first=0.9)), (1, 4, 16), Rule())
    assert decision.promote and decision.reasons == ()
    assert [v.speed for v in decision.levels] == [FASTER] * 3
    assert decision.as_json()["levels"][0]["acceptance_rate"]["candidate"] == pytest.approx(
        0.9 * sum(0.85**i for i in range(K)) / K, abs=1e-3
    )


def test_a_worse_head_loses_and_says_by_how_much() -> None:
    decision = decide(levels(LoadModel(draft_s=0.002, accept_first=0.2)), (1, 4, 16), Rule())
    assert not decision.promote
    assert [v.speed for v in decision.levels] == [SLOWER] * 3
    text = "\n".join(decision.reasons)
    # acceptance: 0.2 x 3.187 / 4 = 15.9 % against 0.5 x 3.187 / 4 = 39.8 %, 23.9 points
    assert "concurrency 1: acceptance 15.9% vs 39.8%, 23.9 points lower (tolerance 2.0)" in text
    worse = LoadModel(draft_s=0.002, accept_first=0.2).throughput(K, 4)
    ratio = worse / CURRENT.throughput(K, 4)
    assert (
        f"concurrency 4: slower: candidate/current tokens/s {ratio:.2f}x [{ratio:.2f}, "
        f"{ratio:.2f}], {1 - ratio:.1%} fewer tokens/s"
    ) in text


def test_equal_within_the_noise_is_not_a_win() -> None:
    decision = decide(levels(CURRENT, noise=(1.04, 0.97, 1.0)), (1, 4, 16), Rule())
    assert not decision.promote
    assert [v.speed for v in decision.levels] == [EVEN] * 3
    assert "faster at no served level beyond the noise" in decision.reasons[-1]


def test_a_small_gain_inside_the_margin_is_not_a_win() -> None:
    slightly = LoadModel(draft_s=0.002, accept_first=0.505)  # about 1 % more tokens/s
    decision = decide(levels(slightly), (1, 4, 16), Rule())
    assert [v.speed for v in decision.levels] == [EVEN] * 3 and not decision.promote
    assert decide(levels(slightly), (1, 4, 16), Rule(margin=0.0)).promote


def test_faster_but_under_the_acceptance_floor_or_tolerance_is_not_promoted() -> None:
    # Cheaper drafts that accept a little less: faster everywhere, acceptance 3 points lower.
    cheap = LoadModel(draft_s=0.0005, accept_first=0.46)
    assert all(v.speed == FASTER for v in decide(levels(cheap), (1, 4), Rule()).levels)
    assert not decide(levels(cheap), (1, 4), Rule()).promote
    assert decide(levels(cheap), (1, 4), Rule(acceptance_tolerance=0.05)).promote
    floored = decide(levels(cheap), (1, 4), Rule(0.05, acceptance_floor=0.4, floor_source="hp:obs"))
    assert not floored.promote
    assert "under the floor 40.0% (hp:obs)" in floored.reasons[0]


def test_only_the_served_levels_count() -> None:
    heavy = LoadModel(draft_s=0.0, per_seq_s=0.002, accept_first=0.9)
    decision = decide(levels(heavy), (1, 4, 16), Rule())
    assert [v.speed for v in decision.levels] == [FASTER, SLOWER, SLOWER]
    assert not decision.promote
    served = decide(levels(heavy), (1,), Rule())
    assert served.promote and served.not_served == (4, 16)
    nothing = decide(levels(heavy), (64,), Rule())
    assert not nothing.promote and "no swept level is one the stack serves" in nothing.reasons[0]


def test_unknown_figures_never_count_for_the_candidate() -> None:
    better = LoadModel(draft_s=0.002, accept_first=0.9)
    blind = decide(levels(better, counters=False), (1, 4), Rule())
    assert not blind.promote and "acceptance unknown (candidate unknown" in blind.reasons[0]
    single = decide(levels(better, noise=(1.0,)), (1, 4), Rule())
    assert not single.promote and [v.speed for v in single.levels] == [UNKNOWN, UNKNOWN]
    assert "two repeats at least" in single.reasons[0]


def test_levels_where_the_candidate_is_slower_than_the_twin_are_noted_not_refused() -> None:
    better = LoadModel(draft_s=0.002, accept_first=0.9)  # 1.20x, 1.06x, 0.89x over the twin
    decision = decide(levels(better, (1, 16)), (1, 16), Rule())
    assert decision.promote  # better than the current head at both levels: promoted
    assert [v.concurrency for v in decision.below_twin] == [16]
    assert decision.as_json()["candidate_below_twin_levels"] == [16]
