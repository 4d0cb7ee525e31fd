"""A mask description bound to one call: what every consumer asks a mask.

``Mask.bind_call`` (``mask_mods``) binds a description once per call, to the call's geometry:
leading dimensions (B, H, ...) flattened to N batch elements, L_q queries, L_k keys, a device and
a compute dtype. The ``CallMask`` it returns is made of *parts*, one per description, each kept
at its own size (nothing is expanded to (..., L_q, L_k)), and serves:

  * ``attend``'s block loop: ``block(n0, n1, r0, r1)`` gives the boolean ``allowed`` mask and the
    additive ``bias`` of flattened elements n0:n1 and query rows r0:r1;
  * the streaming overview, tiles and block structures: ``element(batch, head)`` gives the
    ``BoundMask`` of one (L_q, L_k) matrix, whose rules are row intervals, key flags, predicates
    and additive terms (see ``BoundMask``), classified a block of rows at a time (``RowBlock``);
  * the diagnostics, the labs and the doctor: ``full()``, the sources as passed (``allowed``,
    ``bias``), the valid lengths.

An additive source (a float ``attn_mask`` or ``key_padding_mask``) is added to the scores as
given. Where a consumer needs to know whether it *masks* a key (the ``mask`` stage, the
diagnostics, the overview's masked cells) a value at or below ``ADDITIVE_MASKED_AT`` counts as
masking it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from .validation import check_count

#: Block states, as drawn: no allowed cell, some allowed cells, every cell allowed.
EMPTY, PARTIAL, FULL = 0, 1, 2
#: The block size FlexAttention uses by default.
DEFAULT_BLOCK = 128
#: Cells a predicate is evaluated on at once (its int64 temporaries: 8 MiB each).
PREDICATE_CELLS = 1 << 20

#: An additive mask value at or below this counts as masking its key, for the ``mask`` stage, the
#: diagnostics and the overview's masked cells (``attend`` adds every value as given). exp(-1e4)
#: underflows to 0 in every float dtype, so such a key gets no weight unless the scores themselves
#: span 1e4. Every masking convention in use is below it: -inf, finfo(float16/bfloat16/float32).min,
#: -1e9, and the -10000 of older BERT code; position biases (ALiBi, T5) stay far above it.
ADDITIVE_MASKED_AT = -1e4

#: A query's allowed keys: a list of (lo, hi) index tensors, key k allowed when lo <= k < hi for
#: one of them. Within a row the ranges are disjoint (classification counts on it).
Intervals = list[tuple[torch.Tensor, torch.Tensor]]
#: FlexAttention's mask_mod: (batch, head, q_idx, kv_idx) index tensors -> bool tensor.
MaskModFn = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]
#: (q_idx, kv_idx) broadcastable index tensors -> a tensor of their broadcast shape.
CellFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class Geometry:
    """What a description is bound to: the call's leading dimensions (batch first), sizes,
    device and compute dtype.

    ``exact``: a per-batch tensor of a description (valid lengths, document ids, key flags) must
    have exactly ``lead[0]`` rows, as ``attend`` requires; otherwise at least as many as the batch
    elements asked for (one matrix picked by its index, as ``overview`` does).
    """

    lead: tuple[int, ...]
    n_q: int
    n_k: int
    device: torch.device
    dtype: torch.dtype = torch.float32
    exact: bool = True
    predicate_cells: int = PREDICATE_CELLS

    @property
    def batch(self) -> int:
        return self.lead[0]

    @property
    def n_flat(self) -> int:
        return math.prod(self.lead)

    @property
    def per_batch(self) -> int:
        """Flattened elements per batch element (heads and any further dimensions)."""
        return self.n_flat // self.batch


# --------------------------------------------------------------------------- one matrix's terms


@dataclass(frozen=True)
class IntervalTerm:
    #: query indices (any shape) -> allowed key ranges, each tensor of the same shape.
    ranges: Callable[[torch.Tensor], Intervals]


@dataclass(frozen=True)
class KeyTerm:
    allowed: torch.Tensor  # bool (n_k,)


@dataclass(frozen=True)
class PredicateTerm:
    fn: CellFn  # -> bool
    #: (r0, r1, n_k, block) -> (can be True, can be False) per key block, or None where the
    #: rule cannot say without its cells (``mask_intervals``); None: never asked.
    bounds: Callable[[int, int, int, int], tuple[torch.Tensor, torch.Tensor] | None] | None = None


@dataclass(frozen=True)
class BiasTerm:
    fn: CellFn  # -> values added to the scores (compute dtype)


Term = IntervalTerm | KeyTerm | PredicateTerm | BiasTerm


# --------------------------------------------------------------------------- a call's parts


class Part:
    """One description bound to a call. ``block`` is bool (True = attend), or the values added
    to the scores when ``additive``; ``terms`` are the rules of one batch element and head."""

    additive = False

    def block(self, n0: int, n1: int, r0: int, r1: int) -> torch.Tensor:
        """Flattened elements n0:n1, query rows r0:r1: broadcastable to (n1 - n0, r1 - r0, L_k)."""
        raise NotImplementedError

    def terms(self, batch: int, head: int) -> list[Term]:
        raise NotImplementedError


class CausalPart(Part):
    """Query q sees keys k <= q (+ L_k - L_q bottom-right: the last query lines up with the
    last key, which is what decoding with a KV cache needs)."""

    def __init__(self, g: Geometry, align: str) -> None:
        self.g, self.align = g, align
        self.offset = g.n_k - g.n_q if align == "bottom_right" else 0

    def block(self, n0: int, n1: int, r0: int, r1: int) -> torch.Tensor:
        q = torch.arange(r0, r1, device=self.g.device)[:, None]
        return (torch.arange(self.g.n_k, device=self.g.device)[None, :] <= q + self.offset)[None]

    def terms(self, batch: int, head: int) -> list[Term]:
        off = self.offset
        return [IntervalTerm(lambda q: [(q * 0, q + off + 1)])]

    def empty_rows(self, r0: int, r1: int) -> torch.Tensor:
        return (torch.arange(r0, r1, device=self.g.device) + self.offset < 0).unsqueeze(0)


@dataclass(frozen=True)
class Source:
    """A mask source at its own size: ``data`` (M, L_q or 1, ...) over N flattened batch elements.

    ``index`` (N,) is the row of ``data`` for each flattened batch element; None when ``data`` has
    a row per element (M = N) or one row for all (M = 1). ``keys_by_batch`` (B or 1, L_k) bool is
    what the source allows per batch element when it is a padding form (the same keys for every
    query and head), else None: the diagnostics compare padding declarations through it.
    """

    name: str
    data: torch.Tensor
    index: torch.Tensor | None = None
    keys_by_batch: torch.Tensor | None = None
    #: Float sources: finite values that became -inf in the compute dtype.
    overflowed: int = 0
    #: Float sources holding only 0 and 1 with some 1: an additive mask that masks nothing.
    zero_one: bool = False

    def take(self, n0: int, n1: int, r0: int, r1: int) -> torch.Tensor:
        """The part for flattened batch elements n0:n1 and query rows r0:r1 (broadcastable)."""
        d = self.data if self.data.shape[1] == 1 else self.data[:, r0:r1]
        if self.index is None:
            return d if d.shape[0] == 1 else d[n0:n1]
        rows = self.index[n0:n1]
        first = int(rows[0])
        if bool((rows == first).all()):
            return d[first : first + 1]
        if torch.equal(rows, torch.arange(first, first + n1 - n0)):
            return d[first : first + n1 - n0]
        return d.index_select(0, rows.to(d.device))

    def row(self, n: int) -> torch.Tensor:
        """(L_q or 1, L_k or 1): the source of flattened element ``n``."""
        if self.index is not None:
            return self.data[int(self.index[n])]
        return self.data[0 if self.data.shape[0] == 1 else n]


def source_index(shape: tuple[int, ...], lead: tuple[int, ...]) -> torch.Tensor | None:
    """Row of a source with leading shape ``shape`` (each 1 or equal to ``lead``) per element of ``lead``."""
    if all(s == 1 for s in shape) or shape == lead:
        return None
    return torch.arange(math.prod(shape)).reshape(shape).expand(lead).reshape(-1)


class LengthPart(Part):
    """The book's valid lengths: key k is allowed when k < the length of the batch element (1-D)
    or of the query (2-D). ``lens`` int64 (B,) or (B, L_q)."""

    def __init__(self, g: Geometry, lens: torch.Tensor) -> None:
        self.g, self.lens = g, lens
        lens_2d = lens[:, None] if lens.dim() == 1 else lens
        self.source = Source("valid_lens", lens_2d, source_index((lens.shape[0], *(1,) * (len(g.lead) - 1)), g.lead))

    def block(self, n0: int, n1: int, r0: int, r1: int) -> torch.Tensor:
        keys = torch.arange(self.g.n_k, device=self.g.device)
        return keys < self.source.take(n0, n1, r0, r1)[..., None]

    def terms(self, batch: int, head: int) -> list[Term]:
        row = self.lens[batch if self.lens.shape[0] > 1 else 0]
        if row.dim() == 0:
            length = int(row)
            return [IntervalTerm(lambda q: [(q * 0, q * 0 + length)])]
        return [IntervalTerm(lambda q: [(q * 0, row[q])])]

    def flat_lens(self) -> list[int]:
        """1-D lengths per flattened batch element (each head repeats its batch element's)."""
        per = self.g.per_batch
        return (self.lens if per == 1 else self.lens.repeat_interleave(per)).tolist()


class SourcePart(Part):
    """A tensor as an argument declared it (``attn_mask``, ``key_padding_mask``,
    ``attention_mask``), at its own broadcast size: boolean (True = attend) or additive."""

    def __init__(self, g: Geometry, source: Source) -> None:
        self.g, self.source = g, source
        self.additive = source.data.dtype != torch.bool

    def block(self, n0: int, n1: int, r0: int, r1: int) -> torch.Tensor:
        return self.source.take(n0, n1, r0, r1)

    def terms(self, batch: int, head: int) -> list[Term]:
        d = self.source.row(batch * self.g.per_batch + head)  # (L_q or 1, L_k or 1)
        allowed = d > ADDITIVE_MASKED_AT if self.additive else d
        terms: list[Term] = []
        if d.shape[0] == 1:
            terms.append(KeyTerm(allowed[0].expand(self.g.n_k)))
        else:
            terms.append(PredicateTerm(_lookup(allowed)))
        if self.additive and bool((torch.where(allowed, d, 0) != 0).any()):
            terms.append(BiasTerm(_lookup(d)))
        return terms


def _lookup(d: torch.Tensor) -> CellFn:
    """(q_idx, kv_idx) -> the values of a (L_q or 1, L_k or 1) tensor at those cells."""

    def cells(q: torch.Tensor, kv: torch.Tensor) -> torch.Tensor:
        return d[q if d.shape[0] > 1 else q * 0, kv if d.shape[1] > 1 else kv * 0]

    return cells


class RulePart(Part):
    """A rule evaluated from its terms (windows, documents, prefixes, chunks, key flags,
    ``mask_mod`` predicates): per batch element when ``by_batch``, per head when ``by_head``.
    ``attend``'s blocks are the terms evaluated over every key of their rows."""

    def __init__(self, g: Geometry, terms_of: Callable[[int, int], list[Term]], by_batch: bool, by_head: bool) -> None:
        self.g, self._terms_of = g, terms_of
        self.by_batch, self.by_head = by_batch, by_head
        self._cache: dict[tuple[int, int], list[Term]] = {}
        # Bound now, so that a bad description fails before anything is computed with it.
        self.terms(g.batch - 1, 0)

    def terms(self, batch: int, head: int) -> list[Term]:
        key = (batch if self.by_batch else 0, head if self.by_head else 0)
        if key not in self._cache:
            self._cache[key] = self._terms_of(*key)
        return self._cache[key]

    def _region(self, batch: int, head: int, r0: int, r1: int) -> torch.Tensor:
        g = self.g
        return BoundMask(g.n_q, g.n_k, g.device, self.terms(batch, head), g.predicate_cells).region(r0, r1, 0, g.n_k)

    def block(self, n0: int, n1: int, r0: int, r1: int) -> torch.Tensor:
        per = self.g.per_batch
        if self.by_head:
            return torch.stack([self._region(n // per, n % per, r0, r1) for n in range(n0, n1)])
        if not self.by_batch:
            return self._region(0, 0, r0, r1)[None]
        b0, b1 = n0 // per, (n1 - 1) // per + 1
        regions = torch.stack([self._region(b, 0, r0, r1) for b in range(b0, b1)])
        if per == 1:
            return regions
        return regions[torch.arange(n0, n1, device=regions.device) // per - b0]


# --------------------------------------------------------------------------- the call's mask


class CallMask:
    """Every part of a mask description, bound to one call (see the module's note).

    ``lead`` is the queries' leading shape (B, or B, H, ...); N = prod(lead) flattened batch
    elements. The attributes the diagnostics read: ``valid_lens`` (the first valid lengths, int64
    (B,) or (B, L_q)), ``allowed`` and ``bias`` (the boolean and the additive sources as passed).
    """

    def __init__(self, g: Geometry, parts: Sequence[Part]) -> None:
        self.geometry = g
        self.lead, self.n_queries, self.n_keys = g.lead, g.n_q, g.n_k
        self.batch = g.batch
        #: N: the number of flattened batch elements (the product of the leading dimensions).
        self.n_flat = g.n_flat
        unique: list[Part] = []
        for part in parts:
            # One causal mask per alignment: the keyword form and a description may both say it.
            if not any(
                isinstance(p, CausalPart) and isinstance(part, CausalPart) and p.align == part.align for p in unique
            ):
                unique.append(part)
        self.parts = tuple(unique)
        self._masking = tuple(p for p in self.parts if not p.additive)
        self._adding = tuple(p for p in self.parts if p.additive)
        lengths = [p for p in self.parts if isinstance(p, LengthPart)]
        self._lengths = lengths[0] if lengths else None
        self.allowed = tuple(p.source for p in self._masking if isinstance(p, SourcePart))
        self.bias = tuple(p.source for p in self._adding if isinstance(p, SourcePart))

    @property
    def valid_lens(self) -> torch.Tensor | None:
        return None if self._lengths is None else self._lengths.lens

    @property
    def is_empty(self) -> bool:
        """No mask at all: every query sees every key."""
        return not self.parts

    @property
    def has_boolean(self) -> bool:
        """Some part masks (valid lengths, causal, a rule, a boolean mask): a mode has a mask to apply."""
        return bool(self._masking)

    @property
    def is_prefix(self) -> bool:
        """Only 1-D valid lengths: every row of a batch element keeps the same leading keys."""
        return len(self.parts) == 1 and self._lengths is not None and self._lengths.lens.dim() == 1

    def flat_lens(self) -> list[int]:
        """1-D valid lengths per flattened batch element (each head repeats its batch element's)."""
        assert self._lengths is not None and self._lengths.lens.dim() == 1
        return self._lengths.flat_lens()

    def block(self, n0: int, n1: int, r0: int, r1: int) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """``allowed`` (bool) and ``bias`` (float) for flattened elements n0:n1 and query rows r0:r1.

        Each is broadcastable to (n1 - n0, r1 - r0, L_k), or None when no part of its kind exists.
        """
        allowed: torch.Tensor | None = None
        for part in self._masking:
            m = part.block(n0, n1, r0, r1)
            allowed = m if allowed is None else allowed & m
        bias: torch.Tensor | None = None
        for part in self._adding:
            b = part.block(n0, n1, r0, r1)
            bias = b if bias is None else bias + b
        return allowed, bias

    def empty_rows(self, n0: int, n1: int, r0: int, r1: int) -> torch.Tensor | None:
        """Rows with no allowed key when that follows from valid lengths alone or a causal mask alone
        (no mask to look at), broadcastable to (n1 - n0, r1 - r0); else None."""
        if len(self.parts) != 1:
            return None
        part = self.parts[0]
        if isinstance(part, LengthPart):
            return part.source.take(n0, n1, r0, r1) == 0
        if isinstance(part, CausalPart):
            return part.empty_rows(r0, r1)
        return None

    def full(self) -> torch.Tensor:
        """Where each query may attend to each key, shape (*lead, L_q, L_k).

        A key counts as masked by an additive mask when its value is at or below
        ``ADDITIVE_MASKED_AT`` (it is still added as given in the computation).
        """
        allowed, bias = self.block(0, self.n_flat, 0, self.n_queries)
        if bias is not None:
            unmasked = bias > ADDITIVE_MASKED_AT
            allowed = unmasked if allowed is None else allowed & unmasked
        shape = (self.n_flat, self.n_queries, self.n_keys)
        if allowed is None:
            allowed = torch.ones((1, 1, 1), dtype=torch.bool, device=self.geometry.device)
        return allowed.expand(shape).reshape(*self.lead, *shape[1:]).contiguous()

    def valid_lens_over_keys(self) -> torch.Tensor | None:
        """Which valid lengths exceed the number of keys (the book then treats all keys as valid)."""
        lens = self.valid_lens
        return None if lens is None else lens > self.n_keys

    def element(self, batch: int = 0, head: int = 0) -> BoundMask:
        """The mask of one (L_q, L_k) matrix: batch element ``batch``, head ``head`` (the index
        within the batch element's flattened further dimensions)."""
        g = self.geometry
        terms = [term for part in self.parts for term in part.terms(batch, head)]
        return BoundMask(g.n_q, g.n_k, g.device, terms, g.predicate_cells, batch, head)


# --------------------------------------------------------------------------- one matrix


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
    """The mask of one (L_q, L_k) matrix (a batch element and head of a call): what the
    streaming code, tiles and block structures ask a mask.

    Its rules, by how they are evaluated (and why):
      * row intervals (causal, windows, documents stored as contiguous runs, prefix-LM, sinks,
        chunks, valid lengths): per query, the allowed keys are at most two disjoint ranges of
        indices. A block's state then follows from the ranges of its rows alone, without looking
        at its cells, so classifying the blocks costs O(rows + blocks), not O(rows x keys).
      * key flags (padding masks): one flag per key, the same for every query.
      * predicates (``MaskMod``, documents whose ids are not contiguous, a full boolean mask):
        evaluated on broadcast index tensors over every key of a block of rows (vectorised, as
        FlexAttention's ``create_block_mask`` evaluates a ``mask_mod``), so they cost O(rows x
        keys) booleans, computed a block of rows at a time and never held whole.
      * additive terms (a float mask's values): added to the scores of the allowed cells.
    """

    def __init__(
        self,
        n_q: int,
        n_k: int,
        device: torch.device,
        terms: Sequence[Term],
        predicate_cells: int = PREDICATE_CELLS,
        batch: int = 0,
        head: int = 0,
    ) -> None:
        self.n_q, self.n_k, self.device = n_q, n_k, device
        self.batch, self.head = batch, head
        self.predicate_cells = predicate_cells
        self._ranges = [t.ranges for t in terms if isinstance(t, IntervalTerm)]
        self._predicates = [t.fn for t in terms if isinstance(t, PredicateTerm)]
        self._bounds = [t.bounds for t in terms if isinstance(t, PredicateTerm)]
        self._biases = [t.fn for t in terms if isinstance(t, BiasTerm)]
        keys: torch.Tensor | None = None
        for t in terms:
            if isinstance(t, KeyTerm):
                keys = t.allowed if keys is None else keys & t.allowed
        self.keys = keys

    @property
    def has_predicates(self) -> bool:
        """Some rule is a predicate, evaluated cell by cell (``MaskMod``, scattered documents)."""
        return bool(self._predicates)

    @property
    def has_bias(self) -> bool:
        """Some values are added to the scores (an additive mask that is not only 0 and masking values)."""
        return bool(self._biases)

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
        q, kv = self._indices(r0, r1, c0, c1)
        return self.evaluate(q, kv)

    def bias(self, r0: int, r1: int, c0: int, c1: int) -> torch.Tensor | None:
        """The values added to the scores of rows r0:r1 and keys c0:c1 (broadcastable to
        (r1 - r0, c1 - c0)); None when nothing is added."""
        if not self._biases:
            return None
        q, kv = self._indices(r0, r1, c0, c1)
        total = self._biases[0](q, kv)
        for more in self._biases[1:]:
            total = total + more(q, kv)
        return total

    def _indices(self, r0: int, r1: int, c0: int, c1: int) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.arange(r0, r1, device=self.device)[:, None], torch.arange(c0, c1, device=self.device)[None, :]

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
        dev = mask.device
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
        #: Key blocks the predicates surely allow whole (found on index ranges, unevaluated).
        self.pred_sure: torch.Tensor | None = None
        if mask._predicates:
            self.pred = torch.zeros((r1 - r0, 0), dtype=torch.bool, device=dev)
            found = self._bounded(r0, r1, n_k, block, n_kb)
            unsure = some
            if found is not None:
                can_true, sure = found
                some = some & can_true
                unsure = some & ~sure
                self.pred_sure = sure
            idx = unsure.nonzero()
            j0 = j1 = 0
            if len(idx):
                # From the first to the last block in doubt: the others are sure either way.
                j0, j1 = int(idx[0]), int(idx[-1]) + 1
                c0, c1 = j0 * block, min(n_k, j1 * block)
                pred = torch.empty((r1 - r0, c1 - c0), dtype=torch.bool, device=dev)
                # A predicate's index arithmetic makes int64 temporaries: a few columns at a time.
                step = max(block, mask.predicate_cells // (r1 - r0) // block * block)
                # int32 indices, as FlexAttention's kernels pass them: half the memory traffic of
                # a predicate's index arithmetic, which here runs over every candidate cell.
                index = torch.int32 if max(mask.n_q, n_k) < 2**31 else torch.int64
                rows = self.rows.to(index)[:, None]
                for a in range(c0, c1, step):
                    b = min(c1, a + step)
                    kv = torch.arange(a, b, device=dev, dtype=index)[None, :]
                    cells = pred[:, a - c0 : b - c0]
                    cells.copy_(mask._predicates[0](rows, kv))  # broadcast into place: no temporary
                    for predicate in mask._predicates[1:]:
                        cells &= predicate(rows, kv)
                self.pred, self.pred_start = pred, c0
                p_some, p_full = _dense_classes(pred, block, c1 - c0)
                some[j0:j1] &= p_some
                others_full[j0:j1] &= p_full
            if self.pred_sure is None:
                others_full[:j0] = False
                others_full[j1:] = False
            else:
                others_full[:j0] &= self.pred_sure[:j0]
                others_full[j1:] &= self.pred_sure[j1:]
        self.some = some
        self.others_full = others_full
        self.full = others_full if self.ivs is None else full & others_full

    def _bounded(self, r0: int, r1: int, n_k: int, block: int, n_kb: int) -> tuple[torch.Tensor, torch.Tensor] | None:
        """(can be True, surely all True) per key block from every predicate's ranges, or None
        when one cannot say (its cells are evaluated, as before)."""
        can_true = torch.ones(n_kb, dtype=torch.bool)
        can_false = torch.zeros(n_kb, dtype=torch.bool)
        for bounds in self.mask._bounds:
            found = bounds(r0, r1, n_k, block) if bounds is not None else None
            if found is None or found[0].shape != (n_kb,):
                return None
            can_true &= found[0]
            can_false |= found[1]
        dev = self.rows.device
        return can_true.to(dev), (~can_false).to(dev)

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
            if self.pred_sure is None:
                # Outside the evaluated keys no block is a candidate: nothing there is allowed.
                out[:, : max(0, min(c1, p0) - c0)] = True
                out[:, max(0, p1 - c0) :] = True
            else:
                # Outside them a block is allowed whole (sure) or not a candidate at all.
                cols = torch.arange(c0, c1, device=dev)
                sure = self.pred_sure[(cols // self.block).clamp_(max=len(self.pred_sure) - 1)]
                out[:, ((cols < p0) | (cols >= p1)) & ~sure] = True
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
    # any / all rather than a count: no int64 copy of the booleans.
    cells = padded.view(n_rows, nb, block)
    some = cells.any(2).any(0)
    full = cells.all(2).all(0)
    if nb * block != width:  # the last block's padding is not masked cells
        full[-1] = bool(allowed[:, (nb - 1) * block :].all())
    return some, full
