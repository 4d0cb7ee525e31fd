"""Masks: where they come from (valid lengths, causal, explicit) and how they are applied.

One canonical boolean mask is built from every source: ``allowed[b, q, k]`` is True when query
``q`` of batch element ``b`` may attend to key ``k``. A *mask mode* then says how that mask is
applied to the scores, reproducing the conventions that exist in practice, so the same input can
be run through each of them and compared.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

from .errors import AttentionInputError
from ..tr import QT_TRANSLATE_NOOP, message

#: The fill value of the book's ``masked_softmax``.
D2L_FILL = -1e6


@dataclass(frozen=True)
class MaskMode:
    name: str
    label: str
    description: str
    #: Turn (scores, allowed) into the tensor the softmax sees.
    apply: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
    #: Rows with no allowed key get zero weights (instead of whatever the softmax gives).
    zero_empty_rows: bool = False
    #: The mask is read with the opposite polarity (True = ignore).
    inverted: bool = False
    #: The value masked scores are replaced by, when the mode is a plain fill (None: it is not).
    #: A plain fill lets the engine mask a row's tail in place instead of building a mask.
    fill: float | None = None


def _fill(scores: torch.Tensor, allowed: torch.Tensor, value: float) -> torch.Tensor:
    # masked_fill refuses -1e6 for float16 ("cannot be converted without overflow"), while the
    # book's `X[~mask] = -1e6` silently stores -inf. Casting the fill through a tensor keeps the
    # book's behaviour: -1e6 becomes -inf in float16 and -999424 in bfloat16.
    fill = torch.tensor(value, dtype=torch.float64).to(scores.dtype).to(scores.device)
    return torch.where(allowed, scores, fill)


MASK_MODES: dict[str, MaskMode] = {
    mode.name: mode
    for mode in (
        MaskMode(
            "d2l",
            QT_TRANSLATE_NOOP("MaskModes", "Book (-1e6 fill)"),
            QT_TRANSLATE_NOOP("MaskModes", "Masked scores are replaced by -1e6 before the softmax, as in the book's "
                                           "masked_softmax. A row with no valid key gets uniform weights over all "
                                           "keys, padding included."),
            lambda s, a: _fill(s, a, D2L_FILL),
            fill=D2L_FILL,
        ),
        MaskMode(
            "strict",
            QT_TRANSLATE_NOOP("MaskModes", "Strict"),
            QT_TRANSLATE_NOOP("MaskModes", "Masked keys are excluded exactly. A row with no valid key gets zero "
                                           "weights and a zero output and is flagged; never NaN, and padded keys and "
                                           "values cannot leak in."),
            lambda s, a: _fill(s, a, float("-inf")),
            zero_empty_rows=True,
            fill=float("-inf"),
        ),
        MaskMode(
            "neg_inf",
            QT_TRANSLATE_NOOP("MaskModes", "-inf fill / additive 0/-inf mask"),
            QT_TRANSLATE_NOOP("MaskModes", "Masked scores become -inf (an additive float mask of 0 and -inf does the "
                                           "same) and a plain softmax follows: a row with no valid key becomes NaN."),
            lambda s, a: _fill(s, a, float("-inf")),
            fill=float("-inf"),
        ),
        MaskMode(
            "sdpa",
            QT_TRANSLATE_NOOP("MaskModes", "PyTorch SDPA boolean mask"),
            QT_TRANSLATE_NOOP("MaskModes", "What torch.nn.functional.scaled_dot_product_attention does with a "
                                           "boolean attn_mask (True = attend): masked scores become -inf, and a row "
                                           "with no valid key gets zero weights (PyTorch >= 2.5)."),
            lambda s, a: _fill(s, a, float("-inf")),
            zero_empty_rows=True,
            fill=float("-inf"),
        ),
        MaskMode(
            "float01",
            QT_TRANSLATE_NOOP("MaskModes", "1/0 mask passed as float (bug)"),
            QT_TRANSLATE_NOOP("MaskModes", "A 1 = keep / 0 = drop mask handed to an API that expects an additive "
                                           "float mask: it adds 1 to kept scores and 0 to dropped ones, so nothing "
                                           "is masked at all."),
            lambda s, a: s + a.to(s.dtype),
        ),
        MaskMode(
            "inverted",
            QT_TRANSLATE_NOOP("MaskModes", "Wrong polarity (bug)"),
            QT_TRANSLATE_NOOP("MaskModes", "A True = attend mask handed to an API where True = ignore (such as "
                                           "nn.MultiheadAttention's key_padding_mask): the padding is attended and "
                                           "the real keys are hidden; rows whose every key is then hidden become NaN."),
            lambda s, a: _fill(s, ~a, float("-inf")),
            inverted=True,
        ),
    )
}

CAUSAL_ALIGNMENTS = ("top_left", "bottom_right")


def check_mask_mode(mask_mode: str) -> MaskMode:
    try:
        return MASK_MODES[mask_mode]
    except (KeyError, TypeError):
        raise AttentionInputError(message(QT_TRANSLATE_NOOP("Errors", "unknown mask_mode {value}: expected one of "
                                                                      "{choices}"),
                                          value=repr(mask_mode), choices=", ".join(MASK_MODES)), "mask") from None


def check_valid_lens(
    valid_lens: object, batch: int, n_queries: int, device: torch.device
) -> torch.Tensor | None:
    """Validate valid lengths: shape (batch,) or (batch, queries), whole numbers >= 0.

    Returns an int64 tensor on ``device``. Lengths above the number of keys are kept as given
    (the book's code treats them as "all keys valid"); diagnostics report them.
    """
    if valid_lens is None:
        return None
    vl = torch.as_tensor(valid_lens)
    if vl.dtype == torch.bool or vl.is_complex() or not (vl.is_floating_point() or _is_int(vl)):
        raise AttentionInputError(message(QT_TRANSLATE_NOOP("Errors", "valid_lens must hold whole numbers, got dtype "
                                                                      "{dtype}"), dtype=str(vl.dtype)), "valid_lens")
    if vl.shape not in ((batch,), (batch, n_queries)):
        raise AttentionInputError(message(QT_TRANSLATE_NOOP(
            "Errors", "valid_lens must have shape ({batch},) or ({batch}, {n_q}) for a batch of {batch} with {n_q} "
                      "queries; got shape {shape}"),
            batch=batch, n_q=n_queries, shape=tuple(vl.shape)), "valid_lens")
    if vl.is_floating_point():
        if torch.isnan(vl).any():
            raise AttentionInputError(QT_TRANSLATE_NOOP("Errors", "valid_lens contains NaN"), "valid_lens")
        if torch.isinf(vl).any():
            raise AttentionInputError(QT_TRANSLATE_NOOP("Errors", "valid_lens contains an infinite value"), "valid_lens")
        fractional = vl != torch.floor(vl)
        if fractional.any():
            bad = vl[fractional][0].item()
            raise AttentionInputError(message(QT_TRANSLATE_NOOP("Errors", "valid lengths must be whole numbers; got "
                                                                          "{value}"), value=f"{bad:g}"), "valid_lens")
    if (vl < 0).any():
        bad = vl[vl < 0][0].item()
        raise AttentionInputError(message(QT_TRANSLATE_NOOP("Errors", "valid lengths must be >= 0; got {value}"),
                                          value=f"{bad:g}"), "valid_lens")
    return vl.to(device=device, dtype=torch.int64)


def causal_problem(causal: object) -> str:
    """The error for a ``causal`` argument that is none of the accepted values."""
    return message(QT_TRANSLATE_NOOP("Errors", "causal must be None, True, 'top_left' or 'bottom_right'; got {value}"),
                   value=repr(causal))


def _is_int(t: torch.Tensor) -> bool:
    return t.dtype in (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)


def _check_bool_mask(mask: object, name: str, shapes: tuple[tuple[int, ...], ...], device: torch.device) -> torch.Tensor:
    m = torch.as_tensor(mask)
    if m.dtype != torch.bool:
        raise AttentionInputError(message(QT_TRANSLATE_NOOP(
            "Errors", "{name} must be a boolean tensor (an additive float mask is a mask_mode, not a source); got "
                      "dtype {dtype}"), name=name, dtype=str(m.dtype)), "mask")
    if tuple(m.shape) not in shapes:
        if len(shapes) == 1:
            wrong = message(QT_TRANSLATE_NOOP("Errors", "{name} must have shape {shape}; got {got}"),
                            name=name, shape=shapes[0], got=tuple(m.shape))
        else:
            wrong = message(QT_TRANSLATE_NOOP("Errors", "{name} must have shape {shape} or {other}; got {got}"),
                            name=name, shape=shapes[0], other=shapes[1], got=tuple(m.shape))
        raise AttentionInputError(wrong, "mask")
    return m.to(device)


@dataclass(frozen=True)
class MaskSpec:
    """Every mask source, validated; builds the canonical ``allowed`` mask a block of rows at a time."""

    batch: int
    n_queries: int
    n_keys: int
    valid_lens: torch.Tensor | None = None  # int64, (B,) or (B, Q)
    causal: str | None = None  # None, "top_left" or "bottom_right"
    attn_mask: torch.Tensor | None = None  # bool, (Q, K) or (B, Q, K); True = attend
    key_padding_mask: torch.Tensor | None = None  # bool, (B, K); True = ignore

    @staticmethod
    def build(
        batch: int,
        n_queries: int,
        n_keys: int,
        device: torch.device,
        valid_lens: object = None,
        causal: bool | str | None = None,
        attn_mask: object = None,
        key_padding_mask: object = None,
    ) -> "MaskSpec":
        if causal is True:
            causal = "top_left"  # PyTorch's is_causal convention
        elif causal is False:
            causal = None
        if causal is not None and causal not in CAUSAL_ALIGNMENTS:
            raise AttentionInputError(causal_problem(causal), "mask")
        am = None
        if attn_mask is not None:
            am = _check_bool_mask(
                attn_mask, "attn_mask", ((n_queries, n_keys), (batch, n_queries, n_keys)), device
            )
            if am.dim() == 2:
                am = am.unsqueeze(0)
        kpm = None
        if key_padding_mask is not None:
            kpm = _check_bool_mask(key_padding_mask, "key_padding_mask", ((batch, n_keys),), device)
        return MaskSpec(
            batch,
            n_queries,
            n_keys,
            check_valid_lens(valid_lens, batch, n_queries, device),
            causal,
            am,
            kpm,
        )

    @property
    def is_empty(self) -> bool:
        """No mask source at all: every query sees every key."""
        return (
            self.valid_lens is None
            and self.causal is None
            and self.attn_mask is None
            and self.key_padding_mask is None
        )

    @property
    def is_prefix(self) -> bool:
        """Only 1-D valid lengths: every row of a batch element keeps the same leading keys."""
        return (
            self.valid_lens is not None
            and self.valid_lens.dim() == 1
            and self.causal is None
            and self.attn_mask is None
            and self.key_padding_mask is None
        )

    def rows(
        self, start: int, stop: int, device: torch.device, batch: int | None = None
    ) -> torch.Tensor | None:
        """``allowed`` for queries ``start:stop``, shape (B or 1, stop-start, K); None if unmasked.

        With ``batch``, only that batch element's rows, shape (1, stop-start, K).
        """
        if self.is_empty:
            return None
        if batch is not None:
            return self._select(batch).rows(start, stop, device)
        keys = torch.arange(self.n_keys, device=device)
        allowed: torch.Tensor | None = None

        def both(m: torch.Tensor) -> torch.Tensor:
            return m if allowed is None else allowed & m

        if self.valid_lens is not None:
            vl = self.valid_lens
            # 1-D: one length per batch element for every query (the book repeats it per query).
            lens = vl[:, None, None] if vl.dim() == 1 else vl[:, start:stop, None]
            allowed = both(keys[None, None, :] < lens)
        if self.causal is not None:
            q = torch.arange(start, stop, device=device)[:, None]
            # Bottom-right alignment lines the last query up with the last key, which is what
            # decoding with a KV cache needs when there are more keys than queries.
            offset = self.n_keys - self.n_queries if self.causal == "bottom_right" else 0
            allowed = both((keys[None, :] <= q + offset)[None])
        if self.attn_mask is not None:
            allowed = both(self.attn_mask[:, start:stop])
        if self.key_padding_mask is not None:
            allowed = both(~self.key_padding_mask[:, None, :])
        assert allowed is not None
        return allowed

    def empty_rows(
        self, start: int, stop: int, device: torch.device, batch: int | None = None
    ) -> torch.Tensor | None:
        """Rows with no allowed key, when that follows from the sources without the mask
        (valid lengths alone, or a causal mask alone); None when the mask must be looked at."""
        spec = self if batch is None else self._select(batch)
        only_lens = spec.causal is None and spec.attn_mask is None and spec.key_padding_mask is None
        if spec.valid_lens is not None and only_lens:
            vl = spec.valid_lens
            lens = vl[:, None].expand(vl.shape[0], stop - start) if vl.dim() == 1 else vl[:, start:stop]
            return lens == 0
        if spec.causal is not None and spec.valid_lens is None and spec.attn_mask is None and spec.key_padding_mask is None:
            q = torch.arange(start, stop, device=device)
            offset = spec.n_keys - spec.n_queries if spec.causal == "bottom_right" else 0
            return (q + offset < 0).unsqueeze(0)
        return None

    def _select(self, b: int) -> "MaskSpec":
        def pick(t: torch.Tensor | None) -> torch.Tensor | None:
            if t is None:
                return None
            return t if t.shape[0] == 1 else t[b : b + 1]

        return MaskSpec(1, self.n_queries, self.n_keys, pick(self.valid_lens), self.causal,
                        pick(self.attn_mask), pick(self.key_padding_mask))

    def full(self, device: torch.device) -> torch.Tensor:
        """The whole ``allowed`` mask, shape (B, Q, K)."""
        rows = self.rows(0, self.n_queries, device)
        if rows is None:
            return torch.ones(self.batch, self.n_queries, self.n_keys, dtype=torch.bool, device=device)
        return rows.expand(self.batch, self.n_queries, self.n_keys).contiguous()

    def valid_lens_over_keys(self) -> torch.Tensor | None:
        """Which valid lengths exceed the number of keys (the book then treats all keys as valid)."""
        if self.valid_lens is None:
            return None
        return self.valid_lens > self.n_keys
