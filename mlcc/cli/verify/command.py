"""`mlcc verify`: check that a deployed endpoint really decodes speculatively.

Reads the stack file for what is expected, the cluster for what runs (the
InferenceEndpointConfig, its pods, their engine logs), prints one `PASS|FAIL <check>: <detail>`
line per check and exits 0 only when every check passes (1 otherwise, 2 on a usage error).
The decisions are in `mlcc.deploy.verify`; this module only fetches, each request bounded by
`--request-timeout`. `--wait` first runs the deploy wait of `pulumi up` (mlcc/cli/verify/wait.py).
Every read goes through the deploy wait's bounded `Cluster` (mlcc/deploy/cluster.py, via
mlcc/cli/verify/reads.py); the `kubernetes` client is imported only when `kube_cluster` builds
one, so the rest of the CLI starts without it.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mlcc.cli.verify import live as verify_live
from mlcc.cli.verify import reads as verify_reads
from mlcc.cli.verify import wait as verify_wait
from mlcc.cli.verify.capture_records import read_records
from mlcc.cli.verify.reads import ClusterError
from mlcc.config import stack as stack_config
from mlcc.config.endpoints import EndpointConfig
from mlcc.config.kubernetes_only import KubeconfigCluster
from mlcc.config.observability.settings import ObservabilitySettings
from mlcc.deploy import capture_check, draft_head
from mlcc.deploy.check import Check, all_passed
from mlcc.deploy.cluster import DEFAULT_REQUEST_TIMEOUT_S, Cluster
from mlcc.deploy.expectation import expectation_for
from mlcc.deploy.kubeconfig import EXEC_PLUGIN_TIMEOUT_S, api_client
from mlcc.deploy.verify import verify_endpoint
from mlcc.deploy.waiter import WaitSettings
from mlcc.engine_contract.values import printable, shown_value
from mlcc.prometheus.amp import AmpSetupError
from mlcc.stackfiles import resolve as stackfiles
from mlcc.userfiles import shown_path

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    pass


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "verify",
        help="check that a deployed endpoint runs speculative decoding as configured",
        description=(
            "Compare a running endpoint with its stack config: the InferenceEndpointConfig "
            "state and env, the pods' env, and the engine's startup log. One PASS/FAIL line per "
            "check; exit 0 only when all pass."
        ),
    )
    parser.add_argument("--stack", help="stack name (Pulumi.<stack>.yaml); default: the only one")
    parser.add_argument("--namespace", help="Kubernetes namespace; default: hp:namespace")
    parser.add_argument(
        "--endpoint",
        help="one endpoint (InferenceEndpointConfig) name; default: all of the stack's",
    )
    parser.add_argument(
        "--kubeconfig", help="kubeconfig file; default: $KUBECONFIG, ~/.kube/config"
    )
    parser.add_argument("--context", help="kubeconfig context; default: the current one")
    parser.add_argument(
        "--request-timeout",
        type=verify_wait.seconds,
        default=DEFAULT_REQUEST_TIMEOUT_S,
        metavar="SECONDS",
        help=f"give up on a Kubernetes API, Prometheus or S3 request after this long (default: "
        f"{DEFAULT_REQUEST_TIMEOUT_S:g})",
    )
    verify_wait.add_arguments(parser)
    verify_live.add_arguments(parser)
    parser.add_argument(
        "--project-dir", type=Path, default=Path("."), help="folder with Pulumi.yaml (default: .)"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, wait_timings: WaitSettings | None = None) -> int:
    try:
        config, region = _load_config(args.project_dir, args.stack)
    except UsageError as error:
        print(f"mlcc verify: error: {printable(str(error))}", file=sys.stderr)
        return EXIT_USAGE
    except (stackfiles.StackConfigError, stack_config.ConfigError) as error:
        for problem in error.problems:
            print(f"error: {printable(str(problem))}", file=sys.stderr)
        return EXIT_FAILED
    namespace = args.namespace or config.namespace
    endpoints = [e for e in config.endpoints if args.endpoint in (None, e.name)]
    if not endpoints:
        names = ", ".join(e.name for e in config.endpoints)
        print(
            f"mlcc verify: error: the stack has no endpoint {shown_value(args.endpoint)}; "
            f"choose one of: {names}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    kubeconfig, context = stack_kubeconfig(args, config)
    try:
        # The exec plugin's limit is within --timeout too: no read outlasts the wait.
        plugin_s = min(EXEC_PLUGIN_TIMEOUT_S, (args.timeout or 1e9) * 60) if args.wait else None
        cluster = kube_cluster(kubeconfig, context, args.request_timeout, plugin_s)
    except Exception as error:  # the client's ConfigException and file errors alike
        aws_free = config.infrastructure.calls_no_aws
        line = kube_access_error(kubeconfig, config.stack, region, error, aws_free)
        print(printable(line), file=sys.stderr)
        return EXIT_FAILED
    if args.wait:
        minutes = args.timeout or config.deploy_wait.timeout_minutes
        if not verify_wait.wait(cluster, namespace, endpoints, minutes, wait_timings):
            return EXIT_FAILED
    live = (
        _live_checks(args, region, namespace, endpoints, config.observability)
        if verify_live.wanted(args)
        else {}
    )
    passed = [
        _verify_one(
            cluster,
            namespace,
            endpoint,
            len(endpoints) > 1,
            live.get(endpoint.name),
            args.request_timeout,
        )
        for endpoint in endpoints
    ]
    return EXIT_OK if all(passed) else EXIT_FAILED


def _live_checks(
    args: argparse.Namespace,
    region: str | None,
    namespace: str,
    endpoints: list[EndpointConfig],
    observability: ObservabilitySettings,
) -> dict[str, Check]:
    """The `live` check of each endpoint (mlcc/cli/verify/live.py)."""
    try:
        source = verify_live.source_of(args, region)
    except AmpSetupError as error:
        return {e.name: verify_live.setup_failure(error) for e in endpoints}
    return verify_live.live_checks(
        args, source, namespace, endpoints, args.request_timeout, observability
    )


def _verify_one(
    cluster: Cluster,
    namespace: str,
    endpoint: EndpointConfig,
    headed: bool,
    live: Check | None = None,
    s3_timeout_s: float = DEFAULT_REQUEST_TIMEOUT_S,
) -> bool:
    """Print one endpoint's checks (under its name when the stack has several)."""
    try:
        expected = expectation_for(endpoint)
        observed, notes = verify_reads.observe(cluster, namespace, endpoint.name)
        copies = verify_reads.copy_logs(cluster, observed, expected)
        sources = draft_head.source_checks(observed, *copies, expected)
        captured = _capture_checks(observed.endpoint, endpoint, s3_timeout_s)
        checks = [*verify_endpoint(observed, expected), *sources, *captured, *notes]
    except ClusterError as error:
        checks = [Check("cluster", False, str(error))]
    except (AttributeError, TypeError, KeyError, ValueError) as error:
        # Never seen: every answer is typed by mlcc/deploy/shapes.py (and fuzzed by
        # tests/deploy/test_kube_fuzz.py); a case no one foresaw is still one line.
        reason = " ".join(f"{type(error).__name__}: {error}".split())[:200]
        checks = [Check("cluster", False, f"the Kubernetes API's answer is malformed: {reason}")]
    checks += [live] if live is not None else []
    if headed:
        print(f"{endpoint.name}:")
    for check in checks:  # details quote the cluster's answers: control characters escaped
        print(printable(f"  {check.line}" if headed else check.line))
    return all_passed(checks)


