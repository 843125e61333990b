"""The sweep's pure parts: levels, intervals, the crossover and the recommended schedule, on
level figures made from a load model whose answers are known (tests/bench/bench_load_engine.py)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from bench_load_engine import LoadModel

from mlcc.bench.sweep.crossover import crossover
from mlcc.bench.sweep.levels import parse_levels, parse_repeats, ratio_interval
from mlcc.bench.sweep.schedule import (
    modelled_speedups,
    range_starts,
    recommend,
    schedule_problems,
)
from mlcc.stackfiles.edit import set_config_keys

MODELS = {
    "collapsing acceptance": LoadModel(accept_half_batch=16),
    "compute-bound verify": LoadModel(),
    "cheap drafts": LoadModel(base_s=0.01, draft_s=0.0001, per_seq_s=0.0002),
}


def test_levels_are_sorted_distinct_whole_numbers() -> None:
    assert parse_levels("64, 1,16,4") == [1, 4, 16, 64]
    for text, message in [
        ("1,,4", "is not a list of whole numbers"),
        ("1,4,", "is not a list of whole numbers"),
        ("1,4,4", "4 is given twice"),
        ("0,4", "must be from 1 to 1,024"),
        ("1,x", "is not a whole number"),
    ]:
        with pytest.raises(ValueError, match=message):
            parse_levels(text)
    with pytest.raises(ValueError, match="from 2 to 20"):
        parse_repeats("1")


def test_the_interval_of_a_ratio_is_students_t_on_its_logs() -> None:
    found = ratio_interval([2.0, 2.0, 2.0])
    assert (found.mean, found.low, found.high) == pytest.approx((2.0, 2.0, 2.0))
    spread = ratio_interval([1.0, 2.0, 4.0])
    assert spread.mean == pytest.approx(2.0)  # the geometric mean
    half = 4.303 * math.log(2) / math.sqrt(3)  # sd of (0, log 2, log 4) is log 2
    assert spread.low == pytest.approx(2 * math.exp(-half))
    assert spread.high == pytest.approx(2 * math.exp(half))
    assert ratio_interval([1.5, None]).low is None


def level(c: int, mean: float, low: float | None, high: float | None) -> dict[str, Any]:
    return {"concurrency": c, "speedup": {"output_tokens_per_s": {"mean": mean, "low": low,
                                                                  "high": high}}}  # fmt: skip


def test_the_crossover_is_the_range_between_confident_levels() -> None:
    levels = [level(1, 2.0, 1.8, 2.2), level(4, 1.3, 1.1, 1.5), level(16, 0.8, 0.7, 0.9)]
    found = crossover(levels, 1.0)
    assert (found["status"], found["above"], found["at_most"]) == ("range", 4, 16)
    # interpolated on log-concurrency: 1.3 at 4, 0.8 at 16, 1.0 at 4 x 4^(0.3 / 0.5)
    assert found["estimate"] == pytest.approx(4 * 4 ** (0.3 / 0.5))
    unclear = [level(1, 2.0, 1.8, 2.2), level(4, 1.05, 0.9, 1.2), level(16, 0.8, 0.7, 0.9)]
    found = crossover(unclear, 1.0)
    assert (found["above"], found["at_most"]) == (1, 16)  # 4 cannot tell which side it is on
    assert crossover(levels, 1.2)["at_most"] == 16  # a threshold: 4's lower bound is under 1.2


def test_the_crossover_says_when_it_is_outside_the_levels() -> None:
    above = crossover([level(1, 2.0, 1.8, 2.2), level(4, 1.5, 1.2, 1.7)], 1.0)
    assert above["status"] == "not reached" and above["at_most"] is None
    assert above["text"].startswith("not reached within the swept levels")
    below = crossover([level(1, 0.8, 0.7, 0.9), level(4, 0.6, 0.5, 0.7)], 1.0)
    assert below["status"] == "below at the lowest level"
    assert below["text"].startswith("already below 1x at the lowest level (1)")
    unknown = crossover([level(1, 1.1, 0.8, 1.4)], 1.0)
    assert unknown["status"] == "not established" and unknown["estimate"] is None


def model_level(model: LoadModel, k: int, c: int) -> dict[str, Any]:
    """A level as the sweep would measure it on `model`, without noise."""
    speedup = model.speedup(k, c)
    shares = model.acceptance(k, c)
    spec = {"acceptance_per_position": shares, "mean_accepted_tokens": 1 + sum(shares),
            "drafts_per_step": float(k), "verify_steps": 100}  # fmt: skip
    return {
        "concurrency": c,
        "endpoint": {"speculative": spec},
        "speedup": {"output_tokens_per_s": {"mean": speedup, "low": speedup, "high": speedup}},
        "step_ms": {"twin": model.step_s(0, c) * 1000, "endpoint": model.step_s(k, c) * 1000},
    }


def tokens_at(schedule: list[dict[str, int]], batch: int) -> int:
    return next(r["tokens"] for r in schedule if r["from"] <= batch <= r.get("to", batch))


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("k", [2, 4, 6])
def test_the_schedule_beats_the_static_setting_at_every_level(name: str, k: int) -> None:
    model, levels = MODELS[name], [1, 2, 4, 8, 16, 32, 64]
    found = recommend([model_level(model, k, c) for c in levels], 1.0)
    schedule = found["schedule"]
    assert schedule_problems(schedule, k) == []
    assert len(found["lines"]) == len(schedule)
    for c in levels:
        chosen = tokens_at(schedule, c)
        best = max(range(k + 1), key=lambda j: model.throughput(j, c))
        assert model.throughput(chosen, c) >= model.throughput(k, c)
        if model.throughput(best, c) > model.throughput(k, c) * 1.02:
            assert model.throughput(chosen, c) > model.throughput(k, c)
        assert model.throughput(chosen, c) >= 0.99 * model.throughput(best, c)
        if model.speedup(k, c) < 1 and all(model.speedup(j, c) < 1 for j in range(1, k + 1)):
            assert chosen == 0  # no speculation past the crossover


def test_the_model_reproduces_the_measured_speedup_at_k() -> None:
    model = MODELS["compute-bound verify"]
    for c in (1, 8, 32):
        ratio = model.step_s(4, c) / model.step_s(0, c)
        modelled = modelled_speedups(ratio, model.acceptance(4, c))
        assert modelled[4] == pytest.approx(model.speedup(4, c))
        assert modelled[2] == pytest.approx(model.speedup(2, c))  # step time linear in k
        assert modelled[0] == 1.0


def test_levels_become_contiguous_batch_ranges() -> None:
    assert range_starts([1, 4, 16, 64]) == [1, 3, 9, 33]
    assert range_starts([1, 2, 3]) == [1, 2, 3]
    assert range_starts([8, 64]) == [1, 23]
    assert schedule_problems([{"from": 1, "to": 8, "tokens": 5}, {"from": 9, "tokens": 0}], 5) == []
    # the stack's own parser answers: a first range not at 1, a gap, tokens above the endpoint's
    (start,) = schedule_problems([{"from": 2, "tokens": 1}], 5)
    assert start.startswith("hp:speculativeSchedule[0]: ")
    (gap,) = schedule_problems([{"from": 1, "to": 3, "tokens": 1}, {"from": 5, "tokens": 0}], 5)
    assert gap.startswith("hp:speculativeSchedule[1]: ")
    assert schedule_problems([{"from": 1, "tokens": 6}], 5) == [
        "hp:speculativeSchedule: tokens 6 is above 5"
    ]


def test_a_schedule_is_written_as_a_list_of_flow_maps() -> None:
    text = "config:\n  hp:model: m # the model\n  hp:speculativeNumTokens: 5\n\n# end\n"
    schedule = [{"from": 1, "to": 8, "tokens": 5}, {"from": 9, "tokens": 0}]
    written, changes = set_config_keys(text, {"speculativeSchedule": schedule})
    assert written == (
        "config:\n  hp:model: m # the model\n  hp:speculativeNumTokens: 5\n"
        "  hp:speculativeSchedule:\n    - {from: 1, to: 8, tokens: 5}\n"
        "    - {from: 9, tokens: 0}\n\n# end\n"
    )
    assert changes == [
        "hp:speculativeSchedule: [{from: 1, to: 8, tokens: 5}, {from: 9, tokens: 0}] (new)"
    ]
    again, changes = set_config_keys(written, {"speculativeSchedule": [{"from": 1, "tokens": 2}]})
    assert again == text.replace(
        "\n\n# end", "\n  hp:speculativeSchedule:\n    - {from: 1, tokens: 2}\n\n# end"
    )
    assert changes[0].endswith("(was [{from: 1, to: 8, tokens: 5}, {from: 9, tokens: 0}])")
