"""The pipeline's words: each stage's title, and the line under each stage saying what it did
with this input. No Qt here: the notes are marked messages (``attnviz.text.tr``), translated when
the pipeline view shows them, and tested without a window.
"""

from __future__ import annotations

import numpy as np

from attnviz.compute.attention import ViewData
from attnviz.state import catalog
from attnviz.state.document import State
from attnviz.state.run import CallTerm, HeadView
from attnviz.text.tr import QT_TRANSLATE_NOOP, joined, message, plural

__all__ = ["PIPELINE_STAGES", "SCORING_NAMES", "format_value", "stage_notes", "summary"]

#: (stage, title) in pipeline order; the stages are the engine's ``STAGES``.
PIPELINE_STAGES: tuple[tuple[str, str], ...] = (
    ("raw_scores", QT_TRANSLATE_NOOP("PipelineView", "1 · Raw scores a(q, k)")),
    ("scores", QT_TRANSLATE_NOOP("PipelineView", "2 · Scaled scores")),
    # Shown only for a call with score terms (a position bias, soft-capping, a score_mod).
    ("modified_scores", QT_TRANSLATE_NOOP("PipelineView", "2b · Scores with the score terms")),
    ("mask", QT_TRANSLATE_NOOP("PipelineView", "3 · Mask (1 = may attend)")),
    ("masked_scores", QT_TRANSLATE_NOOP("PipelineView", "4 · Masked scores ã (softmax input)")),
    ("weights", QT_TRANSLATE_NOOP("PipelineView", "5 · Softmax weights α")),
    ("applied_weights", QT_TRANSLATE_NOOP("PipelineView", "6 · Weights after dropout")),
    ("output", QT_TRANSLATE_NOOP("PipelineView", "7 · Output ∑ α v")),
)
#: The scoring functions as notes name them ("scaled dot scoring").
SCORING_NAMES = {
    "dot": QT_TRANSLATE_NOOP("PipelineView", "dot"),
    "scaled_dot": QT_TRANSLATE_NOOP("PipelineView", "scaled dot"),
    "additive": QT_TRANSLATE_NOOP("PipelineView", "additive"),
    "bilinear": QT_TRANSLATE_NOOP("PipelineView", "bilinear"),
    "gaussian": QT_TRANSLATE_NOOP("PipelineView", "gaussian"),
    "summation": QT_TRANSLATE_NOOP("PipelineView", "summation"),
}
# Fill value of each mask mode that replaces scores (the rest add or invert, see softmax_allowed).
_FILLS = {"d2l": "−10⁶", "strict": "−∞", "neg_inf": "−∞", "sdpa": "−∞", "inverted": "−∞"}


def format_value(x: float) -> str:
    """A stage's number as the notes and hover texts print it."""
    if np.isnan(x):
        return "NaN"
    if np.isinf(x):
        return "∞" if x > 0 else "−∞"
    return f"{x:.4g}"


def _scoring_name(state: State) -> str:
    s = state.settings
    return SCORING_NAMES.get(s.scoring) or catalog.SCORINGS.label(s.scoring)


def _mask_note(state: State, head: HeadView, b: int) -> str:
    causal = head.causal
    if state.settings.lens_mode == "none" and causal is None:
        return QT_TRANSLATE_NOOP("PipelineView", "no valid lengths and no causal mask: every key may be attended")
    lens = state.valid_lens(head)
    lens_txt = (
        ""
        if lens is None
        else message(
            QT_TRANSLATE_NOOP("PipelineView", "valid lengths {lengths}"), lengths=str(np.asarray(lens)[b].tolist())
        )
    )
    causal_txt = (
        ""
        if causal is None
        else message(QT_TRANSLATE_NOOP("PipelineView", "causal ({alignment})"), alignment=causal.replace("_", "-"))
    )
    if lens_txt and causal_txt:
        return message(
            QT_TRANSLATE_NOOP("PipelineView", "from {first} and {second}"), first=lens_txt, second=causal_txt
        )
    return message(QT_TRANSLATE_NOOP("PipelineView", "from {what}"), what=lens_txt or causal_txt)


def _masked_scores_note(mask_mode: str) -> str:
    if mask_mode == "float01":
        return QT_TRANSLATE_NOOP("PipelineView", "bug mode: the 0/1 mask is added (+1 on kept keys), nothing is masked")
    if mask_mode == "inverted":
        return QT_TRANSLATE_NOOP("PipelineView", "bug mode: the mask's polarity is flipped, the kept keys get −∞")
    return message(
        QT_TRANSLATE_NOOP("PipelineView", "masked keys (hatched) get {fill}; colours from the allowed cells"),
        fill=_FILLS.get(mask_mode),
    )


