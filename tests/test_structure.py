"""Structural guards over the repository itself: pure ast and text, no imports of mlcc.

- mlcc/ has no import cycles. Edges are explicit imports anywhere in a module: function-level
  ones and those under `if TYPE_CHECKING:` included (a cycle through type hints still ties two
  modules together); the implicit import of a parent package is left out.
- No module under mlcc/ is longer than MAX_MODULE_LINES.
- No file refers to anything outside the repository (the design notes and reference folder this
  project was written from are not in it; docs/ is), and every relative Markdown link and every
  cited docs/*.md exists.
- No test can skip: everything the suite needs is in the repository or in `.[dev]`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = "mlcc"
MAX_MODULE_LINES = 400
NOT_SOURCES = {
    ".git",
    ".venv",
    "venv",
    "build",
    "node_modules",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".hypothesis",
}
TEXT_SUFFIXES = {".py", ".md", ".yaml", ".yml", ".sh", ".toml", ".cfg", ".ini", ".txt", ".json"}
TEXT_NAMES = {"Makefile", "Dockerfile", ".gitignore", ".dockerignore"}
# The notes the project was designed from and the machine it was written on.
OUTSIDE_REFERENCE = re.compile(
    r"\.\./shared|shared/reference|MLCC_SHARED_DIR|\bDESIGN\b|/work/"
    # the outside reference notes by name, unless a file of docs/ carries the name
    r"|(?<!docs/)\b(engines|hyperpod|prior-art|pulumi-testing|aws-recommendation-api)\.md\b"
)
MARKDOWN_LINK = re.compile(r"\]\(([^)\s]+)\)")
DOCS_CITATION = re.compile(r"(?<![\w./-])docs/[\w./-]+\.md\b")
SKIP_CALLS = {"skip", "skipif", "importorskip"}


# -- the repository's files ----------------------------------------------------------------


def repository_files(root: Path = REPO) -> Iterator[Path]:
    for path in sorted(root.iterdir()):
        if path.name in NOT_SOURCES or path.name.endswith(".egg-info"):
            continue
        if path.is_dir() and not path.is_symlink():
            yield from repository_files(path)
        elif path.is_file():
            yield path


def is_text_source(path: Path) -> bool:
    if path.suffix in TEXT_SUFFIXES or path.name in TEXT_NAMES:
        return True
    with path.open("rb") as file:
        return file.read(2) == b"#!"


def text_sources() -> list[Path]:
    return [p for p in repository_files() if is_text_source(p)]


def where(path: Path, line: int) -> str:
    return f"{path.relative_to(REPO)}:{line}"


# -- the import graph ----------------------------------------------------------------------


def module_names(root: Path, package: str) -> dict[str, Path]:
    modules = {}
    for path in (root / package).rglob("*.py"):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def _from_base(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    package = module if is_package else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules that `module` imports (`from B import n`: B.n if a module, else B)."""
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _from_base(node, module, path.name == "__init__.py")
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                targets.add(submodule if submodule in modules else base)
    return {t for t in targets if t in modules and t != module}


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    modules = module_names(root, package)
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Cycles (a -> ... -> a), each the shortest through its first module; together they
    name every module that is on a cycle."""
    found: list[list[str]] = []
    seen: set[str] = set()
    for start in sorted(graph):
        if start in seen:
            continue
        cycle = _shortest_cycle(graph, start)
        if cycle:
            found.append(cycle)
            seen.update(cycle)
    return found


def _shortest_cycle(graph: dict[str, set[str]], start: str) -> list[str] | None:
    paths: dict[str, list[str]] = {start: [start]}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for target in sorted(graph[node]):
                if target == start:
                    return [*paths[node], start]
                if target not in paths:
                    paths[target] = [*paths[node], target]
                    following.append(target)
        frontier = following
    return None


# -- the guards ----------------------------------------------------------------------------


def test_the_package_has_no_import_cycles() -> None:
    found = [" -> ".join(cycle) for cycle in cycles(import_graph(REPO, PACKAGE))]
    assert found == [], "import cycles in mlcc/:\n" + "\n".join(found)


# The packages of mlcc/ in the order data flows through them (docs/architecture.md). A package
# imports only packages of a lower rank; packages of one rank stand beside each other.
PACKAGE_RANKS = {
    "facts": 0,
    "engine_contract": 0,
    "serving": 1,
    "userfiles": 1,
    "stackfiles": 2,
    "config": 3,
    "manifest": 4,
    "preflight": 5,
    "recommendation": 6,  # reads AWS through mlcc/preflight/bounded/ (sizes, pages)
    "deploy": 5,
    "bench": 5,
    "prometheus": 5,
    "observability": 6,
    "components": 7,
    "plan": 8,
    "cli": 9,
}
ENTRY_POINTS = {"__init__.py", "__main__.py"}


def _package_of(module: str) -> str:
    return module.split(".")[1] if module.count(".") else ""


def test_every_module_lives_in_a_package_but_the_entry_points() -> None:
    loose = sorted(p.name for p in (REPO / PACKAGE).glob("*.py") if p.name not in ENTRY_POINTS)
    assert loose == [], f"modules directly in mlcc/ (put each in the package of its job): {loose}"
    packages = {p.name for p in (REPO / PACKAGE).iterdir() if (p / "__init__.py").is_file()}
    assert packages == set(PACKAGE_RANKS), "a package without a rank (or a rank without one)"


def test_packages_import_only_packages_below_them_in_the_data_flow() -> None:
    upward = sorted(
        f"{module} imports {target}"
        for module, targets in import_graph(REPO, PACKAGE).items()
        for target in targets
        if (source := _package_of(module)) in PACKAGE_RANKS
        and (imported := _package_of(target)) in PACKAGE_RANKS
        and source != imported
        and PACKAGE_RANKS[imported] >= PACKAGE_RANKS[source]
    )
    assert upward == [], "imports against the data flow:\n" + "\n".join(upward)


def test_the_architecture_page_has_a_layout_row_per_package() -> None:
    page = (REPO / "docs" / "architecture.md").read_text()
    missing = [name for name in PACKAGE_RANKS if f"| `mlcc/{name}/` |" not in page]
    assert missing == [], f"docs/architecture.md's layout table lacks rows for {missing}"


def test_no_module_is_longer_than_the_limit() -> None:
    too_long = {
        str(path.relative_to(REPO)): length
        for path in sorted((REPO / PACKAGE).rglob("*.py"))
        if (length := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert too_long == {}, f"modules over {MAX_MODULE_LINES} lines (split them): {too_long}"


def test_no_file_refers_to_anything_outside_the_repository() -> None:
    this_file = Path(__file__).resolve()
    found = [
        f"{where(path, number)}: {line.strip()}"
        for path in text_sources()
        if path.resolve() != this_file
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), start=1)
        if OUTSIDE_REFERENCE.search(line)
    ]
    assert found == [], "references to files outside the repository:\n" + "\n".join(found)


def _link_target_missing(markdown: Path, target: str) -> bool:
    if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
        return False  # a URL or an anchor in the same page
    resolved = (markdown.parent / target.split("#", 1)[0]).resolve()
    return not resolved.is_relative_to(REPO.resolve()) or not resolved.exists()


def broken_references(path: Path) -> Iterator[str]:
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), start=1):
        for cited in DOCS_CITATION.findall(line):
            if not (REPO / cited).is_file():
                yield f"{where(path, number)}: {cited}"
        links = MARKDOWN_LINK.findall(line) if path.suffix == ".md" else []
        for target in links:
            if _link_target_missing(path, target):
                yield f"{where(path, number)}: {target}"


def test_every_relative_markdown_link_and_cited_doc_exists() -> None:
    broken = [reference for path in text_sources() for reference in broken_references(path)]
    assert broken == [], "links and citations to files that do not exist:\n" + "\n".join(broken)


def _skip_calls(path: Path) -> list[int]:
    return sorted(_skip_nodes(ast.parse(path.read_text(), str(path))))


def _skip_nodes(tree: ast.AST) -> Iterator[int]:
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and node.attr in SKIP_CALLS):
            continue
        owner = node.value
        if isinstance(owner, ast.Attribute) and owner.attr == "mark":
            owner = owner.value
        if isinstance(owner, ast.Name) and owner.id in {"pytest", "unittest"}:
            yield node.lineno


def test_no_test_can_skip() -> None:
    """A fresh clone with `.[dev]` installed has every file and tool; absence is a failure."""
    found = [
        where(path, line)
        for path in sorted((REPO / "tests").rglob("*.py"))
        if path.resolve() != Path(__file__).resolve()
        for line in _skip_calls(path)
    ]
    assert found == [], "tests that can skip (fail with a one-line reason instead):\n" + "\n".join(
        found
    )


# -- the guards' own machinery, on a package made for the purpose --------------------------


def write_package(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_function_level_and_relative_imports_form_cycles(tmp_path: Path) -> None:
    write_package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "def f():\n    from pkg import b\n",
            "pkg/b.py": "from . import c\n",
            "pkg/c.py": "import pkg.a\n",
            "pkg/sub/__init__.py": "from ..a import f\n",
            "pkg/leaf.py": "import json\nfrom pkg.a import f\n",
        },
    )
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg.sub"] == {"pkg.a"} and graph["pkg.leaf"] == {"pkg.a"}
    assert cycles(graph) == [["pkg.a", "pkg.b", "pkg.c", "pkg.a"]]


def test_type_checking_imports_are_edges(tmp_path: Path) -> None:
    write_package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "from pkg import b\n",
            "pkg/b.py": "import typing\nif typing.TYPE_CHECKING:\n    from pkg.a import Thing\n",
        },
    )
    assert cycles(import_graph(tmp_path, "pkg")) == [["pkg.a", "pkg.b", "pkg.a"]]


def test_the_skip_scan_finds_every_form(tmp_path: Path) -> None:
    test_file = tmp_path / "test_x.py"
    test_file.write_text(
        "import pytest\n"
        "yaml = pytest.importorskip('yaml')\n"
        "@pytest.mark.skipif(True, reason='x')\n"
        "def test_a():\n    pytest.skip('absent')\n"
        "@pytest.mark.skip\n"
        "def test_b():\n    skip = 1\n"
    )
    assert list(_skip_calls(test_file)) == [2, 3, 5, 6]
