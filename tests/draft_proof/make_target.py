"""Make the proof's target: a tiny Llama-shaped model with random weights and a tokenizer built
here, saved in Hugging Face format. Nothing is downloaded.

    PROOF_PYTHON tests/draft_proof/make_target.py OUT_DIR [HIDDEN_SIZE]

Runs in the proof interpreter (torch, transformers, tokenizers: tests/draft_proof/requirements.txt).
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

SPECIALS = ("<unk>", "<s>", "</s>", "<pad>", "<mask>")
WORDS = 251  # with the specials, a 256-token vocabulary
LAYERS = 4
HIDDEN = 64
SEED = 0
# The chat template the tokenizer carries: the plain role/content turns, no model's own markup.
CHAT_TEMPLATE = (
    "{% for m in messages %}<s> {{ m['role'] }} {{ m['content'] }} </s> {% endfor %}"
    "{% if add_generation_prompt %}<s> assistant {% endif %}"
)


def words() -> list[str]:
    """The vocabulary's words: w0 ... w250, and `user`/`assistant` for the chat turns."""
    return ["user", "assistant", *(f"w{i}" for i in range(WORDS - 2))]


def tokenizer() -> PreTrainedTokenizerFast:
    vocab = {token: i for i, token in enumerate([*SPECIALS, *words()])}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    made = PreTrainedTokenizerFast(
        tokenizer_object=core,
        unk_token="<unk>",
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        mask_token="<mask>",
    )
    made.chat_template = CHAT_TEMPLATE
    return made


def config(vocab_size: int, hidden: int) -> LlamaConfig:
    return LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=LAYERS,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        rms_norm_eps=1e-5,
        tie_word_embeddings=False,
        bos_token_id=1,
        eos_token_id=2,
        pad_token_id=3,
        dtype="bfloat16",
    )


def main(out: Path, hidden: int = HIDDEN) -> None:
    torch.manual_seed(SEED)
    made = tokenizer()
    model = LlamaForCausalLM(config(len(made), hidden)).to(torch.bfloat16)
    model.save_pretrained(out)
    made.save_pretrained(out)
    print(f"target: {out} ({sum(p.numel() for p in model.parameters())} parameters)")


if __name__ == "__main__":
    main(Path(sys.argv[1]), *(int(a) for a in sys.argv[2:3]))