def _weights_note(view: ViewData, b: int) -> str:
    rows_sum = view.row_sums[b]
    sums = ", ".join(format_value(float(x)) for x in rows_sum[:6]) + ("…" if rows_sum.size > 6 else "")
    note = message(QT_TRANSLATE_NOOP("PipelineView", "each row sums to {sums}"), sums=sums)
    n_empty = int(view.empty_rows[b].sum())
    if not n_empty:
        return note
    empty = plural(
        n_empty,
        QT_TRANSLATE_NOOP("PipelineView", "{n} query has no valid key (∅)"),
        QT_TRANSLATE_NOOP("PipelineView", "{n} queries have no valid key (∅)"),
    )
    return message("{first}; {second}", first=note, second=empty)


def _dropout_note(state: State) -> str:
    s = state.settings
    if s.dropout > 0 and s.train:
        return message(
            QT_TRANSLATE_NOOP("PipelineView", "dropout p = {p}: zeroed at random, the rest × {factor}"),
            p=f"{s.dropout:g}",
            factor=f"{1 / (1 - s.dropout):.4g}",
        )
    if s.dropout > 0:
        return message(
            QT_TRANSLATE_NOOP(
                "PipelineView", "the same as the weights: dropout ({p}) acts in training only (train is off)"
            ),
            p=f"{s.dropout:g}",
        )
    return QT_TRANSLATE_NOOP("PipelineView", "the same as the weights: no dropout")


def stage_notes(view: ViewData, state: State, head: HeadView, b: int) -> dict[str, str]:
    """The line under each stage for batch element ``b`` of ``view``, the result of ``state``'s
    head ``head`` (marked messages, in the stages' order)."""
    s = state.settings
    scoring = _scoring_name(state)
    if s.scoring == "scaled_dot":
        d_k = int(head.keys.shape[2])
        scores = message(
            QT_TRANSLATE_NOOP("PipelineView", "raw ÷ √d = raw ÷ {root} (d = {d})"), root=f"{np.sqrt(d_k):.4g}", d=d_k
        )
    else:
        scores = message(
            QT_TRANSLATE_NOOP("PipelineView", "the same as the raw scores: {scoring} has no scaling step"),
            scoring=scoring,
        )
    notes = {
        "raw_scores": message(
            QT_TRANSLATE_NOOP("PipelineView", "{scoring} scoring; colour range from the scores themselves"),
            scoring=scoring,
        ),
        "scores": scores,
        "mask": _mask_note(state, head, b),
        "masked_scores": _masked_scores_note(s.mask_mode),
        "weights": _weights_note(view, b),
        "applied_weights": _dropout_note(state),
        "output": message(
            QT_TRANSLATE_NOOP("PipelineView", "weights × values: one row of length d_v = {d_v} per query"),
            d_v=view.output.shape[2],
        ),
    }
    terms: list[str] = [_term_text(term) for term in head.call.terms]
    if head.call.sinks is not None:
        terms.append(QT_TRANSLATE_NOOP("PipelineView", "sinks (a logit per head in the softmax)"))
    if terms:
        notes["modified_scores"] = message(
            QT_TRANSLATE_NOOP("PipelineView", "the call's score terms, in order: {terms}"), terms=joined(terms)
        )
    return notes


def _term_text(term: CallTerm) -> str:
    """A score term as the score-term stage's note names it."""
    if term.kind == "softcap":
        return message(QT_TRANSLATE_NOOP("PipelineView", "soft cap {cap} (cap · tanh(s / cap))"), cap=f"{term.cap:g}")
    if term.kind == "score_mod":
        return QT_TRANSLATE_NOOP("PipelineView", "FlexAttention score_mod")
    if term.kind == "alibi":
        return QT_TRANSLATE_NOOP("PipelineView", "ALiBi added (slope · (key - query))")
    return message(QT_TRANSLATE_NOOP("PipelineView", "{name} added"), name=term.name)


def summary(view: ViewData, state: State, b: int) -> str:
    """The line over the stages: scoring, mask mode, dtype and the batch element on show."""
    s = state.settings
    return message(
        QT_TRANSLATE_NOOP("PipelineView", "{scoring} scoring · mask {mask_mode} · {dtype} · batch element {b} of {n}"),
        scoring=_scoring_name(state),
        mask_mode=catalog.MASK_MODES.label(s.mask_mode),
        dtype=s.dtype,
        b=b,
        n=view.weights.shape[0],
    )
