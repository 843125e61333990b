#!/usr/bin/env python3
"""Start-up time of the serve wrapper (dry-run) against a bare `python3 -c pass`.

Both commands run N times, interleaved so that machine noise hits both alike; the script prints
the median of each and their ratio. The wrapper runs with a full speculative environment, so
the time includes building and validating the argv. Exit code 0 unless a command fails to run.

    python3 benchmarks/wrapper_startup.py [--runs 40] [--python /usr/bin/python3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

SERVE_PY = Path(__file__).resolve().parents[1] / "images" / "serve" / "serve.py"

WRAPPER_ENV = {
    "MLCC_ENGINE": "sglang",
    "MLCC_DRY_RUN": "1",
    "SM_SGLANG_MODEL_PATH": "meta-llama/Llama-3.1-8B-Instruct",
    "SM_SGLANG_SPECULATIVE_ALGORITHM": "EAGLE3",
    "SM_SGLANG_SPECULATIVE_DRAFT_MODEL_PATH": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
    "SM_SGLANG_SPECULATIVE_NUM_STEPS": "3",
    "SM_SGLANG_SPECULATIVE_EAGLE_TOPK": "1",
    "SM_SGLANG_SPECULATIVE_NUM_DRAFT_TOKENS": "4",
    "SM_SGLANG_TP_SIZE": "4",
    "SM_VLLM_SPECULATIVE_CONFIG": '{"method":"eagle3","model":"org/d","num_speculative_tokens":3}',
}


def seconds_to_run(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        command, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    return time.perf_counter() - start


def measure(python: str, runs: int) -> tuple[list[float], list[float]]:
    base_env = {"PATH": "/usr/bin:/bin"}
    bare, wrapper = [], []
    for _ in range(runs):
        bare.append(seconds_to_run([python, "-c", "pass"], base_env))
        wrapper.append(seconds_to_run([python, str(SERVE_PY)], {**base_env, **WRAPPER_ENV}))
    return bare, wrapper


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40, help="runs of each command (default 40)")
    parser.add_argument("--python", default=sys.executable, help="interpreter to time")
    options = parser.parse_args()
    try:
        seconds_to_run([options.python, "-c", "pass"], {"PATH": "/usr/bin:/bin"})  # warm caches
        bare, wrapper = measure(options.python, max(1, options.runs))
    except (OSError, subprocess.CalledProcessError) as error:
        print(f"wrapper_startup: failed to run: {error}", file=sys.stderr)
        return 1
    bare_ms = statistics.median(bare) * 1000
    wrapper_ms = statistics.median(wrapper) * 1000
    print(f"python:            {options.python}")
    print(f"runs:              {len(bare)} each, interleaved")
    print(f"python3 -c pass:   median {bare_ms:.1f} ms")
    print(f"serve.py dry-run:  median {wrapper_ms:.1f} ms")
    print(f"ratio:             {wrapper_ms / bare_ms:.2f}x")
    print(f"wrapper overhead:  {wrapper_ms - bare_ms:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
