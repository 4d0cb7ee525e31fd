"""The pipeline view: every stage of one attention computation, in order, beside its maths.

Raw scores → scaled scores → mask → masked scores → softmax weights → weights after dropout →
output, each a heatmap of the selected batch element (``pipeline_stages``), with a line saying
what the stage did here (``pipeline_notes``). The chapter's equations sit beside them
(``formulas``); the stage under the mouse is highlighted in the equations. For a learnable
scoring function the parameters are editable tables, and for additive attention the hidden
features tanh(W_q q + W_k k) of one query–key pair are drawn as bars (``pipeline_side``).

The view only draws: it follows the session's outcomes and selection, and an edit of the
parameters becomes one undoable edit pushed through the session. While the view is hidden
nothing is drawn; the latest result is drawn when it is shown again. Big stage maps are
prepared off the GUI thread, by a computation of the view.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import replace

import numpy as np
from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QFont, QKeySequence, QResizeEvent, QShortcut
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from attnviz.compute import Outcome, ViewData
from attnviz.compute.axes import axis_labels
from attnviz.compute.pipeline import softmax_allowed
from attnviz.state.document import ReplaceState, State
from attnviz.state.run import HeadView
from attnviz.text.tr import QT_TRANSLATE_NOOP, message
from attnviz.ui.app.host import Host, ToolPanel
from attnviz.ui.app.output_panel import output_hover_text
from attnviz.ui.app.results_panel import cell_place
from attnviz.ui.app.session import AppSession, Selection
from attnviz.ui.app.view_base import SessionView, bold_label, fitted_column, message_label, scrolled
from attnviz.ui.heatmap.prepare import PYRAMID_MIN_CELLS
from attnviz.ui.i18n import tr_text, translate
from attnviz.ui.theme import muted_color, set_text_color
from attnviz.ui.views.docks import DOCKS, PIPELINE_DOCK
from attnviz.ui.views.formulas import pipeline_formulas
from attnviz.ui.views.pipeline_code import CodePanel, CodeRequest, CodeResult, make_code
from attnviz.ui.views.pipeline_notes import PIPELINE_STAGES, format_value, stage_notes, summary
from attnviz.ui.views.pipeline_side import FeaturesBox, ParametersBox
from attnviz.ui.views.pipeline_stages import (
    AXES,
    QK_STAGES,
    PreparedStages,
    StageCard,
    StageGrid,
    StagesParams,
    prepare_stages,
    stage_maps,
)
from attnviz.ui.views.pipeline_walk import StageWalk, WalkInput

__all__ = ["PIPELINE_DOCK", "PIPELINE_STAGES", "WALK_SHORTCUT", "PipelineView", "install_pipeline_view"]

#: Starts and ends the stage-by-stage walk while the pipeline is on show (presentation mode too).
WALK_SHORTCUT = "Ctrl+Shift+W"
#: What moves the walk while presenting, wherever the focus is: the arrows. The keys clickers
#: send (Page Down / Up) belong to the presenter bar, which gives the walk its steps first
#: (``AppSession.claim_steps``).
_WALK_KEYS = ((Qt.Key.Key_Right, 1), (Qt.Key.Key_Left, -1))


class PipelineView(SessionView):
    """Every stage of the computation for one batch element, with the formulas beside it.

    It follows ``session`` (outcomes, selection, errors) and pushes parameter edits through it.
    ``highlightChanged(str)``: the stage now highlighted in the formulas ("" for none).
    ``features`` and ``parameters`` are the side panels, ``stages`` the computation that
    prepares big stage maps.
    """

    highlightChanged = Signal(str)

    #: Below this width the formulas go under the stages instead of beside them.
    SIDE_BY_SIDE_WIDTH = 1000

    def __init__(self, session: AppSession, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self._session = session
        self._view: ViewData | None = None
        self._state: State | None = None
        #: The head the result on show is of (its tensors, lengths and causal flag).
        self._head: HeadView | None = None
        self._batch = session.selection.batch
        self._highlight: str | None = None
        self._error: str | None = None
        #: Big stage maps, prepared off the GUI thread (latest request wins), drawn when ready.
        self.stages = self.while_shown(self.session.register("pipeline stages", prepare_stages, auto=False))
        self.stages.on_result(self._on_stages_prepared)
        self.stages.on_failure(self.show_error)
        self._prepared: PreparedStages | None = None  # the big maps on show, freed off this thread

        layout = fitted_column(self)
        # The summary on a line of its own, wrapped: beside the controls in large type it was
        # either a column of words or it pushed the batch control off screen.
        self.summary = bold_label()
        self.summary.setWordWrap(True)
        self.summary.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        layout.addWidget(self.summary)
        header = QHBoxLayout()
        self.walk_button = QPushButton()
        self.walk_button.setCheckable(True)
        self.walk_button.toggled.connect(self.set_walking)
        self.code_button = QPushButton()
        self.code_button.setCheckable(True)
        self.code_button.toggled.connect(self.set_code_visible)
        header.addWidget(self.walk_button)
        header.addWidget(self.code_button)
        header.addStretch(1)
        self.batch_spin = QSpinBox()
        self.batch_spin.setRange(0, 0)
        self.batch_spin.valueChanged.connect(session.set_batch)
        self.batch_caption = QLabel()
        self.batch_caption.setBuddy(self.batch_spin)
        header.addWidget(self.batch_caption)
        header.addWidget(self.batch_spin)
        layout.addLayout(header)
        self.error = message_label()
        layout.addWidget(self.error)

        splitter = self.splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setChildrenCollapsible(False)
        # The stages and formulas, or the walk: one page at a time.
        self.pages = QStackedWidget()
        self.pages.addWidget(splitter)
        layout.addWidget(self.pages, 1)

        # Stages read left to right, top to bottom, in as many columns as the width allows.
        self.cards: dict[str, StageCard] = {}
        for stage, title in PIPELINE_STAGES:
            card = StageCard(stage, title)
            x_label, y_label = AXES[stage]
            self.own_map(card.heatmap, x_label=x_label, y_label=y_label)
            card.installEventFilter(self)
            self.cards[stage] = card
        self.stage_grid = StageGrid(list(self.cards.values()), {self.cards["modified_scores"]})
        splitter.addWidget(scrolled(self.stage_grid))

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
        self.features = FeaturesBox()
        self.own_plot(self.features.plot)
        self.parameters = ParametersBox(self.edit_params)
        for box in (self.features, self.parameters):
            box.installEventFilter(self)
            side_layout.addWidget(box)
        side_layout.addStretch(1)
        side_scroll = scrolled(side)
        side_scroll.setMinimumWidth(300)
        # The code beside the stages, under the formulas (in the walk, beside its stage).
        self.side_split = QSplitter(Qt.Orientation.Vertical)
        self.side_split.setChildrenCollapsible(False)
        self.side_split.addWidget(side_scroll)
        self.code_panel = CodePanel()
        self.code_panel.setVisible(False)
        self.code_panel.frameworkChosen.connect(lambda _name: self._request_code())
        self.side_split.addWidget(self.code_panel)
        splitter.addWidget(self.side_split)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([820, 500])

        self.walk = StageWalk(lambda heatmap, x, y: self.own_map(heatmap, x_label=x, y_label=y))
        self.walk.stageChanged.connect(self._on_walk_stage)
        self.walk.set_slide(self.font_scale > 1.0)  # built during presentation mode: a slide already
        self.pages.addWidget(self.walk)
        #: The code of the result on show, written off the GUI thread while the code is on show.
        self.code = self.while_shown(self.session.register("pipeline code", make_code, auto=False))
        self.code.on_result(self._on_code)
        self._code_outcome: Outcome | None = None
        self.walk_shortcut = QShortcut(QKeySequence(WALK_SHORTCUT), self)
        self.walk_shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
        self.walk_shortcut.activated.connect(lambda: self.set_walking(not self.walking))
        # Presenting, the walk is the slide: its keys work wherever the focus is. (Otherwise the
        # walk takes them when it has the focus, and the tables keep their arrows.)
        self._walk_keys: list[QShortcut] = []
        for key, step in _WALK_KEYS:
            shortcut = QShortcut(QKeySequence(key), self)
            shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
            shortcut.activated.connect(self.walk.forward if step > 0 else self.walk.back)
            shortcut.setEnabled(False)
            self._walk_keys.append(shortcut)
        self.restyle()
        self.retranslate()
        outcome = session.current_outcome()
        if outcome is not None:
            self.on_outcome(outcome)

    # ------------------------------------------------------------------ following the session

    def on_outcome(self, outcome: Outcome) -> None:
        # outcomeShown only fires for the document's current version, so the state matches.
        if outcome.view is None:
            self.show_error(outcome.error)
            return
        state = self._session.document.state
        self._view, self._state, self._head = outcome.view, state, state.head_view(outcome.focus)
        self._batch = min(max(self._session.selection.batch, 0), outcome.view.weights.shape[0] - 1)
        self.show_error(None)
        self._code_outcome = outcome
        self._request_code()
        self.request_draw()

    def on_selection(self, selection: Selection) -> None:
        if self._view is None:
            self._batch = max(selection.batch, 0)
            return
        batch = min(max(selection.batch, 0), self._view.weights.shape[0] - 1)
        if batch != self._batch:
            self._batch = batch
            self.request_draw()

    def on_color_range(self, name: str) -> None:
        """The stages have scales of their own."""

    def on_query_selected(self, row: int, add: bool) -> None:
        self.walk.set_hidden_query(row)  # the additive walk's hidden features follow the query picked

    def on_presentation(self, on: bool) -> None:
        self.stage_grid.set_scale(self.font_scale)
        self.walk.set_slide(on)
        self._enable_walk_keys()
        self.request_draw()  # the maps' heights follow the type size

    def on_shown(self) -> None:
        super().on_shown()
        if self.code_panel.follow_setting():  # chosen in the Edit menu meanwhile
            self._request_code()
        # A panel laid out while hidden had no height to scroll the stage's lines into.
        QTimer.singleShot(0, self.code_panel, self.code_panel.scroll_to_stage)

    def retranslate(self) -> None:
        if self._view is None:
            self.summary.setText(translate("PipelineView", "Waiting for a result…"))
        self.batch_spin.setToolTip(
            translate("PipelineView", "Which batch element the stages show (the same as in the main window)")
        )
        self.batch_caption.setText(translate("PipelineView", "&Batch element"))
        self.walk_button.setText(translate("PipelineView", "&Walk the stages"))
        self.walk_button.setToolTip(
            translate(
                "PipelineView",
                "One stage at a time, enlarged, with its equation and what changed ({shortcut}); "
                "← → or Page Up/Down step through them",
            ).format(shortcut=WALK_SHORTCUT)
        )
        self.code_button.setText(translate("PipelineView", "Show the c&ode"))
        self.code_button.setToolTip(
            translate("PipelineView", "The code that computes each stage, in the framework of Copy as code")
        )
        self.formula.setToolTip(
            translate("PipelineView", "The chapter's equations; hover a stage to see where it is in them")
        )
        self.show_error(self._error)
        if self._view is not None and self._state is not None and self._head is not None:
            self._write_notes(self._view, self._state, self._head, self._batch)
            self._draw_formula()

    def restyle(self) -> None:
        # Notes are secondary text: the window text blended a third of the way into the
        # background reads as secondary on the light and the dark theme alike.
        muted = muted_color(self)
        for card in self.cards.values():
            set_text_color(card.note, muted)
        self._draw_formula()

    # ------------------------------------------------------------------ public API

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

    @property
    def batch(self) -> int:
        return self._batch

    @property
    def highlighted_stage(self) -> str | None:
        return self._highlight

    @property
    def walking(self) -> bool:
        """Whether the stage-by-stage walk is on show instead of every stage at once."""
        return self.pages.currentWidget() is self.walk

    def set_walking(self, on: bool) -> None:
        """Show the walk (one stage at a time) or every stage at once."""
        if self.walk_button.isChecked() != on:
            self.walk_button.setChecked(on)  # re-enters through toggled
            return
        if on == self.walking:
            return
        self.pages.setCurrentWidget(self.walk if on else self.splitter)
        # One code panel, beside whichever is on show.
        if on:
            holder_layout = self.walk.code_holder.layout()
            assert holder_layout is not None
            holder_layout.addWidget(self.code_panel)
        else:
            self.side_split.addWidget(self.code_panel)
        self.walk.code_holder.setVisible(self.code_button.isChecked())
        self.code_panel.setVisible(self.code_button.isChecked())
        self._enable_walk_keys()
        if on:
            self.walk.setFocus()
            self._on_walk_stage(self.walk.stage)
        self.request_draw()

    def set_code_visible(self, on: bool) -> None:
        """Show the code beside the stages (or in the walk, beside its stage)."""
        if self.code_button.isChecked() != on:
            self.code_button.setChecked(on)
            return
        self.code_panel.setVisible(on)
        self.walk.code_holder.setVisible(on)
        if on and not self.walking:
            # The formulas keep a fair share above the code (a new panel takes all it can).
            height = max(self.side_split.height(), 2)
            self.side_split.setSizes([int(height * 0.45), int(height * 0.55)])
        if on:
            self.code_panel.follow_setting()
            self._request_code()

    def walk_forward(self) -> None:
        """The walk's next stage (a presenter's remote calls this too)."""
        self.walk.forward()

    def walk_back(self) -> None:
        self.walk.back()

    def set_highlight(self, stage: str | None) -> None:
        """Highlight ``stage`` in the formulas and frame its heatmap (None: nothing); the code
        panel shows its lines (and keeps them when the mouse leaves, to be read)."""
        if stage == self._highlight:
            return
        self._highlight = stage
        if stage is not None:
            self.code_panel.show_stage(stage)
        for name, card in self.cards.items():
            card.set_hot(name == stage)
        self._draw_formula()
        self.highlightChanged.emit(stage or "")

    def stage_values(self, stage: str) -> np.ndarray | None:
        """The matrix the heatmap of ``stage`` shows (None before the first draw)."""
        return self.cards[stage].heatmap.values

    def formula_html(self) -> str:
        return self.formula.text()

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

    # ------------------------------------------------------------------ events

    def _apply_formula_font(self) -> None:
        # 15 % above the widget font so sub- and superscripts stay legible; recomputed when the
        # application font changes (presentation mode), which an explicitly set font ignores.
        font = QFont(self.font())
        font.setPointSizeF(max(font.pointSizeF(), 6.0) * 1.15)
        self.formula.setFont(font)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)  # SessionView: the owned maps and plots, retranslate, restyle
        if event.type() == QEvent.Type.FontChange and hasattr(self, "formula"):
            self._apply_formula_font()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind in (QEvent.Type.Enter, QEvent.Type.Leave):
            if isinstance(watched, StageCard):
                stage: str | None = watched.stage
            elif watched is self.features or watched is self.parameters:
                stage = "hidden" if self._scoring() == "additive" else "raw_scores"
            else:
                return super().eventFilter(watched, event)
            if kind == QEvent.Type.Enter:
                self.set_highlight(stage)
            elif self._highlight == stage:
                self.set_highlight(None)
            return False
        return super().eventFilter(watched, event)

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

    def draw(self) -> None:
        view, state, b = self._view, self._state, self._batch
        if view is None or state is None:
            return
        n_batch = view.weights.shape[0]
        self.batch_spin.blockSignals(True)
        self.batch_spin.setRange(0, n_batch - 1)
        self.batch_spin.setValue(b)
        self.batch_spin.blockSignals(False)
        s = state.settings
        n_q, n_k = view.weights.shape[1:]
        rows, cols = axis_labels(view.query_tokens, view.key_tokens, b, n_q, n_k)
        cards = self.cards
        if n_q * n_k >= PYRAMID_MIN_CELLS:
            # Big stages: prepared on the view's thread and drawn when ready (_on_stages_prepared);
            # the maps keep their pictures until then.
            self.stages.request(
                StagesParams(
                    view,
                    b,
                    s.mask_mode,
                    {stage: cards[stage].heatmap.show_masked_values for stage in QK_STAGES},
                    {stage: cards[stage].heatmap.frame_for((n_q, n_k)) for stage in QK_STAGES},
                )
            )
        else:
            mask = view.mask[b].astype(bool)
            allowed = softmax_allowed(mask, s.mask_mode)
            for stage, (values, kwargs) in stage_maps(view, b, mask, allowed).items():
                cards[stage].heatmap.set_data(
                    values, **kwargs, hover=self._hover(view, b, stage, mask, allowed), row_labels=rows, col_labels=cols
                )
        self.stage_grid.show_card(cards["modified_scores"], view.modified_scores is not view.scores)
        out = view.output[b]
        cards["output"].heatmap.set_data(
            out,
            levels=None,
            row_labels=rows,
            col_labels=[f"d{j}" for j in range(out.shape[1])],
            hover=functools.partial(output_hover_text, out, list(rows)),
        )
        # A map of one or two query rows does not need 400 pixels of height: keep the pipeline
        # on one screen when there are few queries, let big matrices grow. Presentation mode's
        # larger type needs the height in proportion (its colour bars' labels overlapped).
        height = int(min(520, max(170, 110 + 30 * n_q)) * self.font_scale)
        for card in cards.values():
            card.heatmap.setMaximumHeight(height)
        if self._head is not None:
            self._write_notes(view, state, self._head, b)
        self._draw_formula()
        self.parameters.show_params(view.params)
        self.features.show_pair(view, self._head, b, self._scoring() == "additive")
        if self.walking and self._head is not None:
            self.walk.show_result(
                WalkInput(
                    view,
                    self._head,
                    b,
                    s.scoring,
                    s.mask_mode,
                    s.dropout if s.train else 0.0,
                    stage_notes(view, state, self._head, b),
                )
            )

    def _enable_walk_keys(self) -> None:
        on = self.walking and self.session.presenting
        for shortcut in self._walk_keys:
            shortcut.setEnabled(on)
        self.session.claim_steps(self, self._clicker_step if on else None)

    def _clicker_step(self, direction: int) -> bool:
        """A presentation clicker's step: the walk's, while it is on show; at its first or last
        step the walk hands the clicker on (the lecture's previous or next slide)."""
        if not (self.walking and self.isVisible()):
            return False
        return self.walk.forward() if direction > 0 else self.walk.back()

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt's name
        """The least height the view needs at ``width``, not its preferred one: the tab's page (a
        resizable scroll area) sizes a view with wrapped labels by this, and by the preferred
        height (its maps' size hints) the walk outgrew a 720-pixel slide and scrolled."""
        layout = self.layout()
        if layout is not None and layout.hasHeightForWidth():
            return max(layout.minimumHeightForWidth(width), self.minimumHeight())
        return super().heightForWidth(width)

    def _on_walk_stage(self, stage: str) -> None:
        self.set_highlight(stage)
        self.code_panel.show_stage(stage)
        # The step's own rows (the hidden features' query picker) come and go: the tab's page
        # sizes the view again once they have (it kept the taller step's height and scrolled).
        QTimer.singleShot(0, self, self.updateGeometry)

    def _request_code(self) -> None:
        outcome = self._code_outcome
        if outcome is None or not self.code_panel.isVisibleTo(self) and not self.code_button.isChecked():
            return
        self.code.request(CodeRequest(self.code_panel.framework, outcome, outcome.focus))

    def _on_code(self, result: CodeResult | None) -> None:
        if result is None or result.request.outcome is not self._code_outcome:
            return
        if result.request.framework != self.code_panel.framework:
            return  # another framework was picked meanwhile, and asked for
        self.code_panel.show_snippet(result.snippet, result.error)

    def _on_stages_prepared(self, result: PreparedStages | None) -> None:
        view, state = self._view, self._state
        if result is None:
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
        previous, self._prepared = self._prepared, result
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
            return f"{where}: {format_value(value)}{state_txt}"

        return text

    def _write_notes(self, view: ViewData, state: State, head: HeadView, b: int) -> None:
        notes = stage_notes(view, state, head, b)
        for stage, card in self.cards.items():
            card.note.setText(tr_text(notes.get(stage, "")))
        self.summary.setText(tr_text(summary(view, state, b)))

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


def install_pipeline_view(session: AppSession, host: Host) -> ToolPanel:
    """Add the pipeline view as a hidden tab; View > Pipeline view (Ctrl+Shift+P) shows it."""
    return host.add_dock(DOCKS[PIPELINE_DOCK], lambda: PipelineView(session))
