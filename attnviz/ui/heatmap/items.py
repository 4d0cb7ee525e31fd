"""The pyqtgraph items the heatmap draws with, where pyqtgraph's own behaviour is not enough.

Both subclasses depend on pyqtgraph internals (attributes and methods with a leading underscore,
and the cached ``picture`` of an axis): tests/ui/test_heatmap_items.py pins each of them, so a
pyqtgraph release that changes one fails a clear test instead of misdrawing the heatmap.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from attnviz.ui.heatmap.paint import block_mean
from attnviz.ui.heatmap.prepare import Frame

__all__ = [
    "CellAxisItem",
    "FastImageItem",
    "PictureSource",
    "RegionImageItem",
    "fit_colorbar_labels",
    "hold_tick_room",
]

#: The width pyqtgraph gives a colour bar's axis, which fits labels such as "0.8" at normal size.
COLORBAR_AXIS_WIDTH = 45


def fit_colorbar_labels(axis: pg.AxisItem, *, shrink: bool = False) -> None:
    """Make a colour bar's axis as wide as its widest tick label (never narrower than
    pyqtgraph's 45 px). pyqtgraph fixes that axis's width, and a label wider than it ("-1.5e+06",
    any label in presentation mode's large type) was left out: a bar with no labels at all.

    The room only grows unless ``shrink`` (a new font): a width that followed every result's
    labels would lay the plot out, and paint it, twice per keystroke (see ``hold_tick_room``)."""
    levels = axis._tickLevels or []  # noqa: SLF001 - the ticks the colour scale set
    texts = [text for level in levels for _value, text in level]
    font = axis.style["tickFont"] or QtGui.QFont(axis.font())
    widest = max((QtGui.QFontMetricsF(font).horizontalAdvance(t) for t in texts), default=0.0)
    room = widest + axis.style["tickTextOffset"][0] + max(0, axis.style["tickLength"]) + 4
    width = max(COLORBAR_AXIS_WIDTH, math.ceil(room))
    if not shrink and axis.fixedWidth is not None:
        width = max(width, int(axis.fixedWidth))
    if axis.fixedWidth != width:
        axis.setWidth(width)


def hold_tick_room(axis: pg.AxisItem, sample: str) -> None:
    """Give ``axis`` room for tick labels as wide as ``sample`` from the start, and never take
    room back when its labels get shorter.

    pyqtgraph measures tick labels while it paints and resizes the axis to fit them (wider or
    narrower). That resize relays the plot out and paints it all again, a second full paint
    for each result whose labels differ in width (a long input's maps and lines: two or three
    paints per result, 10-15 ms each). Called again after a font change: the room is that of
    ``sample`` in the new font."""
    font = axis.style["tickFont"] or QtGui.QFont(axis.font())
    metrics = QtGui.QFontMetricsF(font)
    axis.setStyle(autoReduceTextSpace=False)
    if axis.orientation in ("left", "right"):
        axis.textWidth = math.ceil(metrics.horizontalAdvance(sample)) + 2
    else:
        axis.textHeight = math.ceil(metrics.height()) + 2
    axis._adjustSize()


class CellAxisItem(pg.AxisItem):
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
        self._extent: tuple[list[str], str, float] | None = None  # see _label_extent

    @property
    def cell_labels(self) -> list[str] | None:
        return self._cell_labels

    def set_cell_labels(self, labels: list[str] | None) -> None:
        if labels == self._cell_labels:
            return  # live editing re-sends the same labels; redrawing the axis costs ~1 ms
        self._cell_labels = labels
        self.picture = None  # drop pyqtgraph's cached drawing of the axis
        self.update()

    def _label_extent(self, labels: list[str]) -> float:
        """Pixels one label needs along the axis (plus a gap); kept for the same labels and font
        (each paint asks: 512 labels measured took a millisecond of every paint)."""
        font = self.style["tickFont"] or QtGui.QFont()
        key = font.key()
        if self._extent is not None and self._extent[0] is labels and self._extent[1] == key:
            return self._extent[2]
        fm = QtGui.QFontMetricsF(font)
        if self.orientation in ("top", "bottom"):
            extent = max((fm.horizontalAdvance(t) for t in labels), default=0.0) + 8.0
        else:
            extent = fm.height() + 1.0
        self._extent = (labels, key, extent)
        return extent

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
            i = round(v - 0.5)
            if labels is None:
                out.append(str(i))
            else:
                out.append(labels[i] if 0 <= i < len(labels) else "")
        return out


def rgba_qimage(rgba: np.ndarray) -> QtGui.QImage:
    """(h, w, 4) RGBA bytes as the premultiplied image Qt draws fastest; the copy owns its pixels."""
    rgba = np.ascontiguousarray(rgba, dtype=np.uint8)
    h, w = rgba.shape[:2]
    image = QtGui.QImage(rgba.data, w, h, w * 4, QtGui.QImage.Format.Format_RGBA8888)
    return image.convertToFormat(QtGui.QImage.Format.Format_ARGB32_Premultiplied)


def _is_rgba_as_is(image: np.ndarray | None, levels: object, lut: object) -> bool:
    """Whether pyqtgraph would draw ``image``'s bytes unchanged: uint8 RGBA, levels 0-255, no
    colour table (how the heatmap's overlays are set)."""
    if image is None or image.ndim != 3 or image.shape[2] != 4 or image.dtype != np.uint8 or lut is not None:
        return False
    flat = np.asarray(levels, dtype=float).ravel() if levels is not None else None
    return flat is not None and flat.shape == (2,) and flat[0] == 0.0 and flat[1] == 255.0


class FastImageItem(pg.ImageItem):
    """An ImageItem that renders big matrices faster and hands Qt the format it scales quickly.

    * pyqtgraph renders a single-channel image through a colour table as ``Format_Indexed8``
      and RGBA as straight ``Format_ARGB32``. Qt's raster engine has no fast path for scaling
      either: stretching a 1x10 Indexed8 image over a 900x330 plot took 1.5 ms at every repaint,
      the same image as ``ARGB32_Premultiplied`` 0.17 ms. Converting once per render (the image
      is small, or already downsampled to about the screen's size) pays for itself at once.
    * With ``autoDownsample`` pyqtgraph averages blocks of cells with two ``mean`` calls: ~90 ms
      for 4096x4096 on the GUI thread. ``paint.block_mean`` gives the same block averages with a
      few strided additions.
    """

    # pyqtgraph's own attributes that render swaps or replaces (typed here: pyqtgraph is not).
    image: np.ndarray | None
    autoDownsample: bool
    qimage: QtGui.QImage | None

    def render(self) -> None:
        image = self.image
        if image is not None and self.axisOrder == "row-major" and _is_rgba_as_is(image, self.levels, self.lut):
            # An overlay (masked cells hatched, several pixels a cell): pyqtgraph's general path
            # took 5 ms for a 384x384 one at each first paint; Qt converts the bytes in 1.
            self.qimage = rgba_qimage(image)
            self._renderRequired = False
            self._unrenderable = False
            return
        factors = self._computeDownsampleFactors() if self.autoDownsample and image is not None else (1, 1)
        if image is not None and image.ndim == 2 and self.axisOrder == "row-major" and factors != (1, 1):
            ky, kx = factors[1], factors[0]  # row-major: x runs along axis 1
            if image.shape[0] // ky and image.shape[1] // kx:
                # pyqtgraph renders the averaged image as its own (no second downsampling),
                # then gets the full matrix back: the item's size and hover stay per cell.
                self.image, self.autoDownsample = block_mean(image, ky, kx), False
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
        if (
            qimage is not None
            and not self._unrenderable
            and qimage.format() != QtGui.QImage.Format.Format_ARGB32_Premultiplied
        ):
            # The converted copy owns its pixels (the original may view a reused numpy buffer).
            self.qimage = qimage.convertToFormat(QtGui.QImage.Format.Format_ARGB32_Premultiplied)


#: ``source(frame)``: the image to draw for what is on screen and the cells it covers
#: (x, y, width, height), or None for nothing.
PictureSource = Callable[[Frame], "tuple[np.ndarray, tuple[float, float, float, float]] | None"]


class RegionImageItem(FastImageItem):
    """A FastImageItem that, given a picture source, draws only what is on screen.

    The item keeps the whole matrix as its ``image`` (its size, bounds and hover stay per cell),
    but with a source set it renders what the source gives for the visible cells and the pixels
    they cover (``prepare.picture``: a screen's worth, whatever the matrix's size), and renders
    again whenever the view moves. Without a source it is a FastImageItem.
    """

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self._source: PictureSource | None = None
        self._target: tuple[np.ndarray, QtCore.QRectF] | None = None

    @property
    def source(self) -> PictureSource | None:
        return self._source

    def set_source(self, source: PictureSource | None) -> None:
        """Draw what ``source`` gives (call after ``setImage`` of the whole matrix), or with None
        the image as a FastImageItem does."""
        if source is None and self._source is None:
            return  # drawing whole already (every set_data of a small matrix comes here)
        if source is not None:
            self.resetTransform()  # the pictures are placed in cells, not stretched
            self.autoDownsample = False  # the source gives a screen's worth already
        self._source = source
        self._target = None
        self.qimage = None
        self._renderRequired = True
        self.update()

    def viewTransformChanged(self) -> None:
        if self._source is None:
            super().viewTransformChanged()
            return
        # Another part of the matrix, or another zoom: the picture is of a frame.
        self._renderRequired = True
        self.update()

    def frame(self) -> Frame | None:
        """The visible cells and the device pixels they cover (None: nothing of it on screen)."""
        view = self.getViewBox()
        image = self.image
        origin = self.mapToDevice(QtCore.QPointF(0, 0))
        if view is None or image is None or origin is None:
            return None
        sx = math.hypot(*(self.mapToDevice(QtCore.QPointF(1, 0)) - origin).toTuple())
        sy = math.hypot(*(self.mapToDevice(QtCore.QPointF(0, 1)) - origin).toTuple())
        (x0, x1), (y0, y1) = view.viewRange()
        rows, cols = image.shape[:2]
        x0, x1, y0, y1 = max(0.0, x0), min(float(cols), x1), max(0.0, y0), min(float(rows), y1)
        if x1 <= x0 or y1 <= y0 or sx <= 0 or sy <= 0:
            return None
        return Frame(x0, x1, y0, y1, max(1, math.ceil((x1 - x0) * sx)), max(1, math.ceil((y1 - y0) * sy)))

    def render(self) -> None:
        if self._source is None:
            super().render()
            return
        frame = self.frame()
        got = None if frame is None else self._source(frame)
        if got is None:
            self._target = None
            self.qimage = None
            self._renderRequired = False
            self._unrenderable = True
            return
        picture, (x, y, w, h) = got
        self._target = (picture, QtCore.QRectF(x, y, w, h))
        if picture.ndim == 3:
            # RGBA bytes (an overlay): Qt converts them itself, 5x faster than pyqtgraph.
            self.qimage = rgba_qimage(picture)
            self._renderRequired = False
            self._unrenderable = False
            return
        whole, self.image = self.image, picture
        self._imageHasNans = None  # pyqtgraph's NaN cache is of the image it last rendered
        self._imageNanLocations = None
        try:
            super().render()
        finally:
            self.image = whole
            self._imageHasNans = None
            self._imageNanLocations = None

    def paint(self, painter: QtGui.QPainter, *args: object) -> None:
        if self._source is None:
            super().paint(painter, *args)
            return
        if self._renderRequired:
            self.render()
        if self._target is None or self.qimage is None:
            return
        picture, rect = self._target
        # pyqtgraph's paint draws the image over (0, 0, its width, its height): given the
        # picture as the image, and the painter moved and scaled onto the picture's cells.
        h, w = picture.shape[:2]
        whole, self.image = self.image, picture
        painter.save()
        try:
            painter.translate(rect.x(), rect.y())
            painter.scale(rect.width() / w, rect.height() / h)
            super().paint(painter, *args)
        finally:
            painter.restore()
            self.image = whole
