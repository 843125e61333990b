"""`mlcc draft dataset`: a draft-training dataset from SageMaker Data Capture files; `mlcc draft
status`, a training job's progress (mlcc/cli/draft/status.py).

    mlcc draft dataset --input FILE_OR_DIR_OR_S3_PREFIX [--output DIR] [--validation-fraction 0.05]
        [--seed 0] [--upload s3://BUCKET/PREFIX/]

Reads every `.jsonl` capture file (local, or the objects under an s3:// prefix:
mlcc/cli/draft/s3_input.py) (mlcc/cli/draft/capture.py has the record format and its
source), keeps one row per distinct prompt and writes train.jsonl, validation.jsonl (the split
a hash of the prompt and the seed decides), drops.jsonl (file:line and reason of every record not
kept) and provenance.json into DIR (mlcc/cli/draft/dataset.py), and with --upload copies them to
S3 (mlcc/cli/draft/s3_store.py). Exit codes: 0 at least one row written (and uploaded), 1 none
(or the input, the output or the upload failed), 2 a usage error.
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from mlcc.cli.draft import capture, regenerate, s3_input, s3_store
from mlcc.cli.draft import dataset as draft_dataset
from mlcc.cli.draft import status as draft_status
from mlcc.userfiles import numbers, shown_path

EXIT_OK, EXIT_NONE, EXIT_USAGE = 0, 1, 2
MOST_RECORD_BYTES = 1 << 30
MOST_SEED = 2**63 - 1


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    draft = subparsers.add_parser(
        "draft",
        help="train a draft on the endpoint's own traffic: dataset, regenerate, status",
        description="Train a draft on the endpoint's own traffic: the dataset, its on-policy "
        "answers, and the training job's status (docs/draft.md).",
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
        "--input",
        required=True,
        help="a capture .jsonl file, a folder of them, or an s3://BUCKET/PREFIX/ holding them",
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
        "--seed",
        type=numbers.whole_flag_type(MOST_SEED, 0),
        default=0,
        help="the split's seed (default: 0)",
    )
    parser.add_argument(
        "--max-record-bytes",
        type=numbers.whole_flag_type(MOST_RECORD_BYTES, 2),
        default=draft_dataset.DEFAULT_MAX_RECORD_BYTES,
        metavar="BYTES",
        help=f"drop a line longer than this (default: {draft_dataset.DEFAULT_MAX_RECORD_BYTES})",
    )
    s3_store.add_flags(parser, reads="--input s3://")
    parser.set_defaults(run=run)
    regenerate.register(steps, version)
    draft_status.register(steps)


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
        upload_to = s3_store.upload_place(args.upload)
    except ValueError as error:
        print(f"draft dataset: {error}", file=sys.stderr)
        return EXIT_USAGE
    source: Path | str = args.input if s3_store.is_uri(args.input) else Path(args.input)
    try:
        (args.output / "provenance.json").unlink(missing_ok=True)  # written last, when complete
        if isinstance(source, str):
            tally = s3_input.build(
                source, args.output, split, args.max_record_bytes, args.s3_timeout
            )
        else:
            tally = draft_dataset.build(source, args.output, split, args.max_record_bytes)
        record = draft_dataset.provenance(tally, source, split, args.max_record_bytes, version())
        (args.output / "provenance.json").write_text(json.dumps(record, indent=2) + "\n")
    except draft_dataset.InputError as error:
        print(f"draft dataset: {error}", file=sys.stderr)
        return EXIT_NONE
    except OSError as error:
        why = error.strerror or "cannot be written"
        print(f"draft dataset: --output {shown_path(args.output)}: {why}", file=sys.stderr)
        return EXIT_NONE
    code = _report(tally, args.output)
    if code != EXIT_OK or upload_to is None:
        return code
    uploaded = s3_store.upload_and_say("draft dataset", args.output, upload_to, args.s3_timeout)
    return EXIT_OK if uploaded else EXIT_NONE


def _report(tally: draft_dataset.Tally, output: Path) -> int:
    files = len(tally.sources)
    print(
        f"read {tally.read} records in {files} file{'s' * (files != 1)}: {tally.kept} rows "
        f"({tally.train} train, {tally.validation} validation), "
        f"{sum(tally.dropped.values())} dropped"
    )
    for reason in capture.DROP_REASONS:
        if tally.dropped[reason]:
            print(f"  dropped, {reason}: {tally.dropped[reason]}")
    print(f"wrote {shown_path(output)}/ (train, validation, drops, provenance)")
    if tally.kept:
        return EXIT_OK
    why = "no .jsonl files found" if not files else "every record was dropped (drops.jsonl)"
    print(f"draft dataset: no rows written: {why}", file=sys.stderr)
    return EXIT_NONE
