"""The scaling lab: why scaled dot-product attention divides by sqrt(d), with the user's inputs on it.

Four plots over the query/key length d = 1 ... 1024 (log2 axis), each with the unscaled score
q.k and the scaled one q.k / sqrt(d): the variance of the scores, the entropy and the largest
weight of the softmax, and the size of the softmax's Jacobian (how much gradient gets back
through it). The current queries and keys are marked on every plot (``engine.scaling.
current_point``). For additive attention a fifth plot histograms |W_q q + W_k k| and prints the
share of values that saturate tanh.

The curves are for a softmax over as many keys as the inputs allow on average, so the point and
the curves are comparable; they cost up to a second and are cached per number of keys. All the
computing is the view's computation, on a thread of its own, run only while the view is on show.
"""

from __future__ import annotations

import html
import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QFontMetricsF, QResizeEvent
from PySide6.QtWidgets import (
    QApplication,
    QBoxLayout,
    QFrame,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QWidget,
)

from attnviz.compute.jobs import Job
from attnviz.compute.labs import ScalingOutcome, run_scaling_lab
from attnviz.text.tr import QT_TRANSLATE_NOOP
from attnviz.ui.app.host import Host, ToolPanel
from attnviz.ui.app.session import AppSession
from attnviz.ui.app.view_base import SessionView, view_column
from attnviz.ui.fonts import base_point_size
from attnviz.ui.i18n import tr_text, translate
from attnviz.ui.theme import error_color, muted_color, plot_colors, warning_color
from attnviz.ui.views.docks import DOCKS, SCALING_LAB_DOCK
from attnviz.ui.views.slide_pages import SlidePages

__all__ = ["SCALING_LAB_DOCK", "ScalingLabView", "install_scaling_lab"]


# Colour-blind-safe pair (Okabe-Ito): unscaled orange, scaled blue.
UNSCALED_COLOR = (230, 159, 0)
SCALED_COLOR = (0, 114, 178)
REFERENCE_COLOR = (120, 120, 120)
SATURATED_COLOR = (213, 94, 0)
#: A mean square of queries or keys this far from 1 (ratio) earns a note: the curves assume 1.
_UNIT_TOLERANCE = 2.0

#: Where each plot sits (row, column) below the legend: two rows of three.
_GRID = {"var": (1, 0), "entropy": (1, 1), "max_weight": (1, 2), "jacobian": (2, 0), "tanh": (2, 1)}
#: On a slide the plots a page at a time (Page Down: ``SlidePages``): what scaling does to the
#: softmax, then its gradient beside the numbers of your inputs, then (additive attention) tanh's
#: saturation beside them. Two rows and the notes were more than a 1280x720 slide holds in slide
#: type (the page scrolled, the plots were 60 px high and the notes scrolled in their strip).
SLIDE_PAGES: tuple[tuple[str, ...], ...] = (("var", "entropy", "max_weight"), ("jacobian",), ("tanh",))
#: The two markers of a plot sit this far apart (log2 d units) so neither hides the other.
_DODGE = 0.18

#: The plots: key, title, y label, statistic name in the curves, log y axis.
PLOTS: tuple[tuple[str, str, str, str, bool], ...] = (
    (
        "var",
        QT_TRANSLATE_NOOP("ScalingLab", "Score variance"),
        QT_TRANSLATE_NOOP("ScalingLab", "variance"),
        "var",
        True,
    ),
    (
        "entropy",
        QT_TRANSLATE_NOOP("ScalingLab", "Entropy"),
        QT_TRANSLATE_NOOP("ScalingLab", "entropy (nats)"),
        "entropy",
        False,
    ),
    (
        "max_weight",
        QT_TRANSLATE_NOOP("ScalingLab", "Largest weight"),
        QT_TRANSLATE_NOOP("ScalingLab", "max weight"),
        "max_weight",
        False,
    ),
    ("jacobian", QT_TRANSLATE_NOOP("ScalingLab", "Softmax gradient"), "‖∂w/∂s‖ (Frobenius)", "jacobian_norm", False),
)


