"""The masking lab: one input through every masking convention, and what each one gets wrong.

``compare_conventions`` runs the same queries, keys, values and masks through every mask mode in
``MASK_MODES`` (and, for a causal mask, through both alignments), classifies every query row of
every convention, and compares each convention with the reference ("strict" with the intended
alignment): which weight cells differ, and one plain-English sentence per kind of difference.
The sentences are built from what the numbers show (row and cell counts, largest weights), never
from a canned description of the mode, so they stay true for any input.

Everything here is data (torch tensors, numpy string arrays, str): no Qt.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from attnviz.text.tr import QT_TRANSLATE_NOOP, message, plural

from .budget import enforce_work_budget, estimate_memory
from .core import attend
from .devices import default_dtype, device_of, resolve_device, resolve_dtype
from .errors import input_error
from .mask_mods import Causal
from .masking import MASK_MODES
from .result import AttentionResult
from .scoring import get_scoring
from .validation import (
    CAUSAL_ALIGNMENTS,
    as_input,
    check_causal,
    check_dropout,
    check_flag,
    check_memory_budget,
    check_num_hiddens,
    check_scale,
)

#: The convention every other one is compared with by default.
REFERENCE_MODE = "strict"
#: What the lab holds besides its conventions' engine results, per (batch, query, key) cell (and
#: once), measured on (1, 2048, 2048) with 6 and 12 conventions, both scorings: each convention's
#: classification and comparison masks; once, the intended and future masks and the float64 copies
#: a comparison works on, and the allocator's own working space.
_CONVENTION_BYTES_PER_CELL = 10
_LAB_BYTES_PER_CELL = 26
_LAB_FIXED_BYTES = 64 * 2**20

#: Row classes, in order of precedence (a row gets the first that applies), with what they mean.
ROW_KINDS: dict[str, str] = {
    "nan_row": "the row's weights contain NaN",
    "zero_row": "every weight of the row is zero (and so is its output)",
    "uniform_over_padding": "the row has no valid key and gets uniform weights over all keys, padding included",
    "future_visible": "a key after the query's position (under the intended causal alignment) gets weight",
    "padding_attended": "a key the intended mask forbids gets weight (for a row with no valid key: non-uniform "
    "weights)",
    "keys_hidden": "a key the intended mask allows gets zero weight where the reference gives it weight",
    "ok": "none of the above",
}

#: How a row with no valid key is described in sentences, by its class. The sentences are English
#: ``attnviz.text.tr.Message`` objects: the app shows them translated.
_EMPTY_ROW_PHRASES: dict[str, str] = {
    "nan_row": QT_TRANSLATE_NOOP("Lab", "NaN weights"),
    "zero_row": QT_TRANSLATE_NOOP("Lab", "zero weights"),
    "uniform_over_padding": QT_TRANSLATE_NOOP("Lab", "uniform weights ({share}) over padding"),
    "padding_attended": QT_TRANSLATE_NOOP("Lab", "non-uniform weights over masked keys"),
    "future_visible": QT_TRANSLATE_NOOP("Lab", "weights on future keys"),
    "keys_hidden": QT_TRANSLATE_NOOP("Lab", "weights on masked keys"),
    "ok": QT_TRANSLATE_NOOP("Lab", "weights on masked keys"),
}


@dataclass(frozen=True)
class Convention:
    """One masking convention applied to the lab's input.

    ``name`` is the mask mode ("sdpa"), or mode and alignment ("sdpa/bottom_right") when the lab
    has a causal mask. ``weights`` (B, Q, K) and ``output`` (B, Q, D) are the engine's tensors.
    ``row_kinds`` (B, Q) holds one ``ROW_KINDS`` name per query row; ``flags`` maps every kind
    to a bool (B, Q) tensor, since a row can have several problems at once (``row_kinds`` shows
    the first in precedence order).
    """

    name: str
    mask_mode: str
    causal: str | None
    label: str
    result: AttentionResult
    row_kinds: np.ndarray
    flags: dict[str, torch.Tensor]

    @property
    def weights(self) -> torch.Tensor:
        return self.result.weights

    @property
    def output(self) -> torch.Tensor:
        return self.result.output

    def count(self, kind: str) -> int:
        """How many rows have ``kind`` among their flags."""
        return int(self.flags[kind].sum())


@dataclass(frozen=True)
class Disagreement:
    """How one convention differs from another (the reference) on the lab's input.

    ``cells`` (B, Q, K) bool: weights that differ (NaN vs a number counts; NaN vs NaN does not;
    tolerance ``atol + rtol * |reference|``). ``output_rows`` (B, Q) bool: rows whose output
    differs. ``sentences``: one per kind of difference, starting with the convention's name.
    """

    convention: str
    reference: str
    cells: torch.Tensor
    output_rows: torch.Tensor
    sentences: tuple[str, ...]

    @property
    def rows(self) -> torch.Tensor:
        """(B, Q) bool: rows whose weights or output differ."""
        return self.cells.any(-1) | self.output_rows

    @property
    def agrees(self) -> bool:
        return not bool(self.rows.any())


@dataclass(frozen=True)
class LabReport:
    """The lab's result: every convention, the intended mask, and the disagreements.

    ``allowed`` (B, Q, K) bool is the intended mask (True = the query may attend to the key);
    ``future`` (B, Q, K) bool marks keys forbidden by the causal mask alone (all False without
    one); ``empty_rows`` (B, Q) marks rows with no allowed key. ``conventions`` is keyed by
    convention name, reference first; ``disagreements`` holds every other convention compared
    with the reference. ``compare(a, b)`` compares any two.
    """

    reference: str
    causal: str | None
    allowed: torch.Tensor
    future: torch.Tensor
    empty_rows: torch.Tensor
    conventions: dict[str, Convention]
    disagreements: dict[str, Disagreement]
    atol: float
    rtol: float

    def compare(self, name: str, reference: str | None = None) -> Disagreement:
        """``name`` compared with ``reference`` (default: the lab's reference)."""
        ref = self.reference if reference is None else reference
        for n in (name, ref):
            if n not in self.conventions:
                raise input_error(
                    QT_TRANSLATE_NOOP("Errors", "unknown convention {value}: expected one of {choices}"),
                    "mask",
                    value=repr(n),
                    choices=", ".join(self.conventions),
                )
        if ref == self.reference and name in self.disagreements:
            return self.disagreements[name]
        return _compare(self, self.conventions[name], self.conventions[ref])

    def sentences(self) -> list[str]:
        """Every disagreement sentence, convention by convention."""
        return [s for d in self.disagreements.values() for s in d.sentences]

    def agreeing(self) -> list[str]:
        """Conventions that give the reference's weights and outputs on this input."""
        return [name for name, d in self.disagreements.items() if d.agrees]


def compare_conventions(
    queries: object,
    keys: object,
    values: object,
    valid_lens: object = None,
    *,
    causal: bool | str | None = None,
    scoring: str = "scaled_dot",
    dtype: str | torch.dtype | None = None,
    atol: float | None = None,
    rtol: float | None = None,
    **attend_kwargs: Any,
) -> LabReport:
    """Run one input through every mask mode (both causal alignments when ``causal`` is set).

    The intended mask is built from ``valid_lens``, ``causal`` and any ``attn_mask`` /
    ``key_padding_mask`` in ``attend_kwargs`` exactly as ``attend`` builds it. The reference is
    the "strict" mode with the intended alignment. Other ``attend_kwargs`` (params, seed,
    num_hiddens, allow_nonfinite, dropout, ...) go to every run unchanged; ``mask_mode`` and
    ``keep`` are the lab's to choose. ``atol``/``rtol`` default to 16 machine epsilons of the
    dtype (at least 1e-9): the tolerance for calling two weights different.
    """
    for own in ("mask_mode", "keep"):
        if own in attend_kwargs:
            raise input_error(
                QT_TRANSLATE_NOOP("Errors", "compare_conventions runs every mask mode itself: do not pass {name}"),
                "mask",
                name=own,
            )
    intended = check_causal(causal)
    alignments: tuple[str | None, ...] = CAUSAL_ALIGNMENTS if intended is not None else (None,)
    runs = len({_name(REFERENCE_MODE, intended)} | {_name(m, a) for m in MASK_MODES for a in alignments})
    _check_memory(queries, keys, values, runs, scoring, dtype, attend_kwargs)

    def run(mode: str, alignment: str | None) -> AttentionResult:
        return attend(
            queries,
            keys,
            values,
            valid_lens,
            scoring=scoring,
            mask_mode=mode,
            causal=alignment,
            dtype=dtype,
            keep=("mask", "masked_scores"),
            **attend_kwargs,
        )

    ref_name = _name(REFERENCE_MODE, intended)
    reference = run(REFERENCE_MODE, intended)
    assert reference.mask is not None
    allowed = reference.mask
    batch, n_q, n_k = allowed.shape
    dev = allowed.device
    future = torch.zeros_like(allowed)
    if intended is not None:
        future = ~Causal(intended).bind_call(batch, n_q, n_k, device=dev).full()
    eps = torch.finfo(reference.weights.dtype).eps
    a_tol = max(16 * eps, 1e-9) if atol is None else float(atol)
    r_tol = max(16 * eps, 1e-9) if rtol is None else float(rtol)

    results: dict[str, tuple[str, str | None, AttentionResult]] = {ref_name: (REFERENCE_MODE, intended, reference)}
    for mode in MASK_MODES:
        for alignment in alignments:
            name = _name(mode, alignment)
            if name not in results:
                results[name] = (mode, alignment, run(mode, alignment))

    ref_weights = reference.weights
    conventions = {
        name: _classify(name, mode, alignment, result, allowed, future, ref_weights, a_tol)
        for name, (mode, alignment, result) in results.items()
    }
    report = LabReport(
        reference=ref_name,
        causal=intended,
        allowed=allowed,
        future=future,
        empty_rows=~allowed.any(-1),
        conventions=conventions,
        disagreements={},
        atol=a_tol,
        rtol=r_tol,
    )
    ref = conventions[ref_name]
    report.disagreements.update(
        {name: _compare(report, conv, ref) for name, conv in conventions.items() if name != ref_name}
    )
    return report


# ------------------------------------------------------------------------------ internals


def _check_memory(
    queries: object,
    keys: object,
    values: object,
    runs: int,
    scoring: str,
    dtype: str | torch.dtype | None,
    attend_kwargs: dict[str, Any],
) -> None:
    """Refuse, before anything runs, a lab whose ``runs`` results together would not fit the
    budget (each ``attend`` checks only its own, and the lab keeps every one)."""
    fn = get_scoring(scoring)
    q, k, v = as_input(queries, "queries"), as_input(keys, "keys"), as_input(values, "values")
    device = attend_kwargs.get("device")
    dev = resolve_device(device) if device is not None else device_of(queries)
    one = estimate_memory(
        q.shape,
        k.shape,
        v.shape,
        dtype=resolve_dtype(dtype, default_dtype(queries)),
        keep=("mask", "masked_scores"),
        scoring=fn.name,
        masked=True,
        num_hiddens=check_num_hiddens(attend_kwargs.get("num_hiddens", 8)),
        dropout=check_dropout(attend_kwargs.get("dropout", 0.0)),
        train=check_flag(attend_kwargs.get("train", False), "train"),
        scale=check_scale(attend_kwargs.get("scale"), fn),
    )
    batch = one.lead[0] if one.lead else 1
    cells = math.prod(one.lead) * one.n_queries * one.n_keys
    kept = _LAB_BYTES_PER_CELL * cells + runs * (one.total - one.temporaries + _CONVENTION_BYTES_PER_CELL * cells)
    what = message(
        QT_TRANSLATE_NOOP(
            "Errors", "the masking lab ({runs} conventions, each keeping its weights, mask and masked scores)"
        ),
        runs=runs,
    )
    enforce_work_budget(
        what,
        (batch, one.n_queries, one.n_keys),
        kept / batch,
        one.temporaries + _LAB_FIXED_BYTES,
        dev,
        check_memory_budget(attend_kwargs.get("memory_budget")),
    )


def _name(mode: str, alignment: str | None) -> str:
    return mode if alignment is None else f"{mode}/{alignment}"


def _label(mode: str, alignment: str | None) -> str:
    label = MASK_MODES[mode].label
    if alignment is None:
        return label
    return message(
        QT_TRANSLATE_NOOP("Lab", "{label}, {alignment} causal"), label=label, alignment=alignment.replace("_", "-")
    )


def _classify(
    name: str,
    mode: str,
    alignment: str | None,
    result: AttentionResult,
    allowed: torch.Tensor,
    future: torch.Tensor,
    ref_weights: torch.Tensor,
    tol: float,
) -> Convention:
    w = result.weights
    empty = ~allowed.any(-1)
    # Masking promises exactly zero weight on a forbidden key, so any weight above zero counts.
    positive = w > 0
    nan = torch.isnan(w).any(-1)
    zero = (w == 0).all(-1)
    finite_w = torch.where(torch.isnan(w), torch.zeros((), dtype=w.dtype, device=w.device), w)
    spread = finite_w.amax(-1) - finite_w.amin(-1)
    uniform = empty & ~nan & ~zero & (spread <= tol)
    future_visible = (positive & future).any(-1) & ~nan
    padding = (positive & ~allowed & ~future).any(-1) & ~nan & ~uniform
    hidden = ((w == 0) & allowed & (ref_weights > 0)).any(-1) & ~nan & ~zero
    flags = {
        "nan_row": nan,
        "zero_row": zero,
        "uniform_over_padding": uniform,
        "future_visible": future_visible,
        "padding_attended": padding,
        "keys_hidden": hidden,
    }
    any_flag = torch.zeros_like(nan)
    for flag in flags.values():
        any_flag = any_flag | flag
    flags["ok"] = ~any_flag
    kinds = np.full(tuple(nan.shape), "ok", dtype=f"<U{max(map(len, ROW_KINDS))}")
    # Lowest precedence first, so the first kind in ROW_KINDS order is written last and wins.
    for kind in reversed(list(ROW_KINDS)[:-1]):
        kinds[flags[kind].cpu().numpy()] = kind
    return Convention(name, mode, alignment, _label(mode, alignment), result, kinds, flags)


def _differs(a: torch.Tensor, b: torch.Tensor, atol: float, rtol: float) -> torch.Tensor:
    """Elementwise: a and b differ, where NaN equals NaN and +-inf equals itself."""
    a64, b64 = a.detach().to(torch.float64), b.detach().to(torch.float64)
    both_nan = torch.isnan(a64) & torch.isnan(b64)
    same_inf = torch.isinf(a64) & (a64 == b64)
    close = (a64 - b64).abs() <= atol + rtol * b64.abs()
    return ~(both_nan | same_inf | close)


def _weighted(cells: torch.Tensor, weights: torch.Tensor, one: str, many: str) -> tuple[str, float]:
    """How many ``cells`` get weight, in words, and the largest share of a row's weight they get."""
    return plural(int(cells.sum()), one, many), float((weights * cells).sum(-1).amax())


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def _share(x: float, tol: float) -> str:
    """A share of a row's weight (rows sum to 1), as words; "all" to the dtype's precision."""
    return QT_TRANSLATE_NOOP("Lab", "all") if x >= 1 - max(tol, 1e-6) else f"{x:.3g}"


def _compare(report: LabReport, conv: Convention, ref: Convention) -> Disagreement:
    """Cells that differ, and one sentence per kind of difference, all from counts."""
    w, rw = conv.weights, ref.weights
    cells = _differs(w, rw, report.atol, report.rtol)
    out_rows = _differs(conv.output, ref.output, report.atol, report.rtol).any(-1)
    row_differs = cells.any(-1)
    empty = report.empty_rows
    n_k = w.shape[-1]
    sentences: list[str] = []
    name = conv.name

    # 1. Rows with no valid key: one sentence per (what this convention gives, what ref gives).
    pairs: Counter[tuple[str, str]] = Counter()
    conv_kinds, ref_kinds = conv.row_kinds, ref.row_kinds
    diff_np = row_differs.cpu().numpy()
    for b, q in zip(*np.nonzero(empty.cpu().numpy() & diff_np)):
        pairs[(str(conv_kinds[b, q]), str(ref_kinds[b, q]))] += 1
    for (mine, theirs), n in pairs.items():
        share: str = message(QT_TRANSLATE_NOOP("Lab", "1/{keys} each"), keys=n_k)
        mine_text = message(_EMPTY_ROW_PHRASES[mine], share=share)
        if mine == theirs:
            tail = message(
                QT_TRANSLATE_NOOP("Lab", "other {mine} than {reference}"), mine=mine_text, reference=ref.name
            )
        else:
            tail = message(
                QT_TRANSLATE_NOOP("Lab", "{mine} where {reference} gives {theirs}"),
                mine=mine_text,
                reference=ref.name,
                theirs=message(_EMPTY_ROW_PHRASES[theirs], share=share),
            )
        sentences.append(
            plural(
                n,
                QT_TRANSLATE_NOOP("Lab", "{name}: {n} row with no valid key get {tail}"),
                QT_TRANSLATE_NOOP("Lab", "{name}: {n} rows with no valid key get {tail}"),
                name=name,
                tail=tail,
            )
        )

    # 2. Rows with valid keys, by the problem this convention has there and the reference has not.
    rows_valid = ~empty
    explained = empty.clone()
    new = {kind: conv.flags[kind] & ~ref.flags[kind] & rows_valid for kind in ROW_KINDS if kind != "ok"}
    finite_w = torch.nan_to_num(w.detach().to(torch.float64), nan=0.0)

    nan_rows = new["nan_row"]
    if bool(nan_rows.any()):
        sentences.append(
            plural(
                int(nan_rows.sum()),
                QT_TRANSLATE_NOOP("Lab", "{name}: {n} row with valid keys is NaN{cause}"),
                QT_TRANSLATE_NOOP("Lab", "{name}: {n} rows with valid keys are NaN{cause}"),
                name=name,
                cause=_nan_cause(conv, nan_rows),
            )
        )
        explained |= nan_rows
    zero_rows = new["zero_row"] & ~nan_rows
    if bool(zero_rows.any()):
        n = int(zero_rows.sum())
        sentences.append(
            plural(
                n,
                QT_TRANSLATE_NOOP("Lab", "{name}: {n} row with valid keys gets all-zero weights"),
                QT_TRANSLATE_NOOP("Lab", "{name}: {n} rows with valid keys get all-zero weights"),
                name=name,
            )
        )
        explained |= zero_rows
    fut = new["future_visible"] & ~explained
    if bool(fut.any()):
        keys, largest = _weighted(
            (w > 0) & report.future & fut.unsqueeze(-1),
            finite_w,
            QT_TRANSLATE_NOOP("Lab", "{n} future key"),
            QT_TRANSLATE_NOOP("Lab", "{n} future keys"),
        )
        sentences.append(
            plural(
                int(fut.sum()),
                QT_TRANSLATE_NOOP(
                    "Lab",
                    "{name}: {n} row attends to {keys} (after the query's {alignment} position), up "
                    "to {share} of a row's weight",
                ),
                QT_TRANSLATE_NOOP(
                    "Lab",
                    "{name}: {n} rows attend to {keys} (after the query's {alignment} position), up "
                    "to {share} of a row's weight",
                ),
                name=name,
                keys=keys,
                alignment=str(report.causal).replace("_", "-"),
                share=_share(largest, report.atol),
            )
        )
        explained |= fut
    pad = new["padding_attended"] & ~nan_rows & ~zero_rows
    if bool(pad.any()):
        keys, largest = _weighted(
            (w > 0) & ~report.allowed & ~report.future & pad.unsqueeze(-1),
            finite_w,
            QT_TRANSLATE_NOOP("Lab", "{n} masked key"),
            QT_TRANSLATE_NOOP("Lab", "{n} masked keys"),
        )
        sentences.append(
            plural(
                int(pad.sum()),
                QT_TRANSLATE_NOOP(
                    "Lab",
                    "{name}: {n} row with valid keys puts weight on {keys}, up to {share} of a "
                    "row's weight, where {reference} gives them none",
                ),
                QT_TRANSLATE_NOOP(
                    "Lab",
                    "{name}: {n} rows with valid keys put weight on {keys}, up to {share} of a "
                    "row's weight, where {reference} gives them none",
                ),
                name=name,
                keys=keys,
                share=_share(largest, report.atol),
                reference=ref.name,
            )
        )
        explained |= pad
    hid = new["keys_hidden"] & ~nan_rows & ~zero_rows
    if bool(hid.any()):
        cell_mask = (w == 0) & report.allowed & (rw > 0) & hid.unsqueeze(-1)
        keys = plural(int(cell_mask.sum()), QT_TRANSLATE_NOOP("Lab", "{n} key"), QT_TRANSLATE_NOOP("Lab", "{n} keys"))
        sentences.append(
            plural(
                int(hid.sum()),
                QT_TRANSLATE_NOOP(
                    "Lab", "{name}: {n} row gives zero weight to {keys} the mask allows, which {reference} weighs"
                ),
                QT_TRANSLATE_NOOP(
                    "Lab", "{name}: {n} rows give zero weight to {keys} the mask allows, which {reference} weighs"
                ),
                name=name,
                keys=keys,
                reference=ref.name,
            )
        )
        explained |= hid
    rest = row_differs & ~explained
    if bool(rest.any()):
        gap = (finite_w - torch.nan_to_num(rw.detach().to(torch.float64), nan=0.0)).abs()
        gap = (gap * rest.unsqueeze(-1)).amax()
        n = int(rest.sum())
        sentences.append(
            plural(
                n,
                QT_TRANSLATE_NOOP(
                    "Lab", "{name}: {n} row weighs its keys differently from {reference}, by up to {gap}"
                ),
                QT_TRANSLATE_NOOP(
                    "Lab", "{name}: {n} rows weigh their keys differently from {reference}, by up to {gap}"
                ),
                name=name,
                reference=ref.name,
                gap=_fmt(float(gap)),
            )
        )

    # 3. Outputs that differ although the weights agree: something in the values gets through.
    out_only = out_rows & ~row_differs
    if bool(out_only.any()):
        n = int(out_only.sum())
        if _leaks_nonfinite_values(conv, ref, out_only):
            sentences.append(
                plural(
                    n,
                    QT_TRANSLATE_NOOP(
                        "Lab",
                        "{name}: {n} row has a non-finite output although its weights match "
                        "{reference}'s: a NaN or Inf in the value vector of a key with zero "
                        "weight gets through (0 x NaN = NaN)",
                    ),
                    QT_TRANSLATE_NOOP(
                        "Lab",
                        "{name}: {n} rows have a non-finite output although their weights match "
                        "{reference}'s: a NaN or Inf in the value vector of a key with zero weight "
                        "gets through (0 x NaN = NaN)",
                    ),
                    name=name,
                    reference=ref.name,
                )
            )
        else:
            gap = torch.nan_to_num((conv.output.to(torch.float64) - ref.output.to(torch.float64)).abs(), nan=math.inf)
            biggest = float(gap[out_only].amax())
            sentences.append(
                plural(
                    n,
                    QT_TRANSLATE_NOOP(
                        "Lab", "{name}: {n} row has a different output with the same weights, by up to {gap}"
                    ),
                    QT_TRANSLATE_NOOP(
                        "Lab", "{name}: {n} rows have a different output with the same weights, by up to {gap}"
                    ),
                    name=name,
                    gap=_fmt(biggest),
                )
            )
    return Disagreement(conv.name, ref.name, cells, out_rows, tuple(sentences))


def _nan_cause(conv: Convention, rows: torch.Tensor) -> str:
    """Why rows with valid keys became NaN, read off what the softmax received."""
    ms = conv.result.masked_scores
    if ms is None:
        return ""
    sel = ms[rows]
    if sel.numel() == 0:
        return ""
    if bool(torch.isnan(sel).any()):
        return QT_TRANSLATE_NOOP("Lab", ": their scores contain NaN")
    if bool((sel == math.inf).any()):
        return QT_TRANSLATE_NOOP("Lab", ": a score overflowed to +inf")
    if bool((sel == -math.inf).all(-1).any()):
        return QT_TRANSLATE_NOOP("Lab", ": every score the softmax sees is -inf, so it divides 0 by 0")
    return ""


def _leaks_nonfinite_values(conv: Convention, ref: Convention, rows: torch.Tensor) -> bool:
    """True when, in ``rows``, this convention's output is non-finite but its weights are finite
    and the reference's output (same weights) is finite. Finite weights times finite values are
    finite, so a value vector is non-finite; the reference keeping it out means its weight is
    zero there, and 0 x NaN = NaN is how it got through here."""
    return (
        bool((~torch.isfinite(conv.output[rows])).any())
        and bool(torch.isfinite(conv.weights[rows]).all())
        and bool(torch.isfinite(ref.output[rows]).all())
    )
