"""Attention masks as composable descriptions: the engine's one mask language.

A ``Mask`` says which (query, key) pairs may attend (True = attend, PyTorch's SDPA and
FlexAttention convention), and what is added to the scores where an argument declares additive
values. It never stores an (L_q, L_k) matrix: it is a rule, or a tensor at its own broadcast size,
evaluated where needed. Descriptions combine with ``&`` (a pair is allowed only if every part
allows it; additive values are summed):

    SlidingWindow(4096, causal=True) & KeyPadding.from_attention_mask(hf_mask)
    Documents(doc_ids, causal=True)
    SinkWindow(sinks=4, window=1024)
    MaskMod(lambda b, h, q_idx, kv_idx: (q_idx - kv_idx).abs() <= 8)
    AttnMask(sdpa_mask) & ValidLength(lens) & Causal("bottom_right")

The arguments ``attend`` has always taken are descriptions too (``mask_spec``: ``AttnMask``,
``KeyPaddingMask``, ``AttentionMask``, with ``ValidLength`` and ``Causal``): its keyword forms
build them, and ``attend(..., mask=m)``, ``overview(..., mask=m)``, the labs and the doctor take
the same description.

Positions are row and column indices: query ``q`` and key ``k`` of an (L_q, L_k) score matrix.
Only ``Causal`` and ``SlidingWindow`` take an alignment: "bottom_right" lines the last query up
with the last key (query ``q`` sits at position ``q + L_k - L_q``), as decoding with a KV cache
needs; every other description uses the indices as they are, like FlexAttention's ``mask_mod``.

A description is bound once per call (``bind_call``: the call's leading dimensions, sizes, device
and dtype; see ``mask_bound.CallMask``), or to one matrix (``bind``). Bound, it gives the mask of
any block of rows and columns (``allowed``), the whole mask for small inputs (``dense``), and its
block structure (``block_structure``: which blocks are full, partial or empty, as FlexAttention's
``BlockMask`` shows it). The streaming overview (``attnviz.engine.long``) uses the block structure
to skip the blocks a mask empties, which is what makes a sliding window cheap.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from attnviz.text.tr import QT_TRANSLATE_NOOP

from .budget import BLOCK_ELEMENTS
from .errors import AttentionInputError, input_error
from .mask_bound import (
    DEFAULT_BLOCK,
    EMPTY,
    FULL,
    PARTIAL,
    PREDICATE_CELLS,
    BlockStructure,
    BoundMask,
    CallMask,
    CausalPart,
    Geometry,
    Intervals,
    IntervalTerm,
    KeyTerm,
    LengthPart,
    MaskModFn,
    Part,
    PredicateTerm,
    RowBlock,
    RulePart,
    Term,
    runs,
)
from .mask_intervals import block_bounds
from .validation import as_tensor, check_alignment, check_count, check_span, check_valid_lens

#: ``dense`` refuses larger masks (64 Mi cells = 64 MiB of booleans): long inputs use blocks.
MAX_DENSE_CELLS = 1 << 26
#: Cells a predicate is evaluated on at once (its int64 temporaries: 8 MiB each); read when a
#: description is bound.
_PREDICATE_CELLS = PREDICATE_CELLS
#: What a predicate's evaluation over one of ``attend``'s blocks holds: its int64 index
#: arithmetic (a few temporaries of the block's size).
_PREDICATE_WORK_BYTES = 3 * 8 * BLOCK_ELEMENTS


class Mask:
    """A rule for which (query, key) pairs may attend. Combine with ``&``.

    A rule says how it is evaluated for one batch element and head (``_terms``) and whether
    that differs between batch elements (``_by_batch``) or heads (``_by_head``); a description
    of a tensor as passed says how it is bound to a call (``_parts``). Everything else is shared.
    """

    def _terms(self, g: Geometry, batch: int, head: int) -> list[Term]:
        raise NotImplementedError

    def _by_batch(self) -> bool:
        return False

    def _by_head(self) -> bool:
        return False

    def _parts(self, g: Geometry) -> list[Part]:
        return [RulePart(g, lambda b, h: self._terms(g, b, h), self._by_batch(), self._by_head())]

    def nbytes(self, dtype: torch.dtype) -> int:
        """Bytes a call bound to this description holds beyond one block's mask (the memory budget
        counts them): converted tensors, a predicate's working space."""
        return 0

    def __and__(self, other: Mask) -> Mask:
        if not isinstance(other, Mask):
            return NotImplemented
        return AllOf((self, other))

    def bind_call(
        self,
        lead: int | tuple[int, ...],
        n_q: int,
        n_k: int,
        *,
        device: torch.device | str | None = None,
        dtype: torch.dtype = torch.float32,
        exact: bool = True,
    ) -> CallMask:
        """This description bound to a call: leading dimensions ``lead`` (B, or B, H, ...), an
        (n_q, n_k) score matrix per batch element and head, on ``device``, additive values in
        ``dtype``. ``exact``: per-batch tensors must have B rows (else at least B)."""
        shape = (lead,) if isinstance(lead, int) else tuple(lead)
        for size in shape or (0,):
            check_count(size, "batch", 1, "shape")
        check_count(n_q, "n_q", 1, "shape")
        check_count(n_k, "n_k", 1, "shape")
        g = Geometry(shape, n_q, n_k, torch.device(device or "cpu"), dtype, exact, _PREDICATE_CELLS)
        return CallMask(g, self._parts(g))

    def bind(
        self, n_q: int, n_k: int, *, batch: int = 0, head: int = 0, device: torch.device | str | None = None
    ) -> BoundMask:
        """This description for one (n_q, n_k) score matrix: batch element ``batch``, head ``head``
        (per-batch tensors need a row ``batch``)."""
        call = self.bind_call((int(batch) + 1, int(head) + 1), n_q, n_k, device=device, exact=False)
        return call.element(int(batch), int(head))

    def allowed(
        self, n_q: int, n_k: int, rows: slice = slice(None), cols: slice = slice(None), *, batch: int = 0, head: int = 0
    ) -> torch.Tensor:
        """The boolean mask of ``rows`` x ``cols`` (slices with step 1) of an (n_q, n_k) matrix."""
        bound = self.bind(n_q, n_k, batch=batch, head=head)
        return bound.region(*check_span(rows, n_q, "rows"), *check_span(cols, n_k, "cols"))

    def dense(self, n_q: int, n_k: int, *, batch: int = 0, head: int = 0) -> torch.Tensor:
        """The whole (n_q, n_k) boolean mask, True = attend: for small inputs. Refuses more than
        ``MAX_DENSE_CELLS`` cells."""
        if n_q * n_k > MAX_DENSE_CELLS:
            raise input_error(
                QT_TRANSLATE_NOOP(
                    "Errors",
                    "a dense mask of {n_q} x {n_k} is too large (at most {limit} cells); use the "
                    "block structure or the streaming overview instead",
                ),
                "mask",
                n_q=n_q,
                n_k=n_k,
                limit=MAX_DENSE_CELLS,
            )
        return self.allowed(n_q, n_k, batch=batch, head=head)

    def block_structure(
        self, n_q: int, n_k: int, block_size: int | tuple[int, int] = DEFAULT_BLOCK, *, batch: int = 0, head: int = 0
    ) -> BlockStructure:
        """Which (block_q x block_k) blocks are full, partial or empty. Exact: blocks the rule
        alone cannot settle are looked at cell by cell. Memory: the states, plus a block of rows
        of booleans at a time."""
        return self.bind(n_q, n_k, batch=batch, head=head).block_structure(block_size)

    def mask_mod(self, n_q: int, n_k: int, *, batch: int = 0, head: int = 0) -> MaskModFn:
        """This description as a FlexAttention ``mask_mod`` for sizes (n_q, n_k) (its ``b`` and
        ``h`` arguments are ignored: the description is bound to ``batch`` and ``head``)."""
        bound = self.bind(n_q, n_k, batch=batch, head=head)
        return lambda b, h, q_idx, kv_idx: bound.evaluate(q_idx, kv_idx)


