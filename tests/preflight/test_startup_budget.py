"""A startup probe whose budget cannot cover the models' load warns, on both engines, with the
estimate (mlcc/preflight/startup.py): `hp:probes: operator` always, a given budget when short."""

from __future__ import annotations

import json

import pytest
from fake_hub import FakeHub
from test_preflight_models import LLAMA_8B, check, messages

from mlcc.preflight import startup

ENGINES = [("vllm", {}), ("sglang", {"engine": "sglang"})]
THIRTY_SECONDS = json.dumps({"startup": {"periodSeconds": 10, "failureThreshold": 3}})


def startup_lines(monkeypatch: pytest.MonkeyPatch, **keys: str) -> list[str]:
    values = {"model": LLAMA_8B, "maxModelLen": "8192", **keys}
    with FakeHub() as hub:
        outcome = check(hub, monkeypatch, 5, **values)
    return [line for line in messages(outcome) if line.startswith("hp:probes")]


@pytest.mark.parametrize(("engine", "keys"), ENGINES)
def test_a_thirty_second_startup_budget_for_an_8b_model_warns(
    hub_env: None, monkeypatch: pytest.MonkeyPatch, engine: str, keys: dict[str, str]
) -> None:
    """16.06 GB: 32.1 s of download at the assumed 500 MB/s and 8.0 s of read at 2 GB/s."""
    (line,) = startup_lines(monkeypatch, probes=THIRTY_SECONDS, **keys)
    assert line == (
        "hp:probes.startup: gives the engine 30 s to start (initialDelaySeconds + periodSeconds x "
        "failureThreshold), but loading the models (16.1 GB of weights) is estimated at 41 s or "
        "more (a Hub download at an assumed 500 MB/s and a read at an assumed 2 GB/s; "
        "compilation and CUDA graphs not counted), so the kubelet restarts it mid-load: raise "
        "failureThreshold to 5 or more, or remove hp:probes.startup"
    ), engine


@pytest.mark.parametrize(("engine", "keys"), ENGINES)
def test_the_operator_s_own_probes_warn_with_the_estimate(
    hub_env: None, monkeypatch: pytest.MonkeyPatch, engine: str, keys: dict[str, str]
) -> None:
    (line,) = startup_lines(monkeypatch, probes="operator", **keys)
    assert line.startswith(
        "hp:probes: operator leaves the startup probe to the operator, whose budget no source "
        "states, and loading the models (16.1 GB of weights) is estimated at 41 s or more"
    ), engine
    assert line.endswith("remove hp:probes for the program's probes (startup up to 120 min)")


def test_a_budget_that_covers_the_load_and_the_program_s_own_are_quiet(
    hub_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert startup_lines(monkeypatch) == []
    five = json.dumps({"startup": {"failureThreshold": 5}})
    assert startup_lines(monkeypatch, probes=five) == []  # 50 s, period 10 s kept


def test_the_budget_is_the_program_s_probe_under_the_given_fields() -> None:
    assert startup.budget_seconds({}, 7200) == 7200
    assert startup.budget_seconds({"periodSeconds": 5, "initialDelaySeconds": 20}, 600) == 320
    assert startup.load_seconds(1e9, 2e9) == pytest.approx(3.0)
