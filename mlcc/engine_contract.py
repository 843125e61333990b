"""The engine contract: one stdlib-only module shared by the program and the serve images.

It defines what the Pulumi program writes into the container environment and what the serve
wrapper reads back (docs/images.md): the engines and their pinned versions, the SM_<ENGINE>_*
variable names, the speculative names each engine version accepts, the user-facing algorithm
table, the engine flag rules (`hp:engineArgs` at preview, the wrapper at start-up) and the
validation of the speculative settings found in a container environment.

It imports nothing outside the standard library and nothing from `mlcc`: the image build copies
this very file next to serve.py (images/*/Dockerfile), where it runs on the engine image's own
Python. Problems are one sentence naming what to change; nothing here raises anything but
`EnvProblem`, whatever the input.
"""

from __future__ import annotations

import difflib
import functools
import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

# --- engines, versions, variable names --------------------------------------------------------

VLLM: Final = "vllm"
SGLANG: Final = "sglang"
ENGINES: Final = (VLLM, SGLANG)

# The versions in the current AWS Deep Learning Containers: the same manifest then behaves the
# same on our images and on stock DLC images.
PINNED_VERSIONS: Final = {VLLM: "0.27.1", SGLANG: "0.5.17"}
BASE_IMAGE_REPOSITORIES: Final = {VLLM: "vllm/vllm-openai", SGLANG: "lmsysorg/sglang"}

# The AWS DLC convention: SM_VLLM_FOO_BAR -> --foo-bar. It cannot collide with the engines'
# own VLLM_* / SGLANG_* environment variables.
ENV_PREFIXES: Final = {VLLM: "SM_VLLM_", SGLANG: "SM_SGLANG_"}
# Both OpenAI-compatible servers answer GET /health with 200 once the model is loaded.
HEALTH_CHECK_PATHS: Final = {VLLM: "/health", SGLANG: "/health"}

ENGINE_ENV: Final = "MLCC_ENGINE"
ENGINE_VERSION_ENV: Final = "MLCC_ENGINE_VERSION"
ALGORITHM_ENV: Final = "HP_SPECULATIVE_ALGORITHM"
# Set by the HyperPod operator (and the DLC convention) for Hub models, in this order.
HUB_MODEL_ENVS: Final = ("HF_MODEL_ID", "MODEL_ID")

MODEL_FLAGS: Final = {VLLM: "model", SGLANG: "model-path"}
SERVED_NAME_FLAG: Final = "served-model-name"
TENSOR_PARALLEL_FLAGS: Final = {VLLM: "tensor-parallel-size", SGLANG: "tp-size"}


def env_variable(engine: str, flag: str) -> str:
    """The DLC variable for a flag: (vllm, max-model-len) -> SM_VLLM_MAX_MODEL_LEN."""
    return ENV_PREFIXES[engine] + flag.lstrip("-").upper().replace("-", "_")


MODEL_VARIABLES: Final = {engine: env_variable(engine, MODEL_FLAGS[engine]) for engine in ENGINES}


def engine_problem(name: str | None) -> str | None:
    """Why `name` (MLCC_ENGINE, hp:engine) is not an engine; case and whitespace do not matter."""
    choices = " or ".join(ENGINES)
    if name is None:
        return f"is not set; set it to {choices}"
    if name.strip().lower() in ENGINES:
        return None
    return f"must be {choices}, not {_shown(name)}"


# --- speculative names per engine version (the engines' released sources) ----------------------

_VLLM_COMMON = frozenset(
    {"eagle", "eagle3", "draft_model", "dflash", "mtp", "dspark", "ngram", "ngram_gpu", "suffix"}
    | {"extract_hidden_states"}
)
_SGLANG_0_5_2 = frozenset({"EAGLE", "EAGLE3", "NEXTN", "STANDALONE"})
_SGLANG_0_5_3 = _SGLANG_0_5_2 | {"NGRAM"}
_SGLANG_0_5_12 = _SGLANG_0_5_3 | {"DFLASH", "FROZEN_KV_MTP"}
_SGLANG_0_5_17 = _SGLANG_0_5_12 | {"DSPARK"}

# engine -> version -> the vLLM `method` / SGLang `--speculative-algorithm` names it accepts.
SPECULATIVE_NAMES: Final[dict[str, dict[str, frozenset[str]]]] = {
    VLLM: {
        "0.27.1": _VLLM_COMMON | {"medusa", "mlp_speculator", "custom_class"},
        "0.34.0": _VLLM_COMMON,
    },
    SGLANG: {
        "0.5.2": _SGLANG_0_5_2,
        "0.5.3": _SGLANG_0_5_3,
        "0.5.8": _SGLANG_0_5_3,
        "0.5.12": _SGLANG_0_5_12,
        "0.5.17": _SGLANG_0_5_17,
        "0.5.23": _SGLANG_0_5_17 | {"UNO"},
    },
}

# vLLM methods that load a separate draft and fail without `model`.
VLLM_METHODS_NEEDING_MODEL: Final = frozenset(
    {"eagle", "eagle3", "draft_model", "dflash", "medusa", "mlp_speculator", "custom_class"}
)
# vLLM methods with no draft config to take n_predict from.
VLLM_METHODS_NEEDING_TOKENS: Final = frozenset({"ngram", "ngram_gpu", "mtp"})
# custom_class takes a dotted Python path as `model`, not a checkpoint.
_VLLM_MODEL_IS_CLASS: Final = frozenset({"custom_class"})
# vLLM's shorthand forms of SpeculativeConfig fields.
VLLM_SPEC_SHORTHANDS: Final = {
    "spec-method": "method",
    "spec-model": "model",
    "spec-tokens": "num_speculative_tokens",
}
# SGLang falls back to the target as its own draft for these, which crashes.
SGLANG_ALGORITHMS_NEEDING_DRAFT: Final = frozenset({"EAGLE", "EAGLE3", "STANDALONE"})
SGLANG_EAGLE_FAMILY: Final = frozenset({"EAGLE", "EAGLE3", "NEXTN", "STANDALONE"})
SGLANG_TRIPLE: Final = (
    "speculative-num-steps",
    "speculative-eagle-topk",
    "speculative-num-draft-tokens",
)
SGLANG_DRAFT_FLAG: Final = "speculative-draft-model-path"
SGLANG_ALGORITHM_FLAG: Final = "speculative-algorithm"
VLLM_CONFIG_FLAG: Final = "speculative-config"


def accepted_names(engine: str, version: str | None) -> frozenset[str] | None:
    """The names an engine version accepts (pinned when None); None for an unknown version."""
    return SPECULATIVE_NAMES[engine].get(version or PINNED_VERSIONS[engine])


