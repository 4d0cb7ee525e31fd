"""The numbers printed inside the cells of a small heatmap, drawn by one graphics item.

The first version used one ``pg.TextItem`` per cell. Each is a ``QGraphicsTextItem`` with its own
text document: setting new digits re-lays out that document (~45 µs), and every item is painted
through Python. A 16x16 heatmap edited live spent over 10 ms per keystroke on its digits alone.
This item keeps the texts in a list, lays each distinct one out once (``QStaticText``) and paints
them all in one pass at a fixed pixel size, whatever the zoom: the cell centres are mapped to
device pixels once per paint, and the texts are drawn there with the transform reset.

When the cells are too small for the widest text, nothing is drawn (overlapping digits are
noise); that is decided at paint time from the current transform, so zooming and resizing need
no bookkeeping.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

__all__ = ["CellText", "CellTextLayer"]

_HALO_OFFSETS = ((-1.0, 0.0), (1.0, 0.0), (0.0, -1.0), (0.0, 1.0))

# Air between neighbouring values, as a share of the font's height: with a mere two pixels a
# row of narrow cells read as one run of digits ("0.50 0.50 0.00...").
_GAP = 0.6


@dataclass(frozen=True)
class CellText:
    """One cell's printed value, as the layer draws it."""

    row: int
    col: int
    text: str
    color: QtGui.QColor
    on_mask: bool  # drawn on a solid patch of the mask grey (the cell is hatched)
    halo: bool = False  # outlined in the opposite colour (the cell is striped)


