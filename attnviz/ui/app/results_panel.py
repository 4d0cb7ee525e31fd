"""What the computation gave: attention-weight heatmaps per batch element, and the output.

``ResultsPanel`` is a ``SessionView``: it follows the session's outcome, batch element, colour
map and range and presentation mode itself, and outlines the query rows a view asks to look at
(``AppSession.outline_rows``); a click on a cell picks its query (``AppSession.select_query``).
Big maps are prepared off the GUI thread, by a computation of the panel run with the main one.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from functools import partial

import numpy as np
from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from attnviz.compute.attention import Outcome, ViewData
from attnviz.compute.axes import axis_labels, token_of
from attnviz.compute.jobs import Job
from attnviz.teaching.lessons import LESSONS
from attnviz.teaching.presets import PRESETS
from attnviz.text.tr import QT_TRANSLATE_NOOP
from attnviz.ui.app.output_panel import OutputPanel
from attnviz.ui.app.session import COLOR_RANGES, AppSession, Selection
from attnviz.ui.app.view_base import SessionView, bold_label, message_label, scrolled_grid
from attnviz.ui.flow_layout import flow_widget
from attnviz.ui.heatmap.colormaps import COLORMAPS
from attnviz.ui.heatmap.paint import format_number
from attnviz.ui.heatmap.prepare import PYRAMID_MIN_CELLS, Frame, PreparedMap, prepare_map
from attnviz.ui.heatmap.scan import positive_values
from attnviz.ui.heatmap.weights import shown_mask
from attnviz.ui.heatmap.widget import HeatmapWidget
from attnviz.ui.i18n import tr_text, translate


def example_caption(name: str | None) -> tuple[str, str]:
    """The title and the full description of the preset or lesson ``name`` in the current
    language (empty texts for None: a file's or a script's inputs)."""
    lesson = LESSONS.get(name or "")
    preset = lesson.preset if lesson is not None else PRESETS.get(name or "")
    if preset is None:
        return "", ""
    return tr_text(preset.title), tr_text(preset.description)


#: Up to this many batch elements are shown side by side; beyond, only the selected one.
MAX_GRID = 4


def cell_place(view: ViewData, b: int, r: int, c: int) -> str:
    """Where a cell is: batch, query and key, with their tokens when there are tokens."""
    where = translate("ResultsPanel", "batch {b}, query {r}, key {c}").format(b=b, r=r, c=c)
    q_token, k_token = token_of(view.query_tokens, b, r), token_of(view.key_tokens, b, c)
    if q_token is not None or k_token is not None:
        where += "\n" + translate("ResultsPanel", "{query} → {key}").format(
            query=repr(q_token) if q_token is not None else f"q{r}",
            key=repr(k_token) if k_token is not None else f"k{c}",
        )
    return where


def hover_text(view: ViewData, b: int, r: int, c: int) -> str:
    """The tooltip of one cell: where it is and every number that led to its weight."""
    allowed = bool(view.mask[b, r, c])
    lines = [
        cell_place(view, b, r, c) + ("" if allowed else "  " + translate("ResultsPanel", "(masked)")),
        translate("ResultsPanel", "raw score {value}").format(value=format_number(float(view.raw_scores[b, r, c]))),
        translate("ResultsPanel", "masked score {value}").format(
            value=format_number(float(view.masked_scores[b, r, c]))
        ),
        translate("ResultsPanel", "weight {value}").format(value=format_number(float(view.weights[b, r, c]))),
    ]
    if view.applied_weights is not view.weights and not np.shares_memory(view.applied_weights, view.weights):
        lines.append(
            translate("ResultsPanel", "after dropout {value}").format(
                value=format_number(float(view.applied_weights[b, r, c]))
            )
        )
    if view.empty_rows[b, r]:
        lines.append(translate("ResultsPanel", "this query has no valid key"))
    if view.padded_rows is not None and view.padded_rows[b, r]:
        lines.append(translate("ResultsPanel", "a padding query: the model computes this row, nothing reads it"))
    return "\n".join(lines)


#: The colour ranges as the scale box names them.
COLOR_RANGE_LABELS = {
    "batch": QT_TRANSLATE_NOOP("ResultsPanel", "Auto, shared"),
    "map": QT_TRANSLATE_NOOP("ResultsPanel", "Auto, per map"),
    "unit": QT_TRANSLATE_NOOP("ResultsPanel", "0 – 1"),
    "log": QT_TRANSLATE_NOOP("ResultsPanel", "Logarithmic"),
}
#: The weights maps' axes.
_KEYS = QT_TRANSLATE_NOOP("ResultsPanel", "Keys")
_QUERIES = QT_TRANSLATE_NOOP("ResultsPanel", "Queries")
#: Height of one weights map: about this many pixels per query row, within these bounds.
_ROW_PX = 4
_MIN_MAP_HEIGHT = 150
_MAX_MAP_HEIGHT = 700


#: Past this many weights, the top of an automatic scale is a high percentile, not the maximum.
_ROBUST_FROM = 1000
_TOP_PERCENTILE = 99.5
#: Percentiles are taken on a strided sample of at most this many weights (a 4096x4096 map
#: would cost the GUI thread ~0.2 s otherwise; the sample's percentile differs by a hair).
_SAMPLE = 1 << 16


def _top_of(strided: np.ndarray, count: int) -> float:
    """The top of an automatic colour scale: the maximum of few weights, else a high percentile,
    so that one large weight does not paint every other weight the colour of zero (it shows in
    the top colour, and its hover text has its value). ``strided``: every ``count // _SAMPLE``-th
    of the ``count`` weights (all of them when there are few: ``heatmap.scan.positive_values``)."""
    if count <= _ROBUST_FROM:
        return float(strided.max(initial=0.0))
    return float(np.percentile(strided, _TOP_PERCENTILE))


def _pair(caption: QLabel, field: QWidget) -> QWidget:
    """A caption and its field kept together when a row wraps."""
    pair = QWidget()
    row = QHBoxLayout(pair)
    row.setContentsMargins(0, 0, 0, 0)
    row.addWidget(caption)
    row.addWidget(field)
    return pair


def weight_levels(weights: np.ndarray, mask: np.ndarray, color_range: str) -> tuple[float, float]:
    """The colour scale of attention weights under ``color_range`` (see ``COLOR_RANGES``), from
    the finite positive weights of the cells shown (a masked cell that leaks weight counts too)."""
    if color_range == "unit":
        return (0.0, 1.0)
    # A block of rows at a time: the filtered copy of every weight was the window's peak on a
    # heads grid of long heads (``heatmap.scan``).
    positive = positive_values(weights, _SAMPLE)
    top = _top_of(positive.strided, positive.total) if positive.total else 0.0
    if not top > 0:
        return (0.0, 1.0)  # nothing to scale to (every weight 0, NaN, or an empty result)
    if color_range != "log":
        return (0.0, top)
    # Six decades at most below the top: a lone 1e-30 would flatten everything else.
    low = max(positive.least, top * 1e-6)
    return (low, top) if low < top else (top / 10.0, top)


# ---------------------------------------------------------------- big maps, prepared off the GUI thread


@dataclass(frozen=True, eq=False)
class PreparedWeights:
    """The weights maps of a result as ``ResultsPanel`` draws them under a scale and a batch
    selection, made ready to draw (``prepare_weights``)."""

    color_range: str
    batches: tuple[int, ...]
    maps: tuple[PreparedMap, ...]
    labels: tuple[tuple[list[str] | None, list[str] | None], ...]  # axis_labels of each map
    view: ViewData  # the result they are pictures of


def batches_on_show(n_batch: int, batch: int) -> tuple[int, ...]:
    """The batch elements the maps show: all up to MAX_GRID, else the selected one."""
    return tuple(range(n_batch)) if n_batch <= MAX_GRID else (min(batch, n_batch - 1),)


def prepare_weights(
    view: ViewData, color_range: str, batch: int, frames: tuple[Frame | None, ...] = ()
) -> PreparedWeights | None:
    """Every pass over the cells that drawing ``view``'s weights maps needs (colour levels,
    masks, pictures: ``prepare_map``), for maps big enough to need it; None for smaller ones,
    which the GUI thread draws as they come. ``frames``: what each map has on screen, to have
    its picture made too. Qt-free: runs on the compute thread."""
    n_batch, n_q, n_k = view.weights.shape
    if n_q * n_k < PYRAMID_MIN_CELLS:
        return None
    shown = batches_on_show(n_batch, batch)
    rows = slice(shown[0], shown[-1] + 1)  # consecutive: a view, not a copy of every map
    shared = weight_levels(view.weights[rows], view.mask[rows], color_range)
    maps, labels = [], []
    for i, b in enumerate(shown):
        levels = shared if color_range != "map" else weight_levels(view.weights[b], view.mask[b], "map")
        maps.append(
            prepare_map(
                view.weights[b],
                mask=shown_mask(view, b),
                empty_rows=view.empty_rows[b],
                levels=levels,
                log=color_range == "log",
                show_masked_values=True,
                pyramid=True,
                frame=frames[i] if i < len(frames) else None,
            )
        )
        labels.append(axis_labels(view.query_tokens, view.key_tokens, b, n_q, n_k))
    return PreparedWeights(color_range, shown, tuple(maps), tuple(labels), view)


@dataclass(frozen=True)
class PictureParams:
    """What the weights maps are prepared for: a colour range and the batch element selected."""

    color_range: str
    batch: int


class ResultsPanel(SessionView):
    """Attention-weight heatmaps, one per batch element (the selected one when there are many),
    and the output beside the tables (``output``), of the session's current outcome.

    ``pictures`` is the computation that prepares big maps off the GUI thread: with every main
    result (for the scale and batch element on show), and alone for another scale or batch.
    """

    def __init__(self, session: AppSession, output: OutputPanel | None = None, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self.output = output or OutputPanel()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.title = bold_label()
        self.colormap = QComboBox()
        for name in COLORMAPS:
            self.colormap.addItem(name, name)
        self.colormap.setCurrentIndex(COLORMAPS.index(session.colormap))
        self.colormap.currentIndexChanged.connect(lambda _i: session.set_colormap(self.colormap.currentData()))
        self.cmap_caption = QLabel()
        self.cmap_caption.setBuddy(self.colormap)
        self.color_range = QComboBox()
        for name in COLOR_RANGES:
            self.color_range.addItem("", name)
        self.color_range.setCurrentIndex(COLOR_RANGES.index(session.color_range))
        self.color_range.currentIndexChanged.connect(lambda _i: session.set_color_range(self.color_range.currentData()))
        self.range_caption = QLabel()
        self.range_caption.setBuddy(self.color_range)
        # The title left, the scale and colour map right; on a narrow window they wrap under it.
        header = QHBoxLayout()
        header.addWidget(self.title, 0, Qt.AlignmentFlag.AlignTop)
        header.addStretch(1)
        self.pickers = flow_widget(_pair(self.range_caption, self.color_range), _pair(self.cmap_caption, self.colormap))
        header.addWidget(self.pickers, 0)
        layout.addLayout(header)
        # Which example is on show, in full, where the eye is (a status bar cut it mid-word).
        self.example = QLabel()
        self.example.setObjectName("exampleCaption")
        self.example.setWordWrap(True)
        self.example.setTextFormat(Qt.TextFormat.RichText)
        layout.addWidget(self.example)
        session.exampleChanged.connect(lambda _name: self._show_example())
        # An edit makes the description's numbers stale: the caption says it was edited instead.
        session.exampleEdited.connect(lambda _edited: self._show_example())

        self.warnings = message_label(warning=True)
        layout.addWidget(self.warnings)
        self.maps_scroll, self.grid_host, self.grid = scrolled_grid()
        layout.addWidget(self.maps_scroll, 1)

        self.maps: list[HeatmapWidget] = []
        self.own_map(self.output.heatmap)
        self.output.own_map = self.own_map  # the maps of the other batch elements' outputs too
        self._prepared: PreparedWeights | None = None  # the big maps on show
        self._pictures: PreparedWeights | None = None  # the latest prepared, maybe not drawn yet
        self._view: ViewData | None = None
        self._batch = session.selection.batch
        self._range = session.color_range
        #: Query rows to outline, and the batch element they are of (``AppSession.outline_rows``).
        self._outlined: tuple[int, tuple[int, ...]] = (0, ())
        self.pictures = self.while_shown(
            self.session.register(
                "weights pictures",
                self._prepare_pictures,
                thread="main",
                params=PictureParams(self._range, self._batch),
            )
        )
        self.pictures.on_result(self._on_pictures)
        self.pictures.on_failure(lambda _error: self._draw_unprepared())
        self.retranslate()

    def retranslate(self) -> None:
        self.title.setText(translate("ResultsPanel", "Attention weights"))
        self.title.setToolTip(translate("ResultsPanel", "softmax of the masked scores; keys across, queries down"))
        self.colormap.setToolTip(
            translate(
                "ResultsPanel", "Colour map of the heatmaps (cividis: perceptually uniform and colour-blind safe)"
            )
        )
        self.cmap_caption.setText(translate("ResultsPanel", "C&olour map"))
        self.range_caption.setText(translate("ResultsPanel", "Sc&ale"))
        for index, name in enumerate(COLOR_RANGES):
            self.color_range.setItemText(index, tr_text(COLOR_RANGE_LABELS[name]))
        self.color_range.setToolTip(
            translate(
                "ResultsPanel",
                "What the colours span. Auto: from 0 to the largest weights of the batch (shared, so "
                "maps compare) or of each map; past a thousand weights, to the 99.5th percentile, so "
                "that one large weight does not darken all the others. Or 0 to 1, or a logarithmic "
                "scale for weights spread over many keys.",
            )
        )
        self.warnings.setToolTip(translate("ResultsPanel", "What the diagnostics found in the last result"))
        self.maps_scroll.setToolTip(
            translate("ResultsPanel", "One heatmap per batch element; hover a cell for its numbers")
        )
        self._show_example()
        if self._view is not None:
            self._show_texts(self._view)

    def _show_example(self) -> None:
        title, description = example_caption(self.session.loaded_example())
        if title and self.session.example_edited():
            description = translate("ResultsPanel", "edited since it was loaded (Ctrl+Z goes back to it)")
        self.example.setText(f"<b>{html.escape(title)}</b> — {html.escape(description)}" if title else "")
        self.example.setToolTip(translate("ResultsPanel", "The example on show (Presets menu)") if title else "")
        # On a slide a lesson's panel beside the maps says the same (its title, its question and
        # this description): the caption's lines went to the maps (capitals of 20 px).
        lesson_beside = self.session.presenting and self.session.loaded_example() in LESSONS
        self.example.setVisible(bool(title) and not lesson_beside)

    @property
    def has_view(self) -> bool:
        """Whether a result is on show (an error keeps the last good one)."""
        return self._view is not None

    @property
    def prepared_pictures(self) -> PreparedWeights | None:
        """The pictures of big maps on show, made off the GUI thread (None: drawn here)."""
        return self._prepared

    # ------------------------------------------------------------------ following the session

    def on_outcome(self, outcome: Outcome) -> None:
        if outcome.view is not None:  # an error keeps the last good picture
            self._view = outcome.view
            self._batch = min(self.session.selection.batch, outcome.view.weights.shape[0] - 1)
            self.request_draw()

    def on_selection(self, selection: Selection) -> None:
        view = self._view
        if view is not None and selection.batch < view.weights.shape[0] and selection.batch != self._batch:
            self._batch = selection.batch
            self.request_draw()

    def on_color_range(self, name: str) -> None:
        self._range = name
        index = self.color_range.findData(name)
        if index >= 0 and index != self.color_range.currentIndex():
            with QSignalBlocker(self.color_range):
                self.color_range.setCurrentIndex(index)
        self.request_draw()

    def on_colormap(self, name: str) -> None:
        index = self.colormap.findData(name)
        if index >= 0 and index != self.colormap.currentIndex():
            with QSignalBlocker(self.colormap):
                self.colormap.setCurrentIndex(index)

    def on_presentation(self, on: bool) -> None:
        self.pickers.setVisible(not on)  # the scale and colour map are chosen beforehand
        self._show_example()

    def on_rows_outlined(self, rows: tuple[int, ...]) -> None:
        self._outlined = (self.session.selection.batch, rows)
        self._outline()

    def _outline(self) -> None:
        batch, rows = self._outlined
        for heatmap, b in zip(self.maps, self.shown_batches()):
            heatmap.set_highlight_rows(rows if b == batch else ())

    def _pick_query(self, row: int, modifiers: Qt.KeyboardModifier | None) -> None:
        add = modifiers is not None and bool(modifiers & Qt.KeyboardModifier.ShiftModifier)
        self.session.select_query(row, add)

    # ------------------------------------------------------------------ drawing

    def draw(self) -> None:
        if self._view is not None:
            self.show_view(self._view, self._batch)

    def _ensure_maps(self, count: int) -> None:
        while len(self.maps) < count:
            heatmap = HeatmapWidget()
            heatmap.show_masked_values = True  # padding that gets weight must show its colour
            heatmap.setMinimumWidth(260)  # a 1024-pixel screen has room for the controls, this and a lesson
            heatmap.cellClicked.connect(lambda r, _c, mods: self._pick_query(r, mods))
            self.own_map(heatmap, x_label=_KEYS, y_label=_QUERIES)
            self.maps.append(heatmap)
        while len(self.maps) > count:
            heatmap = self.maps.pop()
            self.grid.removeWidget(heatmap)
            self.release_map(heatmap)
        for i, heatmap in enumerate(self.maps):
            self.grid.addWidget(heatmap, i // 2 if count > 2 else i, i % 2 if count > 2 else 0)

    def shown_batches(self) -> list[int]:
        """The batch elements the maps show, in order."""
        return [] if self._view is None else self._shown_batches(self._view, self._batch)

    def _shown_batches(self, view: ViewData, batch: int) -> list[int]:
        return list(batches_on_show(view.weights.shape[0], batch))

    def show_view(self, view: ViewData, batch: int) -> None:
        """Draw ``view``'s weights for batch element ``batch`` (and its output), big maps from
        pictures prepared off the GUI thread (asked for when there are none yet)."""
        self._view = view
        self._batch = batch
        shown = self._shown_batches(view, batch)
        n_q, n_k = view.weights.shape[1:]
        self.output.show_outputs(
            [(b, view.output[b], axis_labels(view.query_tokens, None, b, n_q, 0)[0]) for b in shown],
            batch,
            view.weights.shape[0],
        )
        prepared = self._prepared_for(view, shown)
        if prepared is None and n_q * n_k >= PYRAMID_MIN_CELLS:
            # Big maps for another scale or batch than the compute thread prepared: prepared
            # there now; the maps keep their pictures until then (``_on_pictures``).
            self.pictures.request(PictureParams(self._range, batch))
            return
        self._draw_maps(view, shown, prepared)

    def _prepare_pictures(self, job: Job[PictureParams]) -> PreparedWeights | None:
        """On the main compute thread, after the main computation: the pictures of the weights
        maps (reading what each map has on screen as plain values)."""
        main = job.main
        if main is None or main.view is None:
            return None
        view, params = main.view, job.params
        return prepare_weights(view, params.color_range, params.batch, self._frames(view.weights.shape[1:]))

    def _frames(self, shape: tuple[int, int]) -> tuple[Frame | None, ...]:
        """What each map will have on screen for maps of ``shape`` (read on the compute thread
        too: plain values); a new shape's first pictures are then made there as well."""
        return tuple(heatmap.frame_for(shape) for heatmap in list(self.maps))

    def _prepared_for(self, view: ViewData, shown: list[int]) -> PreparedWeights | None:
        """The latest pictures if they are of the maps to show now (same result, scale and batch
        elements)."""
        prepared = self._pictures
        if (
            prepared is not None
            and prepared.view is view
            and prepared.color_range == self._range
            and list(prepared.batches) == shown
        ):
            return prepared
        return None

    def _on_pictures(self, prepared: PreparedWeights | None) -> None:
        if prepared is None:
            return  # maps small enough to draw here
        old, self._pictures = self._pictures, prepared
        if old is not None and old is not self._prepared:
            self.session.release_later(old)  # never drawn; tens of MiB a map
        view = self._view
        if view is not None and self.isVisible():
            shown = self._shown_batches(view, self._batch)
            if self._prepared_for(view, shown) is prepared and self._prepared is not prepared:
                self._draw_maps(view, shown, prepared)
        # else: pictures of a result about to be shown (drawn with it) or of one shown no more

    def _draw_unprepared(self) -> None:
        """Preparing failed (it is logged): drawn here, the slow way."""
        view = self._view
        if view is not None:
            self._draw_maps(view, self._shown_batches(view, self._batch), None)

    def _draw_maps(self, view: ViewData, shown: list[int], prepared: PreparedWeights | None) -> None:
        previous, self._prepared = self._prepared, prepared
        self._ensure_maps(len(shown))
        n_q, n_k = view.weights.shape[1:]
        shared = None if prepared is not None else weight_levels(view.weights[shown], view.mask[shown], self._range)
        for i, (heatmap, b) in enumerate(zip(self.maps, shown)):
            if prepared is not None:
                rows, cols = prepared.labels[i]
                levels = prepared.maps[i].levels
            else:
                rows, cols = axis_labels(view.query_tokens, view.key_tokens, b, n_q, n_k)
                assert shared is not None
                levels = shared if self._range != "map" else weight_levels(view.weights[b], view.mask[b], "map")
            # Two decimals for weights of a few keys; significant digits for weights of many.
            heatmap.value_format = ".2f" if levels[1] >= 0.05 else ".2g"
            # Every query row keeps a few pixels: 64 rows squeezed into 110 pixels read as a
            # smear; the maps scroll instead.
            heatmap.setMinimumHeight(int(min(_MAX_MAP_HEIGHT, max(_MIN_MAP_HEIGHT, 70 + _ROW_PX * n_q))))
            hover = partial(hover_text, view, b)
            if prepared is not None:
                heatmap.show_prepared(prepared.maps[i], hover=hover, row_labels=rows, col_labels=cols)
            else:
                heatmap.set_data(
                    view.weights[b],
                    mask=shown_mask(view, b),
                    empty_rows=view.empty_rows[b],
                    levels=levels,
                    hover=hover,
                    row_labels=rows,
                    col_labels=cols,
                    log=self._range == "log",
                )
        self._show_texts(view)
        self._outline()
        if previous is not None and previous is not prepared and previous is not self._pictures:
            # Its pyramids (tens of MiB a map) are freed off this thread, after the paint.
            self.session.release_later(previous)

    def _show_texts(self, view: ViewData) -> None:
        n_batch = view.weights.shape[0]
        shown = self._shown_batches(view, self._batch)
        for heatmap, b in zip(self.maps, shown):
            heatmap.set_title(
                translate("ResultsPanel", "batch {b} of {n}").format(b=b, n=n_batch)
                if len(shown) < n_batch
                else translate("ResultsPanel", "batch {b}").format(b=b)
            )
        self.warnings.setText("\n".join(f"⚠ {tr_text(w)}" for w in view.warnings))
        self.warnings.setVisible(bool(view.warnings))
