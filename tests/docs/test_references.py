"""docs/reference/ is generated from the code (scripts/docs_reference.py): never stale, and
complete (every key, every algorithm of every release, every flag of every subcommand)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import docs_reference as generator
import pytest

from mlcc import engine_contract as contract
from mlcc.cli import build_parser
from mlcc.config import provider_keys, schema
from mlcc.serving.engines import RELEASES, Engine

REPO = Path(__file__).resolve().parents[2]


def page(path: Path) -> str:
    return (REPO / path).read_text(encoding="utf-8")


@pytest.mark.parametrize("path", list(generator.PAGES), ids=lambda p: p.name)
def test_a_generated_page_is_not_stale(path: Path) -> None:
    assert page(path) == generator.PAGES[path](), f"{path} is stale: run `make docs-reference`"


def test_check_names_a_stale_page_and_the_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for path, render in generator.PAGES.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(render(), encoding="utf-8")
    assert generator.main(["--check", "--root", str(tmp_path)]) == 0
    (tmp_path / generator.CLI).write_text("# edited by hand\n", encoding="utf-8")
    assert generator.main(["--check", "--root", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert str(generator.CLI) in err and "run `make docs-reference`" in err
    assert str(generator.CONFIGURATION) not in err


def test_the_configuration_page_lists_every_key_under_its_own_heading() -> None:
    text = page(generator.CONFIGURATION)
    for key in schema.KEYS:
        assert f"### `{key.qualified}`\n" in text, key.qualified
        assert f"| [`{key.qualified}`](#{generator.anchor(key.qualified)}) |" in text
    for name in provider_keys.PROVIDER_KEYS:
        assert f"### `{name}`\n" in text, name


def test_every_key_has_an_example_valid_for_its_type() -> None:
    for key in schema.KEYS:
        command = generator.example(key)
        words = command.split()
        assert words[:3] == ["pulumi", "config", "set"], command
        args = [w for w in words[3:] if not w.startswith("--")]
        assert args[0].strip("'").startswith(key.qualified), command
        if "--path" in words:
            assert key.type is None, f"{key.qualified} is not structured: {command}"
            continue
        value = args[1]
        if key.type == "integer" or (key.type is None and key.default == ""):
            assert re.fullmatch(r"[0-9]+", value), command
        elif key.type == "boolean":
            assert value in ("true", "false"), command
        if key.name == generator.ALGORITHM_KEY:
            assert value in contract.ALGORITHMS, command


def _release_row(text: str, engine: Engine, version: str) -> str:
    rows = [
        line for line in text.splitlines() if line.startswith(f"| `{engine.value}` | `{version}` |")
    ]
    assert len(rows) == 1, (engine, version)
    return rows[0]


def test_the_configuration_page_lists_every_algorithm_of_each_release() -> None:
    text = page(generator.CONFIGURATION)
    for engine in Engine:
        for version, release in RELEASES[engine].items():
            row = _release_row(text, engine, version)
            for name, algorithm in contract.ALGORITHMS.items():
                runs = (
                    algorithm.engine_algorithm(engine) in release.speculative_names
                    and contract.unrunnable_reason(engine, version, name) is None
                )
                assert (f"`{name}`" in row) == runs, (engine, version, name)


def test_the_engine_release_page_answers_which_algorithms_a_release_takes() -> None:
    text = page(generator.ENGINE_RELEASES)
    sections = re.split(r"^## ", text, flags=re.MULTILINE)
    for engine in Engine:
        for version, release in RELEASES[engine].items():
            [section] = [s for s in sections if s.startswith(f"{engine.value} {version}\n")]
            assert release.base_image.split(":")[0] in section
            assert f"`{engine.value}=={version}`" in section
            for name in contract.ALGORITHMS:
                [row] = [line for line in section.splitlines() if line.startswith(f"| `{name}` |")]
                assert row.split(" | ")[2] == "yes" or row.split(" | ")[2].startswith("no")
                assert (row.split(" | ")[2] == "yes") == (
                    name in generator.takes(engine, version)
                ), (engine, version, name)
            for parameter, _ in contract.RELEASE_TABLES[engine][version].speculative_parameters:
                assert parameter in section, (engine, version, parameter)
    assert "scripts/engine_flags.py" in text


def test_sglang_0_5_23_takes_the_eagle_family_but_not_the_vllm_only_methods() -> None:
    row = _release_row(page(generator.CONFIGURATION), Engine.SGLANG, "0.5.23")
    assert "`eagle3`" in row and "`ngram`" in row
    assert "`suffix`" not in row and "`ngram-gpu`" not in row


def test_the_cli_page_lists_every_flag_of_every_subcommand() -> None:
    text = page(generator.CLI)
    parser = build_parser()
    [commands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert commands.choices
    sections = re.split(r"^## ", text, flags=re.MULTILINE)
    for name, sub, _ in generator._commands(commands):
        [section] = [s for s in sections if s.startswith(f"`mlcc {name}`\n")]
        rows = [line for line in section.splitlines() if line.startswith("| `-")]
        flags = [a.option_strings for a in sub._actions if a.option_strings]
        assert len(rows) == len(flags), name
        for row, strings in zip(rows, flags, strict=True):  # in the parser's order
            assert row.startswith("| " + ", ".join(f"`{s}`" for s in strings) + " |"), row
        for action in sub._actions:
            if isinstance(action, argparse._SubParsersAction):
                continue  # its steps have sections of their own
            for choice in action.choices or ():
                assert f"`{choice}`" in section, (name, choice)


def test_every_table_row_has_its_header_s_cells() -> None:
    """An unescaped `|` in a cell would split it: each row has as many cells as its header."""
    for path in generator.PAGES:
        width = 0
        for line in page(path).splitlines():
            if not line.startswith("|"):
                width = 0
                continue
            cells = len(re.split(r"(?<!\\)\|", line)) - 2
            width = width or cells
            assert cells == width, (path, line)
