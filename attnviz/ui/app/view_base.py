"""One base for views: the session's wiring, written once (after napari's ``QtLayerControls``).

Every view of ``ui/views`` and the main results panel is a ``SessionView``. The base

* follows the session: the outcome on show, the selection, the document, the colour map and
  range, presentation mode, and the intents views exchange (a query picked, rows to outline);
  a view overrides the hooks it needs (``on_outcome``, ``on_selection``, ...);
* draws only while the view is on show: ``request_draw()`` draws now (``draw()``) when it is,
  else marks the view dirty, and showing it draws what it missed (this is the one ``showEvent``
  of the views: ``on_shown()`` and ``on_hidden()`` are the hooks);
* makes every map the view owns (``own_map``, made early or late) follow the session's colour
  map, presentation mode's font scale and the theme, and sets its axis names (marked sources)
  again at every language switch; the pyqtgraph plots it owns (``own_plot``) follow the theme,
  and their titles the font;
* runs the view's computations (``while_shown(session.register(...))``: a function registered
  with the session) only while the view is on show; shown again, they are requested for the
  current snapshot.

Texts follow Qt's LanguageChange (``retranslate``) and colours its PaletteChange (``restyle``),
as ``lifecycle.Retranslating`` has every widget do.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QFont, QFontMetricsF, QHideEvent, QShowEvent
from PySide6.QtWidgets import QComboBox, QFrame, QGridLayout, QHBoxLayout, QLabel, QScrollArea, QVBoxLayout, QWidget

from attnviz.compute import Outcome
from attnviz.state.document import Edit
from attnviz.ui.app.computations import Computation
from attnviz.ui.app.session import AppSession, Selection
from attnviz.ui.heatmap import HeatmapWidget
from attnviz.ui.i18n import tr_text
from attnviz.ui.lifecycle import Retranslating
from attnviz.ui.theme import mark_error_label, mark_warning_label, plot_colors

__all__ = ["SessionView", "bold_label", "message_label", "scrolled", "scrolled_grid"]

H = TypeVar("H", bound=HeatmapWidget)
W = TypeVar("W", bound=QWidget)
P = TypeVar("P")
R = TypeVar("R")


class SessionView(Retranslating, QWidget):
    """A view of the session (see the module docstring). ``draw_count``: how many times it drew
    (a hidden view must not draw: tests count)."""

    def __init__(self, session: AppSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.draw_count = 0
        self._dirty = True  # nothing drawn yet
        self._font_scale = session.presentation_scale
        #: Owned maps and their axis names (marked sources, translated when set; None: left).
        self._owned_maps: dict[HeatmapWidget, tuple[str | None, str | None]] = {}
        #: Owned plots and their titles.
        self._owned_plots: dict[pg.PlotWidget, str] = {}
        self._computations: list[Computation[Any, Any]] = []
        session.outcomeShown.connect(self._outcome_shown)
        session.selectionChanged.connect(self._selection_changed)
        session.documentChanged.connect(self._document_changed)
        session.colormapChanged.connect(self._colormap_changed)
        session.colorRangeChanged.connect(self._color_range_changed)
        session.presentationChanged.connect(self._presentation_changed)
        session.textZoomChanged.connect(self._text_zoom_changed)
        session.querySelected.connect(self._query_selected)
        session.rowsOutlined.connect(self._rows_outlined)

    # ------------------------------------------------------------------ hooks (override)

    def draw(self) -> None:
        """Draw what the view holds (called only while it is on show)."""

    def on_outcome(self, outcome: Outcome) -> None:
        """The main computation's current outcome arrived."""

    def on_selection(self, selection: Selection) -> None:
        """Another batch element or head is on show: drawn again by default."""
        self.request_draw()

    def on_document(self, edit: Edit | None) -> None:
        """The document was edited."""

    def on_color_range(self, name: str) -> None:
        """The weights' colour range changed: drawn again by default."""
        self.request_draw()

    def on_colormap(self, name: str) -> None:
        """The colour map changed (the owned maps have it already)."""

    def on_presentation(self, on: bool) -> None:
        """Presentation mode went on or off (the owned maps are scaled already: ``font_scale``)."""

    def on_query_selected(self, row: int, add: bool) -> None:
        """A view picked query ``row`` (``add``: beside the others picked)."""

    def on_rows_outlined(self, rows: tuple[int, ...]) -> None:
        """A view asked to look at these query rows."""

    def on_shown(self) -> None:
        """The view came on show (after it drew what it missed)."""

    def on_hidden(self) -> None:
        """The view went off show (another tab, closed; not the window minimised)."""

    # ------------------------------------------------------------------ drawing

    @property
    def on_show(self) -> bool:
        return self.isVisible()

    @property
    def dirty(self) -> bool:
        """Whether something arrived that the view has not drawn yet (it is hidden)."""
        return self._dirty

    def request_draw(self) -> None:
        """Draw now if the view is on show; else when it is shown."""
        if self.isVisible():
            self._draw_now()
        else:
            self._dirty = True

    def _draw_now(self) -> None:
        self._dirty = False
        self.draw_count += 1
        self.draw()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._dirty:
            self._draw_now()
        for computation in self._computations:
            computation.set_on_show(True)
        self.on_shown()

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        if event.spontaneous():  # the window minimised: still the view on show
            return
        for computation in self._computations:
            computation.set_on_show(False)
        self.on_hidden()

    # ------------------------------------------------------------------ maps and plots

    @property
    def font_scale(self) -> float:
        """The text scale of the owned maps (presentation mode's, or 1)."""
        return self._font_scale

    def own_map(self, heatmap: H, *, x_label: str | None = None, y_label: str | None = None) -> H:
        """``heatmap`` follows the session's colour map, the font scale and the theme from now
        on; ``x_label`` and ``y_label`` (marked sources, or plain text such as "") name its axes
        in the current language, again at every language switch (None: its own names)."""
        self._owned_maps[heatmap] = (x_label, y_label)
        heatmap.set_colormap(self.session.colormap)
        if heatmap.font_scale != self._font_scale:
            heatmap.set_font_scale(self._font_scale)
        colors = plot_colors()
        if heatmap.plot_colors != colors:
            heatmap.set_plot_colors(colors)
        self._name_axes(heatmap)
        return heatmap

    def release_map(self, heatmap: HeatmapWidget) -> None:
        """The view no longer shows ``heatmap``: it is deleted."""
        self._owned_maps.pop(heatmap, None)
        heatmap.deleteLater()

    def owned_maps(self) -> list[HeatmapWidget]:
        return list(self._owned_maps)

    def own_plot(self, plot: pg.PlotWidget, title: str = "") -> pg.PlotWidget:
        """``plot`` (a line or bar chart) takes the theme's colours, and its title the font (as
        large as the plot's width allows)."""
        self._owned_plots[plot] = title
        plot.installEventFilter(self)
        self._style_plot(plot)
        return plot

    def set_plot_title(self, plot: pg.PlotWidget, title: str) -> None:
        if self._owned_plots.get(plot) != title:
            self._owned_plots[plot] = title
            self._title_plot(plot)

    def owned_plots(self) -> list[pg.PlotWidget]:
        return list(self._owned_plots)

    def _name_axes(self, heatmap: HeatmapWidget) -> None:
        x_label, y_label = self._owned_maps[heatmap]
        if x_label is not None or y_label is not None:
            heatmap.set_axis_labels(
                None if x_label is None else tr_text(x_label), None if y_label is None else tr_text(y_label)
            )

    def _style_plot(self, plot: pg.PlotWidget) -> None:
        colors = plot_colors()
        plot.setBackground(colors.background)
        for side in ("left", "bottom"):
            axis = plot.getAxis(side)
            axis.setPen(colors.foreground)
            axis.setTextPen(colors.foreground)
        self._title_plot(plot)

    def _title_plot(self, plot: pg.PlotWidget) -> None:
        # Size and colour every time: setTitle without them falls back to pyqtgraph's small grey.
        title = self._owned_plots[plot]
        font = QFont(self.font())
        points = max(font.pointSizeF(), 6.0) * 1.05
        font.setPointSizeF(points)
        # The title sits over the plot area, right of the left axis, within margins of its own.
        room = plot.width() - plot.getAxis("left").width() - 40
        wide = QFontMetricsF(font).horizontalAdvance(title)
        if title and 0 < room < wide:
            # Wider than the plot, the title would push the plot aside: smaller, down to 6 pt.
            points = max(6.0, points * room / wide)
        key = (title, round(points, 1), plot_colors().foreground)
        if plot.property("attnviz_title") != repr(key):  # the same title again re-lays out the plot
            plot.setProperty("attnviz_title", repr(key))
            plot.setTitle(title or None, size=f"{points:.1f}pt", color=key[2])

    # ------------------------------------------------------------------ computing

    def while_shown(self, computation: Computation[P, R]) -> Computation[P, R]:
        """Run ``computation`` (registered with ``AppSession.register``) only while this view is
        on show; shown again, it is requested for the current snapshot."""
        self._computations.append(computation)
        self.destroyed.connect(functools.partial(self.session.computations.unregister, computation))
        computation.set_on_show(self.isVisible())
        return computation

    # ------------------------------------------------------------------ the session's signals

    def _outcome_shown(self, outcome: Outcome) -> None:
        self.on_outcome(outcome)

    def _selection_changed(self, selection: Selection) -> None:
        self.on_selection(selection)

    def _document_changed(self, edit: Edit | None) -> None:
        self.on_document(edit)

    def _colormap_changed(self, name: str) -> None:
        for heatmap in self._owned_maps:
            heatmap.set_colormap(name)
        self.on_colormap(name)

    def _color_range_changed(self, name: str) -> None:
        self.on_color_range(name)

    def _presentation_changed(self, on: bool) -> None:
        self._font_scale = self.session.presentation_scale
        for heatmap in self._owned_maps:
            heatmap.set_font_scale(self._font_scale)
        self.on_presentation(on)

    def _text_zoom_changed(self, _zoom: float) -> None:
        self._presentation_changed(self.session.presenting)

    def _query_selected(self, row: int, add: bool) -> None:
        self.on_query_selected(row, add)

    def _rows_outlined(self, rows: tuple[int, ...]) -> None:
        self.on_rows_outlined(rows)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and watched in self._owned_plots:
            self._title_plot(watched)
        return super().eventFilter(watched, event)

    def changeEvent(self, event: QEvent) -> None:
        kind = event.type()
        if kind == QEvent.Type.LanguageChange:
            for heatmap in self._owned_maps:
                self._name_axes(heatmap)
        elif kind == QEvent.Type.PaletteChange:
            colors = plot_colors()
            for heatmap in self._owned_maps:
                if heatmap.plot_colors != colors:
                    heatmap.set_plot_colors(colors)
            for plot in self._owned_plots:
                self._style_plot(plot)
        elif kind == QEvent.Type.FontChange:
            for plot in self._owned_plots:
                self._title_plot(plot)
        super().changeEvent(event)  # Retranslating: retranslate(), restyle()


