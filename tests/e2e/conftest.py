"""tests/e2e: marked `e2e` (`make e2e`; `make test` deselects them). Each fails with one line
naming what is missing until scripts/build_e2e.sh has built it; a cluster with its operator
stand-in per module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from local_cluster import LocalCluster, missing_binaries, require_built
from operator_standin import OperatorStandIn

HERE = Path(__file__).resolve().parent
NODES = 8  # one endpoint pod (4 GPUs) per node; a rolling update needs one more


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    require_built(missing_binaries())
    with LocalCluster() as running:
        for index in range(NODES):
            running.add_node(f"gpu-{index}")
        yield running


@pytest.fixture(scope="module")
def standin(cluster: LocalCluster) -> Iterator[OperatorStandIn]:
    with OperatorStandIn(cluster) as running:
        yield running
    assert running.errors == [], running.errors
