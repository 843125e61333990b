"""The user-facing algorithm table and what each engine must receive for each algorithm."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from .names import VLLM


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
