"""The proof's training data, made offline from the tiny target, in the layout speculators 0.9.0's
offline training reads.

    PROOF_PYTHON tests/draft_proof/make_data.py rows TARGET_DIR ROWS_JSONL
    PROOF_PYTHON tests/draft_proof/make_data.py hidden-states TARGET_DIR DATA_DIR 1 2 3

`rows` writes pretokenized conversations, one `{"input_ids", "loss_mask"}` per line: the rows
`speculators prepare-data` carries through without a vLLM render endpoint
(speculators/data_generation/preprocessing.py, "pretokenized" inputs). The prompt's tokens are
masked out, the answer's count.

`hidden-states` reads the dataset `prepare-data` saved (datasets' save_to_disk: input_ids,
loss_mask, seq_len) and writes, for row i, DATA_DIR/hidden_states/hs_{i}.safetensors with
`token_ids` [seq_len] and `hidden_states` [seq_len, len(layer ids) + 1, hidden]: the file
hs_connectors' FileTransfer.get_cached reads (hs_connectors 0.9.0, transfer.py), the shape
speculators/train/data.py takes apart (all but the last layer are the draft's input, the last is
`verifier_last_hidden_states`). Layer id k is the input of decoder layer k, as vLLM's Llama
collects its auxiliary hidden states (`hidden_states + residual` before layer k); the last entry
is the last decoder layer's output before the final norm (speculators applies `verifier_norm`
itself, speculators/models/eagle3/core.py).
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import torch
from datasets import load_from_disk
from safetensors.torch import save_file
from transformers import AutoTokenizer, LlamaForCausalLM

ROWS = 24
SEED = 0


def rows(target: Path, out: Path) -> None:
    tokenizer = AutoTokenizer.from_pretrained(target)
    words = [w for w in tokenizer.get_vocab() if w.startswith("w")]
    pick = random.Random(SEED)
    lines = []
    for _ in range(ROWS):
        prompt = " ".join(pick.choices(words, k=pick.randint(6, 14)))
        answer = " ".join(pick.choices(words, k=pick.randint(10, 24)))
        asked = [{"role": "user", "content": prompt}]
        head = tokenizer.apply_chat_template(asked, add_generation_prompt=True, tokenize=False)
        full = tokenizer.apply_chat_template(
            [*asked, {"role": "assistant", "content": answer}], tokenize=False
        )
        head_ids = tokenizer(head, add_special_tokens=False)["input_ids"]
        ids = tokenizer(full, add_special_tokens=False)["input_ids"]
        assert ids[: len(head_ids)] == head_ids, "the chat template must extend the prompt"
        mask = [0] * len(head_ids) + [1] * (len(ids) - len(head_ids))
        lines.append(json.dumps({"input_ids": ids, "loss_mask": mask}))
    out.write_text("\n".join(lines) + "\n")
    print(f"rows: {len(lines)} conversations in {out}")


def hidden_states(target: Path, data: Path, layer_ids: list[int]) -> None:
    model = LlamaForCausalLM.from_pretrained(target, dtype=torch.float32).eval()
    layers = model.model.layers
    captured: dict[int, torch.Tensor] = {}

    def keep(layer: int):  # type: ignore[no-untyped-def]
        def hook(_module, args):  # type: ignore[no-untyped-def]
            captured[layer] = args[0].detach()

        return hook

    for k in layer_ids:
        (layers[k] if k < len(layers) else model.model.norm).register_forward_pre_hook(keep(k))
    last = len(layers)
    if last not in layer_ids:
        model.model.norm.register_forward_pre_hook(keep(last))
    out = data / "hidden_states"
    out.mkdir(parents=True, exist_ok=True)
    dataset = load_from_disk(str(data))
    for i, row in enumerate(dataset):
        ids = torch.as_tensor(row["input_ids"], dtype=torch.long)
        captured.clear()
        with torch.no_grad():
            model(input_ids=ids.unsqueeze(0))
        stacked = torch.stack([captured[k][0] for k in [*layer_ids, last]], dim=1)
        save_file(
            {"token_ids": ids, "hidden_states": stacked.to(torch.bfloat16).contiguous()},
            str(out / f"hs_{i}.safetensors"),
        )
    print(f"hidden states: {len(dataset)} files in {out}, each [seq, {len(layer_ids) + 1}, H]")


if __name__ == "__main__":
    command, target_dir, where, *ids = sys.argv[1:]
    if command == "rows":
        rows(Path(target_dir), Path(where))
    else:
        hidden_states(Path(target_dir), Path(where), [int(k) for k in ids])
