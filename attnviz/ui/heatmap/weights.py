"""One batch element of a result's attention weights on a heatmap, as every view draws them:
0 to 1, masked cells hatched, empty rows flagged, tokens (or q0, k0...) on the axes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from attnviz.compute.attention import ViewData
from attnviz.compute.axes import axis_labels
from attnviz.ui.heatmap.widget import HeatmapWidget

__all__ = ["shown_mask", "show_weights"]


def shown_mask(view: ViewData, b: int) -> np.ndarray:
    """The mask a weights map of batch element ``b`` draws: padding query rows hatched like
    masked keys (their weights keep their colours under the stripes)."""
    if view.padded_rows is None or not view.padded_rows[b].any():
        return view.mask[b]
    return view.mask[b] & ~view.padded_rows[b][:, None]


def show_weights(
    heatmap: HeatmapWidget,
    view: ViewData,
    batch: int,
    labels: tuple[Sequence[str] | None, Sequence[str] | None] | None = None,
    levels: tuple[float, float] = (0.0, 1.0),
) -> None:
    """Draw ``view``'s weights of ``batch`` on ``heatmap``. ``labels``: (rows, columns), either
    None for the axes' numbers; by default the view's tokens, else q0, q1... and k0, k1...
    ``levels``: the colour range (a figure's ``--color-range``; the views keep 0 to 1)."""
    if labels is None:
        n_q, n_k = view.weights.shape[1:]
        labels = axis_labels(view.query_tokens, view.key_tokens, batch, n_q, n_k)
    # Masked cells that still get weight (padding queries, the book's fill on an empty row)
    # keep their colour under the stripes, as in the main view.
    heatmap.show_masked_values = True
    heatmap.set_data(
        view.weights[batch],
        mask=shown_mask(view, batch),
        empty_rows=view.empty_rows[batch],
        levels=levels,
        row_labels=labels[0],
        col_labels=labels[1],
    )
