"""Modern attention masks as composable descriptions, for long inputs.

A ``Mask`` says which (query, key) pairs may attend (True = attend, PyTorch's SDPA and
FlexAttention convention). It never stores an (L_q, L_k) matrix: it is a rule, evaluated where
needed. Descriptions combine with ``&`` (a pair is allowed only if every part allows it):

    SlidingWindow(4096, causal=True) & KeyPadding.from_attention_mask(hf_mask)
    Documents(doc_ids, causal=True)
    SinkWindow(sinks=4, window=1024)
    MaskMod(lambda b, h, q_idx, kv_idx: (q_idx - kv_idx).abs() <= 8)

Positions are row and column indices: query ``q`` and key ``k`` of an (L_q, L_k) score matrix.
Only ``Causal`` and ``SlidingWindow`` take an alignment: "bottom_right" lines the last query up
with the last key (query ``q`` sits at position ``q + L_k - L_q``), as decoding with a KV cache
needs; every other description uses the indices as they are, like FlexAttention's ``mask_mod``.

Each description can produce, for given sizes (``bind``): the boolean mask of any block of rows
and columns (``allowed``), the whole mask for small inputs (``dense``), and its block structure
(``block_structure``: which blocks are full, partial or empty, as FlexAttention's ``BlockMask``
shows it). The streaming overview (``attnviz.engine.long``) uses the block structure to skip the
blocks a mask empties, which is what makes a sliding window cheap.

How each part is evaluated, and why:
  * row intervals (causal, windows, documents stored as contiguous runs, prefix-LM, sinks,
    chunks, valid lengths): per query, the allowed keys are at most two disjoint ranges of
    indices. A block's state then follows from the ranges of its rows alone, without looking at
    its cells, so classifying the blocks costs O(rows + blocks), not O(rows x keys).
  * key masks (key padding, HF attention masks): one flag per key, the same for every query.
  * predicates (``MaskMod``, documents whose ids are not contiguous): evaluated on broadcast
    index tensors over every key of a block of rows (vectorised, as FlexAttention's
    ``create_block_mask`` evaluates a ``mask_mod``), so they cost O(rows x keys) booleans,
    computed a block of rows at a time and never held whole.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from ..tr import QT_TRANSLATE_NOOP, message
from .errors import AttentionInputError
from .mask_spec import CAUSAL_ALIGNMENTS, causal_problem, check_valid_lens

#: Block states, as drawn: no allowed cell, some allowed cells, every cell allowed.
EMPTY, PARTIAL, FULL = 0, 1, 2
#: The block size FlexAttention uses by default.
DEFAULT_BLOCK = 128
#: ``dense`` refuses larger masks (64 Mi cells = 64 MiB of booleans): long inputs use blocks.
MAX_DENSE_CELLS = 1 << 26
#: Cells a predicate is evaluated on at once (its int64 temporaries: 8 MiB each).
_PREDICATE_CELLS = 1 << 20

#: A query's allowed keys: a list of (lo, hi) index tensors, key k allowed when lo <= k < hi for
#: one of them. Within a row the ranges are disjoint (classification counts on it).
Intervals = list[tuple[torch.Tensor, torch.Tensor]]
#: FlexAttention's mask_mod: (batch, head, q_idx, kv_idx) index tensors -> bool tensor.
MaskModFn = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class Geometry:
    """The sizes a description is evaluated for, and which batch element and head."""

    n_q: int
    n_k: int
    batch: int = 0
    head: int = 0
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))


# --------------------------------------------------------------------------- terms


@dataclass(frozen=True)
class _IntervalTerm:
    #: query indices (any shape) -> allowed key ranges, each tensor of the same shape.
    ranges: Callable[[torch.Tensor], Intervals]


@dataclass(frozen=True)
class _KeyTerm:
    allowed: torch.Tensor  # bool (n_k,)


@dataclass(frozen=True)
class _PredicateTerm:
    #: (q_idx, kv_idx) broadcastable index tensors -> bool of their broadcast shape.
    fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


_Term = _IntervalTerm | _KeyTerm | _PredicateTerm


# --------------------------------------------------------------------------- descriptions


class Mask:
    """A rule for which (query, key) pairs may attend. Combine with ``&``.

    Subclasses say how they are evaluated (``_terms``); everything else is shared.
    """

    def _terms(self, g: Geometry) -> list[_Term]:
        raise NotImplementedError

    def __and__(self, other: Mask) -> Mask:
        if not isinstance(other, Mask):
            return NotImplemented
        return AllOf((self, other))

    def bind(
        self, n_q: int, n_k: int, *, batch: int = 0, head: int = 0, device: torch.device | str | None = None
    ) -> BoundMask:
        """This description for an (n_q, n_k) score matrix of batch element ``batch``, head ``head``."""
        check_count(n_q, "n_q", 1, "shape")
        check_count(n_k, "n_k", 1, "shape")
        g = Geometry(n_q, n_k, int(batch), int(head), torch.device(device or "cpu"))
        return BoundMask(g, self._terms(g))

    def allowed(
        self, n_q: int, n_k: int, rows: slice = slice(None), cols: slice = slice(None), *, batch: int = 0, head: int = 0
    ) -> torch.Tensor:
        """The boolean mask of ``rows`` x ``cols`` (slices with step 1) of an (n_q, n_k) matrix."""
        bound = self.bind(n_q, n_k, batch=batch, head=head)
        return bound.region(*check_span(rows, n_q, "rows"), *check_span(cols, n_k, "cols"))

    def dense(self, n_q: int, n_k: int, *, batch: int = 0, head: int = 0) -> torch.Tensor:
        """The whole (n_q, n_k) boolean mask, True = attend: for small inputs (``attend``'s
        ``attn_mask``). Refuses more than ``MAX_DENSE_CELLS`` cells."""
        if n_q * n_k > MAX_DENSE_CELLS:
            raise AttentionInputError(
                message(
                    QT_TRANSLATE_NOOP(
                        "Errors",
                        "a dense mask of {n_q} x {n_k} is too large (at most {limit} cells); use the "
                        "block structure or the streaming overview instead",
                    ),
                    n_q=n_q,
                    n_k=n_k,
                    limit=MAX_DENSE_CELLS,
                ),
                "mask",
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


@dataclass(frozen=True, eq=False)
class AllOf(Mask):
    """Every part must allow a pair (logical AND). ``AllOf(())`` allows everything."""

    parts: tuple[Mask, ...]

    def __post_init__(self) -> None:
        flat: list[Mask] = []
        for part in self.parts:
            if not isinstance(part, Mask):
                raise AttentionInputError(
                    message(
                        QT_TRANSLATE_NOOP("Errors", "a mask combines Mask descriptions only; got {type}"),
                        type=type(part).__name__,
                    ),
                    "mask",
                )
            flat.extend(part.parts if isinstance(part, AllOf) else (part,))
        object.__setattr__(self, "parts", tuple(flat))

    def _terms(self, g: Geometry) -> list[_Term]:
        return [term for part in self.parts for term in part._terms(g)]


@dataclass(frozen=True, eq=False)
class Causal(Mask):
    """Query q sees keys k <= q (top_left, PyTorch's is_causal) or k <= q + L_k - L_q (bottom_right)."""

    align: str = "top_left"

    def __post_init__(self) -> None:
        _check_align(self.align)

    def _terms(self, g: Geometry) -> list[_Term]:
        off = _offset(self.align, g)
        return [_IntervalTerm(lambda q: [(q * 0, q + off + 1)])]


@dataclass(frozen=True, eq=False)
class SlidingWindow(Mask):
    """Keys within ``size`` positions of the query p (p = q, or q + L_k - L_q bottom_right).

    causal:    0 <= p - k < size  (the query and the size - 1 keys before it: Mistral's and
               Hugging Face's ``sliding_window``)
    symmetric: |p - k| < size     (size - 1 keys either side, 2 size - 1 in all)
    """

    size: int
    causal: bool = False
    align: str = "top_left"

    def __post_init__(self) -> None:
        check_count(self.size, "window", minimum=1)
        _check_align(self.align)

    def _terms(self, g: Geometry) -> list[_Term]:
        off, size, causal = _offset(self.align, g), self.size, self.causal
        return [_IntervalTerm(lambda q: [(q + off - size + 1, q + off + 1 if causal else q + off + size)])]


@dataclass(frozen=True, eq=False)
class SinkWindow(Mask):
    """StreamingLLM's attention sinks: a causal window of ``window`` keys (the query and the
    ``window - 1`` before it) plus the first ``sinks`` keys, which every query sees (causally)."""

    sinks: int
    window: int

    def __post_init__(self) -> None:
        check_count(self.sinks, "sinks", minimum=0)
        check_count(self.window, "window", minimum=1)

    def _terms(self, g: Geometry) -> list[_Term]:
        sinks, window = self.sinks, self.window

        def ranges(q: torch.Tensor) -> Intervals:
            start = (q - window + 1).clamp_min(0)
            # The sinks stop where the window starts: the two ranges stay disjoint.
            return [(q * 0, torch.minimum(start, (q + 1).clamp_max(sinks))), (start, q + 1)]

        return [_IntervalTerm(ranges)]


@dataclass(frozen=True, eq=False)
class PrefixLM(Mask):
    """Prefix-LM (T5, PaliGemma): every query sees the first ``prefix`` keys, and the keys up to
    itself (causal) after them: k < prefix or k <= q."""

    prefix: int

    def __post_init__(self) -> None:
        check_count(self.prefix, "prefix", minimum=0)

    def _terms(self, g: Geometry) -> list[_Term]:
        prefix = self.prefix
        return [_IntervalTerm(lambda q: [(q * 0, (q + 1).clamp_min(prefix))])]


@dataclass(frozen=True, eq=False)
class Chunked(Mask):
    """Chunked local attention (Llama 4): positions are cut into chunks of ``size`` and a query
    sees the keys of its own chunk only (q // size == k // size), and only those up to itself when
    ``causal``."""

    size: int
    causal: bool = False

    def __post_init__(self) -> None:
        check_count(self.size, "chunk", minimum=1)

    def _terms(self, g: Geometry) -> list[_Term]:
        size, causal = self.size, self.causal

        def ranges(q: torch.Tensor) -> Intervals:
            start = torch.div(q, size, rounding_mode="floor") * size
            return [(start, q + 1 if causal else start + size)]

        return [_IntervalTerm(ranges)]


@dataclass(frozen=True, eq=False)
class Documents(Mask):
    """Packed sequences: a query sees only the keys of its own document (block-diagonal), and
    only those up to itself when ``causal`` (top-left).

    ``ids``: document id per key, shape (L_k,) or (B, L_k) (any integers). ``query_ids``: per
    query, same shapes with L_q; by default the queries use ``ids`` (then L_q must equal L_k).
    When every document is one contiguous run of keys (packing does that) the rule is a range
    per query (cheap to classify); otherwise it is evaluated as a predicate.
    """

    ids: object
    causal: bool = False
    query_ids: object = None

    def _terms(self, g: Geometry) -> list[_Term]:
        kid = _per_batch(self.ids, g.n_k, g, "documents")
        qid = kid if self.query_ids is None else _per_batch(self.query_ids, g.n_q, g, "documents")
        if self.query_ids is None and g.n_q != g.n_k:
            raise AttentionInputError(
                message(
                    QT_TRANSLATE_NOOP(
                        "Errors",
                        "documents: with {n_q} queries and {n_k} keys, pass query_ids too (one document id per query)",
                    ),
                    n_q=g.n_q,
                    n_k=g.n_k,
                ),
                "mask",
            )
        terms: list[_Term] = [_document_term(qid, kid)]
        if self.causal:
            terms.extend(Causal()._terms(g))
        return terms


@dataclass(frozen=True, eq=False)
class ValidLength(Mask):
    """The book's valid lengths: key k is allowed when k < length. ``lens``: one whole number,
    (B,) one per batch element, or (B, L_q) one per query."""

    lens: object

    def _terms(self, g: Geometry) -> list[_Term]:
        t = torch.as_tensor(self.lens)
        scalar = t.dim() == 0  # one length for every batch element
        vl = check_valid_lens(t.reshape(1) if scalar else t, 1 if scalar else t.shape[0], g.n_q, g.device)
        assert vl is not None
        if scalar:
            vl = vl.expand(g.batch + 1)
        _check_batch(vl.shape[0], g, "valid_lens")
        row = vl[g.batch]
        if row.dim() == 0:
            length = int(row)
            return [_IntervalTerm(lambda q: [(q * 0, q * 0 + length)])]
        return [_IntervalTerm(lambda q: [(q * 0, row[q])])]


@dataclass(frozen=True, eq=False)
class KeyPadding(Mask):
    """Keys allowed for every query: ``allowed`` bool (L_k,) or (B, L_k), True = attend.

    ``from_key_padding_mask`` takes nn.MultiheadAttention's convention (True = ignore),
    ``from_attention_mask`` Hugging Face's (1 = attend, 0 = padding).
    """

    allowed_keys: object
    #: What the user called it, for error messages.
    name: str = "key padding"

    @staticmethod
    def from_key_padding_mask(key_padding_mask: object) -> KeyPadding:
        return KeyPadding(~_bool_tensor(key_padding_mask, "key_padding_mask"), "key_padding_mask")

    @staticmethod
    def from_attention_mask(attention_mask: object) -> KeyPadding:
        t = torch.as_tensor(attention_mask)
        if t.dtype == torch.bool:
            return KeyPadding(t, "attention_mask")
        if t.is_complex() or not bool(((t == 0) | (t == 1)).all()):
            raise AttentionInputError(
                message(
                    QT_TRANSLATE_NOOP(
                        "Errors", "attention_mask must hold 0 (padding) and 1 (attend) only, as Hugging Face's does"
                    ),
                ),
                "mask",
            )
        return KeyPadding(t != 0, "attention_mask")

    def _terms(self, g: Geometry) -> list[_Term]:
        keys = _bool_tensor(self.allowed_keys, self.name)
        return [_KeyTerm(_per_batch(keys, g.n_k, g, self.name))]


@dataclass(frozen=True, eq=False)
class MaskMod(Mask):
    """A FlexAttention ``mask_mod(b, h, q_idx, kv_idx) -> bool tensor``, True = attend.

    As with FlexAttention, write it with tensor operations (no Python ``if`` on the indices): it
    is called with ``b`` and ``h`` as 0-d int64 tensors, ``q_idx`` of shape (rows, 1) and
    ``kv_idx`` of shape (1, cols), and must return a bool tensor broadcastable to (rows, cols).
    """

    fn: MaskModFn

    def __post_init__(self) -> None:
        if not callable(self.fn):
            raise AttentionInputError(
                message(
                    QT_TRANSLATE_NOOP(
                        "Errors", "mask_mod must be a function (b, h, q_idx, kv_idx) -> bool tensor; got {type}"
                    ),
                    type=type(self.fn).__name__,
                ),
                "mask",
            )

    def _terms(self, g: Geometry) -> list[_Term]:
        b = torch.tensor(g.batch, device=g.device)
        h = torch.tensor(g.head, device=g.device)
        fn = self.fn

        def predicate(q: torch.Tensor, kv: torch.Tensor) -> torch.Tensor:
            try:
                out = fn(b, h, q, kv)
            except Exception as exc:  # the user's code may raise anything: say where it failed
                raise AttentionInputError(
                    message(
                        QT_TRANSLATE_NOOP("Errors", "mask_mod failed: {error}"), error=f"{type(exc).__name__}: {exc}"
                    ),
                    "mask",
                ) from exc
            if not isinstance(out, torch.Tensor) or out.dtype != torch.bool:
                raise AttentionInputError(
                    message(
                        QT_TRANSLATE_NOOP("Errors", "mask_mod must return a bool tensor; got {type}"),
                        type=str(out.dtype) if isinstance(out, torch.Tensor) else type(out).__name__,
                    ),
                    "mask",
                )
            try:
                torch.broadcast_shapes(out.shape, torch.broadcast_shapes(q.shape, kv.shape))
            except RuntimeError:
                raise AttentionInputError(
                    message(
                        QT_TRANSLATE_NOOP(
                            "Errors", "mask_mod returned shape {shape} for indices of shape {q} and {kv}"
                        ),
                        shape=tuple(out.shape),
                        q=tuple(q.shape),
                        kv=tuple(kv.shape),
                    ),
                    "mask",
                ) from None
            return out

        return [_PredicateTerm(predicate)]


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
    mask              any ``Mask`` description
    """
    parts: list[Mask] = []
    if causal is True:
        causal = "top_left"
    align = "top_left"
    if causal not in (None, False):
        align = _check_align(causal)
        parts.append(Causal(align))
    if valid_lens is not None:
        parts.append(ValidLength(valid_lens))
    if key_padding_mask is not None:
        parts.append(KeyPadding.from_key_padding_mask(key_padding_mask))
    if attention_mask is not None:
        parts.append(KeyPadding.from_attention_mask(attention_mask))
    if sinks is not None:
        if window is None:
            raise AttentionInputError(
                message(
                    QT_TRANSLATE_NOOP(
                        "Errors", "sinks need a window: the sink tokens are what a query sees beyond its window"
                    )
                ),
                "mask",
            )
        parts.append(SinkWindow(sinks, window))
    elif window is not None:
        parts.append(SlidingWindow(window, align=align))  # aligned as the causal mask is
    if documents is not None:
        parts.append(Documents(documents))
    if prefix is not None:
        parts.append(PrefixLM(prefix))
    if chunk is not None:
        parts.append(Chunked(chunk))
    if mask_mod is not None:
        parts.append(MaskMod(mask_mod))
    if mask is not None:
        parts.append(mask)
    return AllOf(tuple(parts))


# --------------------------------------------------------------------------- a bound mask


@dataclass(frozen=True)
class BlockStructure:
    """Block states of a mask: ``states[i, j]`` is EMPTY, PARTIAL or FULL for query block i
    (rows i*block_q ...) and key block j. Blocks at the far edges may be smaller; their state
    refers to their real cells only (FlexAttention pads to whole blocks and counts the padding
    as masked, so it never calls an edge block full; elsewhere the two agree)."""

    states: torch.Tensor  # uint8 (ceil(n_q / block_q), ceil(n_k / block_k))
    block_q: int
    block_k: int
    n_q: int
    n_k: int

    def count(self, state: int) -> int:
        return int((self.states == state).sum())

    @property
    def sparsity(self) -> float:
        """The share of blocks that are empty (FlexAttention's ``BlockMask.sparsity()`` / 100)."""
        return self.count(EMPTY) / self.states.numel()


class BoundMask:
    """A description bound to a geometry: what the streaming code asks a mask."""

    def __init__(self, geometry: Geometry, terms: Sequence[_Term]) -> None:
        self.geometry = geometry
        self._ranges = [t.ranges for t in terms if isinstance(t, _IntervalTerm)]
        self._predicates = [t.fn for t in terms if isinstance(t, _PredicateTerm)]
        keys: torch.Tensor | None = None
        for t in terms:
            if isinstance(t, _KeyTerm):
                keys = t.allowed if keys is None else keys & t.allowed
        self.keys = keys

    @property
    def n_q(self) -> int:
        return self.geometry.n_q

    @property
    def n_k(self) -> int:
        return self.geometry.n_k

    @property
    def has_predicates(self) -> bool:
        """Some rule is a predicate, evaluated cell by cell (``MaskMod``, scattered documents)."""
        return bool(self._predicates)

    def intervals(self, q: torch.Tensor) -> Intervals | None:
        """The allowed key ranges of queries ``q`` (intersection of every range rule), each range
        clipped to [0, n_k]; None when no rule is a range rule. Disjoint within a row."""
        if not self._ranges:
            return None
        result: Intervals = self._ranges[0](q)
        for ranges in self._ranges[1:]:
            result = [
                (torch.maximum(lo, b_lo), torch.minimum(hi, b_hi)) for lo, hi in result for b_lo, b_hi in ranges(q)
            ]
        return [(lo.clamp(0, self.n_k), hi.clamp(0, self.n_k)) for lo, hi in result]

    def evaluate(self, q_idx: torch.Tensor, kv_idx: torch.Tensor) -> torch.Tensor:
        """Allowed, for broadcastable query and key index tensors (works under ``torch.vmap``, as
        FlexAttention calls a mask_mod)."""
        out = (q_idx >= 0) & (kv_idx >= 0)  # all True, in the broadcast shape
        ivs = self.intervals(q_idx)
        if ivs is not None:
            inside = [(kv_idx >= lo) & (kv_idx < hi) for lo, hi in ivs]
            any_inside = inside[0]
            for more in inside[1:]:
                any_inside = any_inside | more
            out = out & any_inside
        if self.keys is not None:
            out = out & self.keys[kv_idx]
        for predicate in self._predicates:
            out = out & predicate(q_idx, kv_idx)
        return out

    def region(self, r0: int, r1: int, c0: int, c1: int) -> torch.Tensor:
        """The mask of rows r0:r1 and keys c0:c1, bool (r1 - r0, c1 - c0)."""
        dev = self.geometry.device
        return self.evaluate(torch.arange(r0, r1, device=dev)[:, None], torch.arange(c0, c1, device=dev)[None, :])

    def row_block(self, r0: int, r1: int, block: int) -> RowBlock:
        """Rows r0:r1 classified against key blocks of ``block`` keys."""
        return RowBlock(self, r0, r1, block)

    def block_structure(self, block_size: int | tuple[int, int] = DEFAULT_BLOCK) -> BlockStructure:
        bq, bk = (block_size, block_size) if isinstance(block_size, int) else block_size
        check_count(bq, "block_size", minimum=1)
        check_count(bk, "block_size", minimum=1)
        n_qb, n_kb = -(-self.n_q // bq), -(-self.n_k // bk)
        states = torch.empty((n_qb, n_kb), dtype=torch.uint8)
        for i in range(n_qb):
            states[i] = self.row_block(i * bq, min(self.n_q, (i + 1) * bq), bk).exact_states().cpu()
        return BlockStructure(states, bq, bk, self.n_q, self.n_k)


class RowBlock:
    """Rows r0:r1 of a bound mask against key blocks of ``block`` keys.

    ``some[j]``: key block j may hold an allowed cell (never False where one is);
    ``full[j]``: every cell of key block j is allowed (never True where one is masked; exact
    unless a row's allowed keys are two touching ranges, as a sink and a window early on: then
    the block counts as partial and is masked cell by cell, which gives the same result).
    Predicates are evaluated once here, over the key blocks the other rules leave, and reused
    by ``allowed``.
    """

    def __init__(self, mask: BoundMask, r0: int, r1: int, block: int) -> None:
        self.mask, self.block = mask, block
        dev = mask.geometry.device
        n_k = mask.n_k
        n_kb = -(-n_k // block)
        self.n_blocks = n_kb
        self.rows = torch.arange(r0, r1, device=dev)
        self.ivs = mask.intervals(self.rows)
        some = torch.ones(n_kb, dtype=torch.bool, device=dev)
        # Blocks the key mask and the predicates leave full (the ranges aside).
        others_full = torch.ones(n_kb, dtype=torch.bool, device=dev)
        if self.ivs is not None:
            some, full = _interval_classes(self.ivs, r1 - r0, n_k, block, n_kb)
        if mask.keys is not None:
            k_some, others_full = _key_classes(mask.keys, block, n_kb)
            some = some & k_some
        # The predicates' values over keys pred_start:pred_start + width (None: no predicate).
        self.pred: torch.Tensor | None = None
        self.pred_start = 0
        if mask._predicates:
            self.pred = torch.zeros((r1 - r0, 0), dtype=torch.bool, device=dev)
            idx = some.nonzero()
            if len(idx):
                # From the first to the last candidate block: nothing is allowed outside.
                j0, j1 = int(idx[0]), int(idx[-1]) + 1
                c0, c1 = j0 * block, min(n_k, j1 * block)
                pred = torch.empty((r1 - r0, c1 - c0), dtype=torch.bool, device=dev)
                # A predicate's index arithmetic makes int64 temporaries: a few columns at a time.
                step = max(block, _PREDICATE_CELLS // (r1 - r0) // block * block)
                for a in range(c0, c1, step):
                    b = min(c1, a + step)
                    kv = torch.arange(a, b, device=dev)[None, :]
                    cells = (self.rows[:, None] >= 0) & (kv >= 0)
                    for predicate in mask._predicates:
                        cells &= predicate(self.rows[:, None], kv)
                    pred[:, a - c0 : b - c0] = cells
                self.pred, self.pred_start = pred, c0
                p_some, p_full = _dense_classes(pred, block, c1 - c0)
                some[j0:j1] &= p_some
                others_full[j0:j1] &= p_full
                others_full[:j0] = False
                others_full[j1:] = False
        self.some = some
        self.others_full = others_full
        self.full = others_full if self.ivs is None else full & others_full

    def allowed(self, c0: int, c1: int) -> torch.Tensor:
        """bool (rows, c1 - c0): the mask of keys c0:c1 (True = attend)."""
        return self.masked(c0, c1).logical_not_()

    def masked(self, c0: int, c1: int) -> torch.Tensor:
        """bool (rows, c1 - c0): True where keys c0:c1 are masked, keys >= n_k (padding a caller
        added) included. Built masked-side up, as the streaming code fills with it."""
        n_k, dev = self.mask.n_k, self.rows.device
        kv = torch.arange(c0, c1, device=dev)[None, :]
        out: torch.Tensor | None = None
        for lo, hi in self.ivs or ():
            outside = (kv < lo[:, None]).logical_or_(kv >= hi[:, None])
            out = outside if out is None else out.logical_and_(outside)
        if out is None:
            out = torch.zeros((len(self.rows), c1 - c0), dtype=torch.bool, device=dev)
        stop = min(c1, n_k)
        if self.mask.keys is not None and stop > c0:
            out[:, : stop - c0] |= ~self.mask.keys[c0:stop]
        if self.pred is not None:
            p0, p1 = self.pred_start, self.pred_start + self.pred.shape[1]
            a, b = max(c0, p0), min(c1, p1)
            if b > a:
                out[:, a - c0 : b - c0] |= ~self.pred[:, a - p0 : b - p0]
            # Outside the evaluated keys no block is a candidate: nothing there is allowed.
            out[:, : max(0, min(c1, p0) - c0)] = True
            out[:, max(0, p1 - c0) :] = True
        if c1 > n_k:
            out[:, max(0, n_k - c0) :] = True
        return out

    def masked_columns(self, c0: int, c1: int, align: int) -> list[tuple[int, int]]:
        """The column ranges of c0:c1 (a run of ``some`` blocks, c1 possibly past n_k for
        padding) where some cell may be masked, widened to multiples of ``align``.

        With one range per row, the columns inside every row's range need no mask at all: only
        [c0, max lo) and [min hi, c1) do (two strips about as wide as the block is tall, for a
        sliding window), instead of whole key blocks.
        """
        block = self.block
        single = self.ivs is not None and len(self.ivs) == 1
        not_full = ~(self.others_full if single else self.full)
        j_first = c0 // block
        spans = [(c0 + j0 * block, c0 + j1 * block) for j0, j1 in runs(not_full[j_first : -(-c1 // block)])]
        if single:
            lo, hi = self.ivs[0]  # type: ignore[index]
            spans += [(c0, int(lo.max())), (int(hi.min()), c1)]
        spans.append((self.mask.n_k, c1))
        # Clipped to c0:c1 and widened to whole multiples of align (c0 and c1 are multiples).
        aligned = sorted((max(c0, a) // align * align, min(c1, -(-b // align) * align)) for a, b in spans)
        return _merge([(a, b) for a, b in aligned if b > a])

    def exact_states(self) -> torch.Tensor:
        """uint8 (n_blocks,): EMPTY / PARTIAL / FULL, settling undecided blocks cell by cell."""
        states = torch.where(self.full, FULL, torch.where(self.some, PARTIAL, EMPTY)).to(torch.uint8)
        for j0, j1 in runs(self.some & ~self.full):
            c0, c1 = j0 * self.block, min(self.mask.n_k, j1 * self.block)
            p_some, p_full = _dense_classes(self.allowed(c0, c1), self.block, c1 - c0)
            states[j0:j1] = torch.where(p_full, FULL, torch.where(p_some, PARTIAL, EMPTY)).to(torch.uint8)
        return states


# --------------------------------------------------------------------------- helpers


def runs(flags: torch.Tensor) -> list[tuple[int, int]]:
    """The [start, stop) runs of True in a 1-D bool tensor."""
    # numpy: a handful of operations on a few hundred flags, cheaper than torch's dispatch.
    f = np.concatenate(([0], flags.cpu().numpy().view(np.int8), [0]))
    edges = np.diff(f)
    return list(zip(np.flatnonzero(edges == 1).tolist(), np.flatnonzero(edges == -1).tolist()))


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted [start, stop) spans with the overlapping and touching ones joined."""
    merged: list[tuple[int, int]] = []
    for a, b in spans:
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
        else:
            merged.append((a, b))
    return merged


def _interval_classes(
    ivs: Intervals, n_rows: int, n_k: int, block: int, n_kb: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """(some, full) per key block from each row's ranges, by difference arrays: O(rows + blocks)."""
    dev = ivs[0][0].device
    some_diff = torch.zeros(n_kb + 1, dtype=torch.int64, device=dev)
    full_diff = torch.zeros(n_kb + 1, dtype=torch.int64, device=dev)
    for lo, hi in ivs:
        lo, hi = lo.clamp(0, n_k), hi.clamp(0, n_k)
        nonempty = (hi > lo).to(torch.int64)
        # Blocks touched: lo // block ... (hi - 1) // block.
        some_diff.index_add_(0, torch.div(lo, block, rounding_mode="floor"), nonempty)
        some_diff.index_add_(0, torch.div(hi - 1, block, rounding_mode="floor") + 1, -nonempty)
        # Blocks inside [lo, hi): from ceil(lo / block) to the last whose end (n_k for the last
        # block) is <= hi. A row's ranges are disjoint, so at most one covers a given block and a
        # block is full exactly when all n_rows rows count it.
        first = -torch.div(-lo, block, rounding_mode="floor")
        stop = torch.where(hi >= n_k, n_kb, torch.div(hi, block, rounding_mode="floor"))
        covers = nonempty * (stop > first).to(torch.int64)
        full_diff.index_add_(0, first.clamp_max(n_kb), covers)
        full_diff.index_add_(0, stop.clamp_min(0), -covers)
    some = torch.cumsum(some_diff, 0)[:n_kb] > 0
    full = torch.cumsum(full_diff, 0)[:n_kb] == n_rows
    return some, full


def _key_classes(keys: torch.Tensor, block: int, n_kb: int) -> tuple[torch.Tensor, torch.Tensor]:
    padded = torch.zeros(n_kb * block, dtype=torch.int32, device=keys.device)
    padded[: keys.numel()] = keys.to(torch.int32)
    counts = padded.view(n_kb, block).sum(1)
    widths = torch.full((n_kb,), block, dtype=counts.dtype, device=keys.device)
    widths[-1] = keys.numel() - (n_kb - 1) * block
    return counts > 0, counts == widths


def _dense_classes(allowed: torch.Tensor, block: int, width: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(some, full) per key block of a (rows, width) bool region starting at a block edge."""
    n_rows = allowed.shape[0]
    nb = -(-width // block)
    padded = allowed
    if nb * block != width:
        padded = torch.zeros((n_rows, nb * block), dtype=torch.bool, device=allowed.device)
        padded[:, :width] = allowed
    counts = padded.view(n_rows, nb, block).sum((0, 2))
    widths = torch.full((nb,), block, dtype=counts.dtype, device=allowed.device)
    widths[-1] = width - (nb - 1) * block
    return counts > 0, counts == widths * n_rows


def _document_term(qid: torch.Tensor, kid: torch.Tensor) -> _Term:
    """Same-document rule: a range per query when each document is one run of keys."""
    change = torch.ones(kid.numel(), dtype=torch.bool, device=kid.device)
    change[1:] = kid[1:] != kid[:-1]
    starts = change.nonzero().flatten()
    run_ids = kid[starts]
    if torch.unique(run_ids).numel() != run_ids.numel():
        return _PredicateTerm(lambda q, kv: qid[q] == kid[kv])
    stops = torch.cat([starts[1:], starts.new_tensor([kid.numel()])])
    order = torch.argsort(run_ids)
    sorted_ids = run_ids[order]
    pos = torch.searchsorted(sorted_ids, qid).clamp_max(len(sorted_ids) - 1)
    found = sorted_ids[pos] == qid
    run = order[pos]
    # Per query: the range of its document's keys (empty when no key has its id).
    lo = torch.where(found, starts[run], 0)
    hi = torch.where(found, stops[run], 0)
    return _IntervalTerm(lambda q: [(lo[q], hi[q])])


def _per_batch(t: object, length: int, g: Geometry, name: str) -> torch.Tensor:
    x = torch.as_tensor(t, device=g.device)
    if x.dim() == 2:
        _check_batch(x.shape[0], g, name)
        x = x[g.batch]
    if x.dim() != 1 or x.shape[0] != length:
        raise AttentionInputError(
            message(
                QT_TRANSLATE_NOOP("Errors", "{name} must have shape ({n},) or (batch, {n}); got {shape}"),
                name=name,
                n=length,
                shape=tuple(torch.as_tensor(t).shape),
            ),
            "mask",
        )
    if x.dtype != torch.bool and (x.is_floating_point() or x.is_complex()):
        raise AttentionInputError(
            message(
                QT_TRANSLATE_NOOP("Errors", "{name} must hold whole numbers; got dtype {dtype}"),
                name=name,
                dtype=str(x.dtype),
            ),
            "mask",
        )
    return x


def _check_batch(size: int, g: Geometry, name: str) -> None:
    if not 0 <= g.batch < size:
        raise AttentionInputError(
            message(
                QT_TRANSLATE_NOOP("Errors", "{name} has {size} batch element(s); batch {batch} was asked for"),
                name=name,
                size=size,
                batch=g.batch,
            ),
            "mask",
        )


def _bool_tensor(t: object, name: str) -> torch.Tensor:
    x = torch.as_tensor(t)
    if x.dtype != torch.bool:
        raise AttentionInputError(
            message(
                QT_TRANSLATE_NOOP("Errors", "{name} must be a boolean tensor; got dtype {dtype}"),
                name=name,
                dtype=str(x.dtype),
            ),
            "mask",
        )
    return x


def check_count(value: object, name: str, minimum: int, field: str = "mask") -> int:
    """``value`` if it is a whole number >= ``minimum``, else an error about ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise AttentionInputError(
            message(
                QT_TRANSLATE_NOOP("Errors", "{name} must be a whole number >= {minimum}; got {value}"),
                name=name,
                minimum=minimum,
                value=repr(value),
            ),
            field,
        )
    return value


def _check_align(align: object) -> str:
    if align not in CAUSAL_ALIGNMENTS:
        raise AttentionInputError(causal_problem(align), "mask")
    return str(align)


def _offset(align: str, g: Geometry) -> int:
    return g.n_k - g.n_q if align == "bottom_right" else 0


def check_span(s: slice, n: int, name: str) -> tuple[int, int]:
    """(start, stop) of a step-1 slice of ``n`` items that selects something."""
    if not isinstance(s, slice) or s.step not in (None, 1):
        raise AttentionInputError(
            message(
                QT_TRANSLATE_NOOP("Errors", "{name} must be a slice with step 1; got {value}"), name=name, value=repr(s)
            ),
            "shape",
        )
    start, stop, _ = s.indices(n)
    if stop <= start:
        raise AttentionInputError(
            message(
                QT_TRANSLATE_NOOP("Errors", "{name} {value} selects nothing of {n}"), name=name, value=repr(s), n=n
            ),
            "shape",
        )
    return start, stop


__all__ = [
    "DEFAULT_BLOCK",
    "EMPTY",
    "FULL",
    "PARTIAL",
    "AllOf",
    "BlockStructure",
    "BoundMask",
    "Causal",
    "Chunked",
    "Documents",
    "KeyPadding",
    "Mask",
    "MaskMod",
    "PrefixLM",
    "SinkWindow",
    "SlidingWindow",
    "ValidLength",
    "check_count",
    "check_span",
    "make_mask",
    "runs",
]
