"""The numbers printed inside the cells of a small heatmap, drawn by one graphics item.

The first version used one ``pg.TextItem`` per cell. Each is a ``QGraphicsTextItem`` with its own
text document: setting new digits re-lays out that document (~45 µs), and every item is painted
through Python. A 16x16 heatmap edited live spent over 10 ms per keystroke on its digits alone.
This item keeps the texts in a list and paints them all in one pass with ``QPainter.drawText``
at a fixed pixel size, whatever the zoom: the cell centres are mapped to device pixels once per
paint, and the text is drawn there with the transform reset.

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

# A little air between the digits and the cell edge, in pixels.
_PAD = 2.0


@dataclass(frozen=True)
class CellText:
    """One cell's printed value, as the layer draws it."""

    row: int
    col: int
    text: str
    color: QtGui.QColor
    on_mask: bool  # drawn on a solid patch of the mask grey (the cell is hatched)


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
        self._font = QtGui.QFont()
        self._widths: list[float] = []
        self._height = 0.0

    # ------------------------------------------------------------------ content

    def set_cells(self, shape: tuple[int, int], texts: Sequence[str], dark: np.ndarray, on_mask: np.ndarray) -> None:
        """Texts in row-major order; ``dark``/``on_mask`` are bool per cell (dark digits, grey patch)."""
        rows, cols = shape
        if len(texts) != rows * cols:
            raise ValueError(f"{len(texts)} texts for a {rows}x{cols} grid")
        dark = np.asarray(dark, dtype=bool).reshape(-1)
        on_mask = np.asarray(on_mask, dtype=bool).reshape(-1)
        texts = list(texts)
        if (shape == self._shape and texts == self._texts and np.array_equal(dark, self._dark)
                and np.array_equal(on_mask, self._on_mask)):
            return  # nothing to redraw
        if shape != self._shape:
            self.prepareGeometryChange()
            self._shape = (rows, cols)
        self._texts = texts
        self._dark = dark
        self._on_mask = on_mask
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
            CellText(i // cols, i % cols, text, self._dark_text if self._dark[i] else self._light_text,
                     bool(self._on_mask[i]))
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

    def paint(self, painter: QtGui.QPainter, option: QtWidgets.QStyleOptionGraphicsItem,
              widget: QtWidgets.QWidget | None = None) -> None:
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
        h = self._height
        painter.save()
        try:
            painter.setWorldTransform(QtGui.QTransform())
            painter.setFont(self._font)
            painter.setRenderHint(QtGui.QPainter.RenderHint.TextAntialiasing, True)
            align = QtCore.Qt.AlignmentFlag.AlignCenter
            for r in range(r0, r1):
                y = sy * (r + 0.5) + dy
                for c in range(c0, c1):
                    i = r * cols + c
                    w = self._widths[i]
                    rect = QtCore.QRectF(sx * (c + 0.5) + dx - w / 2, y - h / 2, w, h)
                    if self._on_mask[i]:
                        # On hatched cells the stripes would run through the digits: a solid
                        # patch of the mask grey keeps them legible, the hatch shows around it.
                        painter.fillRect(rect, self._mask_fill)
                    painter.setPen(self._dark_text if self._dark[i] else self._light_text)
                    painter.drawText(rect, align, self._texts[i])
        finally:
            painter.restore()

    # ------------------------------------------------------------------ helpers

    def _measure(self) -> None:
        metrics = QtGui.QFontMetricsF(self._font)
        self._widths = [metrics.horizontalAdvance(t) + _PAD for t in self._texts]
        self._height = metrics.height()

    def _fits(self, transform: QtGui.QTransform) -> bool:
        if not self._widths:
            return False
        cell_w, cell_h = abs(transform.m11()), abs(transform.m22())
        return cell_w >= max(self._widths) and cell_h >= self._height * 0.9
