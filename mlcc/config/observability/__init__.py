"""`hp:observability`: where the speculation dashboard and alert rules go, and their thresholds
(docs/observability.md). Pure; the dashboard and the rules themselves are `mlcc.observability`."""

from mlcc.config.observability.settings import (
    DEFAULTS,
    ObservabilitySettings,
    Target,
    parse_observability,
)

__all__ = ["DEFAULTS", "ObservabilitySettings", "Target", "parse_observability"]
