"""The masking lab: the current input through every masking convention, and what each gets wrong.

One small heatmap per convention (``MASK_MODES``, and both causal alignments when the causal
mask is on) shows the selected batch element's weights. The intended mask stays visible: masked
cells that correctly get no weight are hatched grey as in the main view, and masked cells that
*do* get weight keep their colour under light stripes. Cells whose weight differs from the
reference convention ("strict" with the intended alignment) get a red outline (a red tint
once cells are too small to outline). Under the grid, the engine's plain-English sentences say
what differs, for all batch elements.

``engine.lab.compare_conventions`` is the view's computation, on a thread of its own (latest
request wins, stopped with the session), run only while the view is on show: a hidden lab costs
nothing and catches up when shown.
"""

from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, QSignalBlocker, Qt, QTimer, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from attnviz.compute.jobs import Job
from attnviz.compute.labs import ConventionView, LabOutcome, run_masking_lab
from attnviz.state import catalog
from attnviz.text.tr import QT_TRANSLATE_NOOP
from attnviz.ui.app.host import Host, ToolPanel
from attnviz.ui.app.session import AppSession, Selection
from attnviz.ui.app.view_base import SessionView, scrolled, view_column
from attnviz.ui.flow_layout import flow_widget
from attnviz.ui.heatmap import HeatmapWidget
from attnviz.ui.heatmap.paint import (
    MASK_HATCH_COLOR,
    diagonal_stripes,
    empty_bar_width,
    format_number,
    overlay_scale,
    upsample,
)
from attnviz.ui.i18n import tr_text, translate
from attnviz.ui.theme import error_color, ok_color, warning_color
from attnviz.ui.views.docks import DOCKS, MASKING_LAB_DOCK
from attnviz.ui.views.slide_pages import SlidePages

__all__ = ["MASKING_LAB_DOCK", "MaskingLabView", "install_masking_lab"]


#: Red of the disagreement outline: the same family as the empty-row marker, so red always
#: means "look here", but as an outline (or a tint) rather than a filled bar.
DIFF_COLOR = (230, 20, 20)
#: Up to this many cells per side disagreeing cells are outlined; beyond, they are tinted.
_OUTLINE_MAX_SIDE = 32
#: A convention's map is at least this wide (plus its colour bar): the grid's column width.
_CELL_MIN_WIDTH = 330
#: A convention's map is at least this high (on a slide too: in slide type, six maps on one
#: 1280x720 slide were 49-57 px high, so a slide shows them a page at a time).
_MAP_MIN_HEIGHT = 170
_SLIDE_MAP_MIN_HEIGHT = 150
#: The maps of one slide page, in one row: three conventions, or two with both causal
#: alignments each (Page Down shows the next page: ``SlidePages``).
SLIDE_PAGE_MAPS = 3
SLIDE_PAGE_PAIRS = 2
#: On a slide a map is at least this wide (a 4-key map, its axis and its bar): beside a lesson's
#: panel a page holds fewer maps (three in one row scrolled sideways there).
_SLIDE_CELL_MIN_WIDTH = 300
#: On a slide narrower than this (a lesson's panel beside the lab) the header's legend is brief.
_BRIEF_HEADER_WIDTH = 900
#: The place of each mask mode in the lab after the reference, the same on every input: the bugs
#: first, then the libraries' conventions.
LAB_ORDER = ("float01", "inverted", "d2l", "neg_inf", "sdpa", "strict")
#: The axes of every convention's map.
_KEYS = QT_TRANSLATE_NOOP("MaskingLab", "Keys")
_QUERIES = QT_TRANSLATE_NOOP("MaskingLab", "Queries")


#: The engine's row classes (``engine.lab.ROW_KINDS``) as the hover text names them.
ROW_KIND_NAMES = {
    "nan_row": QT_TRANSLATE_NOOP("MaskingLab", "nan row"),
    "zero_row": QT_TRANSLATE_NOOP("MaskingLab", "zero row"),
    "uniform_over_padding": QT_TRANSLATE_NOOP("MaskingLab", "uniform over padding"),
    "future_visible": QT_TRANSLATE_NOOP("MaskingLab", "future visible"),
    "padding_attended": QT_TRANSLATE_NOOP("MaskingLab", "padding attended"),
    "keys_hidden": QT_TRANSLATE_NOOP("MaskingLab", "keys hidden"),
    "ok": QT_TRANSLATE_NOOP("MaskingLab", "ok"),
}


