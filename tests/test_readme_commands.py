"""Every `mlcc plan` command line in the README and the manual (docs/) runs, so neither can go
stale.

The commands run in order, in one copy of the project (so `--diff build/base` finds the plan an
earlier line wrote), and each must exit 0. The `pulumi config set --path` lines must mean the
same as the `--set` lines: applied to the dev stack they give the same config.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import shlex
from pathlib import Path

import pytest
from program_runs import REPO

from mlcc.cli import main

README = REPO / "README.md"
# The pages whose command lines run: the README and the manual's hand-written pages. The
# generated reference pages (docs/reference/) print usage lines, not commands to run.
PAGES = [
    README,
    *sorted(p for p in (REPO / "docs").rglob("*.md") if "reference" not in p.parent.parts),
]
MLCC = ".venv/bin/mlcc"


COMMANDS = ("mlcc plan", "make plan", "pulumi config set")


def code_lines(text: str) -> list[str]:
    """The command lines of the indented code blocks, without their trailing `# comment`."""
    return [
        _without_comment(line.strip())
        for line in text.splitlines()
        if line.startswith("    ")
        and any(line.strip().startswith(c) or f"/{c}" in line for c in COMMANDS)
    ]


def _without_comment(line: str) -> str:
    lexer = shlex.shlex(line, posix=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    return shlex.join(list(lexer))


def plan_commands(text: str) -> list[list[str]]:
    """Each `mlcc plan ...` (or `make plan`) line as the argv after `mlcc`."""
    commands = []
    for line in code_lines(text):
        words = shlex.split(line)
        if words[:2] == ["make", "plan"]:
            commands.append(["plan", "--stack", "dev"])
        elif words and words[0] in {MLCC, "mlcc"} and words[1:2] == ["plan"]:
            commands.append(words[1:])
    return commands


def command_text() -> str:
    """The README and the manual's pages, one after the other."""
    return "\n".join(page.read_text(encoding="utf-8") for page in PAGES)


# Each once: the README repeats a few of the manual's.
PLAN_COMMANDS = [list(c) for c in dict.fromkeys(tuple(c) for c in plan_commands(command_text()))]


def test_the_readme_keeps_a_few_of_the_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(plan_commands(text)) >= 2
    assert len([line for line in code_lines(text) if line.startswith("pulumi config set")]) >= 3


def test_the_readme_and_manual_show_plan_commands_for_each_feature() -> None:
    commands = [" ".join(c) for c in PLAN_COMMANDS]
    assert len(commands) >= 8
    for feature in ("--diff", "--stack existing", "hp:tags.owner=", "[0].", "={", "="):
        assert any(feature in c for c in commands), feature


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("readme-project")
    for entry in REPO.iterdir():
        if entry.name not in {"build", ".venv", ".git"}:
            (copy / entry.name).symlink_to(entry)
    return copy


@pytest.mark.parametrize(
    "argv",
    PLAN_COMMANDS,
    ids=lambda argv: " ".join(argv[1:]) or "plan",
)
def test_each_readme_plan_command_succeeds(
    argv: list[str], project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    for command in [*writers_of_its_diff(argv), argv]:
        stderr = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(stderr):
            code = main(command)
        assert code == 0, f"{' '.join(command)}: {stderr.getvalue()}"


def writers_of_its_diff(argv: list[str]) -> list[list[str]]:
    """The commands that write the plan `argv` diffs against (`--out build/base` before
    `--diff build/base`): run first in the same test, as the workers share no folder."""
    if "--diff" not in argv[:-1]:
        return []
    base = argv[argv.index("--diff") + 1]
    writers = [
        command
        for command in PLAN_COMMANDS
        if "--out" in command[:-1] and command[command.index("--out") + 1] == base
    ]
    assert writers, f"the manual diffs against {base} but no command writes it"
    return writers


def pulumi_path_sets(text: str) -> list[tuple[str, str]]:
    pairs = []
    for line in code_lines(text):
        words = shlex.split(line)
        if words[:4] == ["pulumi", "config", "set", "--path"]:
            key, value = words[4:6]
            pairs.append((key, value))
    return pairs


def path_sets(argv: list[str]) -> list[tuple[str, str]]:
    """The `--set KEY=VALUE` pairs of one command whose KEY is a path."""
    pairs = [word.split("=", 1) for flag, word in itertools.pairwise(argv) if flag == "--set"]
    return [(key, value) for key, value in pairs if "." in key or "[" in key]


def test_the_pulumi_config_set_path_lines_match_the_set_lines() -> None:
    text = command_text()
    pulumi_sets = pulumi_path_sets(text)
    mlcc_sets = {pair for argv in PLAN_COMMANDS for pair in path_sets(argv)}
    assert len(pulumi_sets) >= 3
    assert set(pulumi_sets) == mlcc_sets
