"""Engine flags: names, aliases and the rules on `hp:engineArgs` and SM_* variable names."""

from __future__ import annotations

import difflib
import functools
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from .flag_tables import ENGINE_LONG_OPTIONS, ENGINE_OPTION_ALIASES
from .names import ENGINES, PINNED_VERSIONS, SERVED_NAME_FLAG, SGLANG, VLLM, VLLM_SPEC_SHORTHANDS
from .values import text_problem

_FLAG_NAME = re.compile(r"[a-z0-9][a-z0-9.-]{0,127}")

# Flags the program itself owns; setting them through hp:engineArgs would fight the program.
# The other engine's spellings are listed too: "the program sets it" is the useful answer.
_OWNED_BY_BOTH = frozenset({"port", "host", SERVED_NAME_FLAG})
OWNED_FLAGS: Final = {
    VLLM: _OWNED_BY_BOTH | {"model", "model-path", "tensor-parallel-size", "tp-size"},
    SGLANG: _OWNED_BY_BOTH | {"model-path", "tp-size"},
}

# Common flags under the other engine's name: forwarding them stops the engine at start-up
# with "unrecognized arguments", so they are refused with the right name.
OTHER_ENGINE_FLAGS: Final[dict[str, dict[str, str]]] = {
    SGLANG: {
        "max-model-len": "context-length",
        "gpu-memory-utilization": "mem-fraction-static",
        "max-num-seqs": "max-running-requests",
        "enforce-eager": "disable-cuda-graph",
        "enable-prefix-caching": "disable-radix-cache (inverted)",
        "seed": "random-seed",
    },
    VLLM: {
        "context-length": "max-model-len",
        "mem-fraction-static": "gpu-memory-utilization",
        "max-running-requests": "max-num-seqs",
        "disable-cuda-graph": "enforce-eager",
        "disable-radix-cache": "no-enable-prefix-caching",
        "random-seed": "seed",
    },
}

# Engine-neutral serving settings with the same meaning in both engines, and each engine's flag.
# hp:maxModelLen: the longest prompt + output a request may have (vLLM --max-model-len, SGLang
# --context-length). GPU memory fractions are NOT neutral: vLLM's covers everything, SGLang's
# only the static weights + KV pool.
NEUTRAL_SETTINGS: Final[dict[str, dict[str, str]]] = {
    "maxModelLen": {VLLM: "max-model-len", SGLANG: "context-length"},
}

# The pinned engines' flags that carry secrets; tests/test_engine_contract.py checks the list
# against every option of ENGINE_LONG_OPTIONS that looks secret.
SECRET_FLAGS: Final = frozenset({"api-key", "hf-token", "admin-api-key", "ssl-keyfile-password"})
# Words that make another flag name look secret.
_SECRET_ANYWHERE: Final = frozenset(
    {"secret", "secrets", "password", "passwd", "apikey", "credential", "credentials"}
)
_SECRET_LAST: Final = frozenset({"token", "key"})  # not --return-tokens-as-token-ids


@dataclass(frozen=True)
class FlagName:
    """How the engine's argparse reads one option string (see `resolve_flag`)."""

    spelled: str  # the option string as given, normalised: "--max-model-len", "-tp"
    key: str  # the long name it stands for, or its own name when unknown
    known: bool  # an option of the pinned engine version (exactly, as alias, or negated)
    abbreviates: str | None = None  # argparse's unique-prefix match
    ambiguous: tuple[str, ...] = ()  # several options start with it: argparse refuses it
    negated: bool = False  # vLLM's --no-<flag> of a boolean flag


def _option_string(flag: str) -> str:
    """`--flag`, `-f` or a bare `flag` as argparse sees it: `_` as `-`, lowercase, no `=value`."""
    text = flag.strip().split("=", 1)[0]
    body = text.lstrip("-").replace("_", "-").lower()
    return ("-" if len(text) - len(text.lstrip("-")) == 1 else "--") + body


