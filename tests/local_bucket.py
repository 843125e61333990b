"""Buckets of objects kept in memory, served by the local AWS (tests/local_aws.py) as S3's
ListObjectsV2 (pages of at most `page_size` keys, continued with ContinuationToken), GetObject
and PutObject, with S3's error codes (botocore's S3 model and the S3 API reference: NoSuchBucket
404, NoSuchKey 404, AccessDenied 403). Requests reach these scripts only once the fake has
checked them against botocore's model.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from local_aws import LocalAWS, Reply, error, local_aws

NO_BUCKET = ("NoSuchBucket", "The specified bucket does not exist", 404)
DENIED = ("AccessDenied", "Access Denied", 403)
MODIFIED = "2026-12-06T12:00:00.000Z"  # every object's LastModified unless `modified` says


@contextlib.contextmanager
def redirected_s3(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[LocalAWS]:
    """The local AWS, reached as users redirect boto3: AWS_ENDPOINT_URL_S3, with test keys and
    no profile of the machine's; its checks of every request and reply hold at the end."""
    for name in list(os.environ):
        if name.startswith(("AWS_ENDPOINT_URL", "AWS_PROFILE", "AWS_DEFAULT_PROFILE")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_REGION", "us-west-2")
    with local_aws() as fake:
        monkeypatch.setenv("AWS_ENDPOINT_URL_S3", fake.url)
        yield fake
        assert fake.violations == []
        assert fake.reply_problems == []


@dataclass
class Buckets:
    fake: LocalAWS
    objects: dict[str, dict[str, bytes]] = field(default_factory=dict)  # bucket -> key -> bytes
    page_size: int = 1000  # ListObjectsV2's MaxKeys default (S3 API reference)
    denied: set[str] = field(default_factory=set)  # "bucket" or "bucket/key" refused
    delays: dict[str, float] = field(default_factory=dict)  # key -> seconds before answering
    cut: dict[str, int] = field(default_factory=dict)  # key -> bytes its body is short of
    modified: dict[str, str] = field(default_factory=dict)  # key -> its LastModified
    lists: int = 0  # ListObjectsV2 pages served
    checksum_problems: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.fake.on("ListObjectsV2", self.list, service="s3")
        self.fake.on("GetObject", self.get, service="s3")
        self.fake.on("PutObject", self.put, service="s3")

    def _refused(self, bucket: str, key: str = "") -> Reply | None:
        if bucket not in self.objects:
            return error(*NO_BUCKET)
        if bucket in self.denied or f"{bucket}/{key}" in self.denied:
            return error(*DENIED)
        return None

    def list(self, request: dict[str, Any]) -> Reply:
        bucket = request["Bucket"]
        if refused := self._refused(bucket):
            return refused
        self.lists += 1
        prefix = request.get("Prefix", "")
        keys = sorted(k for k in self.objects[bucket] if k.startswith(prefix))
        start = int(request.get("ContinuationToken", "0"))
        most = min(int(request.get("MaxKeys", 1000)), self.page_size)
        page = keys[start : start + most]
        more = start + most < len(keys)
        body: dict[str, Any] = {
            "Name": bucket,
            "Prefix": prefix,
            "KeyCount": len(page),
            "MaxKeys": most,
            "IsTruncated": more,
            "Contents": [
                {
                    "Key": k,
                    "Size": len(self.objects[bucket][k]),
                    "ETag": etag(self.objects[bucket][k]),
                    "LastModified": self.modified.get(k, MODIFIED),
                }
                for k in page
            ],
        }
        if "ContinuationToken" in request:
            body["ContinuationToken"] = request["ContinuationToken"]
        if more:
            body["NextContinuationToken"] = str(start + most)
        return Reply(200, body)

    def get(self, request: dict[str, Any]) -> Reply:
        bucket, key = request["Bucket"], request["Key"]
        if refused := self._refused(bucket, key):
            return refused
        data = self.objects[bucket].get(key)
        if data is None:
            return error("NoSuchKey", "The specified key does not exist.", 404)
        headers = {"ETag": etag(data)}
        delay, cut = self.delays.get(key, 0.0), self.cut.get(key, 0)
        return Reply(200, data, headers=headers, delay_s=delay, cut_by=cut)

    def put(self, request: dict[str, Any]) -> Reply:
        bucket, key = request["Bucket"], request["Key"]
        if refused := self._refused(bucket, key):
            return refused
        data = bytes(request.get("Body", b""))
        sent = request.get("ChecksumCRC32")
        if sent is not None and sent != crc32(data):
            self.checksum_problems.append(f"{key}: CRC32 {sent} is not the body's {crc32(data)}")
            return error("BadDigest", "The CRC32 you specified did not match the calculated one.")
        self.objects[bucket][key] = data
        return Reply(200, b"", headers={"ETag": etag(data)})


def etag(data: bytes) -> str:
    """A single-part object's ETag: the MD5 of its bytes, quoted."""
    return f'"{hashlib.md5(data, usedforsecurity=False).hexdigest()}"'


def crc32(data: bytes) -> str:
    """x-amz-checksum-crc32: the big-endian CRC32 of the body, base64 (S3 API reference)."""
    return base64.b64encode(zlib.crc32(data).to_bytes(4, "big")).decode()
