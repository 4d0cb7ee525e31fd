"""Side by side: the same inputs under two configurations, and where their weights differ.

What differs is one setting: the scoring function, the mask mode or the dtype (A vs B). Both
variants are the view's computation (``compute.side_by_side.run_comparison``, the comparison its
parameters), on a thread of its own (latest request wins) and only while the view is on show;
the view shows A's weights, B's weights and A − B on a diverging colour scale centred on 0,
with the largest |A − B| printed.

The chapter's exercise 1 (change the keys: do additive and scaled dot-product attention still
agree?) is one click: it sets the comparison to additive vs scaled dot product and explains what
to look for.
"""

from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QSignalBlocker, Qt, Signal
from PySide6.QtGui import QColor, QFontMetricsF, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from attnviz.compute import Outcome, ViewData
from attnviz.compute.axes import axis_labels
from attnviz.compute.side_by_side import (
    COMPARE_KINDS,
    EXERCISE_1,
    Comparison,
    PairOutcome,
    compare_choices,
    run_comparison,
)
from attnviz.state import catalog
from attnviz.state.document import ReplaceState, State, filled_state
from attnviz.state.run import HeadView
from attnviz.teaching.lessons import LESSONS
from attnviz.text.tr import QT_TRANSLATE_NOOP
from attnviz.ui.app.host import Host, ToolPanel
from attnviz.ui.app.results_panel import weight_levels
from attnviz.ui.app.session import AppSession, Selection
from attnviz.ui.app.view_base import SessionView, fitted_column, message_label
from attnviz.ui.flow_layout import flow_widget
from attnviz.ui.heatmap import HeatmapWidget
from attnviz.ui.heatmap.weights import show_weights
from attnviz.ui.i18n import tr_text, translate
from attnviz.ui.theme import error_color, ok_color, set_text_color, tinted_panel, warning_color
from attnviz.ui.views.docks import COMPARE_DOCK, DOCKS

__all__ = ["COMPARE_DOCK", "CompareView", "DivergingHeatmap", "install_compare_view"]

_DEFAULTS: dict[str, tuple[str, str]] = {
    "scoring": ("additive", "scaled_dot"),
    "mask_mode": ("d2l", "strict"),
    "dtype": ("float32", "float16"),
}

#: Colour-blind-safe diverging map (blue – grey – yellow) bundled with pyqtgraph: the sign of
#: A − B must read at a glance, and the project's maps are all sequential.
DIVERGING_MAP = "CET-CBD1"


# CET-CBD1 sampled at 7 points, for installs whose pyqtgraph lacks its colour-map files.
_DIVERGING_STOPS = (
    (58, 144, 254),
    (140, 174, 251),
    (194, 207, 246),
    (237, 237, 236),
    (221, 206, 167),
    (196, 174, 97),
    (168, 144, 8),
)


def diverging_colormap() -> pg.ColorMap:
    try:
        cmap = pg.colormap.get(DIVERGING_MAP)
    except (OSError, ValueError):
        cmap = None
    if cmap is None:
        cmap = pg.ColorMap(pos=np.linspace(0.0, 1.0, len(_DIVERGING_STOPS)), color=list(_DIVERGING_STOPS))
    return cmap


class DivergingHeatmap(HeatmapWidget):
    """A HeatmapWidget on a diverging colour scale (for signed differences).

    The app-wide colour-map choice does not apply: a sequential map would hide the sign.
    """

    def __init__(self, parent: QWidget | None = None, **kwargs: object) -> None:
        super().__init__(parent, **kwargs)  # type: ignore[arg-type]
        cmap = diverging_colormap()
        self._diverging_lut = np.asarray(cmap.getLookupTable(nPts=256, alpha=False), dtype=np.uint8)
        self._colormap_name = f"diverging {DIVERGING_MAP}"
        self.image_item.setLookupTable(self._diverging_lut)
        self.colorbar.setColorMap(cmap)

    def set_colormap(self, name: str) -> None:
        """Ignored: the difference map keeps its diverging scale."""

    def _cell_colors(self) -> np.ndarray:
        # The annotation text colour (dark or light) is chosen from the cell colour, so it must
        # be looked up in the diverging table, not in the sequential one the base class uses.
        values = self.values
        assert values is not None
        lo, hi = self.levels
        with np.errstate(invalid="ignore"):
            scaled = (values - lo) * (256.0 / (hi - lo))
        idx = np.clip(np.nan_to_num(scaled, nan=0.0, posinf=255.0, neginf=0.0), 0, 255).astype(np.intp)
        return self._diverging_lut[idx].copy()


