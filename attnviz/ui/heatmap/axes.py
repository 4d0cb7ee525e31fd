"""A heatmap's title, axis names and tick labels: their text, fonts, colours and room.

Rows and columns are labelled one by one (elided) while there are at most ``label_limit`` of
them, else the axis picks integer ticks itself.  The default axis names ("Keys", "Queries")
follow the language; a name the owner gives is the owner's, set again in its own retranslate.
"""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from attnviz.ui.heatmap.items import CellAxisItem, fit_colorbar_labels, hold_tick_room
from attnviz.ui.heatmap.plot import MapPlot
from attnviz.ui.i18n import translate

__all__ = ["MapAxes"]

# Tick labels longer than this are elided so one long token cannot eat the plot's width;
# the full label is still shown in the hover text.
_MAX_TICK_LABEL_CHARS = 14


def _elide(label: str) -> str:
    return label if len(label) <= _MAX_TICK_LABEL_CHARS else label[: _MAX_TICK_LABEL_CHARS - 1] + "…"


class MapAxes(MapPlot):
    """The title and the axes of a heatmap (its colour bar's axis included: fonts and colours)."""

    #: The title's text is now this many pixels high (it wrapped or unwrapped): maps kept level
    #: follow.
    titleHeightChanged = QtCore.Signal(float)

    def _init_axes(self, title: str, x_label: str | None, y_label: str | None) -> None:
        #: Label every row/col when there are at most this many; beyond that the axis picks
        #: integer ticks itself.
        self.label_limit: int = 32
        # Default axis names follow the language; names the owner gives are the owner's to
        # translate again (it sets them in its own retranslate).
        self._default_labels = (x_label is None, y_label is None)
        self._title = title
        self._x_label = x_label if x_label is not None else translate("Heatmap", "Keys")
        self._y_label = y_label if y_label is not None else translate("Heatmap", "Queries")
        self._label_room: tuple[str, str] | None = None  # see hold_label_room
        self._shown_title = ""  # the title as drawn, broken into lines (``_wrapped_title``)
        self._title_hold = 0.0  # the least height of the title's row (``hold_title_height``)
        self._title_text_height = 0.0  # the title's text as drawn, in pixels

    @property
    def title(self) -> str:
        return self._title

    def set_title(self, title: str) -> None:
        if title == self._title:
            return
        self._title = title
        self._apply_title()  # only the title: new fonts for the axes would redraw them all

    @property
    def title_height(self) -> float:
        """How high the title's text is as drawn, in pixels (0: no title)."""
        return getattr(self, "_title_text_height", 0.0)

    def hold_title_height(self, height: float) -> None:
        """The title's row at least ``height`` pixels high: maps side by side keep their plots
        level when one of their titles wraps (a wrapped title pushed its map down, and the two
        maps no longer lined up)."""
        if abs(height - self._title_hold) > 0.5:
            self._title_hold = height
            if self._title:
                self._apply_title()

    def _name_axes(self, x_label: str | None, y_label: str | None) -> None:
        """Show these axis names (None: that axis keeps its name)."""
        if (x_label is None or x_label == self._x_label) and (y_label is None or y_label == self._y_label):
            return
        if x_label is not None:
            self._x_label = x_label
        if y_label is not None:
            self._y_label = y_label
        self._apply_fonts()

    def _keep_owners_names(self, x_label: str | None, y_label: str | None) -> None:
        """Names given by the owner (not None) are no longer the defaults a language switch resets."""
        default_x, default_y = self._default_labels
        self._default_labels = (default_x and x_label is None, default_y and y_label is None)

    def _default_names(self) -> tuple[str | None, str | None]:
        """The default names ("Keys", "Queries") in the current language, for the axes still named
        by default (None for an axis its owner named)."""
        default_x, default_y = self._default_labels
        return (
            translate("Heatmap", "Keys") if default_x else None,
            translate("Heatmap", "Queries") if default_y else None,
        )

    def hold_label_room(self, rows: str, cols: str) -> None:
        """Keep room for row labels as wide as ``rows`` (and column labels as tall as ``cols``)
        from the start, never giving it back when labels get shorter: a map whose labels change
        with every result (a long input's bins and tiles) is then laid out, and painted, once
        per result instead of again after each paint measured new labels."""
        self._label_room = (rows, cols)
        self._apply_fonts()

    def _apply_axis_colors(self) -> None:
        fg = self._plot_colors.foreground
        for side in ("left", "bottom", "top", "right"):
            axis = self._plot.getAxis(side)
            axis.setPen(fg)
            axis.setTextPen(fg)
        self._colorbar.axis.setPen(fg)
        self._colorbar.axis.setTextPen(fg)

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
        fit_colorbar_labels(self._colorbar.axis, shrink=True)
        self._fit_colorbar_labels()  # the ticks that fit the bar in the new type size
        for side, text in (("bottom", self._x_label), ("left", self._y_label)):
            axis = self._plot.getAxis(side)
            # Passing any CSS replaces AxisItem's whole label style, including the colour it
            # derives from the text pen (the label would turn black on black): so restate it.
            axis.setLabel(text, **{"color": axis.textPen().color().name(), "font-size": label_pt})
        self._apply_title()

    def _apply_title(self) -> None:
        before = self.title_height
        self._apply_title_text()
        if abs(self.title_height - before) > 0.5:
            self.titleHeightChanged.emit(self.title_height)

    def _apply_title_text(self) -> None:
        if self._title:
            self._shown_title = self._wrapped_title()
            self._plot.setTitle(
                self._shown_title,
                size=f"{self._base_pt * 1.3 * self._font_scale:.1f}pt",
                color=self._plot_colors.foreground,
            )
            # pyqtgraph keeps the width of a longer title before, and a row of 30 px: the label
            # measures its lines again, and the row is as tall as they are.
            label = self._plot.titleLabel
            metrics, room = self._title_room()
            if "<br>" not in self._shown_title and metrics.horizontalAdvance(self._title) <= 0.8 * room:
                # A title well within the room stays one line. QGraphicsTextItem.adjustSize()
                # picks a "reasonable" width, about sqrt(5/3 x area), and wrapped such a title
                # onto three lines over a map with room for it (Layers x heads).
                label.item.setTextWidth(-1)
            else:
                # Near the edge the room above is only an estimate (presentation type enlarges
                # the axes): the narrower block adjustSize makes keeps the map in its view.
                label.item.adjustSize()
            label.updateMin()
            text_height = self._title_text_height = label.item.boundingRect().height()
            height = max(30.0, text_height, self._title_hold)
            label.setMaximumHeight(height)
            self._plot.layout.setRowFixedHeight(0, height)
        else:
            self._shown_title = ""
            self._title_text_height = 0.0
            self._plot.setTitle(None)

    def _wrapped_title(self) -> str:
        """The title broken into lines that fit the widget's width: pyqtgraph lays a plot out as
        wide as its title, and a view narrower than that cuts the map's right side off (and the
        title with it) instead of wrapping."""
        metrics, room = self._title_room()
        lines: list[str] = []
        for word in self._title.split(" "):
            if lines and metrics.horizontalAdvance(f"{lines[-1]} {word}") <= room:
                lines[-1] = f"{lines[-1]} {word}"
            else:
                lines.append(word)
        return "<br>".join(lines)

    def _title_room(self) -> tuple[QtGui.QFontMetricsF, float]:
        """The title's font metrics and the width it may take, in pixels."""
        font = QtGui.QFont(QtWidgets.QApplication.font())
        font.setPointSizeF(self._base_pt * 1.3 * self._font_scale)
        # The title sits over the map only: the row labels' axis and the colour bar take the rest.
        beside = self._plot.getAxis("left").width() + self._colorbar.width() + 24.0
        return QtGui.QFontMetricsF(font), max(80.0, self.width() - beside)

    def _rewrap_title(self) -> None:
        """After a resize: the title again, only if its lines change (a new title lays the plot
        out and paints it again)."""
        if getattr(self, "_title", "") and self._wrapped_title() != getattr(self, "_shown_title", ""):
            self._apply_title()

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
