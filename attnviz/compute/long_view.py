"""The long-context view's computations: the overview of one (L_q, L_k) matrix without holding
it, and exact tiles, rows and per-key sums from its row statistics. No Qt here.

The matrix is the state's head and batch element on show, with the state's one mask description
(``engine_args.state_mask``: valid lengths, causal, the model's masks, window, sinks, prefix,
chunk, documents), the description the main view binds too, so the two cannot disagree on a
mask. Scoring is a dot product (scaled as the state says): the streaming engine computes no
other.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from attnviz.compute.convert import tensor_view
from attnviz.state.document import State
from attnviz.state.run import Focus
from attnviz.text.tr import QT_TRANSLATE_NOOP, exception_message, message

if TYPE_CHECKING:
    from attnviz.engine import Mask

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


def _head_inputs(state: State, focus: Focus) -> tuple[object, object]:
    """Every batch element's queries and keys of head ``focus`` (the engine takes the matrix it
    is asked for)."""
    view = state.head_view(focus)
    return tensor_view(view.queries), tensor_view(view.keys)


def overview_arguments(state: State, focus: Focus = Focus()) -> tuple[float, Mask]:
    """``engine.overview``'s ``scale`` and ``mask`` for head ``focus``: the call's scale and the
    state's one mask description of it (``engine_args.state_mask``, which the main view binds too).

    Raises ValueError (a one-line message) for what the streaming engine cannot compute.
    """
    from attnviz.compute.engine_args import state_mask

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
    return scale, state_mask(state, view)


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
        q, k = _head_inputs(request.state, request.focus)
        scale, mask = overview_arguments(request.state, request.focus)
        ov = overview(
            q,
            k,
            batch=request.batch,
            bins=request.bins,
            scale=scale,
            mask=mask,
            progress=progress,
            should_stop=should_stop,
        )
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
        q, k = _head_inputs(request.state, request.result.focus)
        t = tile(q, k, ov, rows=slice(*request.rows), cols=slice(*request.cols))  # type: ignore[arg-type]
        row = weight_row(q, k, ov, request.query)  # type: ignore[arg-type]
        return TileResult(request, t.weights.numpy(), t.allowed.numpy(), row.numpy())
    except Exception as exc:  # noqa: BLE001
        return TileResult(request, error=exception_message(exc))
