"""`mlcc draft status`: a draft-training job's state, pods, restarts and training progress.

    mlcc draft status (--stack NAME [--project-dir DIR] | --namespace NS --job NAME)
        [--kind hyperpod|job] [--kubeconfig FILE] [--context NAME]
        [--request-timeout SECONDS] [--log-lines N]

With --stack, the job is the one the stack's hp:draftTraining declares: its namespace, name and
kind, and the cluster the stack deploys to (mlcc/cli/draft/stack_job.py); a flag given as well
wins.

Reads the job (a HyperPodPyTorchJob, or a batch/v1 Job for clusters without the HyperPod
training operator; mlcc/cli/draft/job_status.py has their fields and sources), its pods, and the
last lines of the trainer's log (mlcc/cli/draft/trainer_log.py: what speculators 0.9.0's trainer
logs), through the kubernetes client configured from the kubeconfig as `mlcc verify` is
(mlcc/deploy/kubeconfig/) and the deploy wait's bounded reads (mlcc/deploy/cluster.py: every
request with a timeout, every answer read bounded).

Exit codes: 0 the job was read and has not failed; 1 it failed (a Failed condition); 2 a usage
error; 3 no such job, or the cluster does not serve its kind (the HyperPod training operator is
not installed); 4 the cluster could not be reached or refused the request (or the kubeconfig is
unusable).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

from mlcc.cli.draft import job_status, trainer_log
from mlcc.deploy.cluster import DEFAULT_REQUEST_TIMEOUT_S, ApiError
from mlcc.deploy.served import KindReader
from mlcc.engine_contract.values import printable
from mlcc.userfiles import numbers

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_MISSING, EXIT_UNREACHABLE = 0, 1, 2, 3, 4
DEFAULT_LOG_LINES = 400
MOST_LOG_LINES = 5000
LOG_TAIL_BYTES = 1024 * 1024
PODS_READ = 3  # the trainer's log is looked for in at most this many pods, by name
# RFC 1123 labels (namespaces) and subdomains (object names), as the API validates them
_NAMESPACE = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")


class JobReader(KindReader):
    """The deploy wait's reads, with the three `mlcc draft status` adds."""

    def job(self, kind: job_status.Kind, namespace: str, name: str) -> dict[str, Any] | None:
        """The job as JSON, None when the API says 404."""
        path = job_status.job_path(kind, quote(namespace, safe=""), quote(name, safe=""))
        return self._json_or_none(f"read {name} in {namespace}", path)

    def serves_hyperpod_jobs(self) -> bool:
        """Whether the API lists hyperpodpytorchjobs in sagemaker.amazonaws.com/v1."""
        return self.serves(
            job_status.HYPERPOD_GROUP, job_status.HYPERPOD_VERSION, job_status.HYPERPOD_PLURAL
        )

    def tail(self, namespace: str, pod: str, container: str, lines: int) -> str:
        """The last `lines` lines of the container's log (at most LOG_TAIL_BYTES)."""
        query: list[tuple[str, object]] = [
            ("container", container),
            ("tailLines", lines),
            ("limitBytes", LOG_TAIL_BYTES),
        ]
        return self.log_text(namespace, pod, query, LOG_TAIL_BYTES)


def _named(pattern: re.Pattern[str], what: str) -> Any:
    def parse(text: str) -> str:
        if not pattern.match(text):
            raise argparse.ArgumentTypeError(
                f"{printable(text[:64])} is not a Kubernetes {what} (lowercase letters, "
                "digits and '-')"
            )
        return text

    return parse


