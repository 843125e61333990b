"""A plain 1-2 layer XForCausalLM head without draft_vocab_size: its format comes from the width
of its fc weight in the safetensors header (issue #43 item 5b), read through the real
huggingface_hub client from the fake Hub; refused on that evidence, a warning without it."""

from __future__ import annotations

import contextlib
import json
import struct
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from fake_hub import FakeHub, HubAnswer, HubBehaviour
from preview_run import speculative_stack

from mlcc.preflight import head_weights
from mlcc.preflight.facts import model_facts
from mlcc.preflight.hub import Fetched, ModelRef, fetch
from mlcc.preflight.models import models_part
from mlcc.preflight.outcome import Mode, settle
from mlcc.preflight.rules import head_format

LLAMA_8B = "meta-llama/Llama-3.1-8B-Instruct"
EAGLE1_HEAD = "yuhuili/EAGLE-LLaMA3-Instruct-8B"  # LlamaForCausalLM, 1 layer, fc [4096, 8192]
HIDDEN = 4096


def header_bytes(fc_inputs: int) -> bytes:
    header = {"fc.weight": {"dtype": "F16", "shape": [HIDDEN, fc_inputs], "data_offsets": [0, 0]}}
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text


@contextlib.contextmanager
def served(behaviour: HubBehaviour, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    """The fake Hub with `behaviour`, with a fresh cache (as preview_run.hub_served)."""
    monkeypatch.setenv("HF_HUB_CACHE", tempfile.mkdtemp(prefix="hub-cache-"))
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    with FakeHub(behaviour) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        yield hub


def lines(algorithm: str) -> tuple[list[str], list[str]]:
    stack = speculative_stack(algorithm, LLAMA_8B, EAGLE1_HEAD).config
    errors, warnings = settle(models_part(stack, 5), Mode.STRICT)
    return [str(e) for e in errors], [str(w) for w in warnings]


def test_the_fc_width_is_read_from_the_header_not_the_weights(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with served(HubBehaviour(), monkeypatch) as hub:
        result = fetch(ModelRef(EAGLE1_HEAD, "main", None), 5)
        assert isinstance(result, Fetched)
        assert result.facts.fc_in_features == 2 * HIDDEN
        ranges = [p for m, p, _ in hub.requests if p.endswith("/model.safetensors") and m == "GET"]
        assert ranges  # the header's ranged GET; the fake serves no weights at all
    # the full 8B target is never asked for its header: its config settles its format
    with served(HubBehaviour(), monkeypatch) as hub:
        fetch(ModelRef(LLAMA_8B, "main", None), 5)
        assert not any(p.rsplit("/", 1)[-1] == "model.safetensors" for _, p, _ in hub.requests)


def test_an_eagle1_fc_under_eagle3_is_refused_on_that_evidence(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with served(HubBehaviour(), monkeypatch):
        errors, _ = lines("eagle3")
        (line,) = errors
        assert line.startswith(
            "hp:speculativeModel: is an EAGLE-1 head (its fc weight takes 8192 inputs, 2 x hidden "
            "size 4096, in its safetensors header), and eagle3 needs an EAGLE-3 head"
        )
        assert lines("eagle") == ([], [])


def test_a_plain_head_with_an_eagle3_fc_passes_eagle3_and_is_refused_under_eagle(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    answer = HubAnswer(header_bytes(3 * HIDDEN))
    behaviour = HubBehaviour(answers={(EAGLE1_HEAD, "model.safetensors"): answer})
    with served(behaviour, monkeypatch):
        assert lines("eagle3") == ([], [])
        errors, _ = lines("eagle")
        assert errors and "is an EAGLE-3 head (its fc weight takes 12288 inputs" in errors[0]


def test_no_header_is_a_warning_never_a_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    missing = HubAnswer(b"", 404, {"X-Error-Code": "EntryNotFound"})
    behaviour = HubBehaviour(answers={(EAGLE1_HEAD, "model.safetensors"): missing})
    with served(behaviour, monkeypatch):
        errors, warnings = lines("eagle3")
        assert errors == []
        (warning,) = warnings
        assert "may be an EAGLE-1 head, and no safetensors header showed its fc weight" in warning
        assert lines("eagle") == ([], [])


@pytest.mark.parametrize(
    ("width", "expected"),
    [(2 * HIDDEN, "eagle"), (3 * HIDDEN, "eagle3"), (5 * HIDDEN, None), (None, None)],
)
def test_the_format_of_each_width(width: int | None, expected: str | None) -> None:
    config = {
        "architectures": ["LlamaForCausalLM"],
        "hidden_size": HIDDEN,
        "num_attention_heads": 32,
        "vocab_size": 128256,
        "num_hidden_layers": 1,
    }
    facts = model_facts(config, None)
    assert head_weights.could_be_either_head(facts)
    shown = head_format(replace(facts, fc_in_features=width))
    assert (shown[0] if shown else None) == expected


def test_a_local_directory_header_is_read(tmp_path: Path) -> None:
    (tmp_path / "model.safetensors").write_bytes(header_bytes(2 * HIDDEN))
    assert head_weights._local_width(tmp_path) == 2 * HIDDEN
    (tmp_path / "model.safetensors").write_bytes(b"\x00")
    assert head_weights._local_width(tmp_path) is None
