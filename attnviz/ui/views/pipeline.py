"""The pipeline view: every stage of one attention computation, in order, beside its maths.

Raw scores → scaled scores → mask → masked scores → softmax weights → weights after dropout →
output, each a heatmap of the selected batch element. The chapter's equations sit beside them
(``formulas.py``); the stage under the mouse is highlighted in the equations. For a learnable
scoring function the parameters are editable tables, and for additive attention the hidden
features tanh(W_q q + W_k k) of one query–key pair are drawn as bars.

The view only draws: it follows the session's outcomes and selection, and an edit of the
parameters becomes one undoable edit pushed through the session. While the view is hidden
nothing is drawn; the latest result is drawn when it is shown again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QFont, QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from attnviz import catalog
from attnviz.compute import Outcome, ViewData
from attnviz.compute.axes import axis_labels
from attnviz.compute.pipeline import additive_features, softmax_allowed
from attnviz.document import ReplaceState, State
from attnviz.model_run import CallTerm, HeadView
from attnviz.tr import QT_TRANSLATE_NOOP, message
from attnviz.ui.app.host import DockSpec, Host, ToolPanel
from attnviz.ui.app.results_panel import cell_place
from attnviz.ui.app.session import AppSession, Selection
from attnviz.ui.heatmap import HeatmapWidget
from attnviz.ui.heatmap.prepare import PYRAMID_MIN_CELLS, Frame, PreparedMap, prepare_map
from attnviz.ui.i18n import tr_text, translate
from attnviz.ui.lifecycle import Retranslating
from attnviz.ui.tables.tensor_table import ArrayTableModel, TensorTableView
from attnviz.ui.theme import PlotColors, error_color, mark_error_label, muted_color, plot_colors, set_text_color
from attnviz.ui.views.formulas import pipeline_formulas

__all__ = ["PIPELINE_DOCK", "PIPELINE_SHORTCUT", "PIPELINE_STAGES", "PipelineView", "install_pipeline_view"]

PIPELINE_SHORTCUT = "Ctrl+Shift+P"
PIPELINE_DOCK = "pipelineDock"

#: (stage, title) in pipeline order; the stages are the engine's ``STAGES``.
PIPELINE_STAGES: tuple[tuple[str, str], ...] = (
    ("raw_scores", QT_TRANSLATE_NOOP("PipelineView", "1 · Raw scores a(q, k)")),
    ("scores", QT_TRANSLATE_NOOP("PipelineView", "2 · Scaled scores")),
    # Shown only for a call with score terms (a position bias, soft-capping, a score_mod).
    ("modified_scores", QT_TRANSLATE_NOOP("PipelineView", "2b · Scores with the score terms")),
    ("mask", QT_TRANSLATE_NOOP("PipelineView", "3 · Mask (1 = may attend)")),
    ("masked_scores", QT_TRANSLATE_NOOP("PipelineView", "4 · Masked scores ã (softmax input)")),
    ("weights", QT_TRANSLATE_NOOP("PipelineView", "5 · Softmax weights α")),
    ("applied_weights", QT_TRANSLATE_NOOP("PipelineView", "6 · Weights after dropout")),
    ("output", QT_TRANSLATE_NOOP("PipelineView", "7 · Output ∑ α v")),
)
_WEIGHT_STAGES = ("mask", "weights", "applied_weights")
_FRAME_IDLE = "QFrame#stageCard { border: 2px solid transparent; border-radius: 4px; }"
_FRAME_HOT = "QFrame#stageCard { border: 2px solid #e0a800; border-radius: 4px; }"
#: The scoring functions as notes name them ("scaled dot scoring").
SCORING_NAMES = {
    "dot": QT_TRANSLATE_NOOP("PipelineView", "dot"),
    "scaled_dot": QT_TRANSLATE_NOOP("PipelineView", "scaled dot"),
    "additive": QT_TRANSLATE_NOOP("PipelineView", "additive"),
    "bilinear": QT_TRANSLATE_NOOP("PipelineView", "bilinear"),
    "gaussian": QT_TRANSLATE_NOOP("PipelineView", "gaussian"),
    "summation": QT_TRANSLATE_NOOP("PipelineView", "summation"),
}
# Fill value of each mask mode that replaces scores (the rest add or invert, see softmax_allowed).
_FILLS = {"d2l": "−10⁶", "strict": "−∞", "neg_inf": "−∞", "sdpa": "−∞", "inverted": "−∞"}


def _fmt(x: float) -> str:
    if np.isnan(x):
        return "NaN"
    if np.isinf(x):
        return "∞" if x > 0 else "−∞"
    return f"{x:.4g}"


# ---------------------------------------------------------------- big stages, prepared off the GUI thread

#: The stages drawn as (queries, keys) maps; the output is (queries, value dimension).
_QK_STAGES = ("raw_scores", "scores", "modified_scores", "mask", "masked_scores", "weights", "applied_weights")


def _stage_maps(view: ViewData, b: int, mask: np.ndarray, allowed: np.ndarray) -> dict[str, tuple[np.ndarray, dict]]:
    """Each (queries, keys) stage of batch element ``b``: its values and how they are drawn
    (``set_data`` / ``prepare_map`` arguments)."""
    empty = view.empty_rows[b]
    return {
        "raw_scores": (view.raw_scores[b], {"levels": None}),
        "scores": (view.scores[b], {"levels": None}),
        "modified_scores": (view.modified_scores[b], {"levels": None}),
        "mask": (mask.astype(np.float32), {"mask": mask, "empty_rows": empty, "levels": (0.0, 1.0)}),
        "masked_scores": (view.masked_scores[b], {"mask": allowed, "levels": None}),
        "weights": (view.weights[b], {"mask": allowed, "empty_rows": empty, "levels": (0.0, 1.0)}),
        "applied_weights": (view.applied_weights[b], {"mask": allowed, "empty_rows": empty, "levels": (0.0, 1.0)}),
    }


@dataclass(frozen=True, eq=False)
class _StagesRequest:
    """Stage maps to prepare on the view's own thread. ``version`` is for ComputeScheduler."""

    version: int
    view: ViewData
    batch: int
    mask_mode: str
    show_masked_values: dict[str, bool]  # each stage's heatmap's
    frames: dict[str, Frame | None]  # what each stage's heatmap has on screen


