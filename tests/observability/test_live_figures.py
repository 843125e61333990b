"""`mlcc verify`'s live figures, read from a real Prometheus 2.42 that scrapes the scripted fleet
(fleet.py): the figures are the scripted ones, under both exposition formats."""

from __future__ import annotations

import argparse

import pytest
from fleet import NAMESPACE, Scraped, endpoint

from mlcc.cli.verify import live as verify_live
from mlcc.config.endpoints import EndpointConfig
from mlcc.prometheus.api import Source

# fleet.py's scripts: (acceptance, mean accepted length, output tokens/s)
SCRIPTED = {
    "spec-v": (18 / 30, 1 + 18 / 10, 2 * 120.0),  # two pods
    "spec-s": (68 / 80, 1 + 68 / 20, 90.0),  # OpenMetrics names in Prometheus
    "spec-t": (68 / 80, 1 + 68 / 20, 90.0),  # text names in Prometheus
}


def checks(
    scraped: Scraped,
    endpoints: list[EndpointConfig],
    floor: float | None = None,
    minutes: float = 0.25,  # the fleet is scraped for 20 s before the tests: older than 15 s
) -> dict[str, str]:
    args = argparse.Namespace(window_minutes=minutes, acceptance_floor=floor)
    source = Source(scraped.prometheus.url, shown="test prometheus")
    found = verify_live.live_checks(args, source, NAMESPACE, endpoints, timeout_s=10.0)
    return {name: check.line for name, check in found.items()}


def figures_in(line: str) -> tuple[float, float, float]:
    words = line.replace(",", "").replace("%", "").split()
    acceptance = float(words[words.index("acceptance") + 1]) / 100
    length = float(words[words.index("length") + 1])
    tokens = float(words[words.index("output") - 1])
    return acceptance, length, tokens


@pytest.mark.parametrize(
    ("name", "engine"), [("spec-v", "vllm"), ("spec-s", "sglang"), ("spec-t", "sglang")]
)
def test_live_figures_are_the_scripted_ones(scraped: Scraped, name: str, engine: str) -> None:
    line = checks(scraped, [endpoint(name, engine, speculative=True)])[name]
    assert line.startswith("PASS live: acceptance "), line
    acceptance, length, tokens = figures_in(line)
    expected = SCRIPTED[name]
    assert acceptance == pytest.approx(expected[0], abs=0.0005)  # printed with one decimal
    assert length == pytest.approx(expected[1], abs=0.005)
    assert tokens == pytest.approx(expected[2], rel=0.05)  # rate() over real scrape times
    assert line.endswith("over the last 15 s (test prometheus)")


def test_a_speculation_off_twin_shows_off_never_a_collapse(scraped: Scraped) -> None:
    twin = endpoint("spec-v-baseline", "vllm", speculative=False)
    line = checks(scraped, [twin], floor=0.5)["spec-v-baseline"]
    assert line.startswith("PASS live: speculation off (no acceptance to read); "), line
    assert "acceptance 0" not in line
    tokens = float(line.split("; ")[1].split()[0])
    assert tokens == pytest.approx(120.0, rel=0.05)


def test_acceptance_below_the_floor_fails_in_one_line(scraped: Scraped) -> None:
    lines = checks(scraped, [endpoint("spec-v", "vllm", speculative=True)], floor=0.7)
    assert lines["spec-v"].startswith("FAIL live: acceptance 60.0%, mean accepted length 2.80")
    assert "below the floor 70% (--acceptance-floor)" in lines["spec-v"]
    above = checks(scraped, [endpoint("spec-v", "vllm", speculative=True)], floor=0.5)
    assert above["spec-v"].startswith("PASS live: acceptance 60.0%")


def test_a_speculative_endpoint_without_series_says_what_it_could_not_check(
    scraped: Scraped,
) -> None:
    line = checks(scraped, [endpoint("nowhere", "vllm", speculative=True)])["nowhere"]
    assert line == (
        "FAIL live: cannot check the live figures over the last 15 s: no "
        "vllm:generation_tokens series for the endpoint's pods (test prometheus)"
    )
    # The twin has throughput but no speculative series: read as speculation on, it is missing.
    twin_as_speculative = endpoint("spec-v-baseline", "vllm", speculative=True)
    line = checks(scraped, [twin_as_speculative])["spec-v-baseline"]
    assert line.startswith("FAIL live: cannot check the live figures over the last 15 s: no ")
    assert "vllm:spec_decode_num_* series" in line


def test_a_window_longer_than_the_series_shows_no_throughput_but_the_ratios(
    scraped: Scraped,
) -> None:
    """rate() divides by the whole window: an endpoint scraped for less would read low."""
    line = checks(scraped, [endpoint("spec-s", "sglang", True)], minutes=60)["spec-s"]
    assert line == (
        "PASS live: acceptance 85.0%, mean accepted length 4.40, output tokens/s unknown "
        "(scraped for less than the window) over the last 60 min (test prometheus)"
    )


def test_a_counter_reset_inside_the_window_keeps_the_figures(scraped: Scraped) -> None:
    """Prometheus's increase() steps over the restart: the ratios are the scripted ones."""
    line = checks(scraped, [endpoint("spec-r", "vllm", True)], minutes=1)["spec-r"]
    assert line.startswith("PASS live: acceptance 60.0%, mean accepted length 2.80, "), line
