"""`mlcc plan` shows the job, and the cost headline its hourly price with an unknown duration."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
import yaml
from program_runs import REPO
from training_stacks import DATASET, IMAGE, OUTPUT, parsed, training_config

from mlcc.cli import main
from mlcc.manifest.training_job import schema_problems
from mlcc.plan.cost_report import headline_lines
from mlcc.preflight.cost import estimate, prices
from mlcc.preflight.cost.prices import API_SOURCE, Price
from mlcc.preflight.cost.training import training_cost

TRAINING = {"instanceGroup": "g5-inference", "dataset": DATASET, "output": OUTPUT}
PRICE = Price("ml.g5.12xlarge", "us-east-1", Decimal("7.09"), "2026-11-01", API_SOURCE)


def flat(lines: list[str]) -> str:
    """The headline's lines as one text, their wrapping undone."""
    return " ".join(" ".join(lines).split())


def plan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, training: dict[str, object]) -> int:
    monkeypatch.chdir(REPO)
    argv = ["plan", "--stack", "dev", "--out", str(tmp_path), "--set", f"hp:image={IMAGE}"]
    argv += ["--set", f"hp:draftTraining={json.dumps(training)}"]
    return main(argv)


def test_the_plan_shows_the_job_its_steps_and_its_cost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert plan(tmp_path, monkeypatch, TRAINING) == 0
    out = capsys.readouterr().out
    assert "draft training hp-dev-draft (HyperPodPyTorchJob): 1 x ml.g5.12xlarge" in out
    assert "(4 GPUs, group g5-inference)" in out
    assert "  5. hidden states: speculators generate-offline-data, then the server stops" in out
    assert f"  checkpoints: {OUTPUT}checkpoints/" in out
    # The snapshot holds no ml.* price: not found, and the duration is never guessed.
    assert "draft training hp-dev-draft: ml.g5.12xlarge x 1 (group g5-inference) @ not found" in out
    assert "duration unknown" in out
    written = json.loads((tmp_path / "plan.json").read_text())
    assert written["cost"]["draft_training"]["duration"] == "unknown"
    (manifest,) = (tmp_path / "manifests").glob("*-hyperpodpytorchjob-*.yaml")
    assert schema_problems(yaml.safe_load(manifest.read_text())) == []


def test_a_priced_node_is_per_hour_and_counted_once_in_create_mode() -> None:
    config = parsed().config
    costing = estimate.costing(config, [PRICE], prices.snapshot())
    assert costing.training is not None and costing.training.per_hour == Decimal("7.09")
    assert costing.training.in_total  # the group's node, already in the total
    lines = headline_lines(costing.as_json())
    (line,) = [line for line in lines if "draft training" in line]
    assert "@ $7.09/h while it runs, a node counted in the total above" in flat(lines)
    assert line.startswith("  draft training hp-dev-draft: ml.g5.12xlarge x 1 (group gpu)")
    assert "duration unknown" in flat(lines)
    group_lines = [r for r in costing.lines if r.billed.item == "ml.g5.12xlarge"]
    assert [r.billed.count for r in group_lines] == [1]  # the job adds no second node


def test_outside_create_mode_the_price_is_the_job_s_own() -> None:
    config = training_config()
    found = training_cost(config, "us-east-1", {PRICE.item: PRICE}, {}, in_total=False)
    assert found is not None
    text = flat(headline_lines({"lines": [], "draft_training": found.as_json()}))
    assert "$7.09/h while it runs, duration unknown" in text
    assert "counted in the total" not in text
    missing = training_cost(config, "eu-west-3", {}, {}, in_total=False)
    assert missing is not None and missing.per_hour is None
    text = flat(headline_lines({"lines": [], "draft_training": missing.as_json()}))
    assert "no price of ml.g5.12xlarge in eu-west-3" in text


def test_no_job_no_line() -> None:
    config = parsed().config
    assert training_cost(None, "us-east-1", {}, {}, in_total=True) is None
    assert "draft_training" in estimate.costing(config, [], {}).as_json()
