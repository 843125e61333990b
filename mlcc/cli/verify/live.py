"""`mlcc verify --prometheus URL | --amp-workspace ID`: each endpoint's live figures over the last
minutes (acceptance rate, mean accepted length, output tokens/s), one `PASS|FAIL live:` line per
endpoint, FAIL when acceptance is below the floor or the figures cannot be read (docs/verify.md,
"Live figures"). The floor is `--acceptance-floor`, else the stack's own: hp:observability's
`acceptanceFloor` (0.3 unless set, per endpoint where a map names it), the floor its alert
fires under; 0 checks none. The figures are in mlcc/prometheus/live.py, the HTTP in
mlcc/prometheus/api.py, the AMP signing in mlcc/prometheus/amp.py."""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from functools import partial

from mlcc.config.endpoints import EndpointConfig
from mlcc.config.observability.settings import DEFAULTS, ObservabilitySettings
from mlcc.deploy.check import Check
from mlcc.prometheus.amp import AmpSetupError, workspace_source
from mlcc.prometheus.api import Sample, Source, instant_query
from mlcc.prometheus.live import live_figures, scope_of, summary
from mlcc.userfiles.numbers import flag_type

DEFAULT_WINDOW_MINUTES = 5
MIN_WINDOW_MINUTES, MAX_WINDOW_MINUTES = 0.25, 24 * 60


def add_arguments(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--prometheus",
        metavar="URL",
        help="a Prometheus to read live figures from (its API root, e.g. http://localhost:9090)",
    )
    where.add_argument(
        "--amp-workspace",
        metavar="ID|URL",
        help="an Amazon Managed Service for Prometheus workspace (ws-... or its query URL), "
        "queried with SigV4 and the usual AWS credentials and region",
    )
    parser.add_argument(
        "--window-minutes",
        type=flag_type("minutes", MIN_WINDOW_MINUTES, MAX_WINDOW_MINUTES),
        default=DEFAULT_WINDOW_MINUTES,
        metavar="MINUTES",
        help=f"live figures over the last MINUTES, {MIN_WINDOW_MINUTES:g} to "
        f"{MAX_WINDOW_MINUTES} (default: {DEFAULT_WINDOW_MINUTES})",
    )
    parser.add_argument(
        "--acceptance-floor",
        type=flag_type("", 0, 1, note="(0.5 = 50%)"),
        metavar="RATE",
        help="fail when a speculative endpoint's live acceptance rate is below RATE (0-1); "
        "default: the stack's hp:observability acceptanceFloor (0.3 unless set)",
    )


def wanted(args: argparse.Namespace) -> bool:
    return bool(args.prometheus or args.amp_workspace)


def source_of(args: argparse.Namespace, region: str | None) -> Source:
    """Raises AmpSetupError (one line) when the AMP workspace cannot be signed for."""
    if args.amp_workspace:
        return workspace_source(args.amp_workspace, region)
    url = str(args.prometheus).rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise AmpSetupError(f"--prometheus must be an http(s) URL, got {url!r}")
    return Source(url, shown=f"Prometheus {url}")


def live_checks(
    args: argparse.Namespace,
    source: Source,
    namespace: str,
    endpoints: Sequence[EndpointConfig],
    timeout_s: float,
    observability: ObservabilitySettings = DEFAULTS,
) -> dict[str, Check]:
    """Each endpoint's `live` check, all queries evaluated at one time, against its floor
    (`acceptance_floor`)."""
    at = time.time()
    ask = partial(_ask, source, at, timeout_s)
    window_s = round(args.window_minutes * 60)
    checks = {}
    for endpoint in endpoints:
        figures = live_figures(
            scope_of(endpoint, namespace, window_s), endpoint.speculative is not None, ask
        )
        floor, floor_key = acceptance_floor(args, observability, endpoint.name)
        passed, detail = summary(figures, floor, window_s, floor_key)
        checks[endpoint.name] = Check("live", passed, f"{detail} ({source.name})")
    return checks


def acceptance_floor(
    args: argparse.Namespace, observability: ObservabilitySettings, endpoint: str
) -> tuple[float | None, str]:
    """(the floor, the key that sets it): --acceptance-floor, else the stack's acceptanceFloor
    for the endpoint, the alert rules' floor (mlcc/observability/rules.py); None for 0."""
    if args.acceptance_floor is not None:
        return float(args.acceptance_floor), "--acceptance-floor"
    floor = observability.floor_of(endpoint)
    return (floor or None), "hp:observability.acceptanceFloor, or --acceptance-floor"


def setup_failure(error: AmpSetupError) -> Check:
    return Check("live", False, f"cannot ask for live figures: {error}")


def _ask(source: Source, at: float, timeout_s: float, expr: str) -> list[Sample]:
    return instant_query(source, expr, at, timeout_s)
