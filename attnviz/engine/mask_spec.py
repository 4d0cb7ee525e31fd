"""The mask arguments ``attend`` has always taken, as mask descriptions.

Each argument declares what its values mean; nothing is ever guessed from the values:

  valid_lens        (B,) or (B, L_q) whole numbers: key k is valid if k < length (the book's). B is
                    the first leading dimension (the batch): every head of a batch element shares it.
                    Lengths above L_k mean "all keys valid", as in the book (huge float lengths too).
  causal            None, True / "top_left" (PyTorch's is_causal: query i sees keys 0..i) or
                    "bottom_right" (the last query lines up with the last key: a KV-cache step)
  attn_mask         broadcastable to (..., L_q, L_k), as torch SDPA reads it: bool True = attend;
                    float = added to the scores (0 / -inf, 0 / finfo.min, any bias)
  key_padding_mask  (B, L_k), as nn.MultiheadAttention reads it: bool True = ignore; float = added
  attention_mask    Hugging Face's: (B, L_k) 0/1 (int, bool or float), 1 = attend; or an expanded
                    form broadcastable to (..., L_q, L_k) with the same meaning

``mask_from_arguments`` turns them into one ``Mask`` (``ValidLength`` and ``Causal`` for the first
two, ``AttnMask``, ``KeyPaddingMask`` and ``AttentionMask`` for the tensors), which is what
``attend`` binds. Boolean sources are combined into the ``allowed`` mask (a key is attended only
if every source allows it), which the mask mode applies (``masking.MASK_MODES``). Float sources
are summed into an additive ``bias`` that is added to the scores as given, in every mode.

A tensor is never expanded to the full (..., L_q, L_k) size: it keeps its own shape, flattened to
(M, L_q or 1, L_k or 1) over the flattened leading dimensions, with an index from each of the N
flattened batch elements to its row (``mask_bound.Source``). A block of rows takes only what it
needs.
"""

from __future__ import annotations

import math

import torch

from attnviz.text.tr import QT_TRANSLATE_NOOP

from .errors import input_error
from .mask_bound import ADDITIVE_MASKED_AT, Geometry, Part, Source, SourcePart, source_index
from .mask_mods import AllOf, Causal, Mask, ValidLength, given_masks
from .validation import INT_DTYPES, as_tensor, check_causal

#: What a mask argument that is added to the scores when it is a float must be.
_KINDS = {
    "attn_mask": QT_TRANSLATE_NOOP(
        "Errors",
        "attn_mask must be a boolean tensor (True = attend) or a float tensor added to the scores, as "
        "torch SDPA reads it; got dtype {dtype} (a Hugging Face 0/1 mask goes through attention_mask=)",
    ),
    "key_padding_mask": QT_TRANSLATE_NOOP(
        "Errors",
        "key_padding_mask must be a boolean tensor (True = ignore) or a float tensor added to the "
        "scores, as nn.MultiheadAttention reads it; got dtype {dtype}",
    ),
}


class _Argument(Mask):
    """A tensor as one of ``attend``'s mask arguments declares it (``name``)."""

    name = ""

    def __init__(self, mask: object) -> None:
        self.mask = mask

    def nbytes(self, dtype: torch.dtype) -> int:
        return _converted_bytes(self.mask, dtype)

    def _tensor(self) -> torch.Tensor:
        """The mask, refused unless a boolean or a float tensor (``_KINDS`` says so)."""
        m = as_tensor(self.mask, self.name, "mask")
        if m.dtype != torch.bool and not m.is_floating_point():
            raise input_error(_KINDS[self.name], "mask", dtype=str(m.dtype))
        return m

    def _part(self, g: Geometry, values: torch.Tensor, lead_shape: tuple[int, ...] | None = None) -> list[Part]:
        """One part: ``values`` (M, L_q or 1, L_k or 1), or a (B, 1, L_k) padding form."""
        return [SourcePart(g, _source(self.name, values, _padding_lead(g) if lead_shape is None else lead_shape, g))]

    def _broadcast(self, g: Geometry, m: torch.Tensor) -> list[Part]:
        return self._part(g, *broadcast_source(m, self.name, g))


