"""The figures ``attnviz render`` draws beyond the window's export: token labels on the weight
maps, and every head of a layer as a grid of small maps under one colour scale.

Laid out off screen from the app's own heatmap widgets, so a picture looks as the window does.
A QApplication must exist (``attnviz.cli.render`` makes one).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QApplication,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from attnviz.compute import ViewData
from attnviz.state.run import HeadView
from attnviz.text.safe import printable
from attnviz.text.tr import QT_TRANSLATE_NOOP, message
from attnviz.ui.files.export import WeightsFigure
from attnviz.ui.heatmap.colormaps import DEFAULT_COLORMAP, load_colormap
from attnviz.ui.heatmap.weights import show_weights
from attnviz.ui.heatmap.widget import HeatmapWidget
from attnviz.ui.i18n import tr_text, translate
from attnviz.ui.theme import plot_colors

__all__ = ["GRID_MAP_SIZE", "MIN_GRID_MAP_SIZE", "build_heads_grid", "label_maps", "token_labels"]

#: A map of the grid by default, and the least a ``size`` may leave each (pixels).
GRID_MAP_SIZE = (300, 270)
MIN_GRID_MAP_SIZE = (160, 140)
#: Tokens are put on the axes up to this many (the axis shows as many as fit without overlapping).
MAX_LABELLED = 1024
_BAR_WIDTH = 90


def token_labels(head: HeadView, batch: int) -> tuple[list[str] | None, list[str] | None]:
    """The query and key tokens of batch element ``batch``, each one printable line (None: the
    axes keep their numbers)."""
    rows, cols = (None if t is None else [printable(token) for token in t] for t in head.tokens(batch))
    fits = (len(rows or ()) <= MAX_LABELLED, len(cols or ()) <= MAX_LABELLED)
    return (rows if fits[0] else None), (cols if fits[1] else None)


def _label(
    heatmap: HeatmapWidget,
    view: ViewData,
    batch: int,
    rows: list[str] | None,
    cols: list[str] | None,
    levels: tuple[float, float] | None = None,
) -> None:
    # Every token may be a label: the axis shows every step-th one when they do not all fit.
    heatmap.label_limit = max(heatmap.label_limit, len(rows or ()), len(cols or ()))
    # Keeps the colour range the map was drawn with (a figure's --color-range) when relabelled.
    show_weights(heatmap, view, batch, (rows, cols), levels=levels or heatmap.levels)


def label_maps(figure: WeightsFigure, view: ViewData, head: HeadView) -> None:
    """Put the head's tokens on the axes of a weights figure (one map per batch element)."""
    changed = False
    for heatmap, batch in zip(figure.maps, figure.batches, strict=True):
        rows, cols = token_labels(head, batch)
        if rows is not None or cols is not None:
            _label(heatmap, view, batch, rows, cols)
            changed = True
    if changed:
        QApplication.processEvents()  # the axes take the room their new labels need


