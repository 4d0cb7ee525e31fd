"""The stage-by-stage walk's numbers, without Qt: which stages a call walks through, what changed
from one stage to the next, additive attention's hidden features as a map, and the temperature
what-if on the scores.

The what-if is the view's, never the document's: it multiplies the scaled scores by ``factor``
and runs the rest of the pipeline again in numpy, from the app's own masked scores, so the mask
and the fill are exactly the ones the app applied. The walk says on screen that it is a what-if.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnviz.compute.attention import ViewData
from attnviz.compute.pipeline import additive_features, softmax_allowed
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

__all__ = [
    "BEFORE",
    "HIDDEN",
    "MAX_HIDDEN_KEYS",
    "STEP_TITLES",
    "WhatIf",
    "before_stage",
    "changed_cells",
    "change_note",
    "hidden_map",
    "walk_stages",
    "what_if",
]

#: The additive scoring's hidden features tanh(W_q q + W_k k): a stage of the walk of its own.
HIDDEN = "hidden"
#: A hidden-features map has a row per key; past this many keys it is not drawn.
MAX_HIDDEN_KEYS = 256
_QK_STAGES = ("raw_scores", "scores", "mask", "masked_scores", "weights", "applied_weights")
#: Each step's title on the walk (the stage cards' titles say the same, numbered).
STEP_TITLES: dict[str, str] = {
    HIDDEN: QT_TRANSLATE_NOOP("PipelineWalk", "Hidden features tanh(W_q q + W_k k)"),
    "raw_scores": QT_TRANSLATE_NOOP("PipelineWalk", "Raw scores a(q, k)"),
    "scores": QT_TRANSLATE_NOOP("PipelineWalk", "Scaled scores"),
    "modified_scores": QT_TRANSLATE_NOOP("PipelineWalk", "Scores with the score terms"),
    "mask": QT_TRANSLATE_NOOP("PipelineWalk", "Mask (1 = may attend)"),
    "masked_scores": QT_TRANSLATE_NOOP("PipelineWalk", "Masked scores ã (softmax input)"),
    "weights": QT_TRANSLATE_NOOP("PipelineWalk", "Softmax weights α"),
    "applied_weights": QT_TRANSLATE_NOOP("PipelineWalk", "Weights after dropout"),
    "output": QT_TRANSLATE_NOOP("PipelineWalk", "Output ∑ α v"),
}


#: What each step is computed from, shown beside it as "before" and compared with it cell by cell
#: (the mask is compared with the scores it will mask; the output has a shape of its own).
BEFORE: dict[str, str] = {
    "raw_scores": HIDDEN,
    "scores": "raw_scores",
    "modified_scores": "scores",
    "mask": "scores",
    "masked_scores": "scores",
    "weights": "masked_scores",
    "applied_weights": "weights",
    "output": "applied_weights",
}


def walk_stages(additive: bool, terms: bool = False) -> tuple[str, ...]:
    """The walk's steps in order: the engine's stages, after the hidden features for additive
    scoring, with the score terms' step (a position bias, a soft cap, a score_mod: the engine
    applies them between scaling and masking) for a call that has them (a captured model's)."""
    stages: tuple[str, ...] = (*_QK_STAGES, "output")
    if terms:
        stages = (*stages[:2], "modified_scores", *stages[2:])
    return (HIDDEN, *stages) if additive else stages


def before_stage(stage: str, stages: tuple[str, ...]) -> str | None:
    """The step ``stage`` is computed from, among ``stages`` (the mask and the masked scores come
    after the score terms' step when the call has one)."""
    if stage in ("mask", "masked_scores") and "modified_scores" in stages:
        return "modified_scores"
    before = BEFORE.get(stage)
    return before if before in stages else None


def changed_cells(before: np.ndarray | None, after: np.ndarray) -> np.ndarray | None:
    """Cells of ``after`` whose value is not the one they had in ``before`` (a NaN that stays NaN
    has not changed); None when the two are not the same matrix shape (nothing to compare)."""
    if before is None or before.shape != after.shape:
        return None
    a = np.asarray(before, dtype=np.float64)
    b = np.asarray(after, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        same = (a == b) | (np.isnan(a) & np.isnan(b))
    return ~same


def change_note(stage: str, before: str | None, changed: np.ndarray | None) -> str:
    """What the walk says changed from the stage it was computed from, ``before`` (a marked
    message)."""
    if before is None:
        return QT_TRANSLATE_NOOP("PipelineWalk", "the first step")
    if stage == "mask":
        return QT_TRANSLATE_NOOP("PipelineWalk", "which keys each query may attend: the 0s (outlined) will be masked")
    if changed is None:
        return QT_TRANSLATE_NOOP("PipelineWalk", "a new shape: nothing to compare cell by cell")
    n, total = int(changed.sum()), int(changed.size)
    if n == 0:
        return QT_TRANSLATE_NOOP("PipelineWalk", "no cell changed: this step leaves the values as they were")
    if n == total:
        return message(
            QT_TRANSLATE_NOOP("PipelineWalk", "every one of the {total} cells changed"),
            total=total,
        )
    return message(
        QT_TRANSLATE_NOOP("PipelineWalk", "{n} of {total} cells changed (outlined)"),
        n=n,
        total=total,
    )


def hidden_map(params: dict[str, np.ndarray], queries: np.ndarray, keys: np.ndarray, query: int) -> np.ndarray:
    """tanh(W_q q_i + W_k k_j) of query ``query`` with every key: (keys, hidden units), from one
    batch element's ``queries`` (Q, d_q) and ``keys`` (K, d_k). Raises KeyError/ValueError when
    the parameters do not fit, ValueError past ``MAX_HIDDEN_KEYS`` keys."""
    if keys.shape[0] > MAX_HIDDEN_KEYS:
        raise ValueError(f"{keys.shape[0]} keys > {MAX_HIDDEN_KEYS}")
    return np.stack([additive_features(params, queries[query], key)[0] for key in keys])


@dataclass(frozen=True)
class WhatIf:
    """The stages of one batch element recomputed with the scaled scores multiplied by ``factor``."""

    factor: float
    scores: np.ndarray
    masked_scores: np.ndarray
    weights: np.ndarray
    output: np.ndarray


def what_if(view: ViewData, b: int, values: np.ndarray, mask_mode: str, factor: float) -> WhatIf:
    """Batch element ``b`` of ``view`` with its scaled scores × ``factor`` (a temperature of
    1/``factor``), ``values`` (K, d_v) being its values.

    The masked scores are the app's own with the scores' part scaled: a cell the mask replaced
    (the book's −10⁶, −∞) keeps its fill, a cell the mask added to (a float mask, the 0/1 bug)
    keeps what was added. Rows with no key to attend keep the app's weights: what the mask mode
    does with them does not depend on the scores. No dropout: the what-if is of the weights.
    """
    scores = np.asarray(view.scores[b], dtype=np.float64)
    masked = np.asarray(view.masked_scores[b], dtype=np.float64)
    allowed = softmax_allowed(np.asarray(view.mask[b]).astype(bool), mask_mode)
    with np.errstate(invalid="ignore", over="ignore"):
        new_masked = np.where(allowed, masked + (factor - 1.0) * scores, masked)
        top = np.max(np.where(allowed, new_masked, -np.inf), axis=-1, keepdims=True)
        top = np.where(np.isfinite(top), top, 0.0)
        e = np.where(allowed, np.exp(new_masked - top), 0.0)
        total = e.sum(axis=-1, keepdims=True)
        weights = np.where(total > 0, e / np.where(total > 0, total, 1.0), 0.0)
    empty = np.asarray(view.empty_rows[b], dtype=bool) | ~allowed.any(axis=-1)
    weights = np.where(empty[:, None], np.asarray(view.weights[b], dtype=np.float64), weights)
    output = np.nan_to_num(weights) @ np.asarray(values, dtype=np.float64)
    output = np.where(np.isnan(weights).any(axis=-1, keepdims=True), np.nan, output)
    return WhatIf(float(factor), scores * factor, new_masked, weights, output)
