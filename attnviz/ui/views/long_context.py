"""Long contexts: the whole (L_q, L_k) attention of the head on show as display bins, without
ever holding the matrix, and exact values wherever the user looks.

* The overview (mean, largest weight or masked share per bin) is the view's computation, on a
  thread of its own, streaming over blocks of rows (``engine.overview``), run only while the
  view is on show; a newer request stops the running one between two blocks, and a progress
  bar shows how far it is.
* A click on a bin computes the exact tile around it from the overview's row statistics
  (``engine.tile``): values, tokens and hover as in the main maps, at any length. The clicked
  query's whole weight row is drawn as a line over all keys.
* Per key, the attention it receives (attention sinks stand out); per query, the entropy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtWidgets import (
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from attnviz.compute.axes import span_labels, token_of
from attnviz.compute.jobs import Job
from attnviz.compute.long_view import LongRequest, LongResult, TileRequest, TileResult, compute_overview, compute_tile
from attnviz.text.tr import QT_TRANSLATE_NOOP
from attnviz.ui.app.host import Host, ToolPanel
from attnviz.ui.app.session import AppSession, Selection
from attnviz.ui.app.view_base import SessionView, captioned_choice, view_column
from attnviz.ui.heatmap import HeatmapWidget
from attnviz.ui.heatmap.items import hold_tick_room
from attnviz.ui.heatmap.paint import format_number
from attnviz.ui.heatmap.prepare import Frame, PreparedMap, prepare_map
from attnviz.ui.i18n import tr_text, translate
from attnviz.ui.labels import WrappedStatusLabel
from attnviz.ui.pacing import next_frame
from attnviz.ui.theme import mark_error_label
from attnviz.ui.views.docks import DOCKS, LONG_DOCK

__all__ = ["LONG_DOCK", "LongContextView", "install_long_context_view"]

#: The overview's display bins at most (about the pixels a map has on a large screen).
MAX_BINS = 512
#: The exact tile's side, in cells, by default: large enough to read tokens and values.
DEFAULT_TILE = 32

#: Tick labels of bins and lines have room for this many digits from the start.
_DIGITS = "000000"

#: What the overview map shows: name -> label.
SHOWN = {
    "mean": QT_TRANSLATE_NOOP("LongView", "Mean weight per bin"),
    "max": QT_TRANSLATE_NOOP("LongView", "Largest weight per bin"),
    "masked_share": QT_TRANSLATE_NOOP("LongView", "Share of masked cells"),
}


@dataclass(frozen=True)
class _Prepared:
    """An overview and its maps made ready for drawing, handed from the compute thread."""

    result: LongResult
    maps: dict[str, PreparedMap]


def _prepare_statistic(result: LongResult, name: str, frame: Frame | None = None) -> PreparedMap:
    """The overview map of one statistic (``SHOWN``) as ``HeatmapWidget.show_prepared`` takes it:
    weights on a scale from 0 to their largest, the masked share from 0 to 1; with ``frame`` (what
    the map has on screen) its picture too."""
    values = getattr(result, name)
    assert values is not None and result.masked_share is not None
    top = 1.0 if name == "masked_share" else max(float(np.nanmax(values)), 1e-12)
    mask = result.masked_share < 1.0 if name != "masked_share" else None
    return prepare_map(values, mask=mask, levels=(0.0, top), frame=frame)


def _prepare_overview(result: LongResult, shown: str, frame: Frame | None) -> dict[str, PreparedMap]:
    """The map of the statistic ``shown``, with its picture of ``frame`` (what the map has on
    screen), on the compute thread: hundreds of thousands of bins, whose colour levels, special
    cells and pyramid would otherwise take the GUI thread. Another statistic, chosen later, is
    prepared when it is chosen."""
    if result.mean is None or result.masked_share is None or result.error is not None:
        return {}
    try:
        return {shown: _prepare_statistic(result, shown, frame)}
    except Exception:  # noqa: BLE001 - the GUI thread prepares again and shows what fails
        return {}


def _fit(plot: pg.PlotWidget, values: np.ndarray) -> None:
    """Show the whole line: every index across, 0 to its largest finite value up."""
    finite = values[np.isfinite(values)]
    top = float(finite.max()) if finite.size else 1.0
    plot.setRange(
        xRange=(0, max(1, values.shape[0] - 1)),
        yRange=(min(0.0, float(finite.min()) if finite.size else 0.0), top if top > 0 else 1.0),
    )
    # The view's transform follows the range now, not as the paint begins: changed there, it
    # makes the line rebuild and the plot paint a second time.
    plot.getViewBox().updateMatrix()


def _keep_room_when_hidden(widget: QWidget) -> None:
    policy = widget.sizePolicy()
    policy.setRetainSizeWhenHidden(True)
    widget.setSizePolicy(policy)


def _holder(widget: QWidget) -> QWidget:
    """``widget`` in a plain box that keeps its room while it is hidden."""
    _keep_room_when_hidden(widget)
    box = QWidget()
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(widget)
    return box


def _with_token(template: str, query: int, token: str | None) -> str:
    """``template`` with the query and its token; without a token, no gap where it would be."""
    mark = "\x00"  # a placeholder no translation or token contains
    text = template.format(q=query, token=mark)
    if token is None:
        return text.replace(" " + mark, "").replace(mark, "")
    return text.replace(mark, repr(token))


def _tile(job: Job[TileRequest | None]) -> TileResult | None:
    """On the tile's thread: the exact values the view asked for."""
    return None if job.params is None else compute_tile(job.params)


