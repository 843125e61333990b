"""The local AWS (tests/local_aws.py) for the draft steps' S3 tests, reached as users redirect
boto3: AWS_ENDPOINT_URL_S3, with test keys and no profile of the machine's."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from local_aws import LocalAWS, local_aws


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[LocalAWS]:
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
