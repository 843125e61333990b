"""tests/e2e: marked `e2e`, and skipped as a whole (saying why) until scripts/build_e2e.sh has
built the control plane's binaries; a cluster with its operator stand-in per module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from local_cluster import LocalCluster, binary_dir, missing_binaries
from operator_standin import OperatorStandIn

HERE = Path(__file__).resolve().parent
NODES = 8  # one endpoint pod (4 GPUs) per node; a rolling update needs one more


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    missing = missing_binaries()
    skip = pytest.mark.skip(
        reason=f"not built in {binary_dir()}: {', '.join(missing)} (run scripts/build_e2e.sh)"
    )
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.e2e)
            if missing:
                item.add_marker(skip)


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster() as running:
        for index in range(NODES):
            running.add_node(f"gpu-{index}")
        yield running


@pytest.fixture(scope="module")
def standin(cluster: LocalCluster) -> Iterator[OperatorStandIn]:
    with OperatorStandIn(cluster) as running:
        yield running
    assert running.errors == [], running.errors