class CellTextLayer(pg.GraphicsObject):
    """Texts centred in the cells of a ``rows`` x ``cols`` grid (cell (r, c) spans [c, c+1) x [r, r+1))."""

    def __init__(self, dark_text: QtGui.QColor, light_text: QtGui.QColor, mask_fill: QtGui.QColor) -> None:
        super().__init__()
        self._dark_text = QtGui.QColor(dark_text)
        self._light_text = QtGui.QColor(light_text)
        self._mask_fill = QtGui.QColor(mask_fill)
        self._shape: tuple[int, int] = (0, 0)
        self._texts: list[str] = []
        self._dark = np.zeros(0, dtype=bool)
        self._on_mask = np.zeros(0, dtype=bool)
        self._halo = np.zeros(0, dtype=bool)
        self._font = QtGui.QFont()
        self._widths = np.zeros(0)  # per cell: its text's width plus padding (the grey patch)
        self._height = 0.0
        self._static: dict[str, QtGui.QStaticText] = {}
        self._static_font = QtGui.QFont()
        # Per cell, row-major: its laid-out text and half its size.
        self._cell_static: list[QtGui.QStaticText] = []
        self._half_w = np.zeros(0)
        self._half_h = np.zeros(0)

    # ------------------------------------------------------------------ content

    def set_cells(
        self,
        shape: tuple[int, int],
        texts: Sequence[str],
        dark: np.ndarray,
        on_mask: np.ndarray,
        halo: np.ndarray | None = None,
    ) -> None:
        """Texts in row-major order; ``dark``/``on_mask``/``halo`` are bool per cell (dark digits,
        a grey patch under them, an outline in the opposite colour where stripes cross them)."""
        rows, cols = shape
        if len(texts) != rows * cols:
            raise ValueError(f"{len(texts)} texts for a {rows}x{cols} grid")
        dark = np.asarray(dark, dtype=bool).reshape(-1)
        on_mask = np.asarray(on_mask, dtype=bool).reshape(-1)
        halo = np.zeros(len(texts), dtype=bool) if halo is None else np.asarray(halo, dtype=bool).reshape(-1)
        texts = list(texts)
        if (
            shape == self._shape
            and texts == self._texts
            and np.array_equal(dark, self._dark)
            and np.array_equal(on_mask, self._on_mask)
            and np.array_equal(halo, self._halo)
        ):
            return  # nothing to redraw
        if shape != self._shape:
            self.prepareGeometryChange()
            self._shape = (rows, cols)
        self._texts = texts
        self._dark = dark
        self._on_mask = on_mask
        self._halo = halo
        self._measure()
        self.update()

    def clear(self) -> None:
        self.set_cells((0, 0), [], np.zeros(0, bool), np.zeros(0, bool))

    def set_font(self, font: QtGui.QFont) -> None:
        if font == self._font:
            return
        self._font = QtGui.QFont(font)
        self._measure()
        self.update()

    @property
    def font(self) -> QtGui.QFont:
        return QtGui.QFont(self._font)

    def cells(self) -> tuple[CellText, ...]:
        cols = self._shape[1]
        return tuple(
            CellText(
                i // cols,
                i % cols,
                text,
                self._dark_text if self._dark[i] else self._light_text,
                bool(self._on_mask[i]),
                bool(self._halo[i]),
            )
            for i, text in enumerate(self._texts)
        )

    def legible(self) -> bool:
        """Whether the texts are drawn at the current size of the cells on screen."""
        transform = self.deviceTransform_()  # pyqtgraph: item -> device pixels, None off screen
        return transform is not None and self._fits(transform)

    # ------------------------------------------------------------------ drawing

    def boundingRect(self) -> QtCore.QRectF:
        rows, cols = self._shape
        return QtCore.QRectF(0, 0, cols, rows)

    def paint(
        self,
        painter: QtGui.QPainter,
        option: QtWidgets.QStyleOptionGraphicsItem,
        widget: QtWidgets.QWidget | None = None,
    ) -> None:
        if not self._texts:
            return
        transform = painter.worldTransform()  # cell coordinates -> device pixels (no rotation)
        if not self._fits(transform):
            return
        rows, cols = self._shape
        # Only the cells the repaint exposes (a hover tooltip or a single changed cell repaints
        # a small region).
        exposed = option.exposedRect
        r0, r1 = max(0, int(np.floor(exposed.top()))), min(rows, int(np.ceil(exposed.bottom())))
        c0, c1 = max(0, int(np.floor(exposed.left()))), min(cols, int(np.ceil(exposed.right())))
        if r0 >= r1 or c0 >= c1:
            return
        sx, sy, dx, dy = transform.m11(), transform.m22(), transform.dx(), transform.dy()
        # Exposed cells, row-major, and their centres in device pixels.
        rr, cc = np.meshgrid(np.arange(r0, r1), np.arange(c0, c1), indexing="ij")
        idx = (rr * cols + cc).ravel()
        cx = sx * (cc.ravel() + 0.5) + dx
        cy = sy * (rr.ravel() + 0.5) + dy
        painter.save()
        try:
            painter.setWorldTransform(QtGui.QTransform())
            painter.setFont(self._font)  # drawStaticText draws in the painter's font
            painter.setRenderHint(QtGui.QPainter.RenderHint.TextAntialiasing, True)
            # On hatched cells the stripes would run through the digits: a solid patch of the
            # mask grey keeps them legible, the hatch shows around it.
            patch = self._on_mask[idx]
            if patch.any():
                w = self._widths[idx[patch]]
                h = self._height
                for x, y, wi in zip((cx[patch] - w / 2).tolist(), (cy[patch] - h / 2).tolist(), w.tolist()):
                    painter.fillRect(QtCore.QRectF(x, y, wi, h), self._mask_fill)
            # Texts laid out once (QStaticText: drawText laid out each of 256 texts again at every
            # paint, ~11 µs each), and one pen change per colour.
            left = cx - self._half_w[idx]
            top = cy - self._half_h[idx]
            statics = self._cell_static
            halo = self._halo[idx]
            for dark, color, outline in (
                (True, self._dark_text, self._light_text),
                (False, self._light_text, self._dark_text),
            ):
                chosen = self._dark[idx] == dark
                if not chosen.any():
                    continue
                ringed = chosen & halo
                if ringed.any():
                    # Light stripes across a dark cell would cut light digits: a one-pixel
                    # outline in the opposite colour keeps every digit's edge.
                    painter.setPen(outline)
                    for i, x, y in zip(idx[ringed].tolist(), left[ringed].tolist(), top[ringed].tolist()):
                        for ox, oy in _HALO_OFFSETS:
                            painter.drawStaticText(QtCore.QPointF(x + ox, y + oy), statics[i])
                painter.setPen(color)
                for i, x, y in zip(idx[chosen].tolist(), left[chosen].tolist(), top[chosen].tolist()):
                    painter.drawStaticText(QtCore.QPointF(x, y), statics[i])
        finally:
            painter.restore()

    # ------------------------------------------------------------------ helpers

    def _measure(self) -> None:
        metrics = QtGui.QFontMetricsF(self._font)
        gap = _GAP * metrics.height()
        self._widths = np.array([metrics.horizontalAdvance(t) + gap for t in self._texts])
        self._height = metrics.height()
        # One laid-out text per distinct string (many cells show the same "0.00").
        if self._static_font != self._font:
            self._static.clear()
            self._static_font = QtGui.QFont(self._font)
        for text in set(self._texts) - self._static.keys():
            static = QtGui.QStaticText(text)
            static.setTextFormat(QtCore.Qt.TextFormat.PlainText)
            static.setPerformanceHint(QtGui.QStaticText.PerformanceHint.AggressiveCaching)
            static.prepare(QtGui.QTransform(), self._font)
            self._static[text] = static
        if len(self._static) > 4 * len(self._texts) + 64:  # live edits keep making new strings
            self._static = {t: self._static[t] for t in set(self._texts)}
        self._cell_static = [self._static[t] for t in self._texts]
        sizes = [static.size() for static in self._cell_static]
        self._half_w = np.array([z.width() / 2 for z in sizes])
        self._half_h = np.array([z.height() / 2 for z in sizes])

    def _fits(self, transform: QtGui.QTransform) -> bool:
        if not self._widths.size:
            return False
        cell_w, cell_h = abs(transform.m11()), abs(transform.m22())
        return cell_w >= self._widths.max() and cell_h >= self._height * 0.9
