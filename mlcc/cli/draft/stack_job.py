"""`mlcc draft status --stack NAME`: the job hp:draftTraining declares, read from the stack.

The stack files are read once, as `mlcc verify` reads them (mlcc/stackfiles: the project's
defaults and declared types, then the parse of mlcc/config/stack.py). The job is the one the
program creates (mlcc/components/draft_training.py): named `DraftTrainingConfig.name`, in
hp:namespace, a HyperPodPyTorchJob for operator hyperpod and a batch/v1 Job for operator job.
The cluster is reached as `mlcc verify` reaches the stack's own: a Kubernetes-only stack's
hp:kubeconfig and hp:kubeContext, else the kubeconfig's defaults (`verify.stack_kubeconfig`).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from mlcc.cli.draft import job_status
from mlcc.config.draft_training import KEY, JobOperator


class StackJobError(Exception):
    """One line: why the stack does not name a job."""


@dataclass(frozen=True)
class StackJob:
    stack: str
    region: str | None
    namespace: str
    job: str
    kind: job_status.Kind
    kubeconfig: str | None
    context: str | None
    kubernetes_only: bool


def stack_job(args: argparse.Namespace) -> StackJob:
    """The job and cluster access of `args.stack`; the explicit flags still win."""
    from mlcc.cli.verify.command import stack_kubeconfig
    from mlcc.config import stack as stack_config
    from mlcc.stackfiles import resolve as stackfiles

    project_dir: Path = args.project_dir
    name: str = args.stack
    try:
        project = stackfiles.load_project(project_dir)
        values = stackfiles.resolve(project, stackfiles.load_stack(project_dir, name), stack=name)
        config = stack_config.parse(
            values.values, stack=name, secret_keys=values.secret_keys
        ).config
    except (stackfiles.StackFileError, stackfiles.OverrideError) as error:
        raise StackJobError(str(error)) from None
    except (stackfiles.StackConfigError, stack_config.ConfigError) as error:
        shown = "; ".join(str(p) for p in error.problems[:3])
        more = len(error.problems) - 3
        raise StackJobError(
            f"stack {name}: {shown}{f' (and {more} more)' if more > 0 else ''}"
        ) from None
    training = config.draft_training
    if training is None:
        raise StackJobError(
            f"stack {name} has no hp:{KEY}, so it declares no training job: set hp:{KEY} "
            "(docs/draft-training.md), or give --namespace and --job"
        )
    kind: job_status.Kind = "job" if training.operator is JobOperator.JOB else "hyperpod"
    kubeconfig, context = stack_kubeconfig(args, config)
    return StackJob(
        stack=name,
        region=values.values.get("aws:region"),
        namespace=args.namespace or config.namespace,
        job=args.job or training.name,
        kind=args.kind or kind,
        kubeconfig=kubeconfig,
        context=context,
        kubernetes_only=config.infrastructure.calls_no_aws,
    )
