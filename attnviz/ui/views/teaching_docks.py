"""Dock the teaching views into the main window: the pipeline view and the side-by-side view.

Each ``install_...(window)`` creates a QDockWidget (hidden at first), adds its toggle to the
View menu with a shortcut, and wires the view to the window: results and the batch selector in,
edits out through ``window.push`` so they are undoable like any other. A hidden dock draws and
computes nothing; it catches up when shown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QDockWidget, QWidget

from attnviz.compute.attention import Outcome
from attnviz.document import Edit, ReplaceState
from attnviz.ui.i18n import translate
from attnviz.tr import QT_TRANSLATE_NOOP, message
from attnviz.ui.views.compare import CompareView
from attnviz.ui.app.docks import add_tool_dock
from attnviz.ui.views.pipeline import PipelineView

if TYPE_CHECKING:
    from attnviz.ui.app.main_window import MainWindow

__all__ = ["PIPELINE_SHORTCUT", "COMPARE_SHORTCUT", "install_pipeline_view", "install_compare_view", "install_teaching_docks"]

PIPELINE_SHORTCUT = "Ctrl+Shift+P"
COMPARE_SHORTCUT = "Ctrl+Shift+D"


def install_pipeline_view(window: "MainWindow") -> QDockWidget:
    """Add the pipeline view as a hidden dock; View > Pipeline view (Ctrl+Shift+P) shows it."""
    view = PipelineView()
    title = translate("TeachingDocks", "Pipeline: every stage")
    # Teaching views are wide (seven stages, or three maps side by side): along the bottom,
    # tabbed with each other, toggled from the View menu.
    dock = add_tool_dock(window, view, title=title, object_name="pipelineDock", action_text=title,
                         shortcut=PIPELINE_SHORTCUT, menu_name="view_menu",
                         tip=translate("TeachingDocks", "Every stage of the computation, with the chapter's formulas"))
    dock.toggleViewAction().setText(translate("TeachingDocks", "&Pipeline view"))

    def on_outcome(outcome: Outcome) -> None:
        # outcomeShown only fires for the document's current version, so the state matches.
        if outcome.view is None:
            view.show_error(outcome.error)
            return
        view.show(outcome.view, window.document.state, window.inputs.batch.value())

    window.outcomeShown.connect(on_outcome)
    window.inputs.batchChanged.connect(view.set_batch)

    def on_params(params: dict[str, np.ndarray]) -> None:
        if window.shown_version != window.document.version:
            # The tables show the parameters of an older result (say, before a change of the
            # hidden size): writing them back could not fit. Wait for the current one.
            # (The table is read-only: it still shows the value it had.)
            window.statusBar().showMessage(
                translate("TeachingDocks", "The parameters are being recomputed; edit them again in a moment"), 8000)
            return
        state = window.document.state
        # Compare with the parameters last used (seeded ones are not in state.params yet) so
        # the undo entry names the matrix that was edited.
        last = window.last_outcome
        used = last.view.params if last is not None and last.view is not None else state.params
        changed = [k for k, v in params.items() if k not in used or not np.array_equal(used[k], v)]
        new = state.copy()
        new.params = {k: np.asarray(v).copy() for k, v in params.items()}
        window.push(ReplaceState(new, message(QT_TRANSLATE_NOOP("TeachingDocks", "Edit {names}"),
                                              names=", ".join(changed or list(params)))))

    view.paramsEdited.connect(on_params)
    if window.last_outcome is not None and window.last_outcome.view is not None:
        on_outcome(window.last_outcome)
    return dock


class _CloseWatcher(QObject):
    """Calls ``callback`` once the window really closes (a close that is ignored does not count).

    A Close event may still be refused by the window's closeEvent; the Hide that follows an
    accepted close is the sign that it went through.
    """

    def __init__(self, window: QWidget, callback: object) -> None:
        super().__init__(window)
        self._callback = callback
        self._closing = False
        window.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Close:
            self._closing = True
            QTimer.singleShot(0, self._reset)  # a refused close leaves no Hide behind
        elif event.type() == QEvent.Type.Hide and self._closing and not event.spontaneous():
            self._closing = False
            self._callback()  # type: ignore[operator]
        return False

    def _reset(self) -> None:
        self._closing = False


def install_compare_view(window: "MainWindow") -> QDockWidget:
    """Add the side-by-side view as a hidden dock; View > Side by side (Ctrl+Shift+D) shows it.

    Its compute thread stops when the window closes. (MainWindow.closeEvent may also call
    ``dock.widget().shutdown()`` directly; a second shutdown is harmless.)
    """
    view = CompareView()
    dock = add_tool_dock(window, view, title=translate("TeachingDocks", "Side by side: A vs B"), object_name="compareDock",
                         action_text=translate("TeachingDocks", "&Side by side (A vs B)"), shortcut=COMPARE_SHORTCUT,
                         menu_name="view_menu",
                         tip=translate("TeachingDocks", "The same inputs under two configurations, and where their "
                                                        "weights differ"))
    document = window.document

    def on_document_changed(_edit: Edit | None) -> None:
        try:
            view.set_state(document.state, document.version)
        except RuntimeError:  # the view's C++ object is gone (window closed)
            pass

    document.subscribe(on_document_changed)
    window.inputs.batchChanged.connect(view.set_batch)
    view.editRequested.connect(window.push)
    view.presetRequested.connect(window.load_preset)
    view.set_batch(window.inputs.batch.value())
    view.set_state(document.state, document.version)
    _CloseWatcher(window, view.shutdown)
    return dock


def install_teaching_docks(window: "MainWindow") -> tuple[QDockWidget, QDockWidget]:
    """Both views, tabbed together along the bottom."""
    return install_pipeline_view(window), install_compare_view(window)
