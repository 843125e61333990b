#!/usr/bin/env python3
"""Run rendered hp:speculativeSchedule values through the engines' own schedule code.

    python3 scripts/engine_schedule_check.py SRC

where SRC holds the unpacked wheels as SRC/vllm-0.27.1, SRC/vllm-0.34.0, SRC/sglang-0.5.17 and
SRC/sglang-0.5.23 (`unzip` of each release's wheel from PyPI; docs/speculative-schedule.md).

For every schedule (a few by hand, then seeded random ones) and every release, the program parses
a one-endpoint stack with it (mlcc.config.stack.parse), renders the endpoint's container env
(mlcc.manifest.workload), and the serve wrapper turns that env into argv as an image of that
release would (MLCC_ENGINE_VERSION), writing SGLang's adaptive config file. Then the engine's
own code, loaded from the wheel's files, judges what the engine would be given:

- vLLM: `validate_and_normalize_dynamic_sd_schedule` and `build_dynamic_sd_schedule_lookup`
  (vllm/v1/spec_decode/dynamic/utils.py, a module without imports) on the
  `num_speculative_tokens_per_batch_size` of `--speculative-config`; the dense lookup must give
  every batch size 1..MAX_BATCH the schedule's tokens.
- SGLang: `_load_adaptive_config`, `resolve_candidate_steps_from_config` and
  `AdaptiveSpeculativeParams` (sglang/srt/speculative/adaptive_spec_params.py) on the file the
  wrapper wrote, and the candidate check `_init_adaptive_speculative_params`
  (sglang/srt/arg_groups/speculative_hook.py, that one function taken from the file) with the
  argv's `--speculative-num-steps`; `get_steps_for_batch` must give every batch size the
  schedule's tokens, without CUDA graphs and with SGLang's capture sizes set.

adaptive_spec_params.py imports SGLang modules that need torch; the functions called here use
none of them but `log_info_on_rank0`, so those imports are given stand-ins (listed in STUBS).
0.5.23's `_init_adaptive_speculative_params` reads and writes server args through
`resolving_view` and `declare_resolution`; the stand-ins read and set plain attributes.

It prints one line per release and a few refusals the engines' code makes (showing the check is
live), and exits 1 on any disagreement. The output recorded is in docs/speculative-schedule.md.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import random
import sys
import tempfile
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import engine_parse_check  # beside this script: the rendered env both checks start from

REPO = Path(__file__).resolve().parents[1]
RELEASES = (("vllm", "0.27.1"), ("vllm", "0.34.0"), ("sglang", "0.5.17"), ("sglang", "0.5.23"))
MAX_BATCH = 300
RANDOM_SCHEDULES = 150
BASE = {
    "hp:model": "meta-llama/Llama-3.1-8B-Instruct",
    "aws:region": "us-east-1",
    "aws-native:region": "us-east-1",
    "hp:clusterName": "existing",
    "hp:speculativeAlgorithm": "eagle3",
    "hp:speculativeModel": "org/eagle3-draft",
}
HAND_SCHEDULES: list[list[dict[str, int]]] = [
    [
        {"from": 1, "to": 8, "tokens": 5},
        {"from": 9, "to": 32, "tokens": 2},
        {"from": 33, "tokens": 0},
    ],
    [{"from": 1, "tokens": 3}],
    [
        {"from": 1, "to": 1, "tokens": 4},
        {"from": 2, "to": 64, "tokens": 4},
        {"from": 65, "tokens": 1},
    ],
    [{"from": 1, "to": 16, "tokens": 2}],  # a closed last range: carried forward by both
]
STUBS: dict[str, dict[str, object]] = {
    "sglang.srt.arg_groups.overrides": {"resolved_view": None, "resolving_view": None},
    "sglang.srt.runtime_context": {"attn_dp_enabled_of": None},
    "sglang.srt.speculative.spec_info": {"SpeculativeAlgorithm": None},
    "sglang.srt.utils": {"log_info_on_rank0": lambda logger, message: None},
}


def _capture_sizes() -> list[int]:
    sys.path.insert(0, str(REPO))
    from mlcc.serving.schedule_rules import sglang_capture_sizes

    return sglang_capture_sizes(MAX_BATCH)


def random_schedules(count: int) -> list[list[dict[str, int]]]:
    """Valid schedules for hp:speculativeNumTokens 5 whose range ends are SGLang capture sizes
    (elsewhere SGLang's padding moves the boundary, which preview warns about)."""
    chooser = random.Random(20261206)
    sizes = _capture_sizes()
    schedules = []
    for _ in range(count):
        ends = sorted(chooser.sample(sizes[:-1], chooser.randint(0, 4)))
        firsts = [1, *(end + 1 for end in ends)]
        tokens = [chooser.randint(0, 5) for _ in firsts]
        tokens[chooser.randrange(len(tokens))] = 5  # SGLang starts at the most
        ranges = [
            {"from": first, "to": end, "tokens": k}
            for first, end, k in zip(firsts, ends, tokens, strict=False)
        ]
        last = {"from": firsts[-1], "tokens": tokens[-1]}
        schedules.append([*ranges, last])
    return schedules


def rendered_argv(engine: str, version: str, schedule: list[dict[str, int]]) -> list[str]:
    from mlcc import engine_contract as contract
    from mlcc.config.stack import parse

    most = max(r["tokens"] for r in schedule)
    values = {
        **BASE,
        "hp:engine": engine,
        "hp:engineVersion": version,
        "hp:speculativeNumTokens": str(max(most, 1)),
        "hp:speculativeSchedule": json.dumps(schedule),
    }
    env = engine_parse_check.rendered_env(parse(values, stack="dev").config)
    env |= {contract.ENGINE_ENV: engine, contract.ENGINE_VERSION_ENV: version}
    env["TMPDIR"] = tempfile.mkdtemp(prefix="mlcc-schedule-check-")
    argv: list[str] = serve_wrapper().build_argv(engine, env, [])
    return argv


def serve_wrapper() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("mlcc_serve", REPO / "images/serve/serve.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_file(name: str, path: Path) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def sglang_modules(root: Path) -> tuple[types.ModuleType, Callable[[Any], None]]:
    """adaptive_spec_params.py and `_init_adaptive_speculative_params` of one release."""
    for name, attributes in STUBS.items():
        stub = types.ModuleType(name)
        for attribute, value in attributes.items():
            setattr(stub, attribute, value)
        sys.modules[name] = stub
    params = load_file(
        "sglang.srt.speculative.adaptive_spec_params",
        root / "sglang/srt/speculative/adaptive_spec_params.py",
    )
    hook = root / "sglang/srt/arg_groups/speculative_hook.py"
    tree = ast.parse(hook.read_text())
    (function,) = [
        node
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name == "_init_adaptive_speculative_params"
    ]
    function.returns = None
    function.args.args[0].annotation = None

    def declare_resolution(args: Any, who: str, **values: object) -> None:
        for name, value in values.items():
            setattr(args, name, value)

    namespace: dict[str, Any] = {
        "resolving_view": lambda args: args,
        "declare_resolution": declare_resolution,
    }
    code = compile(ast.Module(body=[function], type_ignores=[]), str(hook), "exec")
    exec(code, namespace)
    init: Callable[[Any], None] = namespace["_init_adaptive_speculative_params"]
    return params, init


def flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def expected(schedule: list[dict[str, int]], batch: int) -> int:
    covering = [r for r in schedule if r["from"] <= batch]
    return covering[-1]["tokens"]


def check_vllm(utils: types.ModuleType, argv: list[str], schedule: list[dict[str, int]]) -> None:
    config = json.loads(flag(argv, "--speculative-config"))
    entries = config["num_speculative_tokens_per_batch_size"]
    utils.validate_and_normalize_dynamic_sd_schedule(entries)
    lookup = utils.build_dynamic_sd_schedule_lookup(
        entries, MAX_BATCH, config["num_speculative_tokens"]
    )
    wrong = [b for b in range(1, MAX_BATCH + 1) if lookup[b] != expected(schedule, b)]
    if wrong:
        raise AssertionError(f"batch sizes {wrong[:5]} differ: {entries}")


def check_sglang(
    modules: tuple[types.ModuleType, Callable[[Any], None]],
    argv: list[str],
    schedule: list[dict[str, int]],
) -> None:
    params, init = modules
    if "--speculative-adaptive" not in argv:
        raise AssertionError("no --speculative-adaptive")
    path = flag(argv, "--speculative-adaptive-config")
    steps = int(flag(argv, "--speculative-num-steps"))
    params._load_adaptive_config(path)
    params.resolve_candidate_steps_from_config(path)
    server_args = types.SimpleNamespace(
        speculative_adaptive_config=path,
        speculative_eagle_topk=int(flag(argv, "--speculative-eagle-topk")),
        speculative_num_steps=steps,
        speculative_num_draft_tokens=int(flag(argv, "--speculative-num-draft-tokens")),
    )
    init(server_args)
    adaptive = params.AdaptiveSpeculativeParams(initial_steps=steps, cfg_path=path)
    for graphs in (None, _capture_sizes()):
        adaptive.set_cuda_graph_bs(graphs)
        got = {b: adaptive.get_steps_for_batch(b) for b in range(1, MAX_BATCH + 1)}
        wrong = [b for b, k in got.items() if k != expected(schedule, b)]
        if wrong:
            raise AssertionError(f"batch sizes {wrong[:5]} differ (CUDA graphs {bool(graphs)})")


def live_refusals(src: Path) -> list[str]:
    """The engines' code refusing what the program refuses too (the checks are not no-ops)."""
    lines = []
    utils = load_file(
        "vllm_dynamic_utils", src / "vllm-0.34.0/vllm/v1/spec_decode/dynamic/utils.py"
    )
    for bad in ([[2, 8, 3]], [[1, 8, 3], [8, 9, 2]]):
        try:
            utils.validate_and_normalize_dynamic_sd_schedule(bad)
        except ValueError as error:
            lines.append(f"vllm 0.34.0 refuses {bad}: {error}")
    _, init = sglang_modules(src / "sglang-0.5.23")
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as file:
        json.dump({"1": {"candidate_steps": [2]}, "9": {"candidate_steps": [0]}}, file)
    try:
        init(types.SimpleNamespace(speculative_adaptive_config=file.name,
                                   speculative_eagle_topk=1, speculative_num_steps=5))  # fmt: skip
    except ValueError as error:
        lines.append(f"sglang 0.5.23 refuses steps 5: {error}")
    return lines


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    src = Path(argv[0])
    schedules = [*HAND_SCHEDULES, *random_schedules(RANDOM_SCHEDULES)]
    failures = 0
    for engine, version in RELEASES:
        root = src / f"{engine}-{version}"
        if engine == "vllm":
            utils = load_file(f"vllm_{version}", root / "vllm/v1/spec_decode/dynamic/utils.py")
        else:
            modules = sglang_modules(root)
        bad = []
        for schedule in schedules:
            command = rendered_argv(engine, version, schedule)
            try:
                if engine == "vllm":
                    check_vllm(utils, command, schedule)
                else:
                    check_sglang(modules, command, schedule)
            except (AssertionError, ValueError, KeyError) as error:
                bad.append(f"{json.dumps(schedule)}: {error}")
        failures += len(bad)
        print(f"{engine} {version}: {len(schedules) - len(bad)}/{len(schedules)} schedules ok")
        for line in bad[:10]:
            print(f"  {line}")
    for line in live_refusals(src):
        print(line)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
