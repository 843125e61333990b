"""The manual (mkdocs.yml over docs/) builds strictly, with every page in the nav in order, and a
broken link or anchor fails the build."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
MKDOCS = Path(sys.executable).with_name("mkdocs")
# The order the manual reads in: the guides, then the reference, then development.
NAV_ORDER = [
    "index.md",
    "getting-started.md",
    "speculation.md",
    "endpoints.md",
    "scaling.md",
    "operator-features.md",
    "preflight.md",
    "deploy.md",
    "cost.md",
    "bench.md",
    "speculative-schedule.md",
    "observability.md",
    "optimize.md",
    "draft.md",
    "draft-training.md",
    "draft-training-status.md",
    "draft-serving.md",
    "draft-promotion.md",
    "draft-proof.md",
    "verify.md",
    "troubleshooting.md",
    "reference/configuration.md",
    "settings.md",
    "reference/cli.md",
    "reference/engine-releases.md",
    "operator-facts.md",
    "images.md",
    "kubernetes-facts.md",
    "nvidia-facts.md",
    "metrics-facts.md",
    "engine-parse-check.md",
    "infrastructure.md",
    "development.md",
    "architecture.md",
    "e2e.md",
]


class _Loader(yaml.SafeLoader):
    """Reads mkdocs.yml's `!!python/object/apply` tag (the slugify function) as a plain map."""


_Loader.add_multi_constructor(
    "tag:yaml.org,2002:python/", lambda loader, suffix, node: loader.construct_mapping(node)
)


def nav_pages(nav: list[object]) -> list[str]:
    pages: list[str] = []
    for entry in nav:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        pages += nav_pages(value) if isinstance(value, list) else [str(value)]
    return pages


def config() -> dict[str, object]:
    loaded = yaml.load((REPO / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)
    assert isinstance(loaded, dict)
    return loaded


def build(project: Path, site: Path) -> subprocess.CompletedProcess[str]:
    assert MKDOCS.is_file(), f"{MKDOCS} is missing: pip install -e '.[dev]'"
    command = [str(MKDOCS), "build", "--strict", "--site-dir", str(site)]
    return subprocess.run(
        command,
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", "NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )


def test_the_nav_lists_every_page_once_in_the_manuals_order() -> None:
    settings = config()
    assert settings["docs_dir"] == "docs"
    assert settings["site_dir"] == "build/site"
    assert settings["strict"] is True
    pages = sorted(str(p.relative_to(REPO / "docs")) for p in (REPO / "docs").rglob("*.md"))
    assert nav_pages(settings["nav"]) == NAV_ORDER  # type: ignore[arg-type]
    assert sorted(NAV_ORDER) == pages


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = build(REPO, out)
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def test_the_site_builds_strictly_with_every_page(site: Path) -> None:
    for page in NAV_ORDER:
        assert (site / page).with_suffix(".html").is_file(), page
    assert (site / "search" / "search_index.json").is_file()


def test_the_sites_nav_is_in_the_manuals_order(site: Path) -> None:
    html = (site / "index.html").read_text(encoding="utf-8")
    positions = {page: html.find(f'href="{page.removesuffix(".md")}.html"') for page in NAV_ORDER}
    del positions["index.md"]
    assert [page for page, at in positions.items() if at == -1] == []
    assert list(positions.values()) == sorted(positions.values())


@pytest.mark.parametrize(
    "link",
    ["[a page](no-such-page.md)", "[an anchor](preflight.md#no-such-anchor)"],
    ids=["page", "anchor"],
)
def test_a_broken_link_fails_the_build(link: str, tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(REPO / "docs", project / "docs")
    shutil.copy(REPO / "mkdocs.yml", project / "mkdocs.yml")
    index = project / "docs" / "index.md"
    index.write_text(index.read_text(encoding="utf-8") + f"\n{link}\n", encoding="utf-8")
    done = build(project, tmp_path / "site")
    assert done.returncode != 0
    assert "Aborted with" in done.stdout + done.stderr
