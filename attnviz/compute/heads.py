"""Every head of a run at once: the weights of one call (the heads grid) and per-head
statistics of every call (the layers x heads overview). No Qt here; run on compute threads.

Both compute with the state's settings and each call's own causal flag and scale, as the main
view does, so what the grid shows for the focused head is exactly what the main view shows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from attnviz.compute.convert import tensor_view, to_numpy
from attnviz.compute.engine_args import mask_kwargs, scale_kwargs, settings_kwargs
from attnviz.compute.jobs import Job
from attnviz.state.document import State
from attnviz.state.run import AttentionCall, Focus
from attnviz.text.tr import QT_TRANSLATE_NOOP, exception_message, message

if TYPE_CHECKING:
    from attnviz.compute.attention import ViewData

__all__ = [
    "HEAD_STATISTICS",
    "PAD_TOKENS",
    "HeadStatistics",
    "HeadsData",
    "call_weights",
    "head_statistics",
    "heads_of_focused_call",
    "heads_on_show",
    "padding_keys",
]

#: Token texts that mark padding in the common tokenisers (BERT, T5/Llama, RoBERTa, GPT-2's
#: usual pad-as-EOS): used to find padding that a mask failed to mask.
PAD_TOKENS = frozenset({"[PAD]", "<pad>", "<PAD>", "<|pad|>", "<|endoftext|>", "</s>"})


@dataclass(frozen=True)
class HeadsData:
    """The weights of every head of one call: (B, H, Q, K), with the allowed cells and the rows
    with no allowed key, and the call's query and key tokens (B, Q) and (B, K) (None: none).
    ``error`` says why there are no weights (too large, say)."""

    layer: int
    weights: np.ndarray | None = None
    mask: np.ndarray | None = None
    empty_rows: np.ndarray | None = None
    error: str | None = None
    query_tokens: np.ndarray | None = None
    key_tokens: np.ndarray | None = None


def _attend_call(state: State, layer: int, keep: tuple[str, ...] = ("mask",)) -> Any:
    """The engine's result for every head of call ``layer`` under ``state``'s settings."""
    import torch

    from attnviz.engine import attend

    call = state.run.calls[layer]
    if call.queries is None or call.keys is None or call.values is None:
        raise ValueError(message(QT_TRANSLATE_NOOP("Heads", "{call} recorded attention weights only"), call=call.name))
    first = state.head_view(Focus(layer, 0))  # the call's lengths and causal flag
    with torch.no_grad():
        return attend(
            tensor_view(call.queries),
            tensor_view(call.keys),
            tensor_view(call.values),
            enable_gqa=call.kv_heads != call.shape[1],
            keep=keep,
            **settings_kwargs(state),
            **mask_kwargs(state, first, call.masks),
            **scale_kwargs(state, call.scale),
        )


def heads_of_focused_call(state: State, focus: tuple[int, int] = Focus(), main: ViewData | None = None) -> HeadsData:
    """Every head's weights of the call on show; never raises. ``main``: the main view's result
    for the head on show, which is the whole call when the call has one head (the book's)."""
    layer = focus[0]
    call = state.run.calls[layer]
    head = state.head_view(Focus(*focus))
    tokens = (head.query_tokens, head.key_tokens)
    if call.weights_only:
        assert call.weights is not None
        weights = np.asarray(call.weights, dtype=np.float32)
        allowed = np.isfinite(weights) & (weights > 0)
        return HeadsData(layer, weights, allowed, np.asarray(~allowed.any(axis=-1)), None, *tokens)
    if main is not None and call.shape[1] == 1:
        # One head: the main view computed it already (the same settings, masks and scale).
        return HeadsData(layer, main.weights[:, None], main.mask[:, None], main.empty_rows[:, None], None, *tokens)
    try:
        result = _attend_call(state, layer)
        weights, mask = to_numpy(result.weights), to_numpy(result.mask)
        return HeadsData(layer, weights, mask, to_numpy(result.diagnostics.empty_rows), None, *tokens)
    except Exception as exc:  # noqa: BLE001 - the main view must not fail because of the grid
        return HeadsData(layer, None, None, None, exception_message(exc), *tokens)


def heads_on_show(job: Job[object]) -> HeadsData:
    """Every head of the call on show in ``job``'s snapshot, for a view that shows them: run with
    the main computation, whose result is the whole call when the call has one head."""
    main = job.main.view if job.main is not None and job.main.focus == job.snapshot.focus else None
    return heads_of_focused_call(job.snapshot.state, job.snapshot.focus, main)


def call_weights(state: State, layer: int) -> np.ndarray:
    """(B, H, Q, K) weights of call ``layer`` under the state's settings and the call's own causal
    flag and scale."""
    call = state.run.calls[layer]
    if call.weights_only:
        assert call.weights is not None
        return np.asarray(call.weights)
    return to_numpy(_attend_call(state, layer, keep=()).weights)


def padding_keys(state: State, call: AttentionCall, layer: int) -> np.ndarray | None:
    """(B, K) True for padding keys: what a (B, K) padding mask says, and tokens that are pad
    tokens (so padding a mask forgot to mask still counts). None: no padding known."""
    b, _, _, k = call.shape
    pad = np.zeros((b, k), bool)
    m = call.masks
    if m.attention_mask is not None and np.ndim(m.attention_mask) == 2:
        pad |= np.asarray(m.attention_mask) == 0
    if m.key_padding_mask is not None and np.ndim(m.key_padding_mask) == 2:
        kpm = np.asarray(m.key_padding_mask)
        pad |= kpm if kpm.dtype == bool else np.isneginf(kpm) | (kpm <= -1e4)
    # The keys' own tokens (a cross-attention call's are the encoder's): call ``layer``'s.
    tokens = state.run.call_tokens(layer)[1]
    if tokens is not None and tokens.shape == (b, k):
        pad |= np.isin(tokens, list(PAD_TOKENS))
    return pad if pad.any() else None


#: The per-head statistics of the overview: name -> (label, description).
HEAD_STATISTICS: dict[str, tuple[str, str]] = {
    "entropy": (
        QT_TRANSLATE_NOOP("Heads", "Entropy"),
        QT_TRANSLATE_NOOP(
            "Heads",
            "How spread each query's attention is, 0 (one key) to 1 (uniform over its "
            "allowed keys); mean over real queries",
        ),
    ),
    "first": (
        QT_TRANSLATE_NOOP("Heads", "Attention to the first token"),
        QT_TRANSLATE_NOOP("Heads", "Weight on key 0 (often [CLS] or <s>: an attention sink); mean over real queries"),
    ),
    "padding": (
        QT_TRANSLATE_NOOP("Heads", "Attention to padding"),
        QT_TRANSLATE_NOOP(
            "Heads",
            "Weight on padding keys (from the padding mask and pad tokens); anything "
            "above 0 is a masking bug; mean over real queries",
        ),
    ),
    "diagonal": (
        QT_TRANSLATE_NOOP("Heads", "Attention to itself"),
        QT_TRANSLATE_NOOP("Heads", "Weight of query i on key i (self-attention); mean over real queries"),
    ),
    "max": (
        QT_TRANSLATE_NOOP("Heads", "Largest weight"),
        QT_TRANSLATE_NOOP("Heads", "Each query's largest weight (1: it looks at one key only); mean over real queries"),
    ),
}


@dataclass(frozen=True)
class HeadStatistics:
    """Per-head statistics of every call: each array (layers, B, H_max), NaN where a call has
    fewer heads or a statistic does not apply. ``errors`` by call index: why it has none."""

    values: dict[str, np.ndarray]
    names: tuple[str, ...]
    errors: dict[int, str]


def _row_weights(weights: np.ndarray, real_rows: np.ndarray | None) -> np.ndarray:
    """Per-row averaging weights (B, 1, Q): 1 for real queries (all rows without padding)."""
    b, _, q, _ = weights.shape
    return np.ones((b, 1, q)) if real_rows is None else real_rows[:, None, :].astype(float)


def _mean_rows(per_row: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Mean of (B, H, Q) over the rows weighted by ``rows`` (B, 1, Q), ignoring NaN rows."""
    ok = np.isfinite(per_row) & (rows > 0)
    total = np.where(ok, per_row * rows, 0.0).sum(axis=-1)
    count = np.where(ok, rows, 0.0).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1e-300), np.nan)


def head_statistics(state: State, *, should_stop: Callable[[], bool] | None = None) -> HeadStatistics:
    """Every statistic of ``HEAD_STATISTICS`` for every call and head of the state's run, a call
    at a time (only one call's weights are held at once). Calls of a smaller batch than the
    run's largest (a windowed model's later stages) leave NaN past their batch."""
    run = state.run
    b = run.batch
    h_max = max(run.heads(i) for i in range(run.layers))
    values = {name: np.full((run.layers, b, h_max), np.nan) for name in HEAD_STATISTICS}
    errors: dict[int, str] = {}
    for index, call in enumerate(run.calls):
        if should_stop is not None and should_stop():
            break
        try:
            w = np.asarray(call_weights(state, index), dtype=np.float64)
        except Exception as exc:  # noqa: BLE001 - one call's failure must not hide the others
            errors[index] = exception_message(exc)
            continue
        b_call, h, q, k = w.shape
        pad = padding_keys(state, call, index)
        # Padding queries (self-attention) are left out of every mean: nobody reads their rows.
        real = None if pad is None or q != k else ~pad
        rows = _row_weights(w, real)
        finite = np.where(np.isfinite(w), w, 0.0)
        allowed = (finite > 0).sum(axis=-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            ent = -(finite * np.log(np.where(finite > 0, finite, 1.0))).sum(axis=-1)
            norm = np.where(allowed > 1, ent / np.log(np.maximum(allowed, 2)), 0.0)
        norm = np.where(np.isfinite(w).all(axis=-1), norm, np.nan)
        values["entropy"][index, :b_call, :h] = _mean_rows(norm, rows)
        values["first"][index, :b_call, :h] = _mean_rows(w[..., 0], rows)
        values["max"][index, :b_call, :h] = _mean_rows(
            np.where(np.isfinite(w).all(axis=-1), finite.max(axis=-1), np.nan), rows
        )
        if pad is not None:
            values["padding"][index, :b_call, :h] = _mean_rows((finite * pad[:, None, None, :]).sum(axis=-1), rows)
        if q == k:
            values["diagonal"][index, :b_call, :h] = _mean_rows(np.diagonal(w, axis1=-2, axis2=-1), rows)
    return HeadStatistics(values, tuple(call.name for call in run.calls), errors)