def _capture_checks(
    live: Mapping[str, Any] | None, endpoint: EndpointConfig, s3_timeout_s: float
) -> list[Check]:
    """hp:capture's check, when the endpoint has one and its object exists (hp:capture is
    refused in Kubernetes-only mode, so a stack that has it calls AWS)."""
    wanted = endpoint.operator.capture
    if wanted is None or live is None:
        return []
    uri = capture_check.capture_uri(live)
    if uri is None:
        records = capture_check.Records(not_read="no s3Uri")
    else:
        records = read_records(uri, s3_timeout_s)
    return [capture_check.check_capture(live, wanted, records)]


def stack_kubeconfig(
    args: argparse.Namespace, config: stack_config.StackConfig
) -> tuple[str | None, str | None]:
    """--kubeconfig and --context, else a Kubernetes-only stack's hp:kubeconfig and
    hp:kubeContext (the cluster `pulumi up` deployed to), else the client's defaults."""
    cluster = config.infrastructure.cluster
    if args.kubeconfig or not isinstance(cluster, KubeconfigCluster):
        return args.kubeconfig, args.context
    # As given: the client's loader expands `~` (mlcc/deploy/kubeconfig/sources.py).
    return cluster.kubeconfig, args.context or cluster.context or None


def kube_access_error(
    kubeconfig: str | None,
    stack: str,
    region: str | None,
    error: Exception,
    kubernetes_only: bool = False,
) -> str:
    """One line: which kubeconfig failed, why, and the command that writes a working one."""
    path = shown_path(
        kubeconfig or os.environ.get("KUBECONFIG") or str(Path("~/.kube/config").expanduser())
    )
    reason = " ".join(str(error).split()) or type(error).__name__
    # The reader's line names the file too: said once is enough.
    reason = reason.removeprefix(f"kubeconfig {path}").removeprefix(":").strip() or reason
    write_it = (
        f'aws eks update-kubeconfig --name "$(pulumi stack output eksClusterName --stack {stack})"'
        f"{f' --region {region}' if region else ''}"
        f"{f' --kubeconfig {kubeconfig}' if kubeconfig else ''}"
    )
    fix = (
        "check hp:kubeconfig and hp:kubeContext (or give --kubeconfig, --context)"
        if kubernetes_only
        else f"write it with: {write_it}"
    )
    return (
        f"mlcc verify: error: cannot configure Kubernetes access from kubeconfig {path}: {reason}; "
        f"{fix}"
    )


