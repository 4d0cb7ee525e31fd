"""A labelled matrix heatmap for attention weights and scores.

Layout follows pyqtgraph's ``examples/MatrixDisplayExample.py``: one PlotItem holding an
ImageItem, with a ColorBarItem inserted on its right.  Conventions:

* Keys run across (x), queries run down (y, inverted so query 0 is the top row).
* Cell ``(r, c)`` covers ``[c, c + 1) x [r, r + 1)`` in view coordinates, so ticks sit at
  ``i + 0.5`` (the centre of the cell) and hover maps with a plain ``floor``.
* The ImageItem is created with ``axisOrder='row-major'`` so ``image[r, c]`` is query r, key c.
  pyqtgraph's default (column-major) would silently transpose the matrix.

Values that are not on the colour scale (masked cells, NaN, +/-inf) are painted by a second,
RGBA ImageItem on top of the data, built with numpy so that a 4096x4096 matrix costs a couple of
array operations rather than millions of graphics items.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtCore import Signal

from attnviz.ui.i18n import translate
from attnviz.ui.heatmap.cell_text import CellText, CellTextLayer
from attnviz.ui.theme import PlotColors, plot_colors
from attnviz.ui.heatmap.colormaps import (
    COLORMAPS,
    DEFAULT_COLORMAP,
    EMPTY_ROW_COLOR,
    INF_COLOR,
    MASK_COLOR,
    MASK_HATCH_COLOR,
    NAN_COLOR,
    canonical_colormap_name,
    load_colormap,
    lookup_table,
)

__all__ = ["COLORMAPS", "HeatmapWidget", "HoverFn"]

HoverFn = Callable[[int, int], str]
Levels = tuple[float, float]

# Weights live in [0, 1]; this is also how we recognise "weights" for annotation formatting.
_WEIGHT_LEVELS: Levels = (0.0, 1.0)
# Text colours for annotations: near-black / near-white read better than pure black/white.
_DARK_TEXT = (20, 20, 20)
_LIGHT_TEXT = (245, 245, 245)
# Tick labels longer than this are elided so one long token cannot eat the plot's width;
# the full label is still shown in the hover text.
_MAX_TICK_LABEL_CHARS = 14
# How many empty rows to spell out in a tooltip before summarising.
_MAX_LISTED_EMPTY_ROWS = 24
# Upper bound for the overlay's side in pixels.  Small matrices get several overlay pixels per
# cell (so the hatch is a pattern *inside* each cell); big ones get one pixel per cell.
_OVERLAY_TARGET_PX = 1024
_OVERLAY_MAX_SUPERSAMPLE = 48
# In big matrices a cell is smaller than a screen pixel, and downsampling averages a lone NaN
# (or an empty row) away.  Above this side length, NaN/inf cells and empty rows also get a
# fixed-size on-screen marker so they can be found; past the point count the special cells
# form areas that the overlay shows anyway.
_LOCATOR_MIN_SIDE = 128
_LOCATOR_MAX_POINTS = 20_000
_LOCATOR_PX = 6


class _CellAxisItem(pg.AxisItem):
    """Axis with one tick per matrix cell, drawn at the cell centre (cell i spans [i, i+1)).

    Two modes:
    * ``cell_labels`` set: label cells with those strings.  When the labels do not fit one per
      cell (long tokens, small widget), only every ``step``-th cell is labelled instead of
      letting the texts overprint each other; pyqtgraph's own overlap hiding does not cover
      explicit ticks.
    * ``cell_labels`` None: automatic integer ticks.  pyqtgraph's own ticks would sit on cell
      *boundaries* (and go fractional when zoomed in), mislabelling cells by half a cell.
    """

    def __init__(self, orientation: str, **kwargs: object) -> None:
        super().__init__(orientation, **kwargs)
        self._cell_labels: list[str] | None = None

    @property
    def cell_labels(self) -> list[str] | None:
        return self._cell_labels

    def set_cell_labels(self, labels: list[str] | None) -> None:
        if labels == self._cell_labels:
            return  # live editing re-sends the same labels; redrawing the axis costs ~1 ms
        self._cell_labels = labels
        self.picture = None  # drop the cached drawing
        self.update()

    def _label_extent(self, labels: list[str]) -> float:
        """Pixels one label needs along the axis (plus a gap)."""
        fm = QtGui.QFontMetricsF(self.style["tickFont"] or QtGui.QFont())
        if self.orientation in ("top", "bottom"):
            return max((fm.horizontalAdvance(t) for t in labels), default=0.0) + 8.0
        return fm.height() + 1.0

    def tickValues(self, minVal: float, maxVal: float, size: float) -> list[tuple[float, list[float]]]:
        lo, hi = sorted((minVal, maxVal))
        labels = self._cell_labels
        if labels is not None:
            first = max(0, math.ceil(lo - 0.5))
            last = min(len(labels) - 1, math.floor(hi - 0.5))
            px_per_cell = size / (hi - lo) if hi > lo else float(size)
            step = 1
            if px_per_cell > 0:
                step = max(1, math.ceil(self._label_extent(labels) / px_per_cell))
            return [(float(step), [i + 0.5 for i in range(first, last + 1) if i % step == 0])]
        # Ask for ticks on the index scale (centre i + 0.5 <-> index i), keep integer ones only.
        levels = super().tickValues(lo - 0.5, hi - 0.5, size)
        out: list[tuple[float, list[float]]] = []
        for spacing, values in levels:
            if spacing < 1.0:  # sub-cell ticks mean nothing for an index axis
                continue
            centred = [v + 0.5 for v in values if abs(v - round(v)) < 1e-6]
            out.append((spacing, centred))
        if not out:  # zoomed in to a few cells: label every visible cell
            first, last = math.ceil(lo - 0.5), math.floor(hi - 0.5)
            out.append((1.0, [i + 0.5 for i in range(first, last + 1)]))
        return out

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        labels = self._cell_labels
        out = []
        for v in values:
            i = int(round(v - 0.5))
            if labels is None:
                out.append(str(i))
            else:
                out.append(labels[i] if 0 <= i < len(labels) else "")
        return out


class _FastImageItem(pg.ImageItem):
    """An ImageItem that renders big matrices faster and hands Qt the format it scales quickly.

    * pyqtgraph renders a single-channel image through a colour table as ``Format_Indexed8``
      and RGBA as straight ``Format_ARGB32``. Qt's raster engine has no fast path for scaling
      either: stretching a 1x10 Indexed8 image over a 900x330 plot took 1.5 ms at every repaint,
      the same image as ``ARGB32_Premultiplied`` 0.17 ms. Converting once per render (the image
      is small, or already downsampled to about the screen's size) pays for itself at once.
    * With ``autoDownsample`` pyqtgraph averages blocks of cells with two ``mean`` calls, the
      first over tiny innermost blocks (numpy's slow case): ~90 ms for 4096x4096 on the GUI
      thread. ``_block_mean`` gives the same block averages (NaN and inf propagate the same
      way) with a few strided additions.
    """

    def render(self) -> None:
        image = self.image
        factors = self._computeDownsampleFactors() if self.autoDownsample and image is not None else (1, 1)
        if image is not None and image.ndim == 2 and self.axisOrder == "row-major" and factors != (1, 1):
            ky, kx = factors[1], factors[0]  # row-major: x runs along axis 1
            if image.shape[0] // ky and image.shape[1] // kx:
                # pyqtgraph renders the averaged image as its own (no second downsampling),
                # then gets the full matrix back: the item's size and hover stay per cell.
                self.image, self.autoDownsample = _block_mean(image, ky, kx), False
                # pyqtgraph caches where the NaN cells are; those of the full matrix (or of
                # other factors) would index past the averaged image.
                self._imageHasNans = None
                self._imageNanLocations = None
                try:
                    super().render()
                finally:
                    self.image, self.autoDownsample = image, True
                self._imageHasNans = None  # they described the averaged image
                self._imageNanLocations = None
                self._lastDownsample = (kx, ky)
                self._premultiply()
                return
        super().render()
        self._premultiply()

    def _premultiply(self) -> None:
        qimage = self.qimage
        if qimage is not None and not self._unrenderable and \
                qimage.format() != QtGui.QImage.Format.Format_ARGB32_Premultiplied:
            # The converted copy owns its pixels (the original may view a reused numpy buffer).
            self.qimage = qimage.convertToFormat(QtGui.QImage.Format.Format_ARGB32_Premultiplied)


def _block_mean(a: np.ndarray, ky: int, kx: int) -> np.ndarray:
    """Means of ky x kx blocks of a 2-D array, trailing partial blocks dropped (as pyqtgraph's
    ``downsample``); float16 is averaged in float32."""
    h, w = (a.shape[0] // ky) * ky, (a.shape[1] // kx) * kx
    a = a[:h, :w]
    acc_type = np.float32 if a.dtype.itemsize < 4 else a.dtype
    # inf + -inf is NaN and huge sums overflow, as in the mean: quietly, it is only a picture.
    with np.errstate(invalid="ignore", over="ignore"):
        cols = a[:, 0::kx].astype(acc_type)  # a copy: the sums below are in place
        for i in range(1, kx):
            cols += a[:, i::kx]
        out = cols[0::ky].copy()
        for j in range(1, ky):
            out += cols[j::ky]
        out /= kx * ky
    return out


def _relative_luminance(rgb: np.ndarray) -> np.ndarray:
    """WCAG relative luminance of uint8 sRGB colours, shape (..., 3) -> (...)."""
    c = rgb[..., :3].astype(np.float64) / 255.0
    lin = np.where(c <= 0.03928, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return lin @ np.array([0.2126, 0.7152, 0.0722])


def _prefers_dark_text(rgb: np.ndarray) -> np.ndarray:
    """True where dark text has more contrast than light text on the given background colours."""
    lum = _relative_luminance(rgb)
    dark = _relative_luminance(np.array(_DARK_TEXT, dtype=np.uint8))
    light = _relative_luminance(np.array(_LIGHT_TEXT, dtype=np.uint8))
    return (lum + 0.05) / (dark + 0.05) >= (light + 0.05) / (lum + 0.05)


def _spread_subset(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """At most _LOCATOR_MAX_POINTS evenly spaced entries of equally long index arrays."""
    n = len(arrays[0])
    if n <= _LOCATOR_MAX_POINTS:
        return arrays
    keep = np.linspace(0, n - 1, _LOCATOR_MAX_POINTS).astype(np.intp)
    return tuple(a[keep] for a in arrays)


def _elide(label: str) -> str:
    return label if len(label) <= _MAX_TICK_LABEL_CHARS else label[: _MAX_TICK_LABEL_CHARS - 1] + "…"


def _format_special(v: float) -> str | None:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return None


#: How much presentation mode (F5) enlarges the text of every heatmap and plot.
PRESENTATION_SCALE = 1.8


class HeatmapWidget(QtWidgets.QWidget):
    """Attention-matrix heatmap: queries down, keys across, with colour bar and annotations.

    Signals:
        cellHovered(int, int): (row, col) of the cell under the mouse, emitted when it changes.

    Public attributes (plain, settable before the next ``set_data``):
        annotate_limit: print each cell's value when rows <= limit and cols <= limit (16).
        label_limit: label every row/col when there are at most this many (32); beyond that the
            axis picks integer ticks itself.
        value_format: format spec for annotations (e.g. ".3f"); None picks 2 decimals when the
            levels are (0, 1) (weights) and 3 significant digits otherwise (scores).
    """

    cellHovered = Signal(int, int)

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
        self.value_format: str | None = None

        # --- data state (all replaced together by set_data so nothing can go stale) ---
        self._values: np.ndarray | None = None
        self._mask: np.ndarray | None = None  # True = may attend; None = everything allowed
        self._empty_rows: np.ndarray | None = None  # bool per row
        self._levels: Levels = _WEIGHT_LEVELS
        self._hover_fn: HoverFn | None = None
        self._row_labels: list[str] | None = None
        self._col_labels: list[str] | None = None
        self._overlay_scale: int = 1
        self._specials: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._special_flags: tuple[bool, bool] = (False, False)  # (any NaN, any inf) with _specials
        # What the overlay and the empty-row bar were last built from (None: nothing shown).
        self._overlay_code: np.ndarray | None = None
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
        self._view = pg.GraphicsLayoutWidget()
        self._plot_colors = plot_colors()
        self._view.setBackground(self._plot_colors.background)
        self._plot: pg.PlotItem = self._view.addPlot(
            axisItems={"left": _CellAxisItem("left"), "bottom": _CellAxisItem("bottom")}
        )
        self._vb: pg.ViewBox = self._plot.getViewBox()
        self._plot.invertY(True)  # query 0 on top, as attention matrices are written
        # Aspect stays unlocked: a 2x10 or 8x512 matrix must fill the widget, not become a sliver.
        self._vb.setAspectLocked(False)
        self._plot.setDefaultPadding(0.0)
        self._plot.hideButtons()  # the "A" autorange button would zoom to odd ranges
        self._vb.disableAutoRange()
        self._vb.setMenuEnabled(False)  # its items (export, log axes...) do not apply here
        # A frame on all four sides, values on left and bottom only.
        self._plot.showAxes(True, showValues=(True, False, False, True))
        for side in ("top", "right"):
            self._plot.getAxis(side).setTicks([[], []])

        self._image = _FastImageItem(axisOrder="row-major")
        self._image.setAutoDownsample(True)
        self._plot.addItem(self._image)

        # Masked / NaN / inf cells.  Above the data, below annotations.
        self._overlay = _FastImageItem(axisOrder="row-major")
        # No auto-downsampling of the RGBA overlay: pyqtgraph would average it as floats on every
        # paint (400 ms at 4096x4096); it is already built near screen resolution.
        self._overlay.setAutoDownsample(False)
        self._overlay.setZValue(10)
        self._overlay.setVisible(False)
        self._plot.addItem(self._overlay, ignoreBounds=True)

        # Red bar along the left edge of rows with no valid key.  Drawn inside column 0: in such
        # a row every cell is masked, so it covers nothing informative and keeps the view range
        # equal to the data range.
        self._empty_marker = _FastImageItem(axisOrder="row-major")
        self._empty_marker.setZValue(15)
        self._empty_marker.setVisible(False)
        self._plot.addItem(self._empty_marker, ignoreBounds=True)

        # Fixed-pixel-size markers for NaN/inf cells and empty rows of big matrices.
        self._locator = pg.ScatterPlotItem(pxMode=True, size=_LOCATOR_PX, pen=None, symbol="s")
        self._locator.setZValue(16)
        self._plot.addItem(self._locator, ignoreBounds=True)

        # Each cell's value printed inside it (small matrices): one item draws them all.
        self._cell_text = CellTextLayer(QtGui.QColor(*_DARK_TEXT), QtGui.QColor(*_LIGHT_TEXT), QtGui.QColor(*MASK_COLOR))
        self._cell_text.setZValue(20)  # above data, overlay and empty-row marker
        self._plot.addItem(self._cell_text, ignoreBounds=True)

        # Non-interactive colour bar: levels are always explicit (weights 0..1, or the finite
        # range of scores), never dragged to something the numbers no longer say.
        self._colorbar = pg.ColorBarItem(
            values=_WEIGHT_LEVELS,
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
        self._apply_fonts()

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
        levels: Levels | None = _WEIGHT_LEVELS,
        hover: HoverFn | None = None,
        row_labels: Sequence[str] | None = None,
        col_labels: Sequence[str] | None = None,
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
        """
        if isinstance(values, np.ndarray) and not values.flags.writeable:
            arr = values  # read-only: nobody can change it behind the picture (no 64 MiB copy)
        else:
            arr = np.array(values, copy=True)
        if arr.ndim != 2:
            raise ValueError(f"values must be 2-D, got shape {arr.shape}")
        if arr.dtype.kind != "f" or arr.dtype == np.float16:
            arr = arr.astype(np.float64 if arr.dtype.kind != "f" else np.float32)
        arr.setflags(write=False)
        rows, cols = arr.shape

        mask_arr: np.ndarray | None = None
        if mask is not None:
            mask_arr = np.asarray(mask)
            if mask_arr.dtype != np.bool_:
                mask_arr = mask_arr.astype(bool)
            try:
                mask_arr = np.broadcast_to(mask_arr, arr.shape)
            except ValueError:
                raise ValueError(f"mask shape {mask_arr.shape} does not match values {arr.shape}") from None
            if mask_arr.all():
                mask_arr = None  # nothing masked: skip the overlay work entirely

        if empty_rows is not None:
            empty_arr = np.asarray(empty_rows, dtype=bool).reshape(-1)
            if empty_arr.shape != (rows,):
                raise ValueError(f"empty_rows must have {rows} entries, got {empty_arr.shape}")
        elif mask_arr is not None:
            empty_arr = ~mask_arr.any(axis=1)
        else:
            empty_arr = np.zeros(rows, dtype=bool)

        row_lab = self._check_labels(row_labels, rows, "row_labels")
        col_lab = self._check_labels(col_labels, cols, "col_labels")
        new_levels = self._resolve_levels(arr, mask_arr, levels)

        # Commit state, then update every dependent item from it.
        self._specials = None
        self._values = arr
        self._mask = mask_arr
        self._empty_rows = empty_arr
        self._levels = new_levels
        self._hover_fn = hover
        self._row_labels = row_lab
        self._col_labels = col_lab

        if rows == 0 or cols == 0:
            # Nothing to draw (e.g. an empty sequence while editing): blank but keep the frame.
            self._image.clear()
        else:
            # autoDownsample: at 4096x4096 only about one value per screen pixel is mapped.
            self._image.setImage(arr, autoLevels=False, levels=new_levels, autoDownsample=True)
        if tuple(self._colorbar.levels()) != new_levels:
            # Same levels again (weights are always 0..1) would still re-lay out the bar's axis:
            # ~1.5 ms per heatmap per keystroke.
            self._colorbar.setLevels(new_levels)
        self._update_overlay()
        self._update_empty_marker()
        self._update_locators()
        self._update_ticks()
        self._update_annotations()
        if arr.shape != self._shown_shape:
            # Only a new shape resets the view: live edits keep the user's zoom and pan.
            self._shown_shape = arr.shape
            self._reset_view()
        self._update_tooltips()
        self._refresh_hover()

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
            self.set_axis_labels(translate("Heatmap", "Keys") if default_x else None,
                                 translate("Heatmap", "Queries") if default_y else None)
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
    def _check_labels(labels: Sequence[str] | None, n: int, what: str) -> list[str] | None:
        if labels is None:
            return None
        out = [str(x) for x in labels]
        if len(out) != n:
            raise ValueError(f"{what} has {len(out)} entries, expected {n}")
        return out

    @staticmethod
    def _resolve_levels(arr: np.ndarray, mask: np.ndarray | None, levels: Levels | None) -> Levels:
        if levels is not None:
            lo, hi = (float(levels[0]), float(levels[1]))
            if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
                raise ValueError(f"levels must be finite with low < high, got {levels!r}")
            return (lo, hi)
        if arr.size == 0:
            return _WEIGHT_LEVELS
        finite = np.isfinite(arr)
        # Masked scores are often filled with -1e9 or -inf; letting them set the range would
        # squash every real score into one colour, so prefer the allowed cells.
        sel = finite if mask is None else finite & mask
        if not sel.any():
            sel = finite
        if not sel.any():
            return _WEIGHT_LEVELS  # all NaN/inf: any range will do, every cell is special
        # where= avoids copying a 4096x4096 selection.
        lo = float(np.min(arr, where=sel, initial=np.inf))
        hi = float(np.max(arr, where=sel, initial=-np.inf))
        if lo == hi:  # constant matrix: centre it on the scale instead of dividing by zero
            pad = 0.5 if lo == 0 else abs(lo) * 0.5
            lo, hi = lo - pad, hi + pad
        return (lo, hi)

    def _special_masks(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(nan, inf_allowed, masked_not_nan) boolean cell masks, mutually exclusive.

        Priority NaN > masked > inf: NaN is always a bug worth seeing (even in a masked cell, it
        propagates); -inf in a masked cell is the normal way to mask, so it shows as masked.
        Computed once per ``set_data`` (three full passes over a 4096x4096 matrix otherwise).
        """
        assert self._values is not None
        if self._specials is None:
            self._specials = self._compute_special_masks()
        return self._specials

    def _compute_special_masks(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        assert self._values is not None
        values = self._values
        # Each operation is a pass over up to 16M cells on the GUI thread: skip the ones that
        # cannot change anything (usually no NaN and no inf at all).
        if np.isfinite(values).all():  # the usual case: one pass instead of two
            # calloc'd zeros: no pass over memory until something reads them
            nan, inf = np.zeros(values.shape, dtype=bool), np.zeros(values.shape, dtype=bool)
            has_nan = has_inf = False
        else:
            nan = np.isnan(values)
            has_nan = bool(nan.any())
            inf = np.isinf(values)
            has_inf = bool(inf.any())
        if self._mask is None:
            masked = np.zeros(values.shape, dtype=bool)
        elif has_nan:
            masked = ~self._mask & ~nan
        else:
            masked = ~self._mask
        if has_inf:
            inf &= ~masked
        self._special_flags = (has_nan, has_inf)
        return nan, inf, masked

    def _cell_colors(self) -> np.ndarray:
        """Displayed colour of every cell, (rows, cols, 3) uint8 (used for text contrast)."""
        assert self._values is not None
        lut = lookup_table(self._colormap_name)
        lo, hi = self._levels
        with np.errstate(invalid="ignore"):
            scaled = (self._values - lo) * (256.0 / (hi - lo))
        idx = np.clip(np.nan_to_num(scaled, nan=0.0, posinf=255.0, neginf=0.0), 0, 255).astype(np.intp)
        rgb = lut[idx].copy()
        nan, inf, masked = self._special_masks()
        rgb[nan] = NAN_COLOR[:3]
        rgb[inf] = INF_COLOR[:3]
        rgb[self._opaque_masked(masked)] = MASK_COLOR[:3]
        return rgb

    def _opaque_masked(self, masked: np.ndarray) -> np.ndarray:
        """Masked cells drawn in solid grey (all of them, unless valued ones keep their colour)."""
        if not self.show_masked_values or self._values is None:
            return masked
        return masked & (self._values == 0)

    def _format_annotation(self, v: float) -> str:
        special = _format_special(v)
        if special is not None:
            return special
        if self.value_format is not None:
            return format(v, self.value_format)
        if self._levels == _WEIGHT_LEVELS:
            return f"{v:.2f}"
        return f"{v:.3g}"

    # ------------------------------------------------------------------ item updates

    def _update_overlay(self) -> None:
        values = self._values
        if values is None or values.size == 0:
            self._overlay.setVisible(False)
            return
        nan, inf, masked = self._special_masks()
        has_nan, has_inf = self._special_flags
        if not (has_nan or has_inf or masked.any()):
            # Keep no stale picture around: a later set_data with specials rebuilds it anyway.
            self._overlay.clear()
            self._overlay.setVisible(False)
            self._overlay_code = None
            return
        rows, cols = values.shape
        k = max(1, min(_OVERLAY_MAX_SUPERSAMPLE, _OVERLAY_TARGET_PX // max(rows, cols)))
        self._overlay_scale = k

        # Build a small per-pixel code (uint8) and look colours up in a palette at the end:
        # boolean-indexed writes into a 4096x4096x4 array take half a second, this ~0.1 s.
        # Codes: 0 transparent, 1 masked, 2 inf, 3 NaN, 4 masked + hatch stripe,
        # 5 masked but valued (transparent), 6 its light stripe.
        # The three masks never overlap, so plain assignments build the code; the ones with
        # nothing to mark are skipped (each is a pass over every cell).
        code = masked.astype(np.uint8)
        if has_inf:
            code[inf] = 2
        if has_nan:
            code[nan] = 3
        if self.show_masked_values:
            code[masked & (values != 0)] = 5
        previous = self._overlay_code
        if previous is not None and previous.shape == code.shape and np.array_equal(previous, code):
            # A live edit rarely changes which cells are special: keeping the image spares its
            # rebuild and, more importantly, the repaint of everything it overlaps.
            self._overlay.setVisible(True)
            return
        self._overlay_code = code
        # The stripes below are added in place: work on a new array, never on the one kept.
        if k > 1:
            code = np.repeat(np.repeat(code, k, axis=0), k, axis=1)
        else:
            code = code.copy()
        # Diagonal stripes in overlay-pixel coordinates, continuous across neighbouring masked
        # cells.  With k >= 8 that is two stripes per cell; at k == 1 it becomes a pixel texture
        # that averages to a mid grey when zoomed out.
        period = max(4, k // 2)
        width = max(1, period // 4)
        h, w = code.shape
        # Row i of the stripe pattern is row (i % period) of a small table: no h*w index math.
        table = (np.arange(period)[:, None] + np.arange(w)[None, :]) % period < width
        stripes = table[np.arange(h) % period]
        code += 3 * ((code == 1) & stripes).view(np.uint8)
        code += ((code == 5) & stripes).view(np.uint8)
        palette = np.array(
            [(0, 0, 0, 0), MASK_COLOR, INF_COLOR, NAN_COLOR, MASK_HATCH_COLOR, (0, 0, 0, 0), (255, 255, 255, 170)],
            dtype=np.uint8,
        )
        # Gather whole RGBA pixels as uint32 (one 4-byte copy per pixel), then view as bytes.
        img = palette.view(np.uint32).ravel()[code].view(np.uint8).reshape(h, w, 4)

        # levels=(0, 255), not None: if this uint8 RGBA image were ever averaged into float RGBA,
        # pyqtgraph 0.14 segfaults painting it with levels=None. Not downsampled (see __init__).
        self._overlay.setImage(img, autoLevels=False, levels=(0, 255), autoDownsample=False)
        # k overlay pixels per cell: stretch the image over exactly the data rectangle.
        self._overlay.setRect(QtCore.QRectF(0, 0, cols, rows))
        self._overlay.setVisible(True)

    def _update_empty_marker(self) -> None:
        values = self._values
        if values is None or values.size == 0 or self._empty_rows is None or not self._empty_rows.any():
            self._empty_marker.clear()
            self._empty_marker.setVisible(False)
            self._empty_key = None
            return
        rows, cols = values.shape
        key = (cols, self._empty_rows.tobytes())
        if key == self._empty_key:
            return  # the same rows are empty: the bar is already right
        self._empty_key = key
        bar = np.zeros((rows, 1, 4), dtype=np.uint8)
        bar[self._empty_rows] = EMPTY_ROW_COLOR
        self._empty_marker.setImage(bar, autoLevels=False, levels=(0, 255))
        bar_w = self._empty_bar_width(cols)
        self._empty_marker.setRect(QtCore.QRectF(0, 0, bar_w, rows))
        self._empty_marker.setVisible(True)

    def _empty_bar_width(self, cols: int) -> float:
        # A fixed fraction of the width, but never thinner than a fifth of a cell.
        return min(float(cols), max(0.2, 0.012 * cols))

    def _update_locators(self) -> None:
        values = self._values
        if values is None or values.size == 0 or max(values.shape) <= _LOCATOR_MIN_SIDE:
            self._hide_locator()
            return
        nan, inf, _ = self._special_masks()
        has_nan, has_inf = self._special_flags
        has_empty = self._empty_rows is not None and bool(self._empty_rows.any())
        if not (has_empty or has_nan or has_inf):
            self._hide_locator()  # np.nonzero of an all-False 4096x4096 mask alone costs ~70 ms
            return
        rr_nan, cc_nan = np.nonzero(nan)
        rr_inf, cc_inf = np.nonzero(inf)
        empty = np.flatnonzero(self._empty_rows) if self._empty_rows is not None else np.empty(0, np.intp)
        # Too many points to mark each: keep an evenly spread subset.  Markers are several
        # pixels wide while cells are a fraction of one, so a subset still draws solid lines
        # and areas.
        rr_nan, cc_nan = _spread_subset(rr_nan, cc_nan)
        rr_inf, cc_inf = _spread_subset(rr_inf, cc_inf)
        (empty,) = _spread_subset(empty)
        n_nan, n_inf, n_empty = len(rr_nan), len(rr_inf), len(empty)
        if n_nan + n_inf + n_empty == 0:
            self._hide_locator()
            return
        bar_x = self._empty_bar_width(values.shape[1]) / 2
        x = np.concatenate([cc_nan + 0.5, cc_inf + 0.5, np.full(n_empty, bar_x)])
        y = np.concatenate([rr_nan + 0.5, rr_inf + 0.5, empty + 0.5])
        brushes = (
            [pg.mkBrush(NAN_COLOR)] * n_nan
            + [pg.mkBrush(INF_COLOR)] * n_inf
            + [pg.mkBrush(EMPTY_ROW_COLOR)] * n_empty
        )
        self._locator.setData(x=x, y=y, brush=brushes)
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
        self, axis: _CellAxisItem, n: int, labels: list[str] | None, prefix: list[str] | None = None
    ) -> None:
        if 0 < n <= self.label_limit:
            names = labels if labels is not None else [str(i) for i in range(n)]
            pre = prefix if prefix is not None else [""] * n
            axis.set_cell_labels([pre[i] + _elide(names[i]) for i in range(n)])
        else:
            axis.set_cell_labels(None)  # integer ticks at cell centres, chosen by the axis

    def _update_annotations(self) -> None:
        values = self._values
        if values is None or values.size == 0 or max(values.shape) > self.annotate_limit:
            self._cell_text.clear()
            return
        dark = _prefers_dark_text(self._cell_colors())
        _, _, masked = self._special_masks()
        self._cell_text.set_font(self._font(1.0))
        self._cell_text.set_cells(values.shape, [self._format_annotation(float(v)) for v in values.ravel()],
                                  dark, self._opaque_masked(masked))

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
        self._colorbar.axis.setTickFont(tick_font)
        for side, text in (("bottom", self._x_label), ("left", self._y_label)):
            axis = self._plot.getAxis(side)
            # Passing any CSS replaces AxisItem's whole label style, including the colour it
            # derives from the text pen (the label would turn black on black): so restate it.
            axis.setLabel(text, **{"color": axis.textPen().color().name(), "font-size": label_pt})
        if self._title:
            self._plot.setTitle(self._title, size=f"{self._base_pt * 1.3 * self._font_scale:.1f}pt",
                                color=self._plot_colors.foreground)
        else:
            self._plot.setTitle(None)

    def _update_tooltips(self) -> None:
        empty = self.empty_rows
        if empty:
            listed = ", ".join(str(i) for i in empty[:_MAX_LISTED_EMPTY_ROWS])
            if len(empty) > _MAX_LISTED_EMPTY_ROWS:
                listed = translate("Heatmap", "{listed} and {n} more").format(
                    listed=listed, n=len(empty) - _MAX_LISTED_EMPTY_ROWS)
            empty_note = "\n" + translate("Heatmap", "Queries with no valid key (red bar, ∅): {rows}").format(
                rows=listed)
        else:
            empty_note = ""
        legend = translate("Heatmap", "Hatched grey = masked (query may not attend key); magenta = NaN; cyan = ±inf.")
        if self._values is None:
            what = translate("Heatmap", "Attention heatmap: {rows} down, {columns} across.").format(
                rows=self._y_label.lower(), columns=self._x_label.lower())
        else:
            what = translate("Heatmap", "Attention heatmap ({n_rows} x {n_cols}): {rows} down, {columns} "
                                        "across.").format(
                n_rows=self._values.shape[0], n_cols=self._values.shape[1],
                rows=self._y_label.lower(), columns=self._x_label.lower())
        hover_hint = translate("Heatmap", "Hover a cell for its value.")
        self.setToolTip(f"{what} {hover_hint}\n{legend}{empty_note}")
        self._plot.getAxis("left").setToolTip(
            translate("Heatmap", "{label} (rows)").format(label=self._y_label) + empty_note)
        self._plot.getAxis("bottom").setToolTip(translate("Heatmap", "{label} (columns)").format(label=self._x_label))
        for side in ("top", "right"):
            self._plot.getAxis(side).setToolTip("")
        lo, hi = self._levels
        self._colorbar.setToolTip(translate(
            "Heatmap", "Colour scale ({name}): {low} to {high}. NaN/inf are excluded from the range and drawn in "
                       "magenta/cyan.").format(name=self._colormap_name, low=f"{lo:.4g}", high=f"{hi:.4g}"))
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
        special = _format_special(v)
        q = translate("Heatmap", "query {index}").format(index=row)
        k = translate("Heatmap", "key {index}").format(index=col)
        if self._row_labels is not None and self._row_labels[row] != str(row):
            q += f" ({self._row_labels[row]})"
        if self._col_labels is not None and self._col_labels[col] != str(col):
            k += f" ({self._col_labels[col]})"
        text = f"{q}, {k}: {special if special is not None else f'{v:.4g}'}"
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
