"""A labelled matrix heatmap for attention weights and scores.

Layout follows pyqtgraph's ``examples/MatrixDisplayExample.py``: one PlotItem holding an
ImageItem, with a ColorBarItem inserted on its right.  Conventions:

* Keys run across (x), queries run down (y, inverted so query 0 is the top row).
* Cell ``(r, c)`` covers ``[c, c + 1) x [r, r + 1)`` in view coordinates, so ticks sit at
  ``i + 0.5`` (the centre of the cell) and hover maps with a plain ``floor``.
* The ImageItem is created with ``axisOrder='row-major'`` so ``image[r, c]`` is query r, key c.
  pyqtgraph's default (column-major) would silently transpose the matrix.

Values that are not on the colour scale (masked cells, NaN, +/-inf) are painted by a second,
RGBA ImageItem on top of the data, built with numpy (``paint.py``) so that a 4096x4096 matrix
costs a couple of array operations rather than millions of graphics items.  This module only
keeps the state and hands what ``paint`` computes to the items; hover text and fonts live here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtCore import Signal

from attnviz.ui.heatmap import paint
from attnviz.ui.heatmap.cell_text import CellText, CellTextLayer
from attnviz.ui.heatmap.colormaps import (
    COLORMAPS,
    DEFAULT_COLORMAP,
    canonical_colormap_name,
    load_colormap,
    lookup_table,
)
from attnviz.ui.heatmap.items import CellAxisItem, FastImageItem, RegionImageItem, hold_tick_room
from attnviz.ui.heatmap.paint import WEIGHT_LEVELS, Levels
from attnviz.ui.heatmap.prepare import Frame, Picture, PreparedMap, picture, prepare_map, same_view
from attnviz.ui.i18n import translate
from attnviz.ui.theme import PlotColors, plot_colors

__all__ = ["COLORMAPS", "HeatmapWidget", "HoverFn"]

HoverFn = Callable[[int, int], str]

# Tick labels longer than this are elided so one long token cannot eat the plot's width;
# the full label is still shown in the hover text.
_MAX_TICK_LABEL_CHARS = 14
# How many empty rows to spell out in a tooltip before summarising.
_MAX_LISTED_EMPTY_ROWS = 24
# In big matrices a cell is smaller than a screen pixel, and downsampling averages a lone NaN
# (or an empty row) away.  Above this side length, NaN/inf cells and empty rows also get a
# fixed-size on-screen marker so they can be found (paint.locator_points).
_LOCATOR_MIN_SIDE = 128
_LOCATOR_PX = 6


def _elide(label: str) -> str:
    return label if len(label) <= _MAX_TICK_LABEL_CHARS else label[: _MAX_TICK_LABEL_CHARS - 1] + "…"


#: How much presentation mode (F5) enlarges the text of every heatmap and plot.
PRESENTATION_SCALE = 1.8


class _GraphicsView(pg.GraphicsLayoutWidget):
    """The plot's view; with ``zoom_on_wheel`` off the wheel scrolls whatever holds the heatmap
    (a grid of small maps in a scroll area) instead of zooming into the map under the mouse."""

    zoom_on_wheel = True

    def wheelEvent(self, event: QtGui.QWheelEvent) -> None:  # noqa: N802 - Qt's name
        if self.zoom_on_wheel:
            super().wheelEvent(event)
        else:
            event.ignore()


class HeatmapWidget(QtWidgets.QWidget):
    """Attention-matrix heatmap: queries down, keys across, with colour bar and annotations.

    Signals:
        cellHovered(int, int): (row, col) of the cell under the mouse, emitted when it changes.
        cellClicked(int, int, object): (row, col, Qt keyboard modifiers) of a cell clicked.
        clicked(): the map was clicked anywhere (a small multiple chosen by a click, say).

    Public attributes (plain, settable before the next ``set_data``):
        annotate_limit: print each cell's value when rows <= limit and cols <= limit (16).
        label_limit: label every row/col when there are at most this many (32); beyond that the
            axis picks integer ticks itself.
        value_format: format spec for annotations (e.g. ".3f"); None picks 2 decimals when the
            levels are (0, 1) (weights) and 3 significant digits otherwise (scores).
    """

    cellHovered = Signal(int, int)
    cellClicked = Signal(int, int, object)
    clicked = Signal()

    def __init__(
        self,
        parent: QtWidgets.QWidget | None = None,
        *,
        title: str = "",
        x_label: str | None = None,
        y_label: str | None = None,
        colormap: str = DEFAULT_COLORMAP,
    ) -> None:
        """``x_label`` and ``y_label`` default to "Keys" and "Queries" in the current language."""
        super().__init__(parent)
        # Default axis names follow the language; names the owner gives are the owner's to
        # translate again (it sets them in its own retranslate).
        self._default_labels = (x_label is None, y_label is None)
        if x_label is None:
            x_label = translate("Heatmap", "Keys")
        if y_label is None:
            y_label = translate("Heatmap", "Queries")
        self.annotate_limit: int = 16
        #: Masked cells whose value is not zero keep their colour under light stripes instead of
        #: the opaque grey: for weights, "masked but given weight" (the book's uniform rows over
        #: padding, a 1/0 float mask) must be visible, not hidden by the mask drawing.
        self.show_masked_values: bool = False
        self.label_limit: int = 32
        #: About how many pixels a side the hatching of masked cells is drawn with (fewer: faster
        #: to build and to paint, coarser stripes when zoomed in).
        self.overlay_pixels: int = paint.OVERLAY_TARGET_PX
        self.value_format: str | None = None

        # --- data state (all replaced together by set_data so nothing can go stale) ---
        self._values: np.ndarray | None = None
        self._mask: np.ndarray | None = None  # True = may attend; None = everything allowed
        self._empty_rows: np.ndarray | None = None  # bool per row
        self._levels: Levels = WEIGHT_LEVELS
        self._hover_fn: HoverFn | None = None
        self._row_labels: list[str] | None = None
        self._col_labels: list[str] | None = None
        self._overlay_scale: int = 1
        self._cells: paint.SpecialCells | None = None  # NaN / inf / masked cells of _values (drawn whole)
        self._prepared: PreparedMap | None = None  # what is on show; with a pyramid, drawn a screen at a time
        self._picture: tuple[PreparedMap, Frame, Picture] | None = None  # the last frame's images
        self._last_frame: Frame | None = None
        # The device pixels the whole plot area covers, kept as plain values at every resize so a
        # compute thread can prepare the picture of a matrix not shown yet (``frame_for``).
        self._area_px: tuple[int, int] | None = None
        self._label_room: tuple[str, str] | None = None  # see hold_label_room
        # What the overlay and the empty-row bar were last built from (None: nothing shown).
        self._overlay_code: np.ndarray | None = None
        self._overlay_tint = False  # the overlay is drawn as a flat tint (cells too small for stripes)
        self._log = False  # logarithmic colour scale
        self._constant: float | None = None  # the value of a flat map (its colour bar says so)
        self._empty_key: tuple[int, bytes] | None = None
        self._shown_shape: tuple[int, ...] | None = None
        self._hover_cell: tuple[int, int] | None = None
        self._hover_text: str = ""

        # --- presentation state ---
        self._title = title
        self._x_label = x_label
        self._y_label = y_label
        self._font_scale = 1.0
        base = QtWidgets.QApplication.font().pointSizeF()
        self._base_pt = base if base > 0 else 9.0
        self._colormap_name = canonical_colormap_name(colormap)

        # --- graphics ---
        self._view = _GraphicsView()
        self._plot_colors = plot_colors()
        self._view.setBackground(self._plot_colors.background)
        self._plot: pg.PlotItem = self._view.addPlot(
            axisItems={"left": CellAxisItem("left"), "bottom": CellAxisItem("bottom")}
        )
        self._vb: pg.ViewBox = self._plot.getViewBox()
        self._plot.invertY(True)  # query 0 on top, as attention matrices are written
        # Aspect stays unlocked: a 2x10 or 8x512 matrix must fill the widget, not become a sliver.
        self._vb.setAspectLocked(False)
        self._plot.setDefaultPadding(0.0)
        self._plot.hideButtons()  # the "A" autorange button would zoom to odd ranges
        self._vb.disableAutoRange()
        # Stripes turn into a flat tint when the cells become too small for them (and back).
        self._vb.sigResized.connect(lambda *_: self._on_view_resized())
        self._vb.sigRangeChanged.connect(lambda *_: self._on_view_resized())
        self._vb.setMenuEnabled(False)  # its items (export, log axes...) do not apply here
        # A frame on all four sides, values on left and bottom only.
        self._plot.showAxes(True, showValues=(True, False, False, True))
        for side in ("top", "right"):
            self._plot.getAxis(side).setTicks([[], []])

        # A big prepared matrix is drawn a screen at a time (RegionImageItem.set_source).
        self._image = RegionImageItem(axisOrder="row-major")
        self._image.setAutoDownsample(True)
        self._plot.addItem(self._image)

        # Masked / NaN / inf cells.  Above the data, below annotations.
        self._overlay = RegionImageItem(axisOrder="row-major")
        # No auto-downsampling of the RGBA overlay: pyqtgraph would average it as floats on every
        # paint (400 ms at 4096x4096); it is already built near screen resolution.
        self._overlay.setAutoDownsample(False)
        self._overlay.setZValue(10)
        self._overlay.setVisible(False)
        self._plot.addItem(self._overlay, ignoreBounds=True)

        # Red bar along the left edge of rows with no valid key.  Drawn inside column 0: in such
        # a row every cell is masked, so it covers nothing informative and keeps the view range
        # equal to the data range.
        self._empty_marker = FastImageItem(axisOrder="row-major")
        self._empty_marker.setZValue(15)
        self._empty_marker.setVisible(False)
        self._plot.addItem(self._empty_marker, ignoreBounds=True)

        # Fixed-pixel-size markers for NaN/inf cells and empty rows of big matrices.
        self._locator = pg.ScatterPlotItem(pxMode=True, size=_LOCATOR_PX, pen=None, symbol="s")
        self._locator.setZValue(16)
        self._plot.addItem(self._locator, ignoreBounds=True)

        # Each cell's value printed inside it (small matrices): one item draws them all.
        self._cell_text = CellTextLayer(
            QtGui.QColor(*paint.DARK_TEXT), QtGui.QColor(*paint.LIGHT_TEXT), QtGui.QColor(*paint.MASK_COLOR)
        )
        self._cell_text.setZValue(20)  # above data, overlay and empty-row marker
        self._plot.addItem(self._cell_text, ignoreBounds=True)

        # Non-interactive colour bar: levels are always explicit (weights 0..1, or the finite
        # range of scores), never dragged to something the numbers no longer say.
        self._colorbar = pg.ColorBarItem(
            values=WEIGHT_LEVELS,
            colorMap=load_colormap(self._colormap_name),
            interactive=False,
            width=16,
            colorMapMenu=False,
        )
        # Inserts the bar into the plot's layout (right of the right axis) without linking it to
        # the image: we set the image LUT/levels ourselves so they are exactly what was asked.
        self._colorbar.setImageItem([], insert_in=self._plot)
        self._image.setLookupTable(lookup_table(self._colormap_name))
        # No setLevels here: before the first image pyqtgraph 0.14 stores it as "deferred" levels
        # and re-applies them *after* the first setImage, overriding the levels passed there.

        self.setAccessibleName(translate("Heatmap", "Attention heatmap"))
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._view)

        # Hover: the scene reports every mouse move; we map it to a cell ourselves.
        self._view.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self._view.scene().sigMouseClicked.connect(self._on_mouse_clicked)

        # 2x10 weights stay legible: ten "0.50" columns plus the axis and colour bar.
        self.setMinimumSize(480, 200)
        self._apply_axis_colors()
        self._apply_fonts()
        self._update_tooltips()

    # ------------------------------------------------------------------ public API

    def sizeHint(self) -> QtCore.QSize:
        return QtCore.QSize(640, 420)

    @property
    def plot_item(self) -> pg.PlotItem:
        return self._plot

    @property
    def image_item(self) -> pg.ImageItem:
        """The ImageItem holding the values (row-major: image[r, c] is query r, key c)."""
        return self._image

    @property
    def overlay_item(self) -> pg.ImageItem:
        """RGBA ImageItem for masked/NaN/inf cells, ``overlay_scale`` pixels per cell per side."""
        return self._overlay

    @property
    def overlay_scale(self) -> int:
        return self._overlay_scale

    @property
    def empty_row_marker_item(self) -> pg.ImageItem:
        return self._empty_marker

    @property
    def locator_item(self) -> pg.ScatterPlotItem:
        """Fixed-size markers on NaN/inf cells and empty rows (big matrices only)."""
        return self._locator

    @property
    def colorbar(self) -> pg.ColorBarItem:
        return self._colorbar

    @property
    def annotations(self) -> tuple[CellText, ...]:
        """Per-cell printed values in row-major order (empty when the matrix is too big)."""
        return self._cell_text.cells()

    @property
    def annotation_font(self) -> QtGui.QFont:
        return self._cell_text.font

    @property
    def annotations_legible(self) -> bool:
        """Whether the cells are currently big enough on screen for the printed values to show."""
        return self._cell_text.legible()

    @property
    def values(self) -> np.ndarray | None:
        """The displayed values (read-only: a copy of what was passed to set_data, or the array
        itself when it was read-only already)."""
        return self._values

    @property
    def title(self) -> str:
        return self._title

    @property
    def row_labels(self) -> list[str] | None:
        """The row (query) labels given to set_data, None when there were none."""
        return None if self._row_labels is None else list(self._row_labels)

    @property
    def col_labels(self) -> list[str] | None:
        return None if self._col_labels is None else list(self._col_labels)

    @property
    def allowed(self) -> np.ndarray | None:
        """The allowed cells drawn (True = may attend), None when nothing is masked.
        (Not ``mask``: that is QWidget's own method.)"""
        return self._mask

    @property
    def levels(self) -> Levels:
        return self._levels

    @property
    def colormap_name(self) -> str:
        return self._colormap_name

    @property
    def font_scale(self) -> float:
        return self._font_scale

    @property
    def empty_rows(self) -> tuple[int, ...]:
        if self._empty_rows is None:
            return ()
        return tuple(int(i) for i in np.flatnonzero(self._empty_rows))

    @property
    def hover_text(self) -> str:
        """Text of the last hovered cell ("" when the mouse is not over a cell)."""
        return self._hover_text

    def set_title(self, title: str) -> None:
        if title == self._title:
            return
        self._title = title
        self._apply_title()  # only the title: new fonts for the axes would redraw them all

    def set_axis_labels(self, x_label: str | None = None, y_label: str | None = None) -> None:
        if (x_label is None or x_label == self._x_label) and (y_label is None or y_label == self._y_label):
            self._update_tooltips()  # same names: only the tooltips may be in another language
            return
        if x_label is not None:
            self._x_label = x_label
        if y_label is not None:
            self._y_label = y_label
        self._apply_fonts()
        self._update_tooltips()

    def set_data(
        self,
        values: np.ndarray,
        *,
        mask: np.ndarray | None = None,
        empty_rows: np.ndarray | None = None,
        levels: Levels | None = WEIGHT_LEVELS,
        hover: HoverFn | None = None,
        row_labels: Sequence[str] | None = None,
        col_labels: Sequence[str] | None = None,
        log: bool = False,
    ) -> None:
        """Show a 2-D matrix.

        Args:
            values: (rows, cols) floats; query r, key c at [r, c].  Copied, so later in-place
                edits by the caller cannot make the picture and the hover text disagree; a
                read-only array (a computed result) is kept as it is.
            mask: bool, broadcastable to values' shape; True = this query MAY attend this key.
                False cells are drawn hatched grey.  None = everything allowed.
            empty_rows: bool per row, True = the row has no valid key (red marker + tooltip).
                None = derived from ``mask`` (rows with no True).
            levels: (low, high) colour-scale range; None = finite min/max of the allowed cells
                (of all cells if none is allowed and finite), for scores of any range.
            hover: called as hover(row, col) for the tooltip; None = "query r, key c: value".
            row_labels / col_labels: tick labels (used when there are <= label_limit of them).
            log: a logarithmic colour scale; ``levels`` (required, low > 0) are in the values'
                units, and values at or below the low end take its colour (zero weights).

        Every pass over the cells happens here, on the calling thread, and the matrix is drawn
        whole. A big matrix drawn on the GUI thread is better prepared elsewhere
        (``prepare.prepare_map``) and shown with ``show_prepared``.
        """
        prepared = prepare_map(
            values,
            mask=mask,
            empty_rows=empty_rows,
            levels=levels,
            log=log,
            show_masked_values=self.show_masked_values,
            pyramid=False,
        )
        self.show_prepared(prepared, hover=hover, row_labels=row_labels, col_labels=col_labels)

    def show_prepared(
        self,
        prepared: PreparedMap,
        *,
        hover: HoverFn | None = None,
        row_labels: Sequence[str] | None = None,
        col_labels: Sequence[str] | None = None,
    ) -> None:
        """Show a matrix made ready by ``prepare.prepare_map`` (on any thread), with ``hover`` and
        labels as in ``set_data``. With a pyramid (a big matrix) it is drawn a screen at a time
        (``prepare.picture``): nothing here or in the paint passes over every cell, so a
        4096x4096 result is shown without stalling the GUI thread.

        Raises ValueError when the map was prepared with another ``show_masked_values`` than
        the widget's, or labels do not match its shape.
        """
        if prepared.show_masked_values != self.show_masked_values:
            raise ValueError(
                f"prepared with show_masked_values={prepared.show_masked_values}, "
                f"the heatmap has {self.show_masked_values}"
            )
        arr = prepared.values
        rows, cols = arr.shape
        row_lab = self._check_labels(row_labels, rows, "row_labels", self._row_labels)
        col_lab = self._check_labels(col_labels, cols, "col_labels", self._col_labels)

        # Commit state, then update every dependent item from it. The last picture goes with the
        # map it showed: whoever replaces a big map decides on which thread it is freed.
        self._prepared = prepared
        self._picture = None
        self._values = arr
        self._mask = prepared.allowed
        self._cells = prepared.cells
        self._empty_rows = prepared.empty_rows
        self._levels = prepared.levels
        self._log = prepared.log
        self._constant = prepared.constant
        self._hover_fn = hover
        self._row_labels = row_lab
        self._col_labels = col_lab

        if rows == 0 or cols == 0:
            # Nothing to draw (e.g. an empty sequence while editing): blank but keep the frame.
            self._image.set_source(None)
            self._image.clear()
        else:
            # Drawn whole, autoDownsample maps only about one value per screen pixel at 4096x4096;
            # a pyramid gives a screen's worth by itself.
            whole = prepared.pyramid is None
            self._image.setImage(prepared.shown, autoLevels=False, levels=self._scale_levels(), autoDownsample=whole)
            self._image.set_source(None if whole else self._data_picture)
        if arr.shape != self._shown_shape:
            # Only a new shape resets the view: live edits keep the user's zoom and pan.  Reset
            # before the overlay and the cell text, which depend on how large a cell is on screen.
            self._shown_shape = arr.shape
            self._reset_view()
        self._update_colorbar()
        self._update_overlay()
        self._update_empty_marker()
        self._update_locators()
        self._update_ticks()
        self._update_annotations()
        self._update_tooltips()
        self._refresh_hover()

    def _frame_picture(self, frame: Frame) -> Picture:
        """The images of a prepared pyramid for ``frame``, made once for both items."""
        prepared = self._prepared
        assert prepared is not None
        last = self._picture
        if last is not None and last[0] is prepared and last[1] == frame:
            return last[2]
        ready = prepared.frame_picture
        pic = ready[1] if ready is not None and same_view(ready[0], frame) else picture(prepared, frame)
        self._picture = (prepared, frame, pic)
        self._last_frame = frame
        self._overlay_tint = pic.tinted
        return pic

    @property
    def last_frame(self) -> Frame | None:
        """The frame (cells in view, pixels) of the last picture drawn of a prepared pyramid:
        prepared with it (``prepare_map(frame=...)``), the next matrix is drawn with no work here
        as long as the view does not move."""
        return self._last_frame

    def frame_for(self, shape: tuple[int, int]) -> Frame | None:
        """The frame a matrix of ``shape`` would be drawn in if shown now: the current one when
        the map shows that shape (the view is kept), else all of it over the plot area (a new
        shape resets the view). Plain values only, so any thread may ask; None until laid out."""
        if shape == self._shown_shape and self._last_frame is not None:
            return self._last_frame
        if self._area_px is None or 0 in shape:
            return None
        rows, cols = shape
        return Frame(0.0, float(cols), 0.0, float(rows), *self._area_px)

    def _data_picture(self, frame: Frame) -> tuple[np.ndarray, tuple[float, float, float, float]]:
        pic = self._frame_picture(frame)
        return pic.data, pic.rect

    def _overlay_picture(self, frame: Frame) -> tuple[np.ndarray, tuple[float, float, float, float]] | None:
        pic = self._frame_picture(frame)
        return None if pic.overlay is None else (pic.overlay, pic.rect)

    def _scale_levels(self) -> Levels:
        """The image's and the colour bar's levels: the values' own, or their log10."""
        lo, hi = self._levels
        return (math.log10(lo), math.log10(hi)) if self._log else (lo, hi)

    def _update_colorbar(self) -> None:
        levels = self._scale_levels()
        key = (levels, self._log, self._constant)
        if key == getattr(self, "_colorbar_key", None):
            # Same scale again (weights at every keystroke) would still re-lay out the bar's
            # axis: ~1.5 ms per heatmap per keystroke.
            return
        self._colorbar_key = key
        self._colorbar.setLevels(levels)
        ticks = paint.colorbar_ticks(levels, log=self._log, constant=self._constant)
        if self._constant is not None:
            ticks = [(ticks[0][0], translate("Heatmap", "{value} (constant)").format(value=ticks[0][1]))]
        self._colorbar.axis.setTicks([ticks, []])

    @property
    def constant(self) -> float | None:
        """The value of every cell of a flat map (its colour bar says "constant"), else None."""
        return self._constant

    @property
    def log_scale(self) -> bool:
        return self._log

    @property
    def overlay_tinted(self) -> bool:
        """Whether masked cells are tinted flat (cells too small on screen for stripes)."""
        return self._overlay_tint

    def set_highlight_rows(self, rows: Sequence[int]) -> None:
        """Outline these rows (query rows a finding names, say); empty: no outline."""
        for item in getattr(self, "_highlights", []):
            self._plot.removeItem(item)
        self._highlights: list[QtWidgets.QGraphicsRectItem] = []
        if self._values is None or not len(rows):
            return
        cols = self._values.shape[1]
        pen = pg.mkPen(paint.EMPTY_ROW_COLOR, width=3)
        pen.setCosmetic(True)  # 3 screen pixels at any zoom
        ordered = sorted(set(int(r) for r in rows))
        start = prev = ordered[0]
        for r in [*ordered[1:], None]:
            if r is not None and r == prev + 1:
                prev = r
                continue
            item = QtWidgets.QGraphicsRectItem(0, start, cols, prev - start + 1)
            item.setPen(pen)
            item.setZValue(30)  # above the data, the overlay and the cell texts
            self._plot.addItem(item, ignoreBounds=True)
            self._highlights.append(item)
            if r is not None:
                start = prev = r

    @property
    def highlighted_rows(self) -> int:
        """How many outlined row ranges are on show (for tests)."""
        return len(getattr(self, "_highlights", []))

    def set_colorbar_visible(self, on: bool) -> None:
        """Show or take away the colour bar (small multiples share one scale, drawn once)."""
        layout = self._plot.layout
        present = any(layout.itemAt(i) is self._colorbar for i in range(layout.count()))
        if on and not present:
            layout.addItem(self._colorbar, 2, 5)  # where ColorBarItem.setImageItem puts it
        elif not on and present:
            layout.removeItem(self._colorbar)
            self._colorbar.setParentItem(None)
            self._colorbar.hide()
        self._colorbar.setVisible(on)

    def set_wheel_zoom(self, on: bool) -> None:
        """Whether the mouse wheel zooms into the map (True) or scrolls what holds it."""
        self._view.zoom_on_wheel = on

    def _cell_pixels(self) -> float:
        """Screen pixels of the smaller side of a cell, at the current view range."""
        if self._values is None or self._values.size == 0:
            return math.inf
        (x0, x1), (y0, y1) = self._vb.viewRange()
        rect = self._vb.boundingRect()
        if rect.width() <= 1 or rect.height() <= 1:  # not laid out yet: assume a usual size
            return math.inf
        return min(rect.width() / max(x1 - x0, 1e-9), rect.height() / max(y1 - y0, 1e-9))

    def _on_view_resized(self) -> None:
        area = self._vb.mapRectToDevice(self._vb.boundingRect())
        laid_out = area is not None and area.width() >= 1 and area.height() >= 1
        self._area_px = (math.ceil(area.width()), math.ceil(area.height())) if laid_out else None
        if self._cells is not None and (self._cell_pixels() < paint.TINT_BELOW_PX) != self._overlay_tint:
            self._update_overlay()

    def clear(self) -> None:
        """Show nothing (keeps colour map, labels and font scale)."""
        self.set_data(np.zeros((0, 0)))

    def set_colormap(self, name: str) -> None:
        """Switch to one of COLORMAPS (case-insensitive; "grey"/"greys" mean "gray")."""
        key = canonical_colormap_name(name)
        self._colormap_name = key
        self._image.setLookupTable(lookup_table(key))
        self._colorbar.setColorMap(load_colormap(key))
        # The special colours are fixed, but annotation text contrast depends on the map.
        self._update_annotations()
        self._update_tooltips()

    def set_plot_colors(self, colors: PlotColors) -> None:
        """Background and axis/text colours (light or dark theme)."""
        self._plot_colors = colors
        self._view.setBackground(colors.background)
        self._apply_axis_colors()
        self._apply_fonts()

    def changeEvent(self, event: QtCore.QEvent) -> None:
        kind = event.type()
        if kind == QtCore.QEvent.Type.LanguageChange:
            default_x, default_y = self._default_labels
            self.set_axis_labels(
                translate("Heatmap", "Keys") if default_x else None,
                translate("Heatmap", "Queries") if default_y else None,
            )
            self.setAccessibleName(translate("Heatmap", "Attention heatmap"))
        elif kind == QtCore.QEvent.Type.PaletteChange:
            colors = plot_colors()
            if colors != self._plot_colors:
                self.set_plot_colors(colors)
        super().changeEvent(event)

    def _apply_axis_colors(self) -> None:
        fg = self._plot_colors.foreground
        for side in ("left", "bottom", "top", "right"):
            axis = self._plot.getAxis(side)
            axis.setPen(fg)
            axis.setTextPen(fg)
        self._colorbar.axis.setPen(fg)
        self._colorbar.axis.setTextPen(fg)

    def hold_label_room(self, rows: str, cols: str) -> None:
        """Keep room for row labels as wide as ``rows`` (and column labels as tall as ``cols``)
        from the start, never giving it back when labels get shorter: a map whose labels change
        with every result (a long input's bins and tiles) is then laid out, and painted, once
        per result instead of again after each paint measured new labels."""
        self._label_room = (rows, cols)
        self._apply_fonts()

    def set_font_scale(self, f: float) -> None:
        """Scale title, axis labels, tick labels and annotations (presentation mode)."""
        if not (f > 0 and math.isfinite(f)):
            raise ValueError(f"font scale must be a positive number, got {f!r}")
        self._font_scale = float(f)
        self._apply_fonts()
        self._update_annotations()

    def render_image(self, path: str | Path) -> bool:
        """Save exactly what ``grab()`` shows (format from the file suffix).  Returns success."""
        return self.grab().save(str(path))

    # ------------------------------------------------------------------ data helpers

    @staticmethod
    def _check_labels(labels: Sequence[str] | None, n: int, what: str, shown: list[str] | None) -> list[str] | None:
        if labels is None:
            return None
        if isinstance(labels, list) and shown is not None and len(shown) == n and labels == shown:
            return shown  # the same labels again (every edit): no copy of thousands of strings
        out = [str(x) for x in labels]
        if len(out) != n:
            raise ValueError(f"{what} has {len(out)} entries, expected {n}")
        return out

    def _opaque_masked(self) -> np.ndarray:
        assert self._values is not None and self._cells is not None
        return paint.opaque_masked(self._values, self._cells.masked, self.show_masked_values)

    def _cell_colors(self) -> np.ndarray:
        """Displayed colour of every cell, (rows, cols, 3) uint8, for the annotations' contrast.

        A subclass with its own colour table overrides this (views.compare.DivergingHeatmap).
        """
        assert self._values is not None and self._cells is not None
        return paint.cell_colors(
            self._values, self._levels, lookup_table(self._colormap_name), self._cells, self._opaque_masked()
        )

    # ------------------------------------------------------------------ item updates

    def _update_overlay(self) -> None:
        prepared = self._prepared
        if prepared is not None and prepared.pyramid is not None and prepared.values.size:
            self._overlay_code = None  # the whole-matrix overlay below is no longer on show
            if prepared.pyramid.code is None:
                self._overlay.set_source(None)
                self._overlay.clear()
                self._overlay.setVisible(False)
                return
            # The item spans the matrix; its pictures are made with the data's, frame by frame.
            self._overlay.setImage(prepared.values, autoLevels=False, levels=(0, 255), autoDownsample=False)
            self._overlay.set_source(self._overlay_picture)
            self._overlay.setVisible(True)
            return
        if self._overlay.source is not None:  # back from a pyramid: the overlay is drawn whole again
            self._overlay.set_source(None)
            self._overlay.clear()
        values, cells = self._values, self._cells
        if values is None or cells is None or values.size == 0:
            self._overlay.setVisible(False)
            return
        code = paint.overlay_codes(cells, values, self.show_masked_values)
        if code is None:
            # Keep no stale picture around: a later set_data with specials rebuilds it anyway.
            if self._overlay_code is not None:
                self._overlay.clear()
            self._overlay.setVisible(False)
            self._overlay_code = None
            return
        tint = self._cell_pixels() < paint.TINT_BELOW_PX
        previous = self._overlay_code
        if (
            previous is not None
            and previous.shape == code.shape
            and tint == self._overlay_tint
            and np.array_equal(previous, code)
        ):
            # A live edit rarely changes which cells are special: keeping the image spares its
            # rebuild and, more importantly, the repaint of everything it overlaps.
            self._overlay.setVisible(True)
            return
        self._overlay_code = code
        self._overlay_tint = tint
        rows, cols = code.shape
        # A tint needs one pixel per cell; stripes need several.
        self._overlay_scale = 1 if tint else paint.overlay_scale(rows, cols, self.overlay_pixels)
        img = paint.overlay_image(code, self._overlay_scale, tint=tint)
        # levels=(0, 255), not None: if this uint8 RGBA image were ever averaged into float RGBA,
        # pyqtgraph 0.14 segfaults painting it with levels=None. Not downsampled (see __init__).
        self._overlay.setImage(img, autoLevels=False, levels=(0, 255), autoDownsample=False)
        # k overlay pixels per cell: stretch the image over exactly the data rectangle.
        self._overlay.setRect(QtCore.QRectF(0, 0, cols, rows))
        self._overlay.setVisible(True)

    def _update_empty_marker(self) -> None:
        values, empty = self._values, self._empty_rows
        if values is None or values.size == 0 or empty is None or not empty.any():
            self._empty_marker.clear()
            self._empty_marker.setVisible(False)
            self._empty_key = None
            return
        rows, cols = values.shape
        key = (cols, empty.tobytes())
        if key == self._empty_key:
            return  # the same rows are empty: the bar is already right
        self._empty_key = key
        self._empty_marker.setImage(paint.empty_row_bar(empty), autoLevels=False, levels=(0, 255))
        self._empty_marker.setRect(QtCore.QRectF(0, 0, paint.empty_bar_width(cols), rows))
        self._empty_marker.setVisible(True)

    def _update_locators(self) -> None:
        values, cells, empty, prepared = self._values, self._cells, self._empty_rows, self._prepared
        if prepared is not None and prepared.pyramid is not None:
            points = prepared.locators  # found where the map was prepared
        elif (
            values is None
            or cells is None
            or empty is None
            or values.size == 0
            or max(values.shape) <= _LOCATOR_MIN_SIDE
        ):
            points = None
        elif not (cells.has_nan or cells.has_inf or empty.any()):
            points = None  # np.nonzero of an all-False 4096x4096 mask alone costs ~70 ms
        else:
            points = paint.locator_points(cells.nan, cells.inf, empty, paint.empty_bar_width(values.shape[1]) / 2)
        if points is None:
            self._hide_locator()
            return
        brushes = (
            [pg.mkBrush(paint.NAN_COLOR)] * points.n_nan
            + [pg.mkBrush(paint.INF_COLOR)] * points.n_inf
            + [pg.mkBrush(paint.EMPTY_ROW_COLOR)] * points.n_empty
        )
        self._locator.setData(x=points.x, y=points.y, brush=brushes)
        self._locator.setVisible(True)

    def _hide_locator(self) -> None:
        # Clearing an already empty scatter still schedules a repaint of the plot, and an empty
        # but visible one is still painted: both cost on every keystroke of a small matrix.
        if len(self._locator.data):
            self._locator.clear()
        self._locator.setVisible(False)

    def _update_ticks(self) -> None:
        rows, cols = (0, 0) if self._values is None else self._values.shape
        empty = self._empty_rows
        self._set_axis_ticks(
            self._plot.getAxis("left"),
            rows,
            self._row_labels,
            # "∅ " marks rows with no valid key next to the red bar (tick text is one colour).
            prefix=None if empty is None else ["∅ " if e else "" for e in empty],
        )
        self._set_axis_ticks(self._plot.getAxis("bottom"), cols, self._col_labels)

    def _set_axis_ticks(
        self, axis: CellAxisItem, n: int, labels: list[str] | None, prefix: list[str] | None = None
    ) -> None:
        if 0 < n <= self.label_limit:
            names = labels if labels is not None else [str(i) for i in range(n)]
            pre = prefix if prefix is not None else [""] * n
            axis.set_cell_labels([pre[i] + _elide(names[i]) for i in range(n)])
        else:
            axis.set_cell_labels(None)  # integer ticks at cell centres, chosen by the axis

    def _update_annotations(self) -> None:
        values, cells = self._values, self._cells
        if values is None or cells is None or values.size == 0 or max(values.shape) > self.annotate_limit:
            self._cell_text.clear()
            return
        dark = paint.prefers_dark_text(self._cell_colors())
        spec = paint.annotation_format(self._levels, self.value_format)
        self._cell_text.set_font(self._font(1.0))
        opaque = self._opaque_masked()
        # Masked cells that keep their colour are crossed by light stripes: outline their digits.
        striped = cells.masked & ~opaque
        self._cell_text.set_cells(
            values.shape, [paint.format_number(float(v), spec) for v in values.ravel()], dark, opaque, striped
        )

    def _reset_view(self) -> None:
        rows, cols = (0, 0) if self._values is None else self._values.shape
        w, h = max(cols, 1), max(rows, 1)
        # Limits keep pan/zoom inside the matrix; the range shows all of it, with no padding so
        # cell edges coincide with the axis frame.
        self._vb.setLimits(xMin=0, xMax=w, yMin=0, yMax=h, maxXRange=w, maxYRange=h)
        self._vb.setRange(xRange=(0, w), yRange=(0, h), padding=0)

    # ------------------------------------------------------------------ fonts and tooltips

    def _font(self, rel: float) -> QtGui.QFont:
        font = QtGui.QFont(QtWidgets.QApplication.font())
        font.setPointSizeF(self._base_pt * rel * self._font_scale)
        return font

    def _apply_fonts(self) -> None:
        tick_font = self._font(1.0)
        label_pt = f"{self._base_pt * 1.1 * self._font_scale:.1f}pt"
        for side in ("left", "bottom"):
            self._plot.getAxis(side).setTickFont(tick_font)
        if self._label_room is not None:
            rows, cols = self._label_room
            hold_tick_room(self._plot.getAxis("left"), rows)
            hold_tick_room(self._plot.getAxis("bottom"), cols)
        self._colorbar.axis.setTickFont(tick_font)
        for side, text in (("bottom", self._x_label), ("left", self._y_label)):
            axis = self._plot.getAxis(side)
            # Passing any CSS replaces AxisItem's whole label style, including the colour it
            # derives from the text pen (the label would turn black on black): so restate it.
            axis.setLabel(text, **{"color": axis.textPen().color().name(), "font-size": label_pt})
        self._apply_title()

    def _apply_title(self) -> None:
        if self._title:
            self._plot.setTitle(
                self._title, size=f"{self._base_pt * 1.3 * self._font_scale:.1f}pt", color=self._plot_colors.foreground
            )
        else:
            self._plot.setTitle(None)

    def _update_tooltips(self) -> None:
        empty = self.empty_rows
        if empty:
            listed = ", ".join(str(i) for i in empty[:_MAX_LISTED_EMPTY_ROWS])
            if len(empty) > _MAX_LISTED_EMPTY_ROWS:
                listed = translate("Heatmap", "{listed} and {n} more").format(
                    listed=listed, n=len(empty) - _MAX_LISTED_EMPTY_ROWS
                )
            empty_note = "\n" + translate("Heatmap", "Queries with no valid key (red bar, ∅): {rows}").format(
                rows=listed
            )
        else:
            empty_note = ""
        legend = translate("Heatmap", "Hatched grey = masked (query may not attend key); magenta = NaN; cyan = ±inf.")
        if self._values is None:
            what = translate("Heatmap", "Attention heatmap: {rows} down, {columns} across.").format(
                rows=self._y_label.lower(), columns=self._x_label.lower()
            )
        else:
            what = translate(
                "Heatmap", "Attention heatmap ({n_rows} x {n_cols}): {rows} down, {columns} across."
            ).format(
                n_rows=self._values.shape[0],
                n_cols=self._values.shape[1],
                rows=self._y_label.lower(),
                columns=self._x_label.lower(),
            )
        hover_hint = translate("Heatmap", "Hover a cell for its value.")
        self.setToolTip(f"{what} {hover_hint}\n{legend}{empty_note}")
        self._plot.getAxis("left").setToolTip(
            translate("Heatmap", "{label} (rows)").format(label=self._y_label) + empty_note
        )
        self._plot.getAxis("bottom").setToolTip(translate("Heatmap", "{label} (columns)").format(label=self._x_label))
        for side in ("top", "right"):
            self._plot.getAxis(side).setToolTip("")
        lo, hi = self._levels
        self._colorbar.setToolTip(
            translate(
                "Heatmap",
                "Colour scale ({name}): {low} to {high}. NaN/inf are excluded from the range and drawn in "
                "magenta/cyan.",
            ).format(name=self._colormap_name, low=f"{lo:.4g}", high=f"{hi:.4g}")
        )
        # No tooltip on the empty-row bar itself: it spans every row's left strip, and over a
        # normal row it would shadow the cell tooltip.  Empty rows are named in the cell text.
        if not self._hover_text:
            hover_hint = translate("Heatmap", "Hover a cell to see its value.")
            self._image.setToolTip(f"{hover_hint}\n{legend}{empty_note}")

    # ------------------------------------------------------------------ hover

    def _cell_at_scene_pos(self, pos: QtCore.QPointF) -> tuple[int, int] | None:
        """(row, col) of the cell under a scene position, or None outside the matrix."""
        if self._values is None or self._values.size == 0:
            return None
        if not self._vb.sceneBoundingRect().contains(pos):
            return None
        p = self._vb.mapSceneToView(pos)
        col, row = math.floor(p.x()), math.floor(p.y())
        rows, cols = self._values.shape
        if 0 <= row < rows and 0 <= col < cols:
            return row, col
        return None

    def _default_hover_text(self, row: int, col: int) -> str:
        assert self._values is not None
        v = float(self._values[row, col])
        q = translate("Heatmap", "query {index}").format(index=row)
        k = translate("Heatmap", "key {index}").format(index=col)
        if self._row_labels is not None and self._row_labels[row] != str(row):
            q += f" ({self._row_labels[row]})"
        if self._col_labels is not None and self._col_labels[col] != str(col):
            k += f" ({self._col_labels[col]})"
        text = f"{q}, {k}: {paint.format_number(v)}"
        if self._mask is not None and not self._mask[row, col]:
            text += " " + translate("Heatmap", "(masked)")
        return text

    def _hover_text_for(self, row: int, col: int) -> str:
        text = self._hover_fn(row, col) if self._hover_fn is not None else self._default_hover_text(row, col)
        if self._empty_rows is not None and self._empty_rows[row]:
            text += "\n⚠ " + translate("Heatmap", "query {index} has no valid key").format(index=row)
        return text

    def _on_mouse_moved(self, pos: QtCore.QPointF) -> None:
        cell = self._cell_at_scene_pos(pos)
        if cell is None:
            if self._hover_cell is not None:
                self._hover_cell = None
                self._hover_text = ""
                self._update_tooltips()
                QtWidgets.QToolTip.hideText()
            return
        if cell == self._hover_cell:
            return  # same cell: no new callback, no signal storm on every pixel
        self._hover_cell = cell
        self._show_hover(self._hover_text_for(*cell), pos)
        self.cellHovered.emit(*cell)

    def _on_mouse_clicked(self, event: object) -> None:
        if getattr(event, "button", lambda: None)() != QtCore.Qt.MouseButton.LeftButton:
            return
        self.clicked.emit()
        cell = self._cell_at_scene_pos(event.scenePos())  # type: ignore[attr-defined]
        if cell is not None:
            self.cellClicked.emit(cell[0], cell[1], event.modifiers())  # type: ignore[attr-defined]

    def _show_hover(self, text: str, scene_pos: QtCore.QPointF | None) -> None:
        self._hover_text = text
        # The image item's tooltip is what Qt shows on a tooltip event over the data...
        self._image.setToolTip(text)
        # ...and showing it right away makes it follow the mouse from cell to cell.
        if scene_pos is not None and self.isVisible():
            view_pt = self._view.mapFromScene(scene_pos)
            QtWidgets.QToolTip.showText(self._view.mapToGlobal(view_pt), text, self._view)

    def _refresh_hover(self) -> None:
        """After set_data: recompute the hovered cell's text from the new values (or drop it)."""
        cell = self._hover_cell
        if cell is None:
            return
        if self._values is None or not (0 <= cell[0] < self._values.shape[0] and 0 <= cell[1] < self._values.shape[1]):
            self._hover_cell = None
            self._hover_text = ""
            self._update_tooltips()
            return
        self._show_hover(self._hover_text_for(*cell), None)
