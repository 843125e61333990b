"""`mlcc plan` prints the program's warnings (Pulumi's mock engine logs them on the root logger),
not a library's own log records that pass through the root's handlers: huggingface_hub's
"HTTP Error 500 thrown ... Retrying in 1s" were printed again as the plan's `warning:` lines."""

from __future__ import annotations

import logging

from mlcc.cli.plan.command import _LogCollector


def test_only_the_root_loggers_warnings_are_the_programs() -> None:
    collector = _LogCollector()
    root = logging.getLogger()
    root.addHandler(collector)
    try:
        logging.getLogger().warning("hp:model: not checked (the program's)")
        logging.getLogger("huggingface_hub.utils._http").warning("Retrying in 1s [Retry 1/5].")
        logging.getLogger().info("not a warning")
    finally:
        root.removeHandler(collector)
    assert collector.messages == ["hp:model: not checked (the program's)"]
