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
    one, as when a BOS is prepended to the mask but not to the ids; ``fill``: what comes in at
    the start, 0 or 1)."""

    def __init__(self, bug: bool = False, causal: bool = False, fill: bool = False) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.bug, self.causal, self.fill = bug, causal, fill
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH)
        self.eval()

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        x = self.embed(input_ids)
        keep = attention_mask.bool()
        if self.bug:
            keep = F.pad(keep, (1, 0), value=self.fill)[:, :-1]
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


# ----------------------------------------------------------------------------- (a), (b), (g): a rotary decoder


def rotate(x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """Rotary embedding of (B, H, L, d) at (B, L) positions."""
    d = x.shape[-1]
    freq = 1.0 / (100.0 ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
    angle = positions[:, None, :, None].float() * freq  # (B, 1, L, d/2)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], -1).flatten(-2)


class RotaryLayer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q = nn.Linear(WIDTH, WIDTH)
        self.kv = nn.Linear(WIDTH, WIDTH)  # 2 KV heads of 4: grouped-query attention
        self.attention_dropout = 0.2

    def forward(self, x: torch.Tensor, positions: torch.Tensor, allowed: torch.Tensor, past: Any) -> tuple[Any, Any]:
        q = rotate(heads(self.q(x), 4), positions)
        k, v = (heads(t, 2) for t in self.kv(x).chunk(2, -1))
        k = rotate(k, positions)
        if past is not None:
            k, v = torch.cat([past[0], k], 2), torch.cat([past[1], v], 2)
        out = F.scaled_dot_product_attention(
            q, k, v, attn_mask=allowed, enable_gqa=True, dropout_p=self.attention_dropout if self.training else 0.0
        )
        return x + merged(out), (k, v)


class RotaryDecoder(nn.Module):
    """A causal decoder with rotary positions, grouped-query attention and a KV cache (a list of
    (keys, values)); ``absolute``: learned absolute positions added to the embeddings too.
    ``restart_positions``: a cached step's positions start at 0 again instead
    of at the cache's length (the bug); its full forward is the correct model's."""

    def __init__(self, restart_positions: bool = False, layers: int = 2, absolute: bool = False) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.restart = restart_positions
        self.embed = nn.Embedding(VOCAB, WIDTH)
        # Learned absolute positions as well (GPT-2's): rotary alone ignores a constant offset.
        self.positions = nn.Embedding(64, WIDTH) if absolute else None
        self.layers = nn.ModuleList(RotaryLayer() for _ in range(layers))
        self.config = SimpleNamespace(pad_token_id=0)
        self.eval()

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
        past_key_values: list[Any] | None = None,
        use_cache: bool = False,
    ) -> tuple[torch.Tensor, list[Any]]:
        b, n = input_ids.shape
        cached = 0 if past_key_values is None else past_key_values[0][0].shape[2]
        if position_ids is None:
            origin = 0 if self.restart else cached
            position_ids = torch.arange(origin, origin + n).expand(b, n)
        total = cached + n
        keep = torch.ones(b, total, dtype=torch.bool) if attention_mask is None else attention_mask.bool()
        causal = torch.ones(n, total, dtype=torch.bool).tril(total - n)  # bottom-right
        allowed = keep[:, None, None, :] & causal
        x = self.embed(input_ids)
        if self.positions is not None:
            x = x + self.positions(position_ids)
        cache = []
        for i, layer in enumerate(self.layers):
            x, kv = layer(x, position_ids, allowed, None if past_key_values is None else past_key_values[i])
            cache.append(kv)
        return x, cache


# ----------------------------------------------------------------------------- (c): KV heads grouped otherwise


def regrouped_eager(
    module: Any,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: Any,
    scaling: float = 1.0,
    dropout: float = 0.0,
    **kwargs: Any,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Eager attention whose KV heads are expanded with ``repeat`` (head h reads KV head
    h % H_kv) where the model's SDPA path groups them (head h reads h // groups)."""
    groups = query.shape[1] // key.shape[1]
    key, value = key.repeat(1, groups, 1, 1), value.repeat(1, groups, 1, 1)
    scores = query @ key.transpose(-1, -2) * scaling
    if attention_mask is not None:
        scores = scores + attention_mask[..., : key.shape[-2]]
    weights = scores.softmax(-1)
    return (weights @ value).transpose(1, 2).contiguous(), weights


def register_regrouped() -> str:
    """The buggy eager path as a transformers attention implementation; its name."""
    from transformers import AttentionInterface, masking_utils

    AttentionInterface.register("attnviz_regrouped", regrouped_eager)
    masking_utils.AttentionMaskInterface.register("attnviz_regrouped", masking_utils.eager_mask)
    return "attnviz_regrouped"


# ----------------------------------------------------------------------------- factories for attnviz check
#: Each class of bug: (the bug's factory, its twin's, the checks that find it, extra options).


def positions_restarted() -> tuple[Any, dict[str, Any]]:
    return RotaryDecoder(restart_positions=True), padded((6, 6, 6))


