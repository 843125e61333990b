"""The local AWS (tests/local_aws.py) for the draft steps' S3 tests, reached as users redirect
boto3 (tests/local_bucket.py `redirected_s3`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from local_aws import LocalAWS
from local_bucket import redirected_s3


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[LocalAWS]:
    with redirected_s3(monkeypatch, tmp_path) as fake:
        yield fake
