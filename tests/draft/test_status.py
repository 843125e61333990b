"""`mlcc draft status` against a Kubernetes API on 127.0.0.1 (tests/draft/fake_jobs_api.py),
through the real kubernetes client: a running and a failed HyperPodPyTorchJob, a batch/v1 Job,
a missing job, a cluster without the training operator, an unreachable server; and the trainer
log parser on the lines speculators 0.9.0's own logging wrote (trainer_logs/record.py)."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
from fake_jobs_api import Cluster, FakeJobsApi

from mlcc.cli import main
from mlcc.cli.draft import trainer_log

LOGS = Path(__file__).resolve().parent / "trainer_logs"
JOB = "llama-eagle3"
SAVE = "/opt/sagemaker/draft-training/llama-3.1-8b-eagle3/checkpoints"


# AWS's model of the status (sagemaker-hyperpod 3.12.0,
# sagemaker/hyperpod/training/config/hyperpod_pytorch_job_unified_config.py, pydantic models
# with extra="forbid"): the field names of HyperPodPytorchJobStatus, Conditions and RestartStatus,
# and the ones each requires. The jobs below are checked against them.
STATUS_FIELDS = {
    "completionTime",
    "conditions",
    "elasticScalingStatus",
    "elasticWorkloadRef",
    "jobPods",
    "latestFaultyPodInstanceList",
    "managerPods",
    "masterAddr",
    "masterPort",
    "podManagerStatuses",
    "podSetInfos",
    "podSets",
    "restartCount",
    "restartStatus",
    "startTime",
}
CONDITION_FIELDS = {"lastProbeTime", "lastTransitionTime", "message", "reason", "status", "type"}
CONDITION_REQUIRED = {"status", "type"}
RESTART_FIELDS = {"currentEvalPeriod", "fullJobRestartCount", "restartCount"}  # all required


def shaped_by_aws(job: dict[str, Any]) -> dict[str, Any]:
    status = job["status"]
    assert set(status) <= STATUS_FIELDS
    for found in status["conditions"]:
        assert CONDITION_REQUIRED <= set(found) <= CONDITION_FIELDS
    assert set(status["restartStatus"]) == RESTART_FIELDS
    return job


def hyperpod_job(conditions: list[dict[str, str]], restarts: int = 0) -> dict[str, Any]:
    """Shaped by AWS's model: HyperPodPytorchJobStatus and Conditions (sagemaker-hyperpod
    3.12.0, training/config/hyperpod_pytorch_job_unified_config.py)."""
    return shaped_by_aws(
        {
            "apiVersion": "sagemaker.amazonaws.com/v1",
            "kind": "HyperPodPyTorchJob",
            "metadata": {"name": JOB, "namespace": "training", "resourceVersion": "7"},
            "spec": {"nprocPerNode": "8"},
            "status": {
                "conditions": conditions,
                "restartCount": restarts,
                "restartStatus": {
                    "currentEvalPeriod": 0,
                    "fullJobRestartCount": 0,
                    "restartCount": 0,
                },
                "startTime": "2026-12-06T16:40:00Z",
                "jobPods": [{"name": f"{JOB}-pod-0", "namespace": "training"}],
            },
        }
    )


def condition(
    kind: str, status: str, at: str, reason: str = "", message: str = ""
) -> dict[str, str]:
    found = {"type": kind, "status": status, "lastTransitionTime": at}
    found.update({k: v for k, v in (("reason", reason), ("message", message)) if v})
    return found


def pod(
    name: str, labels: dict[str, str], phase: str = "Running", restarts: int = 0, waiting: str = ""
) -> dict[str, Any]:
    state = {"waiting": {"reason": waiting}} if waiting else {"running": {}}
    return {
        "metadata": {"name": name, "namespace": "training", "labels": labels},
        "spec": {"nodeName": "hyperpod-i-0abc", "containers": [{"name": "trainer"}]},
        "status": {
            "phase": phase,
            "containerStatuses": [
                {
                    "name": "trainer",
                    "ready": phase == "Running" and not waiting,
                    "restartCount": restarts,
                    "state": state,
                }
            ],
        },
    }


RUNNING = [
    condition("Created", "True", "2026-12-06T16:40:00Z"),
    condition("PodsRunning", "True", "2026-12-06T16:41:00Z"),
    condition("Running", "True", "2026-12-06T16:41:10Z"),
]


def run(api: FakeJobsApi, tmp_path: Path, *extra: str) -> int:
    return status(api.kubeconfig(tmp_path / "kubeconfig"), "5", *extra)


def status(config: Path, timeout: str, *extra: str) -> int:
    return main(
        [
            "draft",
            "status",
            "--namespace",
            "training",
            "--job",
            JOB,
            "--kubeconfig",
            str(config),
            "--request-timeout",
            timeout,
            *extra,
        ]
    )


def test_a_running_hyperpod_job_with_its_trainer_progress(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = Cluster(
        hyperpod_jobs={JOB: hyperpod_job(RUNNING, restarts=1)},
        pods=[pod(f"{JOB}-pod-0", {"HPJob": JOB}, restarts=1), pod("other", {"HPJob": "other"})],
        logs={(f"{JOB}-pod-0", "trainer"): (LOGS / "trainer_80.log").read_text()},
    )
    with FakeJobsApi(cluster) as api:
        assert run(api, tmp_path) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "HyperPodPyTorchJob training/llama-eagle3: Running, 1 pod (1 running), 1 restart",
        "  Created=True at 2026-12-06T16:40:00Z",
        "  PodsRunning=True at 2026-12-06T16:41:00Z",
        "  Running=True at 2026-12-06T16:41:10Z",
        "  started 2026-12-06T16:40:00Z",
        "  pod llama-eagle3-pod-0  Running  ready 1/1  restarts 1  node hyperpod-i-0abc",
        "  log of llama-eagle3-pod-0:",
        out[7],
        "  validation after epoch 1: loss 8.100, full_acc 0.640/0.500/0.380",
        f"  newest checkpoint: {SAVE}/0 (best: 0, loss 8.100000)",
    ]
    assert out[7].startswith(
        "  progress: epoch 2/2 running, step 4, loss 7.650, full_acc 0.610/0.490/0.370, "
        "lr 9.50e-05, 1.48e+04 tokens/s (at "
    )


def test_the_wide_log_reads_the_same(tmp_path: Path) -> None:
    narrow = trainer_log.progress((LOGS / "trainer_80.log").read_text().splitlines())
    wide = trainer_log.progress((LOGS / "trainer_wide.log").read_text().splitlines())
    assert narrow.checkpoint == wide.checkpoint == f"{SAVE}/0"  # the 80-column log cut the path
    assert narrow.metrics == wide.metrics
    assert dict(narrow.metrics)["full_acc_2"] == "0.370"
    assert (
        (narrow.epoch, narrow.epochs, narrow.step)
        == (wide.epoch, wide.epochs, wide.step)
        == (2, 2, 4)
    )


def test_a_resumed_run_and_an_error_line() -> None:
    lines = [
        "[12:00:01] INFO     Found checkpoint at /ckpt/1.                      trainer.py:231",
        "           INFO     Resuming mid-epoch from epoch=1 local_step=20     trainer.py:246",
        "                    global_step=120.                                               ",
        "[12:00:09] ERROR    CUDA out of memory. Tried to allocate 2.00 GiB    trainer.py:300",
    ]
    found = trainer_log.progress(lines)
    assert found.resumed == "epoch 2, step 120"
    assert trainer_log.summary(found) == [
        "resumed from a checkpoint at epoch 2, step 120",
        "last error: CUDA out of memory. Tried to allocate 2.00 GiB",
    ]


def test_a_failed_job_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    failed = [
        *RUNNING[:2],
        condition("Failed", "True", "2026-12-06T17:02:00Z", "BackoffLimitExceeded", "pod exited 1"),
    ]
    cluster = Cluster(
        hyperpod_jobs={JOB: hyperpod_job(failed, restarts=3)},
        pods=[pod(f"{JOB}-pod-0", {"HPJob": JOB}, phase="Failed", restarts=3)],
        logs={(f"{JOB}-pod-0", "trainer"): "Traceback (most recent call last):\n  boom\n"},
    )
    with FakeJobsApi(cluster) as api:
        assert run(api, tmp_path) == 1
    out = capsys.readouterr().out.splitlines()
    assert (
        out[0] == "HyperPodPyTorchJob training/llama-eagle3: Failed, 1 pod (1 failed), 3 restarts"
    )
    assert "  Failed=True (BackoffLimitExceeded: pod exited 1) at 2026-12-06T17:02:00Z" in out
    assert out[-1] == (
        "  progress: unknown (llama-eagle3-pod-0: no trainer line in its last 400 lines)"
    )


def test_a_batch_job(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """batch/v1 Job status as the kubernetes client models it (V1JobStatus)."""
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": JOB, "namespace": "training"},
        "status": {"active": 1, "ready": 0, "startTime": "2026-12-06T16:40:00Z"},
    }
    cluster = Cluster(
        batch_jobs={JOB: job},
        pods=[
            pod(
                f"{JOB}-x7k2p",
                {"batch.kubernetes.io/job-name": JOB},
                phase="Pending",
                waiting="ContainerCreating",
            )
        ],
    )
    with FakeJobsApi(cluster) as api:
        assert run(api, tmp_path, "--kind", "job") == 0
    assert capsys.readouterr().out.splitlines() == [
        "Job training/llama-eagle3: Running, 1 pod (1 pending), 0 restarts",
        "  active 1",
        "  started 2026-12-06T16:40:00Z",
        "  pod llama-eagle3-x7k2p  Pending (ContainerCreating)  ready 0/1  restarts 0  node "
        "hyperpod-i-0abc",
        "  progress: unknown (no started pod to read)",
    ]


def test_a_missing_job_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeJobsApi(Cluster()) as api:
        assert run(api, tmp_path) == 3
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "mlcc draft status: error: no HyperPodPyTorchJob llama-eagle3 in namespace training; "
        "check --job and --namespace\n"
    )


def test_a_cluster_without_the_training_operator(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeJobsApi(Cluster(operator_installed=False)) as api:
        assert run(api, tmp_path) == 3
    assert capsys.readouterr().err == (
        "mlcc draft status: error: the cluster does not serve HyperPodPyTorchJob "
        "(sagemaker.amazonaws.com/v1): the HyperPod training operator add-on is not installed; "
        "install it, or run the job as a batch/v1 Job and pass --kind job\n"
    )


def test_an_unreachable_server(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    config = tmp_path / "kubeconfig"
    with FakeJobsApi(Cluster()) as api:
        api.kubeconfig(config)
    config.write_text(config.read_text().replace(api.url, f"http://127.0.0.1:{port}"))
    assert status(config, "2") == 4
    assert capsys.readouterr().err == (
        "mlcc draft status: error: cannot read llama-eagle3 in training: connection refused\n"
    )


def test_a_bad_name_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit:
        main(["draft", "status", "--namespace", "Training_1", "--job", JOB])
    assert exit.value.code == 2
    assert (
        "argument --namespace: Training_1 is not a Kubernetes namespace" in capsys.readouterr().err
    )


@pytest.mark.parametrize(
    "status",
    [
        None,
        "Running",
        {"conditions": "Failed", "restartCount": "3"},
        {"conditions": [None, 7, {"type": None, "status": True}], "restartCount": True},
        {"conditions": [{"type": "Failed\x1b[2J", "status": "True", "message": "x" * 5000}]},
        {"active": True, "startTime": 17, "restartStatus": []},
    ],
)
def test_odd_job_statuses_are_printed_not_raised(
    status: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for kind, jobs in (("hyperpod", "hyperpod_jobs"), ("job", "batch_jobs")):
        job = {"metadata": {"name": JOB}, "status": status}
        pods = [{"metadata": {"name": 5, "labels": {"HPJob": JOB}}, "status": []}]
        with FakeJobsApi(Cluster(**{jobs: {JOB: job}}, pods=pods)) as api:  # type: ignore[arg-type]
            assert run(api, tmp_path, "--kind", kind) in (0, 1)
        out = capsys.readouterr().out
        assert out.startswith(("HyperPodPyTorchJob training/", "Job training/"))
        assert "\x1b" not in out
        assert all(len(line) <= 320 for line in out.splitlines())


def test_an_unusable_kubeconfig_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nowhere"
    code = main(
        ["draft", "status", "--namespace", "training", "--job", JOB, "--kubeconfig", str(missing)]
    )
    assert code == 4
    err = capsys.readouterr().err
    assert err.startswith("mlcc draft status: error: cannot configure Kubernetes access: ")
    assert str(missing) in err
    assert err.endswith("; check --kubeconfig and --context\n")
    assert err.count("\n") == 1


def test_numbers_no_int_can_read_are_left_out() -> None:
    lines = [
        "[12:00:01] INFO     train/loss=1.0, global_step=²                      trainer.py:300",
        f"[12:00:02] INFO     Training epoch {'9' * 5000}/2 started             trainer.py:200",
        "[12:00:03] INFO     val/loss=0.5, epoch=٣                              trainer.py:320",
    ]
    found = trainer_log.progress(lines)
    assert (found.step, found.epoch, found.validation_epoch) == (None, None, None)
