"""``make_mask``: the mask sources given as keywords (causal, valid lengths, key paddings, the
long-context masks, a FlexAttention mask_mod, any description or ``BlockMask``) combined into
one ``Mask``, what ``overview`` and ``attnviz.engine.make_mask`` take.

It stands above both ``mask_mods`` (the descriptions) and ``block_masks`` (a ``BlockMask`` or a
bare mask_mod read as one), which builds on ``mask_mods``: neither imports the other back.
"""

from __future__ import annotations

from typing import TypedDict

from .block_masks import as_mask
from .mask_bound import MaskModFn
from .mask_mods import (
    AllOf,
    Causal,
    KeyPadding,
    Mask,
    MaskMod,
    ValidLength,
    context_masks,
    given_masks,
)
from .validation import check_causal

__all__ = ["MaskKeywords", "make_mask"]


class MaskKeywords(TypedDict, total=False):
    """The keyword forms of the descriptions (``make_mask``'s, which ``overview`` passes on)."""

    causal: bool | str | None
    valid_lens: object
    key_padding_mask: object
    attention_mask: object
    window: int | None
    sinks: int | None
    documents: object
    prefix: int | None
    chunk: int | None
    mask_mod: MaskModFn | None


def make_mask(
    *,
    causal: bool | str | None = None,
    valid_lens: object = None,
    key_padding_mask: object = None,
    attention_mask: object = None,
    window: int | None = None,
    sinks: int | None = None,
    documents: object = None,
    prefix: int | None = None,
    chunk: int | None = None,
    mask_mod: MaskModFn | None = None,
    mask: Mask | None = None,
) -> Mask:
    """The AND of every source given, as keyword arguments (what ``overview`` accepts).

    causal            None, True / "top_left" or "bottom_right"
    valid_lens        whole number, (B,) or (B, L_q): key k allowed when k < length
    key_padding_mask  bool (L_k,) or (B, L_k), True = ignore (nn.MultiheadAttention)
    attention_mask    0/1 (L_k,) or (B, L_k), 1 = attend (Hugging Face)
    window            symmetric sliding window |p - k| < window (with ``causal``: a causal one,
                      aligned the same way)
    sinks             with ``window``: StreamingLLM sinks, a causal window plus the first keys
    documents         document ids (L,) or (B, L): block-diagonal (with ``causal``: causal within)
    prefix            prefix-LM: k < prefix or k <= q (already causal after the prefix)
    chunk             chunked local attention (with ``causal``: causal within each chunk)
    mask_mod          a FlexAttention mask_mod(b, h, q_idx, kv_idx)
    mask              any ``Mask`` description, a FlexAttention ``BlockMask`` (its block table
                      honoured) or a bare mask_mod
    """
    alignment = check_causal(causal)
    parts = given_masks(
        (alignment, Causal),
        (valid_lens, ValidLength),
        (key_padding_mask, KeyPadding.from_key_padding_mask),
        (attention_mask, KeyPadding.from_attention_mask),
    )
    parts += context_masks(alignment or "top_left", window, sinks, documents, prefix, chunk)
    parts += given_masks((mask_mod, MaskMod))
    described = as_mask(mask)
    return AllOf((*parts, *([] if described is None else [described])))
