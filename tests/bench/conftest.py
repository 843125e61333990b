"""The fake engines count a request before they stream it, so `mlcc bench` need not wait for
their counters to settle before its second scrape (a real engine may count a request's last step
just after its last token)."""

import os
from pathlib import Path

import pytest

from mlcc.cli.bench import command as bench


@pytest.fixture(autouse=True)
def no_metrics_settle(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bench, "METRICS_SETTLE_S", 0.0)


@pytest.fixture
def offline_aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No AWS_* setting of the machine's reaches the test: test credentials, no config files."""
    for name in [name for name in os.environ if name.startswith("AWS_")]:
        monkeypatch.delenv(name)
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_CONFIG_FILE": str(tmp_path / "none"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"),
    }.items():
        monkeypatch.setenv(name, value)
