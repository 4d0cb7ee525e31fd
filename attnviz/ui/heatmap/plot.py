"""The plot a heatmap is drawn in, and the map on show.

Layout follows pyqtgraph's ``examples/MatrixDisplayExample.py``: one PlotItem holding an
ImageItem, with a ColorBarItem inserted on its right.  Conventions:

* Keys run across (x), queries run down (y, inverted so query 0 is the top row).
* Cell ``(r, c)`` covers ``[c, c + 1) x [r, r + 1)`` in view coordinates, so ticks sit at
  ``i + 0.5`` (the centre of the cell) and hover maps with a plain ``floor``.
* The ImageItem is created with ``axisOrder='row-major'`` so ``image[r, c]`` is query r, key c.
  pyqtgraph's default (column-major) would silently transpose the matrix.

``MapPlot`` builds those items and keeps the state every part of the widget reads: the matrix
on show (values, mask, special cells, levels, labels), its view range, and the pictures of a big
prepared matrix, made a screen at a time.  The parts (``axes``, ``color_scale``, ``overlays``,
``hover``) extend it; ``widget.HeatmapWidget`` puts them together.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6 import QtGui, QtWidgets

from attnviz.ui.fonts import base_point_size
from attnviz.ui.heatmap import paint
from attnviz.ui.heatmap.colormaps import DEFAULT_COLORMAP, canonical_colormap_name, load_colormap, lookup_table
from attnviz.ui.heatmap.items import CellAxisItem, RegionImageItem
from attnviz.ui.heatmap.paint import WEIGHT_LEVELS, Levels
from attnviz.ui.heatmap.prepare import Frame, Picture, PreparedMap, picture, same_view
from attnviz.ui.theme import PlotColors, plot_colors

__all__ = ["HoverFn", "MapPlot"]

HoverFn = Callable[[int, int], str]


class _GraphicsView(pg.GraphicsLayoutWidget):
    """The plot's view; with ``zoom_on_wheel`` off the wheel scrolls whatever holds the heatmap
    (a grid of small maps in a scroll area) instead of zooming into the map under the mouse."""

    zoom_on_wheel = True

    def wheelEvent(self, event: QtGui.QWheelEvent) -> None:  # noqa: N802 - Qt's name
        if self.zoom_on_wheel:
            super().wheelEvent(event)
        else:
            event.ignore()


class MapPlot(QtWidgets.QWidget):
    """The view, the plot, the data image and the colour bar of one heatmap, and the map on show."""

    def __init__(self, parent: QtWidgets.QWidget | None = None, *, colormap: str = DEFAULT_COLORMAP) -> None:
        super().__init__(parent)
        #: Masked cells whose value is not zero keep their colour under light stripes instead of
        #: the opaque grey: for weights, "masked but given weight" (the book's uniform rows over
        #: padding, a 1/0 float mask) must be visible, not hidden by the mask drawing.
        self.show_masked_values: bool = False

        # --- data state (all replaced together by show_prepared so nothing can go stale) ---
        self._values: np.ndarray | None = None
        self._mask: np.ndarray | None = None  # True = may attend; None = everything allowed
        self._empty_rows: np.ndarray | None = None  # bool per row
        self._levels: Levels = WEIGHT_LEVELS
        self._hover_fn: HoverFn | None = None
        self._row_labels: list[str] | None = None
        self._col_labels: list[str] | None = None
        self._cells: paint.SpecialCells | None = None  # NaN / inf / masked cells of _values (drawn whole)
        self._prepared: PreparedMap | None = None  # what is on show; with a pyramid, drawn a screen at a time
        self._picture: tuple[PreparedMap, Frame, Picture] | None = None  # the last frame's images
        self._last_frame: Frame | None = None
        # The device pixels the whole plot area covers, kept as plain values at every resize so a
        # compute thread can prepare the picture of a matrix not shown yet (``frame_for``).
        self._area_px: tuple[int, int] | None = None
        self._log = False  # logarithmic colour scale
        self._constant: float | None = None  # the value of a flat map (its colour bar says so)
        self._shown_shape: tuple[int, ...] | None = None

        # --- presentation state ---
        self._font_scale = 1.0
        self._base_pt = base_point_size()  # presentation mode scales it (font_scale), never twice
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

        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._view)

    @property
    def plot_item(self) -> pg.PlotItem:
        """The PlotItem holding the map: its axes, title and colour bar."""
        return self._plot

    @property
    def image_item(self) -> pg.ImageItem:
        """The ImageItem holding the values (row-major: image[r, c] is query r, key c)."""
        return self._image

    @property
    def values(self) -> np.ndarray | None:
        """The displayed values (read-only: a copy of what was passed to set_data, or the array
        itself when it was read-only already)."""
        return self._values

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
    def plot_colors(self) -> PlotColors:
        """The theme's background and text colours the map is drawn with."""
        return self._plot_colors

    @property
    def empty_rows(self) -> tuple[int, ...]:
        if self._empty_rows is None:
            return ()
        return tuple(int(i) for i in np.flatnonzero(self._empty_rows))

    # ------------------------------------------------------------------ the view

    def _cell_pixels(self) -> float:
        """Screen pixels of the smaller side of a cell, at the current view range."""
        if self._values is None or self._values.size == 0:
            return math.inf
        (x0, x1), (y0, y1) = self._vb.viewRange()
        rect = self._vb.boundingRect()
        if rect.width() <= 1 or rect.height() <= 1:  # not laid out yet: assume a usual size
            return math.inf
        return min(rect.width() / max(x1 - x0, 1e-9), rect.height() / max(y1 - y0, 1e-9))

    def _fit_colorbar_labels(self) -> None:
        """Give the colour bar's axis room for its labels (``color_scale.MapColorScale``)."""

    def _rewrap_title(self) -> None:
        """Break the title into lines again for the room left (``axes.MapAxes``)."""

    def _on_view_resized(self) -> None:
        """The view box was resized or moved; parts that depend on a cell's size extend this."""
        area = self._vb.mapRectToDevice(self._vb.boundingRect())
        laid_out = area is not None and area.width() >= 1 and area.height() >= 1
        self._area_px = (math.ceil(area.width()), math.ceil(area.height())) if laid_out else None

    def _reset_view(self) -> None:
        rows, cols = (0, 0) if self._values is None else self._values.shape
        w, h = max(cols, 1), max(rows, 1)
        # Limits keep pan/zoom inside the matrix; the range shows all of it, with no padding so
        # cell edges coincide with the axis frame.
        self._vb.setLimits(xMin=0, xMax=w, yMin=0, yMax=h, maxXRange=w, maxYRange=h)
        self._vb.setRange(xRange=(0, w), yRange=(0, h), padding=0)

    def _font(self, rel: float) -> QtGui.QFont:
        font = QtGui.QFont(QtWidgets.QApplication.font())
        font.setPointSizeF(self._base_pt * rel * self._font_scale)
        return font

    # ------------------------------------------------------------------ the map on show

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