def positions_offset() -> tuple[Any, dict[str, Any]]:
    return RotaryDecoder(), padded((6, 6, 6))


def dropout_on() -> tuple[Any, dict[str, Any]]:
    return RotaryDecoder().train(), padded((6, 4, 3))


def dropout_off() -> tuple[Any, dict[str, Any]]:
    return RotaryDecoder().eval(), padded((6, 4, 3))


def regrouped() -> tuple[Any, dict[str, Any]]:
    from .models import batch, llama

    register_regrouped()
    return llama(), batch((6, 6, 6))


def mask_order(bug: bool = True) -> tuple[Any, dict[str, Any]]:
    return MhaEncoder(bug), padded((6, 4, 3))


def mask_order_twin() -> tuple[Any, dict[str, Any]]:
    return mask_order(False)


def shifted(bug: bool = True) -> tuple[Any, dict[str, Any]]:
    return ShiftedEncoder(bug), padded((6, 4, 3))


def shifted_twin() -> tuple[Any, dict[str, Any]]:
    return shifted(False)


def shifted_filled(bug: bool = True) -> tuple[Any, dict[str, Any]]:
    return ShiftedEncoder(bug, fill=True), padded((6, 4, 3))


def shifted_filled_twin() -> tuple[Any, dict[str, Any]]:
    return shifted_filled(False)


def shifted_causal_left(bug: bool = True) -> tuple[Any, dict[str, Any]]:
    return ShiftedEncoder(bug, causal=True), padded((6, 4, 3), side="left")


def shifted_causal_left_twin() -> tuple[Any, dict[str, Any]]:
    return shifted_causal_left(False)


def shifted_causal_right(bug: bool = True) -> tuple[Any, dict[str, Any]]:
    return ShiftedEncoder(bug, causal=True), padded((6, 4, 3))


def shifted_causal_right_twin() -> tuple[Any, dict[str, Any]]:
    return shifted_causal_right(False)


def wrong_source(bug: bool = True) -> tuple[Any, dict[str, Any]]:
    return Seq2Seq(bug), seq2seq_inputs()


def wrong_source_twin() -> tuple[Any, dict[str, Any]]:
    return wrong_source(False)


def arange_positions(bug: bool = True) -> tuple[Any, dict[str, Any]]:
    inputs = padded((6, 4, 3), side="left")
    keep = inputs["attention_mask"]
    inputs["position_ids"] = torch.arange(6).expand(3, 6) if bug else (keep.cumsum(-1) - 1).clamp(min=0)
    return RotaryDecoder(absolute=True), inputs


def arange_positions_twin() -> tuple[Any, dict[str, Any]]:
    return arange_positions(False)


