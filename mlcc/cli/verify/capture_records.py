"""The records under an endpoint's capture prefix, for `mlcc verify`'s capture line
(mlcc/deploy/capture_check.py): how many objects, their bytes and the newest one's date.

One ListObjectsV2 paginator (botocore's: ContinuationToken), at most MOST_PAGES pages of 1,000
keys, through the S3 client `mlcc draft dataset` uses (mlcc/cli/draft/s3_store.py: the
environment's profile, region and endpoint, a connect and a read timeout, standard retries).
Needs s3:ListBucket on the capture bucket. Every failure is the reason the records were not
read, one line; it never fails the check.
"""

from __future__ import annotations

from datetime import datetime

from mlcc.cli.draft import s3_input, s3_store
from mlcc.deploy.capture_check import Records
from mlcc.preflight.bounded.aws_failure import described
from mlcc.serving.s3_draft import S3Folder

MOST_PAGES = 10  # 10,000 objects: enough to say that capture writes


def read_records(uri: str, timeout_s: float) -> Records:
    """What the bucket holds under `uri` (the CR's dataCapture.s3Uri). Never raises."""
    try:
        where = s3_store.place(uri.rstrip("/") + "/", need_prefix=False)
    except ValueError as error:
        return Records(not_read=str(error))
    try:
        s3 = s3_store.client(timeout_s)
        return _listed(s3, where)
    except s3_store.S3Problem as problem:
        return Records(not_read=str(problem))
    except Exception as error:  # every failure of the listing: one line, never a traceback
        granted = s3_input.grant(error, "s3:ListBucket", f"arn:aws:s3:::{where.bucket}")
        return Records(not_read=f"{where.uri}: {described(error, timeout_s)}{granted}")


def _listed(s3: object, where: S3Folder) -> Records:
    objects = size = 0
    newest: datetime | None = None
    pages = s3.get_paginator("list_objects_v2").paginate(  # type: ignore[attr-defined]
        Bucket=where.bucket, Prefix=where.prefix
    )
    for number, page in enumerate(pages, start=1):
        for item in page.get("Contents") or []:
            objects += 1
            size += int(item.get("Size") or 0)
            modified = item.get("LastModified")
            if isinstance(modified, datetime) and (newest is None or modified > newest):
                newest = modified
        if number >= MOST_PAGES and page.get("IsTruncated"):
            return Records(objects, size, newest, complete=False)
    return Records(objects, size, newest)
