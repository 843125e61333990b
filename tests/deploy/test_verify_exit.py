"""`mlcc verify` as a process: a request given up on at its deadline never aborts the exit."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import deploy_samples as d
from fake_kube_api import Behaviour, FakeKubeApi, Scene
from program_runs import REPO


def test_a_trickling_api_server_ends_verify_with_exit_1_not_an_abort(tmp_path: Path) -> None:
    shutil.copy(REPO / "Pulumi.yaml", tmp_path)
    shutil.copy(REPO / "examples" / "Pulumi.multi.yaml", tmp_path)
    # Every answer comes a byte per 0.02 s: well within the 0.5 s read timeout (also on a loaded
    # machine), never whole within the request's deadline (twice that), so the request is
    # abandoned mid-read.
    scenes = [Scene(0, d.endpoint("DeploymentComplete"))]
    with FakeKubeApi(scenes, Behaviour(trickle_s=0.02)) as api:
        kubeconfig = api.kubeconfig(tmp_path / "kubeconfig")
        argv = ["verify", "--stack", "multi", "--endpoint", "llama-eagle3"]
        argv += ["--project-dir", str(tmp_path)]
        argv += ["--kubeconfig", str(kubeconfig), "--request-timeout", "0.5"]
        done = subprocess.run(
            [sys.executable, "-m", "mlcc", *argv],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 1, done.stderr
    assert "Fatal Python error" not in done.stderr
    assert "no complete answer within 1 s" in done.stdout
