"""Prompts: vLLM's custom-dataset JSONL (one `{"prompt": ...}` or `{"messages": [...]}` object a
line, optionally with `max_tokens` or `output_tokens`) or the built-in set below."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlcc.userfiles import UserFileError, read_json_lines, shown_path

_CONTEXT = (
    "Speculative decoding lets a small draft model propose several tokens that the large target "
    "model then verifies in a single forward pass. Accepted tokens cost one target step instead "
    "of several, so latency per token falls while the output distribution stays the same. "
)

BUILT_IN_PROMPTS: tuple[str, ...] = (
    "What is the capital of France?",
    "Write a haiku about autumn leaves.",
    "Explain in two sentences why the sky is blue.",
    "List five prime numbers greater than one hundred and say how you checked each.",
    "Write a Python function that returns the n-th Fibonacci number iteratively, with a docstring.",
    "Summarize the plot of Romeo and Juliet for a ten-year-old in one paragraph.",
    "Translate into German and Spanish: 'The train leaves at eight, do not be late.'",
    "Describe, step by step, how to make a cup of pour-over coffee.",
    "Compare TCP and UDP in a short table with four rows, then explain when to use each.",
    "Write a short story of about 300 words about a lighthouse keeper who finds a message.",
    _CONTEXT * 4 + "Using the text above, explain speculative decoding to a new engineer.",
    _CONTEXT * 12 + "Based on the text above, list its claims and assess each one critically.",
)


# Far above any model's context; a bigger figure in a prompt file is a typo, not a request.
MAX_PROMPT_TOKENS = 10**9


class PromptFileError(ValueError):
    pass


@dataclass(frozen=True)
class Prompt:
    prompt: str | None = None
    messages: tuple[dict[str, Any], ...] | None = None
    max_tokens: int | None = None

    @property
    def is_chat(self) -> bool:
        return self.messages is not None


def built_in_prompts() -> list[Prompt]:
    return [Prompt(messages=({"role": "user", "content": text},)) for text in BUILT_IN_PROMPTS]


def load_prompts(path: Path) -> list[Prompt]:
    """The prompts of a JSONL file, read by mlcc.userfiles (a FIFO, a folder, not UTF-8, JSON
    nested too deep or with numbers of thousands of digits: one line naming the file)."""
    try:
        records = read_json_lines(path, "--prompts")
    except UserFileError as error:
        raise PromptFileError(str(error)) from None
    where = f"--prompts {shown_path(path)}"
    prompts = [_parse_record(f"{where}:{number}", record) for number, record in records]
    if not prompts:
        raise PromptFileError(f"{where}: no prompts")
    return prompts


def _parse_record(where: str, record: Any) -> Prompt:
    if not isinstance(record, dict):
        raise PromptFileError(f"{where}: expected a JSON object")
    max_tokens = record.get("max_tokens", record.get("output_tokens"))
    if max_tokens is not None and (
        not isinstance(max_tokens, int)
        or isinstance(max_tokens, bool)
        or not 1 <= max_tokens <= MAX_PROMPT_TOKENS
    ):
        raise PromptFileError(
            f"{where}: max_tokens must be a whole number from 1 to {MAX_PROMPT_TOKENS:,}"
        )
    if isinstance(record.get("prompt"), str) and record["prompt"]:
        return Prompt(prompt=record["prompt"], max_tokens=max_tokens)
    messages = record.get("messages")
    if isinstance(messages, list) and messages and all(_is_message(m) for m in messages):
        return Prompt(messages=tuple(messages), max_tokens=max_tokens)
    raise PromptFileError(
        f'{where}: needs a non-empty "prompt" string or a "messages" list of {{role, content}}'
    )


def _is_message(message: Any) -> bool:
    return (
        isinstance(message, dict) and isinstance(message.get("role"), str) and "content" in message
    )


def request_body(prompt: Prompt, model: str, max_tokens: int, ignore_eos: bool) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": prompt.max_tokens or max_tokens,
        "temperature": 0.0,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if ignore_eos:
        body["ignore_eos"] = True  # a vLLM and SGLang extension: fixed output lengths
    if prompt.messages is not None:
        body["messages"] = list(prompt.messages)
    else:
        body["prompt"] = prompt.prompt
    return body


def api_path(prompt: Prompt) -> str:
    return "/v1/chat/completions" if prompt.is_chat else "/v1/completions"
