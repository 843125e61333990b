"""Preflight's AWS sessions: botocore's own search path for its data, the parsed data shared."""

from __future__ import annotations

from pathlib import Path

import pytest
from botocore.loaders import Loader

from mlcc.config.aws import rules as aws_rules
from mlcc.preflight.account import fetch as account_fetch


def loader_of(clients: account_fetch.Clients | object) -> Loader:
    assert isinstance(clients, account_fetch.Clients)
    loader: Loader = clients.session._session.get_component("data_loader")
    return loader


def test_sessions_share_one_data_loader_per_search_path(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("AWS_DATA_PATH", raising=False)
    default = loader_of(account_fetch.clients("us-east-1", "", 5.0))
    assert loader_of(account_fetch.clients("eu-west-1", "", 5.0)) is default
    assert default is aws_rules.shared_loader(None)  # the models the config rules read
    assert default.search_paths == [Loader.CUSTOMER_DATA_PATH, Loader.BUILTIN_DATA_PATH]

    monkeypatch.setenv("AWS_DATA_PATH", str(tmp_path))
    own = loader_of(account_fetch.clients("us-east-1", "", 5.0))
    assert own is not default
    assert own.search_paths == [str(tmp_path), Loader.CUSTOMER_DATA_PATH, Loader.BUILTIN_DATA_PATH]
