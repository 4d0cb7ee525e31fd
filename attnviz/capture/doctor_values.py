"""The mask doctor's checks of a call's numbers rather than its masks.

* Recorded weights (a weights-only call: Hugging Face ``output_attentions``) are read as masks
  (a key with weight 0 was masked), which is only sound when they are what a softmax gives: rows
  of numbers from 0 to 1 that sum to 1 (or a row all zeros or all NaN, SDPA's and a -inf fill's
  fully masked row). Anything else (negative values, values above 1, NaN or Inf next to
  numbers, other sums: scores, logits, weights after dropout) is said as such, and no mask
  finding is made from it.
* Scores that overflow: finite queries and keys whose scaled dot products reach Inf or NaN in
  the dtype the call is recomputed in (float32 for half precision, as ``capture`` recomputes),
  which turns their rows' weights into NaN. The products are bounded first from the largest
  values (no pass over the scores for the usual call); only a call whose bound reaches the
  dtype's range has its scores computed, a block of rows at a time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from attnviz.state.run import AttentionCall
from attnviz.text.tr import QT_TRANSLATE_NOOP, joined, message, plural

from ..engine.devices import dtype_name

__all__ = ["RowsProblem", "invalid_weights", "score_overflow"]

#: Elements of scores computed at once by the overflow check (16 MiB of float32).
_BLOCK_ELEMENTS = 2**22


@dataclass(frozen=True)
class RowsProblem:
    """What is wrong (one sentence, translatable), the query rows concerned (B, H, L_q), and how many."""

    message: str
    rows: np.ndarray
    count: int


def _magnitude(array: np.ndarray) -> float:
    """max |value| without an absolute copy of the array; NaN when a value is NaN."""
    values = np.asarray(array)
    if values.size == 0:
        return 0.0
    top, bottom = float(values.max()), float(values.min())
    return max(top, -bottom) if not (math.isnan(top) or math.isnan(bottom)) else math.nan


def _grid_step(weights: np.ndarray) -> float | None:
    """The step 2^-n (n from 1 to 16) every weight is a whole multiple of, where there is one: an
    integer softmax's output (I-BERT's ``IntSoftmax``: multiples of 1/128 or coarser), whose rows
    sum to 1 only up to that rounding of each weight. None for weights a float softmax gives
    (read from the first batch element, enough to tell)."""
    sample = np.asarray(weights[0], dtype=np.float64).ravel()[: 1 << 16]
    sample = sample[np.isfinite(sample)]
    if sample.size == 0 or not bool((sample > 0).any()):
        return None
    for n in range(1, 17):
        scaled = sample * 2.0**n
        if bool((np.abs(scaled - np.round(scaled)) < 1e-6).all()):
            return 2.0**-n
    return None


def invalid_weights(weights: np.ndarray, half: bool) -> RowsProblem | None:
    """The rows of recorded weights (B, H, L_q, L_k) that are not probability distributions, or None.

    ``half``: the model computed in float16 or bfloat16 (its sums are looser); weights on a grid
    of 2^-n (an integer softmax) may sum to less than 1 by the rounding of each. Read one batch element
    at a time, so a large recording is never copied whole."""
    tolerance = 1e-2 if half else 1e-3
    # An integer softmax (I-BERT's) floors each weight to its grid: its rows may sum to less
    # than 1 by up to a step a key (at most 0.1), never to more.
    step = _grid_step(weights)
    short = max(tolerance, min(step * weights.shape[-1], 0.1)) if step is not None else tolerance
    bad = np.zeros(weights.shape[:3], dtype=bool)
    kinds: set[str] = set()
    low, high = math.inf, -math.inf
    for b in range(weights.shape[0]):
        w = np.asarray(weights[b], dtype=np.float64)
        finite = np.isfinite(w)
        all_nan = np.isnan(w).all(-1)  # a fully masked row under a -inf fill
        not_finite = ~finite.all(-1) & ~all_nan
        negative = (w < 0).any(-1)
        above = (w > 1 + tolerance).any(-1)
        sums = np.where(finite, w, 0.0).sum(-1)
        zero = (w == 0).all(-1)  # SDPA's fully masked row
        off = ~all_nan & ~zero & ~not_finite & ((sums - 1 > tolerance) | (1 - sums > short))
        for flags, kind in ((not_finite, "nonfinite"), (negative, "negative"), (above, "above"), (off, "sums")):
            if bool(flags.any()):
                kinds.add(kind)
        if bool(off.any()):
            low, high = min(low, float(sums[off].min())), max(high, float(sums[off].max()))
        bad[b] = not_finite | negative | above | off
    count = int(bad.sum())
    if not count:
        return None
    parts: list[str] = []
    if "negative" in kinds:
        parts.append(QT_TRANSLATE_NOOP("Doctor", "negative weights"))
    if "above" in kinds:
        parts.append(QT_TRANSLATE_NOOP("Doctor", "weights above 1"))
    if "nonfinite" in kinds:
        parts.append(QT_TRANSLATE_NOOP("Doctor", "NaN or Inf among numbers"))
    if "sums" in kinds:
        parts.append(
            message(
                QT_TRANSLATE_NOOP("Doctor", "rows summing to {low} to {high}"), low=f"{low:.4g}", high=f"{high:.4g}"
            )
        )
    text = plural(
        count,
        QT_TRANSLATE_NOOP(
            "Doctor",
            "{n} query row of the recorded weights is not a probability distribution ({what}): these are not "
            "softmax weights (scores, logits, or weights after dropout?), so no mask can be read from them",
        ),
        QT_TRANSLATE_NOOP(
            "Doctor",
            "{n} query rows of the recorded weights are not probability distributions ({what}): these are not "
            "softmax weights (scores, logits, or weights after dropout?), so no mask can be read from them",
        ),
        what=joined(parts),
    )
    return RowsProblem(text, bad, count)


def score_overflow(call: AttentionCall, dtype: torch.dtype) -> RowsProblem | None:
    """The query rows of ``call`` whose scaled scores overflow to Inf or NaN from finite queries
    and keys, in ``dtype`` (half precision: float32, as the recomputation does), or None."""
    queries, keys = call.queries, call.keys
    if queries is None or keys is None:
        return None
    compute = torch.float64 if dtype == torch.float64 else torch.float32
    biggest_q, biggest_k = _magnitude(queries), _magnitude(keys)
    if not (math.isfinite(biggest_q) and math.isfinite(biggest_k)):
        return None  # NaN or Inf in the inputs is another problem than an overflow
    d = queries.shape[-1]
    scale = call.scale if call.scale is not None else 1 / math.sqrt(d)
    # |q.k| <= d max|q| max|k|, and the engine scales after the product: both must stay in range.
    if max(d * biggest_q * biggest_k, d * biggest_q * biggest_k * scale) < torch.finfo(compute).max / 2:
        return None
    b, h, n_q, n_k = call.shape
    group = h // call.kv_heads
    rows = np.zeros((b, h, n_q), dtype=bool)
    count = 0
    step = max(1, _BLOCK_ELEMENTS // max(n_k, 1))
    with torch.no_grad():
        for i in range(b):
            for head in range(h):
                key = torch.tensor(np.asarray(keys[i, head // group]), dtype=compute)
                for r0 in range(0, n_q, step):
                    block = torch.tensor(np.asarray(queries[i, head, r0 : r0 + step]), dtype=compute)
                    scores = (block @ key.T) * scale
                    broken = ~torch.isfinite(scores)
                    count += int(broken.sum())
                    rows[i, head, r0 : r0 + step] = broken.any(-1).numpy()
    if not count:
        return None
    text = plural(
        count,
        QT_TRANSLATE_NOOP(
            "Doctor",
            "{n} score overflows to Inf or NaN in {dtype} although the queries and keys are finite (up to {q} "
            "and {k}, scale {scale}): the weights of its row are NaN or meaningless; make the inputs or the scale "
            "smaller",
        ),
        QT_TRANSLATE_NOOP(
            "Doctor",
            "{n} scores overflow to Inf or NaN in {dtype} although the queries and keys are finite (up to {q} "
            "and {k}, scale {scale}): the weights of their rows are NaN or meaningless; make the inputs or the "
            "scale smaller",
        ),
        dtype=dtype_name(compute),
        q=f"{biggest_q:.3g}",
        k=f"{biggest_k:.3g}",
        scale=f"{scale:.3g}",
    )
    return RowsProblem(text, rows, count)