@dataclass(frozen=True, eq=False)
class _PreparedStages:
    request: _StagesRequest
    mask: np.ndarray
    allowed: np.ndarray
    maps: dict[str, PreparedMap]


def _prepare_stages(request: _StagesRequest) -> _PreparedStages:
    """Every pass over the cells the stage maps need, for big ones. Qt-free: off the GUI thread."""
    b = request.batch
    mask = request.view.mask[b].astype(bool)
    allowed = softmax_allowed(mask, request.mask_mode)
    maps = {
        stage: prepare_map(
            values,
            **kwargs,
            show_masked_values=request.show_masked_values[stage],
            pyramid=True,
            frame=request.frames[stage],
        )
        for stage, (values, kwargs) in _stage_maps(request.view, b, mask, allowed).items()
    }
    return _PreparedStages(request, mask, allowed, maps)


class _StageCard(Retranslating, QFrame):
    """One stage: a titled heatmap and a line saying what the stage did here."""

    def __init__(self, stage: str, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.stage = stage
        self._title = title
        self.setObjectName("stageCard")
        self.setStyleSheet(_FRAME_IDLE)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.setSpacing(1)
        self.heatmap = HeatmapWidget()
        # Seven maps share the dock: smaller than the main window's, annotations hide themselves
        # when the cells get too small for them.
        self.heatmap.setMinimumSize(300, 150)
        if stage == "mask":
            self.heatmap.value_format = ".0f"
        layout.addWidget(self.heatmap, 1)
        self.note = QLabel()
        self.note.setWordWrap(True)
        layout.addWidget(self.note)
        self.retranslate()

    def retranslate(self) -> None:
        x_label = (
            translate("PipelineView", "Value dimension")
            if self.stage == "output"
            else translate("PipelineView", "Keys")
        )
        self.heatmap.set_title(tr_text(self._title))
        self.heatmap.set_axis_labels(x_label, translate("PipelineView", "Queries"))

    def set_hot(self, hot: bool) -> None:
        self.setStyleSheet(_FRAME_HOT if hot else _FRAME_IDLE)


class _StageGrid(QWidget):
    """The stage cards in a grid whose column count follows the width (1 in a narrow dock)."""

    #: A card narrower than this cannot show a 10-key row of weights with its numbers.
    CARD_WIDTH = 350

    def __init__(
        self, cards: list[_StageCard], hidden: set[_StageCard] | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self._cards = cards
        #: Cards left out (the score-term stage of a call without terms).
        self.hidden: set[_StageCard] = set(hidden or ())
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setSpacing(4)
        self.columns = 0
        self._relayout(2)

    def _relayout(self, columns: int, force: bool = False) -> None:
        shown = [card for card in self._cards if card not in self.hidden]
        columns = max(1, min(columns, len(shown)))
        if columns == self.columns and not force:
            return
        self.columns = columns
        for card in self._cards:
            self._grid.removeWidget(card)
        for i, card in enumerate(shown):
            self._grid.addWidget(card, i // columns, i % columns)
        for c in range(len(self._cards)):
            self._grid.setColumnStretch(c, 1 if c < columns else 0)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._relayout(event.size().width() // self.CARD_WIDTH)

    def show_card(self, card: _StageCard, shown: bool) -> None:
        """Show or hide one card (the score-term stage, for calls that have terms) and lay out again."""
        if (card in self.hidden) == (not shown):
            return
        if shown:
            self.hidden.discard(card)
        else:
            self.hidden.add(card)
        card.setHidden(not shown)
        self._relayout(max(1, self.width() // self.CARD_WIDTH), force=True)


class PipelineView(Retranslating, QWidget):
    """Every stage of the computation for one batch element, with the formulas beside it.

    It follows ``session`` (outcomes, selection, errors) and pushes parameter edits through it.
    ``highlightChanged(str)``: the stage now highlighted in the formulas ("" for none).
    """

    highlightChanged = Signal(str)

    def __init__(self, session: AppSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._session = session
        self._view: ViewData | None = None
        self._state: State | None = None
        #: The head the result on show is of (its tensors, lengths and causal flag).
        self._head: HeadView | None = None
        self._batch = 0
        self._dirty = False
        self._highlight: str | None = None
        self._error: str | None = None
        #: How many times the stages were drawn (hidden views must not draw; tests check it).
        self.draw_count = 0
        #: Prepares big stage maps off the GUI thread (latest request wins), drawn when ready.
        self._preparer = session.new_scheduler(_prepare_stages)  # type: ignore[arg-type]
        self._preparer.finished.connect(self._on_stages_prepared)
        self._requests = 0
        self._stages: _PreparedStages | None = None  # the big maps on show, freed off this thread

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        header = QHBoxLayout()
        self.summary = QLabel()
        font = self.summary.font()
        font.setBold(True)
        self.summary.setFont(font)
        header.addWidget(self.summary, 1)
        self.batch_spin = QSpinBox()
        self.batch_spin.setRange(0, 0)
        self.batch_spin.valueChanged.connect(session.set_batch)
        self.batch_caption = QLabel()
        self.batch_caption.setBuddy(self.batch_spin)
        header.addWidget(self.batch_caption)
        header.addWidget(self.batch_spin)
        layout.addLayout(header)
        self.error = QLabel()
        self.error.setWordWrap(True)
        mark_error_label(self.error)
        self.error.setVisible(False)
        layout.addWidget(self.error)

        splitter = self.splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setChildrenCollapsible(False)
        layout.addWidget(splitter, 1)

        # Stages read left to right, top to bottom, in as many columns as the width allows.
        self.cards: dict[str, _StageCard] = {}
        for stage, title in PIPELINE_STAGES:
            card = _StageCard(stage, title)
            card.installEventFilter(self)
            self.cards[stage] = card
        self.cards["modified_scores"].setHidden(True)
        self.stage_grid = _StageGrid(list(self.cards.values()), {self.cards["modified_scores"]})
        stage_scroll = QScrollArea()
        stage_scroll.setWidgetResizable(True)
        stage_scroll.setWidget(self.stage_grid)
        splitter.addWidget(stage_scroll)

        # Formulas, additive features and parameters.
        side = QWidget()
        side_layout = QVBoxLayout(side)
        side_layout.setContentsMargins(6, 0, 6, 0)
        self.formula = QLabel()
        self.formula.setTextFormat(Qt.TextFormat.RichText)
        self.formula.setWordWrap(True)
        self.formula.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.formula.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self._apply_formula_font()
        side_layout.addWidget(self.formula)
        self.additive_box = self._build_additive_box()
        side_layout.addWidget(self.additive_box)
        self.params_box = self._build_params_box()
        side_layout.addWidget(self.params_box)
        side_layout.addStretch(1)
        side_scroll = QScrollArea()
        side_scroll.setWidgetResizable(True)
        side_scroll.setWidget(side)
        side_scroll.setMinimumWidth(300)
        splitter.addWidget(side_scroll)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([820, 500])
        self.restyle()
        self.retranslate()

        session.outcomeShown.connect(self._on_outcome)
        session.selectionChanged.connect(self._on_selection)
        outcome = session.current_outcome()
        if outcome is not None:
            self._on_outcome(outcome)

    def _on_outcome(self, outcome: Outcome) -> None:
        # outcomeShown only fires for the document's current version, so the state matches.
        if outcome.view is None:
            self.show_error(outcome.error)
            return
        state = self._session.document.state
        self.show(outcome.view, state, self._session.selection.batch, state.head_view(outcome.focus))

    def _on_selection(self, selection: Selection) -> None:
        self.set_batch(selection.batch)

    def retranslate(self) -> None:
        if self._view is None:
            self.summary.setText(translate("PipelineView", "Waiting for a result…"))
        self.batch_spin.setToolTip(
            translate("PipelineView", "Which batch element the stages show (the same as in the main window)")
        )
        self.batch_caption.setText(translate("PipelineView", "&Batch element"))
        self.formula.setToolTip(
            translate("PipelineView", "The chapter's equations; hover a stage to see where it is in them")
        )
        self.additive_box.setTitle(
            translate("PipelineView", "Additive attention: hidden features of one query–key pair")
        )
        self.additive_box.setToolTip(
            translate("PipelineView", "tanh(W_q q + W_k k): the h hidden units whose w_v-weighted sum is the score")
        )
        self.feature_query.setToolTip(translate("PipelineView", "Query index i"))
        self.feature_key.setToolTip(translate("PipelineView", "Key index j"))
        self.feature_query_caption.setText(translate("PipelineView", "&Query i"))
        self.feature_key_caption.setText(translate("PipelineView", "&Key j"))
        self.feature_plot.setLabel("bottom", translate("PipelineView", "hidden unit"))
        self.params_box.setTitle(
            translate("PipelineView", "Learned parameters (edit a cell: the scores follow; Ctrl+Z undoes)")
        )
        self.params_tabs.setToolTip(
            translate(
                "PipelineView",
                "The scoring function's learned parameters, one tab per matrix (rows × columns as in "
                "nn.Linear: out × in)",
            )
        )
        for name, view in self.param_views.items():
            view.setToolTip(
                translate(
                    "PipelineView", "{name}: type or paste numbers; each edit is one undo step in the main window"
                ).format(name=name)
            )
        self.show_error(self._error)
        if self._view is not None and self._state is not None and self._head is not None:
            self._write_notes(self._view, self._state, self._head, self._batch)
            self._draw_formula()
            self._draw_features()

    # ------------------------------------------------------------------ building

    def _build_additive_box(self) -> QGroupBox:
        box = QGroupBox()
        box.installEventFilter(self)
        layout = QVBoxLayout(box)
        row = QHBoxLayout()
        self.feature_query = QSpinBox()
        self.feature_key = QSpinBox()
        self.feature_query_caption = QLabel()
        self.feature_key_caption = QLabel()
        for label, spin in (
            (self.feature_query_caption, self.feature_query),
            (self.feature_key_caption, self.feature_key),
        ):
            label.setBuddy(spin)
            row.addWidget(label)
            row.addWidget(spin)
            spin.valueChanged.connect(lambda _v: self._draw_features())
        row.addStretch(1)
        layout.addLayout(row)
        self.feature_plot = pg.PlotWidget()
        self.feature_plot.setMinimumHeight(150)
        self.feature_plot.setMaximumHeight(230)
        self.feature_plot.setMenuEnabled(False)
        self.feature_plot.setMouseEnabled(x=False, y=False)
        self.feature_plot.hideButtons()
        self._legend = self.feature_plot.addLegend(offset=(-4, 4))
        self.feature_plot.addLine(y=0, pen=pg.mkPen("#888"))
        self._bars_hidden = pg.BarGraphItem(x=[], height=[], width=0.38, brush="#3a6fb0", name="tanh(W_q q + W_k k)")
        self._bars_weighted = pg.BarGraphItem(x=[], height=[], width=0.38, brush="#d08a1a", name="w_v ⊙ tanh(…)")
        self.feature_plot.addItem(self._bars_hidden)
        self.feature_plot.addItem(self._bars_weighted)
        layout.addWidget(self.feature_plot)
        self.feature_text = QLabel()
        self.feature_text.setWordWrap(True)
        self.feature_text.setTextFormat(Qt.TextFormat.RichText)
        layout.addWidget(self.feature_text)
        box.setVisible(False)
        return box

    def _build_params_box(self) -> QGroupBox:
        box = QGroupBox()
        box.installEventFilter(self)
        layout = QVBoxLayout(box)
        self.params_error = QLabel()
        self.params_error.setWordWrap(True)
        mark_error_label(self.params_error)
        self.params_error.setVisible(False)
        layout.addWidget(self.params_error)
        self.params_tabs = QTabWidget()
        self.params_tabs.setMinimumHeight(200)
        layout.addWidget(self.params_tabs)
        self.param_models: dict[str, ArrayTableModel] = {}
        self.param_views: dict[str, TensorTableView] = {}
        box.setVisible(False)
        return box

    def _ensure_param_tables(self, params: dict[str, np.ndarray]) -> None:
        # In the order the formula reads them (W_q, W_k, w_v), whatever order they came in.
        order = {"W_q": 0, "W_k": 1, "w_v": 2, "W": 3}
        params = dict(sorted(params.items(), key=lambda kv: order.get(kv[0], len(order))))
        if list(params) == list(self.param_models):
            for name, model in self.param_models.items():
                model.set_array(np.asarray(params[name]))
            return
        self.params_tabs.clear()
        for view in self.param_views.values():
            view.deleteLater()
        self.param_models.clear()
        self.param_views.clear()
        for name, value in params.items():
            model = ArrayTableModel(
                np.asarray(value), value_name=name, row_label=lambda r: str(r), column_label=lambda c: str(c)
            )
            model.blockEdited.connect(lambda r, c, block, name=name: self._on_param_block(name, r, c, block))
            model.inputRejected.connect(self._show_params_error)
            view = TensorTableView(model)
            view.setToolTip(
                translate(
                    "PipelineView", "{name}: type or paste numbers; each edit is one undo step in the main window"
                ).format(name=name)
            )
            self.param_models[name] = model
            self.param_views[name] = view
            rows, cols = np.shape(value)
            self.params_tabs.addTab(view, f"{name} ({rows}×{cols})")

    # ------------------------------------------------------------------ public API

    def show(
        self,
        view: ViewData | None = None,
        state: State | None = None,
        batch: int | None = None,
        head: HeadView | None = None,
    ) -> None:
        """Show a result: ``view`` of ``state``'s ``head`` (default: the book's one head) for batch
        element ``batch``.

        Called without arguments it is QWidget.show(). While the view is hidden the result is
        only kept, and drawn when the view is shown.
        """
        if view is None:
            super().show()
            return
        if state is None:
            raise ValueError("PipelineView.show needs the state the result was computed from")
        self._view = view
        self._state = state
        self._head = state.head_view() if head is None else head
        n_batch = view.weights.shape[0]
        if batch is not None:
            self._batch = int(batch)
        self._batch = min(max(self._batch, 0), n_batch - 1)
        self.batch_spin.blockSignals(True)
        self.batch_spin.setRange(0, n_batch - 1)
        self.batch_spin.setValue(self._batch)
        self.batch_spin.blockSignals(False)
        self.show_error(None)
        self._request_draw()

    def show_error(self, message: str | None) -> None:
        """A message above the stages (the last good result stays drawn)."""
        self._error = message
        self.error.setText(
            "⚠ "
            + translate("PipelineView", "{message} (showing the last good result)").format(message=tr_text(message))
            if message
            else ""
        )
        self.error.setVisible(bool(message))

    def set_batch(self, batch: int) -> None:
        if self._view is None:
            self._batch = max(int(batch), 0)
            return
        batch = min(max(int(batch), 0), self._view.weights.shape[0] - 1)
        if batch == self._batch and not self._dirty:
            return
        self._batch = batch
        self.batch_spin.blockSignals(True)
        self.batch_spin.setValue(batch)
        self.batch_spin.blockSignals(False)
        self._request_draw()

    @property
    def batch(self) -> int:
        return self._batch

    @property
    def highlighted_stage(self) -> str | None:
        return self._highlight

    def set_highlight(self, stage: str | None) -> None:
        """Highlight ``stage`` in the formulas and frame its heatmap (None: nothing)."""
        if stage == self._highlight:
            return
        self._highlight = stage
        for name, card in self.cards.items():
            card.set_hot(name == stage)
        self._draw_formula()
        self.highlightChanged.emit(stage or "")

    def stage_values(self, stage: str) -> np.ndarray | None:
        """The matrix the heatmap of ``stage`` shows (None before the first draw)."""
        return self.cards[stage].heatmap.values

    def formula_html(self) -> str:
        return self.formula.text()

    def set_font_scale(self, scale: float) -> None:
        """Scale the heatmaps' text (presentation mode); the formulas follow the app font."""
        for card in self.cards.values():
            card.heatmap.set_font_scale(scale)

    def _apply_formula_font(self) -> None:
        # 15 % above the widget font so sub- and superscripts stay legible; recomputed when the
        # application font changes (presentation mode), which an explicitly set font ignores.
        font = QFont(self.font())
        font.setPointSizeF(max(font.pointSizeF(), 6.0) * 1.15)
        self.formula.setFont(font)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)  # Retranslating: retranslate and restyle
        if event.type() == QEvent.Type.FontChange and hasattr(self, "formula"):
            self._apply_formula_font()

    def restyle(self) -> None:
        # Notes are secondary text: the window text blended a third of the way into the
        # background reads as secondary on the light and the dark theme alike.
        muted = muted_color(self)
        for card in self.cards.values():
            set_text_color(card.note, muted)
        self.set_plot_colors(plot_colors())
        self._draw_formula()

    def set_plot_colors(self, colors: PlotColors) -> None:
        """Light or dark plot colours for the feature chart."""
        self.feature_plot.setBackground(colors.background)
        for side in ("left", "bottom"):
            axis = self.feature_plot.getPlotItem().getAxis(side)
            axis.setPen(colors.foreground)
            axis.setTextPen(colors.foreground)
        self._legend.setLabelTextColor(colors.foreground)
        # Legend labels already drawn keep their colour: set it on them too.
        for _sample, label in self._legend.items:
            label.setText(label.text, color=colors.foreground)

    # ------------------------------------------------------------------ events

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind in (QEvent.Type.Enter, QEvent.Type.Leave):
            if isinstance(watched, _StageCard):
                stage: str | None = watched.stage
            elif watched is self.additive_box or watched is self.params_box:
                stage = "hidden" if self._scoring() == "additive" else "raw_scores"
            else:
                return False
            if kind == QEvent.Type.Enter:
                self.set_highlight(stage)
            elif self._highlight == stage:
                self.set_highlight(None)
        return False

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._dirty:
            self._draw()

    #: Below this width the formulas go under the stages instead of beside them.
    SIDE_BY_SIDE_WIDTH = 1000

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        # Docked beside the main heatmaps the view is narrow: stages and formulas side by side
        # would leave each a sliver, so stack them.
        wide = event.size().width() >= self.SIDE_BY_SIDE_WIDTH
        orientation = Qt.Orientation.Horizontal if wide else Qt.Orientation.Vertical
        if self.splitter.orientation() != orientation:
            self.splitter.setOrientation(orientation)
            total = event.size().width() if wide else event.size().height()
            self.splitter.setSizes(
                [int(total * 0.62), int(total * 0.38)] if wide else [int(total * 0.55), int(total * 0.45)]
            )

    # ------------------------------------------------------------------ drawing

    def _scoring(self) -> str:
        return self._state.settings.scoring if self._state is not None else ""

    def _request_draw(self) -> None:
        if self.isVisible():
            self._draw()
        else:
            self._dirty = True  # drawn by showEvent: hidden docks cost nothing

    def _draw(self) -> None:
        view, state, b = self._view, self._state, self._batch
        if view is None or state is None:
            return
        self._dirty = False
        self.draw_count += 1
        s = state.settings
        n_q, n_k = view.weights.shape[1:]
        rows, cols = axis_labels(view.query_tokens, view.key_tokens, b, n_q, n_k)
        cards = self.cards
        if n_q * n_k >= PYRAMID_MIN_CELLS:
            # Big stages: prepared on the view's thread and drawn when ready (_on_stages_prepared);
            # the maps keep their pictures until then.
            self._requests += 1
            self._preparer.submit(
                _StagesRequest(  # type: ignore[arg-type]
                    self._requests,
                    view,
                    b,
                    s.mask_mode,
                    {stage: cards[stage].heatmap.show_masked_values for stage in _QK_STAGES},
                    {stage: cards[stage].heatmap.frame_for((n_q, n_k)) for stage in _QK_STAGES},
                )
            )
        else:
            mask = view.mask[b].astype(bool)
            allowed = softmax_allowed(mask, s.mask_mode)
            for stage, (values, kwargs) in _stage_maps(view, b, mask, allowed).items():
                cards[stage].heatmap.set_data(
                    values, **kwargs, hover=self._hover(view, b, stage, mask, allowed), row_labels=rows, col_labels=cols
                )
        self.stage_grid.show_card(cards["modified_scores"], view.modified_scores is not view.scores)
        out = view.output[b]
        cards["output"].heatmap.set_data(
            out, levels=None, row_labels=rows, col_labels=[f"d{j}" for j in range(out.shape[1])]
        )
        # A map of one or two query rows does not need 400 pixels of height: keep the pipeline
        # on one screen when there are few queries, let big matrices grow.
        height = int(min(520, max(170, 110 + 30 * n_q)))
        for card in cards.values():
            card.heatmap.setMaximumHeight(height)
        if self._head is not None:
            self._write_notes(view, state, self._head, b)
        self._draw_formula()
        self._draw_params()
        self._draw_features()

    def _on_stages_prepared(self, result: object) -> None:
        view, state = self._view, self._state
        if not isinstance(result, _PreparedStages):  # preparing failed (an Outcome says why)
            if state is not None:
                self.show_error(getattr(result, "error", None))
            return
        request = result.request
        if (
            request.view is not view
            or request.batch != self._batch
            or state is None
            or request.mask_mode != state.settings.mask_mode
        ):
            return  # the view has moved on, and asked again
        n_q, n_k = view.weights.shape[1:]
        rows, cols = axis_labels(view.query_tokens, view.key_tokens, request.batch, n_q, n_k)
        previous, self._stages = self._stages, result
        for stage, prepared in result.maps.items():
            self.cards[stage].heatmap.show_prepared(
                prepared,
                hover=self._hover(view, request.batch, stage, result.mask, result.allowed),
                row_labels=rows,
                col_labels=cols,
            )
        if previous is not None:  # its pyramids: tens of MiB a map, not to be freed here
            self._session.release_later(previous)

    @staticmethod
    def _hover(view: ViewData, b: int, stage: str, mask: np.ndarray, allowed: np.ndarray) -> Callable[[int, int], str]:
        def text(r: int, c: int) -> str:
            value = float(getattr(view, stage)[b, r, c])
            where = cell_place(view, b, r, c)
            if stage == "mask":
                if mask[r, c]:
                    verdict = translate("PipelineView", "may attend")
                else:
                    verdict = translate("PipelineView", "masked")
                return f"{where}: {verdict}"
            state_txt = "" if allowed[r, c] else "  " + translate("PipelineView", "(masked)")
            return f"{where}: {_fmt(value)}{state_txt}"

        return text

    def _write_notes(self, view: ViewData, state: State, head: HeadView, b: int) -> None:
        s = state.settings
        d_k = int(head.keys.shape[2])
        notes = {stage: "" for stage, _ in PIPELINE_STAGES}
        scoring = tr_text(SCORING_NAMES.get(s.scoring) or catalog.SCORINGS.label(s.scoring))
        notes["raw_scores"] = translate(
            "PipelineView", "{scoring} scoring; colour range from the scores themselves"
        ).format(scoring=scoring)
        if s.scoring == "scaled_dot":
            notes["scores"] = translate("PipelineView", "raw ÷ √d = raw ÷ {root} (d = {d})").format(
                root=f"{np.sqrt(d_k):.4g}", d=d_k
            )
        else:
            notes["scores"] = translate(
                "PipelineView", "the same as the raw scores: {scoring} has no scaling step"
            ).format(scoring=scoring)
        causal = head.causal
        terms = [_term_text(term) for term in head.call.terms]
        if head.call.sinks is not None:
            terms.append(translate("PipelineView", "sinks (a logit per head in the softmax)"))
        if terms:
            notes["modified_scores"] = translate("PipelineView", "the call's score terms, in order: {terms}").format(
                terms=", ".join(terms)
            )
        if s.lens_mode == "none" and causal is None:
            notes["mask"] = translate("PipelineView", "no valid lengths and no causal mask: every key may be attended")
        else:
            lens = state.valid_lens(head)
            lens_txt = (
                ""
                if lens is None
                else translate("PipelineView", "valid lengths {lengths}").format(lengths=np.asarray(lens)[b].tolist())
            )
            causal_txt = (
                ""
                if causal is None
                else translate("PipelineView", "causal ({alignment})").format(alignment=causal.replace("_", "-"))
            )
            if lens_txt and causal_txt:
                notes["mask"] = translate("PipelineView", "from {first} and {second}").format(
                    first=lens_txt, second=causal_txt
                )
            else:
                notes["mask"] = translate("PipelineView", "from {source}").format(source=lens_txt or causal_txt)
        fill = _FILLS.get(s.mask_mode)
        if s.mask_mode == "float01":
            notes["masked_scores"] = translate(
                "PipelineView", "bug mode: the 0/1 mask is added (+1 on kept keys), nothing is masked"
            )
        elif s.mask_mode == "inverted":
            notes["masked_scores"] = translate(
                "PipelineView", "bug mode: the mask's polarity is flipped, the kept keys get −∞"
            )
        else:
            notes["masked_scores"] = translate(
                "PipelineView", "masked keys (hatched) get {fill}; colours from the allowed cells"
            ).format(fill=fill)
        rows_sum = view.row_sums[b]
        sums = ", ".join(_fmt(float(x)) for x in rows_sum[:6]) + ("…" if rows_sum.size > 6 else "")
        notes["weights"] = translate("PipelineView", "each row sums to {sums}").format(sums=sums)
        n_empty = int(view.empty_rows[b].sum())
        if n_empty == 1:
            notes["weights"] += "; " + translate("PipelineView", "{n} query has no valid key (∅)").format(n=n_empty)
        elif n_empty:
            notes["weights"] += "; " + translate("PipelineView", "{n} queries have no valid key (∅)").format(n=n_empty)
        if s.dropout > 0 and s.train:
            notes["applied_weights"] = translate(
                "PipelineView", "dropout p = {p}: zeroed at random, the rest × {factor}"
            ).format(p=f"{s.dropout:g}", factor=f"{1 / (1 - s.dropout):.4g}")
        elif s.dropout > 0:
            notes["applied_weights"] = translate(
                "PipelineView", "the same as the weights: dropout ({p}) acts in training only (train is off)"
            ).format(p=f"{s.dropout:g}")
        else:
            notes["applied_weights"] = translate("PipelineView", "the same as the weights: no dropout")
        notes["output"] = translate("PipelineView", "weights × values: one row of length d_v = {d_v} per query").format(
            d_v=view.output.shape[2]
        )
        for stage, card in self.cards.items():
            card.note.setText(notes[stage])
        self.summary.setText(
            translate(
                "PipelineView", "{scoring} scoring · mask {mask_mode} · {dtype} · batch element {b} of {n}"
            ).format(
                scoring=scoring,
                mask_mode=tr_text(catalog.MASK_MODES.label(s.mask_mode)),
                dtype=s.dtype,
                b=b,
                n=view.weights.shape[0],
            )
        )

    def _draw_formula(self) -> None:
        state, head = self._state, self._head
        if state is None or head is None:
            return
        s = state.settings
        dropout = s.dropout if s.train else 0.0
        ink = self.palette().windowText().color().name()
        self.formula.setText(
            pipeline_formulas(
                s.scoring, s.mask_mode, dropout=dropout, d=int(head.keys.shape[2]), highlight=self._highlight, ink=ink
            )
        )

    def _draw_params(self) -> None:
        view = self._view
        params = {} if view is None else view.params
        self.params_box.setVisible(bool(params))
        if params:
            self._ensure_param_tables(params)

    def _draw_features(self) -> None:
        view, state, head = self._view, self._state, self._head
        is_additive = (
            state is not None and state.settings.scoring == "additive" and view is not None and "W_q" in view.params
        )
        self.additive_box.setVisible(is_additive)
        if not is_additive or view is None or head is None:
            return
        b = self._batch
        self.feature_query.blockSignals(True)
        self.feature_key.blockSignals(True)
        self.feature_query.setRange(0, max(head.n_queries - 1, 0))
        self.feature_key.setRange(0, max(head.n_keys - 1, 0))
        self.feature_query.blockSignals(False)
        self.feature_key.blockSignals(False)
        i, j = self.feature_query.value(), self.feature_key.value()
        try:
            hidden, weighted = additive_features(view.params, head.queries[b, i], head.keys[b, j])
        except (KeyError, ValueError, IndexError) as exc:
            self.feature_text.setText(
                f"<span style='color:{error_color()}'>"
                + translate("PipelineView", "cannot compute the features: {error}").format(error=exc)
                + "</span>"
            )
            self._bars_hidden.setOpts(x=[], height=[])
            self._bars_weighted.setOpts(x=[], height=[])
            return
        x = np.arange(hidden.size, dtype=np.float64)
        self._bars_hidden.setOpts(x=x - 0.2, height=hidden)
        self._bars_weighted.setOpts(x=x + 0.2, height=weighted)
        self.feature_plot.getPlotItem().getAxis("bottom").setTicks([[(float(k), str(k)) for k in range(hidden.size)]])
        self.feature_plot.setXRange(-0.7, hidden.size - 0.3, padding=0)
        top = max(1.0, float(np.abs(weighted).max(initial=0.0)))
        self.feature_plot.setYRange(-top, top, padding=0.05)
        score = float(weighted.sum())
        shown = float(view.raw_scores[b, i, j])
        self.feature_text.setText(
            f"<i>a</i>(<b>q</b><sub>{i}</sub>, <b>k</b><sub>{j}</sub>) = ∑ <b>w</b><sub><i>v</i></sub> ⊙ "
            f"tanh(<b>W</b><sub><i>q</i></sub><b>q</b><sub>{i}</sub> + "
            f"<b>W</b><sub><i>k</i></sub><b>k</b><sub>{j}</sub>)"
            f" = <b>{_fmt(score)}</b> &nbsp;"
            + translate("PipelineView", "(raw-score map, batch {b}: {value})").format(b=b, value=_fmt(shown))
        )

    # ------------------------------------------------------------------ parameter edits

    def _show_params_error(self, message: str | None) -> None:
        self.params_error.setText(message or "")
        self.params_error.setVisible(bool(message))

    def _on_param_block(self, name: str, row: int, col: int, block: object) -> None:
        view = self._view
        if view is None:
            return
        arr = np.asarray(block, dtype=np.float64)
        if not np.isfinite(arr).all():
            self._show_params_error(
                translate("PipelineView", "{name} must hold finite numbers: NaN and ±inf are not accepted here").format(
                    name=name
                )
            )
            return
        self._show_params_error(None)
        params = {k: np.array(v, dtype=np.float32, copy=True) for k, v in view.params.items()}
        target = params[name]
        rows, cols = arr.shape
        if row + rows > target.shape[0] or col + cols > target.shape[1]:
            self._show_params_error(
                translate("PipelineView", "the block does not fit into {name} {shape}").format(
                    name=name, shape=target.shape
                )
            )
            return
        target[row : row + rows, col : col + cols] = arr
        self.edit_params(params)

    def edit_params(self, params: dict[str, np.ndarray]) -> None:
        """Make ``params`` (every learned parameter, one block changed) the document's, as one
        undoable edit."""
        session = self._session
        if not session.is_current:
            # The tables show the parameters of an older result (say, before a change of the
            # hidden size): writing them back could not fit. Wait for the current one.
            session.show_status(
                translate("TeachingDocks", "The parameters are being recomputed; edit them again in a moment"), 8000
            )
            return
        state = session.document.state
        # Compare with the parameters last used (seeded ones are not in state.params yet) so
        # the undo entry names the matrix that was edited.
        view = session.current_view()
        used = view.params if view is not None else state.params
        changed = [k for k, v in params.items() if k not in used or not np.array_equal(used[k], v)]
        new = replace(state, params={k: np.asarray(v).copy() for k, v in params.items()})
        session.push(
            ReplaceState(
                new,
                message(QT_TRANSLATE_NOOP("TeachingDocks", "Edit {names}"), names=", ".join(changed or list(params))),
            )
        )


def _term_text(term: CallTerm) -> str:
    if term.kind == "softcap":
        return translate("PipelineView", "soft cap {cap} (cap · tanh(s / cap))").format(cap=f"{term.cap:g}")
    if term.kind == "score_mod":
        return translate("PipelineView", "FlexAttention score_mod")
    return translate("PipelineView", "{name} added").format(name=term.name)


def install_pipeline_view(session: AppSession, host: Host) -> ToolPanel:
    """Add the pipeline view as a hidden dock; View > Pipeline view (Ctrl+Shift+P) shows it."""
    # Teaching views are wide (seven stages, or three maps side by side): along the bottom,
    # tabbed with each other, toggled from the View menu.
    spec = DockSpec(
        PIPELINE_DOCK,
        QT_TRANSLATE_NOOP("TeachingDocks", "Pipeline: every stage"),
        QT_TRANSLATE_NOOP("TeachingDocks", "&Pipeline view"),
        QT_TRANSLATE_NOOP("TeachingDocks", "Every stage of the computation, with the chapter's formulas"),
        shortcut=PIPELINE_SHORTCUT,
        menu="view",
    )
    return host.add_dock(spec, lambda: PipelineView(session))
