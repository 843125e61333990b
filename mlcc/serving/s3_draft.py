"""A trained draft head in S3 (`hp:speculativeModel: s3://bucket/prefix/`): its parts, its
checks, and where the serve pod finds its copy (docs/draft-serving.md). Pure.

The engines load drafts from the Hugging Face Hub or a local path only (the serve wrapper
refuses a URI: mlcc/engine_contract/values.py `draft_model_problem`), so the head is copied
into the pod by an init container before the engine starts (mlcc/manifest/draft_copy.py), and
the engine is given the copy's local path.

SGLang does not read speculators-format heads (what `speculators train` writes): no code in
SGLang 0.5.2-0.5.23's wheels reads `speculators_config` (mlcc/preflight/speculators.py, from
those wheels), so an s3:// draft on an SGLang endpoint is refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mlcc.engine_contract.values import shown_value

SCHEME = "s3://"
INIT_CONTAINER = "mlcc-draft-copy"  # the init container that copies the head
# The service account the copy runs as when the program makes one (create mode): IRSA, allowed
# to read the stack's heads (mlcc/components/draft_reader.py).
SERVICE_ACCOUNT = "mlcc-draft-reader"
# Where the init container copies the head inside the model volume, and so where the engine
# reads it: under the worker's modelVolumeMount (default /opt/ml/model).
DRAFT_DIRECTORY = "mlcc-draft"
# Written beside the head by the init container: the S3 ETag and version of config.json and
# the URI copied (mlcc verify reads it back).
MARKER_FILE = ".mlcc-draft-source.json"
# S3 bucket names (AWS docs, "General purpose bucket naming rules"): 3-63 characters, lower-case
# letters, digits, dots and hyphens, beginning and ending with a letter or digit; no "..", not
# shaped like an IP address, none of the reserved prefixes and suffixes.
_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
_IP_SHAPED = re.compile(r"\d{1,3}(\.\d{1,3}){3}")
_RESERVED_PREFIXES = ("xn--", "sthree-", "amzn-s3-demo-")
_RESERVED_SUFFIXES = ("-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3")
# The prefix is passed to `aws s3 sync` and shown in the pod: a conservative character set
# (S3 keys may hold more, but a head's folder needs none of it).
_PREFIX = re.compile(r"[A-Za-z0-9._/=+-]{1,900}")


@dataclass(frozen=True)
class S3Folder:
    """A folder in S3: a head's (the one that holds config.json), a dataset's, a capture's."""

    bucket: str
    prefix: str  # ending with "/"; "" is the whole bucket

    @property
    def uri(self) -> str:
        return f"{SCHEME}{self.bucket}/{self.prefix}"

    def key(self, name: str) -> str:
        return f"{self.prefix}{name}"

    def shown(self, key: str) -> str:
        """A key of the bucket as an s3:// URI."""
        return f"{SCHEME}{self.bucket}/{key}"


def is_s3(value: str | None) -> bool:
    return bool(value) and str(value).startswith(SCHEME)


def parse(value: str) -> S3Folder | None:
    """The bucket and prefix of an s3:// draft, or None when `s3_draft_problem` refuses it."""
    if s3_draft_problem(value) is not None:
        return None
    return folder(value)


def folder(value: str) -> S3Folder:
    """The bucket and folder of an s3:// URI a check has accepted; the whole bucket (prefix "")
    when it names none."""
    bucket, _, prefix = value.removeprefix(SCHEME).partition("/")
    prefix = prefix.rstrip("/")  # a leading "/" is part of the key, as for `aws s3`
    return S3Folder(bucket, f"{prefix}/" if prefix else "")


def s3_draft_problem(value: str) -> str | None:
    """Why `value` is not an s3://bucket/prefix/ of a trained head; None when it is one."""
    if not value.startswith(SCHEME):
        return f"{shown_value(value)} is not an s3:// URI"
    bucket, slash, prefix = value.removeprefix(SCHEME).partition("/")
    if not _bucket_ok(bucket):
        return (
            f"{shown_value(value)} has no valid bucket name ({shown_value(bucket)}): 3-63 "
            "lower-case letters, digits, '.' and '-', starting and ending with a letter or digit"
        )
    prefix = prefix.rstrip("/")
    if not slash or not prefix:
        return (
            f"{shown_value(value)} names a bucket but no folder: give the folder that holds the "
            "head's config.json, e.g. s3://BUCKET/drafts/run-1/checkpoints/7/"
        )
    segments = prefix.split("/")
    if not _PREFIX.fullmatch(prefix) or "" in segments or {".", ".."} & set(segments):
        return (
            f"{shown_value(value)} has a folder the copy cannot take safely: letters, digits and "
            ". _ - = + / only, no empty, '.' or '..' segments"
        )
    return None


def _bucket_ok(bucket: str) -> bool:
    return (
        bool(_BUCKET.fullmatch(bucket))
        and ".." not in bucket
        and not _IP_SHAPED.fullmatch(bucket)
        and not bucket.startswith(_RESERVED_PREFIXES)
        and not bucket.endswith(_RESERVED_SUFFIXES)
    )


def local_path(model_mount_path: str) -> str:
    """Where the engine reads the copied head: a folder of the worker's model volume."""
    return f"{model_mount_path.rstrip('/')}/{DRAFT_DIRECTORY}"
