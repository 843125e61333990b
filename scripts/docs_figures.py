"""The documentation's figures, made by the real CLI against the project's fake engines.

    python scripts/docs_figures.py [--out docs/figures]

writes into docs/figures/:

- bench-latency.png: `mlcc bench --plot` against tests/bench/bench_fake_engine.py's fake engine
  (a speculative one, with a non-speculative one as `--baseline`);
- sweep.png: `mlcc bench --concurrency 1,4,16 --plot` against two fakes of
  tests/bench/bench_load_engine.py (the endpoint and its baseline twin);
- sweep-candidate.png: the same sweep with `--candidate-url` against a third fake whose draft
  head accepts more (docs/draft-promotion.md);
- cost-headline.txt: the `cost ...` block of `mlcc plan --stack dev`.

The fakes run on 127.0.0.1 in this process; each `mlcc` runs as its own process, the way a
person runs it. The figures are measured against the project's fake engine, not a GPU: the
pages say so. Under a minute.
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
FIGURES = REPO / "docs" / "figures"
BENCH_PNG = "bench-latency.png"
SWEEP_PNG = "sweep.png"
CANDIDATE_PNG = "sweep-candidate.png"
COST_TXT = "cost-headline.txt"
OUTPUTS = (BENCH_PNG, SWEEP_PNG, CANDIDATE_PNG, COST_TXT)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
# `mlcc` as a person runs it, with this checkout's mlcc first on the path.
MLCC = ("-c", "import sys; from mlcc.cli import entry; sys.argv[0] = 'mlcc'; entry()")


def fakes(module: str) -> Any:
    """A module of tests/bench (the fakes are test code, not part of the mlcc package)."""
    bench_tests = str(REPO / "tests" / "bench")
    if bench_tests not in sys.path:
        sys.path.insert(0, bench_tests)
    return importlib.import_module(module)


def mlcc(args: Sequence[str], cwd: Path) -> str:
    """Runs `mlcc ARGS`; its standard output, or SystemExit with what it said on failure."""
    path = os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    env = dict(os.environ, PYTHONPATH=path)
    done = subprocess.run(
        [sys.executable, *MLCC, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"mlcc {' '.join(args)} exited {done.returncode}:\n{done.stderr}")
    return done.stdout


def bench_figure(work: Path) -> Path:
    """`mlcc bench --plot`: a speculative fake engine against a non-speculative one. The fake
    streams a later chunk of n tokens after n token intervals; the speculative one's interval is
    shorter, as a verify step that accepts drafts is."""
    engine = fakes("bench_fake_engine")
    baseline = engine.EngineBehaviour(
        token_interval_s=0.010, chunk_tokens=(1,) * 14, metrics="plain"
    )
    speculative = engine.EngineBehaviour(token_interval_s=0.004)
    common = ["--requests", "24", "--concurrency", "4"]
    with engine.FakeEngine(baseline) as fake:
        mlcc(
            ["bench", "--url", fake.url, "--model", baseline.model, *common,
             "--label", "fake engine, no speculation", "--out", str(work / "base")],
            work,
        )  # fmt: skip
    with engine.FakeEngine(speculative) as fake:
        mlcc(
            ["bench", "--url", fake.url, "--model", speculative.model, *common,
             "--label", "fake engine, speculative", "--baseline",
             str(work / "base" / "bench.json"), "--plot", "--out", str(work / "spec")],
            work,
        )  # fmt: skip
    return work / "spec" / "latency.png"


def sweep_figure(work: Path) -> Path:
    """`mlcc bench --concurrency 1,4,16 --plot` against two batched fakes whose acceptance
    collapses with the batch (tests/bench/test_sweep_cli.py's COLLAPSING model)."""
    load = fakes("bench_load_engine")
    model = load.LoadModel(accept_half_batch=16)
    with (
        load.LoadEngine(load.LoadBehaviour(model, 4, seed=3)) as endpoint,
        load.LoadEngine(load.LoadBehaviour(model, 0, seed=4)) as twin,
    ):
        mlcc(
            ["bench", "--url", endpoint.url, "--twin-url", twin.url, "--model", load.MODEL,
             "--concurrency", "1,4,16", "--per-user", "2", "--requests", "2",
             "--max-tokens", "16", "--ignore-eos", "--plot", "--out", str(work / "sweep")],
            work,
        )  # fmt: skip
    return work / "sweep" / "sweep.png"


def candidate_figure(work: Path) -> Path:
    """`mlcc bench --concurrency 1,4,16 --candidate-url ... --plot`: three batched fakes, the
    current head, a candidate head accepting more at the same step time, and their twin
    (tests/bench/test_promotion_cli.py's CURRENT and BETTER, with a cheaper draft)."""
    load = fakes("bench_load_engine")
    # A cheaper draft than the tests' (draft_s): speculation pays at low concurrency, as on a GPU.
    fast = {"base_s": 0.002, "draft_s": 0.0002, "per_seq_s": 0.00025}
    current, better = (
        load.LoadModel(**fast, accept_first=0.5),
        load.LoadModel(**fast, accept_first=0.9),
    )
    with (
        load.LoadEngine(load.LoadBehaviour(current, 4, seed=1)) as endpoint,
        load.LoadEngine(load.LoadBehaviour(better, 4, seed=2)) as candidate,
        load.LoadEngine(load.LoadBehaviour(current, 0, seed=3)) as twin,
    ):
        mlcc(
            ["bench", "--url", endpoint.url, "--twin-url", twin.url, "--candidate-url",
             candidate.url, "--model", load.MODEL, "--concurrency", "1,4,16", "--per-user", "4",
             "--requests", "4", "--max-tokens", "16", "--ignore-eos", "--plot", "--out",
             str(work / "candidate")],
            work,
        )  # fmt: skip
    return work / "candidate" / "sweep.png"


def cost_headline(plan_output: str) -> str:
    """The `cost ...` block of `mlcc plan`: its first line and the indented lines under it."""
    lines = plan_output.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("cost ")), None)
    if start is None:
        raise SystemExit("mlcc plan printed no `cost ...` block")
    block = [lines[start]]
    for line in lines[start + 1 :]:
        if not line.startswith(" "):
            break
        block.append(line)
    return "\n".join(block) + "\n"


def write_all(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="mlcc-docs-figures-") as scratch:
        work = Path(scratch)
        shutil.copyfile(bench_figure(work), out / BENCH_PNG)
        shutil.copyfile(sweep_figure(work), out / SWEEP_PNG)
        shutil.copyfile(candidate_figure(work), out / CANDIDATE_PNG)
    plan = mlcc(["plan", "--stack", "dev"], REPO)
    (out / COST_TXT).write_text(cost_headline(plan))
    return [out / name for name in OUTPUTS]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=FIGURES, help="default: docs/figures")
    args = parser.parse_args(argv)
    for path in write_all(args.out):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