# --- the user-facing algorithm table ---------------------------------------------------------


@dataclass(frozen=True)
class Algorithm:
    """One user-facing algorithm and what each engine must receive for it."""

    name: str
    vllm_method: str
    sglang_algorithm: str
    needs_draft: bool
    uses_topk: bool
    default_topk: int
    summary: str

    def engine_algorithm(self, engine: str) -> str:
        """The vLLM `method` or the SGLang `--speculative-algorithm` for this algorithm."""
        return self.vllm_method if engine == VLLM else self.sglang_algorithm


ALGORITHMS: Final[dict[str, Algorithm]] = {
    a.name: a
    for a in (
        Algorithm(
            "draft-model",
            "draft_model",
            "STANDALONE",
            True,
            False,
            1,
            "a separate small LM of the same tokenizer drafts tokens",
        ),
        Algorithm("eagle", "eagle", "EAGLE", True, True, 1, "an EAGLE-1 head drafts a chain"),
        Algorithm(
            "eagle2",
            "eagle",
            "EAGLE",
            True,
            True,
            4,
            "EAGLE tree drafting (SGLang top-k > 1); vLLM has no tree and drafts a chain",
        ),
        Algorithm("eagle3", "eagle3", "EAGLE3", True, True, 1, "an EAGLE-3 head drafts a chain"),
        Algorithm("ngram", "ngram", "NGRAM", False, False, 1, "prompt lookup, no draft model"),
        Algorithm("mtp", "mtp", "NEXTN", False, False, 1, "the target's own MTP layers draft"),
    )
}


def algorithm_named(value: str) -> Algorithm | None:
    """The algorithm for a user's spelling: case and surrounding whitespace do not matter."""
    return ALGORITHMS.get(value.strip().lower())


# --- text, counts and model references --------------------------------------------------------

MAX_SHOWN = 60
MAX_COUNT_DIGITS = 9  # far above any real count, far below int()'s 4300-digit limit
# ASCII digits only: str.isdigit() and int() also take "٣" and full-width digits.
_COUNT = re.compile(rf"[0-9]{{1,{MAX_COUNT_DIGITS}}}")
_HUB_PART = r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}"
_HUB_ID = re.compile(rf"{_HUB_PART}/{_HUB_PART}")
_ABSOLUTE_PATH = re.compile(r"/[A-Za-z0-9._/-]{1,4095}")
_URI_OR_ARN = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://|arn:|s3:)", re.IGNORECASE)
_FLAG_NAME = re.compile(r"[a-z0-9][a-z0-9.-]{0,127}")


def _shown(value: str) -> str:
    """A value for an error line: quoted, escaped, and cut when long."""
    if len(value) > MAX_SHOWN:
        return f"{value[:MAX_SHOWN]!r}... ({len(value)} characters)"
    return repr(value)


def text_problem(value: str) -> str | None:
    """Why `value` cannot travel as an env value or argument: undecodable bytes, NUL."""
    if "\0" in value:
        return "contains a NUL character; remove it"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid UTF-8 text; set it again as plain text"
    return None


def parse_count(value: object) -> int | None:
    """A positive whole number from a string of ASCII digits (or a JSON integer), else None.

    Unicode digits ("²", "٣", full-width) and thousands of digits are refused, never raised on.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 < value < 10**MAX_COUNT_DIGITS else None
    if isinstance(value, str) and _COUNT.fullmatch(value.strip()):
        number = int(value.strip())
        return number if number > 0 else None
    return None


def count_problem(value: object) -> str | None:
    if parse_count(value) is not None:
        return None
    shown = _shown(value) if isinstance(value, str) else repr(value)[:MAX_SHOWN]
    return (
        f"must be a positive whole number in ASCII digits (at most {MAX_COUNT_DIGITS}), not {shown}"
    )


def is_hf_id(value: str) -> bool:
    """org/name as the Hugging Face Hub spells repositories (no `..` or `--`)."""
    return bool(_HUB_ID.fullmatch(value)) and ".." not in value and "--" not in value


def _reference_shape_problem(value: str, what: str) -> str | None:
    """The problems shared by every model reference: blank, spacing, flags, relative paths."""
    if not value.strip():
        return f"is empty; set {what}"
    if value != value.strip():
        return f"{_shown(value)} has spaces around it; remove them"
    if (problem := text_problem(value)) is not None:
        return problem
    if value.startswith("-"):
        return f"{_shown(value)} starts with '-', which the engine reads as a flag; set {what}"
    if value.startswith(("./", "../", "~")) or value in {".", ".."}:
        return f"{_shown(value)} is a relative path; use an absolute path in the image or {what}"
    return None


def model_id_problem(value: str) -> str | None:
    """Why `value` is not a target model id: a Hugging Face Hub id (org/name)."""
    what = "a Hugging Face model id (org/name)"
    if (problem := _reference_shape_problem(value, what)) is not None:
        return problem
    if len(value) > 193:
        return f"{_shown(value)} is too long for a Hub id (org and name at most 96 each)"
    if not is_hf_id(value):
        return (
            f"{_shown(value)} is not {what}: letters, digits, '.', '_', '-' around one '/', "
            "no '..' or '--'"
        )
    return None


def draft_model_problem(value: str) -> str | None:
    """Why `value` cannot be a draft (or served) model: a Hub id or a clean absolute path."""
    what = "a Hugging Face id (org/name) or an absolute path in the image"
    if (problem := _reference_shape_problem(value, what)) is not None:
        return problem
    if _URI_OR_ARN.match(value):
        return (
            f"{_shown(value)} is a URI or ARN; the engines download models from the Hugging "
            "Face Hub only. Push it to the Hub and give its id (org/name), or bake it into the "
            "image and give its absolute path"
        )
    if value.startswith("/"):
        clean = _ABSOLUTE_PATH.fullmatch(value) and "//" not in value
        segments = value.strip("/").split("/")
        if clean and not {".", ".."} & set(segments):
            return None
        return (
            f"{_shown(value)} is not a clean absolute path (letters, digits, . _ - / only; "
            "no '//', '.' or '..' segments)"
        )
    if is_hf_id(value):
        return None
    return f"{_shown(value)} is not {what}"


# --- engine flags: names, aliases, rules -----------------------------------------------------


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


# --- the container environment, read back ---------------------------------------------------


class EnvProblem(Exception):
    """A setting the engine would reject or mishandle; `source` is what the user must change
    (an env variable, or `argument --flag` for a container argument)."""

    def __init__(self, source: str, message: str) -> None:
        super().__init__(f"{source}: {message}")
        self.source = source
        self.message = message


@dataclass(frozen=True)
class EnvFlag:
    """One SM_<ENGINE>_* variable as the flag it becomes."""

    variable: str
    name: str  # as the variable spells it: max-model-len
    key: str  # canonical_flag(name)
    value: str | None  # None: a bare flag (`true`)

    @property
    def tokens(self) -> list[str]:
        if self.value is None:
            return [f"--{self.name}"]
        # argparse reads a value that starts with "-" as another flag; `--f=value` is not.
        if self.value.startswith("-"):
            return [f"--{self.name}={self.value}"]
        return [f"--{self.name}", self.value]


@dataclass(frozen=True)
class Setting:
    """One flag's value and where it came from (an env variable or a container argument)."""

    value: str | None
    source: str


