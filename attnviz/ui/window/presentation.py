"""Presentation mode's layout: the slide the window becomes on F5 (issue 37 moved it out of
``main_window``, whose job is composition).

``PresentationLayout(window)`` enlarges the application font (times the text zoom, Ctrl+= /
Ctrl+-), hides the editing chrome, puts the output beside the weights, gives the lesson panel
room for its larger text (whether it was open before F5 or a lesson was loaded since), sets the
lesson aside for the views that need the whole width, and gives the window back as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from PySide6.QtCore import QByteArray, QObject, QSize, Qt, QTimer
from PySide6.QtGui import QAction, QFont, QFontMetricsF, QKeySequence
from PySide6.QtWidgets import QApplication, QDockWidget, QScrollArea, QSplitter, QTabWidget, QToolBar, QWidget

from attnviz.text.tr import QT_TRANSLATE_NOOP
from attnviz.ui.app.host import ToolDock, ToolPanel, ToolTab
from attnviz.ui.app.results_panel import OutputPanel
from attnviz.ui.app.session import AppSession
from attnviz.ui.fonts import hold_normal_size
from attnviz.ui.i18n import translate
from attnviz.ui.tables.inputs_panel import InputsPanel
from attnviz.ui.views.docks import COMPARE_DOCK, MASKING_LAB_DOCK, PIPELINE_DOCK
from attnviz.ui.views.lessons import LessonsController
from attnviz.ui.views.presenter import PresentationHint, PresenterBar

__all__ = [
    "LESSON_VIEWS",
    "PRESENTATION_FONT",
    "SLIDE_CAPITAL_PX",
    "TEXT_ZOOM_STEP",
    "PresentationLayout",
    "PresentedWindow",
    "slide_font",
]

_Child = TypeVar("_Child", bound=QObject)

#: The views a lesson stays beside in presentation mode (with the main view).
LESSON_VIEWS = {PIPELINE_DOCK, COMPARE_DOCK, MASKING_LAB_DOCK}

#: How much presentation mode enlarges the application font (heatmaps: PRESENTATION_SCALE): 9 pt
#: becomes 19.8 pt, whose capitals are 20 px high at 96 dpi (at 1.6 they were 14 px, half a
#: slide's usual minimum: the back row could not read them; issue 37).
PRESENTATION_FONT = 2.2
#: The least height of a capital on a slide, in pixels, before the text zoom: a font whose
#: capitals are smaller for their point size than the default's is enlarged further to reach it.
SLIDE_CAPITAL_PX = 20.0
#: The lesson panel's share of a slide's width: its two buttons side by side and an answer that
#: fits under its title at 1280x720 (at 0.32 they wrapped, and a Portuguese answer ran below).
LESSON_SHARE = 0.32
#: The most of a slide's width the lesson panel widens to for a question that would otherwise
#: run below the screen; the maps beside it keep the rest. A revealed answer longer than the
#: panel holds is shown a page at a time (``LessonView.paginate``): at slide size (capitals of
#: 20 px) a long answer widened the panel to 62% and the maps beside it were cut.
LESSON_MAX_SHARE = 0.45
#: What a map takes of its width besides its cells on a slide: the queries' axis and its name,
#: the colour bar and its labels.
MAP_FRAME_PX = 160
#: One step of Ctrl+= / Ctrl+- (presentation mode's text zoom).
TEXT_ZOOM_STEP = 1.15


class PresentedWindow(Protocol):
    """The window presentation mode lays out (the main window), as far as this module uses it:
    named here as a Protocol so that the window, which builds its layout, is not imported back."""

    session: AppSession
    controls_scroll: QScrollArea
    right_splitter: QSplitter
    bottom_splitter: QSplitter
    inputs: InputsPanel
    output: OutputPanel
    tool_tabs: QTabWidget
    lessons: LessonsController
    presenter: PresenterBar
    presenter_toolbar: QToolBar
    presentation_hint: PresentationHint
    presentation_action: QAction

    @property
    def add_action(self) -> Callable[..., QAction]: ...  # HostWindow.add_action

    def set_chrome_visible(self, visible: bool) -> None: ...

    def tools(self) -> list[ToolPanel]: ...

    def widget(self) -> QWidget: ...

    def _fit_to_screen(self) -> None: ...

    # QMainWindow's own.
    def saveGeometry(self) -> QByteArray: ...  # noqa: N802

    def restoreGeometry(self, geometry: QByteArray, /) -> bool: ...  # noqa: N802

    def saveState(self) -> QByteArray: ...  # noqa: N802

    def restoreState(self, state: QByteArray, /) -> bool: ...  # noqa: N802

    def resizeDocks(  # noqa: N802
        self, docks: list[QDockWidget], sizes: list[int], orientation: Qt.Orientation, /
    ) -> None: ...

    def width(self) -> int: ...

    def findChildren(self, type: type[_Child], /) -> list[_Child]: ...  # noqa: N802


class PresentationLayout:
    """Presentation mode's layout of ``window`` (see the module docstring)."""

    def __init__(self, window: PresentedWindow) -> None:
        self.window = window
        self._normal_font: QFont | None = None
        self._lesson_set_aside = False  # presentation mode hid the lesson for a wide view
        self._answer_followed = False  # the lesson panel is fitted again when its answer shows
        self._normal_splits: tuple[list[int], list[int], int] = ([], [], 0)
        self._normal_geometry = QByteArray()
        self._normal_size = QSize()
        self._normal_state = QByteArray()

    def add_zoom_actions(self) -> None:
        w = self.window
        # Larger or smaller text on a slide, for the room (the window holds them: the menus are
        # hidden while presenting). Ctrl+= is Ctrl++ without Shift, as browsers take it.
        self.zoom_in_action = w.add_action(
            "view",
            QT_TRANSLATE_NOOP("MainWindow", "Larger te&xt (presentation mode)"),
            lambda: self.zoom_text(1),
            shortcut="Ctrl+=",
            tip=QT_TRANSLATE_NOOP("MainWindow", "Enlarge presentation mode's text further, for the back row"),
        )
        self.zoom_in_action.setShortcuts([QKeySequence("Ctrl+="), QKeySequence("Ctrl++")])
        self.zoom_out_action = w.add_action(
            "view",
            QT_TRANSLATE_NOOP("MainWindow", "Smaller t&ext (presentation mode)"),
            lambda: self.zoom_text(-1),
            shortcut="Ctrl+-",
            tip=QT_TRANSLATE_NOOP("MainWindow", "Make presentation mode's text smaller, for more on a slide"),
        )
        self.zoom_reset_action = w.add_action(
            "view",
            QT_TRANSLATE_NOOP("MainWindow", "Text at presentation si&ze"),
            lambda: self.zoom_text(0),
            shortcut="Ctrl+0",
            tip=QT_TRANSLATE_NOOP("MainWindow", "Presentation mode's text back at its own size"),
        )

    def apply(self, on: bool) -> None:
        """Enlarge every text and hide the editing chrome (menus, toolbar, status bar, controls,
        tables): the class sees the maps. F5 or Esc leaves; a hint says so when it starts."""
        w = self.window
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        if on:
            self._normal_font = app.font()
            hold_normal_size(self._normal_font.pointSizeF())
            # Larger texts make docks wider; leaving must give back the window as it was.
            self._normal_geometry = w.saveGeometry()
            self._normal_size = w.widget().size()
            self._normal_state = w.saveState()
            self.apply_slide_font()
        elif self._normal_font is not None:
            app.setFont(self._normal_font)
            self._normal_font = None
            hold_normal_size(None)
            QTimer.singleShot(0, w.widget(), self.restore_normal_layout)
        w.controls_scroll.setVisible(not on)
        self.output_beside_weights(on)
        w.set_chrome_visible(not on)
        w.presenter_toolbar.setVisible(on)
        w.presenter.set_presenting(on)
        # The tabs are chrome too: the class sees the view that was chosen before F5.
        w.tool_tabs.tabBar().setVisible(not on)
        # So is the lesson panel's title bar (a "Lesson" in small type over its own title):
        # its line goes to the lesson's text.
        lesson = w.lessons.dock
        if isinstance(lesson, QDockWidget):
            lesson.setTitleBarWidget(QWidget(lesson) if on else None)  # type: ignore[arg-type]
        self.fit_lesson()
        self.lesson_beside_view()
        w.presentation_hint.show_hint(on)

    def give_back_font(self) -> None:
        """The application font as it was before F5, for a window closed on a slide: the
        application outlives it in a notebook or a test, and its next window starts normal."""
        app = QApplication.instance()
        if isinstance(app, QApplication) and self._normal_font is not None:
            app.setFont(self._normal_font)
            self._normal_font = None
            hold_normal_size(None)

    def apply_slide_font(self) -> None:
        """The application font at presentation size, times the zoom (Ctrl+= / Ctrl+-)."""
        w = self.window
        app = QApplication.instance()
        if not isinstance(app, QApplication) or self._normal_font is None:
            return
        app.setFont(slide_font(self._normal_font, w.session.text_zoom))

    def zoom_text(self, steps: int) -> None:
        """Presentation mode's text ``steps`` sizes larger (or smaller, negative); 0: as designed.
        Outside presentation mode it is remembered for the next F5."""
        w = self.window
        zoom = 1.0 if steps == 0 else w.session.text_zoom * TEXT_ZOOM_STEP**steps
        w.session.set_text_zoom(round(zoom, 4))
        if w.presentation_action.isChecked():
            self.apply_slide_font()
            self.fit_lesson()
        w.session.show_status(
            translate("MainWindow", "Text at {percent}% of presentation mode's size").format(
                percent=round(100 * w.session.text_zoom)
            ),
            4000,
        )

    def fit_lesson(self, _visible: bool = True) -> None:
        """In presentation mode the lesson panel is as wide as its text needs to be read whole
        without scrolling (its question, or its revealed answer, which is longer: from
        ``LESSON_SHARE`` of the slide up to ``LESSON_MAX_SHARE``), whether it was open before F5
        or a lesson was loaded since (a dock opened while presenting opens at its minimum width,
        and its title and buttons were cut at the right edge)."""
        w = self.window
        lesson = w.lessons.dock
        if not w.presentation_action.isChecked() or not isinstance(lesson, ToolDock):
            return
        if lesson.isVisible() and not lesson.isFloating():
            if lesson.is_built and not self._answer_followed:
                # Another lesson, or its answer revealed (or hidden), changes what the panel must
                # hold: fitted again once the panel has laid its new texts out.
                self._answer_followed = True
                w.lessons.view.contentChanged.connect(lambda: QTimer.singleShot(0, w.widget(), self.fit_lesson))
            w.resizeDocks([lesson], [self._lesson_width(lesson)], Qt.Orientation.Horizontal)
            # The weights and the output share what the lesson leaves (the output's maps whole).
            QTimer.singleShot(0, w.widget(), self.split_output)

    def _lesson_width(self, lesson: ToolDock) -> int:
        """The narrowest width (in steps of 16 px) from ``LESSON_SHARE`` of the window at which
        the lesson's texts fit its panel's height; ``LESSON_MAX_SHARE`` if none does."""
        w = self.window
        low, high = int(LESSON_SHARE * w.width()), int(LESSON_MAX_SHARE * w.width())
        if not lesson.is_built:
            return max(lesson.width(), low)
        settings = w.lessons.view.settings
        if settings is not None:
            # Its lists measured in the font now on show: the application's font reaches the
            # widgets in no set order, and measured on their font change a list could still
            # have the old one (its least width short, the list cut at the panel's edge).
            settings.fit_combos()
        scroll = w.lessons.view.answer_scroll
        body = scroll.widget()
        room = scroll.viewport().height()
        if body is None or room <= 0:
            return max(lesson.width(), low)
        # What the dock's frame and a scroll bar take of its width (kept as if the bar stayed).
        frame = max(lesson.width() - scroll.viewport().width(), scroll.verticalScrollBar().sizeHint().width())
        # Never narrower than its widest field or button (a setting's list, "Laboratório de
        # máscaras"): the panel does not scroll sideways, so they would be cut at its edge.
        low = min(high, max(low, body.minimumSizeHint().width() + frame))
        if w.lessons.view.answer_pages:
            # The answer is paged to the panel's width: the width the question was given stays
            # (fitting it again would page it again, and the maps beside it would jump).
            return max(lesson.width(), low)
        for width in range(low, high, 16):
            if body.heightForWidth(width - frame) <= room:
                return width
        return high

    def lesson_beside_view(self, _index: int = -1) -> None:
        """In presentation mode the lesson stands beside the views lessons talk about (the main
        view, the pipeline, side by side, the masking lab); a model's views and the scaling lab
        get the slide's whole width, and the lesson comes back with the next teaching view."""
        w = self.window
        lesson = w.lessons.dock
        if not isinstance(lesson, ToolDock) or lesson.isFloating():
            return
        presenting = w.presentation_action.isChecked()
        current = next((tool for tool in w.tools() if isinstance(tool, ToolTab) and tool.is_current_tab()), None)
        teaching = current is None or current.objectName() in LESSON_VIEWS
        if presenting and not teaching and lesson.isVisible():
            self._lesson_set_aside = True
            lesson.hide()
        elif self._lesson_set_aside and (teaching or not presenting):
            self._lesson_set_aside = False
            lesson.show()

    def output_beside_weights(self, on: bool) -> None:
        """In presentation mode the input tables go and the output stands beside the weights (the
        class sees what the weights make); leaving puts the tables back under them."""
        w = self.window
        right = w.right_splitter
        if on and right.orientation() == Qt.Orientation.Vertical:
            self._normal_splits = (right.sizes(), w.bottom_splitter.sizes(), w.output.currentIndex())
            w.inputs.setVisible(False)
            right.setOrientation(Qt.Orientation.Horizontal)
            width = max(right.width(), 600)
            right.setSizes([int(width * 0.64), width - int(width * 0.64)])
            self.split_output()
            # The output as a map: its numbers on the cells, every column in view.
            w.output.setCurrentWidget(w.output.map_page)
            # Its tabs are chrome too (the map is the slide's; beside a lesson the tab bar did not
            # fit, with scroll arrows, in slide type).
            w.output.tabBar().setVisible(False)
        elif not on and right.orientation() == Qt.Orientation.Horizontal:
            w.inputs.setVisible(True)
            w.output.tabBar().setVisible(True)
            right.setOrientation(Qt.Orientation.Vertical)
            splits, bottom, tab = self._normal_splits
            right.setSizes(splits)
            w.bottom_splitter.setSizes(bottom)
            w.output.setCurrentIndex(tab)

    def split_output(self) -> None:
        """On a slide the weights and the output beside them share the width by their columns,
        each cell about as wide on both maps: the output's numbers are as wide as the weights'
        ("5.98" beside "0.51"), and at a fixed share a narrow output's cells hid every number."""
        w = self.window
        right = w.right_splitter
        view = w.session.current_view()
        if not w.presentation_action.isChecked() or right.orientation() != Qt.Orientation.Horizontal or view is None:
            return
        width = sum(right.sizes())
        keys, dims = view.weights.shape[-1], view.output.shape[-1]
        cell = max(1.0, (width - 2 * MAP_FRAME_PX) / (keys + dims))
        output = int(min(0.5 * width, max(0.25 * width, MAP_FRAME_PX + dims * cell, w.output.least_map_width())))
        if abs(right.sizes()[1] - output) > 4:  # no relayout for a few pixels
            right.setSizes([width - output, output])

    def restore_normal_layout(self) -> None:
        w = self.window
        # The docks the user opened or closed while presenting stay so: the state saved on
        # entering gives back sizes and places, not a lesson panel closed since.
        open_docks = {dock: dock.isVisible() for dock in w.findChildren(ToolDock)}
        w.restoreState(self._normal_state)
        # The window's least size is still the slide type's until its layout runs again: on a
        # 1024x600 screen it had grown the window 4 px, and the geometry given back kept them.
        window = w.widget()
        layout = window.layout()
        if layout is not None:
            layout.activate()
        w.restoreGeometry(self._normal_geometry)
        if window.size() != self._normal_size:
            window.resize(self._normal_size)
        for dock, visible in open_docks.items():
            dock.setVisible(visible)
        w.presenter_toolbar.setVisible(False)
        w._fit_to_screen()


def slide_font(normal: QFont, zoom: float = 1.0) -> QFont:
    """``normal`` at slide size: ``PRESENTATION_FONT`` times larger and at least large enough for
    capitals of ``SLIDE_CAPITAL_PX`` (fonts differ in how tall their capitals are for a point
    size), then times the text zoom (Ctrl+= / Ctrl+-)."""
    big = QFont(normal)
    size = max(normal.pointSizeF(), 9.0) * PRESENTATION_FONT
    big.setPointSizeF(size)
    # A quarter point at a time, 20 points at most: a font with unusually small capitals is
    # enlarged to the minimum, never without bound.
    for _ in range(80):
        if QFontMetricsF(big).capHeight() >= SLIDE_CAPITAL_PX - 0.05:
            break
        size += 0.25
        big.setPointSizeF(size)
    big.setPointSizeF(size * zoom)
    return big
