"""Engine flags: names, aliases and the rules on `hp:engineArgs` and SM_* variable names."""

from __future__ import annotations

import difflib
import functools
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from .flag_tables import RELEASE_TABLES, Bound
from .names import (
    ENGINES,
    PINNED_VERSIONS,
    SERVED_NAME_FLAG,
    SGLANG,
    VLLM,
    VLLM_CONFIG_FLAG,
    VLLM_SPEC_SHORTHANDS,
    release_table,
)
from .values import text_problem

# SGLang declares --mem-fraction-static with no bound (`A[Optional[float], ...]` in
# sglang/srt/server_args.py 0.5.17, sglang/srt/arg_groups/fields/schedule.py 0.5.23), but its KV
# pool is the free memory less the pre-load memory x (1 - fraction)
# (sglang/srt/mem_cache/kv_cache_configurator.py `_profile_available_bytes`): at 0 or below
# nothing is left and it raises "Loaded weights leave no GPU memory for the KV cache"; over 1 it
# counts on more memory than the GPU has. So the range is vLLM's own for the same setting.
_SGLANG_FRACTION = Bound(
    source="sglang/srt/mem_cache/kv_cache_configurator.py _profile_available_bytes",
    gt=0,
    le=1,
)
UNDECLARED_BOUNDS: Final = {SGLANG: {"mem-fraction-static": _SGLANG_FRACTION}, VLLM: {}}

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

# engine -> the long options of its pinned release ("max-model-len"), sorted; every release's
# own are in `engine_options(engine, version)`.
ENGINE_LONG_OPTIONS: Final = {engine: release_table(engine).long_options for engine in ENGINES}
# engine -> the pinned release's other option strings (short forms, aliases) -> the long option.
ENGINE_OPTION_ALIASES: Final = {engine: release_table(engine).aliases for engine in ENGINES}
# Every long option of every supported release of either engine.
_ALL_LONG_OPTIONS: Final = frozenset(
    name
    for releases in RELEASE_TABLES.values()
    for t in releases.values()
    for name in t.long_options
)

# The supported releases' flags that carry secrets; tests/engine_contract checks the list
# against every option of every release that looks secret.
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
    known: bool  # an option of the engine release (exactly, as alias, or negated)
    abbreviates: str | None = None  # argparse's unique-prefix match
    ambiguous: tuple[str, ...] = ()  # several options start with it: argparse refuses it
    negated: bool = False  # vLLM's --no-<flag> of a boolean flag


def _option_string(flag: str) -> str:
    """`--flag`, `-f` or a bare `flag` as argparse sees it: `_` as `-`, lowercase, no `=value`."""
    text = flag.strip().split("=", 1)[0]
    body = text.lstrip("-").replace("_", "-").lower()
    return ("-" if len(text) - len(text.lstrip("-")) == 1 else "--") + body


@functools.cache
def engine_options(engine: str, version: str | None = None) -> dict[str, str]:
    """Option string -> long name, for every option of a supported release (None: pinned)."""
    table = release_table(engine, version)
    return {f"--{name}": name for name in table.long_options} | table.aliases


def resolve_flag(engine: str, flag: str, version: str | None = None) -> FlagName:
    """The option a flag names, as the release's argparse resolves it (None: pinned).

    Exact option strings and aliases (`-tp`, SGLang `--model`), vLLM's `--no-` negation and
    `--speculative-config.<field>`, then argparse's unique-prefix rule (`--tp` is SGLang's
    `--tp-size`). A bare name (hp:engineArgs) is tried as a long option, then as a short one.
    """
    options = engine_options(engine, version)
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


def canonical_flag(engine: str, flag: str, version: str | None = None) -> str:
    """The one name of a flag (the release's long name when it knows it); used to compare."""
    return resolve_flag(engine, flag, version).key


def long_flag(engine: str, flag: str, version: str | None = None) -> str:
    """The flag as the release's long option spells it, negation kept: what hp:engineArgs
    writes as SM_<ENGINE>_<FLAG> (`tp` -> tensor-parallel-size, `No_Foo` -> no-foo)."""
    name = resolve_flag(engine, flag, version)
    return f"no-{name.key}" if name.negated else name.key


def is_speculative_flag(engine: str, key: str) -> bool:
    """A canonical flag that carries speculative settings (any engine's spelling)."""
    return key.startswith(("speculative", "spec-")) or key in VLLM_SPEC_SHORTHANDS


def is_secret_flag(flag: str) -> bool:
    """A flag whose value is a secret: one of the engines' own, or a name that looks like one."""
    name = _option_string(flag).lstrip("-")
    if name in SECRET_FLAGS:
        return True
    if name in _ALL_LONG_OPTIONS:
        return False  # --allow-credentials, --bucket-time-to-first-token
    words = name.split("-")
    return bool(_SECRET_ANYWHERE & set(words)) or words[-1] in _SECRET_LAST