@functools.cache
def engine_options(engine: str) -> dict[str, str]:
    """Option string -> long name, for every option of the pinned engine version."""
    longs = {f"--{name}": name for name in ENGINE_LONG_OPTIONS[engine]}
    return longs | ENGINE_OPTION_ALIASES[engine]


def resolve_flag(engine: str, flag: str) -> FlagName:
    """The option a flag names, as the pinned engine's argparse resolves it.

    Exact option strings and aliases (`-tp`, SGLang `--model`), vLLM's `--no-` negation and
    `--speculative-config.<field>`, then argparse's unique-prefix rule (`--tp` is SGLang's
    `--tp-size`). A bare name (hp:engineArgs) is tried as a long option, then as a short one.
    """
    options = engine_options(engine)
    spelled = _option_string(flag)
    body = spelled.lstrip("-")
    candidates = [spelled] if flag.strip().startswith("-") else [spelled, f"-{body}"]
    for option in candidates:
        if option in options:
            return FlagName(spelled, options[option], True)
    base, dot, field = body.partition(".")
    negatable = engine == VLLM  # vLLM's boolean flags are BooleanOptionalAction; SGLang's not
    if negatable and body.startswith("no-") and f"--{body[3:]}" in options:
        return FlagName(spelled, options[f"--{body[3:]}"], True, negated=True)
    if dot and f"--{base}" in options:
        return FlagName(spelled, f"{options[f'--{base}']}.{field}", True)
    if not spelled.startswith("--") or not body:
        return FlagName(spelled, body, False)
    matches = sorted({key for option, key in options.items() if option.startswith(spelled)})
    if len(matches) == 1:
        return FlagName(spelled, matches[0], True, abbreviates=matches[0])
    return FlagName(spelled, body, False, ambiguous=tuple(matches))


def canonical_flag(engine: str, flag: str) -> str:
    """The one name of a flag (the engine's long name when it knows it); used to compare."""
    return resolve_flag(engine, flag).key


def long_flag(engine: str, flag: str) -> str:
    """The flag as the engine's long option spells it, negation kept: what hp:engineArgs
    writes as SM_<ENGINE>_<FLAG> (`tp` -> tensor-parallel-size, `No_Foo` -> no-foo)."""
    name = resolve_flag(engine, flag)
    return f"no-{name.key}" if name.negated else name.key


def is_speculative_flag(engine: str, key: str) -> bool:
    """A canonical flag that carries speculative settings (any engine's spelling)."""
    return key.startswith(("speculative", "spec-")) or key in VLLM_SPEC_SHORTHANDS


def is_secret_flag(flag: str) -> bool:
    """A flag whose value is a secret: one of the engines' own, or a name that looks like one
    (for versions whose flags the contract does not list)."""
    name = _option_string(flag).lstrip("-")
    if name in SECRET_FLAGS:
        return True
    if any(name in ENGINE_LONG_OPTIONS[engine] for engine in ENGINES):
        return False  # --allow-credentials, --bucket-time-to-first-token
    words = name.split("-")
    return bool(_SECRET_ANYWHERE & set(words)) or words[-1] in _SECRET_LAST


def _did_you_mean(engine: str, body: str) -> str:
    close = difflib.get_close_matches(body, ENGINE_LONG_OPTIONS[engine], n=1)
    return f"; did you mean {close[0]}?" if close else ""


