"""The pipeline's stage-by-stage walk, for a lecture: one stage at a time, enlarged, with its
equation, the previous stage beside it, the cells that changed outlined, and a temperature
what-if on the scores.

``StageWalk`` only shows what the pipeline view hands it (``show_result``); the numbers come
from ``pipeline_steps`` (Qt-free). Forward and back: the arrow keys and Page Up/Down (what
presentation clickers send), or the buttons. The code beside the stage is the view's
``CodePanel``, placed in ``code_holder``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QEvent, QRectF, QSignalBlocker, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QKeyEvent, QPainterPath, QPen, QResizeEvent
from PySide6.QtWidgets import (
    QGraphicsPathItem,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QSlider,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from attnviz.compute.attention import ViewData
from attnviz.compute.axes import axis_labels
from attnviz.compute.pipeline import softmax_allowed
from attnviz.state.run import HeadView
from attnviz.text.tr import QT_TRANSLATE_NOOP
from attnviz.ui.app.view_base import scrolled
from attnviz.ui.heatmap import HeatmapWidget
from attnviz.ui.heatmap.items import fit_colorbar_labels
from attnviz.ui.i18n import tr_text, translate
from attnviz.ui.lifecycle import Retranslating
from attnviz.ui.theme import mark_warning_label
from attnviz.ui.views.formulas import pooling_formula, scoring_formula, softmax_formula
from attnviz.ui.views.pipeline_stages import AXES, stage_look
from attnviz.ui.views.pipeline_steps import (
    HIDDEN,
    STEP_TITLES,
    WhatIf,
    before_stage,
    change_note,
    changed_cells,
    hidden_map,
    walk_stages,
    what_if,
)

__all__ = ["OwnMap", "StageWalk", "WalkInput"]

#: ``own_map(heatmap, x_label, y_label)``: the view makes the map follow its colour map, type
#: scale and theme, its axes named by the marked sources given.
OwnMap = Callable[[HeatmapWidget, str, str], HeatmapWidget]

_KEYS = QT_TRANSLATE_NOOP("PipelineView", "Keys")
_QUERIES = QT_TRANSLATE_NOOP("PipelineView", "Queries")
_HIDDEN_UNITS = QT_TRANSLATE_NOOP("PipelineWalk", "Hidden unit")
#: The outline of the cells that changed: a magenta no colour map of the app uses.
_CHANGED_PEN = "#ff2d95"
#: The slider's positions are tenths of a doubling: 2**(-3) .. 2**3.
_SLIDER_RANGE = 30


@dataclass(frozen=True)
class WalkInput:
    """What the walk shows: batch element ``batch`` of ``view``, the result of ``head`` under
    ``scoring`` and ``mask_mode``, with ``dropout`` (0 when it does not act) and each stage's note."""

    view: ViewData
    head: HeadView
    batch: int
    scoring: str
    mask_mode: str
    dropout: float
    notes: dict[str, str]


#: The maps' share of the walk's width beside the step's explanation and code (presentation mode:
#: ``SLIDE_MAP_SHARE``).
MAP_SHARE = 0.62
SLIDE_MAP_SHARE = 0.42
#: The title's and the equation's size, relative to the walk's text: larger on a screen, where
#: the walk's text is the app's; on a slide, whose text is slide size already, the title on one
#: line between the buttons and the equation at the text's size (at 1.35 and 1.1 in slide type a
#: step's explanation ran up to 160 px below a 1280x720 slide in Portuguese).
TITLE_SIZE, SLIDE_TITLE_SIZE = 1.35, 1.1
EQUATION_SIZE, SLIDE_EQUATION_SIZE = 1.1, 1.0


