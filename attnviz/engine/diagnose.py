"""Diagnostics of one computation: running sums over the blocks, then ``Diagnostics``.

The per-block helpers keep their sums as tensors, so a GPU is not synchronised once per block.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from attnviz.text.tr import QT_TRANSLATE_NOOP, message, plural

from .devices import dtype_name
from .mask_bound import CallMask
from .masking import D2L_FILL, MaskMode
from .result import Diagnostics, MaskFinding
from .scoring import Params, ScoringFunction


@dataclass
class Accumulators:
    """Running sums for the diagnostics, kept as tensors so a GPU is not synchronised per block."""

    s1: torch.Tensor
    s2: torch.Tensor
    count: torch.Tensor
    nan_scores: torch.Tensor
    inf_scores: torch.Tensor
    nan_weights: torch.Tensor
    inf_weights: torch.Tensor
    min_allowed: torch.Tensor


def diagnose_scores(
    scores: torch.Tensor,
    allowed: torch.Tensor | None,
    length: int | None,
    mode: MaskMode,
    sums: Accumulators,
    surely_finite: bool = False,
) -> None:
    """NaN/Inf counts and the running sums for the logit variance over the allowed positions.

    Called before masking: the tail of a 1-D valid length may then be overwritten in place.
    ``surely_finite``: the inputs are too small for any score to overflow (see
    ``scores_surely_finite``), so the pass that looks for NaN/Inf is skipped.
    """
    acc = sums.s1.dtype
    score_total = None if surely_finite and length is not None else scores.sum(dtype=acc)
    finite_scores = surely_finite or (score_total is not None and bool(torch.isfinite(score_total)))
    if not finite_scores:
        sums.nan_scores += torch.isnan(scores).sum()
        sums.inf_scores += torch.isinf(scores).sum()
    zero = torch.zeros((), dtype=scores.dtype, device=scores.device)
    if length is not None:
        # 1-D valid length: the allowed scores are the leading columns, no mask needed.
        view = scores[..., :length]
        if finite_scores:
            sums.count += view.numel()
        else:
            ok = torch.isfinite(view)
            sums.count += ok.sum()
            view = torch.where(ok, view, zero)
        # Row by row: a norm over the strided view as a whole is three times slower.
        sums.s1 += view.sum(dtype=acc)
        sums.s2 += torch.linalg.vector_norm(view, dim=-1, dtype=acc).square().sum()
        if mode.name == "d2l" and view.numel():
            sums.min_allowed = torch.minimum(sums.min_allowed, view.amin().to(acc))
        return
    valid = allowed
    if not finite_scores:
        ok = torch.isfinite(scores)
        valid = ok if valid is None else valid & ok
    if valid is None:
        sums.s1 += score_total if score_total is not None else scores.sum(dtype=acc)
        sums.s2 += torch.linalg.vector_norm(scores, dtype=acc) ** 2
        sums.count += scores.numel()
        if mode.name == "d2l":
            sums.min_allowed = torch.minimum(sums.min_allowed, scores.amin().to(acc))
        return
    kept_scores = torch.where(valid, scores, zero)
    sums.s1 += kept_scores.sum(dtype=acc)
    sums.s2 += torch.linalg.vector_norm(kept_scores, dtype=acc) ** 2
    sums.count += valid.sum()
    # Only look for real scores under the fill when some score is that low at all.
    if mode.name == "d2l" and float(scores.amin()) <= D2L_FILL:
        inf = torch.full((), math.inf, dtype=scores.dtype, device=scores.device)
        sums.min_allowed = torch.minimum(sums.min_allowed, torch.where(valid, scores, inf).amin().to(acc))


def diagnose_weights(
    pre_softmax: torch.Tensor,
    weights: torch.Tensor,
    sums: Accumulators,
    row_sums: torch.Tensor,
    entropy: torch.Tensor,
    max_weight: torch.Tensor,
    *,
    finite_inputs: torch.Tensor | None = None,
    length: int | None = None,
) -> None:
    """Row sums, largest weight and entropy of each row; NaN/Inf counts of the weights.

    ``finite_inputs`` equals ``pre_softmax`` wherever a weight is not zero but holds no -inf
    (the scores before a -inf fill); default ``pre_softmax``. With a 1-D valid ``length`` the
    weights that matter are the leading ``length`` columns, which hold no fill at all.
    """
    acc = row_sums.dtype
    w = weights if weights.dtype == acc else weights.to(acc)
    x = pre_softmax if pre_softmax.dtype == acc else pre_softmax.to(acc)
    if length is not None:
        w_dot, x_dot = w[..., :length], x[..., :length]
    else:
        xf = x if finite_inputs is None else finite_inputs
        w_dot, x_dot = w, xf if xf.dtype == acc else xf.to(acc)
    total = w.sum(-1)
    w_max = w.amax(-1)
    row_sums.copy_(total)
    max_weight.copy_(w_max)
    # Entropy without a log per element: with m the row's largest softmax input, w_max = 1 / Z
    # and log w_j = (x_j - m) + log w_max, so H = -log w_max + m * sum_j w_j - sum_j w_j x_j.
    # The dot product uses finite inputs (a -inf fill sits where the weight is 0 anyway).
    m = x.amax(-1)
    h = (m - torch.log(w_max)) * total - (w_dot * x_dot).sum(-1)
    # Where |m| is huge (the book's -1e6 fill on a row with no valid key, scores below the fill)
    # that difference cancels catastrophically; recompute those few rows from the gaps m - x_j.
    far = m.abs() > 1e4
    if bool(far.any()):
        xs = x[far].double()
        ws = w[far].double()
        gap = (xs.amax(-1, keepdim=True) - xs).clamp_max_(1e4)  # a zero weight cancels +inf
        h[far] = ((ws * gap).sum(-1) - torch.log(ws.amax(-1)) * ws.sum(-1)).to(acc)
    entropy.copy_(torch.where(w_max > 0, h, torch.zeros((), dtype=acc, device=h.device)))
    if not bool(torch.isfinite(total).all()):
        sums.nan_weights += torch.isnan(w).sum()
        sums.inf_weights += torch.isinf(w).sum()


def input_magnitude(q: torch.Tensor, k: torch.Tensor, params: Params) -> float:
    """The largest |value| of the queries, keys and parameters: inf or NaN when one is not finite."""
    return max(
        float(q.abs().max()), float(k.abs().max()), *(float(p.abs().max()) for p in params.values() if p.numel())
    )


def scores_surely_finite(
    fn: ScoringFunction,
    q: torch.Tensor,
    k: torch.Tensor,
    params: Params,
    multiplier: float = 1.0,
    biggest: float | None = None,
) -> bool:
    """True when no score can overflow: float32/64 and inputs far below the overflow bound.

    |q.k| <= d max|q| max|k|; the Gaussian kernel and q^T W k are bounded alike, additive
    attention by sum |w_v| (tanh <= 1). With every magnitude under 1e15 and d under 1e6, the
    bound stays below float32's 3.4e38, unless the scores are then multiplied by more than 1
    (``multiplier``: an SDPA-style ``scale`` such as 1e300); then there is no need to look for
    NaN/Inf scores. ``biggest``: ``input_magnitude`` when already known.
    """
    if q.dtype not in (torch.float32, torch.float64) or not multiplier <= 1.0:
        return False
    limit = 1e15
    if biggest is None:
        biggest = input_magnitude(q, k, params)
    return biggest < limit and max(q.shape[2], k.shape[2]) < 1_000_000


def finish_diagnostics(
    mode: MaskMode,
    spec: CallMask,
    sums: Accumulators,
    row_sums: torch.Tensor,
    entropy: torch.Tensor,
    max_weight: torch.Tensor,
    empty_rows: torch.Tensor,
    fill_rows: torch.Tensor | None,
    scale: float | None,
    dt: torch.dtype,
    findings: list[MaskFinding],
    largest_input: float = math.nan,
) -> Diagnostics:
    """The ``Diagnostics`` of a computation, per-row tensors shaped (*spec.lead, L_q).

    ``scale`` is what the scores were divided by (None: no scaling stage). ``largest_input``:
    ``input_magnitude`` of the inputs (finite: any NaN or Inf score is an overflow; NaN: unknown).
    """
    count = float(sums.count)
    if count >= 2:
        mean = float(sums.s1) / count
        variance = max(float(sums.s2) / count - mean * mean, 0.0)
    else:
        variance = math.nan
    raw_variance = variance * scale * scale if scale is not None else variance
    nan_rows = torch.isnan(row_sums)
    over = spec.valid_lens_over_keys()
    boolean = spec.has_boolean

    # English sentences for scripts, which also carry their template and numbers (attnviz.text.tr)
    # so the app can show them in the user's language.
    warnings: list[str] = []
    n_empty = int(empty_rows.sum())
    if n_empty:
        rows = plural(
            n_empty,
            QT_TRANSLATE_NOOP("Diagnostics", "{n} query row"),
            QT_TRANSLATE_NOOP("Diagnostics", "{n} query rows"),
        )
        if mode.name == "d2l":
            fill = torch.tensor(D2L_FILL, dtype=torch.float64).to(dt)
            # Only the boolean sources are filled; a row emptied by an additive -inf is NaN
            # whatever the fill, which the NaN warning says.
            n_uniform = int((empty_rows & ~nan_rows).sum())
            if boolean and torch.isinf(fill):
                warnings.append(
                    message(
                        QT_TRANSLATE_NOOP(
                            "Diagnostics",
                            "{rows} with no valid key: in {dtype} the -1e6 fill overflows to -inf, so these "
                            "rows are NaN",
                        ),
                        rows=rows,
                        dtype=dtype_name(dt),
                    )
                )
            elif n_uniform:
                rows = plural(
                    n_uniform,
                    QT_TRANSLATE_NOOP("Diagnostics", "{n} query row"),
                    QT_TRANSLATE_NOOP("Diagnostics", "{n} query rows"),
                )
                warnings.append(
                    message(
                        QT_TRANSLATE_NOOP(
                            "Diagnostics",
                            "{rows} with no valid key: the book's -1e6 fill gives them uniform weights over "
                            "all keys, padding included",
                        ),
                        rows=rows,
                    )
                )
        elif mode.zero_empty_rows:
            warnings.append(
                message(
                    QT_TRANSLATE_NOOP("Diagnostics", "{rows} with no valid key: zero weights and zero output"),
                    rows=rows,
                )
            )
        elif mode.fill is not None:
            warnings.append(
                message(
                    QT_TRANSLATE_NOOP("Diagnostics", "{rows} with no valid key: the softmax of an all -inf row is NaN"),
                    rows=rows,
                )
            )
    n_nan = int(nan_rows.sum())
    if n_nan:
        warnings.append(
            plural(
                n_nan,
                QT_TRANSLATE_NOOP("Diagnostics", "{n} row of weights contain NaN"),
                QT_TRANSLATE_NOOP("Diagnostics", "{n} rows of weights contain NaN"),
            )
        )
    overflowed = int(sums.inf_scores) + int(sums.nan_scores) if math.isfinite(largest_input) else 0
    if overflowed:
        # Finite inputs: every NaN or Inf score is an overflow (and an Inf minus an Inf a NaN).
        warnings.append(overflow_warning(overflowed, dt, largest_input, scale))
    elif int(sums.inf_scores):
        warnings.append(
            plural(
                int(sums.inf_scores),
                QT_TRANSLATE_NOOP("Diagnostics", "{n} score overflowed to Inf in {dtype}"),
                QT_TRANSLATE_NOOP("Diagnostics", "{n} scores overflowed to Inf in {dtype}"),
                dtype=dtype_name(dt),
            )
        )
    if int(sums.nan_scores) and not overflowed:
        warnings.append(
            plural(
                int(sums.nan_scores),
                QT_TRANSLATE_NOOP("Diagnostics", "{n} score are NaN"),
                QT_TRANSLATE_NOOP("Diagnostics", "{n} scores are NaN"),
            )
        )
    if over is not None and bool(over.any()):
        warnings.append(
            plural(
                int(over.sum()),
                QT_TRANSLATE_NOOP(
                    "Diagnostics",
                    "{n} valid length exceeds the {keys} keys: treated as all keys valid, as the book's code does",
                ),
                QT_TRANSLATE_NOOP(
                    "Diagnostics",
                    "{n} valid lengths exceed the {keys} keys: treated as all keys valid, as the book's code does",
                ),
                keys=spec.n_keys,
            )
        )
    if mode.name == "d2l" and float(sums.min_allowed) <= D2L_FILL:
        warnings.append(
            QT_TRANSLATE_NOOP(
                "Diagnostics",
                "some real scores are at or below the -1e6 fill: masked keys are not negligible against them",
            )
        )
    n_fill = 0 if fill_rows is None else int(fill_rows.sum())
    if n_fill:
        findings = [
            *findings,
            MaskFinding(
                "fill_only_rows",
                ", ".join(source.name for source in spec.bias),
                plural(
                    n_fill,
                    QT_TRANSLATE_NOOP(
                        "Diagnostics",
                        "{n} query row has every key masked by a finite additive fill: "
                        "the softmax spreads it over the masked keys",
                    ),
                    QT_TRANSLATE_NOOP(
                        "Diagnostics",
                        "{n} query rows have every key masked by a finite additive fill: the "
                        "softmax spreads them over the masked keys",
                    ),
                ),
                count=n_fill,
            ),
        ]
    warnings.extend(finding.message for finding in findings)
    if mode.name == "float01" and boolean:
        warnings.append(
            QT_TRANSLATE_NOOP("Diagnostics", "the 1/0 mask was added to the scores as a float mask: nothing is masked")
        )
    if mode.inverted and boolean:
        warnings.append(
            QT_TRANSLATE_NOOP("Diagnostics", "the mask was read with the opposite polarity: masked keys are attended")
        )

    rows_shape = (*spec.lead, spec.n_queries)
    return Diagnostics(
        empty_rows=empty_rows.reshape(rows_shape),
        nan_rows=nan_rows.reshape(rows_shape),
        nan_scores=int(sums.nan_scores),
        inf_scores=int(sums.inf_scores),
        nan_weights=int(sums.nan_weights),
        inf_weights=int(sums.inf_weights),
        row_sums=row_sums.reshape(rows_shape),
        entropy=entropy.reshape(rows_shape),
        max_weight=max_weight.reshape(rows_shape),
        logit_variance=variance,
        raw_logit_variance=raw_variance,
        valid_lens_over_keys=over,
        warnings=tuple(warnings),
        fill_only_rows=None if fill_rows is None else fill_rows.reshape(rows_shape),
        findings=tuple(findings),
        overflowed_scores=overflowed,
    )


_OVERFLOW_ONE = QT_TRANSLATE_NOOP(
    "Diagnostics",
    "{n} score overflowed to Inf or NaN in {dtype} although every input is finite (the largest is {largest}, "
    "the scores multiplied by {factor}): the weights of its row are NaN or meaningless; make the inputs or the "
    "scale smaller",
)
_OVERFLOW_MANY = QT_TRANSLATE_NOOP(
    "Diagnostics",
    "{n} scores overflowed to Inf or NaN in {dtype} although every input is finite (the largest is {largest}, "
    "the scores multiplied by {factor}): the weights of their rows are NaN or meaningless; make the inputs or "
    "the scale smaller",
)
#: The sentences of ``overflow_warning``, for a reader that picks that warning out (``render``).
OVERFLOW_TEMPLATES: frozenset[str] = frozenset({_OVERFLOW_ONE, _OVERFLOW_MANY})


def overflow_warning(n: int, dt: torch.dtype, largest: float, divisor: float | None) -> str:
    """One line: ``n`` scores overflowed ``dt`` from inputs at most ``largest``; ``divisor`` is
    what the scores were divided by (None: not scaled)."""
    factor = 1.0 if divisor is None else 1.0 / divisor
    return plural(
        n, _OVERFLOW_ONE, _OVERFLOW_MANY, dtype=dtype_name(dt), largest=f"{largest:.3g}", factor=f"{factor:.3g}"
    )
