"""Mask modes: how the mask built from every source is applied to the scores.

One canonical boolean mask is built from the boolean sources (``mask_spec``): ``allowed`` is True
where a query may attend to a key. A *mask mode* says how that mask is applied to the scores,
reproducing the conventions that exist in practice, so the same input can be run through each of
them and compared.

Additive (float) masks: ``attn_mask`` and ``key_padding_mask`` given as float tensors are what
torch SDPA and nn.MultiheadAttention add to the scores, and so does every model that builds its
mask as 0 / -inf or 0 / finfo.min. They are a property of the model, not a masking convention:
in every mode they are summed and added to the (scaled) scores as given, before the mode fills
the keys the boolean mask hides. So ``masked_scores`` = mode(scores + bias, allowed), and

- with only an additive mask, every mode computes softmax(scores + mask) exactly as the model's
  eager code does: 0 / finfo.min rows that mask every key get the model's uniform weights;
- a key whose bias is -inf can never be attended; a row left with no such key (and no key the
  boolean mask allows) is an *empty row*, as a row with no valid length is. The mode decides what
  it gets: "sdpa" and "strict" give zero weights and a zero output, which is exactly what torch
  2.13's SDPA returns for a fully masked row, boolean or additive (its safe softmax, since 2.5);
  "neg_inf" gives NaN, which is what nn.MultiheadAttention returns with need_weights=True (and in
  its eval fast path) for a query whose every key is padding; "d2l" gives what the plain softmax
  of an all -inf row gives (NaN), and uniform weights over the keys it fills with -1e6;
- the boolean sources are applied by the mode as before, so the book's valid lengths keep the
  book's -1e6 fill under "d2l", and the two bug modes ("float01", "inverted") misapply the boolean
  mask only: a float mask is already additive, there is nothing to misread.

The default mode ("d2l") thus reproduces the book for valid lengths and the model (and SDPA) for
additive masks on every row that has a key left; "sdpa" reproduces torch SDPA on every row, for
boolean masks too. The ``mask`` stage and the diagnostics count a key as masked by an additive
mask when its value is at or below ``mask_bound.ADDITIVE_MASKED_AT`` (-1e4); that is a reading
for display, never used to compute.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from attnviz.state import catalog
from attnviz.text.tr import QT_TRANSLATE_NOOP

from .errors import choose

#: The fill value of the book's ``masked_softmax``.
D2L_FILL = -1e6


@dataclass(frozen=True)
class MaskMode:
    """How a mask mode computes; what it is called and what it does, in words, is in
    ``attnviz.state.catalog.MASK_MODES`` (``label``, ``description``)."""

    name: str
    #: Turn (scores, allowed) into the tensor the softmax sees.
    apply: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
    #: Rows with no allowed key get zero weights (instead of whatever the softmax gives).
    zero_empty_rows: bool = False
    #: The mask is read with the opposite polarity (True = ignore).
    inverted: bool = False
    #: The value masked scores are replaced by, when the mode is a plain fill (None: it is not).
    #: A plain fill lets the engine mask a row's tail in place instead of building a mask.
    fill: float | None = None

    @property
    def label(self) -> str:
        return catalog.MASK_MODES[self.name].label

    @property
    def description(self) -> str:
        return catalog.MASK_MODES[self.name].description


def _fill(scores: torch.Tensor, allowed: torch.Tensor, value: float) -> torch.Tensor:
    # masked_fill refuses -1e6 for float16 ("cannot be converted without overflow"), while the
    # book's `X[~mask] = -1e6` silently stores -inf. Casting the fill through a tensor keeps the
    # book's behaviour: -1e6 becomes -inf in float16 and -999424 in bfloat16.
    fill = torch.tensor(value, dtype=torch.float64).to(scores.dtype).to(scores.device)
    return torch.where(allowed, scores, fill)


def _filling(name: str, value: float, zero_empty_rows: bool = False) -> MaskMode:
    """A mode that replaces masked scores by ``value``."""
    return MaskMode(name, lambda s, a: _fill(s, a, value), zero_empty_rows=zero_empty_rows, fill=value)


MASK_MODES: dict[str, MaskMode] = {
    mode.name: mode
    for mode in (
        _filling("d2l", D2L_FILL),
        _filling("strict", float("-inf"), zero_empty_rows=True),
        _filling("neg_inf", float("-inf")),
        _filling("sdpa", float("-inf"), zero_empty_rows=True),
        MaskMode("float01", lambda s, a: s + a.to(s.dtype)),
        MaskMode("inverted", lambda s, a: _fill(s, ~a, float("-inf")), inverted=True),
    )
}


#: The error for a name that is not in ``MASK_MODES``.
_UNKNOWN = QT_TRANSLATE_NOOP("Errors", "unknown mask_mode {value}: expected one of {choices}")


def check_mask_mode(mask_mode: str) -> MaskMode:
    return choose(MASK_MODES, mask_mode, _UNKNOWN, "mask")