def flag_name_problem(
    engine: str, flag: str, version: str | None = None, *, any_abbreviation: bool = True
) -> str | None:
    """The rules on a flag's name in hp:engineArgs and in SM_* variable names.

    Names the pinned engine version does not know are refused; for another `version` (a
    prebuilt image) only the name's shape and the other engine's names are checked.
    `any_abbreviation=False` (the wrapper) refuses only abbreviations of speculative flags.
    """
    name = resolve_flag(engine, flag)
    body = name.spelled.lstrip("-")
    if not _FLAG_NAME.fullmatch(body):
        return "is not a flag name (letters, digits and '-')"
    if body in OTHER_ENGINE_FLAGS[engine]:
        return f"is not a {engine} flag; {engine} calls it {OTHER_ENGINE_FLAGS[engine][body]}"
    if version not in (None, PINNED_VERSIONS[engine]):
        return None
    if name.ambiguous:
        shown = ", ".join(name.ambiguous[:4])
        return f"is ambiguous for {engine} (it starts {shown}...); spell the flag out in full"
    short = engine_options(engine).get(f"-{body}")
    if not name.known and short is not None:
        return f"is only the short option -{body} of {engine}; use its long name {short}"
    if not name.known:
        pinned = f"{engine} {PINNED_VERSIONS[engine]}"
        return f"is not a flag of {pinned}{_did_you_mean(engine, body)}"
    return flag_spelling_problem(engine, flag, guarded_only=not any_abbreviation)


def flag_spelling_problem(engine: str, flag: str, *, guarded_only: bool = False) -> str | None:
    """An abbreviation: argparse would take it, but it slips past checks that compare names.

    hp:engineArgs refuses every abbreviation; the wrapper (`guarded_only`) only those of
    speculative flags, whose settings it validates, so `--tp 4` in a container command works.
    """
    name = resolve_flag(engine, flag)
    full = name.abbreviates
    if full is None or (guarded_only and not is_speculative_flag(engine, full)):
        return None
    return f"abbreviates --{full}; spell the flag out in full"


def engine_arg_problem(
    engine: str, flag: str, value: object, version: str | None = None
) -> str | None:
    """Why hp:engineArgs may not carry `flag: value` for `engine`, or None.

    One sentence naming what to change: not a flag name, not a flag of the engine (with a
    did-you-mean), an abbreviation, the other engine's name, a speculative flag (hp:speculative*
    keys), a flag the program owns, a secret (Pulumi secret + Kubernetes Secret), or a value
    that is not one string, number, boolean or map. `version`: hp:engineVersion (None: pinned).
    """
    key = canonical_flag(engine, flag)
    if is_speculative_flag(engine, key):
        return "speculative settings go in the hp:speculative* keys, not in hp:engineArgs"
    if key in OWNED_FLAGS[engine]:
        return "is set by the program from the other hp:* keys; remove it from hp:engineArgs"
    problem = flag_name_problem(engine, flag, version)
    if problem is not None:
        return problem
    if is_secret_flag(key):
        return (
            "carries a secret, which hp:engineArgs would store in plain text in the manifest; "
            "set it as a Pulumi secret that the program puts in a Kubernetes Secret"
        )
    return engine_arg_value_problem(value)


def engine_arg_value_problem(value: object) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return "has no value; give one, `true` for a bare flag, or remove the key"
    if isinstance(value, list | tuple):
        return "takes one value, not a list; give a string, number, boolean or map"
    if isinstance(value, float) and not math.isfinite(value):
        return f"must be a finite number, not {value}"
    if isinstance(value, str):
        problem = text_problem(value)
        return None if problem is None else f"value {problem}"
    if not isinstance(value, bool | int | float | dict):
        return "needs a string, number, boolean or map value"
    return None


def duplicate_flag_problems(engine: str, flags: Iterable[str]) -> list[tuple[str, str]]:
    """(flag, message) for every flag that repeats an earlier one under another spelling."""
    first: dict[str, str] = {}
    problems = []
    for flag in flags:
        key = canonical_flag(engine, flag)
        if key in first:
            problems.append((flag, f"is the same flag as {first[key]}; set it once"))
        else:
            first[key] = flag
    return problems


def neutral_setting(engine: str, flag: str) -> str | None:
    """The NEUTRAL_SETTINGS key whose engine flag `flag` is (for "set it once" checks)."""
    key = canonical_flag(engine, flag)
    return next((name for name, flags in NEUTRAL_SETTINGS.items() if flags[engine] == key), None)