def register(steps: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = steps.add_parser(
        "status",
        help="a draft-training job's state, pods and training progress",
        description=(
            "Read a draft-training job (HyperPodPyTorchJob or batch/v1 Job), its pods and the "
            "last lines of the trainer's log: phase, conditions, restarts, epoch, step, loss, "
            "the newest checkpoint. Exit 0 when the job has not failed, 1 when it failed, 3 "
            "when there is no such job (or kind), 4 when the cluster could not be read."
        ),
    )
    parser.add_argument(
        "--stack",
        help="the stack whose hp:draftTraining job to read (Pulumi.<stack>.yaml): its namespace, "
        "name, kind and cluster",
    )
    parser.add_argument(
        "--project-dir", type=Path, default=Path("."), help="folder with Pulumi.yaml (default: .)"
    )
    parser.add_argument(
        "--namespace",
        type=_named(_NAMESPACE, "namespace"),
        help="its namespace (default with --stack: hp:namespace)",
    )
    parser.add_argument(
        "--job",
        type=_named(_NAME, "name"),
        help="its name (default with --stack: the job hp:draftTraining creates)",
    )
    parser.add_argument(
        "--kind",
        choices=("hyperpod", "job"),
        help="HyperPodPyTorchJob (hyperpod, the default) or a batch/v1 Job (job); with --stack "
        "hp:draftTraining.operator's",
    )
    parser.add_argument(
        "--kubeconfig", help="kubeconfig file; default: $KUBECONFIG, ~/.kube/config"
    )
    parser.add_argument("--context", help="kubeconfig context; default: the current one")
    parser.add_argument(
        "--request-timeout",
        type=numbers.flag_type("", 0.1, 600.0),
        default=DEFAULT_REQUEST_TIMEOUT_S,
        metavar="SECONDS",
        help=f"give up on a Kubernetes API request after this long (default: "
        f"{DEFAULT_REQUEST_TIMEOUT_S:g})",
    )
    parser.add_argument(
        "--log-lines",
        type=numbers.whole_flag_type(MOST_LOG_LINES),
        default=DEFAULT_LOG_LINES,
        metavar="N",
        help=f"read this many of the trainer log's last lines (default: {DEFAULT_LOG_LINES})",
    )
    parser.set_defaults(run=run)


def _error(text: str) -> None:
    print(f"mlcc draft status: error: {printable(text)}", file=sys.stderr)


def _from_stack(args: argparse.Namespace) -> int | None:
    """Fills args from --stack (None), or the exit code of a usage error."""
    from mlcc.cli.draft.stack_job import StackJobError, stack_job

    if not args.stack:
        missing = [flag for flag in ("--namespace", "--job") if not getattr(args, flag[2:])]
        if missing:
            _error(f"give {' and '.join(missing)}, or --stack NAME to read them from the stack")
            return EXIT_USAGE
        args.kind = args.kind or "hyperpod"
        return None
    try:
        found = stack_job(args)
    except StackJobError as error:
        _error(str(error))
        return EXIT_USAGE
    args.namespace, args.job, args.kind = found.namespace, found.job, found.kind
    args.kubeconfig, args.context = found.kubeconfig, found.context
    args.found_stack = found
    return None


def _access_error(args: argparse.Namespace, error: Exception) -> str:
    found = getattr(args, "found_stack", None)
    if found is None:
        return f"cannot configure Kubernetes access: {error}; check --kubeconfig and --context"
    from mlcc.cli.verify.command import kube_access_error

    line = kube_access_error(
        found.kubeconfig, found.stack, found.region, error, found.kubernetes_only
    )
    return line.removeprefix("mlcc verify: error: ")


def run(args: argparse.Namespace) -> int:
    from mlcc.deploy.kubeconfig import EXEC_PLUGIN_TIMEOUT_S, api_client

    usage = _from_stack(args)
    if usage is not None:
        return usage
    kind: job_status.Kind = args.kind
    try:
        api = api_client(args.kubeconfig, args.context, EXEC_PLUGIN_TIMEOUT_S)
    except Exception as error:  # AccessError, the client's ConfigException, file errors
        _error(_access_error(args, error))
        return EXIT_UNREACHABLE
    reader = JobReader(api, args.request_timeout)
    shown = job_status.HYPERPOD_KIND if kind == "hyperpod" else "Job"
    try:
        job = reader.job(kind, args.namespace, args.job)
        if job is None and kind == "hyperpod" and not reader.serves_hyperpod_jobs():
            _error(
                f"the cluster does not serve {job_status.HYPERPOD_KIND} "
                f"({job_status.HYPERPOD_GROUP}/{job_status.HYPERPOD_VERSION}): the HyperPod "
                "training operator add-on is not installed; install it, or run the job as a "
                "batch/v1 Job and pass --kind job"
            )
            return EXIT_MISSING
    except ApiError as error:
        _error(str(error))
        return EXIT_UNREACHABLE
    if job is None:
        found = getattr(args, "found_stack", None)
        fix = (
            f"stack {found.stack}'s hp:draftTraining job is created by `pulumi up`"
            if found is not None
            else "check --job and --namespace"
        )
        _error(f"no {shown} {args.job} in namespace {args.namespace}; {fix}")
        return EXIT_MISSING
    state = job_status.job_state(kind, job)
    unread: list[str] = []
    try:
        listing = reader.pods(args.namespace, job_status.pod_selector(kind, args.job))
        pods = job_status.pod_lines(listing.items)
        unread += [f"not read: {listing.unread}"] if listing.unread else []
    except ApiError as error:
        pods, unread = [], [f"pods not read: {error}"]
    print(printable(job_status.headline(kind, args.job, args.namespace, state, pods)))
    for detail in state.details:
        print(f"  {printable(detail)}")
    for pod in pods:
        print(f"  pod {printable(job_status.pod_text(pod))}")
    for line in [*unread, *_progress(reader, args, pods)]:
        print(f"  {printable(line)}")
    return EXIT_FAILED if state.failed else EXIT_OK


def _progress(
    reader: JobReader, args: argparse.Namespace, pods: list[job_status.PodLine]
) -> list[str]:
    """The trainer's progress from the first pod (by name) whose log tail has trainer lines."""
    tried: list[str] = []
    for pod in [p for p in pods if p.container and p.phase != "Pending"][:PODS_READ]:
        try:
            text = reader.tail(args.namespace, pod.name, pod.container, args.log_lines)
        except ApiError as error:
            tried.append(f"{pod.name}: {error}")
            continue
        found = trainer_log.progress(text.splitlines())
        if not found.empty or found.errors:
            return [f"log of {pod.name}:", *trainer_log.summary(found)]
        tried.append(f"{pod.name}: no trainer line in its last {args.log_lines} lines")
    if not tried:
        return ["progress: unknown (no started pod to read)"]
    return [f"progress: unknown ({'; '.join(tried)})"]
