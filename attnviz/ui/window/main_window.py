"""The main window: controls on the left, heatmaps on top, the tables being edited below.

The composition root: it puts together the panels that show the session's document and results
and the features installed into it (file actions, lessons, labs, teaching views, copy as code),
each of which gets the ``AppSession`` and this window as a ``Host`` only. Its parts live beside
it: the edit controller (``edits.py``: a panel's edit becomes an ``Edit`` pushed through the
session, the document comes back to the panels), the menus (``menus.py``), the status bar
(``status.py``) and presentation mode's layout (``presentation.py``). The flow is one way: the
session tells every view what changed and computes off the GUI thread; its current outcome comes
back and is drawn.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QCloseEvent, QGuiApplication, QKeyEvent, QPaintEvent, QResizeEvent, QShowEvent
from PySide6.QtWidgets import QScrollArea, QSplitter, QToolBar

from attnviz.compute import Outcome
from attnviz.state.document import Edit
from attnviz.teaching.presets import DEFAULT_PRESET
from attnviz.text.tr import QT_TRANSLATE_NOOP
from attnviz.ui.app.controls import ControlsColumn
from attnviz.ui.app.host import HostWindow, ToolDock, ToolTab
from attnviz.ui.app.results_panel import OutputPanel, ResultsPanel
from attnviz.ui.app.session import AppSession
from attnviz.ui.pacing import next_frame
from attnviz.ui.tables.inputs_panel import InputsPanel
from attnviz.ui.views.presenter import PresentationHint
from attnviz.ui.window.edits import EditController
from attnviz.ui.window.menus import WindowMenus
from attnviz.ui.window.presentation import PresentationLayout
from attnviz.ui.window.status import WindowStatus

__all__ = ["MainWindow"]


class MainWindow(HostWindow):
    """The application window on an ``AppSession`` (a new one on ``preset`` by default)."""

    def __init__(self, preset: str = DEFAULT_PRESET, *, session: AppSession | None = None) -> None:
        super().__init__(session if session is not None else AppSession(preset=preset))
        self.setWindowTitle("attnviz")
        session = self.session

        self.controls = ControlsColumn()
        self.inputs = InputsPanel()
        self.output = OutputPanel()
        self.results = ResultsPanel(session, self.output)
        # Controls on the left; the heatmaps large on top, the tables being edited right below
        # them, so an edit and its effect are in view together.
        controls_scroll = self.controls_scroll = QScrollArea()
        controls_scroll.setWidgetResizable(True)
        controls_scroll.setWidget(self.controls)
        controls_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._fit_controls_width()
        bottom = self.bottom_splitter = QSplitter(Qt.Orientation.Horizontal)
        bottom.addWidget(self.inputs)
        bottom.addWidget(self.output)
        bottom.setSizes([700, 400])
        # The input tables have four tabs and more columns: they take most of a narrow width.
        bottom.setStretchFactor(0, 3)
        bottom.setStretchFactor(1, 2)
        right = self.right_splitter = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(self.results)
        right.addWidget(bottom)
        right.setSizes([520, 320])
        main = QSplitter(Qt.Orientation.Horizontal)
        main.addWidget(controls_scroll)
        main.addWidget(right)
        main.setSizes([max(300, controls_scroll.minimumWidth()), 1100])
        main.setStretchFactor(1, 1)
        self.main_view = main
        self.set_main_view(main, QT_TRANSLATE_NOOP("MainWindow", "Attention"))

        self.status = WindowStatus(self.statusBar(), session, lambda: self.edits.on_settings({"device": "cpu"}))
        # Panels -> edits -> the session -> panels (ui/window/edits.py).
        self.edits = EditController(self, session, self.controls, self.inputs, self.results, self._update_status)
        self.presentation_hint = PresentationHint(self)
        #: Presentation mode's layout, fonts and zoom (ui/window/presentation.py).
        self.presentation = PresentationLayout(self)
        # The window's own menu entries (ui/window/menus.py); the actions the tests, presentation
        # mode and the keys reach are named on the window too.
        menus = self.menus = WindowMenus(self, self.presentation, self.edits.table_command)
        self.quit_action, self.undo_action, self.redo_action = menus.quit_action, menus.undo_action, menus.redo_action
        self.copy_action, self.paste_action = menus.copy_action, menus.paste_action
        self.presentation_action, self.theme_actions = menus.presentation_action, menus.theme_actions
        self.retranslate()

        session.documentChanged.connect(self._on_document_changed)
        session.outcomeShown.connect(self._on_outcome)
        session.busyChanged.connect(lambda _busy: self._update_status())
        session.presentationChanged.connect(self._apply_presentation)
        # Rows a view asks to look at (a finding of the mask doctor) are outlined in the weights:
        # the weights come to the front.
        session.rowsOutlined.connect(lambda _rows: self.tool_tabs.setCurrentIndex(0))

        self._start_queued = False
        self._too_large = False  # the last outcome was refused as too large (see _on_outcome)
        self.edits.show_all(session.document.state)
        self._update_status()
        self.resize(1400, 860)
        self._install_features()
        self._fit_to_screen()

    def _fit_to_screen(self) -> None:
        """Keep the window (and its frame) inside the screen's free area, however it was sized:
        a layout saved on a large screen must not open off the edges of a projector."""
        screen = self.screen() or QGuiApplication.primaryScreen()
        if screen is None:
            return
        free = screen.availableGeometry()
        # Before the first show there is no frame yet: leave room for a usual title bar.
        frame_w, frame_h = (
            (16, 40)
            if not self.isVisible()
            else (self.frameGeometry().width() - self.width(), self.frameGeometry().height() - self.height())
        )
        width = max(min(self.width(), free.width() - frame_w), self.minimumSizeHint().width())
        height = max(min(self.height(), free.height() - frame_h), self.minimumSizeHint().height())
        if (width, height) != (self.width(), self.height()):
            self.resize(width, height)
        x = min(max(self.x(), free.left()), max(free.left(), free.right() - width - frame_w))
        y = min(max(self.y(), free.top()), max(free.top(), free.bottom() - height - frame_h))
        if (x, y) != (self.x(), self.y()):
            self.move(x, y)

    def _install_features(self) -> None:
        """Feature modules add their menus, docks and actions through the Host interface."""
        from attnviz.ui.files.copy_code import install_copy_code
        from attnviz.ui.files.file_actions import install_file_actions
        from attnviz.ui.views.doctor import install_doctor
        from attnviz.ui.views.heads import install_heads_view
        from attnviz.ui.views.lessons import install_lessons
        from attnviz.ui.views.long_context import install_long_context_view
        from attnviz.ui.views.masking_lab import install_masking_lab
        from attnviz.ui.views.model_overview import install_model_overview
        from attnviz.ui.views.pipeline import install_pipeline_view
        from attnviz.ui.views.presenter import install_presenter
        from attnviz.ui.views.run_compare import install_run_compare
        from attnviz.ui.views.scaling_lab import install_scaling_lab
        from attnviz.ui.views.side_by_side import install_compare_view
        from attnviz.ui.views.tokens import install_tokens_view

        session = self.session
        self.file_actions = install_file_actions(session, self)
        self.pipeline_dock = install_pipeline_view(session, self)
        self.compare_dock = install_compare_view(session, self)
        self.masking_lab_dock = install_masking_lab(session, self)
        self.scaling_lab_dock = install_scaling_lab(session, self)
        self.lessons = install_lessons(session, self)
        self.code_copier = install_copy_code(session, self)
        self.heads_dock = install_heads_view(session, self)
        self.overview_dock = install_model_overview(session, self)
        self.tokens_dock = install_tokens_view(session, self)
        self.long_dock = install_long_context_view(session, self)
        self.doctor_dock = install_doctor(session, self)
        self.run_compare_dock = install_run_compare(session, self)
        self.presenter = install_presenter(session, self, self.lessons, lambda: self.set_presentation_mode(False))
        # Over the views, in the place of the hidden menus, only while presenting.
        bar = self.presenter_toolbar = QToolBar()
        bar.setObjectName("presenterToolbar")
        bar.setMovable(False)
        bar.setFloatable(False)
        bar.toggleViewAction().setVisible(False)
        bar.addWidget(self.presenter)
        self.presenter.show()
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, bar)
        bar.hide()
        self.tool_tabs.currentChanged.connect(self.presentation.lesson_beside_view)
        # A lesson loaded while presenting opens its panel at the presentation's width.
        if isinstance(self.lessons.dock, ToolDock):
            self.lessons.dock.visibilityChanged.connect(self._fit_lesson)
        session.outcomeShown.connect(self._split_output)
        self._restore_layout()
        bar.hide()
        self._had_heads = not session.document.state.run.single_head
        self._had_comparison = session.document.state.compared_with is not None

    def _fit_controls_width(self) -> None:
        # As wide as the widest row of labels and fields needs (a translation may be wider than
        # the English), plus room for the vertical scroll bar, so no field is ever cut off.
        scroll = self.controls_scroll
        bar = scroll.verticalScrollBar().sizeHint().width()
        needed = self.controls.minimumSizeHint().width() + bar + 2 * scroll.frameWidth()
        scroll.setMinimumWidth(max(280, needed))

    def _restore_layout(self) -> None:
        """Window size, position and docks as the user left them (QSettings)."""
        from attnviz.ui.preferences import default_settings

        settings = default_settings()
        geometry = settings.value("window/geometry")
        state = settings.value("window/state")
        if geometry is not None:
            self.restoreGeometry(geometry)
        if state is not None:
            self.restoreState(state)
        # Tool views open as tabs (or in their own windows) are not part of saveState.
        detached = _string_list(settings.value("window/detached"))
        for name in _string_list(settings.value("window/tabs")):
            tool = self.dock(name)
            if isinstance(tool, ToolTab):
                tool.setFloating(name in detached)
                tool.show()
        self.tool_tabs.setCurrentIndex(0)

    def _save_layout(self) -> None:
        from attnviz.ui.preferences import default_settings

        settings = default_settings()
        settings.setValue("window/geometry", self.saveGeometry())
        settings.setValue("window/state", self.saveState())
        tabs = [tool for tool in self.findChildren(ToolTab) if tool.isVisible()]
        settings.setValue("window/tabs", [tool.objectName() for tool in tabs])
        settings.setValue("window/detached", [tool.objectName() for tool in tabs if tool.isFloating()])

    def retranslate(self) -> None:
        super().retranslate()
        self.menus.retranslate()
        self.status.retranslate()
        self.presentation_hint.retranslate()
        # After the panels have their new texts (they hear of the language change after the
        # window does): a translation may need a wider column.
        QTimer.singleShot(0, self, self._fit_controls_width)
        self._update_status()

    # ------------------------------------------------------------------ the session

    def _on_document_changed(self, edit: Edit | None) -> None:
        """The views a new document calls for open, then the panels show it."""
        state = self.session.document.state
        has_heads = not state.run.single_head
        if has_heads and not self._had_heads:
            # A model arrived (a file, a capture): its heads are what the user came to see, and
            # with several calls the layers x heads overview (the calls browser) comes first.
            self.heads_dock.show()
            self.heads_dock.raise_()
            if state.run.layers > 1:
                self.overview_dock.show()
                self.overview_dock.raise_()
        self._had_heads = has_heads
        compared = state.compared_with is not None
        if compared and not self._had_comparison:
            # A session that compares its run with a capture file opens on that comparison.
            self.run_compare_dock.show()
            self.run_compare_dock.raise_()
        self._had_comparison = compared
        self.edits.show_document(edit)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        # A window that is never painted (minimised at start, say) still computes, a moment later.
        QTimer.singleShot(1000, self, self._start_computing)

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if not self.session.computing and not self._start_queued:
            # The first computation imports PyTorch on the compute thread, and an import holds
            # Python's lock most of the time: started before the window has painted, it would
            # delay the first paint by as long (half a second). So start it once the paint pass
            # that began with this event is over.
            self._start_queued = True
            QTimer.singleShot(0, self, self._start_computing)

    def _start_computing(self) -> None:
        self.session.start()
        self._update_status()

    # ------------------------------------------------------------------ results

    def _on_outcome(self, outcome: Outcome) -> None:
        if outcome.devices:
            self.controls.settings.set_devices(list(outcome.devices))
        self.status.cpu_button.setVisible(outcome.error_field == "device")
        was_too_large, self._too_large = self._too_large, outcome.too_large
        if outcome.too_large and not was_too_large and not self.long_dock.is_current_tab():
            # Too long for every stage at once: the long-context view streams it in bins. It
            # opens a frame later, once the refusal shown here is painted: laying the
            # new tab out takes 5-10 ms more, too much for the same frame.
            next_frame(self, self._open_long_view)
        self._update_status()

    def _open_long_view(self) -> None:
        # Brought forward when the input becomes too large (open already, a restored layout's
        # tab in the background, say), not again at each edit of it: the user may look elsewhere.
        # The last outcome shown decides, not the current one: an edit within the frame (a wheel
        # over a spin box) would otherwise skip the opening, and later outcomes do not ask again.
        if self._too_large and not self.long_dock.is_current_tab():
            self.long_dock.show()
            self.long_dock.raise_()

    def _update_status(self) -> None:
        self.status.update()

    # ------------------------------------------------------------------ view options

    def set_theme(self, mode: str) -> None:
        self.menus.set_theme(mode)

    def set_presentation_mode(self, on: bool) -> None:
        self.menus.set_presentation_mode(on)

    def _apply_presentation(self, on: bool) -> None:
        self.presentation.apply(on)

    def _fit_lesson(self, visible: bool) -> None:
        # A slot of the window (not of a plain object): disconnected when the window goes.
        if visible:
            self.presentation.fit_lesson()

    def _split_output(self, _outcome: object) -> None:
        self.presentation.split_output()  # (a slot of the window, as _fit_lesson)

    def zoom_text(self, steps: int) -> None:
        """Presentation mode's text ``steps`` sizes larger (or smaller); 0: as designed."""
        self.presentation.zoom_text(steps)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape and self.presentation_action.isChecked():
            self.set_presentation_mode(False)
            return
        super().keyPressEvent(event)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.presentation_hint.place()

    def set_language(self, choice: str) -> None:
        """Switch to ``choice`` ("system", or a code of LANGUAGES) and remember it."""
        self.menus.set_language(choice)

    def closeEvent(self, event: QCloseEvent) -> None:
        self._save_layout()
        self.presentation.give_back_font()
        super().closeEvent(event)


def _string_list(value: object) -> list[str]:
    """A list of strings stored in QSettings (an INI file gives a lone string for one item)."""
    if isinstance(value, str):
        return [value] if value else []
    return [str(v) for v in value] if isinstance(value, (list, tuple)) else []