def _side_error(outcome: Outcome | None) -> str | None:
    if outcome is None:
        return translate("CompareView", "no result")
    return None if outcome.error is None else tr_text(outcome.error)


def _lesson_comparison(example: str | None) -> Comparison | None:
    """The comparison the lesson ``example`` asks for (None: not a lesson, or it asks for none)."""
    lesson = LESSONS.get(example or "")
    return None if lesson is None or lesson.side_by_side is None else Comparison(*lesson.side_by_side)


def _dot_products_exist(head: HeadView) -> bool:
    """Whether queries and keys have the same length (dot-product scoring can run)."""
    return head.queries.shape[-1] == head.keys.shape[-1]


def _side_label(comparison: Comparison, side: str) -> str:
    """The side and its choice in the current language, such as "A: Additive"."""
    return f"{side}: {tr_text(comparison.choice_label(side))}"


def _nothing_to_rank(state: State, head: HeadView, batch: int) -> bool:
    """Whether every query of ``batch`` has at most one valid key (by its valid lengths): then
    any two scoring functions give it the same weights."""
    lens = state.valid_lens(head)
    if lens is None or head.masks is not None or not 0 <= batch < lens.shape[0]:
        return False
    return bool(np.all(np.asarray(lens[batch]) <= 1))


def _group(*widgets: QWidget) -> QWidget:
    """Widgets kept together on one line (a caption and its field) inside a flowing row."""
    box = QWidget()
    row = QHBoxLayout(box)
    row.setContentsMargins(0, 0, 0, 0)
    for widget in widgets:
        row.addWidget(widget)
    return box