def env_flag(engine: str, variable: str, value: str, version: str | None = None) -> EnvFlag | None:
    """The DLC convention for one variable; None when `false` omits the flag.

    `version` is the image's engine version (None: pinned); see `flag_name_problem`.
    """
    prefix = ENV_PREFIXES[engine]
    name = variable[len(prefix) :].lower().replace("_", "-")
    if not name:
        raise EnvProblem(variable, f"no flag name after {prefix}; remove the variable")
    if (problem := text_problem(variable)) is not None:
        raise EnvProblem(variable, problem)
    problem = flag_name_problem(engine, f"--{name}", version, any_abbreviation=False)
    if problem is not None:
        raise EnvProblem(variable, problem)
    if (problem := text_problem(value)) is not None:
        raise EnvProblem(variable, problem)
    text = value.strip()
    if not text:
        raise EnvProblem(variable, "empty value; set a value, `true` for a bare flag, or unset it")
    if text.lower() == "false":
        return None
    key = canonical_flag(engine, f"--{name}")
    if text.lower() == "true":
        return EnvFlag(variable, name, key, None)
    return EnvFlag(variable, name, key, normalized_value(engine, key, text))


def normalized_value(engine: str, key: str, value: str) -> str:
    """Speculative names in the case the engine wants; everything else unchanged."""
    if engine == SGLANG and key == SGLANG_ALGORITHM_FLAG:
        return value.upper()  # <= 0.5.8 only took uppercase names
    if engine == VLLM and key == "spec-method":
        return value.lower()
    if engine == VLLM and key == VLLM_CONFIG_FLAG:
        return _lowercase_vllm_method(value)
    return value


def _lowercase_vllm_method(value: str) -> str:
    """A JSON config whose method differs only in case, with the method lowercased."""
    parsed = _json_object(value)
    method = parsed.get("method") if parsed is not None else None
    if parsed is None or not isinstance(method, str) or method == method.lower():
        return value
    return json.dumps({**parsed, "method": method.lower()}, separators=(",", ":"))


def env_flags(engine: str, env: Mapping[str, str], version: str | None = None) -> list[EnvFlag]:
    """The engine's SM_* variables as flags, sorted by variable name; raises EnvProblem."""
    flags: list[EnvFlag] = []
    for variable in sorted(env):
        if variable.startswith(ENV_PREFIXES[engine]):
            flag = env_flag(engine, variable, env[variable], version)
            if flag is not None:
                flags.append(flag)
    by_key: dict[str, str] = {}
    for flag in flags:
        if flag.key in by_key:
            raise EnvProblem(flag.variable, f"sets the same flag as {by_key[flag.key]}; keep one")
        by_key[flag.key] = flag.variable
    return flags


def speculative_env_flags(engine: str, env: Mapping[str, str]) -> list[EnvFlag]:
    """The engine's speculative flags in a container env (`mlcc plan`, `mlcc verify`).

    Only those variables are read, so flags of another engine version elsewhere do not matter.
    """
    speculative = {k: v for k, v in env.items() if is_speculative_variable(engine, k)}
    return env_flags(engine, speculative)


def is_speculative_variable(engine: str, variable: str) -> bool:
    """HP_SPECULATIVE_ALGORITHM, or an SM_<ENGINE>_* variable that becomes a speculative flag."""
    if variable == ALGORITHM_ENV:
        return True
    prefix = ENV_PREFIXES[engine]
    name = variable[len(prefix) :].replace("_", "-")
    key = canonical_flag(engine, f"--{name}")
    return variable.startswith(prefix) and is_speculative_flag(engine, key)


def settings_from_flags(flags: Iterable[EnvFlag]) -> dict[str, Setting]:
    return {flag.key: Setting(flag.value, flag.variable) for flag in flags}


# --- speculative validation of a container environment ----------------------------------------


def check_speculative(engine: str, settings: Mapping[str, Setting], version: str | None) -> None:
    """Raise EnvProblem for a speculative setting the engine would reject or mishandle.

    `settings` maps canonical flags to their values; `version` is the image's engine version
    (None: the pinned one). An unknown version skips only the name check.
    """
    if engine == VLLM:
        _check_vllm(settings, version)
    else:
        _check_sglang(settings, version)


def _json_object(value: str) -> dict[str, object] | None:
    """A JSON object, or None for anything else (bad JSON, NaN, nesting or numbers too big)."""

    def refuse_constant(name: str) -> object:
        raise ValueError(name)

    try:
        parsed = json.loads(value, parse_constant=refuse_constant)
    except (ValueError, RecursionError):
        return None
    if not isinstance(parsed, dict):
        return None
    return {str(key).replace("-", "_"): item for key, item in parsed.items()}


def _vllm_config_object(setting: Setting) -> dict[str, object]:
    example = '{"method":"eagle3","model":"org/draft","num_speculative_tokens":3}'
    parsed = _json_object(setting.value or "")
    if parsed is None:
        raise EnvProblem(setting.source, f"must be one JSON object (no NaN), e.g. {example}")
    return parsed


def _vllm_fields(settings: Mapping[str, Setting]) -> dict[str, tuple[object, str]]:
    """SpeculativeConfig fields from the JSON flag, the dotted and the shorthand flags."""
    fields: dict[str, tuple[object, str]] = {}
    config = settings.get(VLLM_CONFIG_FLAG)
    if config is not None:
        fields.update({k: (v, config.source) for k, v in _vllm_config_object(config).items()})
    for key, setting in settings.items():
        if key.startswith(f"{VLLM_CONFIG_FLAG}."):
            field = key.removeprefix(f"{VLLM_CONFIG_FLAG}.").replace("-", "_")
        elif key in VLLM_SPEC_SHORTHANDS:
            field = VLLM_SPEC_SHORTHANDS[key]
        else:
            continue
        if field in fields:
            raise EnvProblem(
                setting.source, f"{field} is also set by {fields[field][1]}; set it once"
            )
        fields[field] = (setting.value, setting.source)
    return fields


