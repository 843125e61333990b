"""Does the engine's log prove speculative decoding? The engine-log checks of `mlcc verify` and
the deploy wait.

Pure: each function takes a worker container's log as text and returns a `Check`.
- vLLM's engine core logs its config: `speculative_config=SpeculativeConfig(method='eagle3', ...`
  or `speculative_config=None` when speculation is off;
- SGLang logs `server_args=` with the resolved `speculative_algorithm` (a dict in 0.5.23,
  `ServerArgs(...)` before);
- acceptance metrics, once requests were served: vLLM `SpecDecoding metrics: Mean acceptance
  length: X`, SGLang `accept len: X`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from mlcc import engine_contract as contract
from mlcc.deploy.check import Check
from mlcc.deploy.expectation import Expectation
from mlcc.serving.engines import Engine

_VLLM_ENGINE_CONFIG = re.compile(
    r"speculative_config=(?:(?P<none>None)|SpeculativeConfig\((?P<fields>[^)]*)\))"
)
_VLLM_FIELD = re.compile(r"(?P<key>\w+)=(?:'(?P<quoted>[^']*)'|(?P<bare>[^,\s)]+))")
_SGLANG_SERVER_ARGS = re.compile(r"server_args=")
# `'speculative_algorithm': 'EAGLE3'` (0.5.23 dict) or `speculative_algorithm='EAGLE3'` (older).
_SGLANG_ALGORITHM = re.compile(
    r"""['"]?speculative_algorithm['"]?\s*[:=]\s*(?:None|'(?P<single>[^']*)'|"(?P<double>[^"]*)")"""
)
_SGLANG_TRIPLE = re.compile(
    r"""['"]?speculative_(?P<key>num_steps|eagle_topk|num_draft_tokens)['"]?\s*[:=]\s*(?P<value>None|\d+)"""
)
_VLLM_ACCEPTANCE = re.compile(
    r"SpecDecoding metrics:.*?Mean acceptance length: (?P<length>[\d.]+)"
    r"(?:.*?Avg Draft acceptance rate: (?P<rate>[\d.]+%))?"
)
_SGLANG_ACCEPTANCE = re.compile(
    r"accept len: (?P<length>[\d.]+)(?:, accept rate: (?P<rate>[\d.]+))?"
)


def check_engine_log(check_name: str, log: str, expected: Expectation) -> Check:
    if expected.engine is Engine.VLLM:
        return _check_vllm_log(check_name, log, expected)
    return _check_sglang_log(check_name, log, expected)


def engine_config_logged(log: str, engine: Engine) -> bool:
    """Whether the engine has logged the resolved config that `check_engine_log` reads."""
    if engine is Engine.VLLM:
        return _VLLM_ENGINE_CONFIG.search(log) is not None
    lines = log.splitlines()
    return any(_SGLANG_SERVER_ARGS.search(x) and _SGLANG_ALGORITHM.search(x) for x in lines)


def _last_match(pattern: re.Pattern[str], lines: Iterable[str]) -> tuple[str, re.Match[str]] | None:
    """The last line with a match, and that match (an engine restarted in-process logs twice)."""
    found = None
    for line in lines:
        for match in pattern.finditer(line):
            found = (line, match)
    return found


def _check_vllm_log(check_name: str, log: str, expected: Expectation) -> Check:
    found = _last_match(_VLLM_ENGINE_CONFIG, log.splitlines())
    if found is None:
        return Check(
            check_name,
            False,
            "no vLLM engine config line (`speculative_config=`) in the log; the engine has not "
            "started yet, or the log was rotated",
        )
    match = found[1]
    if match["none"]:
        return _off_in_log(check_name, expected, "speculative_config=None")
    fields = {
        m["key"]: m["quoted"] if m["quoted"] is not None else m["bare"]
        for m in _VLLM_FIELD.finditer(match["fields"])
    }
    method = fields.get("method")
    shown = ", ".join(
        f"{k}={fields[k]}" for k in ("method", "model", "num_spec_tokens") if k in fields
    )
    # SpeculativeConfig.__repr__ logs `model=` draft_model_config.model: the path it loaded
    # (vllm/config/speculative.py, vLLM 0.34.0 wheel; the same line in earlier releases).
    copied = expected.copied_draft
    if copied and method == expected.engine_algorithm and fields.get("model") != copied:
        why = f"the engine loaded draft {fields.get('model')}, not the copied head at {copied}"
        return Check(check_name, False, f"{why}: {shown}")
    return _on_in_log(check_name, expected, method, method == expected.engine_algorithm, shown)


def _check_sglang_log(check_name: str, log: str, expected: Expectation) -> Check:
    args_lines = [line for line in log.splitlines() if _SGLANG_SERVER_ARGS.search(line)]
    found = _last_match(_SGLANG_ALGORITHM, args_lines)
    if found is None:
        return Check(
            check_name,
            False,
            "no SGLang `server_args=` line with speculative_algorithm in the log; the server has "
            "not started yet, or the log was rotated",
        )
    line, match = found
    algorithm = match["single"] if match["single"] is not None else match["double"]
    if algorithm is None or algorithm.upper() == "NONE":
        return _off_in_log(check_name, expected, "speculative_algorithm=None")
    triple = {m["key"]: m["value"] for m in _SGLANG_TRIPLE.finditer(line)}
    shown = ", ".join(
        [f"speculative_algorithm={algorithm}", *(f"{k}={v}" for k, v in triple.items())]
    )
    want = (expected.engine_algorithm or "").upper()
    accepted = contract.sglang_logged_names(want)
    return _on_in_log(check_name, expected, algorithm, algorithm.upper() in accepted, shown)


def _off_in_log(check_name: str, expected: Expectation, evidence: str) -> Check:
    if not expected.speculation_on:
        return Check(check_name, True, f"{evidence}: speculation is off, as configured")
    return Check(
        check_name,
        False,
        f"{evidence}: speculation is OFF although the stack asks for {expected.algorithm} "
        f"({expected.engine_algorithm}); the engine did not receive its speculative settings",
    )


def _on_in_log(
    check_name: str, expected: Expectation, running: str | None, matches: bool, shown: str
) -> Check:
    if not expected.speculation_on:
        return Check(
            check_name,
            False,
            f"speculation is ON ({shown}) although hp:speculativeAlgorithm is not set",
        )
    if not matches:
        return Check(
            check_name,
            False,
            f"the engine runs {running}, expected {expected.engine_algorithm} "
            f"({expected.algorithm}): {shown}",
        )
    return Check(check_name, True, f"speculation is on: {shown}")


def check_acceptance(check_name: str, log: str, engine: Engine) -> Check | None:
    """The acceptance metrics, when requests have been served; None before any.

    Fails only when every report shows an acceptance length of 1.0 or less: drafts are never
    accepted, e.g. an EAGLE-3 head run as EAGLE.
    """
    pattern = _VLLM_ACCEPTANCE if engine is Engine.VLLM else _SGLANG_ACCEPTANCE
    reports = [m for line in log.splitlines() for m in pattern.finditer(line)]
    if not reports:
        return None
    last = reports[-1]
    rate = f", acceptance rate {last['rate']}" if last["rate"] else ""
    summary = f"mean acceptance length {last['length']}{rate} (last of {len(reports)} reports)"
    if all(float(m["length"]) <= 1.0 for m in reports):
        return Check(check_name, False, f"{summary}: no draft token was ever accepted")
    return Check(check_name, True, summary)
