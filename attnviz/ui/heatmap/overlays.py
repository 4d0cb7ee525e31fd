"""What a heatmap draws over its colours: the hatching of masked cells, the flags of rows with no
valid key and of NaN/inf cells, outlined rows, and each cell's value printed inside it.

Values that are not on the colour scale (masked cells, NaN, +/-inf) are painted by a second,
RGBA ImageItem on top of the data, built with numpy (``paint.py``) so that a 4096x4096 matrix
costs a couple of array operations rather than millions of graphics items.  Each item is rebuilt
only when what it shows changes: a live edit rarely changes which cells are special.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from attnviz.ui.heatmap import paint
from attnviz.ui.heatmap.cell_text import CellText, CellTextLayer
from attnviz.ui.heatmap.colormaps import lookup_table
from attnviz.ui.heatmap.items import FastImageItem, RegionImageItem
from attnviz.ui.heatmap.plot import MapPlot
from attnviz.ui.heatmap.prepare import Frame, Picture

__all__ = ["MapOverlays"]

# In big matrices a cell is smaller than a screen pixel, and downsampling averages a lone NaN
# (or an empty row) away.  Above this side length, NaN/inf cells and empty rows also get a
# fixed-size on-screen marker so they can be found (paint.locator_points).
_LOCATOR_MIN_SIDE = 128
_LOCATOR_PX = 6


class MapOverlays(MapPlot):
    """The items drawn over a heatmap's data image, and when each is rebuilt."""

    def _init_overlays(self) -> None:
        #: Print each cell's value when rows <= limit and cols <= limit.
        self.annotate_limit: int = 16
        #: About how many pixels a side the hatching of masked cells is drawn with (fewer: faster
        #: to build and to paint, coarser stripes when zoomed in).
        self.overlay_pixels: int = paint.OVERLAY_TARGET_PX
        #: Format spec of the printed values (e.g. ".3f"); None picks 2 decimals when the levels
        #: are (0, 1) (weights) and 3 significant digits otherwise (scores).
        self.value_format: str | None = None
        self._overlay_scale: int = 1
        # What the overlay and the empty-row bar were last built from (None: nothing shown).
        self._overlay_code: np.ndarray | None = None
        self._overlay_tint = False  # the overlay is drawn as a flat tint (cells too small for stripes)
        self._empty_key: tuple[int, bytes] | None = None
        self._highlights: list[QtWidgets.QGraphicsRectItem] = []

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

    @property
    def overlay_item(self) -> pg.ImageItem:
        """RGBA ImageItem for masked/NaN/inf cells, ``overlay_scale`` pixels per cell per side."""
        return self._overlay

    @property
    def overlay_scale(self) -> int:
        """Overlay pixels per cell and side: 1 for a flat tint, more for stripes."""
        return self._overlay_scale

    @property
    def empty_row_marker_item(self) -> pg.ImageItem:
        """The red bar along the left edge of rows with no valid key."""
        return self._empty_marker

    @property
    def locator_item(self) -> pg.ScatterPlotItem:
        """Fixed-size markers on NaN/inf cells and empty rows (big matrices only)."""
        return self._locator

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
    def overlay_tinted(self) -> bool:
        """Whether masked cells are tinted flat (cells too small on screen for stripes)."""
        return self._overlay_tint

    def set_highlight_rows(self, rows: Sequence[int]) -> None:
        """Outline these rows (query rows a finding names, say); empty: no outline."""
        for item in self._highlights:
            self._plot.removeItem(item)
        self._highlights = []
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
        return len(self._highlights)

    def _frame_picture(self, frame: Frame) -> Picture:
        pic = super()._frame_picture(frame)
        self._overlay_tint = pic.tinted  # the picture decides: stripes or a flat tint
        return pic

    def _overlay_picture(self, frame: Frame) -> tuple[np.ndarray, tuple[float, float, float, float]] | None:
        pic = self._frame_picture(frame)
        return None if pic.overlay is None else (pic.overlay, pic.rect)

    def _on_view_resized(self) -> None:
        super()._on_view_resized()
        if self._cells is not None and (self._cell_pixels() < paint.TINT_BELOW_PX) != self._overlay_tint:
            self._update_overlay()

    def _opaque_masked(self) -> np.ndarray:
        assert self._values is not None and self._cells is not None
        return paint.opaque_masked(self._values, self._cells.masked, self.show_masked_values)

    def _cell_colors(self) -> np.ndarray:
        """Displayed colour of every cell, (rows, cols, 3) uint8, for the annotations' contrast.

        A subclass with its own colour table overrides this (views.side_by_side.DivergingHeatmap).
        """
        assert self._values is not None and self._cells is not None
        return paint.cell_colors(
            self._values, self._levels, lookup_table(self._colormap_name), self._cells, self._opaque_masked()
        )

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
        # A masked cell whose value is 0 (a masked weight) says nothing the hatching does not:
        # no "0.00" over the stripes. Masked cells with a value (the book's -1e6 fill, weight
        # that leaks onto padding) keep it, drawn distinctly.
        silent = (cells.masked & (values == 0)).ravel()
        texts = ["" if quiet else paint.format_number(float(v), spec) for v, quiet in zip(values.ravel(), silent)]
        self._cell_text.set_cells(values.shape, texts, dark, opaque & ~silent.reshape(values.shape), striped)
