"""Attention over long inputs without the (L_q, L_k) matrix: a display-sized overview, exact tiles.

``overview`` streams over blocks of query rows. For each block it computes the scores of the
keys the mask leaves (key blocks the mask empties are skipped; see ``mask_mods``), takes an
exact softmax per row (all of a row's needed keys are in the block at once, so no online
rescaling is needed), and folds the weights into per-bin sums and maxima, per-key totals and
per-row statistics. Nothing of size L_q x L_k is ever held: memory is O(L_q + L_k + bins) plus
one block of about ``BLOCK_ELEMENTS`` scores.

The row statistics it keeps (each row's largest score and log-normaliser, FlexAttention's
``lse``) make any region exact and cheap afterwards: ``tile`` recomputes that region's scores
only and turns them into weights with w = exp(s - lse), with no second pass over the rows.

Semantics: scaled dot-product scores s = (q . k) * scale (scale 1/sqrt(d) by default; pass
``scale=1.0`` for the plain dot product), masked exactly (a masked key has weight 0 and takes no
part in the normaliser). A row with no allowed key has zero weights everywhere, zero entropy, a
row max and log-normaliser of -inf, and is flagged in ``RowStats.empty_rows``: no NaN reaches
the bins. (This is the "strict" / SDPA convention for empty rows, and FlexAttention's; the
book's -1e6 fill would give such a row uniform weights instead.)

Precision: by default float64 inputs are computed in float64 and anything else in float32
(``dtype`` chooses); bins, per-key sums and row statistics are accumulated in float64. In
float32 the scores carry float32 rounding (about 1e-7 of sum_i |q_i k_i| scale), and so does
everything made of them: for scaled dot products of ordinary activations the weights, bins and
tiles are within 1e-6 of a float64 computation, and the row statistics, entropy and per-key
sums within a few 1e-6 relative. ``dtype="float64"`` removes that at about twice the cost.

Speed: scores are computed in units of log2 (the scale folded into the queries) because exp2
is about twice as fast as exp on the CPU, as FlashAttention does; masked cells get the lowest
finite value, not -inf, so that 0 x fill stays 0 in the entropy's sum.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import torch

from attnviz.text.tr import QT_TRANSLATE_NOOP

from .errors import input_error
from .mask_bound import DEFAULT_BLOCK, BoundMask, Geometry, RowBlock, runs
from .mask_keywords import MaskKeywords, make_mask
from .mask_mods import Mask
from .memory import empty_large
from .score_terms import BoundTerm, ScoreTerm, check_score_terms

if TYPE_CHECKING:
    from typing_extensions import Unpack
from .validation import (
    as_tensor,
    check_batches,
    check_count,
    check_float_dtype,
    check_index,
    check_real,
    check_scale_value,
    check_span,
    first_nonfinite,
)

#: Scores per block of query rows (8 MiB in float32). Smaller blocks pay more per-operation
#: overhead (and, with several threads, more synchronisation); larger ones leave the cache and
#: widen the masked strips along a band's edges. 2^20 to 2^22 measured within 10 % of each other.
BLOCK_ELEMENTS = 1 << 21
#: Cells of mask predicates (``mask_mod``) evaluated per block of rows: they are evaluated over
#: every key a block might need, and a predicate's index arithmetic makes int64 temporaries.
PREDICATE_ELEMENTS = 1 << 21
#: ``tile`` refuses larger regions (64 Mi cells, 256 MiB of float32 weights).
MAX_TILE_CELLS = 1 << 26

Progress = Callable[[int, int], None]
_LN_2 = math.log(2.0)
_LOG2_E = 1.0 / _LN_2


class OverviewCancelled(Exception):
    """``should_stop`` returned True: the overview stopped between two blocks of rows."""


@dataclass(frozen=True)
class RowStats:
    """What makes any region of the weights exact and cheap later (see ``tile``).

    ``row_max``         (L_q,) float64: the largest scaled score among each row's allowed keys
    ``log_normalizer``  (L_q,) float64: log sum_k exp(s_qk) over allowed keys (FlexAttention's lse)
    ``allowed_keys``    (L_q,) int64: how many keys each row may attend to
    Rows with no allowed key have -inf in the first two and 0 in the third (``empty_rows``).
    """

    row_max: torch.Tensor
    log_normalizer: torch.Tensor
    allowed_keys: torch.Tensor
    mask: BoundMask
    scale: float
    batch: int
    head: int
    d: int
    #: The same in the units the overview computed in (log2 of the weights, compute dtype /
    #: float64): a tile recomputes its scores exactly as the overview did and subtracts these.
    log2_max: torch.Tensor = field(repr=False)
    log2_z: torch.Tensor = field(repr=False)
    #: The score terms bound to the call (``overview(score_terms=...)``) and the flattened
    #: element of (batch, head) they apply to: a tile applies them as the overview did.
    terms: tuple[BoundTerm, ...] = field(default=(), repr=False)
    element: int = 0

    @property
    def empty_rows(self) -> torch.Tensor:
        """(L_q,) bool: rows with no allowed key (zero weights, flagged)."""
        return self.allowed_keys == 0

    @property
    def n_q(self) -> int:
        return self.mask.n_q

    @property
    def n_k(self) -> int:
        return self.mask.n_k


@dataclass(frozen=True)
class Overview:
    """The weights of an (L_q, L_k) attention matrix reduced to display bins, and per row / key.

    Bins: ``bin_rows`` x ``bin_cols`` cells each (the last row / column of bins may be smaller:
    ``row_edges``, ``col_edges``). Every per-bin value is over the bin's real cells, masked
    cells included (their weight is 0):
      ``mean``, ``max``      (n_row_bins, n_col_bins) float64: mean and largest weight
      ``masked_share``       (n_row_bins, n_col_bins) float64: share of masked cells, 0..1
    ``column_sums`` (L_k,) float64: total attention each key receives (sinks stand out);
    ``entropy`` (L_q,) float64: -sum_k w log w per row, in nats (0 for an empty row);
    ``stats``: the row statistics for ``tile`` and ``weight_row``;
    ``computed_cells``: scores actually computed (the rest were skipped as masked blocks).
    """

    mean: torch.Tensor
    max: torch.Tensor
    masked_share: torch.Tensor
    bin_rows: int
    bin_cols: int
    column_sums: torch.Tensor
    entropy: torch.Tensor
    stats: RowStats
    computed_cells: int
    seconds: float

    def row_edges(self) -> torch.Tensor:
        """(n_row_bins + 1,) int64: bin i covers query rows row_edges[i]:row_edges[i + 1]."""
        return _edges(self.bin_rows, self.stats.n_q)

    def col_edges(self) -> torch.Tensor:
        """(n_col_bins + 1,) int64: bin j covers keys col_edges[j]:col_edges[j + 1]."""
        return _edges(self.bin_cols, self.stats.n_k)


@dataclass(frozen=True)
class Tile:
    """An exact region: ``weights``, the scaled ``scores`` (masked cells keep theirs, for hover)
    and ``allowed`` (bool), each (len(rows), len(cols)), for query rows ``rows`` and keys ``cols``."""

    weights: torch.Tensor
    scores: torch.Tensor
    allowed: torch.Tensor
    rows: range
    cols: range


def overview(
    q: object,
    k: object,
    *,
    bins: tuple[int, int] = (1024, 1024),
    scale: float | None = None,
    batch: int = 0,
    head: int = 0,
    mask: Mask | None = None,
    score_terms: ScoreTerm | Sequence[ScoreTerm] | None = None,
    block_size: int = DEFAULT_BLOCK,
    dtype: torch.dtype | str | None = None,
    progress: Progress | None = None,
    should_stop: Callable[[], bool] | None = None,
    **masks: Unpack[MaskKeywords],
) -> Overview:
    """The attention weights of queries ``q`` over keys ``k``, reduced to at most ``bins``.

    Shapes: ``q`` (L_q, d), (B, L_q, d) or (B, H, L_q, d); ``k`` the same with L_k (4-D keys may
    have fewer heads, grouped-query attention: query head h uses key head h // (H / H_kv)). One
    (L_q, L_k) matrix is reduced per call: batch element ``batch``, head ``head``.

    Masks (every one given is combined, AND; see ``mask_keywords.make_mask`` for each): ``causal``,
    ``valid_lens``, ``key_padding_mask`` (True = ignore), ``attention_mask`` (Hugging Face, 1 =
    attend), ``window``, ``sinks``, ``documents``, ``prefix``, ``chunk``, ``mask_mod``, and
    ``mask``, any description ``attend`` takes: it is bound to the call's leading dimensions
    (those of ``q``) and the matrix of ``batch`` and ``head`` is taken from it, so ``attend`` and
    the overview read one description the same way. An additive mask's values are added to the
    scores; a key whose value is at or below ``ADDITIVE_MASKED_AT`` counts as masked (as in
    ``attend``'s ``mask`` stage). Key blocks of ``block_size`` keys that the mask empties are
    skipped.

    ``score_terms``: as ``attend`` takes them (``ScoreBias``, ``SoftCap``, ``Alibi``, a FlexAttention
    ``ScoreMod``), applied to each computed block of scaled scores before the mask, in the same
    memory bound (a block's temporaries); ``Sinks`` (a logit in the softmax) are not drawn here.

    ``dtype``: what to compute in, "float32" or "float64"; by default float64 for float64 inputs
    and float32 otherwise (as fast as QK^T allows; see the module's note on precision). ``tile``
    uses the same.

    ``progress(done_rows, total_rows)`` is called after each block of rows (from the calling
    thread); ``should_stop()`` is polled before each and raises ``OverviewCancelled`` when it
    returns True (a block takes milliseconds, so a newer request waits no longer than that).

    Memory: O(L_q + L_k + bins) plus one block of about BLOCK_ELEMENTS scores and its mask,
    never O(L_q x L_k). Time: O(computed cells x d).
    """
    start = time.perf_counter()
    qs, ks, lead = _select(q, k, batch, head, check_float_dtype(dtype, (torch.float32, torch.float64)))
    n_q, d = qs.shape
    n_k = ks.shape[0]
    given_scale = check_scale_value(scale)
    scale_value = 1.0 / math.sqrt(d) if given_scale is None else given_scale
    call = make_mask(mask=mask, **masks).bind_call(lead, n_q, n_k, device=qs.device, dtype=qs.dtype, exact=False)
    bound = call.element(batch, head)
    terms = _bind_terms(score_terms, lead, n_q, n_k, qs)
    element = batch * lead[1] + head if len(lead) >= 2 else (batch if lead else 0)
    bins_q, bins_k = _check_bins(bins)
    bh, bw = -(-n_q // bins_q), -(-n_k // bins_k)
    check_count(block_size, "block_size", 1, "shape")
    run = _Run(qs * (scale_value * _LOG2_E), ks, bound, bh, bw, bw * -(-block_size // bw), terms, element)

    def rows_for(width: int, previous: int) -> int:
        # Sized from the last block's width: narrow rows (a window) take many rows, but at most
        # twice as many as before (the next rows may be wider: causal) and a quarter of the
        # width (the masked strips along a band's edges are as wide as the block is tall).
        n = min(BLOCK_ELEMENTS // max(width, 1), max(16, width // 4), 2 * previous)
        if bound.has_predicates:
            n = min(n, PREDICATE_ELEMENTS // n_k)
        return max(1, min(n_q, n))

    n_rows = rows_for(n_k, n_q)
    r0 = 0
    while r0 < n_q:
        if should_stop is not None and should_stop():
            raise OverviewCancelled()
        r1 = min(n_q, r0 + n_rows)
        n_rows = rows_for(run.rows(r0, r1), r1 - r0)
        r0 = r1
        if progress is not None:
            progress(r0, n_q)
    return run.result(scale_value, batch, head, time.perf_counter() - start)


def tile(
    q: object, k: object, stats: RowStats | Overview, rows: slice = slice(None), cols: slice = slice(None)
) -> Tile:
    """The exact weights of query rows ``rows`` over keys ``cols`` (slices, step 1), from the row
    statistics of an ``overview`` of the same ``q`` and ``k``. Costs the region's scores only:
    O(len(rows) x len(cols) x d) time, O(len(rows) x len(cols)) memory (at most MAX_TILE_CELLS)."""
    st = stats.stats if isinstance(stats, Overview) else stats
    qs, ks, _lead = _select(q, k, st.batch, st.head, st.log2_max.dtype)
    if (qs.shape[0], ks.shape[0], qs.shape[1]) != (st.n_q, st.n_k, st.d):
        raise input_error(
            QT_TRANSLATE_NOOP(
                "Errors",
                "these row statistics are for {n_q} queries and {n_k} keys of size {d}; got {q} queries and "
                "{k} keys of size {dq}",
            ),
            "shape",
            n_q=st.n_q,
            n_k=st.n_k,
            d=st.d,
            q=qs.shape[0],
            k=ks.shape[0],
            dq=qs.shape[1],
        )
    rs = range(*check_span(rows, st.n_q, "rows"))
    cs = range(*check_span(cols, st.n_k, "cols"))
    if len(rs) * len(cs) > MAX_TILE_CELLS:
        raise input_error(
            QT_TRANSLATE_NOOP(
                "Errors",
                "a tile of {rows} x {cols} is too large (at most {limit} cells); use the overview for larger regions",
            ),
            "shape",
            rows=len(rs),
            cols=len(cs),
            limit=MAX_TILE_CELLS,
        )
    r, c = slice(rs.start, rs.stop), slice(cs.start, cs.stop)
    # The scores as the overview computed them (log2 units), so w = 2^(s - m - log2 z) equals its.
    scores = (qs[r] * (st.scale * _LOG2_E)) @ ks[c].T
    if st.terms:
        _apply_terms(st.terms, scores, st.element, rs.start, rs.stop, cs.start)
    bias = st.mask.bias(rs.start, rs.stop, cs.start, cs.stop)
    if bias is not None:
        scores += bias * _LOG2_E
    allowed = st.mask.region(rs.start, rs.stop, cs.start, cs.stop)
    weights = torch.exp2((scores - st.log2_max[r, None]).sub_(st.log2_z[r, None].to(scores.dtype)))
    weights.masked_fill_(~allowed, 0.0)  # empty rows have no allowed key: all zero
    return Tile(weights, scores.mul_(_LN_2), allowed, rs, cs)


def weight_row(q: object, k: object, stats: RowStats | Overview, query: int) -> torch.Tensor:
    """(L_k,) the exact weights of query ``query`` over every key (a line plot of one row)."""
    st = stats.stats if isinstance(stats, Overview) else stats
    if isinstance(query, bool) or not isinstance(query, int) or not -st.n_q <= query < st.n_q:
        raise input_error(
            QT_TRANSLATE_NOOP("Errors", "query must be a row index below {n}; got {value}"),
            "shape",
            n=st.n_q,
            value=repr(query),
        )
    query %= st.n_q
    return tile(q, k, st, slice(query, query + 1)).weights[0]


# --------------------------------------------------------------------------- the streaming pass


class _Run:
    """Accumulators of one overview, and the work on one block of rows."""

    def __init__(
        self,
        qs: torch.Tensor,
        ks: torch.Tensor,
        mask: BoundMask,
        bh: int,
        bw: int,
        block: int,
        terms: tuple[BoundTerm, ...] = (),
        element: int = 0,
    ) -> None:
        n_q, n_k = qs.shape[0], ks.shape[0]
        self.terms, self.element = terms, element
        dev, f64 = qs.device, torch.float64
        self.qs, self.mask, self.bh, self.bw, self.block = qs, mask, bh, bw, block
        n_rb, n_cb = -(-n_q // bh), -(-n_k // bw)
        # Keys padded with zeros to whole bins (masked below), so every run of key blocks
        # reshapes into (rows, bins, bw) without a ragged last bin.
        self.n_k_pad = n_cb * bw
        self.ks = ks if self.n_k_pad == n_k else torch.cat([ks, ks.new_zeros(self.n_k_pad - n_k, ks.shape[1])])
        self.sums = torch.zeros((n_rb, n_cb), dtype=f64, device=dev)
        self.maxes = torch.zeros_like(self.sums)
        self.counts = torch.zeros_like(self.sums)  # allowed cells
        self.columns = torch.zeros(self.n_k_pad, dtype=f64, device=dev)
        self.row_max = torch.full((n_q,), -math.inf, dtype=f64, device=dev)
        self.log2_max = torch.zeros(n_q, dtype=qs.dtype, device=dev)  # 0 on empty rows: harmless
        self.log2_z = torch.zeros(n_q, dtype=f64, device=dev)
        self.lse = torch.full_like(self.row_max, -math.inf)
        self.entropy = torch.zeros_like(self.row_max)
        self.allowed = torch.zeros(n_q, dtype=torch.int64, device=dev)
        # The lowest finite value: exp2(fill - m) is 0, and fill x 0 is 0 in the entropy's sum
        # (-inf x 0 would be NaN). exp2 takes it at full speed (exp would not).
        self.fill = torch.finfo(qs.dtype).min
        # key_prefix[x]: allowed keys among 0:x (the padding keys are never allowed).
        keys = mask.keys if mask.keys is not None else torch.ones(n_k, dtype=torch.bool, device=dev)
        self.key_prefix = torch.zeros(self.n_k_pad + 1, dtype=torch.int64, device=dev)
        self.key_prefix[1 : n_k + 1] = torch.cumsum(keys, 0)
        self.key_prefix[n_k + 1 :] = self.key_prefix[n_k]
        self.computed = 0
        # The scores and their exponentials of every block live in these two buffers, grown as
        # needed: a fresh allocation per block costs page faults (in a new process, up to three
        # times the arithmetic at 131,072 tokens).
        self._work = [torch.empty(0, dtype=qs.dtype, device=dev) for _ in range(2)]

    def rows(self, r0: int, r1: int) -> int:
        """Fold rows r0:r1 in; returns how many key columns were computed for them."""
        mask, bw, block = self.mask, self.bw, self.block
        rb = mask.row_block(r0, r1, block)
        blocks = runs(rb.some)
        if not blocks:
            return 0  # every row is empty: the initial -inf / 0 are its statistics
        n_rows = r1 - r0
        qb = self.qs[r0:r1]
        scores, counts = [], []
        # Without predicates the allowed cells are counted from the ranges (no pass over cells).
        counted = not mask.has_predicates
        masked_cells = torch.zeros(n_rows, dtype=torch.int64, device=qb.device)
        spans = [(j0 * block, min(j1 * block, self.n_k_pad)) for j0, j1 in blocks]
        width = sum(c1 - c0 for c0, c1 in spans)
        score_buf, exp_buf = (self._buffer(i, n_rows * width) for i in range(2))
        for c0, c1 in spans:
            s = score_buf[: n_rows * (c1 - c0)].view(n_rows, c1 - c0)
            score_buf = score_buf[n_rows * (c1 - c0) :]
            torch.mm(qb, self.ks[c0:c1].T, out=s)
            stop = min(c1, mask.n_k)
            if self.terms and stop > c0:
                _apply_terms(self.terms, s[:, : stop - c0], self.element, r0, r1, c0)
            bias = mask.bias(r0, r1, c0, stop) if stop > c0 else None
            if bias is not None:
                s[:, : stop - c0] += bias * _LOG2_E
            count = (
                self._allowed_per_bin(rb, c0, c1)
                if counted
                else torch.full((n_rows, (c1 - c0) // bw), bw, dtype=torch.int64, device=qb.device)
            )
            for a, b in rb.masked_columns(c0, c1, bw):
                masked = rb.masked(a, b)
                s[:, a - c0 : b - c0].masked_fill_(masked, self.fill)
                if not counted:
                    n_masked = masked.view(n_rows, -1, bw).sum(-1)
                    count[:, (a - c0) // bw : (b - c0) // bw] -= n_masked
                    masked_cells += n_masked.sum(1)
            scores.append(s)
            counts.append(count)
        self.computed += n_rows * width
        allowed = self._allowed_per_row(rb) if counted else width - masked_cells
        empty = allowed == 0

        bin_max = [s.view(n_rows, -1, bw).amax(-1) for s in scores]
        m = torch.stack([b.amax(1) for b in bin_max]).amax(0)
        # m = 0 on an empty row: its scores are all the fill, its exponentials all 0.
        m = m.masked_fill_(empty, 0.0)
        exps = []
        for s in scores:
            e = exp_buf[: s.numel()].view(s.shape)
            exp_buf = exp_buf[s.numel() :]
            exps.append(torch.exp2(s.sub_(m[:, None]), out=e))
        bin_sums = [e.view(n_rows, -1, bw).sum(-1) for e in exps]
        z = torch.stack([bs.sum(1) for bs in bin_sums]).sum(0).masked_fill_(empty, 1.0)
        dot = torch.stack([s.mul_(e).sum(1) for s, e in zip(scores, exps)]).sum(0)  # sum_k e_k (s_k - m), log2
        inv_z = z.reciprocal()

        f64 = torch.float64
        rb0 = r0 // self.bh
        local = torch.arange(r0, r1, device=qb.device) // self.bh - rb0
        rb1 = rb0 + int(local[-1]) + 1
        for (c0, c1), e, bs, bm, count in zip(spans, exps, bin_sums, bin_max, counts):
            cb0, cb1 = c0 // bw, c1 // bw
            self.columns[c0:c1] += torch.mv(e.T, inv_z).to(f64)
            self.sums[rb0:rb1, cb0:cb1].index_add_(0, local, (bs * inv_z[:, None]).to(f64))
            # Max of a bin = 2^(its largest score - m) / z: exp2 is increasing, so no pass over e.
            weights_max = torch.exp2(bm - m[:, None]).mul_(inv_z[:, None])
            self.maxes[rb0:rb1, cb0:cb1].scatter_reduce_(
                0, local[:, None].expand(-1, cb1 - cb0), weights_max.to(f64), "amax"
            )
            self.counts[rb0:rb1, cb0:cb1].index_add_(0, local, count.to(f64))

        self.log2_max[r0:r1] = m
        self.log2_z[r0:r1] = torch.log2(z.to(f64))
        log_z = torch.log(z.to(f64))
        m64 = m.to(f64) * _LN_2  # back to natural units
        self.row_max[r0:r1] = m64.masked_fill_(empty, -math.inf)
        self.lse[r0:r1] = (m64 + log_z).masked_fill_(empty, -math.inf)
        # H = -sum w ln w with w = e / z and ln w = ln 2 (s - m) - ln z (s, m in log2 units).
        self.entropy[r0:r1] = (log_z - dot.to(f64) * _LN_2 / z.to(f64)).masked_fill_(empty, 0.0)
        self.allowed[r0:r1] = allowed
        return width

    def _buffer(self, index: int, numel: int) -> torch.Tensor:
        """Work buffer ``index`` with room for ``numel`` elements (flat)."""
        if self._work[index].numel() < numel:
            self._work[index] = empty_large((numel,), self.qs.dtype, self.qs.device)
        return self._work[index]

    def _allowed_per_bin(self, rb: RowBlock, c0: int, c1: int) -> torch.Tensor:
        """(rows, bins of c0:c1) allowed cells, from the rows' ranges and the key mask alone."""
        kp = self.key_prefix
        starts = torch.arange(c0, c1, self.bw, device=kp.device)
        stops = starts + self.bw
        if rb.ivs is None:
            return (kp[stops] - kp[starts]).expand(len(rb.rows), -1)
        count = torch.zeros((len(rb.rows), len(starts)), dtype=torch.int64, device=kp.device)
        for lo, hi in rb.ivs:  # disjoint: the counts add up
            a = torch.maximum(lo[:, None], starts[None, :])
            b = torch.minimum(hi[:, None], stops[None, :])
            count += (_lookup(kp, b) - _lookup(kp, a)).clamp_min_(0)
        return count

    def _allowed_per_row(self, rb: RowBlock) -> torch.Tensor:
        kp = self.key_prefix
        if rb.ivs is None:
            return kp[self.mask.n_k].expand(len(rb.rows))
        per_range = [(_lookup(kp, hi) - _lookup(kp, lo)).clamp_min_(0) for lo, hi in rb.ivs]
        return torch.stack(per_range).sum(0)

    def result(self, scale: float, batch: int, head: int, seconds: float) -> Overview:
        n_q, n_k = self.mask.n_q, self.mask.n_k
        finite = torch.isfinite(self.lse) | (self.allowed == 0)
        if not bool(finite.all()):
            row = int((~finite).nonzero()[0])
            raise input_error(
                QT_TRANSLATE_NOOP(
                    "Errors",
                    "the scores of query {row} overflow {dtype}: the queries and keys are too large; use "
                    "float64 or smaller values",
                ),
                "queries",
                row=row,
                dtype=str(self.qs.dtype),
            )
        rows = torch.diff(_edges(self.bh, n_q)).to(torch.float64)
        cols = torch.diff(_edges(self.bw, n_k)).to(torch.float64)
        cells = rows[:, None] * cols[None, :]
        stats = RowStats(
            self.row_max,
            self.lse,
            self.allowed,
            self.mask,
            scale,
            batch,
            head,
            self.qs.shape[1],
            self.log2_max,
            self.log2_z,
            self.terms,
            self.element,
        )
        return Overview(
            mean=self.sums.div_(cells),  # in place: the accumulators become the result
            max=self.maxes,
            masked_share=self.counts.div_(cells).neg_().add_(1.0),
            bin_rows=self.bh,
            bin_cols=self.bw,
            column_sums=self.columns[:n_k].clone(),
            entropy=self.entropy,
            stats=stats,
            computed_cells=self.computed,
            seconds=seconds,
        )


# --------------------------------------------------------------------------- inputs


def _bind_terms(
    score_terms: object, lead: tuple[int, ...], n_q: int, n_k: int, qs: torch.Tensor
) -> tuple[BoundTerm, ...]:
    """``score_terms`` bound to the call as ``attend`` binds them; Sinks refused in one line."""
    terms = check_score_terms(score_terms)
    if not terms:
        return ()
    g = Geometry(lead if lead else (1,), n_q, n_k, qs.device, qs.dtype, exact=False)
    bound = tuple(term.bind(g) for term in terms)
    if any(term.in_softmax for term in bound):
        raise input_error(
            QT_TRANSLATE_NOOP(
                "Errors", "the long-context overview does not take Sinks (a logit in the softmax); attend does"
            ),
            "score_terms",
        )
    return bound


def _apply_terms(terms: tuple[BoundTerm, ...], s: torch.Tensor, element: int, r0: int, r1: int, c0: int) -> None:
    """Apply the score terms, in place, to a block of scores in the overview's log2 units (the
    terms act on the scaled scores in natural units, as in ``attend``)."""
    scores = s.mul(_LN_2)[None]
    for term in terms:
        scores = term.apply(scores, element, element + 1, r0, r1, c0)
    s.copy_(scores[0].mul_(_LOG2_E))


def _select(
    q: object, k: object, batch: int, head: int, dtype: torch.dtype | None
) -> tuple[torch.Tensor, torch.Tensor, tuple[int, ...]]:
    """The (L_q, d) queries and (L_k, d) keys of one batch element and head, checked, in
    ``dtype`` (None: float64 for float64 inputs, else float32), and the queries' leading shape
    ((1,) for one matrix)."""
    qt = check_real(as_tensor(q, "queries", "queries"), "queries", "queries")
    kt = check_real(as_tensor(k, "keys", "keys"), "keys", "keys")
    if qt.dim() != kt.dim() or qt.dim() not in (2, 3, 4):
        raise input_error(
            QT_TRANSLATE_NOOP(
                "Errors",
                "queries and keys must both be (L, d), (batch, L, d) or (batch, heads, L, d); got shapes {q} and {k}",
            ),
            "shape",
            q=tuple(qt.shape),
            k=tuple(kt.shape),
        )
    if qt.shape[-1] != kt.shape[-1]:
        raise input_error(
            QT_TRANSLATE_NOOP("Errors", "queries and keys must have the same feature size: {d_q} and {d_k}"),
            "shape",
            d_q=qt.shape[-1],
            d_k=kt.shape[-1],
        )
    lead = tuple(qt.shape[:-2]) or (1,)
    if qt.dim() >= 3:
        check_batches(qt.shape[0], kt.shape[0])
        qt, kt = qt[check_index(batch, qt.shape[0], "batch")], kt[batch]
    else:
        check_index(batch, 1, "batch")
    if qt.dim() == 3:
        h_q, h_k = qt.shape[0], kt.shape[0]
        if h_q % h_k:
            raise input_error(
                QT_TRANSLATE_NOOP("Errors", "the query heads ({h_q}) must be a multiple of the key heads ({h_k})"),
                "shape",
                h_q=h_q,
                h_k=h_k,
            )
        qt, kt = qt[check_index(head, h_q, "head")], kt[head // (h_q // h_k)]
    else:
        check_index(head, 1, "head")
    if 0 in qt.shape or 0 in kt.shape:
        raise input_error(
            QT_TRANSLATE_NOOP(
                "Errors", "queries and keys need at least one row and one feature; got shapes {q} and {k}"
            ),
            "shape",
            q=tuple(qt.shape),
            k=tuple(kt.shape),
        )
    dt = dtype or (torch.float64 if qt.dtype == torch.float64 else torch.float32)
    qt, kt = qt.to(dt).contiguous(), kt.to(dt).contiguous()
    for t, name in ((qt, "queries"), (kt, "keys")):
        idx = first_nonfinite(t)
        if idx is not None:
            raise input_error(
                QT_TRANSLATE_NOOP("Errors", "{name} contain NaN or Inf at {idx}"), name, name=name, idx=idx
            )
    return qt, kt, lead


def _check_bins(bins: object) -> tuple[int, int]:
    if not (isinstance(bins, (tuple, list)) and len(bins) == 2):
        raise input_error(
            QT_TRANSLATE_NOOP("Errors", "bins must be (rows, cols); got {value}"), "shape", value=repr(bins)
        )
    return check_count(bins[0], "bins", 1, "shape"), check_count(bins[1], "bins", 1, "shape")


def _lookup(table: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """table[index] for a 1-D table (index_select: several times faster than indexing)."""
    return table.index_select(0, index.reshape(-1)).view(index.shape)


def _edges(width: int, n: int) -> torch.Tensor:
    return torch.cat([torch.arange(0, n, width), torch.tensor([n])])


__all__ = ["Overview", "OverviewCancelled", "RowStats", "Tile", "overview", "tile", "weight_row"]