def _scaling(job: Job[None]) -> ScalingOutcome:
    """The view's computation: the curves and the head on show's point on them."""
    return run_scaling_lab(job.snapshot)


class _Log2Axis(pg.AxisItem):
    """Ticks at integer log2(d), labelled with d itself (1, 2, 4, ..., 1024)."""

    def tickValues(self, minVal: float, maxVal: float, size: float) -> list[tuple[float, list[float]]]:
        lo, hi = math.ceil(minVal - 1e-9), math.floor(maxVal + 1e-9)
        values = list(range(max(lo, 0), hi + 1))
        # Label every power of two that fits: "1024" plus a gap per label, in the tick font.
        font = self.style.get("tickFont")
        metrics = QFontMetricsF(font if isinstance(font, QFont) else QApplication.font())
        need = metrics.horizontalAdvance("512") + 10  # 1024 is written "1k"
        px_per_step = size / max(maxVal - minVal, 1e-9)
        step = next((s for s in (1, 2, 3, 5, 10) if s * px_per_step >= need), 10)
        return [(float(step), [float(v) for v in values if v % step == 0])]

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        return [_power_of_two(round(v)) for v in values]


def _power_of_two(exponent: int) -> str:
    value = 2**exponent
    return f"{value // 1024}k" if value >= 1024 and value % 1024 == 0 else str(value)


def _fmt(x: float, digits: int = 3) -> str:
    if x is None or not math.isfinite(x):
        return "—"
    return f"{x:.{digits}g}"


#: The notes' share of a slide's width, beside the second page's plots.
_SLIDE_NOTES_SHARE = 0.5


