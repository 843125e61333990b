"""S3 for the draft dataset steps (docs/draft.md): the client, `s3://` places, one-line errors,
and `--upload` of a dataset folder to the prefix `hp:draftTraining.dataset` names.

The client is made as `mlcc optimize` makes its SageMaker client (mlcc/recommendation/api.py):
a boto3 session from the environment (AWS_PROFILE, AWS_REGION, AWS_ENDPOINT_URL_S3, ...), a
connect and a read timeout, and botocore's `standard` retry mode (connection errors, timeouts,
throttling and 5xx answers retried, AWS_MAX_ATTEMPTS attempts, 3 unless set).

The upload is one PutObject a file (S3's limit for one PutObject is 5 GiB: AWS docs, "Uploading
objects"; a larger file is refused before any request): train.jsonl, validation.jsonl,
drops.jsonl, then provenance.json, so a prefix uploaded to once that holds provenance.json
holds the rest (over an earlier upload, a failure midway leaves the earlier provenance.json).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mlcc.config.aws import rules as aws_rules
from mlcc.engine_contract.values import printable
from mlcc.preflight.bounded import aws_failure
from mlcc.serving import s3_draft
from mlcc.serving.s3_draft import S3Folder

SCHEME = "s3://"
DEFAULT_TIMEOUT_S = 60.0  # connect and read, as mlcc optimize's READ_TIMEOUT_S
MOST_PUT_BYTES = 5 * 1024**3  # one PutObject (AWS docs, "Uploading objects")
UPLOAD_ORDER = ("train.jsonl", "validation.jsonl", "drops.jsonl", "provenance.json")
DATASET_KEY = "hp:draftTraining.dataset"


class S3Problem(Exception):
    """An S3 request failed: one line for the user."""


def is_uri(value: str) -> bool:
    return value.startswith(SCHEME)


def place(value: str, *, need_prefix: bool) -> S3Folder:
    """`s3://bucket[/prefix[/]]` as a bucket and a prefix ending with "/"; ValueError (one line)
    when S3 would refuse the bucket name or the prefix (the rules `hp:draftTraining.dataset`
    is checked with: mlcc/config/aws/rules.py `s3_uri_problem`)."""
    problem = aws_rules.s3_uri_problem(value)
    if problem:
        raise ValueError(problem)
    found = s3_draft.folder(value)
    if need_prefix and not found.prefix:
        raise ValueError(
            f"{printable(value)} names a bucket but no folder: give one, e.g. "
            f"s3://{found.bucket}/datasets/run-1/"
        )
    return found


def client(timeout_s: float) -> Any:
    """An S3 client from the environment's profile, region and endpoint; S3Problem when the
    session cannot be made (an unknown profile, a malformed setting)."""
    from botocore.config import Config
    from botocore.exceptions import BotoCoreError

    from mlcc.config.aws.environment import setup_failure

    config = Config(connect_timeout=timeout_s, read_timeout=timeout_s, retries={"mode": "standard"})
    try:
        return aws_rules.boto3_session().client("s3", config=config)
    except (BotoCoreError, ValueError, TypeError) as error:
        raise S3Problem(f"the AWS session: {setup_failure(error)}") from None


def described(error: BaseException, timeout_s: float) -> str:
    """A botocore failure in a few words; a timeout names --s3-timeout."""
    return aws_failure.described(error, timeout_s, "--s3-timeout")


def upload(folder: Path, to: S3Folder, timeout_s: float) -> list[str]:
    """Put UPLOAD_ORDER's files of `folder` under `to`; the URIs written. S3Problem (one line
    naming what was and was not uploaded) on the first failure."""
    files = [folder / name for name in UPLOAD_ORDER]
    for path in files:
        try:
            size = path.stat().st_size
        except OSError as error:
            raise S3Problem(f"--upload: {path}: {error.strerror}; nothing uploaded") from None
        if size > MOST_PUT_BYTES:
            raise S3Problem(
                f"--upload: {path} is over 5 GiB, S3's limit for one PutObject; nothing "
                f"uploaded: copy the folder with `aws s3 sync {folder} {to.uri}`"
            )
    s3 = client(timeout_s)
    done: list[str] = []
    for path in files:
        key = f"{to.prefix}{path.name}"
        try:
            with path.open("rb") as body:
                s3.put_object(Bucket=to.bucket, Key=key, Body=body)
        except Exception as error:  # every failure of the put: one line, never a traceback
            why = error.strerror if isinstance(error, OSError) and error.strerror else None
            left = [p.name for p in files[len(done) :]]
            raise S3Problem(
                f"--upload: {to.shown(key)}: {why or described(error, timeout_s)}; uploaded: "
                f"{', '.join(Path(u).name for u in done) or 'none'}; not uploaded: "
                f"{', '.join(left)}"
            ) from None
        done.append(to.shown(key))
    return done


def upload_and_say(step: str, folder: Path, to: S3Folder, timeout_s: float) -> bool:
    """A step's --upload once its folder is written and checked: the files, then where they went
    and the stack key to set on stdout (True), or the one-line failure on stderr (False)."""
    try:
        upload(folder, to, timeout_s)
    except S3Problem as error:
        print(f"{step}: {error}", file=sys.stderr)
        return False
    print(f"uploaded {', '.join(UPLOAD_ORDER)} to {to.uri}")
    print(f"set it: pulumi config set --path {DATASET_KEY} {to.uri}")
    return True


def add_flags(parser: Any, *, reads: str = "") -> None:
    """--upload and --s3-timeout on a step that writes a dataset folder; `reads` names the flag
    that may read from S3 too (e.g. "--input s3://")."""
    from mlcc.userfiles import numbers

    used = f"{reads}, --upload" if reads else "--upload"
    parser.add_argument(
        "--upload",
        metavar="S3_PREFIX",
        help=(
            "once the folder is written and its counts check out, upload train.jsonl, "
            "validation.jsonl, drops.jsonl and provenance.json (last) to s3://BUCKET/PREFIX/, "
            f"the value of {DATASET_KEY}"
        ),
    )
    parser.add_argument(
        "--s3-timeout",
        type=numbers.flag_type("seconds", 0.0, 3600.0, above=True),
        default=DEFAULT_TIMEOUT_S,
        metavar="SECONDS",
        help=(
            f"connect and read timeout of each S3 request ({used}) (default: {DEFAULT_TIMEOUT_S:g})"
        ),
    )


def upload_place(value: str | None) -> S3Folder | None:
    """The --upload prefix, or None without one; ValueError (one line) for a bad one."""
    if value is None:
        return None
    try:
        return place(value, need_prefix=True)
    except ValueError as error:
        raise ValueError(f"--upload: {error}") from None