def _check_vllm(settings: Mapping[str, Setting], version: str | None) -> None:
    fields = _vllm_fields(settings)
    if not fields and VLLM_CONFIG_FLAG not in settings:
        return
    config = settings.get(VLLM_CONFIG_FLAG)
    first_source = config.source if config is not None else next(iter(fields.values()))[1]
    method, method_source = fields.get("method", (None, first_source))
    names = accepted_names(VLLM, version)
    accepted = ", ".join(sorted(names or SPECULATIVE_NAMES[VLLM][PINNED_VERSIONS[VLLM]]))
    if not isinstance(method, str) or not method.strip():
        raise EnvProblem(method_source, f'set "method" explicitly (one of {accepted})')
    method = method.strip().lower()
    if names is not None and method not in names:
        hint = ' (vLLM has no eagle2; use "eagle")' if method == "eagle2" else ""
        shown = _shown(method)
        raise EnvProblem(method_source, f"unknown method {shown}{hint}; use one of {accepted}")
    _check_vllm_model(method, fields, method_source)
    _check_vllm_tokens(method, fields, method_source)


def _check_vllm_model(method: str, fields: Mapping[str, tuple[object, str]], source: str) -> None:
    model, model_source = fields.get("model", (None, source))
    if model is None or model == "":
        if method in VLLM_METHODS_NEEDING_MODEL:
            raise EnvProblem(
                model_source, f'method "{method}" needs "model": a Hub id or a local path'
            )
        return
    if not isinstance(model, str):
        raise EnvProblem(model_source, '"model" must be a string: a Hub id or a local path')
    if method in _VLLM_MODEL_IS_CLASS:
        return
    problem = draft_model_problem(model)
    if problem is not None:
        raise EnvProblem(model_source, f'"model" {problem}')


def _check_vllm_tokens(method: str, fields: Mapping[str, tuple[object, str]], source: str) -> None:
    if "num_speculative_tokens" not in fields:
        if method in VLLM_METHODS_NEEDING_TOKENS:
            raise EnvProblem(source, f'method "{method}" needs "num_speculative_tokens" (e.g. 3)')
        return
    value, tokens_source = fields["num_speculative_tokens"]
    problem = count_problem(value)
    if problem is not None:
        raise EnvProblem(tokens_source, f'"num_speculative_tokens" {problem}')


def _check_sglang(settings: Mapping[str, Setting], version: str | None) -> None:
    algorithm = settings.get(SGLANG_ALGORITHM_FLAG)
    if algorithm is None or not (algorithm.value or "").strip():
        _refuse_speculative_without_algorithm(settings)
        return
    name = (algorithm.value or "").strip().upper()
    names = accepted_names(SGLANG, version)
    if names is not None and name not in names:
        accepted = ", ".join(sorted(names))
        hints = {"MTP": ' (SGLang calls it "NEXTN")', "EAGLE2": ' (use "EAGLE" with topk > 1)'}
        raise EnvProblem(
            algorithm.source,
            f"unknown algorithm {_shown(name)}{hints.get(name, '')}; use one of {accepted}",
        )
    _check_sglang_draft(name, settings)
    _check_sglang_triple(name, settings)


def _refuse_speculative_without_algorithm(settings: Mapping[str, Setting]) -> None:
    for key in (SGLANG_DRAFT_FLAG, *SGLANG_TRIPLE):
        if key in settings:
            raise EnvProblem(
                settings[key].source,
                f"has no effect without {env_variable(SGLANG, SGLANG_ALGORITHM_FLAG)}; "
                "set that too or unset it",
            )


def _check_sglang_draft(algorithm: str, settings: Mapping[str, Setting]) -> None:
    draft = settings.get(SGLANG_DRAFT_FLAG)
    if draft is None or not (draft.value or "").strip():
        if algorithm in SGLANG_ALGORITHMS_NEEDING_DRAFT:
            raise EnvProblem(
                draft.source if draft is not None else env_variable(SGLANG, SGLANG_DRAFT_FLAG),
                f"{algorithm} needs a draft model (a Hub id or a local path); without one "
                "SGLang loads the target as its own draft and crashes",
            )
        return
    problem = draft_model_problem(draft.value or "")
    if problem is not None:
        raise EnvProblem(draft.source, problem)


def _check_sglang_triple(algorithm: str, settings: Mapping[str, Setting]) -> None:
    """steps / topk / draft tokens: all three or none (a partial triple crashes SGLang)."""
    given = [key for key in SGLANG_TRIPLE if key in settings]
    if not given:
        return
    variables = ", ".join(env_variable(SGLANG, key) for key in SGLANG_TRIPLE)
    if len(given) != len(SGLANG_TRIPLE):
        missing = next(key for key in SGLANG_TRIPLE if key not in settings)
        raise EnvProblem(
            env_variable(SGLANG, missing), f"missing; set all three of {variables}, or none"
        )
    counts = {}
    for key in SGLANG_TRIPLE:
        setting = settings[key]
        problem = count_problem(setting.value)
        if problem is not None:
            raise EnvProblem(setting.source, problem)
        counts[key] = parse_count(setting.value)
    steps, topk, draft_tokens = (counts[key] for key in SGLANG_TRIPLE)
    chain = algorithm in SGLANG_EAGLE_FAMILY and topk == 1
    if chain and steps is not None and draft_tokens != steps + 1:
        source = settings["speculative-num-draft-tokens"].source
        raise EnvProblem(source, f"with top-k 1 SGLang uses steps + 1 = {steps + 1}; set that")