def disagreement_image(
    cells: np.ndarray, leaked: np.ndarray, output_rows: np.ndarray | None = None
) -> tuple[np.ndarray, int]:
    """RGBA uint8 overlay for a (rows, cols) matrix, and its pixels per cell per side.

    ``cells``: weights that differ from the reference (outlined red, or tinted red when the
    matrix is too big for outlines to show); ``leaked``: cells the mask forbids that still get
    weight (light grey stripes, so the cell's colour shows through and it still reads "masked");
    ``output_rows``: rows whose output differs (a red bar inside the right edge of the row, the
    mirror of the heatmap's empty-row bar on the left), which the weights alone cannot show.
    """
    rows, cols = cells.shape
    side = max(rows, cols, 1)
    k = overlay_scale(rows, cols)  # the heatmap's own overlay resolution
    h, w = rows * k, cols * k
    img = np.zeros((h, w, 4), dtype=np.uint8)
    if leaked.any():
        # Falling stripes (\), across the rising hatch of the masked cells around it: a leak
        # does not read as one of them.
        period = max(4, k // 3)
        stripes = diagonal_stripes(h, w, period, max(1, period // 5), rising=False)
        img[upsample(leaked, k) & stripes] = (*MASK_HATCH_COLOR[:3], 150)
    if cells.any():
        big = side > _OUTLINE_MAX_SIDE or k < 6
        cell_px = upsample(cells, k)
        if big:
            img[cell_px] = (*DIFF_COLOR, 150)
        else:
            border = max(2, k // 20)
            pos_y = (np.arange(h) % k)[:, None]
            pos_x = (np.arange(w) % k)[None, :]
            ring = (pos_y < border) | (pos_y >= k - border) | (pos_x < border) | (pos_x >= k - border)
            img[cell_px & ring] = (*DIFF_COLOR, 255)
    if output_rows is not None and output_rows.any():
        bar = max(1, round(empty_bar_width(cols) * k))  # as wide as the empty-row bar
        rows_px = np.repeat(np.asarray(output_rows, dtype=bool), k)
        img[rows_px, w - bar :] = (*DIFF_COLOR, 255)
    return img, k


def friendly_name(conv: ConventionView) -> str:
    """A convention as people call it: the mask mode's label, and its causal alignment if any
    ("Book (-1e6 fill) · bottom-right"), not its identifier ("d2l")."""
    name = tr_text(catalog.MASK_MODES.label(conv.mask_mode))
    return name if conv.causal is None else f"{name} · {conv.causal.replace('_', '-')}"


def _every_convention(job: Job[None]) -> LabOutcome:
    """The view's computation: the head on show under every convention."""
    return run_masking_lab(job.snapshot)


class _FitGrid(QGridLayout):
    """A grid that does not ask for height-for-width: the wrapping labels in it would make the
    scroll area size the grid by its preferred height (two rows of 450 px) instead of fitting the
    rows into the dock and scrolling only when they reach their minimum."""

    def hasHeightForWidth(self) -> bool:
        return False


class _ConventionCell(QFrame):
    """One convention: its heatmap with the disagreement overlay, and a one-line verdict."""

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.name = name
        # The title is a wrapping label above the map, not the map's own title: a plot title
        # as wide as "-inf fill / additive 0/-inf mask" would push the colour bar out of view.
        self.title = QLabel(name)
        self.title.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        bold = self.title.font()
        bold.setBold(True)
        self.title.setFont(bold)
        self.heatmap = HeatmapWidget(title="")
        # The main view's minimum (480 x 200) would make a grid of six a wall of scrolling.
        self.heatmap.setMinimumSize(_CELL_MIN_WIDTH - 10, _MAP_MIN_HEIGHT)
        self.heatmap.set_wheel_zoom(False)  # the wheel scrolls the grid of maps
        self.overlay = pg.ImageItem(axisOrder="row-major")
        self.overlay.setZValue(12)  # above the mask overlay (10), below the empty-row bar (15)
        self.overlay.setVisible(False)
        self.heatmap.plot_item.addItem(self.overlay, ignoreBounds=True)
        self.verdict = QLabel()
        self.verdict.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        # Never wider than the map: a long title or verdict wraps onto a second line instead of
        # widening the grid (or being cut).
        for label in (self.title, self.verdict):
            label.setWordWrap(True)
            label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        layout = self._layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        # Apart enough that the verdict under the map never touches its "Keys" axis name.
        layout.setSpacing(4)
        layout.addWidget(self.title)
        layout.addWidget(self.heatmap, 1)
        layout.addWidget(self.verdict)

    def needed_height(self, width: int, map_height: int) -> int:
        """The height the cell needs at ``width`` with its map ``map_height`` high: its title and
        verdict wrapped as they are (the grid asks for no height-for-width, see ``_FitGrid``)."""
        margins = self._layout.contentsMargins()
        inner = width - margins.left() - margins.right()
        labels = sum(
            max(label.heightForWidth(inner), label.sizeHint().height()) for label in (self.title, self.verdict)
        )
        return labels + map_height + 2 * self._layout.spacing() + margins.top() + margins.bottom()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        # A title or verdict wrapped onto two lines keeps both: without height-for-width in the
        # grid, the label kept one line's height and its second line ran over the Keys axis.
        margins = self._layout.contentsMargins()
        inner = event.size().width() - margins.left() - margins.right()
        for label in (self.title, self.verdict):
            need = label.heightForWidth(inner) if label.text() else 0
            if need > 0 and label.minimumHeight() != need:
                label.setMinimumHeight(need)

    def show_convention(
        self, conv: ConventionView, ref: ConventionView, outcome: LabOutcome, b: int, *, named: bool = True
    ) -> None:
        """Draw ``conv`` for batch element ``b``; ``named``: the verdict names the convention (on a
        slide the title right above it does, and the verdict keeps to one line)."""
        assert outcome.allowed is not None and outcome.empty_rows is not None
        allowed = outcome.allowed[b]
        w = conv.weights[b]
        leaked = ~allowed & (w != 0)  # NaN != 0 too: a NaN in a masked cell is a leak as well
        is_ref = conv.name == ref.name
        # The mode's label, and the alignment kept short: a long title would not fit the map.
        mode = catalog.MASK_MODES[conv.mask_mode]
        title = tr_text(mode.label)
        if conv.causal is not None:
            title += f" · {conv.causal.replace('_', '-')}"
        self.title.setText(title + (" " + translate("MaskingLab", "(reference)") if is_ref else ""))
        self.title.setToolTip(f"{tr_text(conv.label)}: {tr_text(mode.description)}")
        self.heatmap.set_data(
            w,
            mask=allowed | leaked,
            empty_rows=outcome.empty_rows[b],
            levels=(0.0, 1.0),
            hover=lambda r, c: self._hover(conv, ref, allowed, b, r, c),
        )
        cells = conv.cells[b]
        out_rows = conv.output_rows[b]
        img, _k = disagreement_image(cells, leaked, out_rows)
        if cells.any() or leaked.any() or out_rows.any():
            # levels=(0, 255): pyqtgraph 0.14 crashes painting downsampled RGBA with levels=None.
            self.overlay.setImage(img, autoLevels=False, levels=(0, 255), autoDownsample=True)
            self.overlay.setRect(QRectF(0, 0, w.shape[1], w.shape[0]))
            self.overlay.setVisible(True)
        else:
            self.overlay.clear()
            self.overlay.setVisible(False)
        verdict = self._verdict(conv, ref, b)
        self.verdict.setText(verdict if named else verdict.partition("</b>: ")[2])

    @staticmethod
    def _hover(conv: ConventionView, ref: ConventionView, allowed: np.ndarray, b: int, r: int, c: int) -> str:
        w = float(conv.weights[b, r, c])
        where = translate("MaskingLab", "{name}: batch {b}, query {r}, key {c}").format(
            name=friendly_name(conv), b=b, r=r, c=c
        )
        lines = [
            where + ("" if allowed[r, c] else "  " + translate("MaskingLab", "(masked)")),
            translate("MaskingLab", "weight {value}").format(value=format_number(w)),
        ]
        if conv.name != ref.name:
            lines.append(
                translate("MaskingLab", "{name} gives {value}").format(
                    name=friendly_name(ref), value=format_number(float(ref.weights[b, r, c]))
                )
                + ("  — " + translate("MaskingLab", "differs") if conv.cells[b, r, c] else "")
            )
        kind = str(conv.row_kinds[b, r])
        lines.append(translate("MaskingLab", "row: {kind}").format(kind=tr_text(ROW_KIND_NAMES.get(kind, kind))))
        return "\n".join(lines)

    @staticmethod
    def _verdict(conv: ConventionView, ref: ConventionView, b: int) -> str:
        name = html.escape(friendly_name(conv))
        if conv.name == ref.name:
            return f"<b>{name}</b>: " + translate("MaskingLab", "the reference")
        n_cells = int(conv.cells[b].sum())
        n_out = int(conv.output_rows[b].sum())
        if n_cells == 0 and n_out == 0:
            same = translate("MaskingLab", "same as {name}").format(name=html.escape(friendly_name(ref)))
            return f"<b>{name}</b>: <span style='color:{ok_color()}'>{same}</span>"
        weights = (
            translate("MaskingLab", "1 weight")
            if n_cells == 1
            else translate("MaskingLab", "{n} weights").format(n=n_cells)
        )
        outputs = (
            translate("MaskingLab", "1 output")
            if n_out == 1
            else translate("MaskingLab", "{n} outputs").format(n=n_out)
        )
        if n_cells and n_out:
            verdict = translate("MaskingLab", "{weights} and {outputs} differ").format(weights=weights, outputs=outputs)
        elif n_cells + n_out == 1:
            verdict = translate("MaskingLab", "{what} differs").format(what=weights if n_cells else outputs)
        else:
            verdict = translate("MaskingLab", "{what} differ").format(what=weights if n_cells else outputs)
        return f"<b>{name}</b>: <span style='color:{error_color()}'>{verdict}</span>"


class MaskingLabView(SessionView):
    """Every masking convention on the document's current input (see the module docstring).

    ``outcome`` is the ``LabOutcome`` drawn last (``shown_version`` its document version);
    ``cells[name].heatmap`` the heatmap of each convention; ``sentences()`` the sentences listed;
    ``lab`` the computation. ``resultShown`` is emitted after each drawn result.
    """

    resultShown = Signal(object)

    def __init__(self, session: AppSession, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self._session = session
        self.outcome: LabOutcome | None = None
        self.shown_version = -1
        self.error: str | None = None
        self._batch = 0
        self.cells: dict[str, _ConventionCell] = {}
        self._order: list[str] = []
        self._paired = False
        self._laid_out: tuple[tuple[str, ...], int] = ((), 0)  # the maps in the grid, its columns
        self._brief = False  # the slide's header in brief (the lab beside a lesson)
        #: On a slide the maps a page at a time (Page Down walks them; off a slide one page).
        self.slide_pages = SlidePages(session, self)
        self.slide_pages.pageChanged.connect(lambda _page: self._page_changed())

        self.lab = self.while_shown(self.session.register("masking lab", _every_convention))
        self.lab.on_result(self._on_result)
        self.lab.on_failure(self._on_failure)
        self.lab.busyChanged.connect(lambda _busy: self._update_status())

        self.header = QLabel()
        self.header.setWordWrap(True)
        self.header.setTextFormat(Qt.TextFormat.RichText)
        # The batch element the maps show, on the lab itself: presentation mode hides the input
        # tables' picker, and a lesson asks about a given batch element.
        self.batch_spin = QSpinBox()
        self.batch_spin.setRange(0, 0)
        self.batch_spin.valueChanged.connect(session.set_batch)
        self.batch_caption = QLabel()
        self.batch_caption.setBuddy(self.batch_spin)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.grid_host = QWidget()
        self.grid = _FitGrid(self.grid_host)
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.grid.setSpacing(4)
        grid_scroll = scrolled(self.grid_host, frame=False)
        grid_scroll.setObjectName("maskingLabMaps")

        self.sentence_label = QLabel()
        self.sentence_label.setWordWrap(True)
        self.sentence_label.setTextFormat(Qt.TextFormat.RichText)
        self.sentence_label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.sentence_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        sentence_scroll = scrolled(self.sentence_label, frame=False)

        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(grid_scroll)
        splitter.addWidget(sentence_scroll)
        splitter.setChildrenCollapsible(False)
        # Most of the height for the maps; the sentences get a strip the user can drag taller.
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 0)
        splitter.setSizes([800, 170])
        sentence_scroll.setMinimumHeight(60)
        self.splitter = splitter
        self._sentence_scroll = sentence_scroll
        self._user_split = False  # once the user drags the divider, their choice stands
        splitter.splitterMoved.connect(lambda *_: setattr(self, "_user_split", True))

        layout = view_column(self)
        top = QHBoxLayout()
        top.addWidget(self.header, 1)
        top.addWidget(flow_widget(self.batch_caption, self.batch_spin), 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(top)
        layout.addWidget(self.status)
        layout.addWidget(splitter, 1)
        self._batch = session.selection.batch
        self.retranslate()

    def retranslate(self) -> None:
        self.batch_caption.setText(translate("MaskingLab", "Ba&tch element"))
        self.batch_spin.setToolTip(
            translate("MaskingLab", "Which batch element the maps show (the same as in the main window)")
        )
        self.setToolTip(
            translate(
                "MaskingLab",
                "The current input under every masking convention; red outlines mark "
                "weights that differ from the reference",
            )
        )
        self.sentence_label.setToolTip(
            translate(
                "MaskingLab",
                "What each convention does differently from the reference, counted over every batch element",
            )
        )
        if self.outcome is not None:
            self._draw(self.outcome)
        else:
            self._update_header()
        self._update_status()

    # ------------------------------------------------------------------ inputs

    def on_selection(self, selection: Selection) -> None:
        # Another head is computed again (the lab follows the head); another batch element is
        # the same result drawn for it.
        self._batch = max(0, int(selection.batch))
        with QSignalBlocker(self.batch_spin):
            self.batch_spin.setValue(self._batch)
        self.request_draw()

    def draw(self) -> None:
        if self.outcome is not None:
            self._draw(self.outcome)

    def on_presentation(self, on: bool) -> None:
        for cell in self.cells.values():
            self._size_map(cell, on)
        self.slide_pages.follow_presentation(on)
        self.slide_pages.set_count(len(self.pages()))
        self._page_changed()

    @staticmethod
    def _size_map(cell: _ConventionCell, slide: bool) -> None:
        if slide:
            cell.heatmap.setMinimumSize(_SLIDE_CELL_MIN_WIDTH - 10, _SLIDE_MAP_MIN_HEIGHT)
        else:
            cell.heatmap.setMinimumSize(_CELL_MIN_WIDTH - 10, _MAP_MIN_HEIGHT)

    def pages(self) -> list[list[str]]:
        """The conventions each page shows, in the lab's order: on a slide a row of maps a page
        (``SLIDE_PAGE_MAPS``, or ``SLIDE_PAGE_PAIRS`` modes with both alignments), else one page."""
        if not self.session.presenting or not self._order:
            return [list(self._order)]
        fit = max(1, (self.width() - 20 + self.grid.spacing()) // (_SLIDE_CELL_MIN_WIDTH + self.grid.spacing()))
        size = 2 * max(1, min(SLIDE_PAGE_PAIRS, fit // 2)) if self._paired else max(1, min(SLIDE_PAGE_MAPS, fit))
        return [self._order[i : i + size] for i in range(0, len(self._order), size)]

    def on_page(self) -> list[str]:
        """The conventions on show (all of them off a slide)."""
        pages = self.pages()
        return pages[min(self.slide_pages.page, len(pages) - 1)]

    def _page_changed(self) -> None:
        if self._order:
            self._relayout()
        if self.outcome is not None:
            self._draw(self.outcome)
        self._fit_sentences()

    @property
    def busy(self) -> bool:
        return self.lab.busy

    def sentences(self) -> list[str]:
        return [] if self.outcome is None else self.outcome.sentences()

    # ------------------------------------------------------------------ results

    def _on_failure(self, error: str) -> None:
        self._on_result(LabOutcome(self._session.document.version, error=error, focus=self._session.selection.focus))

    def _on_result(self, outcome: LabOutcome) -> None:
        self.shown_version = outcome.version
        if outcome.error is not None:
            self.error = outcome.error
        else:
            self.error = None
            self.outcome = outcome
            self.request_draw()
        self._update_status()
        self.resultShown.emit(outcome)

    def _ordered(self, outcome: LabOutcome) -> list[str]:
        """Reference first, then every other mode in one fixed order (``LAB_ORDER``: the bugs
        first, where most lessons' point is); with a causal mask each mode's two alignments side
        by side (the intended one first). The same place for a mode in every lesson: sorted by
        which ones differed, the maps changed places between lessons of one lecture."""
        ref = outcome.conventions[outcome.reference]
        known = [m for m in LAB_ORDER if m in catalog.MASK_MODES]
        others = [m for m in catalog.MASK_MODES if m not in known]
        modes = [ref.mask_mode] + [m for m in known + others if m != ref.mask_mode]
        names: list[str] = []
        for mode in modes:
            mine = [c for c in outcome.conventions.values() if c.mask_mode == mode]
            mine.sort(key=lambda c: c.causal != ref.causal)
            names += [c.name for c in mine]
        return names

    def _draw(self, outcome: LabOutcome) -> None:
        names = self._ordered(outcome)
        for name in [n for n in self.cells if n not in names]:
            cell = self.cells.pop(name)
            self.grid.removeWidget(cell)
            self.release_map(cell.heatmap)
            cell.deleteLater()
        for name in names:
            if name not in self.cells:
                cell = self.cells[name] = _ConventionCell(name)
                self.own_map(cell.heatmap, x_label=_KEYS, y_label=_QUERIES)
                self._size_map(cell, self.session.presenting)
        self._order = names
        self._paired = outcome.report is not None and outcome.report.causal is not None
        self.slide_pages.set_count(len(self.pages()))
        self._relayout()
        assert outcome.allowed is not None
        b = min(self._batch, outcome.allowed.shape[0] - 1)
        with QSignalBlocker(self.batch_spin):
            self.batch_spin.setRange(0, outcome.allowed.shape[0] - 1)
            self.batch_spin.setValue(b)
        ref = outcome.conventions[outcome.reference]
        for name in names:
            self.cells[name].show_convention(
                outcome.conventions[name], ref, outcome, b, named=not self.session.presenting
            )
        self._update_header(outcome, b)
        self._show_sentences(outcome)

    def _columns(self, n: int) -> int:
        """As many maps per row as fit the width (so a wide bottom dock shows all six in one
        row); with a causal mask an even number, keeping each mode's two alignments together.
        On a slide a page's maps in one row."""
        if self.session.presenting:
            return max(1, n)
        fit = max(1, int((self.width() - 20) // _CELL_MIN_WIDTH))
        if self._paired:
            fit = max(2, fit - fit % 2)
        return max(1, min(n, fit))

    def _relayout(self) -> None:
        shown = tuple(self.on_page())
        columns = self._columns(len(shown))
        if (shown, columns) == self._laid_out and all(self.grid.indexOf(self.cells[n]) >= 0 for n in shown):
            return
        self._laid_out = (shown, columns)
        for name, cell in self.cells.items():
            if name not in shown and self.grid.indexOf(cell) >= 0:
                self.grid.removeWidget(cell)
                cell.setVisible(False)
        for i, name in enumerate(shown):
            self.grid.addWidget(self.cells[name], i // columns, i % columns)
            self.cells[name].setVisible(True)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        brief = self.width() < _BRIEF_HEADER_WIDTH
        if (
            self._order
            and self.session.presenting
            and (len(self.pages()) != self.slide_pages.count or brief != self._brief)
        ):
            self._brief = brief
            self.slide_pages.set_count(len(self.pages()))  # as many maps a page as the width holds
            self._page_changed()
        elif self._order:
            self._relayout()
        self._fit_sentences()
        # Again once the grid has its new width: the maps' titles wrap by it.
        QTimer.singleShot(0, self, self._fit_sentences)

    def _fit_sentences(self) -> None:
        """Give the sentences the height they need (at most 40 %), the maps the rest."""
        total = self.splitter.height()
        if self._user_split or total <= 0:
            return
        width = max(200, self._sentence_scroll.viewport().width())
        need = self.sentence_label.heightForWidth(width) + 2 * self._sentence_scroll.frameWidth() + 4
        if self.session.presenting:
            # On a slide a page's sentences are few: all they need, the maps keep their minimum
            # (the page's maps must not scroll, nor should their sentences).
            shown = [self.cells[name] for name in self.on_page() if name in self.cells]
            column = (self.grid_host.width() - self.grid.spacing() * max(0, len(shown) - 1)) // max(1, len(shown))
            maps = max((cell.needed_height(column, _SLIDE_MAP_MIN_HEIGHT) for cell in shown), default=0)
            room = total - maps - self.splitter.handleWidth()
            lower = max(self._sentence_scroll.minimumHeight(), min(need, room))
        else:
            lower = max(self._sentence_scroll.minimumHeight(), min(need, int(0.4 * total)))
        self.splitter.setSizes([total - lower, lower])
        self._user_split = False  # setSizes is not the user's drag

    def _update_header(self, outcome: LabOutcome | None = None, b: int = 0) -> None:
        where = ""
        if outcome is not None and outcome.allowed is not None:
            n_b = outcome.allowed.shape[0]
            where = " " + (
                translate("MaskingLab", "Showing batch element {b} of {n}.")
                if n_b > 1
                else translate("MaskingLab", "Showing batch element {b}.")
            )
            where = where.format(b=b, n=n_b)
        ref = (
            html.escape(friendly_name(outcome.conventions[outcome.reference]))
            if outcome is not None and outcome.reference in outcome.conventions
            else html.escape(tr_text(catalog.MASK_MODES.label("strict")))
        )
        if self.session.presenting:
            self.header.setText(self._slide_header(outcome, b, ref))
            return
        self.header.setText(
            translate(
                "MaskingLab",
                "The current input under every masking convention, as each library or bug would compute it.",
            )
            + where
            + " "
            + translate(
                "MaskingLab",
                "<span style='color:#d01414'><b>Red outline</b></span>: the weight differs from "
                "<b>{reference}</b>. Grey hatch: masked; light stripes: masked <i>but given "
                "weight</i>. Red bar on the left: the query has no valid key; on the right: its output "
                "differs.",
            ).format(reference=ref)
        )

    def _slide_header(self, outcome: LabOutcome | None, b: int, ref: str) -> str:
        """The header of a slide: which maps of how many, the batch element, and the legend, short
        (the whole header was five lines of a 1280x720 slide in slide type)."""
        shown, every = self.on_page(), self._order
        where = ""
        if shown and len(shown) < len(every):
            first = every.index(shown[0]) + 1
            where = translate("MaskingLab", "Maps {first}–{last} of {n}").format(
                first=first, last=first + len(shown) - 1, n=len(every)
            )
        if outcome is not None and outcome.allowed is not None and outcome.allowed.shape[0] > 1:
            batch = translate("MaskingLab", "batch element {b} of {n}").format(b=b, n=outcome.allowed.shape[0])
            where = f"{where} · {batch}" if where else batch
        legend = translate(
            "MaskingLab",
            "<span style='color:#d01414'><b>Red outline</b></span>: differs from <b>{reference}</b>. "
            "Hatch: masked; light stripes: masked <i>but given weight</i>. Red bar: no valid key (left), "
            "output differs (right).",
        ).format(reference=ref)
        self.header.setToolTip("")
        if self.width() < _BRIEF_HEADER_WIDTH:
            # Beside a lesson's panel the whole legend took nine lines of the slide: its first
            # part, the rest in the tooltip.
            self.header.setToolTip(f"<p>{legend}</p>")
            legend = translate(
                "MaskingLab", "<span style='color:#d01414'><b>Red outline</b></span>: differs from <b>{reference}</b>."
            ).format(reference=ref)
        return f"<b>{where}.</b> {legend}" if where else legend

    def _show_sentences(self, outcome: LabOutcome) -> None:
        sentences = outcome.sentences()
        ref = html.escape(friendly_name(outcome.conventions[outcome.reference]))
        if self.session.presenting and sentences:
            # On a slide the sentences of the maps on show only.
            shown = set(self.on_page())
            page = [s for s in sentences if tr_text(s).partition(":")[0].strip() in shown]
            if not page:
                listed = ", ".join(html.escape(friendly_name(outcome.conventions[n])) for n in self.on_page())
                self.sentence_label.setText(
                    translate("MaskingLab", "<b>Same weights and outputs as {reference}</b> here: {names}.").format(
                        reference=ref, names=listed
                    )
                )
                self._fit_sentences()
                return
            sentences = page
        if not sentences:
            self.sentence_label.setText(
                translate(
                    "MaskingLab",
                    "<b>Every convention gives {reference}'s weights and outputs on this input</b> (over "
                    "all batch elements). Try a valid length of 0, or a pitfall from Presets.",
                ).format(reference=ref)
            )
            self._fit_sentences()
            return
        items = []
        names = {name: friendly_name(conv) for name, conv in outcome.conventions.items()}
        grouped: dict[str, list[str]] = {}  # on a slide one line per convention, its findings joined
        for s in sentences:
            # The sentence starts with the convention's identifier ("d2l: 2 rows ..."): show its
            # name instead.
            head, sep, tail = tr_text(s).partition(":")
            if sep and self.session.presenting:
                grouped.setdefault(head.strip(), []).append(html.escape(tail.strip()))
                continue
            text = f"<b>{html.escape(names.get(head.strip(), head))}</b>:{html.escape(tail)}" if sep else html.escape(s)
            items.append(f"<li>{text}</li>")
        for head, tails in grouped.items():
            items.append(f"<li><b>{html.escape(names.get(head, head))}</b>: {'; '.join(tails)}</li>")
        heading = translate("MaskingLab", "<b>What differs from {reference}</b> (all batch elements):").format(
            reference=ref
        )
        if self.session.presenting:
            # On a slide the list alone: each line names its convention, the header the reference.
            self.sentence_label.setText(f"<ul style='margin-left:0px; -qt-list-indent:1'>{''.join(items)}</ul>")
        else:
            self.sentence_label.setText(f"{heading}<ul style='margin-left:12px'>{''.join(items)}</ul>")
        self._fit_sentences()

    def _update_status(self) -> None:
        if self.error is not None:
            self.status.setText(
                f"<span style='color:{error_color()}'>{html.escape(tr_text(self.error))}</span>"
                + (" " + translate("MaskingLab", "(showing the last good result)") if self.outcome is not None else "")
            )
        elif self.lab.busy:
            computing = translate("MaskingLab", "computing every convention…")
            self.status.setText(f"<span style='color:{warning_color()}'>{computing}</span>")
        else:
            self.status.setText("")
        self.status.setVisible(bool(self.status.text()))


def install_masking_lab(session: AppSession, host: Host) -> ToolPanel:
    """Add the masking lab as a hidden dock; Tools > Masking lab (Ctrl+Shift+M) shows it."""
    return host.add_dock(DOCKS[MASKING_LAB_DOCK], lambda: MaskingLabView(session))