class AttnMask(_Argument):
    """SDPA's ``attn_mask``: broadcastable to (..., L_q, L_k); bool True = attend, float values
    added to the scores (0 / -inf, 0 / finfo.min, a position bias)."""

    name = "attn_mask"

    def _parts(self, g: Geometry) -> list[Part]:
        return self._broadcast(g, self._tensor())


class KeyPaddingMask(_Argument):
    """nn.MultiheadAttention's ``key_padding_mask``: (B, L_k); bool True = ignore, float values
    added to the scores."""

    name = "key_padding_mask"

    def _parts(self, g: Geometry) -> list[Part]:
        m = self._tensor()
        flat = _padding_form(m, self.name, g)
        return self._part(g, ~flat if m.dtype == torch.bool else flat)


class AttentionMask(_Argument):
    """Hugging Face's ``attention_mask``: (B, L_k) 0/1 (int, bool or float), 1 = attend; or an
    expanded form broadcastable to (..., L_q, L_k) with the same meaning."""

    name = "attention_mask"

    def _parts(self, g: Geometry) -> list[Part]:
        m = as_tensor(self.mask, self.name, "mask")
        if m.is_complex() or not (m.dtype == torch.bool or m.is_floating_point() or m.dtype in INT_DTYPES):
            raise input_error(
                QT_TRANSLATE_NOOP("Errors", "attention_mask must hold 0 and 1 (1 = attend); got dtype {dtype}"),
                "mask",
                dtype=str(m.dtype),
            )
        if m.dtype != torch.bool:
            odd = (m != 0) & (m != 1)
            if bool(odd.any()):
                raise input_error(
                    QT_TRANSLATE_NOOP(
                        "Errors",
                        "attention_mask must hold 0 and 1 (1 = attend), as Hugging Face tokenizers return it; got "
                        "{value}. An additive mask (0 and large negative numbers) goes through attn_mask=",
                    ),
                    "mask",
                    value=f"{m[odd][0].item():g}",
                )
            m = m != 0
        return self._part(g, _padding_form(m, self.name, g)) if m.dim() == 2 else self._broadcast(g, m)


def mask_from_arguments(
    valid_lens: object = None,
    causal: bool | str | None = None,
    attn_mask: object = None,
    key_padding_mask: object = None,
    attention_mask: object = None,
    mask: Mask | None = None,
) -> AllOf:
    """``attend``'s mask arguments as one description (an ``AllOf``), with ``mask`` last: the
    tensors first (additive ones are summed in this order), then the valid lengths, the causal
    mask and the description (a FlexAttention ``BlockMask`` or bare ``mask_mod`` read as one,
    ``block_masks.as_mask``)."""
    from .block_masks import as_mask  # block_masks builds on mask_mods, as this module does

    mask = as_mask(mask)
    alignment = check_causal(causal)
    given = given_masks(
        (attn_mask, AttnMask),
        (key_padding_mask, KeyPaddingMask),
        (attention_mask, AttentionMask),
        (valid_lens, ValidLength),
        (alignment, Causal),
    )
    return AllOf((*given, *([] if mask is None else [mask])))


# --------------------------------------------------------------------------- sources


def _examples(lead: tuple[int, ...], n_q: int, n_k: int) -> str:
    shapes = [
        (n_q, n_k),
        (lead[0], *(1,) * (len(lead) - 1), 1, n_k),
        (lead[0], *(1,) * (len(lead) - 1), n_q, n_k),
        (*lead, n_q, n_k),
    ]
    unique = [s for i, s in enumerate(shapes) if s not in shapes[:i]]
    return ", ".join(str(s) for s in unique)


