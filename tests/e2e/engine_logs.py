"""The start log a worker container would print, for the operator stand-in to serve as its log.

The container's command line comes from the project's own serve wrapper
(images/serve/serve.py `build_argv`, loaded by tests/serve_harness.py): the pod's env and args
in, the engine argv out, exactly as the image would exec it. Only the engine's side is written
here: what vLLM or SGLang print for that argv, in the formats of tests/deploy/logs/ (the ones
`mlcc verify` and the deploy wait parse): the wrapper's `mlcc-serve: exec:` line, vLLM's
`non-default args` and engine config line (`speculative_config=SpeculativeConfig(...)` or
`None`), SGLang's `server_args={...}`, the "serving" line and, with speculation on, one
acceptance report.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from serve_harness import serve

from mlcc import engine_contract as contract

VLLM_ACCEPTANCE = (
    "SpecDecoding metrics: Mean acceptance length: 2.41, Accepted throughput: 22.70 tokens/s, "
    "Drafted throughput: 80.50 tokens/s, Accepted: 227 tokens, Drafted: 805 tokens, "
    "Avg Draft acceptance rate: 28.2%"
)
SGLANG_ACCEPTANCE = (
    "Decode batch, #running-req: 3, #token: 2315, token usage: 0.02, accept len: 3.12, "
    "accept rate: 0.52, cuda graph: True, gen throughput (token/s): 412.55, #queue-req: 0,"
)
# SGLang rewrites NEXTN to EAGLE before it logs its server_args
# (tests/deploy/logs/sglang-0.5.23-nextn-deepseek.log).
SGLANG_REWRITES = {"NEXTN": "EAGLE"}


def engine_of(env: Mapping[str, str]) -> str:
    """The image's engine: MLCC_ENGINE when the pod sets it, else the one whose model variable
    the program rendered (it renders only the selected engine's settings)."""
    given = env.get(contract.ENGINE_ENV, "").strip().lower()
    if given:
        return given
    for engine, variable in contract.MODEL_VARIABLES.items():
        if variable in env:
            return str(engine)
    raise ValueError(f"no {contract.ENGINE_ENV} and no model variable in the pod's env")


def without_speculation(env: Mapping[str, str], engine: str) -> dict[str, str]:
    """The env with the engine's speculative variables gone: what an engine that never got
    them was started with."""
    return {k: v for k, v in env.items() if not contract.is_speculative_variable(engine, k)}


def command(env: Mapping[str, str], args: Sequence[str] = ()) -> list[str]:
    """The engine argv the serve wrapper builds for this env; serve.Refusal when it refuses."""
    engine = engine_of(env)
    argv: list[str] = serve.build_argv(engine, dict(env), list(args))
    return argv


def wrapper_line(argv: Sequence[str]) -> str:
    return f"{serve.PROGRAM}: exec: {shlex.join(serve.redacted(list(argv)))}"


def start_log(engine: str, argv: Sequence[str], version: str | None = None) -> str:
    """What the engine prints from its start to serving its first requests."""
    release = version or contract.PINNED_VERSIONS[engine]
    lines = _vllm_lines(argv, release) if engine == contract.VLLM else _sglang_lines(argv)
    return "\n".join([wrapper_line(argv), *lines]) + "\n"


def crash_log(engine: str, argv: Sequence[str], error_line: str) -> str:
    """A run that died at start: the first lines the engine printed, then its error."""
    head = start_log(engine, argv).splitlines()[:3]
    return "\n".join([*head, error_line]) + "\n"


def options(argv: Sequence[str], positional_model: bool) -> dict[str, object]:
    """The flags of an engine argv by the engine's own names (`--tp-size 4` -> tp_size: 4; a
    bare flag -> True), the model first."""
    start = 2 if argv[:2] == ["vllm", "serve"] else 3
    tokens = list(argv[start:])
    found: dict[str, object] = {}
    if positional_model and tokens and not tokens[0].startswith("-"):
        found["model"] = tokens.pop(0)
    index = 0
    while index < len(tokens):
        name = tokens[index].removeprefix("--").split("=", 1)[0].replace("-", "_")
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        if "=" in tokens[index]:
            found[name] = _value(tokens[index].split("=", 1)[1])
        elif following is not None and not following.startswith("--"):
            found[name] = _value(following)
            index += 1
        else:
            found[name] = True
        index += 1
    return found


def _value(text: str) -> object:
    """An argument as the engine's parser types it: numbers and JSON objects, else text."""
    if text.isdigit():
        return int(text)
    if text.startswith("{"):
        return json.loads(text)
    return text


def _vllm_time() -> str:
    return datetime.now(UTC).strftime("%m-%d %H:%M:%S")


def _vllm_lines(argv: Sequence[str], version: str) -> list[str]:
    given = options(argv, positional_model=True)
    model = str(given.get("model"))
    speculative = given.get("speculative_config")
    shown = {k: v for k, v in given.items() if k != "host"}
    if "served_model_name" in shown:
        shown["served_model_name"] = [shown["served_model_name"]]
    when = _vllm_time()
    lines = [
        f"INFO {when} [api_server.py:1896] vLLM API server version {version}",
        f"INFO {when} [utils.py:328] non-default args: {shown!r}",
        f"(EngineCore_DP0 pid=311) INFO {when} [core.py:77] Initializing a V1 LLM engine "
        f"(v{version}) with config: model='{model}', "
        f"speculative_config={_vllm_speculative(speculative)}, tokenizer='{model}', "
        "skip_tokenizer_init=False, tokenizer_mode=auto",
        f"INFO {when} [api_server.py:1971] Starting vLLM API server 0 on "
        f"http://0.0.0.0:{given.get('port', 8080)}",
    ]
    if isinstance(speculative, dict):
        lines.append(f"INFO {when} [metrics.py:96] {VLLM_ACCEPTANCE}")
    return lines


def _vllm_speculative(config: object) -> str:
    if not isinstance(config, dict):
        return "None"
    fields = [f"method='{config.get('method')}'"]
    if config.get("model"):
        fields.append(f"model='{config['model']}'")
    if "num_speculative_tokens" in config:
        fields.append(f"num_spec_tokens={config['num_speculative_tokens']}")
    return f"SpeculativeConfig({', '.join(fields)})"


def _sglang_time(worker: str = "") -> str:
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S")
    return f"[{stamp}{' ' + worker if worker else ''}]"


def _sglang_lines(argv: Sequence[str]) -> list[str]:
    given = options(argv, positional_model=False)
    algorithm = given.get("speculative_algorithm")
    if isinstance(algorithm, str):
        algorithm = SGLANG_REWRITES.get(algorithm.upper(), algorithm.upper())
    server_args = {
        "model_path": given.get("model_path"),
        "tokenizer_path": given.get("model_path"),
        "host": given.get("host", "0.0.0.0"),
        "port": given.get("port", 8080),
        "tp_size": given.get("tp_size", 1),
        "speculative_algorithm": algorithm,
        "speculative_draft_model_path": given.get("speculative_draft_model_path"),
        "speculative_num_steps": given.get("speculative_num_steps"),
        "speculative_eagle_topk": given.get("speculative_eagle_topk"),
        "speculative_num_draft_tokens": given.get("speculative_num_draft_tokens"),
        "enable_metrics": given.get("enable_metrics", False),
    }
    lines = [
        f"{_sglang_time()} Running command: exec {shlex.join(argv)}",
        f"{_sglang_time()} server_args={server_args!r}",
        f"{_sglang_time()} The server is fired up and ready to roll!",
    ]
    if algorithm is not None:
        lines.append(f"{_sglang_time('TP0')} {SGLANG_ACCEPTANCE}")
    return lines
