"""The long-context view's computations: the overview of one (L_q, L_k) matrix without holding
it, and exact tiles, rows and per-key sums from its row statistics. No Qt here.

The matrix is the head and batch element on show, with every mask the state has that
the streaming engine reads: causal, valid lengths, (B, L_k) padding masks, the long-context
masks (window, sinks, prefix, chunk, documents). A full (L_q, L_k) ``attn_mask`` cannot be
streamed and is refused with a message saying so. Scoring is a dot product (scaled as the state
says): the streaming engine computes no other.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from attnviz.compute.convert import tensor_view
from attnviz.document import State
from attnviz.model_run import Focus
from attnviz.tr import QT_TRANSLATE_NOOP, exception_message, message

__all__ = [
    "LongRequest",
    "LongResult",
    "TileRequest",
    "TileResult",
    "compute_overview",
    "compute_tile",
    "overview_arguments",
]


@dataclass(frozen=True)
class LongRequest:
    """An overview of ``state``'s head ``focus``, batch element ``batch``, in at most ``bins``
    display bins. ``generation`` identifies the request: ``should_stop`` compares it with the
    newest."""

    version: int
    state: State
    batch: int
    bins: tuple[int, int]
    generation: int
    focus: Focus = Focus()


@dataclass(frozen=True)
class LongResult:
    version: int
    batch: int
    generation: int
    overview: object | None = None  # attnviz.engine.Overview
    #: numpy copies for drawing: (rows, cols) mean, max, masked share; per key sums; per row entropy.
    mean: np.ndarray | None = None
    max: np.ndarray | None = None
    masked_share: np.ndarray | None = None
    column_sums: np.ndarray | None = None
    entropy: np.ndarray | None = None
    row_edges: np.ndarray | None = None
    col_edges: np.ndarray | None = None
    computed_share: float = 0.0
    seconds: float = 0.0
    error: str | None = None
    cancelled: bool = False
    focus: Focus = Focus()


@dataclass(frozen=True)
class TileRequest:
    """Exact weights of query rows ``rows`` over keys ``cols`` (and the whole row ``query``)."""

    result: LongResult
    state: State
    rows: tuple[int, int]
    cols: tuple[int, int]
    query: int

    @property
    def version(self) -> int:
        return self.result.version


@dataclass(frozen=True)
class TileResult:
    request: TileRequest
    weights: np.ndarray | None = None
    allowed: np.ndarray | None = None
    row: np.ndarray | None = None  # (L_k,) weights of the selected query
    error: str | None = None


def _head_inputs(state: State, focus: Focus, batch: int) -> tuple[object, object]:
    view = state.head_view(focus)
    return tensor_view(view.queries[batch]), tensor_view(view.keys[batch])


def overview_arguments(state: State, batch: int, focus: Focus = Focus()) -> dict[str, object]:
    """``engine.overview`` keyword arguments for the masks and scale of head ``focus`` (one batch
    element).

    Raises ValueError (a one-line message) for what the streaming engine cannot compute.
    """

    s = state.settings
    view = state.head_view(focus)
    if s.scoring not in ("scaled_dot", "dot"):
        raise ValueError(
            message(
                QT_TRANSLATE_NOOP(
                    "LongView", "the long-context overview computes dot-product attention; the scoring is {scoring}"
                ),
                scoring=s.scoring,
            )
        )
    d = view.queries.shape[2]
    if view.keys.shape[2] != d:
        raise ValueError(
            message(
                QT_TRANSLATE_NOOP(
                    "LongView", "queries and keys must have the same size for a dot product: {d_q} and {d_k}"
                ),
                d_q=d,
                d_k=view.keys.shape[2],
            )
        )
    scale = view.scale if view.scale is not None else (1.0 if s.scoring == "dot" else 1.0 / math.sqrt(d))
    kwargs: dict[str, object] = {"scale": scale, "causal": view.causal}
    lens = state.valid_lens(view)
    if lens is not None:
        kwargs["valid_lens"] = tensor_view(lens[batch : batch + 1])
    masks = view.masks
    if masks is not None:
        if masks.attention_mask is not None:
            kwargs["attention_mask"] = _key_row(masks.attention_mask, batch, view.n_keys, "attention_mask")
        if masks.key_padding_mask is not None:
            kwargs["key_padding_mask"] = _key_row(masks.key_padding_mask, batch, view.n_keys, "key_padding_mask")
        if masks.attn_mask is not None:
            am = np.asarray(masks.attn_mask)
            if am.shape[-2:-1] not in ((), (1,)) or am.dtype != bool:
                raise ValueError(
                    message(
                        QT_TRANSLATE_NOOP(
                            "LongView",
                            "the overview streams masks it can compute: a full (queries x keys) attn_mask of "
                            "shape {shape} cannot be; give it as a padding mask and causal / window settings",
                        ),
                        shape=tuple(am.shape),
                    )
                )
            # A boolean (..., 1, L_k) attn_mask is a padding mask (True = attend).
            kwargs["attention_mask"] = _key_row(
                am.reshape(-1, am.shape[-1]).astype(np.int64), batch, view.n_keys, "attn_mask"
            )
    for name in ("window", "sinks", "prefix", "chunk"):
        value = getattr(s, name)
        if value:
            kwargs[name] = int(value)
    documents = state.documents_for(view)
    if documents is not None:
        kwargs["documents"] = tensor_view(documents[batch])
    return kwargs


def _key_row(mask: np.ndarray, batch: int, n_keys: int, name: str) -> object:

    arr = np.asarray(mask)
    if arr.ndim == 1:
        arr = arr[None]
    if arr.ndim != 2 or arr.shape[1] != n_keys:
        raise ValueError(
            message(
                QT_TRANSLATE_NOOP("LongView", "{name} must be (batch, keys) for the overview; got shape {shape}"),
                name=name,
                shape=tuple(arr.shape),
            )
        )
    row = arr[min(batch, arr.shape[0] - 1)]
    if arr.dtype.kind == "f" and name == "key_padding_mask":
        row = row <= -1e4  # an additive padding mask: its very negative entries are padding
    return tensor_view(np.ascontiguousarray(row))


def compute_overview(
    request: LongRequest,
    should_stop: Callable[[], bool] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> LongResult:
    """The overview for ``request``; never raises (an error or a cancellation is data)."""
    start = time.perf_counter()
    base: dict[str, Any] = {
        "version": request.version,
        "batch": request.batch,
        "generation": request.generation,
        "focus": request.focus,
    }
    try:
        from attnviz.engine import OverviewCancelled, overview
    except Exception as exc:  # noqa: BLE001 - a broken install is a message, not a crash
        return LongResult(**base, error=exception_message(exc))
    try:
        q, k = _head_inputs(request.state, request.focus, request.batch)
        kwargs = overview_arguments(request.state, request.batch, request.focus)
        ov = overview(q, k, bins=request.bins, progress=progress, should_stop=should_stop, **kwargs)  # type: ignore[arg-type]
    except OverviewCancelled:
        return LongResult(**base, cancelled=True)
    except Exception as exc:  # noqa: BLE001 - the view shows it, the app goes on
        return LongResult(**base, error=exception_message(exc))
    view = request.state.head_view(request.focus)
    n_q, n_k = view.n_queries, view.n_keys
    return LongResult(
        **base,
        overview=ov,
        mean=ov.mean.numpy(),
        max=ov.max.numpy(),
        masked_share=ov.masked_share.numpy(),
        column_sums=ov.column_sums.numpy(),
        entropy=ov.entropy.numpy(),
        row_edges=ov.row_edges().numpy(),
        col_edges=ov.col_edges().numpy(),
        computed_share=ov.computed_cells / max(1, n_q * n_k),
        seconds=time.perf_counter() - start,
    )


def compute_tile(request: TileRequest) -> TileResult:
    """Exact weights of the requested region and row (from the overview's row statistics)."""
    try:
        from attnviz.engine import tile, weight_row

        ov = request.result.overview
        q, k = _head_inputs(request.state, request.result.focus, request.result.batch)
        t = tile(q, k, ov, rows=slice(*request.rows), cols=slice(*request.cols))  # type: ignore[arg-type]
        row = weight_row(q, k, ov, request.query)  # type: ignore[arg-type]
        return TileResult(request, t.weights.numpy(), t.allowed.numpy(), row.numpy())
    except Exception as exc:  # noqa: BLE001
        return TileResult(request, error=exception_message(exc))
