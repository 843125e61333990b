"""`mlcc draft dataset`: a draft-training dataset from SageMaker Data Capture files.

    mlcc draft dataset --input FILE_OR_DIR [--output DIR] [--validation-fraction 0.05] [--seed 0]

Reads every `.jsonl` capture file (mlcc/cli/draft/capture.py has the record format and its
source), keeps one row per distinct prompt and writes train.jsonl, validation.jsonl (the split
a hash of the prompt and the seed decides), drops.jsonl (file:line and reason of every record not
kept) and provenance.json into DIR (mlcc/cli/draft/dataset.py). Exit codes: 0 at least one row
written, 1 none (or the input or output cannot be used), 2 a usage error.
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

from mlcc.cli.draft import capture
from mlcc.cli.draft import dataset as draft_dataset
from mlcc.userfiles import numbers, shown_path

EXIT_OK, EXIT_NONE, EXIT_USAGE = 0, 1, 2
MOST_RECORD_BYTES = 1 << 30
MOST_SEED = 2**63 - 1


def _whole(most: int, least: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            return numbers.whole_number(text, most, least)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    return parse


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    draft = subparsers.add_parser(
        "draft",
        help="train a draft on the endpoint's own traffic (so far: the dataset)",
        description="Steps of training a draft model on captured traffic (issue #45).",
    )
    steps = draft.add_subparsers(dest="step", required=True, metavar="STEP")
    parser = steps.add_parser(
        "dataset",
        help="a train/validation dataset from SageMaker Data Capture files",
        description=(
            "Read SageMaker Data Capture JSON Lines files, keep one conversation per distinct "
            "prompt and write train.jsonl and validation.jsonl in the conversations format "
            "speculators prepare-data reads, with drops.jsonl and provenance.json. Exit 0 when "
            "at least one row was written, 1 when none."
        ),
    )
    parser.add_argument(
        "--input", required=True, type=Path, help="a capture .jsonl file, or a folder of them"
    )
    parser.add_argument(
        "--output", type=Path, default=Path("draft-dataset"), help="(default: draft-dataset)"
    )
    parser.add_argument(
        "--validation-fraction",
        type=numbers.flag_type("", 0.0, 0.5),
        default=0.05,
        metavar="FRACTION",
        help="share of prompts in validation.jsonl, 0 to 0.5 (default: 0.05)",
    )
    parser.add_argument(
        "--seed", type=_whole(MOST_SEED, 0), default=0, help="the split's seed (default: 0)"
    )
    parser.add_argument(
        "--max-record-bytes",
        type=_whole(MOST_RECORD_BYTES, 2),
        default=draft_dataset.DEFAULT_MAX_RECORD_BYTES,
        metavar="BYTES",
        help=f"drop a line longer than this (default: {draft_dataset.DEFAULT_MAX_RECORD_BYTES})",
    )
    parser.set_defaults(run=run)


def version() -> str:
    try:
        return metadata.version("mlcc")
    except metadata.PackageNotFoundError:  # a checkout run without installing: its pyproject
        pyproject = Path(__file__).resolve().parents[3] / "pyproject.toml"
        try:
            project = tomllib.loads(pyproject.read_text()).get("project", {})
        except (OSError, ValueError):
            return "unknown"
        return str(project.get("version", "unknown"))


def run(args: argparse.Namespace) -> int:
    split = draft_dataset.Split(args.validation_fraction, args.seed)
    try:
        tally = draft_dataset.build(args.input, args.output, split, args.max_record_bytes)
        record = draft_dataset.provenance(
            tally, args.input, split, args.max_record_bytes, version()
        )
        (args.output / "provenance.json").write_text(json.dumps(record, indent=2) + "\n")
    except draft_dataset.InputError as error:
        print(f"draft dataset: {error}", file=sys.stderr)
        return EXIT_NONE
    except OSError as error:
        print(f"draft dataset: {shown_path(args.output)}: {error.strerror}", file=sys.stderr)
        return EXIT_NONE
    files = len(tally.sources)
    print(
        f"read {tally.read} records in {files} file{'s' * (files != 1)}: {tally.kept} rows "
        f"({tally.train} train, {tally.validation} validation), "
        f"{sum(tally.dropped.values())} dropped"
    )
    for reason in capture.DROP_REASONS:
        if tally.dropped[reason]:
            print(f"  dropped, {reason}: {tally.dropped[reason]}")
    print(f"wrote {shown_path(args.output)}/ (train, validation, drops, provenance)")
    if tally.kept:
        return EXIT_OK
    why = "no .jsonl files found" if not files else "every record was dropped (drops.jsonl)"
    print(f"draft dataset: no rows written: {why}", file=sys.stderr)
    return EXIT_NONE
