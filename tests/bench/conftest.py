"""The fake engines count a request before they stream it, so `mlcc bench` need not wait for
their counters to settle before its second scrape (a real engine may count a request's last step
just after its last token)."""

import pytest

from mlcc.cli.bench import command as bench


@pytest.fixture(autouse=True)
def no_metrics_settle(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bench, "METRICS_SETTLE_S", 0.0)