def broadcast_source(
    mask: torch.Tensor, name: str, g: Geometry, field: str = "mask"
) -> tuple[torch.Tensor, tuple[int, ...]]:
    """``mask`` as (M, L_q or 1, L_k or 1) and its leading shape, right-aligned to (*lead, L_q, L_k)."""
    target = (*g.lead, g.n_q, g.n_k)
    if (
        mask.dim() < 2
        or mask.dim() > len(target)
        or any(s not in (1, t) for s, t in zip(reversed(mask.shape), reversed(target)))
    ):
        raise input_error(
            QT_TRANSLATE_NOOP(
                "Errors",
                "{name} of shape {shape} does not broadcast to {target} (..., queries, keys); expected a shape "
                "such as {examples}",
            ),
            field,
            name=name,
            shape=tuple(mask.shape),
            target=target,
            examples=_examples(g.lead, g.n_q, g.n_k),
        )
    full = (1,) * (len(target) - mask.dim()) + tuple(mask.shape)
    return mask.reshape(math.prod(full[:-2]), full[-2], full[-1]), full[:-2]


def _padding_lead(g: Geometry) -> tuple[int, ...]:
    return (g.batch, *(1,) * (len(g.lead) - 1))


def _padding_form(mask: torch.Tensor, name: str, g: Geometry) -> torch.Tensor:
    """A (B, L_k) padding mask as (B, 1, L_k)."""
    if tuple(mask.shape) != (g.batch, g.n_k):
        raise input_error(
            QT_TRANSLATE_NOOP("Errors", "{name} must have shape {shape} (batch, keys); got {got}"),
            "mask",
            name=name,
            shape=(g.batch, g.n_k),
            got=tuple(mask.shape),
        )
    return mask.reshape(g.batch, 1, g.n_k)


def _key_only(flat: torch.Tensor, lead_shape: tuple[int, ...], n_k: int) -> bool:
    """The source masks the same keys for every query and head of a batch element: a padding form."""
    return flat.shape[1] == 1 and flat.shape[2] == n_k and all(s == 1 for s in lead_shape[1:])


def _source(name: str, values: torch.Tensor, lead_shape: tuple[int, ...], g: Geometry) -> Source:
    """A boolean source as it is, a float one checked and converted to the compute dtype."""
    index = source_index(lead_shape, g.lead)
    if values.dtype == torch.bool:
        allowed = values.to(g.device).contiguous()
        keys = allowed[:, 0, :] if _key_only(allowed, lead_shape, g.n_k) else None
        return Source(name, allowed, index, keys)
    if bool(torch.isnan(values).any()) or bool(torch.isposinf(values).any()):
        raise input_error(
            QT_TRANSLATE_NOOP(
                "Errors", "{name} contains NaN or +inf: an additive mask may hold 0, negative numbers and -inf"
            ),
            "mask",
            name=name,
        )
    converted = values.to(device=g.device, dtype=g.dtype).contiguous()
    # A conversion only ever turns finite values into -inf, never the other way.
    overflowed = int(torch.isinf(converted).sum()) - int(torch.isinf(values).sum())
    zero_one = bool(((values == 0) | (values == 1)).all()) and bool((values == 1).any())
    keys = converted[:, 0, :] > ADDITIVE_MASKED_AT if _key_only(converted, lead_shape, g.n_k) else None
    return Source(name, converted, index, keys, overflowed, zero_one)


def _converted_bytes(mask: object, dtype: torch.dtype) -> int:
    """Bytes of a mask tensor once converted: a float mask to ``dtype``, a 0/1 mask to bool."""
    if not isinstance(mask, torch.Tensor) or mask.dtype == torch.bool:
        return 0
    return mask.numel() * (math.ceil(torch.finfo(dtype).bits / 8) if mask.is_floating_point() else 1)


__all__ = ["ADDITIVE_MASKED_AT", "AttentionMask", "AttnMask", "KeyPaddingMask", "mask_from_arguments"]