# ---------------------------------------------------------------------- a view's usual parts


#: The margin around every view's contents, in pixels.
VIEW_MARGIN = 4


def view_column(view: QWidget) -> QVBoxLayout:
    """``view``'s layout: a column with the margin every view keeps."""
    layout = QVBoxLayout(view)
    layout.setContentsMargins(VIEW_MARGIN, VIEW_MARGIN, VIEW_MARGIN, VIEW_MARGIN)
    return layout


class _FittedColumn(QVBoxLayout):
    """A view's column without height-for-width (``fitted_column``)."""

    def hasHeightForWidth(self) -> bool:  # noqa: N802 - Qt's name
        return False


def fitted_column(view: QWidget) -> QVBoxLayout:
    """``view``'s layout: a column with the margin every view keeps, that does not ask for
    height-for-width. With it (wrapping labels, flowing controls) the page's scroll area sized a
    view that fits the page by its preferred height: a few pixels over showed a vertical scroll
    bar, the narrower page scrolled sideways too, and the two bars stayed (issue 37: side by
    side, the scaling lab). Without it the page scrolls only below the view's minimum size."""
    layout = _FittedColumn(view)
    layout.setContentsMargins(VIEW_MARGIN, VIEW_MARGIN, VIEW_MARGIN, VIEW_MARGIN)
    return layout