class AllOf(Mask):
    """Every part must allow a pair (logical AND); additive values are summed in order.
    ``AllOf(())`` allows everything."""

    parts: tuple[Mask, ...]

    def __init__(self, parts: tuple[Mask, ...]) -> None:
        flat: list[Mask] = []
        for part in parts:
            if not isinstance(part, Mask):
                raise input_error(
                    QT_TRANSLATE_NOOP("Errors", "a mask combines Mask descriptions only; got {type}"),
                    "mask",
                    type=type(part).__name__,
                )
            flat.extend(part.parts if isinstance(part, AllOf) else (part,))
        self.parts = tuple(flat)

    def _parts(self, g: Geometry) -> list[Part]:
        return [bound for part in self.parts for bound in part._parts(g)]

    def nbytes(self, dtype: torch.dtype) -> int:
        return sum(part.nbytes(dtype) for part in self.parts)


class Causal(Mask):
    """Query q sees keys k <= q (top_left, PyTorch's is_causal) or k <= q + L_k - L_q (bottom_right)."""

    def __init__(self, align: str = "top_left") -> None:
        self.align = check_alignment(align)

    def _parts(self, g: Geometry) -> list[Part]:
        return [CausalPart(g, self.align)]


class SlidingWindow(Mask):
    """Keys within ``size`` positions of the query p (p = q, or q + L_k - L_q bottom_right).

    causal:    0 <= p - k < size  (the query and the size - 1 keys before it: Mistral's and
               Hugging Face's ``sliding_window``)
    symmetric: |p - k| < size     (size - 1 keys either side, 2 size - 1 in all)
    """

    def __init__(self, size: int, causal: bool = False, align: str = "top_left") -> None:
        self.size = check_count(size, "window", minimum=1)
        self.causal = causal
        self.align = check_alignment(align)

    def _terms(self, g: Geometry, batch: int, head: int) -> list[Term]:
        off, size, causal = _offset(self.align, g), self.size, self.causal
        return [IntervalTerm(lambda q: [(q + off - size + 1, q + off + 1 if causal else q + off + size)])]

    # The window conventions differ by one (README, "Window conventions"): each reads its own.

    @classmethod
    def from_flex_attention(cls, window_size: int) -> SlidingWindow:
        """FlexAttention's examples and attn-gym's ``generate_sliding_window(window_size)``:
        causal and ``q_idx - kv_idx <= window_size``, so ``window_size + 1`` keys."""
        return cls(check_count(window_size, "window", minimum=0) + 1, causal=True)

    @classmethod
    def from_hugging_face(cls, sliding_window: int) -> SlidingWindow:
        """A Hugging Face config's ``sliding_window`` (transformers' ``sliding_window_overlay``:
        causal and ``kv_idx > q_idx - sliding_window``), so ``sliding_window`` keys."""
        return cls(sliding_window, causal=True)

    @classmethod
    def from_mistral(cls, sliding_window: int) -> SlidingWindow:
        """Mistral's reference code (``torch.triu(torch.tril(mask), diagonal=-sliding_window)``):
        causal and ``q - k <= sliding_window``, so ``sliding_window + 1`` keys."""
        return cls(check_count(sliding_window, "window", minimum=0) + 1, causal=True)