class CompareView(SessionView):
    """Two configurations on the session's inputs: weights of each and their difference.

    It follows the session's document and selection and computes (``pair``: on its own thread,
    only while on show). Its edits (randomised keys, the dot-product toy) go through the session.

    ``resultShown(PairOutcome)`` is emitted after a result was drawn.
    """

    resultShown = Signal(object)

    def __init__(self, session: AppSession, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self._session = session
        # The chapter's exercise, where the inputs allow it; otherwise (queries and keys of
        # different lengths: no dot product) two mask modes, so the view opens on two results.
        # A lesson's comparison when a lesson that asks for one is on show.
        self._comparison = _lesson_comparison(session.loaded_example()) or (
            EXERCISE_1 if _dot_products_exist(session.head_view()) else Comparison("mask_mode", "d2l", "strict")
        )
        self._random_seed = 0
        self.last_result: PairOutcome | None = None
        #: Document version of the drawn result (-1 before the first).
        self.shown_doc_version = -1
        #: The head the last result shown was of.
        self.shown_focus = session.selection.focus
        self.max_abs_diff: float | None = None
        self.pair = self.while_shown(self.session.register("side by side", run_comparison, params=self._comparison))
        self.pair.on_result(self._on_result)
        self.pair.busyChanged.connect(lambda _busy: self._update_status())

        # Without height-for-width: the page's two scroll bars stayed on a slide (issue 37).
        layout = fitted_column(self)

        # The controls wrap onto a second line when the tab is narrow (a lesson docked beside it
        # on a projector), so the view never scrolls sideways; each caption stays with its field.
        controls = QHBoxLayout()
        groups: list[QWidget] = []
        self.kind = QComboBox()
        for key in COMPARE_KINDS:
            self.kind.addItem("", key)
        self.choice_a = QComboBox()
        self.choice_b = QComboBox()
        self.swap = QToolButton()
        self.swap.setText("⇄")
        self.swap.clicked.connect(
            lambda: self.set_comparison(Comparison(self._comparison.what, self._comparison.b, self._comparison.a))
        )
        self.kind_caption = QLabel()
        for caption, widget in (
            (self.kind_caption, self.kind),
            (QLabel("&A"), self.choice_a),
            (QLabel("&B"), self.choice_b),
        ):
            caption.setBuddy(widget)
            groups.append(_group(caption, widget, *([self.swap] if widget is self.choice_b else [])))
        #: What is compared: on a slide the lists A and B say it (chrome: the maps need the room).
        self.kind_group = groups[0]
        self.batch_spin = QSpinBox()
        self.batch_spin.valueChanged.connect(session.set_batch)
        self.batch_caption = QLabel()
        self.batch_caption.setBuddy(self.batch_spin)
        groups.append(_group(self.batch_caption, self.batch_spin))
        controls.addWidget(flow_widget(*groups, spacing=12), 1)
        self.status = QLabel()
        controls.addWidget(self.status)
        layout.addLayout(controls)

        self.exercise_button = QPushButton()
        self.exercise_button.clicked.connect(self.start_exercise_1)
        self.randomise_button = QPushButton()
        self.randomise_button.clicked.connect(self._randomise_keys)
        self.dot_toy_button = QPushButton()
        self.dot_toy_button.clicked.connect(lambda: session.load_preset("dot-toy"))
        self.dot_toy_button.setVisible(False)
        # They wrap too: a Portuguese exercise button beside "Randomise keys" widened the page.
        self.exercise_row = flow_widget(self.exercise_button, self.randomise_button, self.dot_toy_button)
        layout.addWidget(self.exercise_row)
        self.explanation = QLabel()
        self.explanation.setWordWrap(True)
        self.explanation.setTextFormat(Qt.TextFormat.RichText)
        self.explanation.setContentsMargins(6, 6, 6, 6)
        tinted_panel(self.explanation, QColor(200, 170, 60), 0.18)
        self.explanation.setVisible(False)
        layout.addWidget(self.explanation)

        # Large and bold through its text, not a font set once: presentation mode enlarges it.
        self.max_label = QLabel()
        self.max_label.setTextFormat(Qt.TextFormat.RichText)
        # It wraps: "máx. |A − B|: — (os dois lados precisam ser calculados)" in slide type is
        # wider than the tab beside a lesson, and the page scrolled sideways.
        self.max_label.setWordWrap(True)
        layout.addWidget(self.max_label)

        self.maps = QGridLayout()
        self.map_a = self.own_map(HeatmapWidget(title="A"))
        self.map_b = self.own_map(HeatmapWidget(title="B"))
        self.map_diff = self.own_map(DivergingHeatmap(title="A − B"))
        self.errors: dict[str, QLabel] = {}
        self._cells: dict[str, QWidget] = {}
        for side, heatmap in (("A", self.map_a), ("B", self.map_b), ("diff", self.map_diff)):
            # Three of them fit beside a docked lesson at 1280x720 (the maps scale; 320 did not).
            heatmap.setMinimumSize(200, 120)
            cell = QWidget()
            column = QVBoxLayout(cell)
            column.setContentsMargins(0, 0, 0, 0)
            column.addWidget(heatmap, 1)
            error = message_label()
            # A side that could not compute shows why, in its map's place, at any width.
            error.setAlignment(Qt.AlignmentFlag.AlignTop)
            column.addWidget(error)
            column.addStretch(0)
            self.errors[side] = error
            self._cells[side] = cell
        for heatmap in (self.map_a, self.map_b):
            # A title that wraps (or unwraps) once its map is laid out levels the pair again.
            heatmap.titleHeightChanged.connect(lambda _height: self._level_titles())
        self._columns = 0
        self._wide = False  # the weights on show are of many more keys than queries
        self._arrange_maps()
        for heatmap in (self.map_a, self.map_b, self.map_diff):
            heatmap.setVisible(False)  # no axes or colour bar before there is a result to show
        layout.addLayout(self.maps, 1)

        self.kind.currentIndexChanged.connect(self._on_kind)
        self.choice_a.currentIndexChanged.connect(self._on_choice)
        self.choice_b.currentIndexChanged.connect(self._on_choice)
        catalog.SCORINGS.subscribe(self._on_scoring_registered)
        self.destroyed.connect(lambda *_: catalog.SCORINGS.unsubscribe(self._on_scoring_registered))
        self._show_comparison_controls()
        self._show_chrome(session.presenting)
        self.retranslate()
        session.exampleChanged.connect(self._on_example)

    def _on_example(self, name: str | None) -> None:
        """A lesson that asks for a comparison was loaded: set it up. Without exercise 1's
        banner: it states the answer the lesson panel keeps hidden until it is revealed (the
        Exercise 1 button, outside a lesson, still shows it)."""
        comparison = _lesson_comparison(name)
        if comparison is not None:
            self.set_comparison(comparison)
            self._update_explanation()

    def _arrange_maps(self) -> None:
        """Three maps in a row where each gets enough width for its axis, title and colour bar;
        in a narrow tab (presentation's large type beside a lesson) A and B in a row and their
        difference under them, rather than three maps cut at their right edges."""
        wide = self._font_scale > 1.0
        columns = 3 if self.width() >= (3 * 360 if wide else 3 * 240) else 2
        if wide and self._wide:
            # Many keys and few queries on a slide (exercise 1's one query and ten keys): one
            # map under the other, each the page's width, so its cells hold their numbers.
            columns = 1
        if columns == self._columns:
            return
        self._columns = columns
        for side in ("A", "B", "diff"):
            self.maps.removeWidget(self._cells[side])
        if columns == 1:
            places = {"A": (0, 0, 1), "B": (1, 0, 1), "diff": (2, 0, 1)}
        else:
            places = {"A": (0, 0, 1), "B": (0, 1, 1), "diff": (0, 2, 1) if columns == 3 else (1, 0, 2)}
        for side, (row, col, span) in places.items():
            # Under A and B the difference spans both columns: its colour bar's signed labels
            # ("-0.214") are wider than the weights' and were cut in a column of their width.
            self.maps.addWidget(self._cells[side], row, col, 1, span)
        for col in range(3):
            self.maps.setColumnStretch(col, 1 if col < columns else 0)
        for side, heatmap in (("A", self.map_a), ("B", self.map_b)):
            heatmap.set_title(self._map_title(self._comparison, side))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._arrange_maps()
        if self._font_scale > 1.0:
            self._fit_map_heights()

    def on_presentation(self, on: bool) -> None:
        self._show_chrome(on)
        self._arrange_maps()
        for side, heatmap in (("A", self.map_a), ("B", self.map_b)):
            heatmap.set_title(self._map_title(self._comparison, side))
        self._fit_map_heights()

    def _map_title(self, comparison: Comparison, side: str) -> str:
        """A map's title: its side and choice ("A: Additive"); on a slide with A and B side by
        side, its side alone (the lists A and B above name the choices): a choice's name in
        slide type wrapped onto three lines and left a three-row map a few pixels of cells."""
        if self._font_scale > 1.0 and self._columns > 1:
            return side
        return _side_label(comparison, side)

    def _show_chrome(self, presenting: bool) -> None:
        """Editing chrome goes on a slide (the clicker gives the lesson, and at slide size the
        maps need the height: three rows of controls left a one-row map without its axis): the
        exercise's buttons, the list of what is compared (A and B say it) and the status."""
        self.exercise_row.setVisible(not presenting)
        self.kind_group.setVisible(not presenting)
        self.status.setVisible(not presenting)

    def _set_max_text(self, text: str) -> None:
        self.max_label.setText(f"<big><b>{html.escape(text)}</b></big>")

    def _fit_map_heights(self) -> None:
        """No taller than their rows need: a 1 x 10 map stretched to the tab's height is a row of
        tall bars whose hatching and numbers read as noise."""
        result = self.last_result
        sides = (result.a, result.b) if result is not None else ()
        view = next((o.view for o in sides if o is not None and o.view is not None), None)
        rows = 4 if view is None else view.weights.shape[1]
        scale = self._font_scale
        height = int(scale * (110 + 50 * rows))
        rows_of_maps = {1: 3, 2: 2}.get(self._columns, 1)
        if scale > 1.0 and rows_of_maps > 1 and (room := self._room_for_maps()) is not None:
            # On a slide the rows of maps share the screen's height: nothing below the fold
            # (the difference under A and B ran off a 720-pixel slide).
            height = min(height, max(120, (room - (rows_of_maps - 1) * self.maps.spacing()) // rows_of_maps))
        for heatmap in (self.map_a, self.map_b, self.map_diff):
            heatmap.setMaximumHeight(height)

    def _page(self) -> QAbstractScrollArea | None:
        parent = self.parentWidget()
        while parent is not None and not isinstance(parent, QAbstractScrollArea):
            parent = parent.parentWidget()
        return parent

    def _room_for_maps(self) -> int | None:
        """The height the tab's page leaves under the controls (None: not in a page yet)."""
        parent = self._page()
        if parent is None or not self.max_label.isVisible():
            return None
        top = self.max_label.geometry().bottom() + 20  # the spacing and margins under the maps
        # The page's height without scroll bars: a bar on show must not shrink the maps that
        # caused it (they would never grow back).
        return parent.maximumViewportSize().height() - top

    def retranslate(self) -> None:
        for index, key in enumerate(COMPARE_KINDS):
            self.kind.setItemText(index, tr_text(COMPARE_KINDS[key]))
        self.kind.setToolTip(
            translate(
                "CompareView", "The one setting that differs between A and B; everything else is the main window's"
            )
        )
        self.kind_caption.setText(translate("CompareView", "C&ompare"))
        self.choice_a.setToolTip(translate("CompareView", "Configuration A"))
        self.choice_b.setToolTip(translate("CompareView", "Configuration B"))
        self.swap.setToolTip(translate("CompareView", "Swap A and B"))
        self.batch_spin.setToolTip(
            translate("CompareView", "Which batch element to show (the same as in the main window)")
        )
        self.batch_caption.setText(translate("CompareView", "Ba&tch element"))
        self.exercise_button.setText(translate("CompareView", "Exercise 1: additive vs scaled dot"))
        self.exercise_button.setToolTip(
            translate("CompareView", "Compare additive with scaled dot-product attention on the current inputs")
        )
        self.randomise_button.setText(translate("CompareView", "Randomise keys"))
        self.randomise_button.setToolTip(
            translate("CompareView", "Fill the keys with random numbers (one undoable edit in the main window)")
        )
        self.dot_toy_button.setText(translate("CompareView", "Load the dot-product toy"))
        self.dot_toy_button.setToolTip(
            translate(
                "CompareView",
                "Scaled dot product needs queries and keys of the "
                "same length: the book's dot-product toy has both of "
                "length 2",
            )
        )
        self.max_label.setToolTip(
            translate(
                "CompareView", "The largest absolute difference between the two weight matrices (this batch element)"
            )
        )
        self._show_comparison_controls()
        self._update_explanation()
        self._update_status()
        if self.last_result is not None:
            self._draw(self.last_result)
        else:
            self._set_max_text(translate("CompareView", "max |A − B|: —"))

    def restyle(self) -> None:
        tinted_panel(self.explanation, QColor(200, 170, 60), 0.18)
        self._update_status()
        self._update_explanation()

    # ------------------------------------------------------------------ public API

    @property
    def comparison(self) -> Comparison:
        return self._comparison

    @property
    def busy(self) -> bool:
        return self.pair.busy

    def set_comparison(self, comparison: Comparison) -> None:
        if comparison == self._comparison:
            return
        self._comparison = comparison
        self._show_comparison_controls()
        self._update_explanation()
        self.pair.request(comparison)
        self._update_status()

    def on_document(self, _edit: object) -> None:
        self._update_explanation()
        self._update_status()

    def on_selection(self, selection: Selection) -> None:
        # Another head is computed again (the pair follows the head); the explanation may
        # speak of the batch element on show.
        self._update_explanation()
        self._update_status()
        self.request_draw()

    def draw(self) -> None:
        if self.last_result is not None:
            self._draw(self.last_result)

    def _on_scoring_registered(self, _info: object) -> None:
        if self._comparison.what == "scoring":
            self._show_comparison_controls()

    def start_exercise_1(self) -> None:
        """Exercise 1 of the chapter, in one click: additive against scaled dot-product attention,
        on the book's dot-product toy when the current queries and keys have different lengths
        (one undoable edit) so that both sides compute."""
        if not _dot_products_exist(self._session.head_view()):
            self._session.load_preset("dot-toy")
        self.set_comparison(EXERCISE_1)
        self._update_explanation(force=True)

    # ------------------------------------------------------------------ controls

    def _show_comparison_controls(self) -> None:
        c = self._comparison
        choices = compare_choices(c.what)
        with QSignalBlocker(self.kind), QSignalBlocker(self.choice_a), QSignalBlocker(self.choice_b):
            self.kind.setCurrentIndex(self.kind.findData(c.what))
            for box, value in ((self.choice_a, c.a), (self.choice_b, c.b)):
                box.clear()
                for key, label in choices.items():
                    box.addItem(tr_text(label), key)
                box.setCurrentIndex(box.findData(value))
        self.map_a.set_title(self._map_title(c, "A"))
        self.map_b.set_title(self._map_title(c, "B"))
        self._fit_combos()

    def _fit_combos(self) -> None:
        """Each list as wide as its longest choice beside the arrow, in the font on show
        (presentation mode's is larger; a style's own measure left two pixels short)."""
        for box in (self.kind, self.choice_a, self.choice_b):
            metrics = QFontMetricsF(box.font())
            widest = max((metrics.horizontalAdvance(box.itemText(i)) for i in range(box.count())), default=0.0)
            box.setMinimumWidth(int(widest) + 36)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._fit_combos()

    def _on_kind(self, _index: int) -> None:
        what = self.kind.currentData()
        a, b = _DEFAULTS[what]
        self.set_comparison(Comparison(what, a, b))

    def _on_choice(self, _index: int) -> None:
        a, b = self.choice_a.currentData(), self.choice_b.currentData()
        if a is not None and b is not None:
            self.set_comparison(Comparison(self._comparison.what, a, b))

    def _randomise_keys(self) -> None:
        self._random_seed += 1
        new = filled_state(
            self._session.document.state, "keys", "random", seed=self._random_seed, focus=self._session.selection.focus
        )
        self._session.push(ReplaceState(new, QT_TRANSLATE_NOOP("CompareView", "Randomise keys")))

    def _update_explanation(self, force: bool = False) -> None:
        c = self._comparison
        is_exercise = c.what == "scoring" and {c.a, c.b} == {"additive", "scaled_dot"}
        if not (is_exercise and (force or self.explanation.isVisible())):
            self.explanation.setVisible(False)
            self.dot_toy_button.setVisible(False)
            return
        state, head = self._session.document.state, self._session.head_view()
        mismatch = head.queries.shape[2] != head.keys.shape[2]
        identical = bool(np.all(head.keys == head.keys[:, :1]))
        text = translate(
            "CompareView",
            "<b>Exercise 1.</b> Do additive and scaled dot-product attention still give "
            "the same weights once the keys change? ",
        )
        if identical:
            text += translate(
                "CompareView",
                "<br><b>Now the keys are all the same vector</b>, so every key gets the "
                "same score under <i>any</i> scoring function, and the softmax spreads "
                "the weight evenly over the valid keys: both give 1/(valid length), and "
                "A − B is 0. ",
            )
        elif _nothing_to_rank(state, head, self._session.selection.batch):
            text += translate(
                "CompareView",
                "<br><b>The keys differ, but no query of batch element {b} has more than one valid "
                "key</b>: the softmax has nothing to rank, so both give the same weights whatever "
                "their scores, and A − B is 0. Pick another batch element or raise its valid length.",
            ).format(b=self._session.selection.batch)
        else:
            text += translate("CompareView", "<br><b>Now the keys differ.</b> ")
        text += translate(
            "CompareView",
            "<br>With different keys each scoring function ranks them by its own measure: scaled dot "
            "product by <b>q</b><sup>⊤</sup><b>k</b>/√<i>d</i>, additive through a small network "
            "whose weights <b>W</b><sub><i>q</i></sub>, <b>W</b><sub><i>k</i></sub>, "
            "<b>w</b><sub><i>v</i></sub> are random and untrained here. Nothing ties the two "
            "together, so the weights differ. Edit a key in the Keys table, or click <i>Randomise "
            "keys</i>, and watch A − B.",
        )
        if mismatch:
            needs = translate(
                "CompareView",
                "Scaled dot product needs queries and keys of the same length (here {d_q} and {d_k}): "
                "load the dot-product toy, whose queries and keys both have length 2.",
            )
            needs = needs.format(d_q=head.queries.shape[2], d_k=head.keys.shape[2])
            text += f"<br><span style='color:{error_color()}'>{needs}</span>"
        self.explanation.setText(text)
        self.explanation.setVisible(True)
        self.dot_toy_button.setVisible(mismatch)

    # ------------------------------------------------------------------ computing

    def _on_result(self, outcome: PairOutcome) -> None:
        self.last_result = outcome
        self.shown_doc_version = outcome.version
        self.shown_focus = outcome.focus
        self.request_draw()
        self._update_status()
        self.resultShown.emit(outcome)

    def _update_status(self) -> None:
        if self.pair.busy or not self.pair.current:
            self.status.setText(translate("CompareView", "computing…"))
            set_text_color(self.status, warning_color())
        elif self.last_result is not None:
            self.status.setText(translate("CompareView", "up to date"))
            set_text_color(self.status, ok_color())
        else:
            self.status.setText("")

    # ------------------------------------------------------------------ drawing

    def _draw(self, result: PairOutcome) -> None:
        views = {}
        for side, outcome in (("A", result.a), ("B", result.b)):
            message = _side_error(outcome)
            label = self.errors[side]
            label.setText(f"⚠ {side}: {message}" if message else "")
            label.setVisible(bool(message))
            if outcome is not None and outcome.view is not None:
                views[side] = outcome.view
        n_batch = max((v.weights.shape[0] for v in views.values()), default=1)
        b = min(self._session.selection.batch, n_batch - 1)
        with QSignalBlocker(self.batch_spin):
            self.batch_spin.setRange(0, n_batch - 1)
            self.batch_spin.setValue(b)
        comparison = result.comparison
        shapes = [v.weights.shape[1:] for v in views.values()]
        # Wide: keys too many for half a slide's width to hold their numbers, and few queries.
        self._wide = bool(shapes) and all(n_k >= max(6, 3 * n_q) for n_q, n_k in shapes)
        self._arrange_maps()
        self._fit_map_heights()
        levels = self._levels(list(views.values()), b)
        for side, heatmap in (("A", self.map_a), ("B", self.map_b)):
            view = views.get(side)
            heatmap.set_title(self._map_title(comparison, side))
            # A side with no result shows no axes and no 0-1 colour bar that would say "zero
            # weights": only its message, in the map's place.
            heatmap.setVisible(view is not None)
            if view is None:
                heatmap.clear()
                continue
            # Two decimals for weights of a few keys; significant digits for weights of many.
            heatmap.value_format = ".2f" if levels[1] >= 0.05 else ".2g"
            show_weights(heatmap, view, b, levels=levels)
        self._level_titles()
        self._draw_diff(views.get("A"), views.get("B"), b)

    def _levels(self, views: list[ViewData], b: int) -> tuple[float, float]:
        """One colour scale for A and B, fitted to their weights as the main view's (0 to the
        largest, unless the session's scale is 0-1): on a fixed 0-1 scale weights of 0.3 and
        0.5 were two shades of one dark colour, and the two maps looked alike."""
        if not views:
            return (0.0, 1.0)
        weights = np.concatenate([v.weights[min(b, v.weights.shape[0] - 1)].ravel() for v in views])
        shown = np.ones(weights.shape, dtype=bool)  # every weight counts, masked or not
        # The side by side maps are linear (no log); any scale but 0-1 is from 0 to the largest.
        return weight_levels(weights, shown, "unit" if self.session.color_range == "unit" else "batch")

    def on_color_range(self, name: str) -> None:
        if self.last_result is not None:
            self._draw(self.last_result)

    def _level_titles(self) -> None:
        """A and B side by side with their plots level: the title's row of both as tall as the
        longer (a title wrapped onto two lines pushed one map down)."""
        pair = (self.map_a, self.map_b)
        height = max(m.title_height for m in pair) if self._columns > 1 else 0.0
        for heatmap in pair:
            heatmap.hold_title_height(height)

    def _draw_diff(self, view_a: ViewData | None, view_b: ViewData | None, b: int) -> None:
        error = self.errors["diff"]
        ready = view_a is not None and view_b is not None
        self.map_diff.set_title("A − B")
        self.map_diff.setVisible(ready)
        if view_a is None or view_b is None:
            self.map_diff.clear()
            self.max_abs_diff = None
            self._set_max_text(translate("CompareView", "max |A − B|: — (both sides must compute)"))
            error.setText("⚠ " + translate("CompareView", "A − B needs both results"))
            error.setVisible(True)
            return
        wa, wb = view_a.weights[b].astype(np.float64), view_b.weights[b].astype(np.float64)
        if wa.shape != wb.shape:
            self.map_diff.clear()
            self.map_diff.setVisible(False)
            self.max_abs_diff = None
            self._set_max_text(translate("CompareView", "max |A − B|: —"))
            error.setText(
                "⚠ "
                + translate("CompareView", "the weights have different shapes {a} and {b}").format(
                    a=wa.shape, b=wb.shape
                )
            )
            error.setVisible(True)
            return
        diff = wa - wb
        finite = np.isfinite(diff)
        largest = float(np.abs(diff[finite]).max()) if finite.any() else float("nan")
        self.max_abs_diff = largest
        # Symmetric around 0 so that grey means "equal" and the two hues the sign.
        bound = largest if np.isfinite(largest) and largest > 0 else 1.0
        n_q, n_k = diff.shape
        rows, cols = axis_labels(view_a.query_tokens, view_a.key_tokens, b, n_q, n_k)
        # Short labels so they fit cells as narrow as the weights' "0.50"; tiny differences
        # (float16 vs float32) need significant digits, not two decimals.
        self.map_diff.value_format = ".1g" if largest < 0.01 else ".2f"
        self.map_diff.set_data(
            diff,
            levels=(-bound, bound),
            hover=lambda r, c: (
                translate("CompareView", "query {r}, key {c}").format(r=r, c=c)
                + f"\nA {wa[r, c]:.6g} − B {wb[r, c]:.6g} = {diff[r, c]:.4g}"
            ),
            row_labels=rows,
            col_labels=cols,
        )
        nan_cells = int((~finite).sum())
        text = (
            f"max |A − B| = {largest:.3g}"
            if np.isfinite(largest)
            else translate("CompareView", "max |A − B|: no finite difference")
        )
        if largest == 0:
            text += "  " + translate("CompareView", "(identical weights)")
        if nan_cells == 1:
            text += "  · " + translate("CompareView", "{n} cell NaN on one side (magenta)").format(n=nan_cells)
        elif nan_cells:
            text += "  · " + translate("CompareView", "{n} cells NaN on one side (magenta)").format(n=nan_cells)
        self._set_max_text(text)
        error.setVisible(False)


def install_compare_view(session: AppSession, host: Host) -> ToolPanel:
    """Add the side-by-side view as a hidden dock; View > Side by side (Ctrl+Shift+D) shows it."""
    return host.add_dock(DOCKS[COMPARE_DOCK], lambda: CompareView(session))
