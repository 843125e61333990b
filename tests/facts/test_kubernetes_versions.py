"""mlcc/facts/kubernetes_versions.json: the one table of Kubernetes versions, its rules, the
config's refusals and default that read it, and its rows in docs/kubernetes-facts.md."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from mlcc.config.stack import ConfigError, parse
from mlcc.facts import kubernetes_versions as kv
from mlcc.facts import nvidia

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "kubernetes-facts.md"
TODAY = date(2026, 12, 6)  # the tests' clock (tests/conftest.py)
BASE = {
    "hp:model": "meta-llama/Llama-3.1-8B-Instruct",
    "aws:region": "us-east-1",
    "aws-native:region": "us-east-1",
}


def test_the_tests_clock_is_the_day_the_table_was_read() -> None:
    assert kv.today() == TODAY


def test_a_clock_that_is_not_a_date_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(kv.TODAY_ENV, "yesterday")
    with pytest.raises(ValueError, match="MLCC_TODAY='yesterday' is not a date"):
        kv.today()


def test_every_row_names_known_sources_and_its_dates_follow_the_calendar() -> None:
    ami_lines = {ami.version for ami in nvidia.HYPERPOD_EKS_AMIS}
    for row in kv.VERSIONS:
        assert set(row.hyperpod_pages) <= set(kv.SOURCES), row
        assert row.eks_source in kv.SOURCES, row
        assert set(row.amis) <= ami_lines, row  # the AMIs of docs/nvidia-facts.md
        assert row.eks_release < row.end_of_standard < row.end_of_extended, row
    for source in kv.SOURCES.values():
        assert source.title and source.says and source.read, source


def test_where_each_version_stands_on_the_tests_date() -> None:
    support = {row.version: row.support(TODAY) for row in kv.VERSIONS}
    assert support == {
        "1.35": kv.Support.STANDARD,  # but HyperPod's page does not list it
        "1.34": kv.Support.EXTENDED,  # standard support ended 2026-12-02
        "1.33": kv.Support.EXTENDED,
        "1.32": kv.Support.EXTENDED,
        "1.31": kv.Support.ENDED,  # 2026-11-26
        "1.30": kv.Support.ENDED,
        "1.29": kv.Support.ENDED,
        "1.28": kv.Support.ENDED,
    }
    assert kv.hyperpod_range() == "1.28-1.34"
    assert kv.accepted(TODAY) == ("1.32", "1.33", "1.34")


def test_the_calendar_days_are_boundaries_in_utc_days() -> None:
    row = kv.BY_VERSION["1.34"]
    assert row.support(date(2026, 12, 1)) is kv.Support.STANDARD
    assert row.support(date(2026, 12, 2)) is kv.Support.EXTENDED  # billed from that day
    assert row.support(date(2027, 12, 1)) is kv.Support.EXTENDED
    assert row.support(date(2027, 12, 2)) is kv.Support.ENDED  # no new cluster that day
    assert row.support(date(2025, 10, 1)) is kv.Support.NOT_RELEASED


@pytest.mark.parametrize(
    ("on", "default"),
    [
        (TODAY, "1.34"),
        (date(2025, 9, 1), "1.33"),  # 1.34 not released on EKS yet
        (date(2027, 8, 1), "1.34"),
        (date(2028, 1, 1), "1.34"),  # none left: the newest HyperPod lists, and refused
    ],
)
def test_the_default_is_the_newest_version_hyperpod_and_eks_both_support(
    on: date, default: str
) -> None:
    assert kv.default_version(on) == default


def test_the_key_tables_default_comes_from_the_table_on_the_clocks_day() -> None:
    script = (
        "from mlcc.config.schema import KEYS_BY_NAME as K; print(K['kubernetesVersion'].default)"
    )
    env = {**os.environ, kv.TODAY_ENV: "2025-09-01"}
    shown = subprocess.run(
        [sys.executable, "-c", script], env=env, check=True, capture_output=True, text=True
    )
    assert shown.stdout.strip() == "1.33"
    pulumi_yaml = (REPO / "Pulumi.yaml").read_text()
    assert f"default: '{kv.default_version(TODAY)}'" in pulumi_yaml


def refusals(version: str) -> list[str]:
    with pytest.raises(ConfigError) as raised:
        parse({**BASE, "hp:kubernetesVersion": version}, stack="dev")
    return [p.message for p in raised.value.problems if p.key == "hp:kubernetesVersion"]


def test_a_version_past_extended_support_is_refused_naming_the_calendar() -> None:
    (message,) = refusals("1.31")
    assert message == (
        "1.31: EKS no longer creates Kubernetes 1.31: its extended support ended 2026-11-26 "
        f"(the EKS Kubernetes release calendar, {kv.CALENDAR.url}); use one of 1.32, 1.33, 1.34"
    )


def test_a_version_hyperpod_does_not_list_is_refused_naming_its_page() -> None:
    for version in ("1.35", "1.20", "latest"):
        (message,) = refusals(version)
        assert message.startswith(
            f"HyperPod supports Kubernetes 1.28-1.34 (its EKS prerequisites page, "
            f"{kv.HYPERPOD_PAGE.url}, read 2026-12-06), not {version!r}"
        )
        assert message.endswith("on 2026-12-06: 1.32, 1.33, 1.34")


def test_a_version_eks_has_not_released_on_the_day_is_refused() -> None:
    assert kv.refusal("1.34", date(2025, 9, 1)) == (
        "1.34: EKS releases Kubernetes 1.34 on 2025-10-02 (the EKS Kubernetes release calendar, "
        f"{kv.CALENDAR.url}); use one of 1.28, 1.29, 1.30, 1.31, 1.32, 1.33"
    )


def test_versions_in_extended_support_are_accepted() -> None:
    for version in kv.accepted(TODAY):
        assert kv.refusal(version, TODAY) is None
        cluster = parse({**BASE, "hp:kubernetesVersion": version}, stack="dev")
        assert cluster.config.infrastructure.cluster.kubernetes_version == version  # type: ignore[union-attr]


# --- docs/kubernetes-facts.md ------------------------------------------------------------------


def page_rows() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for line in PAGE.read_text().splitlines():
        if line.startswith("| `1."):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            found[cells[0].strip("`")] = cells
    return found


def test_every_version_has_its_row_on_the_page_with_its_values_and_sources() -> None:
    rows = page_rows()
    assert list(rows) == [row.version for row in kv.VERSIONS]
    for row in kv.VERSIONS:
        _, hyperpod, amis, addon, release, standard, extended, sources = rows[row.version]
        listed = ", ".join(f"`{key}`" for key in row.hyperpod_pages)
        assert hyperpod == (f"yes ({listed})" if row.hyperpod else "no (`hyperpod-1.34`)")
        assert amis == (", ".join(f"`{a}`" for a in row.amis) or "none")
        assert addon == {None: "unknown", True: "yes", False: "no"}[row.addon]
        assert (release, standard, extended) == (
            str(row.eks_release),
            str(row.end_of_standard),
            str(row.end_of_extended),
        )
        assert f"`{row.eks_source}`" in sources


def test_every_source_has_its_row_on_the_page() -> None:
    text = PAGE.read_text()
    for source in kv.SOURCES.values():
        (line,) = [ln for ln in text.splitlines() if ln.startswith(f"| `{source.key}` |")]
        assert source.url in line and source.read in line, source.key