class StageWalk(Retranslating, QWidget):
    """One stage at a time (``stage``; ``stages`` the steps of the result on show).

    ``stageChanged(str)``: the stage now on show. ``factor``: the what-if's multiplier of the
    scaled scores (1: the app's result as it is).
    """

    stageChanged = Signal(str)

    def __init__(self, own_map: OwnMap, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._own_map = own_map
        self._input: WalkInput | None = None
        self._what_if: WhatIf | None = None
        self.stages: tuple[str, ...] = walk_stages(False)
        self.stage = self.stages[0]
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        header = QHBoxLayout()
        self.back_button = QPushButton()
        self.back_button.clicked.connect(self.back)
        self.forward_button = QPushButton()
        self.forward_button.clicked.connect(self.forward)
        for button in (self.back_button, self.forward_button):
            button.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the keys stay with the walk
        self.title = QLabel()
        self.title.setWordWrap(True)
        self.title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        header.addWidget(self.back_button)
        header.addWidget(self.title, 1)
        header.addWidget(self.forward_button)
        layout.addLayout(header)

        scale_row = QHBoxLayout()
        self.scale_caption = QLabel()
        self.scale_slider = QSlider(Qt.Orientation.Horizontal)
        self.scale_slider.setRange(-_SLIDER_RANGE, _SLIDER_RANGE)
        self.scale_slider.setValue(0)
        self.scale_slider.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.scale_slider.valueChanged.connect(lambda _v: self._factor_changed())
        self.scale_caption.setBuddy(self.scale_slider)
        self.scale_value = QLabel()
        self.reset_button = QPushButton()
        self.reset_button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.reset_button.clicked.connect(lambda: self.set_factor(1.0))
        scale_row.addWidget(self.scale_slider, 1)
        scale_row.addWidget(self.scale_value)
        scale_row.addWidget(self.reset_button)
        self.what_if_banner = QLabel()
        self.what_if_banner.setWordWrap(True)
        mark_warning_label(self.what_if_banner)
        self.what_if_banner.setVisible(False)

        splitter = self.splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setChildrenCollapsible(False)
        maps = QWidget()
        maps_layout = QVBoxLayout(maps)
        maps_layout.setContentsMargins(0, 0, 0, 0)
        pair = QHBoxLayout()
        before_column = QVBoxLayout()
        self.before_caption = QLabel()
        self.before_caption.setWordWrap(True)
        # As high at every step (as its longest text needs): one line at a step and two at the
        # next moved the maps up and down as the clicker went on.
        caption_keep = self.before_caption.sizePolicy()
        caption_keep.setRetainSizeWhenHidden(True)
        self.before_caption.setSizePolicy(caption_keep)
        # Unnamed axes: the small map's room goes to its cells (the big one names them).
        self.before = own_map(HeatmapWidget(), "", "")
        # Short enough that a caption wrapped onto five lines ("Computed from: Hidden features
        # tanh(...)") leaves the slide its height at 1280x720.
        self.before.setMinimumSize(140, 90)
        self.before.set_colorbar_visible(False)  # a glance back: the big map has the scale
        # Nor key labels: in its narrow column it showed one of four ("k2"), which read as if the
        # map had one key. Its rows (the queries) keep theirs.
        self.before.plot_item.showAxes(True, showValues=(True, False, False, False))
        # The walk's first step has no "before": its column keeps its place, so the big map
        # keeps its size and place from the first step to the second.
        keep = self.before.sizePolicy()
        keep.setRetainSizeWhenHidden(True)
        self.before.setSizePolicy(keep)
        # The hidden features are of one query: which one (a query picked in another view too).
        query_row = QHBoxLayout()
        self.query_caption = QLabel()
        self.query_spin = QSpinBox()
        self.query_spin.setRange(0, 0)
        self.query_spin.valueChanged.connect(lambda _v: self._draw())
        self.query_caption.setBuddy(self.query_spin)
        query_row.addWidget(self.query_caption)
        query_row.addWidget(self.query_spin)
        query_row.addStretch(1)
        self.query_box = QWidget()
        self.query_box.setLayout(query_row)
        self.query_box.setVisible(False)
        before_column.addWidget(self.query_box)
        before_column.addWidget(self.before, 1)
        self.now = own_map(HeatmapWidget(), _KEYS, _QUERIES)
        self.now.setMinimumSize(260, 160)
        self._outline = QGraphicsPathItem()
        pen = QPen(QColor(_CHANGED_PEN))
        pen.setWidthF(3.0)
        pen.setCosmetic(True)
        self._outline.setPen(pen)
        self._outline.setZValue(50)
        self.now.plot_item.addItem(self._outline)
        pair.addLayout(before_column, 1)
        pair.addWidget(self.now, 4)
        # Over both maps, on one line where it fits: in the small map's narrow column it wrapped
        # onto five lines and moved the maps at every step.
        # The what-if and its banner over the maps they change, not over the whole walk: there
        # they took the step's explanation two lines of a 720-pixel slide (it ran below it), and
        # the banner, wrapped in slide type, pushed the maps' Keys axis off.
        # The caption on a line of its own: beside the slider in the maps' column it left the
        # track a few pixels in slide type (Portuguese's caption is longer).
        maps_layout.addWidget(self.scale_caption)
        maps_layout.addLayout(scale_row)
        maps_layout.addWidget(self.what_if_banner)
        maps_layout.addWidget(self.before_caption)
        maps_layout.addLayout(pair, 1)
        # What changed and why: beside the maps, over the equation (under the maps, the step's
        # explanation ran below a 720-pixel slide and the maps shrank as it wrapped).
        self.change = QLabel()
        self.change.setWordWrap(True)
        self.note = QLabel()
        self.note.setWordWrap(True)
        splitter.addWidget(maps)

        right = self.right = QSplitter(Qt.Orientation.Vertical)
        right.setChildrenCollapsible(False)
        self.equation = QLabel()
        self.equation.setTextFormat(Qt.TextFormat.RichText)
        self.equation.setWordWrap(True)
        self.equation.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        explained = QWidget()
        explained_layout = QVBoxLayout(explained)
        explained_layout.setContentsMargins(0, 0, 0, 0)
        explained_layout.addWidget(self.change)
        explained_layout.addWidget(self.note)
        explained_layout.addWidget(self.equation, 1)
        explanation = scrolled(explained, frame=False)
        # The lecture probe checks it never scrolls on a slide (the step's text below the screen).
        explanation.setObjectName("walkExplanation")
        right.addWidget(explanation)
        #: Where the view puts its code panel while the walk is on show.
        self.code_holder = QWidget()
        holder_layout = QVBoxLayout(self.code_holder)
        holder_layout.setContentsMargins(0, 0, 0, 0)
        right.addWidget(self.code_holder)
        right.setStretchFactor(0, 1)
        right.setStretchFactor(1, 1)
        splitter.addWidget(right)
        layout.addWidget(splitter, 1)
        self._split_once = False
        #: The maps' share of the walk's width: on a slide the step's explanation, in slide
        #: type, needs more than half of it (at 0.62 it ran 114 px below a 1280x720 slide at the mask step).
        self._map_share = MAP_SHARE
        self._slide = False
        self._bar_stage: str | None = None  # the step the big map's colour bar was fitted for
        self._apply_fonts()
        self.retranslate()

    # ------------------------------------------------------------------ public API

    @property
    def factor(self) -> float:
        """The what-if's multiplier of the scaled scores: 2 ** (slider / 10)."""
        return float(2.0 ** (self.scale_slider.value() / 10))

    def set_factor(self, factor: float) -> None:
        """Multiply the scaled scores by ``factor`` (rounded to the slider's tenth of a doubling)."""
        position = round(10 * np.log2(max(float(factor), 1e-9)))
        self.scale_slider.setValue(int(np.clip(position, -_SLIDER_RANGE, _SLIDER_RANGE)))

    @property
    def hidden_query(self) -> int:
        """The query whose hidden features the first step of an additive walk shows."""
        return self.query_spin.value()

    def set_hidden_query(self, query: int) -> None:
        self.query_spin.setValue(query)

    @property
    def what_if(self) -> WhatIf | None:
        """The what-if on show (None while the factor is 1)."""
        return self._what_if

    def show_result(self, data: WalkInput | None) -> None:
        """Walk ``data`` from now on (the stage on show stays, when the new result has it)."""
        self._input = data
        additive = data is not None and data.scoring == "additive" and "W_q" in data.view.params
        # A call with score terms (a captured model's): the engine keeps the scores without them
        # as the same tensor when there are none.
        terms = data is not None and data.view.modified_scores is not data.view.scores
        # The walk's first (or last) step stays its first (or last) when the steps change: a
        # lecture enters the walk of the next example at its step 1, whatever this one had.
        old = self.stages
        self.stages = walk_stages(additive, terms)
        if self.stage == old[0]:
            self.stage = self.stages[0]
        elif self.stage == old[-1]:
            self.stage = self.stages[-1]
        # The what-if adds (× - 1) of the scaled scores to the masked scores: exact for additive
        # terms, not through a soft cap or a score_mod. A call with terms gets no what-if.
        self.scale_slider.setEnabled(not terms)
        self.reset_button.setEnabled(not terms)
        if terms:
            with QSignalBlocker(self.scale_slider):
                self.scale_slider.setValue(0)  # × 1
        if data is not None:
            self.query_spin.blockSignals(True)
            self.query_spin.setRange(0, max(data.head.n_queries - 1, 0))
            self.query_spin.blockSignals(False)
        if self.stage not in self.stages:
            self.stage = self.stages[0]
        self._compute_what_if()
        self._draw()

    def show_stage(self, stage: str) -> None:
        """Show ``stage`` (one of ``stages``)."""
        if stage not in self.stages:
            raise ValueError(f"{stage!r} is not a step of this walk: {', '.join(self.stages)}")
        if stage != self.stage:
            self.stage = stage
            self._draw()
            self.stageChanged.emit(stage)

    def forward(self) -> bool:
        """The next step; False at the last (a clicker's step then goes on to the next slide)."""
        i = self.stages.index(self.stage)
        if i + 1 < len(self.stages):
            self.show_stage(self.stages[i + 1])
            return True
        return False

    def back(self) -> bool:
        """The previous step; False at the first."""
        i = self.stages.index(self.stage)
        if i > 0:
            self.show_stage(self.stages[i - 1])
            return True
        return False

    def enter(self, at_end: bool = False) -> None:
        """Start at step 1 (or at the last step, for a lecture stepping back into the walk)."""
        self.show_stage(self.stages[-1] if at_end else self.stages[0])

    def changed(self) -> np.ndarray | None:
        """The cells of the stage on show outlined as changed since the previous one."""
        return self._changed

    def stage_matrix(self, stage: str) -> np.ndarray | None:
        """What the walk shows for ``stage`` (the what-if's values while the factor is not 1)."""
        data = self._input
        if data is None:
            return None
        b = data.batch
        if stage == HIDDEN:
            try:
                query = min(self.hidden_query, data.head.n_queries - 1)
                return hidden_map(data.view.params, data.head.queries[b], data.head.keys[b], query)
            except (KeyError, ValueError, IndexError):
                return None
        w = self._what_if
        if w is not None and stage in ("scores", "masked_scores", "weights", "applied_weights", "output"):
            return {
                "scores": w.scores,
                "masked_scores": w.masked_scores,
                "weights": w.weights,
                "applied_weights": w.weights,
                "output": w.output,
            }[stage]
        value = getattr(data.view, stage)[b]
        return value.astype(np.float32) if stage == "mask" else value

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        QTimer.singleShot(0, self, self._fit_caption)  # once the maps' column has its new width
        if not self._split_once and event.size().width() > 0:
            # The maps most of the width, the equation and the code the rest (splitter
            # stretch factors lose to the maps' minimum sizes).
            self._split_once = True
            self._split(event.size().width())
            height = event.size().height()
            self.right.setSizes([int(height * 0.4), int(height * 0.6)])

    def set_slide(self, on: bool) -> None:
        """Presentation mode: the maps and the explanation share the width by halves."""
        self._slide = on
        self._map_share = SLIDE_MAP_SHARE if on else MAP_SHARE
        self._apply_fonts()
        self._draw()
        if self._split_once:
            self._split(self.splitter.width())

    def _split(self, width: int) -> None:
        self.splitter.setSizes([int(width * self._map_share), width - int(width * self._map_share)])

    # ------------------------------------------------------------------ keys

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if key in (Qt.Key.Key_Right, Qt.Key.Key_Down, Qt.Key.Key_PageDown, Qt.Key.Key_Space):
            self.forward()
        elif key in (Qt.Key.Key_Left, Qt.Key.Key_Up, Qt.Key.Key_PageUp, Qt.Key.Key_Backspace):
            self.back()
        elif key == Qt.Key.Key_Home:
            self.show_stage(self.stages[0])
        elif key == Qt.Key.Key_End:
            self.show_stage(self.stages[-1])
        else:
            super().keyPressEvent(event)

    # ------------------------------------------------------------------ language, fonts

    def retranslate(self) -> None:
        self.back_button.setText(translate("PipelineWalk", "◀ Previous"))
        self.back_button.setToolTip(translate("PipelineWalk", "The previous stage (←, Page Up)"))
        self.forward_button.setText(translate("PipelineWalk", "Next ▶"))
        self.forward_button.setToolTip(translate("PipelineWalk", "The next stage (→, Page Down)"))
        self.scale_caption.setText(translate("PipelineWalk", "&What if the scores were × "))
        self.scale_slider.setToolTip(
            translate(
                "PipelineWalk",
                "Multiply the scaled scores (a temperature of 1/×): a what-if of this view only, "
                "the document and the other views are unchanged",
            )
        )
        self.reset_button.setText(translate("PipelineWalk", "× 1"))
        self.query_caption.setText(translate("PipelineWalk", "&Query"))
        self.query_spin.setToolTip(translate("PipelineWalk", "The query whose hidden features are shown"))
        self.reset_button.setToolTip(translate("PipelineWalk", "Back to the app's scores"))
        self.before_caption.setToolTip(translate("PipelineWalk", "The stage this one is computed from, for comparison"))
        self._draw()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange and hasattr(self, "equation"):
            self._apply_fonts()
            QTimer.singleShot(0, self, self._fit_caption)

    def _apply_fonts(self) -> None:
        # The walk is read from the back of a hall: the title and the equation larger than the
        # rest, following the application's font (presentation mode enlarges it).
        base = QFont(self.font())
        title = QFont(base)
        title.setPointSizeF(max(base.pointSizeF(), 6.0) * (SLIDE_TITLE_SIZE if self._slide else TITLE_SIZE))
        title.setBold(True)
        self.title.setFont(title)
        equation = QFont(base)
        equation.setPointSizeF(max(base.pointSizeF(), 6.0) * (SLIDE_EQUATION_SIZE if self._slide else EQUATION_SIZE))
        self.equation.setFont(equation)
        # The slider's track keeps its length whatever the factor's text ("1", "0.125").
        self.scale_value.setMinimumWidth(self.scale_value.fontMetrics().horizontalAdvance("0.000") + 4)

    # ------------------------------------------------------------------ drawing

    _changed: np.ndarray | None = None

    def _factor_changed(self) -> None:
        self._compute_what_if()
        self._draw()

    def _compute_what_if(self) -> None:
        data, factor = self._input, self.factor
        self.scale_value.setText(f"{factor:.3g}")
        if data is None or abs(factor - 1.0) < 1e-12:
            self._what_if = None
            return
        self._what_if = what_if(data.view, data.batch, data.head.values[data.batch], data.mask_mode, factor)

    def _draw(self) -> None:
        data = self._input
        self.back_button.setEnabled(data is not None and self.stage != self.stages[0])
        self.forward_button.setEnabled(data is not None and self.stage != self.stages[-1])
        stage, stages = self.stage, self.stages
        position = stages.index(stage)
        self.title.setText(
            translate("PipelineWalk", "Step {i} of {n} · {title}").format(
                i=position + 1, n=len(stages), title=tr_text(STEP_TITLES[stage])
            )
        )
        factor = self.factor
        if self._what_if is not None:
            whole = translate(
                "PipelineWalk",
                "What-if: the scaled scores × {factor} (a temperature of {t}), in this walk only; "
                "the document, the other maps and the code are the app's. No dropout in the what-if.",
            ).format(factor=f"{factor:.3g}", t=f"{1 / factor:.3g}")
            # On a slide one short line over the maps (the whole text, wrapped in slide type in
            # the maps' column, pushed their Keys axis off); the whole text in its tooltip.
            short = translate("PipelineWalk", "What-if: scores × {factor}, this walk only").format(
                factor=f"{factor:.3g}"
            )
            self.what_if_banner.setText("⚠ " + (short if self._slide else whole))
            self.what_if_banner.setToolTip(whole if self._slide else "")
        self.what_if_banner.setVisible(self._what_if is not None)
        if data is None:
            self.note.setText("")
            self.change.setText("")
            return
        self._draw_maps(data, stage, before_stage(stage, stages))
        self._draw_equation(data, stage)

    def _draw_maps(self, data: WalkInput, stage: str, previous: str | None) -> None:
        b = data.batch
        current = self.stage_matrix(stage)
        before = None if previous is None else self.stage_matrix(previous)
        mask = np.asarray(data.view.mask[b]).astype(bool)
        for heatmap, name, values in ((self.now, stage, current), (self.before, previous, before)):
            heatmap.setVisible(values is not None)
            if values is None or name is None:
                continue
            if heatmap is self.now:
                self._own_map(heatmap, *self._axes(name))
            rows, cols = self._labels(data, name)
            heatmap.set_data(values, **self._look(data, name, mask), row_labels=rows, col_labels=cols)
        if stage != self._bar_stage and current is not None:
            # A new step, a new colour bar: its labels' room as wide as this step's labels. The
            # room only grows between results (a relayout per keystroke otherwise), and the raw
            # scores' "-0.0916 (constant)" left the next steps' maps a third of their width.
            self._bar_stage = stage
            fit_colorbar_labels(self.now.colorbar.axis, shrink=True)
        self.before_caption.setVisible(before is not None)
        if previous is not None:
            self.before_caption.setText(self._computed_from(previous))
        self._fit_caption()
        changed = None if current is None else changed_cells(before, current)
        if stage == "mask" and current is not None:
            changed = ~mask  # the cells the mask will take away
        self._changed = changed
        self._outline_cells(changed)
        self.change.setText("→ " + tr_text(change_note(stage, previous, changed)))
        self.query_box.setVisible(stage == HIDDEN)
        if stage == HIDDEN:
            note = translate("PipelineWalk", "query {i}: one row per key; w_v · a row is that key's raw score").format(
                i=min(self.hidden_query, data.head.n_queries - 1)
            )
            if current is None:
                note = translate("PipelineWalk", "the hidden features cannot be drawn for this input")
        else:
            note = tr_text(data.notes.get(stage, ""))
        self.note.setText(note)

    @staticmethod
    def _computed_from(stage: str) -> str:
        return translate("PipelineWalk", "Computed from: {title}").format(title=tr_text(STEP_TITLES[stage]))

    def _fit_caption(self) -> None:
        """The "Computed from" caption as high as its longest text at this width, at every step."""
        width = self.before_caption.width()
        if width <= 1:
            return
        label = QLabel()
        label.setWordWrap(True)
        label.setFont(self.before_caption.font())
        need = 0
        for stage in self.stages:
            label.setText(self._computed_from(stage))
            need = max(need, label.heightForWidth(width))
        if need > 0 and need != self.before_caption.minimumHeight():
            self.before_caption.setMinimumHeight(need)

    @staticmethod
    def _axes(stage: str) -> tuple[str, str]:
        return (_HIDDEN_UNITS, _KEYS) if stage == HIDDEN else AXES[stage]

    @staticmethod
    def _labels(data: WalkInput, stage: str) -> tuple[list[str], list[str]]:
        """The tick labels of ``stage``'s map: the tokens where the result has them."""
        view, b = data.view, data.batch
        n_q, n_k = view.weights.shape[1:]
        rows, keys = axis_labels(view.query_tokens, view.key_tokens, b, n_q, n_k)
        if stage == HIDDEN:
            return list(keys), [str(j) for j in range(len(view.params.get("w_v", np.zeros(0)).reshape(-1)))]
        if stage == "output":
            return list(rows), [f"d{j}" for j in range(view.output.shape[2])]
        return list(rows), list(keys)

    @staticmethod
    def _look(data: WalkInput, stage: str, mask: np.ndarray) -> dict:
        if stage == HIDDEN:
            return {"levels": (-1.0, 1.0)}  # tanh's range
        allowed = softmax_allowed(mask, data.mask_mode)
        return stage_look(stage, mask, allowed, data.view.empty_rows[data.batch])

    def _outline_cells(self, changed: np.ndarray | None) -> None:
        path = QPainterPath()
        if changed is not None and changed.size <= 4096 and not changed.all():
            # Every cell changed (a softmax, a scaling) says nothing cell by cell: the note says it.
            for r, c in zip(*np.nonzero(changed), strict=True):
                path.addRect(QRectF(float(c), float(r), 1.0, 1.0))
        self._outline.setPath(path)

    def _draw_equation(self, data: WalkInput, stage: str) -> None:
        ink = self.palette().windowText().color().name()
        highlight = stage
        if stage in (HIDDEN, "raw_scores", "scores"):
            html = scoring_formula(data.scoring, highlight=highlight, d=int(data.head.keys.shape[2]), ink=ink)
        elif stage in ("mask", "masked_scores", "weights"):
            html = softmax_formula(data.mask_mode, highlight=highlight, ink=ink, brief=self._slide)
        else:
            html = pooling_formula(dropout=data.dropout, highlight=highlight, ink=ink)
        self.equation.setText(f'<div style="color:{ink};">{html}</div>')