class SinkWindow(Mask):
    """StreamingLLM's attention sinks: a causal window of ``window`` keys (the query and the
    ``window - 1`` before it) plus the first ``sinks`` keys, which every query sees (causally)."""

    def __init__(self, sinks: int, window: int) -> None:
        self.sinks = check_count(sinks, "sinks", minimum=0)
        self.window = check_count(window, "window", minimum=1)

    def _terms(self, g: Geometry, batch: int, head: int) -> list[Term]:
        sinks, window = self.sinks, self.window

        def ranges(q: torch.Tensor) -> Intervals:
            start = (q - window + 1).clamp_min(0)
            # The sinks stop where the window starts: the two ranges stay disjoint.
            return [(q * 0, torch.minimum(start, (q + 1).clamp_max(sinks))), (start, q + 1)]

        return [IntervalTerm(ranges)]


class PrefixLM(Mask):
    """Prefix-LM (T5, PaliGemma): every query sees the first ``prefix`` keys, and the keys up to
    itself (causal) after them: k < prefix or k <= q."""

    def __init__(self, prefix: int) -> None:
        self.prefix = check_count(prefix, "prefix", minimum=0)

    def _terms(self, g: Geometry, batch: int, head: int) -> list[Term]:
        prefix = self.prefix
        return [IntervalTerm(lambda q: [(q * 0, (q + 1).clamp_min(prefix))])]


