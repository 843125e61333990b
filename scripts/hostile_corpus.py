"""Run the hostile corpus (tests/hostile/, issue #37) and print what each case came to: the
count of each class per system, then every case that is not clean, with the lines that show it.

    python scripts/hostile_corpus.py [--only SUBSTRING] [--jobs N]

Each case is the real `mlcc` in a subprocess against fakes on 127.0.0.1 (tests/hostile/
classify.py); the order is the corpus's, whatever order the cases end in. Exit 1 when a case
is not clean and not a known one (marked xfail in the corpus), else 0."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
FOLDERS = ("tests", "tests/preflight", "tests/bench", "tests/deploy", "tests/observability")
sys.path[:0] = [str(REPO), *(str(REPO / folder) for folder in (*FOLDERS, "tests/hostile"))]

from classify import CLASSES, run_case  # type: ignore[import-not-found]  # noqa: E402
from corpus import SYSTEMS, cases, control_of  # type: ignore[import-not-found]  # noqa: E402


def table(verdicts: list[Any]) -> list[str]:
    counts = Counter((v.case.system, v.kind) for v in verdicts)
    width = max(len(kind) for kind in CLASSES)
    lines = ["class".ljust(width) + "".join(f"{s:>12}" for s in SYSTEMS) + f"{'all':>8}"]
    for kind in CLASSES:
        row = [counts[(system, kind)] for system in SYSTEMS]
        lines.append(kind.ljust(width) + "".join(f"{n:>12}" for n in row) + f"{sum(row):>8}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="run the cases whose id holds this")
    parser.add_argument("--jobs", type=int, default=2, help="cases at once (default 2)")
    args = parser.parse_args(argv)
    chosen = [case for case in cases() if args.only in case.id]
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        verdicts = list(pool.map(lambda case: run_case(case, control_of(case)), chosen))
    print(f"{len(verdicts)} cases")
    for line in table(verdicts):
        print(line)
    unclean = [v for v in verdicts if v.kind != "clean"]
    if unclean:
        print()
        print("not clean:")
    for verdict in unclean:
        known = f"  (known: {verdict.case.xfail})" if verdict.case.xfail else ""
        print(verdict.report() + known)
    unexpected = [v for v in unclean if not v.case.xfail]
    fixed = [v.case.id for v in verdicts if v.kind == "clean" and v.case.xfail]
    for case_id in fixed:
        print(f"marked known but clean now: {case_id}")
    return 1 if unexpected or fixed else 0


if __name__ == "__main__":
    sys.exit(main())
