"""The width of an EAGLE head's `fc` input, read from its safetensors header (no weights read).

A plain `XForCausalLM` of 1-2 layers without `draft_vocab_size` may be an EAGLE-1 or an EAGLE-3
head: its config.json cannot tell. The engines' own evidence is the `fc` layer they load the
head's weights into (vLLM 0.27.1 and 0.34.0 wheels on PyPI, read 2026-12-06):
`vllm/model_executor/models/llama_eagle3.py` builds `fc` with
`input_size = target_hidden_size * num_aux_hidden_states` (3 unless the config names the
auxiliary layers), `llama_eagle.py` with `input_size = hidden_size * 2`. A checkpoint whose
`fc.weight` (a Linear weight: [output, input]) has the other width does not load.

Only safetensors headers are read: `huggingface_hub`'s `get_safetensors_metadata` (two ranged
requests per file at most) for a Hub model, the header of `model.safetensors` (or the shard the
index names for `fc.weight`) for a local directory. None when no header shows an `fc` weight.
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import replace
from pathlib import Path

from huggingface_hub import HfApi

from mlcc.preflight.facts import ModelFacts

SINGLE_FILE = "model.safetensors"
INDEX_FILE = "model.safetensors.index.json"
MAX_HEADER_BYTES = 16 * 1024 * 1024  # a head's header lists a dozen tensors: a few kB
EAGLE1_INPUTS = 2  # llama_eagle.py: hidden_size * 2 (the token's embedding and a hidden state)
EAGLE3_INPUTS = 3  # llama_eagle3.py: target_hidden_size * num_aux_hidden_states, 3 by default


def is_fc_weight(name: str) -> bool:
    return name == "fc.weight" or name.endswith(".fc.weight")


def could_be_either_head(facts: ModelFacts) -> bool:
    """A plain XForCausalLM of 1-2 layers with none of the fields only EAGLE-3 heads carry."""
    names = facts.architectures
    plain = bool(names) and all(
        n.endswith("ForCausalLM") and "eagle" not in n.lower() for n in names
    )
    eagle3_fields = facts.draft_vocab_size is not None or facts.eagle_aux_hidden_states
    return plain and facts.num_layers <= 2 and not eagle3_fields


def fc_format(facts: ModelFacts) -> tuple[str, str] | None:
    """("eagle" or "eagle3", the evidence) from the fc input width; None when not read or
    neither width."""
    width = facts.fc_in_features
    if width is None:
        return None
    taken = facts.target_hidden_size or facts.hidden_size
    if width == EAGLE3_INPUTS * taken:
        kind, times = "eagle3", f"{EAGLE3_INPUTS} x hidden size {taken}"
    elif width == EAGLE1_INPUTS * facts.hidden_size:
        kind, times = "eagle", f"{EAGLE1_INPUTS} x hidden size {facts.hidden_size}"
    else:
        return None
    return kind, f"its fc weight takes {width} inputs, {times}, in its safetensors header"


def with_fc_width(
    facts: ModelFacts, model: str, revision: str = "", token: str | None = None
) -> ModelFacts:
    """The facts with the fc input width when the config leaves the head's format open; `model`
    a Hub id (read at `revision` with `token`, None: the library's own) or an absolute path."""
    if not could_be_either_head(facts):
        return facts
    local = model.startswith("/")
    width = _local_width(Path(model)) if local else _hub_width(model, revision, token)
    return replace(facts, fc_in_features=width)


def _width(shape: object) -> int | None:
    if isinstance(shape, list) and len(shape) == 2 and all(isinstance(n, int) for n in shape):
        return int(shape[1])
    return None


def _hub_width(model: str, revision: str, token: str | None) -> int | None:
    api = HfApi(endpoint=os.environ.get("HF_ENDPOINT") or None, token=token)
    try:
        metadata = api.get_safetensors_metadata(model, revision=revision)
    except Exception:  # no header, offline, refused: the evidence is missing, which warns
        return None
    for file in metadata.files_metadata.values():
        for name, tensor in file.tensors.items():
            if is_fc_weight(name):
                return _width(list(tensor.shape))
    return None


def _local_width(directory: Path) -> int | None:
    try:
        files = [directory / SINGLE_FILE]
        index = directory / INDEX_FILE
        if index.is_file() and index.stat().st_size <= MAX_HEADER_BYTES:
            weight_map = json.loads(index.read_bytes()).get("weight_map") or {}
            files = [directory / str(f) for n, f in weight_map.items() if is_fc_weight(str(n))]
        for path in files:
            header = _header(path)
            for name, entry in header.items():
                if is_fc_weight(name) and isinstance(entry, dict):
                    return _width(entry.get("shape"))
    except (OSError, ValueError, AttributeError, struct.error):
        return None
    return None


def _header(path: Path) -> dict[str, object]:
    """A safetensors file's JSON header: 8 bytes of little-endian length, then the header."""
    if not path.is_file():
        return {}
    with path.open("rb") as file:
        (length,) = struct.unpack("<Q", file.read(8))
        if length > MAX_HEADER_BYTES:
            return {}
        found = json.loads(file.read(length))
    return found if isinstance(found, dict) else {}
