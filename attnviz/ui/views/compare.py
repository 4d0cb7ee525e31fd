"""Side by side: the same inputs under two configurations, and where their weights differ.

What differs is one setting: the scoring function, the mask mode or the dtype (A vs B). Both
variants are computed off the GUI thread by the view's own ``ComputeScheduler`` (latest request
wins); the view shows A's weights, B's weights and A − B on a diverging colour scale centred on
0, with the largest |A − B| printed.

The chapter's exercise 1 (change the keys: do additive and scaled dot-product attention still
agree?) is one click: it sets the comparison to additive vs scaled dot product and explains what
to look for.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from attnviz.compute.attention import Outcome, run_state
from attnviz.document import ReplaceState, Snapshot, State, filled_state
from attnviz.ui.i18n import tr_text, translate
from attnviz.tr import QT_TRANSLATE_NOOP
from attnviz.ui.scheduler import ComputeScheduler, in_app
from attnviz.ui.heatmap.widget import HeatmapWidget
from attnviz.ui.app.controls import DTYPE_LABELS, MASK_MODE_LABELS, SCORING_LABELS
from attnviz.ui.app.theme import error_color, mark_error_label

__all__ = [
    "COMPARE_KINDS",
    "Comparison",
    "CompareView",
    "DivergingHeatmap",
    "EXERCISE_1",
    "PairOutcome",
    "PairSnapshot",
    "run_pair",
    "variants",
]

#: What can differ between A and B: the Settings field, its caption and the choices.
COMPARE_KINDS: dict[str, tuple[str, dict[str, str]]] = {
    "scoring": (QT_TRANSLATE_NOOP("CompareView", "Scoring function"), SCORING_LABELS),
    "mask_mode": (QT_TRANSLATE_NOOP("CompareView", "Mask mode"), MASK_MODE_LABELS),
    "dtype": (QT_TRANSLATE_NOOP("CompareView", "Dtype"), DTYPE_LABELS),
}
_DEFAULTS: dict[str, tuple[str, str]] = {
    "scoring": ("additive", "scaled_dot"),
    "mask_mode": ("d2l", "strict"),
    "dtype": ("float32", "float16"),
}

#: Colour-blind-safe diverging map (blue – grey – yellow) bundled with pyqtgraph: the sign of
#: A − B must read at a glance, and the project's maps are all sequential.
DIVERGING_MAP = "CET-CBD1"


@dataclass(frozen=True)
class Comparison:
    """Compare ``what`` (a Settings field in COMPARE_KINDS) set to ``a`` against ``b``."""

    what: str
    a: str
    b: str

    def __post_init__(self) -> None:
        if self.what not in COMPARE_KINDS:
            raise ValueError(f"cannot compare {self.what!r}: choose one of {', '.join(COMPARE_KINDS)}")
        choices = COMPARE_KINDS[self.what][1]
        for side, value in (("A", self.a), ("B", self.b)):
            if value not in choices:
                raise ValueError(f"{side}: {value!r} is not a {COMPARE_KINDS[self.what][0].lower()}; "
                                 f"choose one of {', '.join(choices)}")

    def label(self, side: str) -> str:
        """"A: Additive": the side and its choice, in the current language."""
        value = self.a if side == "A" else self.b
        return f"{side}: {tr_text(COMPARE_KINDS[self.what][1][value])}"


EXERCISE_1 = Comparison("scoring", "additive", "scaled_dot")


def variants(state: State, comparison: Comparison) -> tuple[State, State]:
    """Two copies of ``state`` that differ only in the compared setting.

    Learned parameters belong to one scoring function: a variant with another scoring function
    starts from its own seeded parameters, as switching the setting in the app does.
    """
    out = []
    for value in (comparison.a, comparison.b):
        variant = state.copy()
        variant.settings = replace(state.settings, **{comparison.what: value})
        if comparison.what == "scoring" and value != state.settings.scoring:
            variant.params = {}
        out.append(variant)
    return out[0], out[1]


@dataclass(frozen=True)
class PairSnapshot(Snapshot):
    """What the compare thread computes: ``state`` is variant A, ``state_b`` variant B.

    ``version`` is the view's request number (the scheduler only needs it to be increasing);
    ``doc_version`` the document version both variants were made from.
    """

    state_b: State
    doc_version: int
    comparison: Comparison


@dataclass(frozen=True)
class PairOutcome(Outcome):
    """Both outcomes of one request; ``version`` is the request number."""

    a: Outcome | None = None
    b: Outcome | None = None
    doc_version: int = -1
    comparison: Comparison | None = None


def run_pair(snapshot: Snapshot) -> Outcome:
    """Compute both variants (on the compare thread). Never raises: errors are data."""
    assert isinstance(snapshot, PairSnapshot)
    a = run_state(snapshot.state, snapshot.version)
    b = run_state(snapshot.state_b, snapshot.version)
    return PairOutcome(snapshot.version, a=a, b=b, doc_version=snapshot.doc_version,
                       comparison=snapshot.comparison, seconds=a.seconds + b.seconds)


# CET-CBD1 sampled at 7 points, for installs whose pyqtgraph lacks its colour-map files.
_DIVERGING_STOPS = ((58, 144, 254), (140, 174, 251), (194, 207, 246), (237, 237, 236),
                    (221, 206, 167), (196, 174, 97), (168, 144, 8))


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


class CompareView(QWidget):
    """Two configurations on the same inputs: weights of each and their difference.

    Feed it the document's state with ``set_state(state, version)`` on every change; it computes
    (on its own thread, only while visible) and draws. ``shutdown()`` must run before the
    application quits (``install_compare_view`` arranges it).

    Signals:
        editRequested(Edit): the user asked for an input change (randomised keys, exercise 1);
            the owner pushes it on its undo stack.
        presetRequested(str): load this preset (the exercise needs equal query and key lengths).
        resultShown(PairOutcome): after a result was drawn.
    """

    editRequested = Signal(object)
    presetRequested = Signal(str)
    resultShown = Signal(object)

    def __init__(self, parent: QWidget | None = None, scheduler: ComputeScheduler | None = None) -> None:
        super().__init__(parent)
        self.scheduler = scheduler or ComputeScheduler(compute=in_app(run_pair), parent=self)
        self.scheduler.finished.connect(self._on_result)
        self.scheduler.busyChanged.connect(lambda _busy: self._update_status())
        self._state: State | None = None
        self._doc_version = -1
        self._request = 0
        self._dirty = False
        self._comparison = EXERCISE_1
        self._batch = 0
        self._random_seed = 0
        self.last_result: PairOutcome | None = None
        #: Document version of the drawn result (-1 before the first).
        self.shown_doc_version = -1
        self.max_abs_diff: float | None = None

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)

        controls = QHBoxLayout()
        self.kind = QComboBox()
        for key, (caption, _choices) in COMPARE_KINDS.items():
            self.kind.addItem(tr_text(caption), key)
        self.kind.setToolTip(translate("CompareView", "The one setting that differs between A and B; everything else "
                                                      "is the main window's"))
        self.choice_a = QComboBox()
        self.choice_a.setToolTip(translate("CompareView", "Configuration A"))
        self.choice_b = QComboBox()
        self.choice_b.setToolTip(translate("CompareView", "Configuration B"))
        swap = QPushButton("⇄")
        swap.setToolTip(translate("CompareView", "Swap A and B"))
        swap.setMaximumWidth(36)
        swap.clicked.connect(lambda: self.set_comparison(
            Comparison(self._comparison.what, self._comparison.b, self._comparison.a)))
        for caption, widget in ((translate("CompareView", "C&ompare"), self.kind), ("&A", self.choice_a),
                                ("&B", self.choice_b)):
            label = QLabel(caption)
            label.setBuddy(widget)
            controls.addWidget(label)
            controls.addWidget(widget)
        controls.addWidget(swap)
        controls.addSpacing(12)
        self.batch_spin = QSpinBox()
        self.batch_spin.setToolTip(translate("CompareView", "Which batch element to show (follows the main window's "
                                                            "batch selector)"))
        self.batch_spin.valueChanged.connect(self.set_batch)
        batch_caption = QLabel(translate("CompareView", "Ba&tch element"))
        batch_caption.setBuddy(self.batch_spin)
        controls.addWidget(batch_caption)
        controls.addWidget(self.batch_spin)
        controls.addStretch(1)
        self.status = QLabel()
        controls.addWidget(self.status)
        layout.addLayout(controls)

        exercise_row = QHBoxLayout()
        self.exercise_button = QPushButton(translate("CompareView", "Exercise 1: additive vs scaled dot"))
        self.exercise_button.setToolTip(translate("CompareView", "Compare additive with scaled dot-product attention "
                                                                 "on the current inputs"))
        self.exercise_button.clicked.connect(self.start_exercise_1)
        self.randomise_button = QPushButton(translate("CompareView", "Randomise keys"))
        self.randomise_button.setToolTip(translate("CompareView", "Fill the keys with random numbers (one undoable "
                                                                  "edit in the main window)"))
        self.randomise_button.clicked.connect(self._randomise_keys)
        self.dot_toy_button = QPushButton(translate("CompareView", "Load the dot-product toy"))
        self.dot_toy_button.setToolTip(translate("CompareView", "Scaled dot product needs queries and keys of the "
                                                                "same length: the book's dot-product toy has both of "
                                                                "length 2"))
        self.dot_toy_button.clicked.connect(lambda: self.presetRequested.emit("dot-toy"))
        self.dot_toy_button.setVisible(False)
        exercise_row.addWidget(self.exercise_button)
        exercise_row.addWidget(self.randomise_button)
        exercise_row.addWidget(self.dot_toy_button)
        exercise_row.addStretch(1)
        layout.addLayout(exercise_row)
        self.explanation = QLabel()
        self.explanation.setWordWrap(True)
        self.explanation.setTextFormat(Qt.TextFormat.RichText)
        self.explanation.setStyleSheet("QLabel { background: #f4f1e4; color: #202020; padding: 6px; border-radius: 4px; }")
        self.explanation.setVisible(False)
        layout.addWidget(self.explanation)

        self.max_label = QLabel(translate("CompareView", "max |A − B|: —"))
        font = self.max_label.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.2)
        self.max_label.setFont(font)
        self.max_label.setToolTip(translate("CompareView", "The largest absolute difference between the two weight "
                                                           "matrices (this batch element)"))
        layout.addWidget(self.max_label)

        maps = QGridLayout()
        self.map_a = HeatmapWidget(title="A")
        self.map_b = HeatmapWidget(title="B")
        self.map_diff = DivergingHeatmap(title="A − B")
        self.errors: dict[str, QLabel] = {}
        for col, (side, heatmap) in enumerate((("A", self.map_a), ("B", self.map_b), ("diff", self.map_diff))):
            heatmap.setMinimumSize(320, 200)
            maps.addWidget(heatmap, 0, col)
            error = QLabel()
            error.setWordWrap(True)
            mark_error_label(error)
            error.setVisible(False)
            maps.addWidget(error, 1, col)
            self.errors[side] = error
        layout.addLayout(maps, 1)

        self.kind.currentIndexChanged.connect(self._on_kind)
        self.choice_a.currentIndexChanged.connect(self._on_choice)
        self.choice_b.currentIndexChanged.connect(self._on_choice)
        self._show_comparison_controls()
        self._update_status()

    # ------------------------------------------------------------------ public API

    @property
    def comparison(self) -> Comparison:
        return self._comparison

    @property
    def busy(self) -> bool:
        return self.scheduler.busy

    def set_comparison(self, comparison: Comparison) -> None:
        if comparison == self._comparison:
            return
        self._comparison = comparison
        self._show_comparison_controls()
        self._update_explanation()
        self._request_compute()

    def set_state(self, state: State, version: int) -> None:
        """The document's current state (and version): recompute if visible."""
        self._state = state
        self._doc_version = version
        self._update_explanation()
        self._request_compute()

    def set_batch(self, batch: int) -> None:
        self._batch = max(int(batch), 0)
        with QSignalBlocker(self.batch_spin):
            if self._batch > self.batch_spin.maximum():
                self.batch_spin.setMaximum(self._batch)
            self.batch_spin.setValue(self._batch)
        if self.last_result is not None:
            self._draw(self.last_result)

    def set_font_scale(self, scale: float) -> None:
        """Scale the heatmaps' text (presentation mode)."""
        for heatmap in (self.map_a, self.map_b, self.map_diff):
            heatmap.set_font_scale(scale)

    def start_exercise_1(self) -> None:
        """Exercise 1 of the chapter: compare additive with scaled dot-product attention."""
        self.set_comparison(EXERCISE_1)
        self._update_explanation(force=True)

    def shutdown(self) -> None:
        """Stop the compute thread (waits for a running computation to end)."""
        self.scheduler.shutdown()

    # ------------------------------------------------------------------ controls

    def _show_comparison_controls(self) -> None:
        c = self._comparison
        choices = COMPARE_KINDS[c.what][1]
        with QSignalBlocker(self.kind), QSignalBlocker(self.choice_a), QSignalBlocker(self.choice_b):
            self.kind.setCurrentIndex(self.kind.findData(c.what))
            for box, value in ((self.choice_a, c.a), (self.choice_b, c.b)):
                box.clear()
                for key, label in choices.items():
                    box.addItem(tr_text(label), key)
                box.setCurrentIndex(box.findData(value))
        self.map_a.set_title(c.label("A"))
        self.map_b.set_title(c.label("B"))

    def _on_kind(self, _index: int) -> None:
        what = self.kind.currentData()
        a, b = _DEFAULTS[what]
        self.set_comparison(Comparison(what, a, b))

    def _on_choice(self, _index: int) -> None:
        a, b = self.choice_a.currentData(), self.choice_b.currentData()
        if a is not None and b is not None:
            self.set_comparison(Comparison(self._comparison.what, a, b))

    def _randomise_keys(self) -> None:
        if self._state is None:
            return
        self._random_seed += 1
        new = filled_state(self._state, "keys", "random", seed=self._random_seed)
        self.editRequested.emit(ReplaceState(new, QT_TRANSLATE_NOOP("CompareView", "Randomise keys")))

    def _update_explanation(self, force: bool = False) -> None:
        c = self._comparison
        is_exercise = c.what == "scoring" and {c.a, c.b} == {"additive", "scaled_dot"}
        if not (is_exercise and (force or self.explanation.isVisible())):
            self.explanation.setVisible(False)
            self.dot_toy_button.setVisible(False)
            return
        state = self._state
        mismatch = state is not None and state.queries.shape[2] != state.keys.shape[2]
        identical = state is not None and bool(np.all(state.keys == state.keys[:, :1]))
        text = translate("CompareView", "<b>Exercise 1.</b> Do additive and scaled dot-product attention still give "
                                        "the same weights once the keys change? ")
        if identical:
            text += translate("CompareView", "<br><b>Now the keys are all the same vector</b>, so every key gets the "
                                             "same score under <i>any</i> scoring function, and the softmax spreads "
                                             "the weight evenly over the valid keys: both give 1/(valid length), and "
                                             "A − B is 0. ")
        else:
            text += translate("CompareView", "<br><b>Now the keys differ.</b> ")
        text += translate(
            "CompareView", "<br>With different keys each scoring function ranks them by its own measure: scaled dot "
                           "product by <b>q</b><sup>⊤</sup><b>k</b>/√<i>d</i>, additive through a small network "
                           "whose weights <b>W</b><sub><i>q</i></sub>, <b>W</b><sub><i>k</i></sub>, "
                           "<b>w</b><sub><i>v</i></sub> are random and untrained here. Nothing ties the two "
                           "together, so the weights differ. Edit a key in the Keys table, or click <i>Randomise "
                           "keys</i>, and watch A − B.")
        if mismatch:
            assert state is not None
            needs = translate(
                "CompareView", "Scaled dot product needs queries and keys of the same length (here {d_q} and {d_k}): "
                               "load the dot-product toy, whose queries and keys both have length 2.")
            needs = needs.format(d_q=state.queries.shape[2], d_k=state.keys.shape[2])
            text += f"<br><span style='color:{error_color()}'>{needs}</span>"
        self.explanation.setText(text)
        self.explanation.setVisible(True)
        self.dot_toy_button.setVisible(mismatch)

    # ------------------------------------------------------------------ computing

    def _request_compute(self) -> None:
        if self._state is None:
            return
        if not self.isVisible():
            self._dirty = True  # computed when shown: a hidden dock costs nothing
            return
        self._dirty = False
        self._request += 1
        a, b = variants(self._state, self._comparison)
        self.scheduler.submit(PairSnapshot(self._request, a, b, self._doc_version, self._comparison))
        self._update_status()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._dirty:
            self._request_compute()

    def _on_result(self, outcome: Outcome) -> None:
        if not isinstance(outcome, PairOutcome) or outcome.version != self._request:
            return  # a newer request is on its way: latest wins
        self.last_result = outcome
        self.shown_doc_version = outcome.doc_version
        self._draw(outcome)
        self._update_status()
        self.resultShown.emit(outcome)

    def _update_status(self) -> None:
        if self.scheduler.busy or self._dirty:
            self.status.setText(translate("CompareView", "computing…"))
            self.status.setStyleSheet("QLabel { color: #8a5300; }")
        elif self.last_result is not None:
            self.status.setText(translate("CompareView", "up to date"))
            self.status.setStyleSheet("QLabel { color: #1b7f3b; }")
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
        with QSignalBlocker(self.batch_spin):
            self.batch_spin.setRange(0, n_batch - 1)
        b = min(self._batch, n_batch - 1)
        with QSignalBlocker(self.batch_spin):
            self.batch_spin.setValue(b)
        comparison = result.comparison or self._comparison
        for side, heatmap in (("A", self.map_a), ("B", self.map_b)):
            view = views.get(side)
            label = comparison.label(side)
            heatmap.set_title(label if view is not None else
                              translate("CompareView", "{side} — no result (see below)").format(side=label))
            if view is None:
                heatmap.clear()
                continue
            n_q, n_k = view.weights.shape[1:]
            heatmap.set_data(view.weights[b], mask=view.mask[b], empty_rows=view.empty_rows[b], levels=(0.0, 1.0),
                             row_labels=[f"q{i}" for i in range(n_q)], col_labels=[f"k{j}" for j in range(n_k)])
        self._draw_diff(views.get("A"), views.get("B"), b)

    def _draw_diff(self, view_a: object, view_b: object, b: int) -> None:
        from attnviz.compute.attention import ViewData

        error = self.errors["diff"]
        ready = isinstance(view_a, ViewData) and isinstance(view_b, ViewData)
        self.map_diff.set_title("A − B" if ready else translate("CompareView", "A − B — needs both results"))
        if not (isinstance(view_a, ViewData) and isinstance(view_b, ViewData)):
            self.map_diff.clear()
            self.max_abs_diff = None
            self.max_label.setText(translate("CompareView", "max |A − B|: — (both sides must compute)"))
            error.setVisible(False)
            return
        wa, wb = view_a.weights[b].astype(np.float64), view_b.weights[b].astype(np.float64)
        if wa.shape != wb.shape:
            self.map_diff.clear()
            self.max_abs_diff = None
            self.max_label.setText(translate("CompareView", "max |A − B|: —"))
            error.setText("⚠ " + translate("CompareView", "the weights have different shapes {a} and {b}").format(
                a=wa.shape, b=wb.shape))
            error.setVisible(True)
            return
        diff = wa - wb
        finite = np.isfinite(diff)
        largest = float(np.abs(diff[finite]).max()) if finite.any() else float("nan")
        self.max_abs_diff = largest
        # Symmetric around 0 so that grey means "equal" and the two hues the sign.
        bound = largest if np.isfinite(largest) and largest > 0 else 1.0
        n_q, n_k = diff.shape
        # Short labels so they fit cells as narrow as the weights' "0.50"; tiny differences
        # (float16 vs float32) need significant digits, not two decimals.
        self.map_diff.value_format = ".1g" if largest < 0.01 else ".2f"
        self.map_diff.set_data(
            diff, levels=(-bound, bound),
            hover=lambda r, c: (translate("CompareView", "query {r}, key {c}").format(r=r, c=c)
                                + f"\nA {wa[r, c]:.6g} − B {wb[r, c]:.6g} = {diff[r, c]:.4g}"),
            row_labels=[f"q{i}" for i in range(n_q)], col_labels=[f"k{j}" for j in range(n_k)],
        )
        nan_cells = int((~finite).sum())
        text = f"max |A − B| = {largest:.3g}" if np.isfinite(largest) else \
            translate("CompareView", "max |A − B|: no finite difference")
        if largest == 0:
            text += "  " + translate("CompareView", "(identical weights)")
        if nan_cells == 1:
            text += "  · " + translate("CompareView", "{n} cell NaN on one side (magenta)").format(n=nan_cells)
        elif nan_cells:
            text += "  · " + translate("CompareView", "{n} cells NaN on one side (magenta)").format(n=nan_cells)
        self.max_label.setText(text)
        error.setVisible(False)
