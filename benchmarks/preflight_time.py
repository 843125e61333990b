"""Seconds `mlcc plan --preflight` adds to `mlcc plan` with a warm Hub cache.

Starts the tests' fake Hub on 127.0.0.1 (tests/preflight/fake_hub.py, serving the vendored
config.json files, the gated Llama readable with its token) and their local AWS
(tests/local_aws.py, answering as an account every example passes in), warms the cache with one
preflight plan, then interleaves plain and --preflight plans of the stack and prints the medians,
the added seconds and the ratio. The goal: under 2 s added.

    python benchmarks/preflight_time.py [--stack dev] [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / d) for d in (".", "tests", "tests/preflight", "tests/bench")]

from aws_accounts import example_account, serve  # type: ignore[import-not-found]  # noqa: E402
from fake_hub import TOKEN, FakeHub, HubBehaviour  # type: ignore[import-not-found]  # noqa: E402
from local_aws import local_aws  # type: ignore[import-not-found]  # noqa: E402

GOAL_SECONDS = 2.0


def timed(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=REPO, check=True, capture_output=True, env=env)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", default="dev")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    gated = {"meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-70B-Instruct"}
    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeHub(HubBehaviour(gated=gated)) as hub,
        local_aws() as aws,
    ):
        serve(aws, example_account())
        env = {
            **os.environ,
            "AWS_ENDPOINT_URL": aws.url,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_CONFIG_FILE": os.devnull,
            "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
            "HF_ENDPOINT": hub.url,
            "HF_TOKEN": TOKEN,
            "HF_HUB_CACHE": str(Path(tmp) / "cache"),
            "PYTHONPATH": str(REPO),
        }
        plan = [sys.executable, "-m", "mlcc", "plan", "--stack", args.stack, "--out", tmp]
        timed([*plan, "--preflight"], env)  # warm the cache
        plain, checked = [], []
        for _ in range(args.runs):
            plain.append(timed(plan, env))
            checked.append(timed([*plan, "--preflight"], env))
    base, with_preflight = statistics.median(plain), statistics.median(checked)
    added = with_preflight - base
    print(f"mlcc plan --stack {args.stack}: {base:.2f} s; with --preflight {with_preflight:.2f} s")
    print(
        f"preflight adds {added:.2f} s (ratio {with_preflight / base:.2f}); goal < {GOAL_SECONDS} s"
    )
    return 0 if added < GOAL_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
