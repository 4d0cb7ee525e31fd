"""A labelled matrix heatmap for attention weights and scores: ``HeatmapWidget`` and its API.

The widget is put together from one class per idea, each in its own module of this package:

* ``plot.MapPlot``: the view, the plot, the data image and the colour bar, and the map on show
  (values, mask, levels, labels, view range; a big prepared matrix drawn a screen at a time);
* ``axes.MapAxes``: title, axis names, tick labels, their fonts, colours and room;
* ``color_scale.MapColorScale``: the colour map and the colour bar's levels and ticks;
* ``overlays.MapOverlays``: hatching of masked cells, flags of empty rows and NaN/inf cells,
  outlined rows, printed cell values;
* ``hover.MapHover``: the cell under the mouse, clicks, tooltips.

This module keeps what users of the widget call: showing a matrix (``set_data``,
``show_prepared``) and the settings that reach several parts at once (axis names, colour map,
theme, font scale, language).  The paint maths is numpy only (``paint.py``, ``prepare.py``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from attnviz.ui.heatmap.color_scale import MapColorScale
from attnviz.ui.heatmap.colormaps import COLORMAPS, DEFAULT_COLORMAP
from attnviz.ui.heatmap.hover import MapHover
from attnviz.ui.heatmap.overlays import MapOverlays
from attnviz.ui.heatmap.paint import WEIGHT_LEVELS, Levels
from attnviz.ui.heatmap.plot import HoverFn
from attnviz.ui.heatmap.prepare import PreparedMap, prepare_map
from attnviz.ui.i18n import translate
from attnviz.ui.theme import PlotColors, plot_colors

__all__ = ["COLORMAPS", "PRESENTATION_SCALE", "HeatmapWidget", "HoverFn"]

#: How much presentation mode (F5) enlarges the text of every heatmap and plot.
PRESENTATION_SCALE = 1.8


class HeatmapWidget(MapHover, MapOverlays, MapColorScale):
    """Attention-matrix heatmap: queries down, keys across, with colour bar and annotations.

    Signals (``hover.MapHover``):
        cellHovered(int, int): (row, col) of the cell under the mouse, emitted when it changes.
        cellClicked(int, int, object): (row, col, Qt keyboard modifiers) of a cell clicked.
        clicked(): the map was clicked anywhere (a small multiple chosen by a click, say).

    Public attributes (plain, settable before the next ``set_data``):
        annotate_limit: print each cell's value when rows <= limit and cols <= limit (16).
        label_limit: label every row/col when there are at most this many (32); beyond that the
            axis picks integer ticks itself.
        value_format: format spec for annotations (e.g. ".3f"); None picks 2 decimals when the
            levels are (0, 1) (weights) and 3 significant digits otherwise (scores).
        show_masked_values: masked cells whose value is not zero keep their colour under light
            stripes (False: opaque grey).
        overlay_pixels: about how many pixels a side the hatching is drawn with.
    """

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
        super().__init__(parent, colormap=colormap)
        self._init_overlays()
        self._init_axes(title, x_label, y_label)
        self._init_hover()
        self.setAccessibleName(translate("Heatmap", "Attention heatmap"))
        # 2x10 weights stay legible: ten "0.50" columns plus the axis and colour bar.
        self.setMinimumSize(480, 200)
        self._apply_axis_colors()
        self._apply_fonts()
        self._update_tooltips()

    def sizeHint(self) -> QtCore.QSize:
        return QtCore.QSize(640, 420)

    def set_axis_labels(self, x_label: str | None = None, y_label: str | None = None) -> None:
        """Name the axes (None: that axis keeps its name). A name given here is the owner's: a
        language switch leaves it alone (the owner sets it again in its own language)."""
        self._keep_owners_names(x_label, y_label)
        self._name_axes(x_label, y_label)
        self._update_tooltips()  # also with the same names: the tooltips may be in another language

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

    def clear(self) -> None:
        """Show nothing (keeps colour map, labels and font scale)."""
        self.set_data(np.zeros((0, 0)))

    def set_colormap(self, name: str) -> None:
        """Switch to one of COLORMAPS (case-insensitive; "grey"/"greys" mean "gray")."""
        self._apply_colormap(name)
        # The special colours are fixed, but annotation text contrast depends on the map.
        self._update_annotations()
        self._update_tooltips()

    def set_plot_colors(self, colors: PlotColors) -> None:
        """Background and axis/text colours (light or dark theme)."""
        self._plot_colors = colors
        self._view.setBackground(colors.background)
        self._apply_axis_colors()
        self._apply_fonts()

    def set_font_scale(self, f: float) -> None:
        """Scale title, axis labels, tick labels and annotations (presentation mode)."""
        if not (f > 0 and math.isfinite(f)):
            raise ValueError(f"font scale must be a positive number, got {f!r}")
        self._font_scale = float(f)
        self._apply_fonts()
        self._update_annotations()

    def set_wheel_zoom(self, on: bool) -> None:
        """Whether the mouse wheel zooms into the map (True) or scrolls what holds it."""
        self._view.zoom_on_wheel = on

    def resizeEvent(self, event: QtGui.QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self._rewrap_title()

    def changeEvent(self, event: QtCore.QEvent) -> None:
        kind = event.type()
        if kind == QtCore.QEvent.Type.LanguageChange:
            self._name_axes(*self._default_names())
            self._update_tooltips()
            self.setAccessibleName(translate("Heatmap", "Attention heatmap"))
        elif kind == QtCore.QEvent.Type.PaletteChange:
            colors = plot_colors()
            if colors != self._plot_colors:
                self.set_plot_colors(colors)
        super().changeEvent(event)

    def render_image(self, path: str | Path) -> bool:
        """Save exactly what ``grab()`` shows (format from the file suffix).  Returns success."""
        return self.grab().save(str(path))
