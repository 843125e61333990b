"""`mlcc verify` as a process: a request given up on at its deadline never aborts the exit."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from bench_fake_engine import EngineBehaviour, FakeEngine
from program_runs import REPO

CR_PATH = (
    "/apis/inference.sagemaker.aws.amazon.com/v1/namespaces/inference/"
    "inferenceendpointconfigs/llama-eagle3"
)


def test_a_trickling_api_server_ends_verify_with_exit_1_not_an_abort(tmp_path: Path) -> None:
    shutil.copy(REPO / "Pulumi.yaml", tmp_path)
    shutil.copy(REPO / "examples" / "Pulumi.multi.yaml", tmp_path)
    with FakeEngine(EngineBehaviour(hostile={CR_PATH: "trickle-body"})) as engine:
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(
            "apiVersion: v1\nkind: Config\n"
            f"clusters: [{{name: c, cluster: {{server: '{engine.url}'}}}}]\n"
            "users: [{name: u, user: {token: t}}]\n"
            "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
        )
        argv = ["verify", "--stack", "multi", "--project-dir", str(tmp_path)]
        argv += ["--kubeconfig", str(kubeconfig), "--request-timeout", "1"]
        done = subprocess.run(
            [sys.executable, "-m", "mlcc", *argv],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 1, done.stderr
    assert "Fatal Python error" not in done.stderr
    assert "no complete answer within 2 s" in done.stdout