class ScalingLabView(SessionView):
    """The scaling plots (see the module docstring).

    ``outcome`` is the ``ScalingOutcome`` drawn last (``shown_version`` its document version),
    ``plots[key]`` the PlotItems ("var", "entropy", "max_weight", "jacobian", "tanh"),
    ``point_items[key]`` the two marker ScatterPlotItems (unscaled, scaled) of each plot; ``lab``
    the computation.
    """

    resultShown = Signal(object)

    def __init__(self, session: AppSession, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self._session = session
        self.outcome: ScalingOutcome | None = None
        self.shown_version = -1
        self.error: str | None = None
        self._base_pt = base_point_size()  # presentation mode scales it (font_scale), never twice
        self._tanh = False  # additive attention: the tanh histogram is one of the plots
        #: On a slide the plots a row at a time (``SLIDE_PAGES``); off a slide one page.
        self.slide_pages = SlidePages(session, self)
        self.slide_pages.pageChanged.connect(lambda _page: self._place_notes())

        self._ink = plot_colors().foreground
        self.lab = self.while_shown(self.session.register("scaling lab", _scaling))
        self.lab.on_result(self._on_result)
        self.lab.on_failure(
            lambda error: self._on_result(
                ScalingOutcome(session.document.version, error=error, focus=session.selection.focus)
            )
        )
        self.lab.busyChanged.connect(lambda _busy: self._update_status())

        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground(plot_colors().background)
        self.plots: dict[str, pg.PlotItem] = {}
        self.curve_items: dict[str, tuple[pg.PlotDataItem, pg.PlotDataItem]] = {}
        self.point_items: dict[str, tuple[pg.ScatterPlotItem, pg.ScatterPlotItem]] = {}
        self.legends: list[pg.LegendItem] = []
        self.guides: dict[str, pg.InfiniteLine] = {}
        for key, _title, _ylabel, _stat, logy in PLOTS:
            row, col = _GRID[key]
            plot = self.graphics.addPlot(row=row, col=col, axisItems={"bottom": _Log2Axis("bottom")})
            plot.setLogMode(x=False, y=logy)
            plot.showGrid(x=True, y=True, alpha=0.15)
            plot.setMenuEnabled(False)
            plot.hideButtons()
            unscaled = plot.plot([], [], pen=pg.mkPen(UNSCALED_COLOR, width=2.5))
            scaled = plot.plot([], [], pen=pg.mkPen(SCALED_COLOR, width=2.5))
            self.curve_items[key] = (unscaled, scaled)
            marks = (
                pg.ScatterPlotItem(size=15, symbol="star", pen=pg.mkPen(40, 40, 40), brush=pg.mkBrush(*UNSCALED_COLOR)),
                pg.ScatterPlotItem(size=15, symbol="star", pen=pg.mkPen(40, 40, 40), brush=pg.mkBrush(*SCALED_COLOR)),
            )
            for mark in marks:
                mark.setZValue(5)
                plot.addItem(mark)
            self.point_items[key] = marks
            self.plots[key] = plot
        # Reference levels: uniform weights' entropy log n and largest weight 1/n.
        for key in ("entropy", "max_weight"):
            # Inside the plot: under the entropy's line (log n is the top of its range: above it
            # the top of the plot cut the word off), over the largest weight's (1/n is the
            # bottom of its range: under it the axis cut the word off on a slide).
            anchor = (0, 0) if key == "entropy" else (0, 1)
            line = pg.InfiniteLine(
                angle=0,
                pen=pg.mkPen(REFERENCE_COLOR, width=1.5, style=Qt.PenStyle.DashLine),
                label="uniform",
                labelOpts={"position": 0.08, "color": REFERENCE_COLOR, "anchors": [anchor, anchor]},
            )
            self.plots[key].addItem(line)
            self.guides[key] = line

        tanh = self.graphics.addPlot(row=_GRID["tanh"][0], col=_GRID["tanh"][1])
        tanh.setLabel("bottom", "|W_q q + W_k k|")
        tanh.setMenuEnabled(False)
        tanh.hideButtons()
        self.tanh_hist = _histogram(SCALED_COLOR, 150)
        self.tanh_saturated = _histogram(SATURATED_COLOR, 190)
        tanh.addItem(self.tanh_hist)
        tanh.addItem(self.tanh_saturated)
        self.tanh_line = pg.InfiniteLine(angle=90, pen=pg.mkPen(SATURATED_COLOR, width=1.5, style=Qt.PenStyle.DashLine))
        tanh.addItem(self.tanh_line)
        self.plots["tanh"] = tanh

        # One legend for all plots, in a row above them: inside a plot it would hide a curve.
        legend = pg.LegendItem(colCount=5)
        first = self.curve_items["var"]
        for sample in (
            first[0],
            first[1],
            self.point_items["var"][0],
            self.point_items["var"][1],
            pg.PlotDataItem([], [], pen=pg.mkPen(REFERENCE_COLOR, width=1.5, style=Qt.PenStyle.DashLine)),
        ):
            legend.addItem(sample, " ")
        self.graphics.addItem(legend, row=0, col=0, colspan=3)
        self.legends.append(legend)

        self.header = QLabel()
        self.header.setWordWrap(True)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.notes = QLabel()
        self.notes.setWordWrap(True)
        self.notes.setTextFormat(Qt.TextFormat.RichText)
        self.notes.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.notes.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.notes.setMinimumWidth(240)
        notes_scroll = self.notes_scroll = QScrollArea()
        notes_scroll.setWidgetResizable(True)
        notes_scroll.setWidget(self.notes)

        # The plots ask for no more than their minimum height (their preferred 480 px made the
        # page's height-for-width a pixel over a 1280x720 slide); they still take what is left.
        # Set once: changed on entering presentation mode, the page's scroll bars lagged it.
        policy = self.graphics.sizePolicy()
        policy.setVerticalPolicy(QSizePolicy.Policy.Ignored)
        self.graphics.setSizePolicy(policy)
        body = self.body = QBoxLayout(QBoxLayout.Direction.LeftToRight)
        body.addWidget(self.graphics, 1)
        body.addWidget(notes_scroll)
        layout = view_column(self)
        layout.addWidget(self.header)
        layout.addWidget(self.status)
        layout.addLayout(body, 1)
        # Once every part has its parent: shown before, the header and the notes were windows of
        # their own, which took the focus off the main window (and the clicker's keys with it).
        self._place_notes()
        self.retranslate()

    def retranslate(self) -> None:
        self.header.setText(
            translate(
                "ScalingLab",
                "Random unit-variance q and k of length d: without scaling the scores' variance grows like "
                "d, the softmax collapses onto one key (entropy → 0, largest weight → 1) and its gradient "
                "vanishes; dividing by √d keeps all three where they are at d = 1. Stars: your inputs.",
            )
        )
        self.setToolTip(
            translate("ScalingLab", "Why scores are divided by √d, with the current queries and keys marked")
        )
        for key, title, ylabel, _stat, _logy in PLOTS:
            plot = self.plots[key]
            plot.setTitle(tr_text(title))
            plot.setLabel("bottom", translate("ScalingLab", "d (length of q and k)"))
            plot.setLabel("left", tr_text(ylabel))
        self.plots["tanh"].setTitle(translate("ScalingLab", "tanh saturation"))
        self.plots["tanh"].setLabel("left", translate("ScalingLab", "values"))
        for line in self.guides.values():
            # Its text too: setFormat leaves a hidden label's text as it was (the lab is hidden
            # when the language changes on another slide, and it stayed English).
            line.label.setFormat(translate("ScalingLab", "uniform"))
            line.label.setText(line.label.format)
        names = (
            translate("ScalingLab", "q·k (unscaled)"),
            translate("ScalingLab", "q·k / √d (scaled)"),
            translate("ScalingLab", "your inputs (unscaled)"),
            translate("ScalingLab", "your inputs (scaled)"),
            translate("ScalingLab", "uniform weights"),
        )
        for (_sample, label), name in zip(self.legends[0].items, names):
            label.setText(name)
        self._apply_fonts()
        if self.outcome is not None:
            self._draw(self.outcome)
        self._update_status()

    # ------------------------------------------------------------------ inputs

    def on_selection(self, selection: object) -> None:
        """Another head is computed again (the lab follows it); the batch element is not drawn."""

    @property
    def busy(self) -> bool:
        return self.lab.busy

    def on_presentation(self, on: bool) -> None:
        """Titles, axis labels, ticks, legends and markers follow the font scale; on a slide the
        plots a row a page (``SLIDE_PAGES``), the notes beside the second."""
        self.slide_pages.follow_presentation(on)
        self._place_notes()
        self._apply_fonts()
        if self.outcome is not None:
            self._show_notes(self.outcome)  # on a slide a colour key, and no word on the curves'

    def on_page(self) -> tuple[str, ...]:
        """The plots on show: on a slide the page's (``SLIDE_PAGES``), else all of them; the tanh
        histogram only for additive attention."""
        pages = self.pages()
        return pages[min(self.slide_pages.page, len(pages) - 1)]

    def pages(self) -> list[tuple[str, ...]]:
        """The plots of each page: on a slide ``SLIDE_PAGES`` (tanh's only for additive attention),
        else one page of them all."""
        pages = list(SLIDE_PAGES) if self._slide else [tuple(_GRID)]
        pages = [tuple(key for key in page if key != "tanh" or self._tanh) for page in pages]
        return [page for page in pages if page]

    @property
    def _slide(self) -> bool:
        return self.font_scale > 1.0

    def _layout_plots(self) -> None:
        """The plots on show in the layout, in their places; the others out of it (a hidden item
        would still hold its row and column)."""
        shown = self.on_page()
        for plot in self.plots.values():
            if plot in self.graphics.ci.items:
                self.graphics.ci.removeItem(plot)
            plot.setVisible(False)
        for i, key in enumerate(shown):
            row, col = (1, i) if self._slide else _GRID[key]
            self.graphics.ci.addItem(self.plots[key], row=row, col=col)
            self.plots[key].setVisible(True)
        # The legend over three plots' width; on the second slide page, beside the notes, a
        # colour key in the notes says the same in their narrower column (``_colour_key``).
        legend = self.legends[0]
        legend_on = not self._slide or self.slide_pages.page == 0
        if legend_on and legend not in self.graphics.ci.items:
            self.graphics.ci.addItem(legend, row=0, col=0, colspan=3)
        elif not legend_on and legend in self.graphics.ci.items:
            self.graphics.ci.removeItem(legend)
        legend.setVisible(legend_on)
        # The plots' grid as large as the view again: taking its items out and putting others in
        # let Qt shrink it to its preferred size (tanh's page was a strip until the next resize).
        self.graphics.ci.setGeometry(self.graphics.range)
        self._update_min_size()

    def _place_notes(self) -> None:
        """Off a slide the notes beside the plots; on a slide the header and the first row of
        plots on the first page, the second row beside the notes on the second (whole: the
        notes never scroll on a slide)."""
        scroll = self.notes_scroll
        self.slide_pages.set_count(len(self.pages()))
        first = self.slide_pages.page == 0
        self.header.setVisible(not self._slide or first)
        scroll.setVisible(not self._slide or not first)
        self.body.setDirection(QBoxLayout.Direction.LeftToRight)
        scroll.setMinimumHeight(0)
        scroll.setMaximumHeight(16777215)
        if self._slide:
            scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
            scroll.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
            scroll.setFrameShape(QFrame.Shape.NoFrame)
            scroll.setMinimumWidth(int(_SLIDE_NOTES_SHARE * max(self.width(), 640)))
            scroll.setMaximumWidth(16777215)
        else:
            scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
            scroll.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
            scroll.setFrameShape(QFrame.Shape.StyledPanel)
            scroll.setMaximumWidth(340)
            scroll.setMinimumWidth(260)
        self._layout_plots()
        self._fit_notes()

    def _fit_notes(self) -> None:
        """On a slide the notes as high as their text at their width (they do not scroll there)."""
        scroll = self.notes_scroll
        if not self._slide or not scroll.isVisible():
            return
        width = max(scroll.minimumWidth(), scroll.width()) - 2 * scroll.frameWidth()
        scroll.setMinimumHeight(self.notes.heightForWidth(width) + 2 * scroll.frameWidth())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if self._slide:
            self.notes_scroll.setMinimumWidth(int(_SLIDE_NOTES_SHARE * max(event.size().width(), 640)))
            self._fit_notes()

    # ------------------------------------------------------------------ drawing

    def _on_result(self, outcome: ScalingOutcome) -> None:
        self.shown_version = outcome.version
        if outcome.error is not None or outcome.curves is None:
            self.error = outcome.error or translate("ScalingLab", "no curves")
        else:
            self.error = None
            self.outcome = outcome
            self._draw(outcome)
        self._update_status()
        self.resultShown.emit(outcome)

    def _draw(self, outcome: ScalingOutcome) -> None:
        curves = outcome.curves
        assert curves is not None
        x = np.log2(curves["dims"].astype(np.float64))
        n_keys = int(curves["n_keys"])
        for key, _title, _ylabel, stat, _logy in PLOTS:
            unscaled, scaled = self.curve_items[key]
            unscaled.setData(x, curves[f"{stat}_unscaled"])
            scaled.setData(x, curves[f"{stat}_scaled"])
        self.guides["entropy"].setValue(float(curves["max_entropy"]))
        self.guides["max_weight"].setValue(1.0 / max(n_keys, 1))
        self._set_title("entropy", translate("ScalingLab", "Entropy, {n} keys").format(n=n_keys))
        self._set_title("max_weight", translate("ScalingLab", "Largest weight, {n} keys").format(n=n_keys))

        point = outcome.point
        for key, _title, _ylabel, stat, logy in PLOTS:
            marks = self.point_items[key]
            for kind, mark in zip(("unscaled", "scaled"), marks):
                y = None if point is None else point.get(f"{stat}_{kind}")
                if point is None or y is None or not math.isfinite(y) or (logy and y <= 0):
                    mark.setData([], [])
                else:
                    # setLogMode(y) maps curves, not scatter items added by hand: map the point.
                    # Side by side, not on top of each other (equal values would hide one).
                    x_mark = math.log2(point["d"]) + (-_DODGE if kind == "unscaled" else _DODGE)
                    mark.setData([x_mark], [math.log10(y) if logy else y])
        self._draw_tanh(outcome)
        self._show_notes(outcome)

    def _draw_tanh(self, outcome: ScalingOutcome) -> None:
        sat = outcome.saturation
        plot = self.plots["tanh"]
        # Only additive attention has a tanh: otherwise the plot leaves the layout and gives its
        # width to the others (a hidden item would still hold its column).
        if self._tanh != (sat is not None):
            self._tanh = sat is not None
            self._place_notes()
        if sat is None:
            return
        edges, counts = sat.pre_edges, sat.pre_counts.astype(np.float64)
        centres = 0.5 * (edges[:-1] + edges[1:])
        below = np.where(centres <= sat.pre_threshold, counts, 0.0)
        above = np.where(centres > sat.pre_threshold, counts, 0.0)
        self.tanh_hist.setData(edges, below)
        self.tanh_saturated.setData(edges, above)
        self.tanh_line.setValue(sat.pre_threshold)
        self.tanh_line.setVisible(True)
        frac = sat.saturated_fraction
        share = "—" if not math.isfinite(frac) else f"{100 * frac:.1f}%"
        self._set_title(
            "tanh",
            translate("ScalingLab", "tanh: {share} saturated").format(share=share),
            error_color() if frac > 0 else None,
        )
        plot.setYRange(0, max(1.0, float(counts.max()) * 1.1), padding=0)
        plot.setXRange(0, float(edges[-1]), padding=0.02)

    def _show_notes(self, outcome: ScalingOutcome) -> None:
        p = outcome.point
        curves = outcome.curves
        assert curves is not None
        lines: list[str] = []
        if self._slide:
            lines.append(self._colour_key())
        if p is None:
            lines.append(
                "<p>"
                + translate("ScalingLab", "<b>Your inputs are not marked.</b>")
                + f" {html.escape(tr_text(outcome.point_note or ''))}</p>"
            )
        else:
            d = int(p["d"])
            inputs = (
                translate("ScalingLab", "<b>Your inputs</b>: d = {d}, 1 query row, {keys} allowed keys on average.")
                if int(p["rows"]) == 1
                else translate(
                    "ScalingLab",
                    "<b>Your inputs</b>: d = {d}, {rows} query rows, {keys} allowed keys per row on average.",
                )
            )
            lines.append("<p>" + inputs.format(d=d, rows=int(p["rows"]), keys=_fmt(p["n_keys"])) + "</p>")
            rows = "".join(
                f"<tr><td>{label}</td><td align='right'>{_fmt(p[f'{stat}_unscaled'])}</td>"
                f"<td align='right'>{_fmt(p[f'{stat}_scaled'])}</td></tr>"
                for label, stat in (
                    (translate("ScalingLab", "variance"), "var"),
                    (translate("ScalingLab", "entropy"), "entropy"),
                    (translate("ScalingLab", "max weight"), "max_weight"),
                    (translate("ScalingLab", "gradient"), "jacobian_norm"),
                )
            )
            unscaled, scaled = translate("ScalingLab", "unscaled"), translate("ScalingLab", "scaled")
            lines.append(
                f"<table cellspacing='0' cellpadding='2'><tr><th></th><th style='padding-left:16px'>{unscaled}</th>"
                f"<th style='padding-left:16px'>{scaled}</th></tr>"
                f"{rows}</table>"
            )
            qms, kms = p["q_mean_square"], p["k_mean_square"]
            q_off = not (1 / _UNIT_TOLERANCE <= qms <= _UNIT_TOLERANCE)
            k_off = not (1 / _UNIT_TOLERANCE <= kms <= _UNIT_TOLERANCE)
            if q_off or k_off:
                which = (
                    translate("ScalingLab", "queries and keys")
                    if q_off and k_off
                    else translate("ScalingLab", "queries")
                    if q_off
                    else translate("ScalingLab", "keys")
                )
                lines.append(
                    f"<p style='color:{warning_color()}'>"
                    + translate(
                        "ScalingLab",
                        "The curves assume unit-variance entries; your {which} have mean square {q} (q) "
                        "and {k} (k), so the unscaled variance is about d × {q} × {k} = {product} rather "
                        "than {d}.",
                    ).format(which=which, q=_fmt(qms), k=_fmt(kms), product=_fmt(d * qms * kms), d=d)
                    + "</p>"
                )
        curves_note = translate(
            "ScalingLab",
            "Curves: {samples} random (q, keys) samples per d, softmax over {keys} keys (your average, rounded).",
        ).format(samples=int(curves["samples"]), keys=int(curves["n_keys"]))
        if self._slide:
            self.notes.setToolTip(curves_note)  # how the curves were made: not for the back row
        else:
            self.notes.setToolTip("")
            lines.append(f"<p style='color:{muted_color(self)}'>{curves_note}</p>")
        sat = outcome.saturation
        if sat is not None:
            frac = sat.saturated_fraction
            share = "—" if not math.isfinite(frac) else f"{100 * frac:.1f}%"
            sampled = " " + translate("ScalingLab", "(a random sample of pairs)") if sat.sampled else ""
            tanh_note = translate(
                "ScalingLab",
                "<b>tanh</b>: {share} of the {n} hidden values have |tanh| &gt; {threshold} (|h| &gt; "
                "{pre}, right of the dashed line), where the gradient 1 − tanh² is below {gradient}",
            )
            tanh_note = tanh_note.format(
                share=share,
                n=sat.n_values,
                threshold=f"{sat.threshold:g}",
                pre=f"{sat.pre_threshold:.2f}",
                gradient=f"{1 - sat.threshold**2:.3g}",
            )
            lines.append(f"<p>{tanh_note}{sampled}.</p>")
        elif outcome.saturation_note:
            lines.append(f"<p style='color:{muted_color(self)}'>{html.escape(tr_text(outcome.saturation_note))}.</p>")
        self.notes.setText("".join(lines))
        self._fit_notes()

    def _colour_key(self) -> str:
        """The legend as a line of text, for the notes beside the second slide page's plots."""

        def ink(rgb: tuple[int, int, int], mark: str) -> str:
            return f"<span style='color:rgb{rgb}'><b>{mark}</b></span>"

        return (
            "<p>"
            + f"{ink(UNSCALED_COLOR, '━━')} {html.escape(translate('ScalingLab', 'q·k (unscaled)'))}&nbsp;&nbsp; "
            + f"{ink(SCALED_COLOR, '━━')} {html.escape(translate('ScalingLab', 'q·k / √d (scaled)'))}<br>"
            + f"{ink(UNSCALED_COLOR, '★')}{ink(SCALED_COLOR, '★')} "
            + html.escape(translate("ScalingLab", "your inputs (unscaled, scaled)"))
            + "</p>"
        )

    def restyle(self) -> None:
        """Plot colours of the current theme; notes in the theme's secondary and warning colours."""
        colors = plot_colors()
        self.graphics.setBackground(colors.background)
        self._ink = colors.foreground
        self._apply_fonts()
        if self.outcome is not None:
            self._draw(self.outcome)
        self._update_status()

    def _set_title(self, key: str, text: str, color: str | None = None) -> None:
        # Size and colour every time: setTitle without them falls back to pyqtgraph's defaults.
        self.plots[key].setTitle(text, size=f"{self._base_pt * 1.2 * self.font_scale:.1f}pt", color=color or self._ink)

    def _apply_fonts(self) -> None:
        f = self.font_scale
        tick = QFont(QApplication.font())
        tick.setPointSizeF(self._base_pt * f)
        for line in self.guides.values():
            line.label.setFont(tick)  # "uniform" at the size of the ticks, in presentation too
        label_css = {"font-size": f"{self._base_pt * 1.05 * f:.1f}pt", "color": self._ink}
        for key, plot in self.plots.items():
            for side in ("left", "bottom"):
                axis = plot.getAxis(side)
                axis.setTickFont(tick)
                axis.setTextPen(pg.mkPen(self._ink))
                axis.setPen(pg.mkPen(self._ink))
                # No "(x0.001)" on a gradient axis: no SI-prefix range at all, passed to setLabel
                # (which resets the ranges otherwise). Not enableAutoSIPrefix(False): in pyqtgraph
                # 0.14 that freezes whatever scale the current range gives (entropy 0.7 read 700).
                axis.setLabel(axis.labelText, siPrefixEnableRanges=(), **label_css)
                axis.updateAutoSIPrefix()
            self._set_title(key, plot.titleLabel.text)
        for legend in self.legends:
            # Two rows of three (a row of five is wider than three plots in Portuguese); in
            # presentation fonts too: three rows of two took a slide's plots 34 px more.
            legend.setColumnCount(3)
            legend.setLabelTextSize(f"{self._base_pt * f:.1f}pt")
            legend.setLabelTextColor(self._ink)
            for _sample, label in legend.items:
                label.setText(label.text)  # setLabelTextSize only changes the default
        for mark_pair in self.point_items.values():
            for mark in mark_pair:
                mark.setSize(15 * f)
        self._update_min_size()

    def _update_min_size(self) -> None:
        # Two rows of three plots: a projector's width holds them beside the notes (in
        # presentation mode the notes are under them, and a lesson may be docked beside).
        # On a slide a row of plots is shorter (110 px a font scale): at 170 the plots alone took
        # 612 px of a 1280x720 slide and the page scrolled 133 px under the header and notes.
        # A plot 130 px wide a font scale: at 150 the plots were wider than the page while the
        # lesson's panel still stood beside it (Portuguese), and the sideways scroll bar stayed.
        # On a slide one row of plots a page (``SLIDE_PAGES``), with the legend over it.
        f = self.font_scale
        if f == 1.0:
            self.graphics.setMinimumSize(3 * 170, 2 * 200)
        else:
            columns = max(1, len(self.on_page()))
            self.graphics.setMinimumSize(int(columns * 130 * f), int(150 * f))

    def _update_status(self) -> None:
        if self.error is not None:
            self.status.setText(f"<span style='color:{error_color()}'>{html.escape(tr_text(self.error))}</span>")
        elif self.lab.busy and self.outcome is None:
            self.status.setText(
                f"<span style='color:{warning_color()}'>" + translate("ScalingLab", "computing the curves…") + "</span>"
            )
        else:
            self.status.setText("")
        self.status.setVisible(bool(self.status.text()))


def install_scaling_lab(session: AppSession, host: Host) -> ToolPanel:
    """Add the scaling lab as a hidden dock; Tools > Scaling lab (Ctrl+Shift+L) shows it."""
    return host.add_dock(DOCKS[SCALING_LAB_DOCK], lambda: ScalingLabView(session))


def _histogram(color: tuple[int, int, int], alpha: int) -> pg.PlotDataItem:
    """An empty filled step histogram in ``color`` (its fill ``alpha`` opaque), for ``setData``."""
    return pg.PlotDataItem(
        [0, 1], [0], stepMode="center", fillLevel=0, brush=pg.mkBrush(*color, alpha), pen=pg.mkPen(color)
    )
