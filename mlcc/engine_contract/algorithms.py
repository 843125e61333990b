"""The user-facing algorithm table and what each engine must receive for each algorithm.

What each engine release really runs for a name (sources: the engines' released wheels,
vllm==0.27.1 / 0.34.0 and sglang==0.5.17 / 0.5.23 on PyPI):

- `eagle2`: vLLM has no tree drafting and no `eagle2` method; it runs `eagle` (a chain) at
  both releases (vllm/config/speculative.py `SpeculativeMethod`). SGLang runs `EAGLE` with
  top-k > 1, its EAGLE-2 tree.
- `mtp`: vLLM takes `mtp` at both releases; the model-specific names (`deepseek_mtp`,
  `qwen3_next_mtp`, ...) are deprecated and rewritten to `mtp` with a warning
  (`SpeculativeConfig.__post_init__`: "method `%s` is deprecated and replaced with mtp"), so
  we send `mtp` only. SGLang takes `NEXTN` and rewrites it to `EAGLE` before it logs
  server_args, or to `FROZEN_KV_MTP` for a Gemma 4 assistant draft
  (sglang/srt/arg_groups/speculative_hook.py `_resolve_speculative_algorithm_alias`, the same
  at 0.5.17 and 0.5.23); `names.SGLANG_LOGGED_AS` holds what it may log.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from .names import SPECULATIVE_NAMES, VLLM
from .values import version_key


@dataclass(frozen=True)
class Algorithm:
    """One user-facing algorithm and what each engine must receive for it.

    An engine name of None: that engine has no such method in any known release.
    """

    name: str
    vllm_method: str | None
    sglang_algorithm: str | None
    needs_draft: bool
    uses_topk: bool
    default_topk: int
    summary: str
    # A draft may be given but need not be: without one the engine reads the draft from the
    # target's own checkpoint (DSpark weights bundled with DeepSeek-V4 and others).
    draft_optional: bool = False

    def engine_algorithm(self, engine: str) -> str | None:
        """The vLLM `method` or the SGLang `--speculative-algorithm` for this algorithm."""
        return self.vllm_method if engine == VLLM else self.sglang_algorithm

    @property
    def takes_draft(self) -> bool:
        return self.needs_draft or self.draft_optional


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
        Algorithm(
            "ngram-gpu",
            "ngram_gpu",
            None,
            False,
            False,
            1,
            "prompt lookup on the GPU, no draft model (vLLM only)",
        ),
        Algorithm(
            "suffix",
            "suffix",
            None,
            False,
            False,
            1,
            "suffix-tree lookup over the prompt and past responses, no draft model (vLLM only)",
        ),
        Algorithm(
            "dflash",
            "dflash",
            "DFLASH",
            True,
            False,
            1,
            "a DFlash block-diffusion draft proposes a block of tokens in one pass",
        ),
        Algorithm(
            "dspark",
            "dspark",
            "DSPARK",
            False,
            False,
            1,
            "a DSpark block draft (own checkpoint, or bundled with the target) proposes a block",
            draft_optional=True,
        ),
    )
}

# Releases that know a method's name but cannot run it in the image the program builds, and why.
# vLLM 0.27.1: `SpeculativeConfig._validate_suffix_decoding` raises ImportError("Arctic Inference
# is required for suffix decoding. Install via `pip install arctic-inference==0.1.1`.") unless
# `vllm.utils.import_utils.has_arctic_inference()` finds the `arctic_inference` module; the
# wheel declares no extra that installs it, and we cannot cite that arctic-inference 0.1.1 works
# with that release's torch 2.13, so the image does not install it. vLLM 0.34.0 runs suffix
# decoding on the GPU itself (vllm/v1/worker/gpu/spec_decode/suffix/) and imports no such module.
UNRUNNABLE: Final[dict[tuple[str, str, str], str]] = {
    (VLLM, "0.27.1", "suffix"): (
        "vLLM 0.27.1 runs suffix decoding only with the Arctic Inference package "
        "(arctic_inference), which the vLLM image does not install"
    ),
}


def algorithm_named(value: str) -> Algorithm | None:
    """The algorithm for a user's spelling: case and surrounding whitespace do not matter."""
    return ALGORITHMS.get(value.strip().lower())


def unrunnable_reason(engine: str, version: str, name: str) -> str | None:
    """Why a release that knows `name` cannot run it in our image; None when it can."""
    return UNRUNNABLE.get((engine, version, name))


def first_release(engine: str, name: str | None) -> str | None:
    """The oldest known release of `engine` that accepts and can run `name`; None if none."""
    if name is None:
        return None
    runnable = [
        version
        for version, names in SPECULATIVE_NAMES[engine].items()
        if name in names and unrunnable_reason(engine, version, name) is None
    ]
    return min(runnable, key=version_key) if runnable else None