class Chunked(Mask):
    """Chunked local attention (Llama 4): positions are cut into chunks of ``size`` and a query
    sees the keys of its own chunk only (q // size == k // size), and only those up to itself when
    ``causal``."""

    def __init__(self, size: int, causal: bool = False) -> None:
        self.size = check_count(size, "chunk", minimum=1)
        self.causal = causal

    def _terms(self, g: Geometry, batch: int, head: int) -> list[Term]:
        size, causal = self.size, self.causal

        def ranges(q: torch.Tensor) -> Intervals:
            start = torch.div(q, size, rounding_mode="floor") * size
            return [(start, q + 1 if causal else start + size)]

        return [IntervalTerm(ranges)]


class Documents(Mask):
    """Packed sequences: a query sees only the keys of its own document (block-diagonal), and
    only those up to itself when ``causal`` (top-left).

    ``ids``: document id per key, shape (L_k,) or (B, L_k) (any integers). ``query_ids``: per
    query, same shapes with L_q; by default the queries use ``ids`` (then L_q must equal L_k).
    When every document is one contiguous run of keys (packing does that) the rule is a range
    per query (cheap to classify); otherwise it is evaluated as a predicate.
    """

    def __init__(self, ids: object, causal: bool = False, query_ids: object = None) -> None:
        self.ids, self.causal, self.query_ids = ids, causal, query_ids

    def _by_batch(self) -> bool:
        return any(t is not None and as_tensor(t, "documents", "mask").dim() == 2 for t in (self.ids, self.query_ids))

    def nbytes(self, dtype: torch.dtype) -> int:
        return _PREDICATE_WORK_BYTES  # scattered ids are a predicate

    def _terms(self, g: Geometry, batch: int, head: int) -> list[Term]:
        kid = _per_batch(self.ids, g.n_k, g, batch, "documents")
        qid = kid if self.query_ids is None else _per_batch(self.query_ids, g.n_q, g, batch, "documents")
        if self.query_ids is None and g.n_q != g.n_k:
            raise input_error(
                QT_TRANSLATE_NOOP(
                    "Errors",
                    "documents: with {n_q} queries and {n_k} keys, pass query_ids too (one document id per query)",
                ),
                "mask",
                n_q=g.n_q,
                n_k=g.n_k,
            )
        terms: list[Term] = [_document_term(qid, kid)]
        if self.causal:
            terms.append(IntervalTerm(lambda q: [(q * 0, q + 1)]))
        return terms


class ValidLength(Mask):
    """The book's valid lengths: key k is allowed when k < length. ``lens``: one whole number,
    (B,) one per batch element, or (B, L_q) one per query."""

    def __init__(self, lens: object) -> None:
        self.lens = lens

    def _parts(self, g: Geometry) -> list[Part]:
        try:
            scalar = torch.as_tensor(self.lens).dim() == 0  # one length for every batch element
        except (TypeError, ValueError, RuntimeError, OverflowError):
            scalar = False  # check_valid_lens says what is wrong with it
        if scalar:
            one = check_valid_lens(torch.as_tensor(self.lens).reshape(1), 1, g.n_q, g.device)
            assert one is not None
            return [LengthPart(g, one.expand(g.batch))]
        vl = check_valid_lens(self.lens, g.batch if g.exact else None, g.n_q, g.device)
        assert vl is not None
        _check_batch(vl.shape[0], g, "valid_lens")
        return [LengthPart(g, vl[: g.batch])]


