"""Tiny random Hugging Face models for the comparison, invariance and intervention tests."""

from __future__ import annotations

from typing import Any

import pytest
import torch

VOCAB = 50


def transformers() -> Any:
    return pytest.importorskip("transformers", reason="transformers is a test dependency (pip install .[test])")


def bert(layers: int = 2) -> Any:
    t = transformers()
    torch.manual_seed(0)
    config = t.BertConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        num_hidden_layers=layers,
        num_attention_heads=4,
        intermediate_size=64,
        max_position_embeddings=32,
        attn_implementation="sdpa",
    )
    return t.BertModel(config).eval()


def gpt2(layers: int = 2) -> Any:
    t = transformers()
    torch.manual_seed(0)
    config = t.GPT2Config(
        vocab_size=VOCAB,
        n_embd=32,
        n_layer=layers,
        n_head=4,
        n_positions=32,
        attn_implementation="sdpa",
        bos_token_id=1,
        eos_token_id=1,
    )
    return t.GPT2LMHeadModel(config).eval()


def llama(layers: int = 2, implementation: str = "sdpa") -> Any:
    t = transformers()
    torch.manual_seed(0)
    config = t.LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        attn_implementation=implementation,
    )
    return t.LlamaForCausalLM(config).eval()


def t5(layers: int = 2) -> Any:
    t = transformers()
    torch.manual_seed(0)
    config = t.T5Config(
        vocab_size=VOCAB,
        d_model=32,
        d_kv=8,
        d_ff=64,
        num_layers=layers,
        num_heads=4,
        decoder_start_token_id=0,
        attn_implementation="sdpa",
    )
    return t.T5ForConditionalGeneration(config).eval()


def batch(lengths: tuple[int, ...] = (6, 4, 3), side: str = "right", seed: int = 0) -> dict[str, torch.Tensor]:
    """input_ids and attention_mask of sequences of ``lengths`` padded on ``side`` with id 0."""
    g = torch.Generator().manual_seed(seed)
    n = max(lengths)
    ids = torch.zeros(len(lengths), n, dtype=torch.long)
    mask = torch.zeros(len(lengths), n, dtype=torch.long)
    for row, length in enumerate(lengths):
        real = torch.randint(1, VOCAB, (length,), generator=g)
        cols = slice(0, length) if side == "right" else slice(n - length, n)
        ids[row, cols] = real
        mask[row, cols] = 1
    return {"input_ids": ids, "attention_mask": mask}
