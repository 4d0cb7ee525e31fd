"""Score terms: what changes the scaled scores before the mask is applied.

Models do more to their scores than scale and mask them: they add a position bias (T5's relative
buckets, ALiBi's slope x distance), cap them (Gemma 2's and Grok's tanh soft-capping), or run a
FlexAttention ``score_mod``. A ``ScoreTerm`` describes one such step; ``attend(...,
score_terms=[...])`` binds the terms to the call, as it binds the mask, and applies them in order,
a block of rows at a time, between scaling and masking:

    modified_scores = term_n(... term_1(scores))
    masked_scores = mode(modified_scores + additive masks, allowed)

They never mask: a key is hidden by the mask description (``mask_mods``), not by a term. The
``scores`` stage stays the scaled scores before the terms; ``modified_scores`` is a stage of its
own when there are terms. ``Sinks`` is the one term that acts in the softmax itself: a learned
logit per head that takes part in the normalisation without being a key (gpt-oss's ``s_aux``), so
a row's weights sum to less than 1.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import torch

from attnviz.text.tr import QT_TRANSLATE_NOOP

from .errors import input_error
from .mask_bound import Geometry, Source, source_index
from .mask_spec import broadcast_source
from .validation import as_tensor, check_real, first_nonfinite


class BoundTerm:
    """A score term bound to a call."""

    #: A term that acts in the softmax (``Sinks``), not on the scores.
    in_softmax = False

    def sink_logits(self, n0: int, n1: int, r0: int, r1: int) -> torch.Tensor:
        """(n1 - n0, 1 or r1 - r0, 1): the extra logit of flattened elements n0:n1, query rows
        r0:r1 (``in_softmax`` terms only)."""
        raise NotImplementedError

    def apply(self, scores: torch.Tensor, n0: int, n1: int, r0: int, r1: int, c0: int = 0) -> torch.Tensor:
        """The scores of flattened elements n0:n1, query rows r0:r1, keys c0:c0 + width (the
        scores' last dimension: every key for ``attend``, a run of key blocks for the overview),
        with the term applied (a new tensor: ``scores`` may be a stage that is kept)."""
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

    def apply(self, scores: torch.Tensor, n0: int, n1: int, r0: int, r1: int, c0: int = 0) -> torch.Tensor:
        added = self.source.take(n0, n1, r0, r1)
        if added.shape[-1] != 1:
            added = added[..., c0 : c0 + scores.shape[-1]]
        return scores + added


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

    def apply(self, scores: torch.Tensor, n0: int, n1: int, r0: int, r1: int, c0: int = 0) -> torch.Tensor:
        # Divided, squashed, multiplied: the order of Gemma 2's eager attention.
        return torch.tanh(scores / self.cap) * self.cap


class Alibi(ScoreTerm):
    """ALiBi (Press et al.): ``slopes[h] * (kv_idx - q_idx)`` added to head h's scores, a linear
    penalty on distance computed a block at a time (no (L_q, L_k) tensor is kept). ``slopes``:
    one per head (the queries' dimension -3), as ``alibi_slopes(heads)`` makes them. A model that
    adds ``slope * kv_idx`` instead (BLOOM) gives the same weights (a row's constant cancels in
    the softmax); its own tensor is a ``ScoreBias``."""

    def __init__(self, slopes: object, name: str = "ALiBi") -> None:
        self.slopes, self.name = slopes, name

    def nbytes(self, dtype: torch.dtype) -> int:
        t = self.slopes
        return t.numel() * 8 if isinstance(t, torch.Tensor) else 0

    def bind(self, g: Geometry) -> BoundTerm:
        per_element = _per_head(
            self.slopes,
            self.name,
            g,
            QT_TRANSLATE_NOOP("Errors", "{name} needs one finite slope per head ({heads}); got {count} values"),
        )
        return _Distance(per_element, g.n_k)


def _per_head(values: object, name: str, g: Geometry, problem: str) -> torch.Tensor:
    """``values``, one finite number per head, repeated for every (batch, head) row the engine
    flattens; else ``problem`` (with ``{name}``, ``{heads}`` and ``{count}``) as the error."""
    t = check_real(as_tensor(values, name, "score_terms"), name, "score_terms").reshape(-1)
    heads = g.lead[-1] if len(g.lead) > 1 else 1
    if t.numel() != heads or first_nonfinite(t) is not None:
        raise input_error(problem, "score_terms", name=name, heads=heads, count=t.numel())
    return t.to(device=g.device, dtype=g.dtype).repeat(g.n_flat // heads)


class _Distance(BoundTerm):
    def __init__(self, slopes: torch.Tensor, n_k: int) -> None:
        self.slopes, self.n_k = slopes, n_k

    def apply(self, scores: torch.Tensor, n0: int, n1: int, r0: int, r1: int, c0: int = 0) -> torch.Tensor:
        dev, dt = scores.device, scores.dtype
        keys = torch.arange(c0, c0 + scores.shape[-1], device=dev, dtype=dt)
        distance = keys[None, :] - torch.arange(r0, r1, device=dev, dtype=dt)[:, None]
        return scores + self.slopes[n0:n1, None, None] * distance


def alibi_slopes(heads: int) -> torch.Tensor:
    """The ALiBi slopes of ``heads`` heads (the paper's geometric sequence, interleaved for a
    number of heads that is not a power of two, as BLOOM and MPT build them)."""
    closest = 2 ** math.floor(math.log2(heads))
    base = 2.0 ** (-(2.0 ** -(math.log2(closest) - 3)))
    slopes = [base ** (i + 1) for i in range(closest)]
    if closest != heads:
        extra = 2.0 ** (-(2.0 ** -(math.log2(2 * closest) - 3)))
        slopes += [extra ** (i + 1) for i in range(0, 2 * (heads - closest), 2)]
    return torch.tensor(slopes, dtype=torch.float64)


#: FlexAttention's score_mod: (score, batch, head, q_idx, kv_idx) -> score.
ScoreModFn = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]


class ScoreMod(ScoreTerm):
    """A FlexAttention ``score_mod(score, b, h, q_idx, kv_idx) -> score``, evaluated densely a
    block of rows at a time (within the memory budget, as every stage). It is called as
    FlexAttention calls it, under ``torch.vmap`` over the query and key indices, so code that
    indexes captured tensors (``bias[b, h, q_idx, kv_idx]``, ``mask[b][0][q_idx][kv_idx]``)
    works as it does there. ``heads``: the heads of the call's leading dimensions (dimension
    -3); the flattened elements are (batch, head) pairs."""

    def __init__(self, fn: ScoreModFn, name: str = "score_mod") -> None:
        if not callable(fn):
            raise input_error(
                QT_TRANSLATE_NOOP(
                    "Errors", "score_mod must be a function (score, b, h, q_idx, kv_idx) -> score; got {type}"
                ),
                "score_terms",
                type=type(fn).__name__,
            )
        self.fn, self.name = fn, name

    def bind(self, g: Geometry) -> BoundTerm:
        heads = g.lead[-1] if len(g.lead) > 1 else 1
        return _Modified(self.fn, heads, g.n_k)


class _Modified(BoundTerm):
    def __init__(self, fn: ScoreModFn, heads: int, n_k: int) -> None:
        self.fn, self.heads, self.n_k = fn, heads, n_k
        # vmap over kv_idx (inner) then q_idx (outer), as FlexAttention evaluates a score_mod.
        inner = torch.vmap(fn, in_dims=(0, None, None, None, 0))
        self.rows = torch.vmap(inner, in_dims=(0, None, None, 0, None))

    def apply(self, scores: torch.Tensor, n0: int, n1: int, r0: int, r1: int, c0: int = 0) -> torch.Tensor:
        dev = scores.device
        q_idx = torch.arange(r0, r1, device=dev)
        kv_idx = torch.arange(c0, c0 + scores.shape[-1], device=dev)
        out = []
        for n in range(n0, n1):
            b = torch.tensor(n // self.heads, device=dev)
            h = torch.tensor(n % self.heads, device=dev)
            try:
                modified = self.rows(scores[n - n0], b, h, q_idx, kv_idx)
            except Exception as exc:  # the user's code may raise anything: say where it failed
                raise input_error(
                    QT_TRANSLATE_NOOP("Errors", "score_mod failed: {error}"),
                    "score_terms",
                    error=f"{type(exc).__name__}: {exc}",
                ) from exc
            if not isinstance(modified, torch.Tensor) or modified.shape != scores.shape[1:]:
                raise input_error(
                    QT_TRANSLATE_NOOP("Errors", "score_mod must return one score per score; got {value}"),
                    "score_terms",
                    value=tuple(modified.shape) if isinstance(modified, torch.Tensor) else type(modified).__name__,
                )
            out.append(modified.to(scores.dtype))
        return torch.stack(out)


class Sinks(ScoreTerm):
    """Attention sinks as a learned logit per head (gpt-oss's ``s_aux``): the softmax of each row
    runs over its keys and one extra logit that belongs to no key, so the row's weights sum to
    less than 1. ``values``: one per head (dimension -3 of the queries), 1-D; or one per query of
    each head (Inkling 2 projects each query's own from its hidden state), shaped as the
    queries' leading dimensions and their length, (B, H, L_q) for (B, H, L_q, d) queries."""

    def __init__(self, values: object, name: str = "sinks") -> None:
        self.values, self.name = values, name

    def nbytes(self, dtype: torch.dtype) -> int:
        t = self.values
        return t.numel() * 8 if isinstance(t, torch.Tensor) else 0

    def bind(self, g: Geometry) -> BoundTerm:
        if getattr(self.values, "ndim", 1) >= 2:  # a tensor or array per query; 1-D: per head
            return _Sink(_per_query(self.values, self.name, g))
        return _Sink(
            _per_head(
                self.values,
                self.name,
                g,
                QT_TRANSLATE_NOOP(
                    "Errors", "{name} needs one finite sink logit per head ({heads}); got {count} values"
                ),
            )
        )


class _Sink(BoundTerm):
    in_softmax = True

    def __init__(self, logits: torch.Tensor) -> None:
        self.logits = logits

    def apply(self, scores: torch.Tensor, n0: int, n1: int, r0: int, r1: int, c0: int = 0) -> torch.Tensor:
        return scores

    def sink_logits(self, n0: int, n1: int, r0: int, r1: int) -> torch.Tensor:
        if self.logits.dim() == 2:  # per query: (n_flat, L_q)
            return self.logits[n0:n1, r0:r1, None]
        return self.logits[n0:n1, None, None]


def _per_query(values: object, name: str, g: Geometry) -> torch.Tensor:
    """(n_flat, L_q): ``values``, one finite sink logit per query of every (batch, head) element,
    given as the queries' leading dimensions and length (size-1 axes broadcast)."""
    t = check_real(as_tensor(values, name, "score_terms"), name, "score_terms")
    target = (*g.lead, g.n_q)
    fits = t.dim() == len(target) and all(n in (1, m) for n, m in zip(t.shape, target))
    if not fits or first_nonfinite(t) is not None:
        raise input_error(
            QT_TRANSLATE_NOOP(
                "Errors", "{name} needs one finite sink logit per head, or per query of each head {shape}; got {got}"
            ),
            "score_terms",
            name=name,
            shape=target,
            got=tuple(t.shape),
        )
    t = t.expand(target)
    return t.to(device=g.device, dtype=g.dtype).reshape(g.n_flat, g.n_q)


def check_score_terms(terms: object) -> tuple[ScoreTerm, ...]:
    """``score_terms`` as a tuple: None, one ``ScoreTerm`` or a sequence of them."""
    if terms is None:
        return ()
    given = (terms,) if isinstance(terms, ScoreTerm) else terms
    if isinstance(given, Sequence) and all(isinstance(t, ScoreTerm) for t in given):
        return tuple(given)
    raise input_error(
        QT_TRANSLATE_NOOP(
            "Errors",
            "score_terms must be ScoreTerm descriptions (ScoreBias, SoftCap, Alibi, ScoreMod, Sinks); got {value}",
        ),
        "score_terms",
        value=type(terms).__name__,
    )


__all__ = [
    "Alibi",
    "BoundTerm",
    "ScoreBias",
    "ScoreMod",
    "ScoreModFn",
    "ScoreTerm",
    "Sinks",
    "SoftCap",
    "alibi_slopes",
    "check_score_terms",
]
