"""Fixtures the preflight tests share."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from aws_accounts import account_served
from local_aws import LocalAWS


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalAWS]:
    """The example account on the fake AWS, for the test's boto3 clients."""
    with account_served(monkeypatch) as fake:
        yield fake


@pytest.fixture
def hub_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A fresh Hub cache and no token or offline switch from the machine's environment."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    yield