def build_heads_grid(
    views: Sequence[ViewData],
    heads: Sequence[int],
    batch: int,
    head: HeadView,
    *,
    title: str,
    subtitle: str = "",
    colormap: str | None = None,
    size: tuple[int, int] | None = None,
    levels: Sequence[tuple[float, float]] | None = None,
) -> WeightsFigure:
    """Every head of a layer for batch element ``batch``: ``views[i]`` is head ``heads[i]``,
    drawn as small maps titled "head h" in a grid, all on one colour scale (``levels``, default
    the weights' 0 to 1), shown by one colour bar; maps with ranges of their own (``levels``
    that differ) keep a bar each. The figure's ``batches`` are the heads (``maps[i]`` shows
    ``heads[i]``).

    ``size`` is the whole figure (default :data:`GRID_MAP_SIZE` a map); ``ValueError`` when it
    leaves a map less than :data:`MIN_GRID_MAP_SIZE`.
    """
    n = len(views)
    columns = max(1, math.ceil(math.sqrt(n)))
    rows_of_maps = math.ceil(n / columns)
    caption = 64 if subtitle else 40
    warnings = sorted({w for view in views for w in view.warnings})
    extra_height = caption + 22 * len(warnings) + 16
    extra_width = _BAR_WIDTH + 16
    if size is None:
        size = (columns * GRID_MAP_SIZE[0] + extra_width, rows_of_maps * GRID_MAP_SIZE[1] + extra_height)
    least = (columns * MIN_GRID_MAP_SIZE[0] + extra_width, rows_of_maps * MIN_GRID_MAP_SIZE[1] + extra_height)
    if size[0] < least[0] or size[1] < least[1]:
        raise ValueError(
            message(
                QT_TRANSLATE_NOOP("Render", "size {size} is too small for {n} heads: at least {least}"),
                size=f"{size[0]}x{size[1]}",
                n=n,
                least=f"{least[0]}x{least[1]}",
            )
        )
    name = colormap or DEFAULT_COLORMAP

    widget = QWidget()
    widget.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)  # only ever grabbed
    widget.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
    colors = plot_colors()
    widget.setStyleSheet(f"QWidget {{ background: {colors.background}; color: {colors.foreground}; }}")
    outer = QVBoxLayout(widget)
    outer.setContentsMargins(8, 8, 8, 8)
    outer.setSpacing(4)
    heading = QLabel(
        f"<b>{escape(printable(title), quote=False)}</b>"
        + (f"<br><small>{escape(printable(subtitle), quote=False)}</small>" if subtitle else "")
    )
    heading.setTextFormat(Qt.TextFormat.RichText)
    heading.setWordWrap(True)  # a subtitle naming many settings wraps, never widens the figure
    outer.addWidget(heading)
    body = QHBoxLayout()
    grid = QGridLayout()
    grid.setSpacing(2)
    row_labels, col_labels = token_labels(head, batch)
    maps: list[HeatmapWidget] = []
    levels = list(levels) if levels is not None else [(0.0, 1.0)] * n
    one_scale = len(set(levels)) == 1
    for index, (view, number) in enumerate(zip(views, heads, strict=True)):
        heatmap = HeatmapWidget(title=translate("Render", "head {h}").format(h=number), colormap=name)
        heatmap.setMinimumSize(*MIN_GRID_MAP_SIZE)
        if one_scale:
            # One colour bar for the grid: each map's own would say the same range in less room.
            heatmap.plot_item.layout.removeItem(heatmap.colorbar)
            heatmap.colorbar.hide()
        _label(heatmap, view, batch, row_labels, col_labels, levels[index])
        grid.addWidget(heatmap, index // columns, index % columns)
        maps.append(heatmap)
    body.addLayout(grid, 1)
    if one_scale:
        body.addWidget(_colour_bar(name, levels[0]))
    outer.addLayout(body, 1)
    if warnings:
        notes = QLabel("\n".join(f"\u26a0 {tr_text(w)}" for w in warnings))
        notes.setWordWrap(True)
        outer.addWidget(notes)
    widget.resize(*size)
    widget.show()  # lays out every child; WA_DontShowOnScreen keeps it off the screen
    QApplication.processEvents()
    return WeightsFigure(widget, maps, list(heads), title, subtitle)


def _colour_bar(name: str, levels: tuple[float, float] = (0.0, 1.0)) -> QWidget:
    """The grid's one colour bar: weights from ``levels[0]`` to ``levels[1]``."""
    view = pg.GraphicsLayoutWidget()
    view.setBackground(plot_colors().background)
    bar = pg.ColorBarItem(
        values=levels,
        colorMap=load_colormap(name),
        interactive=False,
        width=16,
        colorMapMenu=False,
        label=translate("Render", "weight"),
    )
    view.addItem(bar)
    view.setFixedWidth(_BAR_WIDTH)
    return view