# --- BEGIN GENERATED by scripts/engine_flags.py from vllm 0.27.1, sglang 0.5.17 ---
# Do not edit. The long options `vllm serve` and `python3 -m sglang.launch_server` accept
# at the pinned versions, and their other option strings (short forms, aliases).
ENGINE_LONG_OPTIONS: Final[dict[str, tuple[str, ...]]] = {
    # vllm 0.27.1: vllm/engine/arg_utils.py + vllm/entrypoints/openai/cli_args.py
    VLLM: (
        "additional-config",
        "aggregate-engine-logging",
        "all2all-backend",
        "allow-credentials",
        "allow-deprecated-quantization",
        "allowed-headers",
        "allowed-local-media-path",
        "allowed-media-domains",
        "allowed-methods",
        "allowed-origins",
        "api-key",
        "api-server-count",
        "async-scheduling",
        "attention-backend",
        "attention-config",
        "block-size",
        "calculate-kv-scales",
        "chat-template",
        "chat-template-content-format",
        "code-revision",
        "cohere-format",
        "cohere-is-reasoning-model",
        "collect-detailed-traces",
        "compilation-config",
        "config",
        "config-format",
        "convert",
        "cp-kv-cache-interleave-size",
        "cpu-distributed-timeout-seconds",
        "cpu-offload-gb",
        "cpu-offload-params",
        "cudagraph-capture-sizes",
        "cudagraph-metrics",
        "data-parallel-address",
        "data-parallel-backend",
        "data-parallel-external-lb",
        "data-parallel-hybrid-lb",
        "data-parallel-multi-port-external-lb",
        "data-parallel-rank",
        "data-parallel-rpc-port",
        "data-parallel-size",
        "data-parallel-size-local",
        "data-parallel-start-rank",
        "data-parallel-supervisor-port",
        "dbo-decode-token-threshold",
        "dbo-prefill-token-threshold",
        "dcp-comm-backend",
        "dcp-kv-cache-interleave-size",
        "decode-context-parallel-size",
        "default-chat-template-kwargs",
        "default-mm-loras",
        "device-ids",
        "diffusion-config",
        "disable-access-log-for-endpoints",
        "disable-cascade-attn",
        "disable-chunked-mm-input",
        "disable-custom-all-reduce",
        "disable-fastapi-docs",
        "disable-hybrid-kv-cache-manager",
        "disable-log-stats",
        "disable-nccl-for-dp-synchronization",
        "disable-sliding-window",
        "disable-uvicorn-access-log",
        "distributed-executor-backend",
        "distributed-timeout-seconds",
        "download-dir",
        "dp-supervisor-probe-failure-threshold",
        "dp-supervisor-probe-interval-s",
        "dp-supervisor-probe-timeout-s",
        "dtype",
        "ec-transfer-config",
        "enable-auto-tool-choice",
        "enable-bf16x3-router-gemm",
        "enable-chunked-prefill",
        "enable-cumem-allocator",
        "enable-dbo",
        "enable-elastic-ep",
        "enable-ep-weight-filter",
        "enable-eplb",
        "enable-expert-parallel",
        "enable-fault-tolerance",
        "enable-flash-late-interaction",
        "enable-flashinfer-autotune",
        "enable-force-include-usage",
        "enable-layerwise-nvtx-tracing",
        "enable-log-deltas",
        "enable-log-outputs",
        "enable-log-requests",
        "enable-logging-iteration-details",
        "enable-lora",
        "enable-mamba-cache-stochastic-rounding",
        "enable-mfu-metrics",
        "enable-mixed-moe-lora-format",
        "enable-mm-embeds",
        "enable-moe-shared-loras",
        "enable-offline-docs",
        "enable-per-request-metrics",
        "enable-prefix-caching",
        "enable-prompt-embeds",
        "enable-prompt-tokens-details",
        "enable-request-id-headers",
        "enable-return-routed-experts",
        "enable-server-load-tracking",
        "enable-sleep-mode",
        "enable-ssl-refresh",
        "enable-tokenizer-info-endpoint",
        "enable-tower-connector-lora",
        "enforce-eager",
        "eplb-config",
        "exclude-tools-when-tool-choice-none",
        "expert-placement-strategy",
        "fail-on-environ-validation",
        "fault-tolerance-config",
        "fingerprint-mode",
        "fingerprint-value",
        "fully-sharded-loras",
        "gdn-prefill-backend",
        "generation-config",
        "gpu-memory-utilization",
        "grpc",
        "h11-max-header-count",
        "h11-max-incomplete-event-size",
        "headless",
        "hf-config-path",
        "hf-overrides",
        "hf-token",
        "host",
        "ignore-patterns",
        "interleave-mm-strings",
        "io-processor-plugin",
        "ir-op-priority",
        "jit-monitor-mode",
        "jit-monitor-verbose",
        "kda-prefill-backend",
        "kernel-config",
        "kv-cache-dtype",
        "kv-cache-dtype-skip-layers",
        "kv-cache-memory-bytes",
        "kv-cache-metrics",
        "kv-cache-metrics-sample",
        "kv-events-config",
        "kv-offloading-backend",
        "kv-offloading-size",
        "kv-sharing-fast-prefill",
        "kv-transfer-config",
        "language-model-only",
        "limit-mm-per-prompt",
        "linear-backend",
        "load-format",
        "log-config-file",
        "log-error-stack",
        "logits-processors",
        "logprobs-mode",
        "long-prefill-token-threshold",
        "lora-dtype",
        "lora-modules",
        "lora-target-modules",
        "mamba-backend",
        "mamba-block-size",
        "mamba-cache-dtype",
        "mamba-cache-mode",
        "mamba-cache-philox-rounds",
        "mamba-ssm-cache-dtype",
        "mamba-ssu-algorithm",
        "master-addr",
        "master-port",
        "max-cpu-loras",
        "max-cudagraph-capture-size",
        "max-log-len",
        "max-logprobs",
        "max-lora-rank",
        "max-loras",
        "max-model-len",
        "max-num-batched-tokens",
        "max-num-scheduled-tokens",
        "max-num-seqs",
        "max-parallel-loading-workers",
        "media-io-kwargs",
        "middleware",
        "mm-encoder-attn-backend",
        "mm-encoder-attn-dtype",
        "mm-encoder-fp8-scale-path",
        "mm-encoder-fp8-scale-save-margin",
        "mm-encoder-fp8-scale-save-path",
        "mm-encoder-only",
        "mm-encoder-tp-mode",
        "mm-hasher-algorithm",
        "mm-ipc-gpu-memory-gb",
        "mm-processor-cache-gb",
        "mm-processor-cache-type",
        "mm-processor-kwargs",
        "mm-shm-cache-max-object-size-mb",
        "mm-tensor-ipc",
        "model",
        "model-class-overrides",
        "model-impl",
        "model-loader-extra-config",
        "moe-backend",
        "nnodes",
        "node-rank",
        "num-gpu-blocks-override",
        "numa-bind",
        "numa-bind-cpus",
        "numa-bind-nodes",
        "offload-backend",
        "offload-group-size",
        "offload-num-in-group",
        "offload-params",
        "offload-prefetch-step",
        "optimization-level",
        "otlp-traces-endpoint",
        "override-attention-dtype",
        "override-generation-config",
        "performance-mode",
        "pipeline-parallel-size",
        "pooler-config",
        "port",
        "prefill-context-parallel-size",
        "prefill-schedule-interval",
        "prefix-caching-hash-algo",
        "prefix-match-unit",
        "profiler-config",
        "pt-load-map-location",
        "quantization",
        "quantization-config",
        "ray-workers-use-nsight",
        "reasoning-config",
        "reasoning-parser",
        "reasoning-parser-plugin",
        "renderer-num-workers",
        "replayssm-buffer-len",
        "response-role",
        "return-tokens-as-token-ids",
        "revision",
        "root-path",
        "runner",
        "safetensors-load-strategy",
        "safetensors-prefetch-block-size",
        "safetensors-prefetch-num-threads",
        "scheduler-cls",
        "scheduler-reserve-full-isl",
        "scheduling-policy",
        "seed",
        "served-model-name",
        "show-hidden-metrics-for-version",
        "shutdown-timeout",
        "skip-mm-profiling",
        "skip-tokenizer-init",
        "spec-method",
        "spec-model",
        "spec-tokens",
        "specialize-active-lora",
        "speculative-config",
        "ssl-ca-certs",
        "ssl-cert-reqs",
        "ssl-certfile",
        "ssl-ciphers",
        "ssl-keyfile",
        "stream-interval",
        "structured-outputs-config",
        "tensor-parallel-size",
        "tokenizer",
        "tokenizer-mode",
        "tokenizer-revision",
        "tokens-only",
        "tool-call-parser",
        "tool-parser-plugin",
        "tool-server",
        "trust-remote-code",
        "trust-request-chat-template",
        "ubatch-size",
        "uds",
        "use-fp64-gumbel",
        "use-replayssm",
        "use-tqdm-on-load",
        "uvicorn-log-level",
        "video-pruning-method",
        "video-pruning-rate",
        "watermark",
        "weight-transfer-config",
        "worker-cls",
        "worker-extension-cls",
    ),
    # sglang 0.5.17: sglang/srt/server_args.py
    SGLANG: (
        "abort-on-priority-when-disabled",
        "admin-api-key",
        "allow-auto-truncate",
        "api-key",
        "asr-max-buffer-seconds",
        "asr-max-concurrent-sessions",
        "attention-backend",
        "attn-cp-size",
        "base-gpu-id",
        "batch-notify-size",
        "bf16-gemm-backend",
        "bucket-e2e-request-latency",
        "bucket-inter-token-latency",
        "bucket-time-to-first-token",
        "chat-template",
        "checkpoint-engine-wait-weights-before-ready",
        "chunked-prefill-size",
        "collect-tokens-histogram",
        "completion-template",
        "config",
        "constrained-json-disable-any-whitespace",
        "constrained-json-whitespace-pattern",
        "context-length",
        "cp-strategy",
        "cpu-offload-gb",
        "crash-dump-folder",
        "cuda-graph-backend-decode",
        "cuda-graph-backend-prefill",
        "cuda-graph-bs",
        "cuda-graph-bs-decode",
        "cuda-graph-bs-prefill",
        "cuda-graph-config",
        "cuda-graph-max-bs",
        "cuda-graph-max-bs-decode",
        "cuda-graph-max-bs-prefill",
        "cuda-graph-tc-compiler",
        "custom-weight-loader",
        "dcp-comm-backend",
        "dcp-replicate-q-proj",
        "dcp-size",
        "debug-cuda-graph",
        "debug-tensor-dump-input-file",
        "debug-tensor-dump-layers",
        "debug-tensor-dump-output-folder",
        "decode-attention-backend",
        "decode-log-interval",
        "decoupled-spec-bind-endpoint",
        "decoupled-spec-connect-endpoints",
        "decoupled-spec-rank",
        "decoupled-spec-role",
        "decrypted-config-file",
        "decrypted-draft-config-file",
        "deepep-config",
        "deepep-dispatcher-output-dtype",
        "deepep-mode",
        "default-chat-template-kwargs",
        "default-priority-value",
        "delete-ckpt-after-loading",
        "detokenizer-worker-num",
        "device",
        "disable-attn-tp-gather",
        "disable-chunked-prefix-cache",
        "disable-cuda-graph",
        "disable-cuda-graph-padding",
        "disable-custom-all-reduce",
        "disable-decode-cuda-graph",
        "disable-fast-image-processor",
        "disable-flashinfer-autotune",
        "disable-flashinfer-cutlass-moe-fp4-allgather",
        "disable-hybrid-swa-memory",
        "disable-outlines-disk-cache",
        "disable-overlap-schedule",
        "disable-piecewise-cuda-graph",
        "disable-prefill-cuda-graph",
        "disable-priority-preemption",
        "disable-radix-cache",
        "disable-shared-experts-fusion",
        "disable-tokenizer-batch-decode",
        "disaggregation-bootstrap-port",
        "disaggregation-decode-enable-offload-kvcache",
        "disaggregation-decode-enable-radix-cache",
        "disaggregation-decode-extra-slots",
        "disaggregation-decode-polling-interval",
        "disaggregation-ib-device",
        "disaggregation-mode",
        "disaggregation-transfer-backend",
        "dist-init-addr",
        "dist-timeout",
        "dllm-algorithm",
        "dllm-algorithm-config",
        "dllm-fdfo",
        "download-dir",
        "dp-size",
        "dsa-decode-backend",
        "dsa-paged-mqa-logits-backend",
        "dsa-prefill-backend",
        "dsa-prefill-cp-mode",
        "dsa-topk-backend",
        "dtype",
        "dwdp-size",
        "dynamic-batch-tokenizer-batch-size",
        "dynamic-batch-tokenizer-batch-timeout",
        "elastic-ep-backend",
        "elastic-ep-initial-size",
        "elastic-ep-join-mode",
        "elastic-ep-join-rank-offset",
        "elastic-ep-rejoin",
        "elastic-ep-scale-timeout",
        "enable-adaptive-dispatch-to-encoder",
        "enable-aiter-allreduce-fusion",
        "enable-attn-tp-input-scattered",
        "enable-breakable-cuda-graph",
        "enable-broadcast-mm-inputs-process",
        "enable-cache-report",
        "enable-cp-decode-attn-tp",
        "enable-cudagraph-gc",
        "enable-custom-logit-processor",
        "enable-deepseek-v4-fp4-indexer",
        "enable-deterministic-inference",
        "enable-dp-attention",
        "enable-dp-attention-local-control-broadcast",
        "enable-dp-lm-head",
        "enable-draft-weights-cpu-backup",
        "enable-dsa-cache-layer-split",
        "enable-dsa-prefill-context-parallel",
        "enable-dynamic-batch-tokenizer",
        "enable-dynamic-chunking",
        "enable-elastic-expert-backup",
        "enable-eplb",
        "enable-expert-distribution-metrics",
        "enable-flashinfer-allreduce-fusion",
        "enable-flexkv",
        "enable-forward-pass-metrics",
        "enable-fp32-lm-head",
        "enable-fused-moe-sum-all-reduce",
        "enable-fused-qk-norm-rope",
        "enable-gdn-replayssm-spec",
        "enable-hierarchical-cache",
        "enable-hisparse",
        "enable-http2",
        "enable-int8-mamba-checkpoint",
        "enable-layerwise-nvtx-marker",
        "enable-linear-replayssm",
        "enable-linear-replayssm-spec",
        "enable-lmcache",
        "enable-lora",
        "enable-lora-overlap-loading",
        "enable-mamba-cache-stochastic-rounding",
        "enable-memory-saver",
        "enable-metrics",
        "enable-metrics-for-all-schedulers",
        "enable-mfu-metrics",
        "enable-mis",
        "enable-mixed-chunk",
        "enable-mm-global-cache",
        "enable-mscclpp",
        "enable-multi-layer-eagle",
        "enable-multimodal",
        "enable-nccl-nvls",
        "enable-nsa-prefill-context-parallel",
        "enable-p2p-check",
        "enable-page-major-kv-layout",
        "enable-pdmux",
        "enable-precise-embedding-interpolation",
        "enable-prefill-context-parallel",
        "enable-prefill-cp",
        "enable-prefill-delayer",
        "enable-prefix-mm-cache",
        "enable-priority-scheduling",
        "enable-profile-cuda-graph",
        "enable-quant-communications",
        "enable-request-time-stats-logging",
        "enable-return-hidden-states",
        "enable-return-indexer-topk",
        "enable-return-routed-experts",
        "enable-scattered-sconv",
        "enable-session-radix-cache",
        "enable-single-batch-overlap",
        "enable-ssl-refresh",
        "enable-streaming-session",
        "enable-strict-thinking",
        "enable-symm-mem",
        "enable-tf32-matmul",
        "enable-tokenizer-batch-encode",
        "enable-torch-compile",
        "enable-torch-compile-debug-mode",
        "enable-torch-symm-mem",
        "enable-trace",
        "enable-two-batch-overlap",
        "enable-unified-memory",
        "enable-waterfill",
        "enable-weights-cpu-backup",
        "encoder-bootstrap-port",
        "encoder-only",
        "encoder-register-urls",
        "encoder-transfer-backend",
        "encoder-urls",
        "enforce-disable-flashinfer-allreduce-fusion",
        "enforce-piecewise-cuda-graph",
        "enforce-shared-experts-fusion",
        "engine-info-bootstrap-port",
        "ep-dispatch-algorithm",
        "ep-num-redundant-experts",
        "ep-size",
        "eplb-algorithm",
        "eplb-min-rebalancing-utilization-threshold",
        "eplb-rebalance-layers-per-chunk",
        "eplb-rebalance-num-iterations",
        "expert-distribution-recorder-buffer-size",
        "expert-distribution-recorder-mode",
        "experts-shared-outer-loras",
        "export-metrics-to-file",
        "export-metrics-to-file-dir",
        "extra-metric-labels",
        "fastapi-root-path",
        "file-storage-path",
        "flashinfer-allreduce-fusion-backend",
        "flashinfer-autotune-skip-ops",
        "flashinfer-mla-disable-ragged",
        "flashinfer-mxfp4-moe-precision",
        "flexkv-config-file",
        "forward-hooks",
        "forward-pass-metrics-ipc-name",
        "forward-pass-metrics-worker-id",
        "fp4-gemm-backend",
        "fp8-gemm-backend",
        "fuseep-mode",
        "gc-threshold",
        "gc-warning-threshold-secs",
        "generation-tokens-buckets",
        "gpu-id-step",
        "grammar-backend",
        "grpc-mode",
        "grpc-port",
        "hf-chat-template-name",
        "hicache-io-backend",
        "hicache-mem-layout",
        "hicache-ratio",
        "hicache-size",
        "hicache-storage-backend",
        "hicache-storage-backend-extra-config",
        "hicache-storage-prefetch-policy",
        "hicache-write-policy",
        "hisparse-config",
        "host",
        "incremental-streaming-output",
        "init-expert-location",
        "int8-mamba-ckpt-size",
        "is-embedding",
        "json-model-override-args",
        "keep-mm-feature-on-device",
        "kt-cpuinfer",
        "kt-max-deferred-experts-per-token",
        "kt-method",
        "kt-num-gpu-experts",
        "kt-threadpool-count",
        "kt-weight-path",
        "kv-cache-dtype",
        "kv-canary",
        "kv-canary-real-data",
        "kv-canary-sweep-interval",
        "kv-events-config",
        "language-only",
        "limit-mm-data-per-request",
        "linear-attn-backend",
        "linear-attn-decode-backend",
        "linear-attn-prefill-backend",
        "linear-attn-verify-backend",
        "linear-replayssm-cache-len",
        "lmcache-config-file",
        "load-balance-method",
        "load-format",
        "load-snapshot-publish-interval",
        "log-level",
        "log-level-http",
        "log-requests",
        "log-requests-format",
        "log-requests-level",
        "log-requests-target",
        "lora-backend",
        "lora-drain-wait-threshold",
        "lora-eviction-policy",
        "lora-paths",
        "lora-strict-loading",
        "lora-target-modules",
        "lora-use-virtual-experts",
        "mamba-backend",
        "mamba-cache-philox-rounds",
        "mamba-full-memory-ratio",
        "mamba-max-states-per-path",
        "mamba-radix-cache-strategy",
        "mamba-scheduler-strategy",
        "mamba-ssm-dtype",
        "mamba-track-interval",
        "max-ep-size",
        "max-loaded-loras",
        "max-lora-chunk-size",
        "max-lora-rank",
        "max-loras-per-batch",
        "max-mamba-cache-size",
        "max-prefill-tokens",
        "max-queued-requests",
        "max-running-requests",
        "max-total-tokens",
        "mem-fraction-static",
        "min-free-slots-delay",
        "mm-attention-backend",
        "mm-enable-dp-encoder",
        "mm-feature-transport",
        "mm-io-worker-num",
        "mm-process-config",
        "mm-processor-worker-num",
        "model-checksum",
        "model-config-parser",
        "model-impl",
        "model-loader-extra-config",
        "model-path",
        "modelexpress-config",
        "modelopt-checkpoint-restore-path",
        "modelopt-checkpoint-save-path",
        "modelopt-export-path",
        "modelopt-quant",
        "moe-a2a-backend",
        "moe-dense-tp-size",
        "moe-dp-size",
        "moe-runner-backend",
        "mooncake-ib-device",
        "msprobe-dump-config",
        "nccl-port",
        "nnodes",
        "node-rank",
        "nsa-decode-backend",
        "nsa-prefill-backend",
        "nsa-prefill-cp-mode",
        "num-continuous-decode-steps",
        "num-reserved-decode-tokens",
        "numa-node",
        "offload-group-size",
        "offload-mode",
        "offload-num-in-group",
        "offload-prefetch-step",
        "optimistic-prefill-attempts",
        "otlp-traces-endpoint",
        "page-size",
        "pdmux-config-path",
        "piecewise-cuda-graph-compiler",
        "piecewise-cuda-graph-max-tokens",
        "piecewise-cuda-graph-tokens",
        "port",
        "pp-async-batch-depth",
        "pp-max-micro-batch-size",
        "pp-size",
        "pre-warm-nccl",
        "preferred-sampling-params",
        "prefill-attention-backend",
        "prefill-cp-mode",
        "prefill-delayer-forward-passes-buckets",
        "prefill-delayer-max-delay-ms",
        "prefill-delayer-max-delay-passes",
        "prefill-delayer-queue-min-ratio",
        "prefill-delayer-token-usage-low-watermark",
        "prefill-delayer-wait-seconds-buckets",
        "prefill-max-requests",
        "prefill-only-disable-kv-cache",
        "prefill-round-robin-balance",
        "priority-scheduling-preemption-threshold",
        "prompt-tokens-buckets",
        "quantization",
        "quantization-param-path",
        "quantize-and-serve",
        "radix-cache-backend",
        "radix-eviction-policy",
        "random-seed",
        "reasoning-parser",
        "remote-instance-weight-loader-backend",
        "remote-instance-weight-loader-seed-instance-ip",
        "remote-instance-weight-loader-seed-instance-service-port",
        "remote-instance-weight-loader-send-weights-group-ports",
        "remote-instance-weight-loader-start-seed-via-transfer-engine",
        "retraction-policy",
        "return-hidden-states-mode",
        "revision",
        "rl-on-policy-target",
        "rl-quant-profile",
        "sampling-backend",
        "sampling-defaults",
        "schedule-conservativeness",
        "schedule-low-priority-values-first",
        "schedule-policy",
        "scheduler-recv-interval",
        "served-model-name",
        "show-time-cost",
        "sidecar",
        "sidecar-args",
        "skip-server-warmup",
        "skip-tokenizer-init",
        "sleep-on-idle",
        "sm-group-num",
        "smg-grpc-mode",
        "smg-http-sidecar-port",
        "soft-watchdog-timeout",
        "spec-trace-dir",
        "speculative-accept-threshold-acc",
        "speculative-accept-threshold-single",
        "speculative-adaptive",
        "speculative-adaptive-config",
        "speculative-algorithm",
        "speculative-attention-mode",
        "speculative-dflash-block-size",
        "speculative-dflash-draft-window-size",
        "speculative-draft-attention-backend",
        "speculative-draft-load-format",
        "speculative-draft-model-path",
        "speculative-draft-model-quantization",
        "speculative-draft-model-revision",
        "speculative-draft-window-size",
        "speculative-dspark-align-verify-tokens-to-graph-tier",
        "speculative-dspark-block-size",
        "speculative-dspark-confidence-sts-path",
        "speculative-dspark-sps-table-path",
        "speculative-eagle-topk",
        "speculative-moe-a2a-backend",
        "speculative-moe-runner-backend",
        "speculative-ngram-capacity",
        "speculative-ngram-external-corpus-max-tokens",
        "speculative-ngram-external-corpus-path",
        "speculative-ngram-external-sam-budget",
        "speculative-ngram-match-type",
        "speculative-ngram-max-bfs-breadth",
        "speculative-ngram-max-trie-depth",
        "speculative-ngram-min-bfs-breadth",
        "speculative-num-draft-tokens",
        "speculative-num-steps",
        "speculative-skip-dp-mlp-sync",
        "speculative-token-map",
        "speculative-use-rejection-sampling",
        "ssl-ca-certs",
        "ssl-certfile",
        "ssl-keyfile",
        "ssl-keyfile-password",
        "stream-interval",
        "stream-output",
        "stream-response-default-include-usage",
        "strip-thinking-cache",
        "swa-full-tokens-ratio",
        "tbo-token-distribution-threshold",
        "tokenizer-backend",
        "tokenizer-metrics-allowed-custom-labels",
        "tokenizer-metrics-custom-labels-header",
        "tokenizer-mode",
        "tokenizer-path",
        "tokenizer-worker-num",
        "tool-call-parser",
        "tool-server",
        "torch-compile-max-bs",
        "torchao-config",
        "tp-size",
        "trace-modules",
        "triton-attention-num-kv-splits",
        "triton-attention-reduce-in-fp32",
        "triton-attention-split-tile-size",
        "trust-remote-code",
        "use-ray",
        "uvicorn-access-log-exclude-prefixes",
        "warmups",
        "watchdog-timeout",
        "weight-cache-mode",
        "weight-cache-socket",
        "weight-cache-timeout",
        "weight-loader-disable-mmap",
        "weight-loader-drop-cache-after-load",
        "weight-loader-prefetch-checkpoints",
        "weight-loader-prefetch-num-threads",
        "weight-version",
    ),
}
ENGINE_OPTION_ALIASES: Final[dict[str, dict[str, str]]] = {
    VLLM: {
        "-ac": "attention-config",
        "-asc": "api-server-count",
        "-cc": "compilation-config",
        "-dc": "diffusion-config",
        "-dcp": "decode-context-parallel-size",
        "-dp": "data-parallel-size",
        "-dpa": "data-parallel-address",
        "-dpb": "data-parallel-backend",
        "-dpe": "data-parallel-external-lb",
        "-dph": "data-parallel-hybrid-lb",
        "-dpl": "data-parallel-size-local",
        "-dpm": "data-parallel-multi-port-external-lb",
        "-dpn": "data-parallel-rank",
        "-dpp": "data-parallel-rpc-port",
        "-dpr": "data-parallel-start-rank",
        "-ep": "enable-expert-parallel",
        "-n": "nnodes",
        "-pcp": "prefill-context-parallel-size",
        "-pp": "pipeline-parallel-size",
        "-q": "quantization",
        "-r": "node-rank",
        "-sc": "speculative-config",
        "-tp": "tensor-parallel-size",
    },
    SGLANG: {
        "--attention-context-parallel-size": "attn-cp-size",
        "--data-parallel-size": "dp-size",
        "--decode-context-parallel-size": "dcp-size",
        "--ep": "ep-size",
        "--expert-parallel-size": "ep-size",
        "--grpc-http-sidecar-port": "smg-http-sidecar-port",
        "--hierarchical-sparse-attention-extra-config": "hisparse-config",
        "--model": "model-path",
        "--moe-data-parallel-size": "moe-dp-size",
        "--nccl-init-addr": "dist-init-addr",
        "--pipeline-parallel-size": "pp-size",
        "--speculative-draft-model": "speculative-draft-model-path",
        "--tensor-parallel-size": "tp-size",
    },
}
# --- END GENERATED ---
