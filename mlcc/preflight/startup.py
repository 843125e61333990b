"""Can the startup probe's budget cover loading the models? A lower-bound estimate, pure.

Before it answers /health the engine downloads the target and the draft from the Hub (not the
target with hp:prefetch: the operator's init container fetched it before the engine started,
docs/operator-features.md) and reads their weights into GPU memory:

    load estimate = downloaded bytes / DOWNLOAD_BYTES_PER_S + all weight bytes / READ_BYTES_PER_S

Both rates are assumed, not measured (this repository holds no load timing): they are chosen
high, so the estimate is a floor. Compilation, CUDA graph capture and the engine's own start are
not counted either. A startup budget below the floor is a warning: the kubelet restarts the
container when the startup probe has failed failureThreshold times, periodSeconds apart, after
initialDelaySeconds (Kubernetes, "Configure Liveness, Readiness and Startup Probes": "a maximum
of 5 minutes (30 * 10 = 300s) to finish its startup"), so the engine restarts mid-load, again
and again.

The budget is the program's startup probe (mlcc/manifest/operator.py `probes()`: every 10 s
for the whole deploy time limit) under hp:probes.startup's fields. `hp:probes: operator` leaves
the probes to the operator, whose startup budget no source states (the CRD: "If not specified,
default values will be applied"), so it warns with the estimate whatever the figures.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from mlcc.config.endpoints import EndpointConfig
from mlcc.manifest.operator import PROBE_PERIOD_SECONDS
from mlcc.preflight.facts import ModelFacts

# Assumed (no measurement here): a Hub download on an AWS GPU node, and safetensors read from the
# node's disk into GPU memory. Both high, so that the estimate stays a floor.
ASSUMED_DOWNLOAD_BYTES_PER_S = 500e6
ASSUMED_READ_BYTES_PER_S = 2e9
_RATES = "a Hub download at an assumed 500 MB/s and a read at an assumed 2 GB/s"


def load_seconds(downloaded: float, weights: float) -> float:
    """The floor of the load time for `downloaded` bytes fetched and `weights` bytes read."""
    return downloaded / ASSUMED_DOWNLOAD_BYTES_PER_S + weights / ASSUMED_READ_BYTES_PER_S


def budget_seconds(startup: Mapping[str, object], deploy_seconds: int) -> int:
    """initialDelaySeconds + periodSeconds x failureThreshold of the rendered startup probe:
    the program's defaults under the given fields."""
    period = _number(startup.get("periodSeconds"), PROBE_PERIOD_SECONDS)
    failures = _number(
        startup.get("failureThreshold"), math.ceil(deploy_seconds / PROBE_PERIOD_SECONDS)
    )
    return _number(startup.get("initialDelaySeconds"), 0) + period * failures


def _number(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def startup_problem(
    endpoint: EndpointConfig,
    target: ModelFacts,
    draft: ModelFacts | None,
    deploy_seconds: int,
) -> tuple[str, str] | None:
    """(key, message) of the warning when the endpoint's startup budget cannot cover the load
    floor; None when it can or a weight size is not known."""
    if target.weight_bytes is None or (draft is not None and draft.weight_bytes is None):
        return None
    draft_bytes = float(draft.weight_bytes or 0) if draft is not None else 0.0
    weights = target.weight_bytes + draft_bytes
    downloaded = draft_bytes if endpoint.operator.prefetch else weights
    estimate = math.ceil(load_seconds(downloaded, weights))
    figures = (
        f"loading the models ({weights / 1e9:.1f} GB of weights"
        f"{', the target prefetched' if endpoint.operator.prefetch else ''}) is estimated at "
        f"{estimate} s or more ({_RATES}; compilation and CUDA graphs not counted)"
    )
    probes = endpoint.operator.probes
    if probes is None:
        program = math.ceil(budget_seconds({}, deploy_seconds) / 60)
        return (
            "probes",
            f"operator leaves the startup probe to the operator, whose budget no source states, "
            f"and {figures}; remove hp:probes for the program's probes (startup up to "
            f"{program} min)",
        )
    startup = probes.get("startup", {})
    budget = budget_seconds(startup, deploy_seconds)
    if budget >= estimate:
        return None
    period = _number(startup.get("periodSeconds"), PROBE_PERIOD_SECONDS)
    needed = math.ceil((estimate - _number(startup.get("initialDelaySeconds"), 0)) / period)
    return (
        "probes.startup",
        f"gives the engine {budget} s to start (initialDelaySeconds + periodSeconds x "
        f"failureThreshold), but {figures}, so the kubelet restarts it mid-load: raise "
        f"failureThreshold to {needed} or more, or remove hp:probes.startup",
    )
