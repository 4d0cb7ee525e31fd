"""Tiny hand-written models with one realistic mask or position bug each, and a correct twin with
the same weights (``bug=False``): what the doctor and the invariance checks must tell apart.

Every model takes a tokenizer's batch (``input_ids``, ``attention_mask``; the encoder-decoder
also ``decoder_input_ids``, ``decoder_attention_mask``) and returns its last hidden states, so
``attnviz check`` runs it as it runs a transformers model. Factories of ``(model, inputs)`` for
``attnviz check`` are at the end.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

VOCAB = 30
WIDTH = 16


def padded(lengths: tuple[int, ...], side: str = "right", seed: int = 0, length: int | None = None) -> dict[str, Any]:
    g = torch.Generator().manual_seed(seed)
    n = length or max(lengths)
    ids = torch.zeros(len(lengths), n, dtype=torch.long)
    mask = torch.zeros(len(lengths), n, dtype=torch.long)
    for row, real in enumerate(lengths):
        cols = slice(0, real) if side == "right" else slice(n - real, n)
        ids[row, cols] = torch.randint(1, VOCAB, (real,), generator=g)
        mask[row, cols] = 1
    return {"input_ids": ids, "attention_mask": mask}


def tokens(ids: torch.Tensor, mask: torch.Tensor) -> list[list[str]]:
    return [[f"w{int(i)}" if m else "[PAD]" for i, m in zip(row, keep)] for row, keep in zip(ids, mask)]


def heads(x: torch.Tensor, n: int) -> torch.Tensor:
    b, length, e = x.shape
    return x.reshape(b, length, n, e // n).transpose(1, 2)


def merged(x: torch.Tensor) -> torch.Tensor:
    b, h, length, d = x.shape
    return x.transpose(1, 2).reshape(b, length, h * d)


# ----------------------------------------------------------------------------- (d) mask order


class MhaEncoder(nn.Module):
    """nn.MultiheadAttention given a per-sequence (B*H, L, L) mask: expanded with ``repeat``
    (the bug: element b's heads get the masks of elements (b*H + h) % B) or ``repeat_interleave``."""

    def __init__(self, bug: bool = False, num_heads: int = 4) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.bug = bug
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.attn = nn.MultiheadAttention(WIDTH, num_heads, batch_first=True, dropout=0.0)
        self.eval()

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        x = self.embed(input_ids)
        b, n = input_ids.shape
        hide = (attention_mask == 0)[:, None, :].expand(b, n, n)  # True = masked, its convention
        h = self.attn.num_heads
        per_head = hide.repeat(h, 1, 1) if self.bug else hide.repeat_interleave(h, 0)
        out, _ = self.attn(x, x, x, attn_mask=per_head, need_weights=False)
        return x + out


# ----------------------------------------------------------------------------- (e) shifted mask


class ShiftedEncoder(nn.Module):
    """SDPA with the padding mask built one place off (the bug: the attention mask moved right by
    one, as when a BOS is prepended to the ids but not to the mask)."""

    def __init__(self, bug: bool = False, causal: bool = False) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.bug, self.causal = bug, causal
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH)
        self.eval()

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        x = self.embed(input_ids)
        keep = attention_mask.bool()
        if self.bug:
            keep = F.pad(keep, (1, 0))[:, :-1]
        n = input_ids.shape[1]
        allowed = keep[:, None, None, :]
        if self.causal:
            allowed = allowed & torch.ones(n, n, dtype=torch.bool).tril()
        q, k, v = (heads(t, 2) for t in self.qkv(x).chunk(3, -1))
        return x + merged(F.scaled_dot_product_attention(q, k, v, attn_mask=allowed))


# ----------------------------------------------------------------------------- (f) wrong source


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q = nn.Linear(WIDTH, WIDTH)
        self.kv = nn.Linear(WIDTH, 2 * WIDTH)

    def forward(self, x: torch.Tensor, memory: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
        q = heads(self.q(x), 2)
        k, v = (heads(t, 2) for t in self.kv(memory).chunk(2, -1))
        return x + merged(F.scaled_dot_product_attention(q, k, v, attn_mask=allowed))


class Seq2Seq(nn.Module):
    """An encoder (self-attention), a decoder (causal self-attention) and cross-attention whose
    mask is the encoder's padding (correct) or the decoder's (the bug)."""

    def __init__(self, bug: bool = False) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.bug = bug
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.encoder = nn.ModuleDict({"self_attn": Block()})
        self.decoder = nn.ModuleDict({"self_attn": Block(), "cross_attn": Block()})
        self.config = SimpleNamespace(is_encoder_decoder=True, pad_token_id=0)
        self.eval()

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        decoder_input_ids: torch.Tensor,
        decoder_attention_mask: torch.Tensor,
    ) -> torch.Tensor:
        enc_keep = attention_mask.bool()[:, None, None, :]
        dec_keep = decoder_attention_mask.bool()[:, None, None, :]
        memory = self.encoder["self_attn"](self.embed(input_ids), self.embed(input_ids), enc_keep)
        n = decoder_input_ids.shape[1]
        y = self.embed(decoder_input_ids)
        y = self.decoder["self_attn"](y, y, dec_keep & torch.ones(n, n, dtype=torch.bool).tril())
        return self.decoder["cross_attn"](y, memory, dec_keep if self.bug else enc_keep)


def seq2seq_inputs() -> dict[str, Any]:
    enc = padded((6, 3, 5), seed=1)
    dec = padded((4, 6, 2), seed=2)
    return {**enc, "decoder_input_ids": dec["input_ids"], "decoder_attention_mask": dec["attention_mask"]}