class EagerSelfAttention(nn.Module):
    """Attention code of its own (BERT's eager layout): softmax, then nn.Dropout on the weights."""

    def __init__(self) -> None:
        super().__init__()
        self.num_attention_heads = 2
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH)
        self.dropout = nn.Dropout(0.3)

    def forward(self, x: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        q, k, v = (heads(t, 2) for t in self.qkv(x).chunk(3, -1))
        scores = q @ k.transpose(-1, -2) / (q.shape[-1] ** 0.5)
        scores = scores.masked_fill(~attention_mask.bool()[:, None, None, :], torch.finfo(scores.dtype).min)
        weights = self.dropout(scores.softmax(-1))
        return x + merged(weights @ v)


class EagerEncoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.attention = EagerSelfAttention()
        self.eval()

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.attention(self.embed(input_ids), attention_mask)


def unscaled_eager(
    module: Any,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: Any,
    scaling: float = 1.0,
    dropout: float = 0.0,
    **kwargs: Any,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Eager attention that forgets to scale the scores (SDPA scales by 1/sqrt(d))."""
    groups = query.shape[1] // key.shape[1]
    key, value = key.repeat_interleave(groups, 1), value.repeat_interleave(groups, 1)
    scores = query @ key.transpose(-1, -2)
    if attention_mask is not None:
        scores = scores + attention_mask[..., : key.shape[-2]]
    weights = scores.softmax(-1)
    return (weights @ value).transpose(1, 2).contiguous(), weights


def register_unscaled() -> str:
    from transformers import AttentionInterface, masking_utils

    AttentionInterface.register("attnviz_unscaled", unscaled_eager)
    masking_utils.AttentionMaskInterface.register("attnviz_unscaled", masking_utils.eager_mask)
    return "attnviz_unscaled"


# ----------------------------------------------------------------------------- (f) wrong source, other lengths


class LengthSeq2Seq(Seq2Seq):
    """Encoder and decoder of different lengths; the bug: cross-attention's mask over the
    encoder's keys built from the decoder's lengths (``arange(L_enc) < decoder_lengths``, as
    speech and translation code writes masks; ``fit="lengths"``), or the decoder's attention mask
    cut or padded with zeros to the encoder's length (``fit="mask"``)."""

    def __init__(self, bug: bool = False, fit: str = "lengths") -> None:
        super().__init__(bug)
        self.fit = fit

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        decoder_input_ids: torch.Tensor,
        decoder_attention_mask: torch.Tensor,
    ) -> torch.Tensor:
        n_enc, n_dec = input_ids.shape[1], decoder_input_ids.shape[1]
        enc_keep = attention_mask.bool()[:, None, None, :]
        dec_keep = decoder_attention_mask.bool()[:, None, None, :]
        if not self.bug:
            cross = enc_keep
        elif self.fit == "lengths":
            dec_len = decoder_attention_mask.sum(-1)
            cross = (torch.arange(n_enc)[None] < dec_len[:, None])[:, None, None, :]
        else:
            fitted = decoder_attention_mask[:, :n_enc]
            fitted = F.pad(fitted, (0, n_enc - fitted.shape[1]))
            cross = fitted.bool()[:, None, None, :]
        memory = self.encoder["self_attn"](self.embed(input_ids), self.embed(input_ids), enc_keep)
        y = self.embed(decoder_input_ids)
        y = self.decoder["self_attn"](y, y, dec_keep & torch.ones(n_dec, n_dec, dtype=torch.bool).tril())
        return self.decoder["cross_attn"](y, memory, cross)


def seq2seq_lengths(encoder: tuple[int, ...], decoder: tuple[int, ...]) -> dict[str, Any]:
    enc = padded(encoder, seed=1)
    dec = padded(decoder, seed=2)
    return {**enc, "decoder_input_ids": dec["input_ids"], "decoder_attention_mask": dec["attention_mask"]}


def longer_encoder(bug: bool = True, fit: str = "lengths") -> tuple[Any, dict[str, Any]]:
    return LengthSeq2Seq(bug, fit), seq2seq_lengths((7, 3, 5), (4, 2, 3))


def longer_encoder_twin() -> tuple[Any, dict[str, Any]]:
    return longer_encoder(False)


def longer_decoder(bug: bool = True, fit: str = "lengths") -> tuple[Any, dict[str, Any]]:
    return LengthSeq2Seq(bug, fit), seq2seq_lengths((4, 2, 3), (7, 3, 5))


def longer_decoder_twin() -> tuple[Any, dict[str, Any]]:
    return longer_decoder(False)


def fitted_mask(bug: bool = True) -> tuple[Any, dict[str, Any]]:
    return longer_encoder(bug, "mask")


def fitted_mask_twin() -> tuple[Any, dict[str, Any]]:
    return fitted_mask(False)


def lengths_left_decoder(bug: bool = True) -> tuple[Any, dict[str, Any]]:
    """A left-padded decoder: ``arange(L_enc) < decoder_lengths`` is then no cut of its mask."""
    enc = padded((7, 3, 5), seed=1)
    dec = padded((4, 2, 3), side="left", seed=2)
    inputs = {**enc, "decoder_input_ids": dec["input_ids"], "decoder_attention_mask": dec["attention_mask"]}
    return LengthSeq2Seq(bug), inputs


def lengths_left_decoder_twin() -> tuple[Any, dict[str, Any]]:
    return lengths_left_decoder(False)


def same_padding(bug: bool = True) -> tuple[Any, dict[str, Any]]:
    """The decoder's mask on encoder keys in a batch whose two paddings agree: invisible in the
    batch, a crash on a sequence alone (its encoder cut to its length, its decoder not)."""
    enc = padded((6, 3, 5), seed=1)
    dec = padded((6, 3, 5), seed=2)
    return Seq2Seq(bug), {**enc, "decoder_input_ids": dec["input_ids"], "decoder_attention_mask": dec["attention_mask"]}


def same_padding_twin() -> tuple[Any, dict[str, Any]]:
    return same_padding(False)


# ----------------------------------------------------------------------------- positions in one capture

BOS = 1


def with_bos(inputs: dict[str, Any]) -> dict[str, Any]:
    """Every sequence's first real token made BOS (id 1), as tokenizers add it."""
    keep = inputs["attention_mask"]
    for row in range(keep.shape[0]):
        inputs["input_ids"][row, int(keep[row].argmax())] = BOS
    return inputs


def arange_positions_bos(bug: bool = True, absolute: bool = True) -> tuple[Any, dict[str, Any]]:
    """``arange_positions`` with a BOS first: two batch elements then share a first token."""
    model, inputs = arange_positions(bug)
    return RotaryDecoder(absolute=absolute), with_bos(inputs)


def arange_positions_bos_twin() -> tuple[Any, dict[str, Any]]:
    return arange_positions_bos(False)


def cached_step(model: Any, inputs: dict[str, Any], prefill: int, step: torch.Tensor) -> dict[str, Any]:
    """The arguments of a one-token cached step after a prefill of ``prefill`` tokens (run here)."""
    with torch.no_grad():
        out = model(
            inputs["input_ids"][:, :prefill], attention_mask=inputs["attention_mask"][:, :prefill], use_cache=True
        )
    cache = out[1] if isinstance(out, tuple) else out.past_key_values
    keep = inputs["attention_mask"][:, : prefill + 1]
    return {"input_ids": step, "attention_mask": keep, "past_key_values": cache, "use_cache": True}
