"""`mlcc draft regenerate`: the answers of a `mlcc draft dataset` folder regenerated on-policy by
the deployed target, with the token ids speculators trains on (docs/draft.md, "Regeneration").

    mlcc draft regenerate --dataset DIR_OR_S3_PREFIX --endpoint URL [--output DIR] [--model NAME]
        [--concurrency 8] [--max-tokens 4096] [--temperature 0] [--request-timeout 600]
        [--retries 2] [--upload s3://BUCKET/PREFIX/] [--s3-timeout 60]

Each row's prompt (its conversation without the captured answer) goes to the endpoint's
`/v1/chat/completions` with `return_token_ids: true` (mlcc/cli/draft/endpoint.py has the fields
and their source); each reply becomes a row of speculators' pre-tokenized form or a drop with its
reason (mlcc/cli/draft/regen_pool.py). The counts are checked against the written files: rows
written + requests dropped == prompts sent. Exit codes: 0 at least one row written and the counts
add up (and, with --upload, the four files are in S3: mlcc/cli/draft/s3_store.py), 1 none
written, the counts do not add up, the endpoint or a folder cannot be used, or the upload
failed, 2 a usage error.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from mlcc import userfiles
from mlcc.cli.draft import endpoint as ep
from mlcc.cli.draft import regen_pool, regen_s3, s3_store
from mlcc.cli.draft.dataset import check_output_files
from mlcc.cli.draft.regen_pool import SPLITS
from mlcc.engine_contract.values import printable
from mlcc.userfiles import numbers, shown_path

EXIT_OK, EXIT_NONE, EXIT_USAGE = 0, 1, 2
PROVENANCE_VERSION = 1
MOST_CONCURRENCY = 256
MOST_TOKENS = 1_000_000
MOST_RETRIES = 10
BACKOFF_S = 1.0  # before the first retry; doubled for each next one
PROGRESS_EVERY_S = 5.0
REVISION_NOTE = (
    "not reported: vLLM's /v1/models has no revision field (vllm 0.27.1, "
    "vllm/entrypoints/openai/engine/protocol.py, ModelCard); root is the model the server loaded"
)


def register(
    steps: argparse._SubParsersAction[argparse.ArgumentParser], version: Callable[[], str]
) -> None:
    """The `regenerate` step; `version` gives mlcc's version for provenance.json."""
    parser = steps.add_parser(
        "regenerate",
        help="regenerate a dataset's answers on-policy with the deployed target (vLLM)",
        description=(
            "Send every prompt of a `mlcc draft dataset` folder (or its s3:// prefix) to the "
            "target's vLLM server with return_token_ids and write the replies as speculators "
            "pre-tokenized rows (input_ids, loss_mask) with drops.jsonl and provenance.json. "
            "Exit 0 when at least one row was written and the counts add up, 1 otherwise."
        ),
    )
    parser.add_argument(
        "--dataset",
        required=True,
        metavar="DIR_OR_S3_PREFIX",
        help=(
            "the folder `mlcc draft dataset` wrote, or the s3://BUCKET/PREFIX/ its --upload "
            "put it in"
        ),
    )
    parser.add_argument(
        "--endpoint",
        required=True,
        metavar="URL",
        help="the vLLM server's base URL, e.g. http://127.0.0.1:8080 (kubectl port-forward)",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=Path("draft-regenerated"),
        metavar="DIR",
        help="(default: draft-regenerated)",
    )
    parser.add_argument(
        "--model",
        metavar="NAME",
        help="the served model name (default: the first one /v1/models lists)",
    )
    parser.add_argument(
        "--concurrency",
        type=numbers.whole_flag_type(MOST_CONCURRENCY),
        default=8,
        metavar="N",
        help=f"requests in flight at most, 1 to {MOST_CONCURRENCY} (default: 8)",
    )
    parser.add_argument(
        "--max-tokens",
        type=numbers.whole_flag_type(MOST_TOKENS),
        default=4096,
        metavar="N",
        help="max_tokens of each request (default: 4096)",
    )
    parser.add_argument(
        "--temperature",
        type=numbers.flag_type("", 0.0, 2.0),
        default=0.0,
        metavar="T",
        help="sampling temperature, 0 to 2 (default: 0, greedy, as mlcc bench measures)",
    )
    parser.add_argument(
        "--request-timeout",
        type=numbers.flag_type("seconds", 0.0, 86_400.0, above=True),
        default=600.0,
        metavar="SECONDS",
        help="the whole of one request, answer included (default: 600)",
    )
    parser.add_argument(
        "--retries",
        type=numbers.whole_flag_type(MOST_RETRIES, 0),
        default=2,
        metavar="N",
        help="more attempts after a connection error, 408, 409, 425, 429 or 5xx (default: 2)",
    )
    s3_store.add_flags(parser, reads="--dataset s3://")
    parser.set_defaults(run=run, tool_version=version)


