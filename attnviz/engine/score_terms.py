"""Score terms: what changes the scaled scores before the mask is applied.

Models do more to their scores than scale and mask them: they add a position bias (T5's relative
buckets, ALiBi's slope x distance), cap them (Gemma 2's and Grok's tanh soft-capping), or run a
FlexAttention ``score_mod``. A ``ScoreTerm`` describes one such step; ``attend(...,
score_terms=[...])`` binds the terms to the call, as it binds the mask, and applies them in order,
a block of rows at a time, between scaling and masking:

    masked_scores = mode(term_n(... term_1(scores)) + additive masks, allowed)

They never mask: a key is hidden by the mask description (``mask_mods``), not by a term. The
``scores`` stage stays the scaled scores before the terms.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from ..tr import QT_TRANSLATE_NOOP
from .errors import input_error
from .mask_bound import Geometry, Source, source_index
from .mask_spec import broadcast_source
from .validation import as_tensor, check_real, first_nonfinite


class BoundTerm:
    """A score term bound to a call."""

    def apply(self, scores: torch.Tensor, n0: int, n1: int, r0: int, r1: int) -> torch.Tensor:
        """The scores of flattened elements n0:n1, query rows r0:r1, with the term applied (a new
        tensor: ``scores`` may be a stage that is kept)."""
        raise NotImplementedError


class ScoreTerm:
    """One step applied to the scaled scores before the mask (see the module's note)."""

    def bind(self, g: Geometry) -> BoundTerm:
        raise NotImplementedError

    def nbytes(self, dtype: torch.dtype) -> int:
        """Bytes a call bound to this term holds (the memory budget counts them)."""
        return 0


class ScoreBias(ScoreTerm):
    """Values added to the scaled scores: a relative-position bias, ALiBi's slope x distance, any
    finite bias broadcastable to (..., L_q, L_k). Unlike an additive mask it never masks, so every
    value must be finite."""

    def __init__(self, values: object, name: str = "score bias") -> None:
        self.values, self.name = values, name

    def nbytes(self, dtype: torch.dtype) -> int:
        t = self.values
        return t.numel() * math.ceil(torch.finfo(dtype).bits / 8) if isinstance(t, torch.Tensor) else 0

    def bind(self, g: Geometry) -> BoundTerm:
        t = check_real(as_tensor(self.values, self.name, "score_terms"), self.name, "score_terms")
        idx = first_nonfinite(t)
        if idx is not None:
            raise input_error(
                QT_TRANSLATE_NOOP(
                    "Errors",
                    "{name} holds a value that is not finite at {idx}: a score bias is added to the scores and "
                    "never masks (a mask goes through attn_mask= or mask=)",
                ),
                "score_terms",
                name=self.name,
                idx=idx,
            )
        flat, lead_shape = broadcast_source(t, self.name, g, "score_terms")
        converted = flat.to(device=g.device, dtype=g.dtype).contiguous()
        return _Added(Source(self.name, converted, source_index(lead_shape, g.lead)))


class _Added(BoundTerm):
    def __init__(self, source: Source) -> None:
        self.source = source

    def apply(self, scores: torch.Tensor, n0: int, n1: int, r0: int, r1: int) -> torch.Tensor:
        return scores + self.source.take(n0, n1, r0, r1)


class SoftCap(ScoreTerm):
    """Logit soft-capping (Gemma 2, Grok): s -> cap * tanh(s / cap), which keeps every score
    within (-cap, cap) and leaves small ones almost unchanged."""

    def __init__(self, cap: float) -> None:
        if isinstance(cap, bool) or not isinstance(cap, (int, float)) or not math.isfinite(cap) or cap <= 0:
            raise input_error(
                QT_TRANSLATE_NOOP("Errors", "a soft cap must be a finite number > 0; got {value}"),
                "score_terms",
                value=repr(cap),
            )
        self.cap = float(cap)

    def bind(self, g: Geometry) -> BoundTerm:
        return _Capped(self.cap)


class _Capped(BoundTerm):
    def __init__(self, cap: float) -> None:
        self.cap = cap

    def apply(self, scores: torch.Tensor, n0: int, n1: int, r0: int, r1: int) -> torch.Tensor:
        # Divided, squashed, multiplied: the order of Gemma 2's eager attention.
        return torch.tanh(scores / self.cap) * self.cap


def check_score_terms(terms: object) -> tuple[ScoreTerm, ...]:
    """``score_terms`` as a tuple: None, one ``ScoreTerm`` or a sequence of them."""
    if terms is None:
        return ()
    given = (terms,) if isinstance(terms, ScoreTerm) else terms
    if isinstance(given, Sequence) and all(isinstance(t, ScoreTerm) for t in given):
        return tuple(given)
    raise input_error(
        QT_TRANSLATE_NOOP("Errors", "score_terms must be ScoreTerm descriptions (ScoreBias, SoftCap); got {value}"),
        "score_terms",
        value=type(terms).__name__,
    )


__all__ = ["BoundTerm", "ScoreBias", "ScoreTerm", "SoftCap", "check_score_terms"]