def titled_row() -> tuple[QHBoxLayout, QLabel]:
    """A view's top row and its heading (a ``bold_label``), which takes the room the row's other
    widgets leave."""
    row = QHBoxLayout()
    title = bold_label()
    row.addWidget(title, 1)
    return row, title


def captioned_choice(keys: Iterable[str], on_change: Callable[[], None]) -> tuple[QLabel, QComboBox]:
    """A combo box of ``keys`` (each an item's data; the texts come on retranslating) with the
    caption that names it (its buddy); ``on_change`` runs when the user picks another."""
    caption = QLabel()
    box = QComboBox()
    for key in keys:
        box.addItem("", key)
    caption.setBuddy(box)
    box.currentIndexChanged.connect(lambda _i: on_change())
    return caption, box


def bold_label(text: str = "") -> QLabel:
    """A view's heading: the summary of what it shows."""
    label = QLabel(text)
    font = label.font()
    font.setBold(True)
    label.setFont(font)
    return label


def message_label(*, warning: bool = False) -> QLabel:
    """A message over a view's maps (an error, or a warning), wrapped, hidden until it says
    something."""
    label = QLabel()
    label.setWordWrap(True)
    if warning:
        mark_warning_label(label)
    else:
        mark_error_label(label)
    label.setVisible(False)
    return label


def scrolled(widget: W, *, frame: bool = True) -> QScrollArea:
    """``widget`` in a scroll area that resizes it: it scrolls only below its minimum size."""
    scroll = QScrollArea()
    scroll.setWidgetResizable(True)
    scroll.setWidget(widget)
    if not frame:
        scroll.setFrameShape(QFrame.Shape.NoFrame)
    return scroll


def scrolled_grid(spacing: int | None = None) -> tuple[QScrollArea, QWidget, QGridLayout]:
    """A grid of maps that scrolls: (the scroll area, the widget holding the grid, the grid)."""
    host = QWidget()
    grid = QGridLayout(host)
    grid.setContentsMargins(0, 0, 0, 0)
    if spacing is not None:
        grid.setSpacing(spacing)
    return scrolled(host), host, grid