def _same_folder(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def _input_provenance(folder: Path) -> Any:
    """The dataset's own provenance.json, or None when it has none that reads as JSON."""
    try:
        return userfiles.read_json(folder / "provenance.json", "--dataset")
    except userfiles.UserFileError:
        return None


def _check_dataset(dataset: Path) -> None:
    """UserFileError unless the dataset folder has a split file."""
    kind = userfiles.file_kind(dataset, "--dataset")
    if kind != userfiles.FOLDER:
        what = "does not exist" if kind is None else f"is {kind}, not a folder"
        raise userfiles.UserFileError(f"--dataset {shown_path(dataset)}: {what}")
    kinds = {split: userfiles.file_kind(dataset / split, "--dataset") for split in SPLITS}
    for split, kind in kinds.items():
        if kind not in (None, userfiles.FILE):
            raise userfiles.UserFileError(
                f"--dataset {shown_path(dataset / split)}: is {kind}, not a file"
            )
    if not any(kinds.values()):
        raise userfiles.UserFileError(
            f"--dataset {shown_path(dataset)}: no train.jsonl or validation.jsonl (the folder "
            "`mlcc draft dataset --output` wrote)"
        )


def _check_output(output: Path) -> None:
    """UserFileError unless every file to write can be."""
    userfiles.check_writable_folder(output, "--output")
    check_output_files(output, (*SPLITS, "drops.jsonl", "provenance.json"))


def run(args: argparse.Namespace) -> int:
    try:
        url = ep.parse_url(args.endpoint)
    except ValueError as error:
        print(f"draft regenerate: --endpoint: {error}", file=sys.stderr)
        return EXIT_USAGE
    try:
        upload_to = s3_store.upload_place(args.upload)
    except ValueError as error:
        print(f"draft regenerate: {error}", file=sys.stderr)
        return EXIT_USAGE
    try:  # an s3:// --dataset is checked before any request
        where = regen_s3.place(args.dataset) if s3_store.is_uri(args.dataset) else None
    except ValueError as error:
        print(f"draft regenerate: {error}", file=sys.stderr)
        return EXIT_USAGE
    if where is not None and upload_to is not None and where == upload_to:
        print(
            f"draft regenerate: --upload {upload_to.uri} is the --dataset prefix: the "
            "regenerated files would replace the dataset's; choose another --upload prefix",
            file=sys.stderr,
        )
        return EXIT_USAGE
    folder = Path(args.dataset)
    if where is None and _same_folder(folder, args.output):
        print(
            f"draft regenerate: --output {shown_path(args.output)} is the --dataset folder: "
            "choose another --output",
            file=sys.stderr,
        )
        return EXIT_USAGE
    dataset: regen_pool.Folder | regen_s3.S3Dataset
    try:
        if where is None:
            _check_dataset(folder)
        _check_output(args.output)
        if where is None:
            dataset = regen_pool.Folder(folder)
        else:
            dataset = regen_s3.open_dataset(where, args.s3_timeout)
    except (userfiles.UserFileError, regen_s3.DatasetError) as error:
        print(f"draft regenerate: {error}", file=sys.stderr)
        return EXIT_NONE
    endpoint = ep.Endpoint(url, args.request_timeout, args.retries, BACKOFF_S)
    try:
        served = endpoint.served(args.model)
    except ep.EndpointError as error:
        print(f"draft regenerate: --endpoint: {error}", file=sys.stderr)
        return EXIT_NONE
    sampling = regen_pool.Sampling(served.model, args.max_tokens, args.temperature)
    try:
        (args.output / "provenance.json").unlink(missing_ok=True)  # written last, when complete
        with _local(dataset, args.output) as source:
            total = regen_pool.count_rows(source)
            print(
                f"regenerating {total} prompts with {printable(served.model)} at "
                f"{ep.shown_url(url)} ({args.concurrency} at a time)",
                file=sys.stderr,
            )
            progress = regen_pool.Progress(total, PROGRESS_EVERY_S, sys.stderr)
            pool = regen_pool.Pool(endpoint, sampling, args.concurrency, progress)
            counts = _write(pool, source, args.output)
        problems = regen_pool.check_counts(counts, args.output)
        record = provenance(args, _dataset_record(dataset), url, served, sampling, counts)
        text = json.dumps(record, indent=2) + "\n"
        userfiles.write_text(args.output / "provenance.json", text, "--output")
    except (userfiles.UserFileError, regen_s3.DatasetError) as error:
        print(f"draft regenerate: {error}", file=sys.stderr)
        return EXIT_NONE
    except OSError as error:
        failed = Path(error.filename) if error.filename else args.output
        print(f"draft regenerate: {shown_path(failed)}: {error.strerror}", file=sys.stderr)
        return EXIT_NONE
    code = _report(counts, problems, args.output)
    if code != EXIT_OK or upload_to is None:
        return code
    uploaded = s3_store.upload_and_say("draft regenerate", args.output, upload_to, args.s3_timeout)
    return EXIT_OK if uploaded else EXIT_NONE


@contextlib.contextmanager
def _local(
    dataset: regen_pool.Folder | regen_s3.S3Dataset, output: Path
) -> Iterator[regen_pool.Folder]:
    """The dataset as a local folder: an S3 one copied once into a spool inside --output,
    removed afterwards."""
    if isinstance(dataset, regen_pool.Folder):
        yield dataset
        return
    with tempfile.TemporaryDirectory(prefix=".dataset-", dir=output) as spool:
        yield dataset.spool(Path(spool))


def _dataset_record(source: regen_pool.Folder | regen_s3.S3Dataset) -> Any:
    if isinstance(source, regen_s3.S3Dataset):
        return source.described()
    return {"path": str(source.path), "provenance": _input_provenance(source.path)}


def _write(pool: regen_pool.Pool, dataset: regen_pool.Source, output: Path) -> regen_pool.Counts:
    files = {split: (output / split).open("w", encoding="utf-8") for split in regen_pool.SPLITS}
    try:
        with (output / "drops.jsonl").open("w", encoding="utf-8") as drops:
            return pool.run(dataset, files, drops)
    finally:
        for file in files.values():
            file.close()


def _report(counts: regen_pool.Counts, problems: list[str], output: Path) -> int:
    dropped = sum(counts.dropped.values())
    print(
        f"sent {counts.sent} of {counts.read} prompts: {counts.written} rows "
        f"({counts.train} train, {counts.validation} validation, {counts.truncated} cut at "
        f"--max-tokens), {dropped} dropped"
    )
    for reason in ep.DROP_REASONS:
        if counts.dropped[reason]:
            detail = counts.first_detail.get(reason, "")
            print(f"  dropped, {reason}: {counts.dropped[reason]} (first: {detail})")
    print(f"wrote {shown_path(output)}/ (train, validation, drops, provenance)")
    if counts.not_sent:
        print(
            f"draft regenerate: stopped after the first {regen_pool.GIVE_UP_AFTER} replies had "
            f"no token ids ({counts.not_sent} prompts not sent): {ep.NO_TOKEN_IDS_DETAIL}",
            file=sys.stderr,
        )
        return EXIT_NONE
    for problem in problems:
        print(f"draft regenerate: the counts do not add up: {problem}", file=sys.stderr)
    if problems:
        return EXIT_NONE
    if counts.written:
        return EXIT_OK
    if not counts.read:
        why = "the dataset has no rows"
    else:
        reason = max(ep.DROP_REASONS, key=lambda r: counts.dropped[r])
        why = f"every prompt was dropped; most: {reason}: {counts.first_detail.get(reason, '')}"
    print(f"draft regenerate: no rows written: {why}", file=sys.stderr)
    return EXIT_NONE


def provenance(
    args: argparse.Namespace,
    dataset: Any,
    url: Any,
    served: ep.Served,
    sampling: regen_pool.Sampling,
    counts: regen_pool.Counts,
) -> Any:
    return {
        "provenanceVersion": PROVENANCE_VERSION,
        "tool": {"name": "mlcc draft regenerate", "version": args.tool_version()},
        "dataset": dataset,
        "endpoint": {
            "url": ep.shown_url(url),
            "model": served.model,
            "root": served.root,
            "maxModelLen": served.max_model_len,
            "revision": None,
            "revisionNote": REVISION_NOTE,
        },
        "request": {
            "path": ep.CHAT_PATH,
            "temperature": sampling.temperature,
            "max_tokens": sampling.max_tokens,
            "return_token_ids": True,
        },
        "concurrency": args.concurrency,
        "requestTimeoutSeconds": args.request_timeout,
        "retries": args.retries,
        "counts": {
            "read": counts.read,
            "sent": counts.sent,
            "notSent": counts.not_sent,
            "written": counts.written,
            "train": counts.train,
            "validation": counts.validation,
            "truncated": counts.truncated,
            "dropped": {reason: counts.dropped[reason] for reason in ep.DROP_REASONS},
        },
        "tokens": tokens(counts),
        "format": (
            "speculators 0.9.0 pre-tokenized rows (input_ids, loss_mask) for prepare-data, "
            "with the regenerated conversations"
        ),
    }


def tokens(counts: regen_pool.Counts) -> dict[str, Any]:
    """The token count of the rows written (the sum of len(input_ids): prompt and answer), per
    split and in all; preflight reads it for the draft-training disk check
    (mlcc/preflight/training_part.py)."""
    train, validation = (counts.tokens[split] for split in regen_pool.SPLITS)
    return {
        "train": train,
        "validation": validation,
        "total": train + validation,
        "counted": "the sum of len(input_ids) of the rows written (prompt and answer tokens)",
    }