class KeyPadding(Mask):
    """Keys allowed for every query: ``allowed_keys`` bool (L_k,) or (B, L_k), True = attend.

    ``from_key_padding_mask`` takes nn.MultiheadAttention's convention (True = ignore),
    ``from_attention_mask`` Hugging Face's (1 = attend, 0 = padding).
    """

    def __init__(self, allowed_keys: object, name: str = "key padding") -> None:
        #: ``name``: what the user called it, for error messages.
        self.allowed_keys, self.name = allowed_keys, name

    @staticmethod
    def from_key_padding_mask(key_padding_mask: object) -> KeyPadding:
        return KeyPadding(~_bool_tensor(key_padding_mask, "key_padding_mask"), "key_padding_mask")

    @staticmethod
    def from_attention_mask(attention_mask: object) -> KeyPadding:
        t = as_tensor(attention_mask, "attention_mask", "mask")
        if t.dtype == torch.bool:
            return KeyPadding(t, "attention_mask")
        if t.is_complex() or not bool(((t == 0) | (t == 1)).all()):
            raise input_error(
                QT_TRANSLATE_NOOP(
                    "Errors", "attention_mask must hold 0 (padding) and 1 (attend) only, as Hugging Face's does"
                ),
                "mask",
            )
        return KeyPadding(t != 0, "attention_mask")

    def _by_batch(self) -> bool:
        return as_tensor(self.allowed_keys, self.name, "mask").dim() == 2

    def _terms(self, g: Geometry, batch: int, head: int) -> list[Term]:
        keys = _bool_tensor(self.allowed_keys, self.name)
        return [KeyTerm(_per_batch(keys, g.n_k, g, batch, self.name))]


class MaskMod(Mask):
    """A FlexAttention ``mask_mod(b, h, q_idx, kv_idx) -> bool tensor``, True = attend.

    It is first called with ``b`` and ``h`` as 0-d int64 tensors, ``q_idx`` of shape (rows, 1)
    and ``kv_idx`` of shape (1, cols) (fast: one call a block); where that fails or returns
    anything but a bool tensor that broadcasts to (rows, cols) (a function written for scalars,
    ``dense[b][h][q_idx][kv_idx]``), it is evaluated as FlexAttention evaluates it, one scalar
    (b, h, q_idx, kv_idx) at a time under ``torch.vmap``, from then on.
    """

    def __init__(self, fn: MaskModFn) -> None:
        if not callable(fn):
            raise input_error(
                QT_TRANSLATE_NOOP(
                    "Errors", "mask_mod must be a function (b, h, q_idx, kv_idx) -> bool tensor; got {type}"
                ),
                "mask",
                type=type(fn).__name__,
            )
        self.fn = fn

    def _by_batch(self) -> bool:
        return True

    def _by_head(self) -> bool:
        return True

    def nbytes(self, dtype: torch.dtype) -> int:
        return _PREDICATE_WORK_BYTES

    def _terms(self, g: Geometry, batch: int, head: int) -> list[Term]:
        b = torch.tensor(batch, device=g.device)
        h = torch.tensor(head, device=g.device)
        fn = self.fn
        owner = self

        def predicate(q: torch.Tensor, kv: torch.Tensor) -> torch.Tensor:
            grid = torch.broadcast_shapes(q.shape, kv.shape)
            if len(grid) != 2:  # called one scalar at a time already (FlexAttention's vmap)
                return _checked(fn(b, h, q, kv), q, kv)
            if not owner.scalar_only:
                try:
                    out = fn(b, h, q, kv)
                    if _broadcasts(out, grid):
                        return out
                except Exception:  # noqa: BLE001, S110 - written for scalars: evaluated as FlexAttention does
                    pass
            out = _call_scalar(fn, b, h, q.expand(grid).reshape(-1), kv.expand(grid).reshape(-1))
            owner.scalar_only = True  # later blocks go to vmap at once
            if not isinstance(out, torch.Tensor) or out.dtype != torch.bool:
                raise input_error(
                    QT_TRANSLATE_NOOP("Errors", "mask_mod must return a bool tensor; got {type}"),
                    "mask",
                    type=str(out.dtype) if isinstance(out, torch.Tensor) else type(out).__name__,
                )
            if out.dim() != 1:
                raise input_error(
                    QT_TRANSLATE_NOOP("Errors", "mask_mod returned shape {shape} for one (b, h, q_idx, kv_idx)"),
                    "mask",
                    shape=tuple(out.shape[1:]),
                )
            return out.reshape(grid)

        def bounds(r0: int, r1: int, n_k: int, block: int) -> tuple[torch.Tensor, torch.Tensor] | None:
            return block_bounds(fn, b, h, r0, r1, n_k, block)

        return [PredicateTerm(predicate, bounds)]

    #: Set once the function failed on index grids: evaluated one scalar at a time under vmap.
    scalar_only: bool = False


