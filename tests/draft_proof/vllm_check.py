"""vLLM's own argument parsing and config validation of a served draft, on the CPU.

    VLLM_TARGET_DEVICE=cpu PROOF_PYTHON tests/draft_proof/vllm_check.py < cases.json

Each case is `{"argv": [...], "target": DIR}`: the argv the serve wrapper execs (`vllm serve
MODEL ...`), its MODEL (a Hub id in the stack) replaced by the local directory the proof made,
as the Hub's download would be on the node. vLLM's `vllm serve` parser (`make_arg_parser`)
parses it, `EngineArgs.from_cli_args` takes the parsed namespace, and `create_engine_config()`
builds the whole VllmConfig: the target's ModelConfig, the SpeculativeConfig (which loads the
draft's config.json, recognises the speculators format and resolves its architecture), and
VllmConfig's own checks. One JSON line per case: what vLLM made of the draft, or its error.

One patch, declared: vLLM's CPU platform (vllm/platforms/cpu.py, `check_and_update_config`)
refuses x86 CPUs without triton-cpu ("vLLM on x86 CPUs requires Triton"), the kernels the CPU
model runner would run. Nothing runs here, so `vllm.triton_utils.HAS_TRITON` is set to True
before the check; every other line of the validation is vLLM's.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import vllm.triton_utils

vllm.triton_utils.HAS_TRITON = True

from vllm.engine.arg_utils import EngineArgs  # noqa: E402

try:  # the parser's home moved between releases (scripts/engine_parse_check.py)
    from vllm.entrypoints.common.cli_args import make_arg_parser
except ImportError:
    from vllm.entrypoints.openai.cli_args import make_arg_parser  # type: ignore[no-redef]
from vllm.utils.argparse_utils import FlexibleArgumentParser  # noqa: E402


def check(argv: list[str], target: str) -> dict[str, Any]:
    assert argv[:2] == ["vllm", "serve"], argv
    args = [target, *argv[3:]]  # MODEL is argv[2]
    try:
        parsed = make_arg_parser(FlexibleArgumentParser()).parse_args(args)
    except SystemExit as error:
        return {"ok": False, "error": f"argparse exit {error.code}"}
    # vllm/entrypoints/cli/serve.py, ServeSubcommand.cmd: the positional model_tag is the model
    if getattr(parsed, "model_tag", None) is not None:
        parsed.model = parsed.model_tag
    try:
        config = EngineArgs.from_cli_args(parsed).create_engine_config()
    except Exception as error:  # the refusal is the answer
        return {"ok": False, "error": f"{type(error).__name__}: {error}"}
    spec = config.speculative_config
    if spec is None:
        return {"ok": False, "error": "no speculative config"}
    draft = spec.draft_model_config
    hf = draft.hf_config
    return {
        "ok": True,
        "method": spec.method,
        "num_speculative_tokens": spec.num_speculative_tokens,
        "draft": draft.model,
        "draft_architectures": list(getattr(hf, "architectures", None) or []),
        "draft_hidden_size": getattr(hf, "hidden_size", None),
        "target": config.model_config.model,
        "target_hidden_size": config.model_config.get_hidden_size(),
    }


def main() -> None:
    for case in json.load(sys.stdin):
        print(json.dumps(check(case["argv"], case["target"])), flush=True)


if __name__ == "__main__":
    main()
