"""Every head of the call on show, as small multiples with one colour scale.

The grid follows the session: the batch element selected, the call (layer) on show. Its heads
are a computation of the view (``compute.heads.heads_on_show``), run with the main computation
(the same settings, so the focused head here is exactly the main view's) and only while the
grid is on show: with no view of the heads open, an edit computes one head. A click on a map
shows that head everywhere. Hidden, the view draws nothing; shown again, it draws the latest.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from PySide6.QtCore import QSignalBlocker
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QPushButton, QSpinBox, QWidget

from attnviz.compute.attention import padded_query_rows
from attnviz.compute.axes import axis_labels, token_of
from attnviz.compute.heads import HeadsData, heads_on_show
from attnviz.ui.app.host import Host, ToolPanel
from attnviz.ui.app.live_model import live_controller
from attnviz.ui.app.results_panel import weight_levels
from attnviz.ui.app.session import AppSession
from attnviz.ui.app.view_base import SessionView, message_label, scrolled_grid, titled_row, view_column
from attnviz.ui.heatmap import HeatmapWidget
from attnviz.ui.heatmap.paint import format_number
from attnviz.ui.heatmap.scan import equal
from attnviz.ui.i18n import translate
from attnviz.ui.views.docks import DOCKS, HEADS_DOCK

__all__ = ["HEADS_DOCK", "HeadsView", "install_heads_view"]

#: A small multiple's least size: a 128-token map still shows its structure at 200 pixels.
MAP_MIN_WIDTH = 200
MAP_MIN_HEIGHT = 190


class HeadsView(SessionView):
    """All heads of one call for one batch element; ``maps[h]`` is head h's heatmap, ``heads``
    the computation of every head of the call on show."""

    def __init__(self, session: AppSession, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self._session = session
        self._heads: HeadsData | None = None
        self.maps: list[HeatmapWidget] = []
        self._columns = 0
        #: What the maps show: (layer, batch, scale...), weights, mask; None: nothing yet.
        self._drawn: tuple[tuple[object, ...], np.ndarray, np.ndarray] | None = None

        layout = view_column(self)
        header, self.title = titled_row()
        # The row's texts wrap: in slide type (capitals of 20 px) the call's name, the batch
        # element and the scale's note in one line were wider than a 1280-pixel slide.
        self.title.setWordWrap(True)
        # The batch element is picked here too: in presentation mode (and with the heads in
        # front) the input panel's picker is out of sight.
        self.batch_caption = QLabel()
        self.batch = QSpinBox()
        self.batch.setMaximum(max(0, session.document.state.batch - 1))
        self.batch.setValue(session.selection.batch)
        self.batch.valueChanged.connect(session.set_batch)
        self.batch_caption.setBuddy(self.batch)
        header.addWidget(self.batch_caption)
        header.addWidget(self.batch)
        self.scale_label = QLabel()
        self.scale_label.setWordWrap(True)
        header.addWidget(self.scale_label)
        # A live model (attnviz.show(model=..., inputs=...)): the head on show can be ablated.
        self.ablate_button = QPushButton()
        self.ablate_button.setVisible(False)
        self.ablate_button.clicked.connect(self._toggle_ablation)
        header.addWidget(self.ablate_button)
        layout.addLayout(header)
        self.message = message_label()
        layout.addWidget(self.message)
        self.scroll_area, self.grid_host, self.grid = scrolled_grid(spacing=6)
        layout.addWidget(self.scroll_area, 1)

        self.heads = self.while_shown(self.session.register("every head of the layer", heads_on_show, thread="main"))
        self.heads.on_result(self._on_heads)
        self.retranslate()
        self.request_draw()

    def _on_heads(self, heads: HeadsData) -> None:
        self._heads = heads
        self.request_draw()

    @property
    def shown_heads(self) -> HeadsData | None:
        """The heads the grid shows (or will, once on show)."""
        return self._heads

    def on_selection(self, selection: object) -> None:
        self._show_batch()
        self.request_draw()

    def on_document(self, _edit: object) -> None:
        self._show_batch()

    def _show_batch(self) -> None:
        with QSignalBlocker(self.batch):
            self.batch.setMaximum(max(0, self._session.document.state.batch - 1))
            self.batch.setValue(self._session.selection.batch)

    def retranslate(self) -> None:
        self.batch_caption.setText(translate("HeadsView", "&Batch element"))
        self.batch.setToolTip(translate("HeadsView", "The batch element the heads are shown for (every view follows)"))
        self.scroll_area.setToolTip(
            translate("HeadsView", "Every head of the layer, one colour scale; click a head to show it in every view")
        )
        self._show_texts()

    # ------------------------------------------------------------------ drawing

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if self.maps and self._fit_columns(len(self.maps)) != self._columns:
            self._place_maps()

    def _fit_columns(self, count: int) -> int:
        width = max(self.scroll_area.viewport().width(), MAP_MIN_WIDTH)
        fits = max(1, width // (MAP_MIN_WIDTH + self.grid.spacing()))
        # As square a grid as the width allows: 12 heads are 4 x 3, not 6 x 2 of thin maps.
        return max(1, min(count, fits, math.ceil(math.sqrt(count * 1.5))))

    def _ensure_maps(self, count: int) -> None:
        while len(self.maps) < count:
            head = len(self.maps)
            heatmap = self.own_map(HeatmapWidget(), x_label="", y_label="")  # small multiples: no axis names
            heatmap.setMinimumSize(MAP_MIN_WIDTH, MAP_MIN_HEIGHT)
            heatmap.annotate_limit = 0  # small multiples: colours, not digits
            heatmap.show_masked_values = True
            heatmap.set_colorbar_visible(False)
            heatmap.clicked.connect(lambda head=head: self._choose(head))
            self.maps.append(heatmap)
        while len(self.maps) > count:
            heatmap = self.maps.pop()
            self.grid.removeWidget(heatmap)
            self.release_map(heatmap)
        self._place_maps()

    def _place_maps(self) -> None:
        self._columns = self._fit_columns(len(self.maps))
        for index, heatmap in enumerate(self.maps):
            self.grid.addWidget(heatmap, index // self._columns, index % self._columns)
            # One colour bar for the grid: on the last map of the first row.
            heatmap.set_colorbar_visible(
                index == self._columns - 1 or (index == len(self.maps) - 1 and len(self.maps) < self._columns)
            )

    def _choose(self, head: int) -> None:
        heads = self._heads
        if heads is not None:
            self._session.set_focus(heads.layer, head)

    def _toggle_ablation(self) -> None:
        controller = live_controller(self._session)
        if controller is not None:
            controller.toggle_ablation(*self._session.selection.focus)
            self._show_texts()

    def draw(self) -> None:
        heads = self._heads
        state = self._session.document.state
        self._show_texts()
        if heads is None or heads.weights is None or heads.mask is None or heads.layer >= state.run.layers:
            self._ensure_maps(0)
            self._drawn = None
            return
        b = min(self._session.selection.batch, heads.weights.shape[0] - 1)
        weights, mask = heads.weights[b], heads.mask[b]
        n_heads, n_q, n_k = weights.shape
        self._ensure_maps(n_heads)
        levels = weight_levels(
            weights, mask, "batch" if self._session.color_range == "map" else self._session.color_range
        )
        rows, cols = axis_labels(heads.query_tokens, heads.key_tokens, b, n_q, n_k)
        log = self._session.color_range == "log"
        name = state.run.calls[heads.layer].name
        # Another head of the same layer computes the same weights again: only the marker moves.
        key = (heads.layer, b, levels, log, tuple(rows), tuple(cols))
        same = (
            self._drawn is not None
            and self._drawn[0] == key
            and _same(self._drawn[1], weights)
            and _same(self._drawn[2], mask)
        )
        self._drawn = (key, weights, mask)
        shown = self._session.selection.focus
        # Padding query rows striped as in the main view (self-attention under a model's masks).
        padded = None if same else padded_query_rows(self._session.head_view(), mask)  # only to draw
        for h, heatmap in enumerate(self.maps):
            focused = (heads.layer, h) == shown
            title = translate("HeadsView", "head {h}").format(h=h)
            if (heads.layer, h) in state.ablated_heads:  # a live model runs it with its output zeroed
                title = translate("HeadsView", "head {h}, ablated").format(h=h)
            heatmap.set_title(("▶ " if focused else "") + title)
            if same:
                continue
            heatmap.set_data(
                weights[h],
                mask=mask[h] if padded is None else mask[h] & ~padded[h][:, None],
                empty_rows=heads.empty_rows[b, h] if heads.empty_rows is not None else None,
                levels=levels,
                log=log,
                row_labels=rows,
                col_labels=cols,
                hover=functools.partial(self._hover, name, b, h),
            )

    def _hover(self, call: str, b: int, h: int, r: int, c: int) -> str:
        heads = self._heads
        if heads is None or heads.weights is None or heads.mask is None:
            return ""
        query_tokens, key_tokens = heads.query_tokens, heads.key_tokens
        where = translate("HeadsView", "{call}, head {h}, batch {b}").format(call=call, h=h, b=b)
        q_tok, k_tok = token_of(query_tokens, b, r), token_of(key_tokens, b, c)
        pair = translate("HeadsView", "query {r} {qt} → key {c} {kt}").format(
            r=r, c=c, qt=repr(q_tok) if q_tok is not None else "", kt=repr(k_tok) if k_tok is not None else ""
        )
        value = translate("HeadsView", "weight {value}").format(value=format_number(float(heads.weights[b, h, r, c])))
        masked = "" if heads.mask[b, h, r, c] else "  " + translate("HeadsView", "(masked)")
        return f"{where}\n{pair}\n{value}{masked}\n" + translate("HeadsView", "click to show this head everywhere")

    def _show_texts(self) -> None:
        heads, run = self._heads, self._session.document.state.run
        layer = heads.layer if heads is not None and heads.layer < run.layers else self._session.selection.layer
        b = self._session.selection.batch
        self.title.setText(
            (
                translate("HeadsView", "{call}: 1 head, batch {b}")
                if run.heads(layer) == 1
                else translate("HeadsView", "{call}: {n} heads, batch {b}")
            ).format(call=run.calls[layer].name, n=run.heads(layer), b=b)
        )
        if heads is not None and heads.error:
            self._show_message(heads.error, error=True)
        elif run.heads(layer) == 1:
            self._show_message(
                translate(
                    "HeadsView",
                    "One head here: open a file of a model's tensors with heads (File > Open), or a capture, "
                    "to see every head of a layer side by side.",
                ),
                error=False,
            )
        else:
            self._show_message(None)
        self.scale_label.setText(translate("HeadsView", "one colour scale for every head"))
        controller = live_controller(self._session)
        self.ablate_button.setVisible(controller is not None)
        if controller is not None:
            focus = self._session.selection.focus
            self.ablate_button.setText(
                translate("HeadsView", "Restore head {h}").format(h=focus.head)
                if controller.is_ablated(*focus)
                else translate("HeadsView", "Ablate head {h}").format(h=focus.head)
            )

    def _show_message(self, text: str | None, *, error: bool = True) -> None:
        self.message.setVisible(bool(text))
        if text:
            self.message.setText(("⚠ " if error else "") + text)

    @property
    def grid_shape(self) -> tuple[int, int]:
        """(rows, columns) of the grid on show."""
        count = len(self.maps)
        return (math.ceil(count / self._columns), self._columns) if count and self._columns else (0, 0)

    def focused_head_levels(self) -> tuple[float, float] | None:
        """The shared colour scale (for tests): every map's levels are these."""
        return self.maps[0].levels if self.maps else None


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal arrays, NaN equal to NaN (a fully masked row stays NaN from one result to the next),
    compared a block at a time: whole, the comparison's temporaries were bigger than the maps."""
    return equal(a, b)


def install_heads_view(session: AppSession, host: Host) -> ToolPanel:
    """Add the heads grid as a hidden tab; View > Heads (Ctrl+Shift+H) shows it."""
    return host.add_dock(DOCKS[HEADS_DOCK], lambda: HeadsView(session))