def _broadcasts(out: object, grid: torch.Size) -> bool:
    """A bool tensor of the grid's shape, or one that broadcasts to it without new dimensions."""
    if not isinstance(out, torch.Tensor) or out.dtype != torch.bool or out.dim() > len(grid):
        return False
    try:
        return torch.broadcast_shapes(out.shape, grid) == grid
    except RuntimeError:
        return False


def _checked(out: object, q: torch.Tensor, kv: torch.Tensor) -> torch.Tensor:
    """A mask_mod's result for indices it was called with as they are: a bool tensor that
    broadcasts with them, else one line naming what it returned."""
    if not isinstance(out, torch.Tensor) or out.dtype != torch.bool:
        raise input_error(
            QT_TRANSLATE_NOOP("Errors", "mask_mod must return a bool tensor; got {type}"),
            "mask",
            type=str(out.dtype) if isinstance(out, torch.Tensor) else type(out).__name__,
        )
    try:
        torch.broadcast_shapes(out.shape, torch.broadcast_shapes(q.shape, kv.shape))
    except RuntimeError:
        raise input_error(
            QT_TRANSLATE_NOOP("Errors", "mask_mod returned shape {shape} for indices of shape {q} and {kv}"),
            "mask",
            shape=tuple(out.shape),
            q=tuple(q.shape),
            kv=tuple(kv.shape),
        ) from None
    return out


def _call_scalar(fn: MaskModFn, b: torch.Tensor, h: torch.Tensor, q: torch.Tensor, kv: torch.Tensor) -> Any:
    """``fn`` over the pairs (q[i], kv[i]) of two 1-D index tensors, as FlexAttention calls a
    mask_mod (``torch.vmap``: the function sees 0-d indices). A failure is one line naming the
    mask_mod's error."""
    try:
        return torch.vmap(lambda qi, ki: fn(b, h, qi, ki))(q, kv)
    except Exception as exc:  # the user's code may raise anything: say where it failed
        raise input_error(
            QT_TRANSLATE_NOOP("Errors", "mask_mod failed: {error}"),
            "mask",
            error=f"{type(exc).__name__}: {exc}".splitlines()[0],
        ) from exc


def context_masks(
    align: str,
    window: int | None = None,
    sinks: int | None = None,
    documents: object = None,
    prefix: int | None = None,
    chunk: int | None = None,
) -> list[Mask]:
    """The long-context descriptions ``make_mask`` makes of its keywords, a window aligned as a
    causal mask of alignment ``align`` is."""
    parts: list[Mask] = []
    if sinks is not None:
        if window is None:
            raise input_error(
                QT_TRANSLATE_NOOP(
                    "Errors", "sinks need a window: the sink tokens are what a query sees beyond its window"
                ),
                "mask",
            )
        parts.append(SinkWindow(sinks, window))
    elif window is not None:
        parts.append(SlidingWindow(window, align=align))
    return parts + given_masks((documents, Documents), (prefix, PrefixLM), (chunk, Chunked))


def given_masks(*pairs: tuple[Any, Callable[[Any], Mask]]) -> list[Mask]:
    """The description ``make(value)`` of every (value, make) whose value was given (not None):
    how the keyword forms become descriptions."""
    return [make(value) for value, make in pairs if value is not None]


