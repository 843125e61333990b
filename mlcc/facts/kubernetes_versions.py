"""The Kubernetes versions a HyperPod EKS cluster may run, from one sourced table.

Pure data and the rules over it. kubernetes_versions.json has one row per minor version: which
copies of AWS's HyperPod EKS prerequisites page list it, the HyperPod AMIs built for it (as
docs/nvidia-facts.md records them), the inference add-on's support where a source states it
(none does: unknown), and the EKS release calendar's dates, each row naming its sources and the
day they were read. docs/kubernetes-facts.md has one table row per version; a test keeps the two
in step. The config (hp:kubernetesVersion, its default), the cost estimate (extended support)
and preflight (the add-on's versions it recommends) all read this module.

The EKS calendar (AWS, Amazon EKS User Guide, "Understand the Kubernetes version lifecycle on
EKS"): a version has standard support from its EKS release for 14 months, then extended support
at an extra cost per cluster hour for 12 more; extended support is billed from the start of the
end-of-standard-support day (UTC), and from the end-of-extended-support day no new cluster of
the version can be created.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import UTC, date, datetime
from enum import StrEnum
from importlib import resources
from typing import Any, Final

TODAY_ENV: Final = "MLCC_TODAY"
SOURCE_FILE: Final = "kubernetes_versions.json"
PAGE: Final = "docs/kubernetes-facts.md"


def today() -> date:
    """The plan's date, the one clock every rule of this table reads: the UTC date, or the
    day `MLCC_TODAY` names (YYYY-MM-DD; the tests fix it, and a plan can be judged as of
    another day)."""
    fixed = os.environ.get(TODAY_ENV, "").strip()
    if not fixed:
        return datetime.now(UTC).date()
    try:
        return date.fromisoformat(fixed)
    except ValueError:
        raise ValueError(f"{TODAY_ENV}={fixed[:40]!r} is not a date (YYYY-MM-DD)") from None


class Support(StrEnum):
    """Where a version stands in the EKS calendar on a given day."""

    NOT_RELEASED = "not released on EKS"
    STANDARD = "standard support"
    EXTENDED = "extended support"
    ENDED = "past extended support"


@dataclass(frozen=True)
class Source:
    key: str
    title: str
    url: str
    says: str
    read: str


@dataclass(frozen=True)
class KubernetesVersion:
    version: str
    hyperpod_pages: tuple[str, ...]  # the keys of the page copies that list it; () = none
    amis: tuple[str, ...]  # the HyperPod EKS AMI version lines built for it
    addon: bool | None  # the inference add-on supports it; None = unknown
    eks_release: date
    end_of_standard: date
    end_of_extended: date
    eks_source: str

    @property
    def hyperpod(self) -> bool:
        return bool(self.hyperpod_pages)

    def support(self, on: date) -> Support:
        if on < self.eks_release:
            return Support.NOT_RELEASED
        if on < self.end_of_standard:
            return Support.STANDARD
        if on < self.end_of_extended:
            return Support.EXTENDED
        return Support.ENDED

    def eks_creates(self, on: date) -> bool:
        return self.support(on) in (Support.STANDARD, Support.EXTENDED)


def _day(text: Any) -> date:
    return date.fromisoformat(str(text))


def _load() -> tuple[dict[str, Source], tuple[KubernetesVersion, ...]]:
    text = resources.files(__package__).joinpath(SOURCE_FILE).read_text(encoding="utf-8")
    document = json.loads(text)
    sources = {
        key: Source(key, row["title"], row["url"], row["says"], row["read"])
        for key, row in document["sources"].items()
    }
    versions = tuple(
        KubernetesVersion(
            version=row["version"],
            hyperpod_pages=tuple(row["hyperpod"]),
            amis=tuple(row["amis"]),
            addon=row["addon"],
            eks_release=_day(row["eks_release"]),
            end_of_standard=_day(row["end_of_standard"]),
            end_of_extended=_day(row["end_of_extended"]),
            eks_source=row["eks_source"],
        )
        for row in document["versions"]
    )
    return sources, versions


SOURCES, VERSIONS = _load()  # VERSIONS newest first
BY_VERSION: Final = {v.version: v for v in VERSIONS}
CALENDAR: Final = SOURCES["eks-calendar"]
HYPERPOD_PAGE: Final = SOURCES["hyperpod-1.34"]  # the newest copy read


def minor_key(version: str) -> tuple[int, ...]:
    """1.9 < 1.10: numbers compared as numbers; text that is not a version sorts first."""
    parts = version.split(".")
    return tuple(int(p) for p in parts) if all(p.isdigit() for p in parts) else (-1,)


def hyperpod_versions() -> tuple[str, ...]:
    """The versions the newest HyperPod page copy lists, oldest first."""
    return tuple(sorted((v.version for v in VERSIONS if v.hyperpod), key=minor_key))


def hyperpod_range() -> str:
    """`1.28-1.34`: the versions HyperPod's page lists, as one span."""
    listed = hyperpod_versions()
    return f"{listed[0]}-{listed[-1]}"


def accepted(on: date) -> tuple[str, ...]:
    """The versions a cluster can be created with on `on`, oldest first: HyperPod lists them
    and EKS creates them (released, not past extended support)."""
    fitting = (v.version for v in VERSIONS if v.hyperpod and v.eks_creates(on))
    return tuple(sorted(fitting, key=minor_key))


def default_version(on: date) -> str:
    """hp:kubernetesVersion's default: the newest version both HyperPod and EKS support on
    `on`; when none is left, the newest HyperPod lists (the config then refuses it, naming the
    calendar: the table needs its newer rows)."""
    fitting = accepted(on)
    return fitting[-1] if fitting else hyperpod_versions()[-1]


def refusal(version: str, on: date) -> str | None:
    """Why a new cluster of `version` cannot be created on `on`, or None."""
    choose = ", ".join(accepted(on)) or "none (see " + PAGE + ")"
    row = BY_VERSION.get(version)
    if row is None or not row.hyperpod:
        return (
            f"HyperPod supports Kubernetes {hyperpod_range()} (its EKS prerequisites page, "
            f"{HYPERPOD_PAGE.url}, read {HYPERPOD_PAGE.read}), not {version!r}; use one EKS "
            f"also creates on {on}: {choose}"
        )
    support = row.support(on)
    if support is Support.ENDED:
        return (
            f"{version}: EKS no longer creates Kubernetes {version}: its extended support ended "
            f"{row.end_of_extended} (the EKS Kubernetes release calendar, {CALENDAR.url}); "
            f"use one of {choose}"
        )
    if support is Support.NOT_RELEASED:
        return (
            f"{version}: EKS releases Kubernetes {version} on {row.eks_release} (the EKS "
            f"Kubernetes release calendar, {CALENDAR.url}); use one of {choose}"
        )
    return None


def support_on(version: str, on: date) -> Support | None:
    """Where `version` stands on `on`; None for a version the table does not hold."""
    row = BY_VERSION.get(version)
    return None if row is None else row.support(on)
