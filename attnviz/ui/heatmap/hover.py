"""What a heatmap says about the cell under the mouse, and its tooltips.

The scene reports every mouse move; it is mapped to a cell here (a plain ``floor`` of the view
coordinates), and the text is made only when the cell changes: no callback, no signal per pixel.
The hover text follows the mouse as a tooltip shown right away; the widget's, the axes' and the
colour bar's tooltips describe the map, its legend and its rows with no valid key.
"""

from __future__ import annotations

import math

from PySide6 import QtCore, QtWidgets
from PySide6.QtCore import Signal

from attnviz.ui.heatmap import paint
from attnviz.ui.heatmap.axes import MapAxes
from attnviz.ui.i18n import translate

__all__ = ["MapHover"]

# How many empty rows to spell out in a tooltip before summarising.
_MAX_LISTED_EMPTY_ROWS = 24


class MapHover(MapAxes):
    """Hover, clicks and tooltips of a heatmap (the tooltips name its axes)."""

    #: (row, col) of the cell under the mouse, emitted when it changes.
    cellHovered = Signal(int, int)
    #: (row, col, Qt keyboard modifiers) of a cell clicked.
    cellClicked = Signal(int, int, object)
    #: The map was clicked anywhere (a small multiple chosen by a click, say).
    clicked = Signal()

    def _init_hover(self) -> None:
        self._hover_cell: tuple[int, int] | None = None
        self._hover_text: str = ""
        # Hover: the scene reports every mouse move; we map it to a cell ourselves.
        self._view.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self._view.scene().sigMouseClicked.connect(self._on_mouse_clicked)

    @property
    def hover_text(self) -> str:
        """Text of the last hovered cell ("" when the mouse is not over a cell)."""
        return self._hover_text

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