class LongContextView(SessionView):
    """``overview_map`` (bins), ``tile_map`` (exact cells), ``row_plot``, ``sums_plot``,
    ``entropy_plot``; ``result`` is the overview on show, ``tile`` the exact tile on show;
    ``overview`` and ``exact_tile`` the computations."""

    def __init__(self, session: AppSession, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self._session = session
        self._progress = (0, 0)
        self.result: LongResult | None = None
        #: The overview's maps made ready for drawing on the compute thread, per statistic shown.
        self._prepared: dict[str, PreparedMap] = {}
        self._shown_name = "mean"  # the statistic on show, for the compute thread
        self.tile: TileResult | None = None
        self._focus_cell: tuple[int, int] | None = None
        self._to_reveal: list[QWidget] = []  # plots not painted yet since the view was shown
        self._tile_asked_for: LongResult | None = None  # the overview the last tile was asked of

        layout = view_column(self)
        header = QHBoxLayout()
        # Its size never follows its text: a status that widened the view or changed its height
        # by a line resized, and so repainted, every map and plot below it each time a result
        # came. The progress bar keeps its room when hidden for the same reason.
        self.status = WrappedStatusLabel()
        header.addWidget(self.status, 1)
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(200)
        _keep_room_when_hidden(self.progress)
        self.progress.setVisible(False)
        header.addWidget(self.progress)
        self.shown_caption, self.shown = captioned_choice(SHOWN, self._draw_overview)
        self.tile_caption = QLabel()
        self.tile_size = QSpinBox()
        self.tile_size.setRange(4, 256)
        self.tile_size.setValue(DEFAULT_TILE)
        self.tile_caption.setBuddy(self.tile_size)
        self.tile_size.valueChanged.connect(lambda _v: self._request_tile())
        for widget in (self.shown_caption, self.shown, self.tile_caption, self.tile_size):
            header.addWidget(widget)
        layout.addLayout(header)
        # Not a plain wrapped label: one that is height-for-width makes the scroll area holding
        # the view size it by its size hint (the maps' and plots' preferred heights, 970 px)
        # instead of the page, and the plots fell below the fold while a message was shown.
        self.message = WrappedStatusLabel()
        mark_error_label(self.message)
        self.message.setVisible(False)
        layout.addWidget(self.message)

        maps = QSplitter(Qt.Orientation.Horizontal)
        self.overview_map = self.own_map(
            HeatmapWidget(),
            x_label=QT_TRANSLATE_NOOP("LongView", "Keys (first of each bin)"),
            y_label=QT_TRANSLATE_NOOP("LongView", "Queries (first of each bin)"),
        )
        self.overview_map.annotate_limit = 0
        self.overview_map.label_limit = 1 << 30  # bins are labelled by their first index, thinned
        self.overview_map.cellClicked.connect(lambda r, c, _m: self._choose_bin(r, c))
        self.tile_map = self.own_map(
            HeatmapWidget(),
            x_label=QT_TRANSLATE_NOOP("LongView", "Keys"),
            y_label=QT_TRANSLATE_NOOP("LongView", "Queries"),
        )
        self.tile_map.show_masked_values = True
        # A 32 x 32 tile's hatching at 16 pixels a cell (not 32): built and painted in a quarter
        # of the time when each tile comes, still finer than the cells on screen.
        self.tile_map.overlay_pixels = 512
        self.tile_map.cellClicked.connect(lambda r, c, _m: self._choose_tile_cell(r))
        # Labels change with every result (bin starts up to the length; tokens or indices of a
        # tile): room held for the usual widths, so a result is laid out and painted once.
        self.overview_map.hold_label_room(_DIGITS, _DIGITS)
        self.tile_map.hold_label_room("q00000", _DIGITS)  # a tile of a 131k input may need more
        for heatmap in (self.overview_map, self.tile_map):
            heatmap.setMinimumSize(300, 260)
            maps.addWidget(_holder(heatmap))  # a splitter gives a hidden child's room away
        layout.addWidget(maps, 3)

        plots = QGridLayout()
        self.row_plot = self.own_plot(pg.PlotWidget())
        self.sums_plot = self.own_plot(pg.PlotWidget())
        self.entropy_plot = self.own_plot(pg.PlotWidget())
        for col, plot in enumerate((self.row_plot, self.sums_plot, self.entropy_plot)):
            plot.setMinimumHeight(130)
            # A line over every key of a long input (32768 points and more) is drawn from its
            # peaks at the plot's width, and only the part in view: a full line took 15 ms a paint.
            plot.setDownsampling(auto=True, mode="peak")
            plot.setClipToView(True)
            # Ranges set with the data: pyqtgraph's auto range finds them at the next paint and
            # asks for another, and three plots doing so tripled the paints when a result came.
            plot.disableAutoRange()
            plot.setMouseEnabled(x=True, y=False)
            _keep_room_when_hidden(plot)
            plots.addWidget(plot, 0, col)
        self._hold_plot_room()
        self._row_curve = self.row_plot.plot([], [], pen=pg.mkPen((70, 120, 200), width=1.5))
        self._sums_curve = self.sums_plot.plot([], [], pen=pg.mkPen((220, 140, 40), width=1.5))
        self._entropy_curve = self.entropy_plot.plot([], [], pen=pg.mkPen((60, 160, 90), width=1.5))
        layout.addLayout(plots, 1)

        self.overview = self.while_shown(
            self.session.register("long-context overview", self._compute_overview, follows="selection")
        )
        self.overview.on_result(self._on_overview)
        self.overview.busyChanged.connect(self._on_busy)
        for plot_widget in self._plots():  # shown one by one when the view is (on_shown)
            plot_widget.hide()
        self.exact_tile = self.while_shown(self.session.register("exact tile", _tile, follows="selection", auto=False))
        self.exact_tile.on_result(self._on_tile)
        self._progress_timer = QTimer(self)
        self._progress_timer.setInterval(100)
        self._progress_timer.timeout.connect(self._show_progress)
        self.retranslate()

    # ------------------------------------------------------------------ texts and style

    def retranslate(self) -> None:
        self.shown_caption.setText(translate("LongView", "S&how"))
        for index, name in enumerate(SHOWN):
            self.shown.setItemText(index, tr_text(SHOWN[name]))
        self.tile_caption.setText(translate("LongView", "E&xact tile"))
        self.tile_size.setToolTip(
            translate("LongView", "Side of the exact region computed around a clicked bin, in cells")
        )
        self.overview_map.setToolTip(
            translate("LongView", "Every weight of the head, in bins; click a bin for its exact values")
        )
        # Both maps have their titles from the start: a title arriving with the first result
        # would shrink the map under it and make it drawn twice.
        self.overview_map.set_title(tr_text(SHOWN[self.shown.currentData() or "mean"]))
        self.tile_map.set_title(self._tile_title())
        self.set_plot_title(self.row_plot, self._row_title())
        self.set_plot_title(self.sums_plot, translate("LongView", "Attention each key receives"))
        self.set_plot_title(self.entropy_plot, translate("LongView", "Entropy of each query (nats)"))
        self._show_status()

    def _hold_plot_room(self) -> None:
        """The lines' axes keep room for their usual tick labels (see ``hold_tick_room``)."""
        for plot in (self.row_plot, self.sums_plot, self.entropy_plot):
            hold_tick_room(plot.getAxis("left"), "0.0000")
            hold_tick_room(plot.getAxis("bottom"), _DIGITS)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._hold_plot_room()

    # ------------------------------------------------------------------ requests

    def on_selection(self, selection: Selection) -> None:
        """Another head or batch element: its overview is computed again (``overview`` follows
        the selection)."""

    def on_shown(self) -> None:
        # Its five plots laid out and painted at once took 20 ms of one frame when the view
        # opened: hidden while it is (their room kept), they appear one per turn of the event
        # loop once it is shown.
        self._to_reveal = self._plots()
        next_frame(self, self._reveal_next)

    def on_hidden(self) -> None:
        self._to_reveal = []
        for widget in self._plots():
            widget.hide()

    def _plots(self) -> list[QWidget]:
        return [self.tile_map, self.overview_map, self.row_plot, self.sums_plot, self.entropy_plot]

    @property
    def revealing(self) -> bool:
        """Whether some plots are still to appear (one per frame after the view is shown)."""
        return bool(self._to_reveal)

    @property
    def busy(self) -> bool:
        """Whether an overview or a tile is being computed, or plots are still to appear."""
        return self.overview.busy or self.exact_tile.busy or self.revealing

    def _reveal_next(self) -> None:
        if self._to_reveal:
            self._to_reveal.pop(0).show()
            next_frame(self, self._reveal_next)

    def _compute_overview(self, job: Job[None]) -> _Prepared:
        """On the overview's thread: stops between blocks once a newer request (or the end) came."""
        snapshot = job.snapshot
        state, head = snapshot.state, snapshot.state.head_view(snapshot.focus)
        bins = (min(head.n_queries, MAX_BINS), min(head.n_keys, MAX_BINS))
        request = LongRequest(snapshot.version, state, min(job.batch, state.batch - 1), bins, 0, snapshot.focus)
        self._progress = (0, head.n_queries)

        def progress(done: int, total: int) -> None:
            self._progress = (done, total)  # one tuple assignment: read whole by the GUI thread

        result = compute_overview(request, should_stop=job.should_stop, progress=progress)
        # The statistic and frame on show, read here as plain values (as the results panel does);
        # a first overview, or one of another shape, is drawn over the whole plot area.
        shape = None if result.mean is None else result.mean.shape
        frame = None if shape is None else self.overview_map.frame_for(shape)
        return _Prepared(result, _prepare_overview(result, self._shown_name, frame))

    def _on_busy(self, busy: bool) -> None:
        self.progress.setVisible(busy)
        if busy:
            self._progress_timer.start()
        else:
            self._progress_timer.stop()

    def _show_progress(self) -> None:
        done, total = self._progress
        self.progress.setRange(0, max(1, total))
        self.progress.setValue(done)

    def _on_overview(self, done: _Prepared) -> None:
        result = done.result
        if result.cancelled:
            return  # a newer request is on its way
        self.result = result
        self._prepared = done.maps
        self._show_message(result.error)
        self._draw_overview()
        self._show_status()
        # The lines are drawn at later turns of the event loop: the map and each line paint in
        # a frame of their own instead of stalling one frame for all.
        next_frame(self, self._draw_sums_then_entropy)
        if result.error is None:
            # Also a frame later: computed meanwhile, the tile's Python parts took turns with
            # the map's paint for the interpreter's lock (paints of 6 ms took 11).
            next_frame(self, lambda: self._request_tile() if self._tile_asked_for is not result else None)

    def _choose_bin(self, r: int, c: int) -> None:
        result = self.result
        if result is None or result.row_edges is None or result.col_edges is None:
            return
        rows = (int(result.row_edges[r]), int(result.row_edges[r + 1]))
        cols = (int(result.col_edges[c]), int(result.col_edges[c + 1]))
        self._focus_cell = ((rows[0] + rows[1]) // 2, (cols[0] + cols[1]) // 2)
        self._request_tile()

    def _choose_tile_cell(self, r: int) -> None:
        tile = self.tile
        if tile is not None and self._focus_cell is not None:
            self._focus_cell = (tile.request.rows[0] + r, self._focus_cell[1])
            self._request_tile(keep_region=True)

    def _request_tile(self, *, keep_region: bool = False) -> None:
        result = self.result
        state = self._session.document.state
        if result is None or result.overview is None or not self._session.is_current_for(result.version, result.focus):
            return
        head = state.head_view(result.focus)
        n_q, n_k = head.n_queries, head.n_keys
        query, key = self._focus_cell if self._focus_cell is not None else (0, 0)
        query, key = min(query, n_q - 1), min(key, n_k - 1)
        if keep_region and self.tile is not None:
            rows, cols = self.tile.request.rows, self.tile.request.cols
        else:
            side = self.tile_size.value()
            r0 = max(0, min(query - side // 2, n_q - side))
            c0 = max(0, min(key - side // 2, n_k - side))
            rows, cols = (r0, min(n_q, r0 + side)), (c0, min(n_k, c0 + side))
        self._tile_asked_for = result  # a click before the first tile is asked for wins
        self.exact_tile.request(TileRequest(result, state, rows, cols, query))

    def _on_tile(self, tile: TileResult | None) -> None:
        if tile is None or self.result is None or tile.request.result is not self.result:
            return
        self.tile = tile
        if tile.error:
            self._show_message(tile.error)
            return
        self._draw_tile()
        next_frame(self, self._draw_row)  # in a frame of its own, as the lines

    # ------------------------------------------------------------------ drawing

    def _draw_overview(self) -> None:
        result = self.result
        if result is None or result.mean is None or result.row_edges is None or result.col_edges is None:
            self.overview_map.clear()
            return
        name = self._shown_name = self.shown.currentData() or "mean"
        row_edges, col_edges = result.row_edges, result.col_edges
        self.overview_map.set_title(tr_text(SHOWN[name]))
        prepared = self._prepared.get(name)
        if prepared is None:  # another statistic, or preparing failed (then this says why)
            try:
                prepared = self._prepared[name] = _prepare_statistic(result, name)
            except ValueError as exc:
                self.overview_map.clear()
                self._show_message(str(exc))
                return
        self.overview_map.show_prepared(
            prepared,
            row_labels=[str(int(e)) for e in row_edges[:-1]],
            col_labels=[str(int(e)) for e in col_edges[:-1]],
            hover=lambda r, c: self._bin_hover(result, r, c),
        )

    def _bin_hover(self, result: LongResult, r: int, c: int) -> str:
        assert result.row_edges is not None and result.col_edges is not None
        assert result.mean is not None and result.max is not None and result.masked_share is not None
        q0, q1 = int(result.row_edges[r]), int(result.row_edges[r + 1]) - 1
        k0, k1 = int(result.col_edges[c]), int(result.col_edges[c + 1]) - 1
        return "\n".join(
            (
                translate("LongView", "queries {q0}–{q1}, keys {k0}–{k1}").format(q0=q0, q1=q1, k0=k0, k1=k1),
                translate("LongView", "mean weight {value}").format(value=format_number(float(result.mean[r, c]))),
                translate("LongView", "largest weight {value}").format(value=format_number(float(result.max[r, c]))),
                translate("LongView", "masked {share:.0%}").format(share=float(result.masked_share[r, c])),
                translate("LongView", "click for the exact values"),
            )
        )

    def _draw_tile(self) -> None:
        tile, head = self.tile, self._session.head_view()
        if tile is None or tile.weights is None or tile.allowed is None:
            return
        (r0, r1), (c0, c1) = tile.request.rows, tile.request.cols
        b = tile.request.result.batch
        rows = span_labels(head.query_tokens, "q", b, head.n_queries, r0, r1)
        cols = span_labels(head.key_tokens, "k", b, head.n_keys, c0, c1)
        weights = tile.weights
        top = max(float(np.nanmax(weights)) if np.isfinite(weights).any() else 0.0, 1e-12)
        self.tile_map.value_format = ".2f" if top >= 0.05 else ".2g"
        self.tile_map.set_title(self._tile_title())
        allowed = tile.allowed
        self.tile_map.set_data(
            weights,
            mask=allowed,
            levels=(0.0, top),
            row_labels=rows,
            col_labels=cols,
            hover=lambda r, c: self._tile_hover(tile, b, r0 + r, c0 + c, weights[r, c], bool(allowed[r, c])),
        )

    def _draw_row(self) -> None:
        """The clicked query's weights over every key, from the tile on show."""
        tile = self.tile
        if tile is None or tile.row is None or tile.weights is None:
            return
        self._row_curve.setData(np.arange(tile.row.shape[0]), tile.row)
        _fit(self.row_plot, tile.row)
        self.set_plot_title(self.row_plot, self._row_title())

    def _row_title(self) -> str:
        tile = self.tile
        if tile is None or tile.row is None:
            return translate("LongView", "Weights of the chosen query, every key")
        query = tile.request.query
        token = token_of(self._session.head_view().query_tokens, tile.request.result.batch, query)
        return _with_token(translate("LongView", "Weights of query {q} {token}, every key"), query, token)

    def _tile_title(self) -> str:
        tile = self.tile
        if tile is None or tile.weights is None:
            return translate("LongView", "Exact values: click a bin")
        (r0, r1), (c0, c1) = tile.request.rows, tile.request.cols
        return translate("LongView", "Exact: queries {q0}–{q1}, keys {k0}–{k1}").format(
            q0=r0, q1=r1 - 1, k0=c0, k1=c1 - 1
        )

    def _tile_hover(self, tile: TileResult, b: int, r: int, c: int, weight: float, allowed: bool) -> str:
        head = self._session.head_view()
        q_tok, k_tok = token_of(head.query_tokens, b, r), token_of(head.key_tokens, b, c)
        where = translate("LongView", "query {r}, key {c}").format(r=r, c=c)
        if q_tok is not None or k_tok is not None:
            where += f"\n{q_tok!r} → {k_tok!r}"
        text = f"{where}\n" + translate("LongView", "weight {value}").format(value=format_number(float(weight)))
        return text + ("" if allowed else "  " + translate("LongView", "(masked)"))

    def _draw_sums_then_entropy(self) -> None:
        self._draw_lines(entropy=False)
        next_frame(self, lambda: self._draw_lines(sums=False))  # chained: never both in one turn

    def _draw_lines(self, *, sums: bool = True, entropy: bool = True) -> None:
        """The attention each key receives and the entropy of each query, of the overview."""
        result = self.result
        if result is None or result.column_sums is None or result.entropy is None:
            for curve in (self._sums_curve, self._entropy_curve, self._row_curve):
                curve.setData([], [])
            return
        if sums:
            self._sums_curve.setData(np.arange(result.column_sums.shape[0]), result.column_sums)
            _fit(self.sums_plot, result.column_sums)
        if entropy:
            self._entropy_curve.setData(np.arange(result.entropy.shape[0]), result.entropy)
            _fit(self.entropy_plot, result.entropy)

    def _show_status(self) -> None:
        result, head = self.result, self._session.head_view()
        if result is None or result.mean is None:
            self.status.setText(
                translate("LongView", "{q} queries x {k} keys: computing the overview…").format(
                    q=head.n_queries, k=head.n_keys
                )
            )
            return
        self.status.setText(
            translate(
                "LongView",
                "{q} x {k}, batch {b}: {bins_r} x {bins_c} bins in {seconds:.2f} s, {share:.0%} of the "
                "cells computed (the rest are masked blocks)",
            ).format(
                q=head.n_queries,
                k=head.n_keys,
                b=result.batch,
                bins_r=result.mean.shape[0],
                bins_c=result.mean.shape[1],
                seconds=result.seconds,
                share=result.computed_share,
            )
        )

    def _show_message(self, text: str | None) -> None:
        self.message.setVisible(bool(text))
        if text:
            self.message.setText("⚠ " + text)


def install_long_context_view(session: AppSession, host: Host) -> ToolPanel:
    """Add the long-context view as a hidden tab; View > Long context (Ctrl+Shift+G) shows it."""
    return host.add_dock(DOCKS[LONG_DOCK], lambda: LongContextView(session))
