"""The built site (`make docs`, build/site) in a real headless Chromium: the start page renders
with mkdocs.yml's title and navigation in order, the configuration reference renders with its
keys, and Material's search box, typed into, finds the configuration reference.

Marked `docs`: `make docs-check` runs it (after `make docs`, installing Chromium when missing);
`make test` deselects it. Leaves build/docs-start-page.png for a person to look at.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from headless_browser import EVENT_S, Browser, SiteServer, find_browser

pytestmark = pytest.mark.docs

REPO = Path(__file__).resolve().parents[2]
# Another site or configuration for a trial run; by default the repository's.
SITE = Path(os.environ.get("MLCC_DOCS_SITE", REPO / "build" / "site"))
CONFIG = Path(os.environ.get("MLCC_DOCS_CONFIG", REPO / "mkdocs.yml"))
SCREENSHOT = REPO / "build" / "docs-start-page.png"
REFERENCE_PAGE = "reference/configuration"
KEY = "hp:speculativeModel"
QUERY = "speculativeModel"


class AnyTag(yaml.SafeLoader):
    """mkdocs.yml may carry `!!python/name:` and `!ENV` tags; only nav and site_name matter."""


AnyTag.add_multi_constructor("", lambda loader, suffix, node: None)


def mkdocs_config() -> dict[str, Any]:
    if not CONFIG.is_file():
        pytest.fail(f"{CONFIG} is missing: the site's configuration (see `make docs`)")
    config: dict[str, Any] = yaml.load(CONFIG.read_text(), Loader=AnyTag)
    return config


def reference_url(config: dict[str, Any]) -> str:
    """The configuration reference's address in the built site (mkdocs.yml's URL style)."""
    if config.get("use_directory_urls", True) is False:
        return f"{REFERENCE_PAGE}.html"
    return f"{REFERENCE_PAGE}/"


def nav_titles(config: dict[str, Any]) -> list[str | None]:
    """The top-level titles of `nav:`, in order; None where a bare path leaves the title to the
    page's heading."""
    nav = config.get("nav")
    assert isinstance(nav, list) and nav, f"{CONFIG}: no nav list"
    return [next(iter(entry)) if isinstance(entry, dict) else None for entry in nav]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not (SITE / "index.html").is_file():
        pytest.fail(f"{SITE}/index.html is missing: run `make docs` (or `make docs-check`)")
    executable = find_browser()
    if executable is None:
        pytest.fail("chromium is missing: run `make docs-check` (apt-get install chromium)")
    with Browser(executable) as running:
        yield running


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    with SiteServer(SITE) as server:
        yield server.url


def test_the_start_page_renders_its_title_and_navigation(browser: Browser, site: str) -> None:
    config = mkdocs_config()
    browser.navigate(site)
    assert browser.evaluate("document.title") == config["site_name"]
    assert browser.evaluate("document.querySelector('article h1') !== null")
    shown = browser.evaluate(
        """[...document.querySelectorAll(
              '.md-nav--primary > .md-nav__list > .md-nav__item > .md-nav__link')]
           .map(link => link.textContent.replace(/\\s+/g, ' ').trim())"""
    )
    # The current page's item holds two links (its label and its own page): one title.
    shown = [t for i, t in enumerate(shown) if i == 0 or t != shown[i - 1]]
    expected = nav_titles(config)
    assert len(shown) == len(expected), (shown, expected)
    for title, wanted in zip(shown, expected, strict=True):
        assert wanted is None or title == wanted, (shown, expected)
    browser.screenshot(SCREENSHOT)
    assert SCREENSHOT.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_the_configuration_reference_renders_its_keys(browser: Browser, site: str) -> None:
    browser.navigate(site + reference_url(mkdocs_config()))
    assert browser.evaluate("document.querySelector('article h1') !== null")
    assert KEY in browser.evaluate("document.querySelector('article').textContent")


def test_search_finds_the_configuration_reference(browser: Browser, site: str) -> None:
    reference = reference_url(mkdocs_config())
    browser.navigate(site)
    assert browser.evaluate(
        "(() => { const box = document.querySelector('input[data-md-component=search-query]');"
        " box.focus(); return document.activeElement === box; })()"
    ), "the search box took no focus"
    browser.insert_text(QUERY)
    # Material's search worker answers asynchronously: wait for the result list to change until
    # it links to the reference (a MutationObserver, not a sleep), or give what it showed.
    links = browser.evaluate(
        f"""new Promise(resolve => {{
          const list = document.querySelector('.md-search-result__list');
          const links = () => [...list.querySelectorAll('a.md-search-result__link')]
            .map(link => link.getAttribute('href'));
          const done = () => links().some(href => href.includes({json.dumps(reference)}));
          if (done()) return resolve(links());
          const observer = new MutationObserver(() => {{
            if (done()) {{ observer.disconnect(); resolve(links()); }}
          }});
          observer.observe(list, {{childList: true, subtree: true}});
          setTimeout(() => {{ observer.disconnect(); resolve(links()); }}, {EVENT_S * 1000:.0f});
        }})"""
    )
    # Material shows "No matching documents" when the index splits words differently from the
    # query: `plugins: [search: {separator: ...}]` in mkdocs.yml must cut `hp:` off the keys.
    meta = browser.evaluate("document.querySelector('.md-search-result__meta').textContent")
    assert any(reference in href for href in links), (
        f"searching {QUERY!r} listed no {reference} ({meta!r}): {links}"
    )
