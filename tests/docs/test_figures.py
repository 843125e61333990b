"""docs/figures/: what scripts/docs_figures.py writes (`make docs-figures`), there and whole. The
suite does not regenerate them (under a minute of real `mlcc` runs); it checks the files the
script names and the part of the script that needs no engine."""

from __future__ import annotations

import struct

import docs_figures

PNG_NAMES = (docs_figures.BENCH_PNG, docs_figures.SWEEP_PNG, docs_figures.CANDIDATE_PNG)


def png_size(data: bytes) -> tuple[int, int]:
    assert data.startswith(docs_figures.PNG_MAGIC), "not a PNG"
    assert data[12:16] == b"IHDR", "a PNG without its header chunk first"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_the_figures_are_the_scripts_and_only_those() -> None:
    present = sorted(path.name for path in docs_figures.FIGURES.iterdir())
    assert present == sorted(docs_figures.OUTPUTS), "run `make docs-figures`"


def test_the_plots_are_whole_pngs_of_matplotlibs_size() -> None:
    for name in PNG_NAMES:
        data = (docs_figures.FIGURES / name).read_bytes()
        # 11 x 4 inches at 120 dpi (mlcc.bench.report, mlcc.bench.sweep.report), more or less
        # what tight_layout leaves.
        width, height = png_size(data)
        assert 1000 <= width <= 1500 and 350 <= height <= 600, (name, width, height)
        assert data.endswith(b"IEND\xaeB`\x82"), f"{name} is cut short"


def test_the_cost_headline_is_mlcc_plans_cost_block() -> None:
    text = (docs_figures.FIGURES / docs_figures.COST_TXT).read_text()
    lines = text.splitlines()
    assert lines[0].startswith("cost in us-east-1 (prices: ")
    assert all(line.startswith("  ") for line in lines[1:])
    assert any(line.startswith("  total: ") for line in lines)
    assert text.endswith("\n") and "\n\n" not in text


PLAN = """\
stack dev: create mode
endpoint hp-dev (inference): vllm
cost in us-east-1 (prices: snapshot):
  EKS control plane x 1 @ $0.10/h = $0.10/h
  not priced: EBS volumes,
    the system nodes

resources (72):
"""


def test_the_cost_block_is_cut_from_the_plan_at_its_first_unindented_line() -> None:
    assert docs_figures.cost_headline(PLAN) == (
        "cost in us-east-1 (prices: snapshot):\n"
        "  EKS control plane x 1 @ $0.10/h = $0.10/h\n"
        "  not priced: EBS volumes,\n"
        "    the system nodes\n"
    )
