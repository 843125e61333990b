"""TEMPORARY shim until the contract branch lands (replaced by the real module at merge)."""

from __future__ import annotations

_FLAG_NAME_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789-")
_RESERVED = {
    "model",
    "model-path",
    "port",
    "host",
    "tensor-parallel-size",
    "tp-size",
    "tp",
    "served-model-name",
}
_OTHER = {
    "sglang": {
        "max-model-len": "context-length",
        "gpu-memory-utilization": "mem-fraction-static",
        "max-num-seqs": "max-running-requests",
        "enforce-eager": "disable-cuda-graph",
    },
    "vllm": {
        "context-length": "max-model-len",
        "mem-fraction-static": "gpu-memory-utilization",
        "max-running-requests": "max-num-seqs",
        "disable-cuda-graph": "enforce-eager",
    },
}
NEUTRAL_SETTINGS = {"maxModelLen": {"vllm": "max-model-len", "sglang": "context-length"}}


def canonical_flag(engine: str, flag: str) -> str:
    return flag.strip().lstrip("-").replace("_", "-").lower()


def engine_arg_problem(engine: str, flag: str, value: object) -> str | None:
    name = canonical_flag(engine, flag)
    if not name or not set(name) <= _FLAG_NAME_CHARS:
        return "is not a flag name (letters, digits and '-')"
    if name.startswith("speculative"):
        return "speculative settings go in the hp:speculative* keys, not in hp:engineArgs"
    if name in _RESERVED:
        return "is set by the program from the other hp:* keys; remove it from hp:engineArgs"
    if name in _OTHER[engine]:
        return f"is not a {engine} flag; {engine} calls it {_OTHER[engine][name]}"
    if value is None or isinstance(value, list) or (isinstance(value, str) and not value.strip()):
        return "needs a string, number, boolean or map value"
    return None


def model_id_problem(value: str) -> str | None:
    import re

    if (
        not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}", value)
        or ".." in value
        or "--" in value
    ):
        return f"must be a Hugging Face model id (org/name), got {value!r}"
    return None
