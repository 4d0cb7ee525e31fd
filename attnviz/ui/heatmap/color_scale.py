"""A heatmap's colour scale: the colour map of the data image and the colour bar beside it.

The bar is not interactive: its levels are always the ones the map was drawn with (weights
0..1, or the finite range of scores, or their log10), never dragged to something the numbers no
longer say.  A flat map's bar says "constant".
"""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6 import QtGui

from attnviz.ui.heatmap import paint
from attnviz.ui.heatmap.colormaps import canonical_colormap_name, load_colormap, lookup_table
from attnviz.ui.heatmap.items import fit_colorbar_labels
from attnviz.ui.heatmap.paint import Levels
from attnviz.ui.heatmap.plot import MapPlot
from attnviz.ui.i18n import translate

__all__ = ["MapColorScale"]


class MapColorScale(MapPlot):
    """The colour map and the colour bar of a heatmap."""

    @property
    def colorbar(self) -> pg.ColorBarItem:
        return self._colorbar

    @property
    def constant(self) -> float | None:
        """The value of every cell of a flat map (its colour bar says "constant"), else None."""
        return self._constant

    @property
    def log_scale(self) -> bool:
        return self._log

    @property
    def levels(self) -> Levels:
        """The colour range (low, high) the values are drawn with."""
        return self._levels

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

    def _apply_colormap(self, name: str) -> None:
        """Draw the data and the bar with one of COLORMAPS (case-insensitive; "grey"/"greys"
        mean "gray")."""
        key = canonical_colormap_name(name)
        self._colormap_name = key
        self._image.setLookupTable(lookup_table(key))
        self._colorbar.setColorMap(load_colormap(key))

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
        self._bar_ticks = ticks
        self._bar_room = -1.0
        self._thin_colorbar_ticks()

    def _thin_colorbar_ticks(self) -> None:
        """The bar's ticks that fit its height: both ends (the top one alone on a bar shorter than a
        line), and the inner ones a line of text apart (a short bar in large type, presentation
        mode's one-row maps, drew them on top of each other)."""
        ticks: list[tuple[float, str]] = getattr(self, "_bar_ticks", [])
        if not ticks:
            return
        axis = self._colorbar.axis
        height = float(axis.height()) if axis.height() > 1 else float(self._vb.height())
        if height == self._bar_room:
            return
        self._bar_room = height
        font = axis.style["tickFont"] or QtGui.QFont(axis.font())
        line = QtGui.QFontMetricsF(font).height() * 1.15
        lo, hi = self._scale_levels()
        shown = ticks
        if height > 1 and hi > lo and len(ticks) > 2:
            # Greedy from the bottom: a tick as far from the last one kept, and from the top end,
            # as a line of text.
            per_unit = height / (hi - lo)
            shown = [ticks[0]]
            for tick in ticks[1:-1]:
                if (tick[0] - shown[-1][0]) * per_unit >= line and (ticks[-1][0] - tick[0]) * per_unit >= line:
                    shown.append(tick)
            shown.append(ticks[-1])
        if 1 < height < line and len(shown) > 1:
            # A bar shorter than a line of text (a one-row map on a slide) cannot hold both its
            # ends' labels apart: the top one, the largest value, alone.
            shown = [shown[-1]]
        axis.setTicks([shown, []])
        fit_colorbar_labels(axis)
        # The bar's labels are part of what the title leaves room for ("0.25" is wider than "1").
        self._rewrap_title()

    def _fit_colorbar_labels(self) -> None:
        self._bar_room = -1.0  # a new type size: measure again
        self._thin_colorbar_ticks()

    def _on_view_resized(self) -> None:
        super()._on_view_resized()
        self._thin_colorbar_ticks()