def _load_config(
    project_dir: Path, stack: str | None
) -> tuple[stack_config.StackConfig, str | None]:
    """The stack's parsed config and its region (`aws:region`)."""
    try:
        project = stackfiles.load_project(project_dir)
        name = stack or _only_stack(project_dir)
        values = stackfiles.resolve(project, stackfiles.load_stack(project_dir, name), stack=name)
    except (stackfiles.StackFileError, stackfiles.OverrideError) as error:
        raise UsageError(str(error)) from None
    parsed = stack_config.parse(values.values, stack=name, secret_keys=values.secret_keys)
    return parsed.config, values.values.get("aws:region")


def _only_stack(project_dir: Path) -> str:
    stacks = stackfiles.stack_names(project_dir)
    if len(stacks) != 1:
        raise UsageError(f"choose a stack with --stack ({', '.join(stacks) or 'none found'})")
    return stacks[0]


def kube_cluster(
    kubeconfig: str | None,
    context: str | None,
    request_timeout_s: float = DEFAULT_REQUEST_TIMEOUT_S,
    exec_timeout_s: float | None = None,
) -> Cluster:
    """The bounded reads (mlcc/deploy/cluster.py) through the official client, configured from
    --kubeconfig, $KUBECONFIG, ~/.kube/config, or the pod's service account when run inside the
    cluster without a kubeconfig; a failing exec plugin is one AccessError line naming it
    (mlcc/deploy/kubeconfig.py)."""
    api = api_client(kubeconfig, context, exec_timeout_s or EXEC_PLUGIN_TIMEOUT_S)
    return Cluster(api, request_timeout_s)
