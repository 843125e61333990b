"""The stack as the dashboard and the rules see it: one `Watched` per endpoint and its twin."""

from __future__ import annotations

import re
from dataclasses import dataclass

from mlcc.config.endpoints import EndpointConfig
from mlcc.config.infrastructure import resource_base_name
from mlcc.config.stack import StackConfig
from mlcc.config.stack_keys import may_speculate
from mlcc.observability.promql import Series

# The importable files `mlcc plan --out DIR` writes (relative to DIR), when hp:observability is on.
DASHBOARD_FILE = "observability/dashboard.json"
RULES_FILE = "observability/alert-rules.yaml"


@dataclass(frozen=True)
class Watched:
    """One endpoint (never a twin) and, when hp:baseline is set, its twin."""

    series: Series
    speculates: bool  # explicit hp:speculative* keys, or hp:optimize's recommendation
    acceptance_floor: float  # 0 = no acceptance alert
    ready_floor: int  # the fewest pods it should have ready (0 = no pods alert)
    twin: Series | None = None
    twin_ready_floor: int = 0

    @property
    def name(self) -> str:
        return self.series.endpoint


def watched(config: StackConfig) -> list[Watched]:
    """In hp:endpoints order; each twin with the endpoint it mirrors."""
    optimized = config.optimize is not None
    twins = {e.baseline_of: e for e in config.endpoints if e.baseline_of}
    result = []
    for endpoint in config.endpoints:
        if endpoint.baseline_of:
            continue
        twin = twins.get(endpoint.name)
        speculates = may_speculate(endpoint, optimized=optimized)
        result.append(
            Watched(
                series=Series(endpoint.name, config.namespace, endpoint.engine),
                speculates=speculates,
                acceptance_floor=config.observability.floor_of(endpoint.name) if speculates else 0,
                ready_floor=_ready_floor(endpoint),
                twin=Series(twin.name, config.namespace, twin.engine) if twin else None,
                twin_ready_floor=_ready_floor(twin) if twin else 0,
            )
        )
    return result


def _ready_floor(endpoint: EndpointConfig) -> int:
    """hp:replicas, or autoscaling's minReplicas (0: scaled to zero is not a failure)."""
    if endpoint.autoscaling is not None:
        return endpoint.autoscaling.min_replicas
    return endpoint.replicas


def object_name(stack: str) -> str:
    """The name of the PrometheusRule, the dashboard ConfigMap and the AMP namespace."""
    return f"{resource_base_name(stack).lower()}-speculation"


def dashboard_uid(stack: str) -> str:
    """Grafana's uid: at most 40 characters of letters, digits, `-` and `_`."""
    return re.sub(r"[^a-zA-Z0-9_-]", "-", object_name(stack))[:40]