# --------------------------------------------------------------------------- helpers


def _document_term(qid: torch.Tensor, kid: torch.Tensor) -> Term:
    """Same-document rule: a range per query when each document is one run of keys."""
    change = torch.ones(kid.numel(), dtype=torch.bool, device=kid.device)
    change[1:] = kid[1:] != kid[:-1]
    starts = change.nonzero().flatten()
    run_ids = kid[starts]
    if torch.unique(run_ids).numel() != run_ids.numel():
        return PredicateTerm(lambda q, kv: qid[q] == kid[kv])
    stops = torch.cat([starts[1:], starts.new_tensor([kid.numel()])])
    order = torch.argsort(run_ids)
    sorted_ids = run_ids[order]
    pos = torch.searchsorted(sorted_ids, qid).clamp_max(len(sorted_ids) - 1)
    found = sorted_ids[pos] == qid
    run = order[pos]
    # Per query: the range of its document's keys (empty when no key has its id).
    lo = torch.where(found, starts[run], 0)
    hi = torch.where(found, stops[run], 0)
    return IntervalTerm(lambda q: [(lo[q], hi[q])])


def _per_batch(t: object, length: int, g: Geometry, batch: int, name: str) -> torch.Tensor:
    """Row ``batch`` of a per-batch tensor (L,) or (B, L) of whole numbers."""
    x = as_tensor(t, name, "mask").to(g.device)
    if x.dim() == 2:
        _check_batch(x.shape[0], g, name)
        x = x[batch]
    if x.dim() != 1 or x.shape[0] != length:
        raise input_error(
            QT_TRANSLATE_NOOP("Errors", "{name} must have shape ({n},) or (batch, {n}); got {shape}"),
            "mask",
            name=name,
            n=length,
            shape=tuple(as_tensor(t, name, "mask").shape),
        )
    if x.dtype != torch.bool and (x.is_floating_point() or x.is_complex()):
        raise _dtype_error(QT_TRANSLATE_NOOP("Errors", "{name} must hold whole numbers; got dtype {dtype}"), name, x)
    return x


def _check_batch(size: int, g: Geometry, name: str) -> None:
    """A per-batch tensor of ``size`` rows covers the call's batch: exactly (``g.exact``) or at
    least (one matrix picked by its index)."""
    if size < g.batch:
        text, batch = (
            QT_TRANSLATE_NOOP("Errors", "{name} has {size} batch element(s); batch {batch} was asked for"),
            g.batch - 1,
        )
    elif g.exact and size != g.batch:
        text, batch = QT_TRANSLATE_NOOP("Errors", "{name} has {size} batch elements for a batch of {batch}"), g.batch
    else:
        return
    raise input_error(text, "mask", name=name, size=size, batch=batch)


def _bool_tensor(t: object, name: str) -> torch.Tensor:
    x = as_tensor(t, name, "mask")
    if x.dtype != torch.bool:
        raise _dtype_error(QT_TRANSLATE_NOOP("Errors", "{name} must be a boolean tensor; got dtype {dtype}"), name, x)
    return x


def _dtype_error(text: str, name: str, x: torch.Tensor) -> AttentionInputError:
    return input_error(text, "mask", name=name, dtype=str(x.dtype))


def _offset(align: str, g: Geometry) -> int:
    return g.n_k - g.n_q if align == "bottom_right" else 0


__all__ = [
    "DEFAULT_BLOCK",
    "EMPTY",
    "FULL",
    "MAX_DENSE_CELLS",
    "PARTIAL",
    "AllOf",
    "BlockStructure",
    "BoundMask",
    "CallMask",
    "Causal",
    "Chunked",
    "Documents",
    "KeyPadding",
    "Mask",
    "MaskMod",
    "PrefixLM",
    "RowBlock",
    "SinkWindow",
    "SlidingWindow",
    "ValidLength",
    "context_masks",
    "given_masks",
    "runs",
]
