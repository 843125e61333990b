#!/usr/bin/env python3
"""Run rendered combinations through an engine release's real argument parser.

    python3 scripts/engine_parse_check.py vllm 0.34.0 /tmp/venv-vllm/bin/python

where /tmp/venv-vllm is a throwaway venv with the release installed (docs/engine-parse-check.md
says how it was installed here, without CUDA).

For each seed algorithm the program renders the endpoint's container env on that release (the
same path as tests/manifest/test_release_combinations.py), the serve wrapper turns it into argv
as an image of that release would (MLCC_ENGINE_VERSION), and the engine's own parser, in the
given interpreter where the release is installed (CPU torch is enough: nothing runs on a GPU and
no model is loaded), parses that argv:

- vLLM: `make_arg_parser` of the frontend's cli_args (`vllm serve`'s parser) parses it, then
  `SpeculativeConfig`'s `method` is checked against the release's `SpeculativeMethod` Literal;
- SGLang: `ServerArgs.add_cli_args` on a plain parser parses it, then the algorithm is looked up
  with `SpeculativeAlgorithm.from_string` (NEXTN as the speculative hook rewrites it, EAGLE).

It prints one line per combination (`ok` or the engine's own error) and exits 1 when any
combination the program accepts is refused by the release. The output recorded here is in
docs/engine-parse-check.md.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SEED_ALGORITHMS = ("draft-model", "eagle", "eagle2", "eagle3", "ngram", "mtp")
DRAFT = "org/draft-model"
IMAGE = "registry/image:tag"
BASE = {
    "hp:model": "meta-llama/Llama-3.1-8B-Instruct",
    "aws:region": "us-east-1",
    "aws-native:region": "us-east-1",
    "hp:clusterName": "existing",
}

# Runs in the engine's interpreter: argv lists on stdin (JSON), one result line per list.
VLLM_PARSE = """
import json, sys, typing
try:
    from vllm.entrypoints.common.cli_args import make_arg_parser
except ImportError:
    from vllm.entrypoints.openai.cli_args import make_arg_parser
from vllm.utils.argparse_utils import FlexibleArgumentParser
from vllm.config import speculative
methods = set()
def flatten(t):
    for a in typing.get_args(t):
        flatten(a) if typing.get_origin(a) is typing.Literal else methods.add(a)
flatten(speculative.SpeculativeMethod)
for argv in json.load(sys.stdin):
    parser = make_arg_parser(FlexibleArgumentParser())
    try:
        args = parser.parse_args(argv[2:])  # after `vllm serve`
        config = args.speculative_config or {}
        method = config.get("method")
        print("ok" if method in methods else f"unknown method {method!r}")
    except SystemExit as error:
        print(f"argparse exit {error.code}")
"""
SGLANG_PARSE = """
import argparse, json, sys
from sglang.srt.server_args import ServerArgs
from sglang.srt.speculative.spec_info import SpeculativeAlgorithm
for argv in json.load(sys.stdin):
    parser = argparse.ArgumentParser()
    ServerArgs.add_cli_args(parser)
    try:
        args = parser.parse_args(argv[3:])  # after `python3 -m sglang.launch_server`
        name = args.speculative_algorithm
        SpeculativeAlgorithm.from_string("EAGLE" if name == "NEXTN" else name)
        print("ok")
    except SystemExit as error:
        print(f"argparse exit {error.code}")
    except ValueError as error:
        print(f"refused: {error}")
"""


def rendered_spec(engine: str, version: str, algorithm: str) -> dict[str, Any]:
    """The InferenceEndpointConfig spec of a one-endpoint stack of that engine release and
    seed algorithm (the combinations tests/manifest/test_release_combinations.py checks)."""
    from mlcc.manifest.workload import endpoint_spec, from_endpoint

    config = rendered_config(engine, version, algorithm)
    (endpoint,) = config.endpoints
    return endpoint_spec(from_endpoint(config, endpoint), IMAGE, endpoint.speculative)


def rendered_config(engine: str, version: str, algorithm: str) -> Any:
    """The StackConfig of that one-endpoint stack."""
    sys.path.insert(0, str(REPO))
    from mlcc import engine_contract as contract
    from mlcc.config.stack import parse

    values = {
        **BASE,
        "hp:engine": engine,
        "hp:engineVersion": version,
        "hp:speculativeAlgorithm": algorithm,
        "hp:speculativeNumTokens": "3",
    }
    if contract.ALGORITHMS[algorithm].needs_draft:
        values["hp:speculativeModel"] = DRAFT
    config = parse(values, stack="dev").config
    (endpoint,) = config.endpoints
    if endpoint.engine_release.version != version:
        raise SystemExit(f"engine_parse_check: {engine} {version} is not a supported release")
    return config


def rendered_env(config: Any) -> dict[str, str]:
    """The values of the container env the program renders for `config`'s one endpoint (a
    value read from a secret left out): what the serve wrapper turns into the engine's argv.
    Also the base of scripts/engine_schedule_check.py and tests/draft_proof/proof_run.py."""
    sys.path.insert(0, str(REPO))
    from mlcc.manifest.workload import endpoint_spec, from_endpoint

    (endpoint,) = config.endpoints
    spec = endpoint_spec(from_endpoint(config, endpoint), IMAGE, endpoint.speculative)
    worker = spec["worker"]
    assert isinstance(worker, dict)
    return {e["name"]: e["value"] for e in worker["environmentVariables"] if "value" in e}


def rendered_argv(engine: str, version: str, algorithm: str) -> list[str]:
    from mlcc import engine_contract as contract

    env = rendered_env(rendered_config(engine, version, algorithm))
    env |= {contract.ENGINE_ENV: engine, contract.ENGINE_VERSION_ENV: version}
    argv: list[str] = serve_wrapper().build_argv(engine, env, [])
    return argv


def serve_wrapper() -> ModuleType:
    """images/serve/serve.py, loaded as the image runs it (it loads the contract beside it)."""
    spec = importlib.util.spec_from_file_location("mlcc_serve", REPO / "images/serve/serve.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[0] not in ("vllm", "sglang"):
        print(__doc__, file=sys.stderr)
        return 2
    engine, version, python = argv
    argvs = [rendered_argv(engine, version, a) for a in SEED_ALGORITHMS]
    program = VLLM_PARSE if engine == "vllm" else SGLANG_PARSE
    # No GPU here: vLLM's platform detection is told to take the CPU platform, or its device
    # config cannot be built (vllm/platforms/__init__.py, cpu_platform_plugin).
    env = {**os.environ, "VLLM_TARGET_DEVICE": "cpu"} if engine == "vllm" else None
    result = subprocess.run(
        [python, "-c", program],
        env=env,
        input=json.dumps(argvs),
        capture_output=True,
        text=True,
        check=False,
    )
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    if result.returncode != 0 or len(lines) != len(argvs):
        print(result.stderr[-2000:], file=sys.stderr)
        return 1
    for algorithm, line, command in zip(SEED_ALGORITHMS, lines, argvs, strict=True):
        print(f"{engine} {version} {algorithm}: {line}  ({' '.join(command)})")
    return 0 if all(line == "ok" for line in lines) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