def _did_you_mean(engine: str, body: str, version: str | None) -> str:
    close = difflib.get_close_matches(body, release_table(engine, version).long_options, n=1)
    return f"; did you mean {close[0]}?" if close else ""


def flag_name_problem(
    engine: str, flag: str, version: str | None = None, *, any_abbreviation: bool = True
) -> str | None:
    """The rules on a flag's name in hp:engineArgs and in SM_* variable names.

    Names the release (`version`, a supported one; None: pinned) does not know are refused.
    `any_abbreviation=False` (the wrapper) refuses only abbreviations of speculative flags.
    """
    name = resolve_flag(engine, flag, version)
    body = name.spelled.lstrip("-")
    if not _FLAG_NAME.fullmatch(body):
        return "is not a flag name (letters, digits and '-')"
    exact = f"--{body}" in engine_options(engine, version)  # a later release may adopt a name
    if body in OTHER_ENGINE_FLAGS[engine] and not exact:
        return f"is not a {engine} flag; {engine} calls it {OTHER_ENGINE_FLAGS[engine][body]}"
    if name.ambiguous:
        shown = ", ".join(name.ambiguous[:4])
        return f"is ambiguous for {engine} (it starts {shown}...); spell the flag out in full"
    short = engine_options(engine, version).get(f"-{body}")
    if not name.known and short is not None:
        return f"is only the short option -{body} of {engine}; use its long name {short}"
    if not name.known:
        release = f"{engine} {version or PINNED_VERSIONS[engine]}"
        return f"is not a flag of {release}{_did_you_mean(engine, body, version)}"
    return flag_spelling_problem(engine, flag, guarded_only=not any_abbreviation, version=version)


def flag_spelling_problem(
    engine: str, flag: str, *, guarded_only: bool = False, version: str | None = None
) -> str | None:
    """An abbreviation: argparse would take it, but it slips past checks that compare names.

    hp:engineArgs refuses every abbreviation; the wrapper (`guarded_only`) only those of
    speculative flags, whose settings it validates, so `--tp 4` in a container command works.
    """
    name = resolve_flag(engine, flag, version)
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
    key = canonical_flag(engine, flag, version)
    if _is_schedule_setting(key, value):
        return "a load-aware schedule goes in hp:speculativeSchedule, not in hp:engineArgs"
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
    return engine_arg_value_problem(value) or bound_problem(engine, key, value, version)


def bound_problem(engine: str, key: str, value: object, version: str | None = None) -> str | None:
    """Why `value` is outside the range the release declares for flag `key` (engine_flags.json
    value_bounds; UNDECLARED_BOUNDS for SGLang's memory fraction), or None."""
    table = release_table(engine, version)
    bound = dict(table.value_bounds).get(key) or UNDECLARED_BOUNDS[engine].get(key)
    if bound is None:
        return None
    number = None
    if not isinstance(value, bool | dict):
        try:
            number = float(str(value).strip())
        except ValueError:
            number = None
    if number is not None and bound.holds(number):
        return None
    return (
        f"must be a number {bound.shown()} for {engine} {table.version} ({bound.source}), "
        f"not {str(value)[:60]!r}; set it in that range or remove it for the engine's default"
    )


def _is_schedule_setting(key: str, value: object) -> bool:
    """SGLang's --speculative-adaptive[-config], or vLLM's per-batch-size schedule (as a
    dotted flag or a field of a --speculative-config map): engine_contract/schedule.py."""
    field = VLLM_CONFIG_FLAG + ".num-speculative-tokens-per-batch-size"
    names = value if key == VLLM_CONFIG_FLAG and isinstance(value, dict) else {}
    fields = {str(name).replace("-", "_") for name in names}
    return (
        key.startswith("speculative-adaptive")
        or key == field
        or "num_speculative_tokens_per_batch_size" in fields
    )


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


def duplicate_flag_problems(
    engine: str, flags: Iterable[str], version: str | None = None
) -> list[tuple[str, str]]:
    """(flag, message) for every flag that repeats an earlier one under another spelling."""
    first: dict[str, str] = {}
    problems = []
    for flag in flags:
        key = canonical_flag(engine, flag, version)
        if key in first:
            problems.append((flag, f"is the same flag as {first[key]}; set it once"))
        else:
            first[key] = flag
    return problems


def neutral_setting(engine: str, flag: str, version: str | None = None) -> str | None:
    """The NEUTRAL_SETTINGS key whose engine flag `flag` is (for "set it once" checks)."""
    key = canonical_flag(engine, flag, version)
    return next((name for name, flags in NEUTRAL_SETTINGS.items() if flags[engine] == key), None)
