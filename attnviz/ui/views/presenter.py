"""Presentation mode's controls: a slim presenter bar, the keyboard map and Help's first steps.

In presentation mode the menus, tabs and status bar are hidden, so everything a lecture needs
is one key or one click away without leaving it: the presenter bar (at the top, only while
presenting) steps through the lecture (Page Down / Page Up, what a presenter's clicker sends:
``lecture_clicker``), loads an example or a lesson, opens a view, shows the keyboard map (F1) and leaves (F5 or
Esc); a hint says how to leave for a few seconds. The keyboard map lists every shortcut the
window holds, read from its actions, so it cannot fall out of date.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMenu,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from attnviz.teaching.lessons import LESSONS
from attnviz.teaching.presets import PRESETS
from attnviz.text.tr import QT_TRANSLATE_NOOP
from attnviz.ui.app.host import Host, ToolTab
from attnviz.ui.app.session import AppSession
from attnviz.ui.i18n import tr_text, translate
from attnviz.ui.lifecycle import Retranslating
from attnviz.ui.views.docks import DOCKS
from attnviz.ui.views.lecture_clicker import LectureClicker
from attnviz.ui.views.lessons import LessonsController

__all__ = [
    "PresentationHint",
    "PresenterBar",
    "install_presenter",
    "keyboard_map_html",
    "show_first_steps",
    "show_keyboard_map",
]

#: The main view's entry in the presenter bar's list of views.
MAIN_VIEW = ""


class PresentationHint(QLabel):
    """A banner low on the window for a few seconds: how to leave presentation mode."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.setObjectName("presentationHint")
        self.setStyleSheet(
            "QLabel#presentationHint { background: rgba(20, 20, 20, 200); color: white; "
            "padding: 8px 16px; border-radius: 6px; }"
        )
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(4000)
        self._timer.timeout.connect(self.hide)
        self.hide()

    def retranslate(self) -> None:
        self.setText(translate("MainWindow", "Presentation mode — F5 or Esc to leave"))
        if self.isVisible():
            self.place()  # a language chosen while it shows: sized for its new text (it was cut)

    def show_hint(self, on: bool) -> None:
        if not on:
            self._timer.stop()
            self.hide()
            return
        # The style sheet fixed the font this label had when it was polished: take the
        # application's, now enlarged, again.
        self.setFont(QApplication.font())
        self.adjustSize()
        self.place()
        self.show()
        self.raise_()
        self._timer.start()

    def place(self) -> None:
        parent = self.parentWidget()
        if parent is not None:
            self.adjustSize()
            # Low on the window: the presenter bar is at the top.
            self.move((parent.width() - self.width()) // 2, parent.height() - self.height() - 24)


def _plain(text: str) -> str:
    """A menu text without its mnemonic ("&Pipeline view" -> "Pipeline view")."""
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&")


def keyboard_map_html(window: QWidget) -> str:
    """Every shortcut ``window`` holds, with what it does, as an HTML table (sorted by what it
    does), plus the keys that are not actions (Esc, the clicker's Page keys)."""
    rows: dict[str, str] = {}
    for action in window.findChildren(QAction):
        keys = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
        text = _plain(action.text())
        if keys and text:
            rows.setdefault(text, keys)
    # Shortcuts that are not actions (a view's own, such as the walk's) say what they do in
    # their "what's this"; the walk's are listed even before the pipeline is first built.
    for shortcut in window.findChildren(QShortcut):
        keys = shortcut.key().toString(QKeySequence.SequenceFormat.NativeText)
        if keys and shortcut.whatsThis():
            rows.setdefault(shortcut.whatsThis(), keys)
    rows.setdefault(translate("Presenter", "Start or end the pipeline's stage-by-stage walk"), "Ctrl+Shift+W")
    rows.setdefault(translate("Presenter", "The walk's next or previous step (presentation mode)"), "→ / ←")
    rows[translate("Presenter", "Leave presentation mode")] = "Esc"
    # The clicker's keys are the slide actions' only while presenting: listed either way, once.
    if "PgDown" not in rows.values():
        rows[translate("Presenter", "Next slide: the walk's next step, the answer, the next lesson")] = "PgDown"
    if "PgUp" not in rows.values():
        rows[translate("Presenter", "Previous slide (presentation mode)")] = "PgUp"
    body = "".join(
        f"<tr><td style='padding-right:18px'><b>{keys}</b></td><td>{text}</td></tr>"
        for text, keys in sorted(rows.items(), key=lambda item: item[0].lower())
    )
    return f"<table>{body}</table>"


def first_steps_html() -> str:
    """Help › First steps: what to edit, what each view shows."""
    return translate(
        "Presenter",
        "<h3>First steps</h3>"
        "<p><b>What is loaded.</b> The caption over the maps names the example on show and says "
        "what it shows. Presets › pick one of the chapter's examples; Presets › Pitfalls and "
        "Exercises load a lesson, with its question beside the maps.</p>"
        "<p><b>What to edit.</b> The tables under the maps hold the queries, keys, values and "
        "valid lengths: type a number, paste a block, or fill a table from its menu. The panel "
        "on the left sets the shapes and the settings (scoring function, mask mode, dtype...). "
        "Every change is computed at once, and Ctrl+Z undoes it.</p>"
        "<p><b>What each view shows</b> (View and Tools menus):</p><ul>"
        "<li><b>Attention</b>: the weights of each batch element, masked keys hatched, and the "
        "output.</li>"
        "<li><b>Pipeline</b>: every stage, from the raw scores to the output, with the "
        "chapter's formulas.</li>"
        "<li><b>Side by side</b>: the same inputs under two scorings, mask modes or dtypes, and "
        "their difference.</li>"
        "<li><b>Masking lab</b>: the input under every masking convention; <b>Scaling lab</b>: "
        "why the scores are divided by √d.</li>"
        "<li><b>Heads</b>, <b>Layers × heads</b>, <b>Tokens</b>, <b>Long context</b>, <b>Mask "
        "doctor</b>: a real model's attention, opened from a file or a capture.</li></ul>"
        "<p><b>On a projector</b>: F5 (presentation mode) enlarges everything and hides the "
        "editing chrome; the bar at the top steps through the lessons and opens the views. F1 "
        "lists every key.</p>",
    )


def _show_help(parent: QWidget, title: str, html: str) -> None:
    dialog = QDialog(parent)
    dialog.setWindowTitle(title)
    layout = QVBoxLayout(dialog)
    text = QTextBrowser()
    text.setHtml(html)
    text.setOpenExternalLinks(False)
    layout.addWidget(text)
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
    buttons.rejected.connect(dialog.reject)
    layout.addWidget(buttons)
    screen = parent.screen().availableGeometry() if parent.screen() is not None else None
    width, height = 640, 560
    if screen is not None:
        width, height = min(width, screen.width() - 40), min(height, screen.height() - 60)
    dialog.resize(width, height)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.open()


class PresenterBar(Retranslating, QWidget):
    """The presenter's row over the views: previous/next lesson, an example, a view, the keyboard
    map, leave. The window shows it only in presentation mode."""

    def __init__(self, session: AppSession, host: Host, lessons: LessonsController, leave: Callable[[], None]) -> None:
        super().__init__()
        self.setObjectName("presenterBar")
        self._session = session
        self._host = host
        self._lessons = lessons
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 2, 6, 2)
        self.previous_lesson = QToolButton()
        self.previous_lesson.setText("◀")
        self.next_lesson = QToolButton()
        self.next_lesson.setText("▶")
        #: The lecture the clicker gives (``install_presenter`` wires the buttons and keys to it).
        # Its child: the bar's texts read it, to the last language change of a closing window.
        self.clicker = LectureClicker(session, host, lessons, parent=self)
        self.previous_lesson.clicked.connect(lambda: self.clicker.step(-1))
        self.next_lesson.clicked.connect(lambda: self.clicker.step(1))
        self.clicker.slideChanged.connect(self._show_position)
        self.lesson_caption = QLabel()
        # Menus behind short buttons: a lesson's title is too long for a list on the bar (the
        # caption over the maps names the example on show, in full).
        self.presets = QToolButton()
        self.presets.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.presets.setMenu(QMenu(self.presets))
        self.presets.menu().setObjectName("presenterExamples")
        self.views = QToolButton()
        self.views.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.views.setMenu(QMenu(self.views))
        self.views.menu().setObjectName("presenterViews")
        # Checked where the window is now: a view may have been opened by its shortcut.
        self.views.menu().aboutToShow.connect(self.refresh)
        self.keys = QToolButton()
        self.keys.clicked.connect(lambda: show_keyboard_map(host.widget()))
        self.leave = QToolButton()
        self.leave.clicked.connect(leave)
        for widget in (self.previous_lesson, self.lesson_caption, self.next_lesson):
            layout.addWidget(widget)
        layout.addSpacing(12)
        layout.addWidget(self.presets)
        layout.addWidget(self.views)
        layout.addStretch(1)
        layout.addWidget(self.keys)
        layout.addWidget(self.leave)
        #: Next and previous lesson (Presets menu): Page Down and Page Up while presenting only,
        #: since elsewhere those keys scroll the tables.
        self.lesson_actions: tuple[QAction, ...] = ()
        session.exampleChanged.connect(lambda _name: self.refresh())
        self.retranslate()

    def retranslate(self) -> None:
        self._show_position()
        self.previous_lesson.setToolTip(translate("Presenter", "The previous slide of the lecture (Page Up)"))
        self.next_lesson.setToolTip(
            translate("Presenter", "The next slide of the lecture: the walk's next step, a lesson's answer (Page Down)")
        )
        self.presets.setText(translate("Presenter", "Example"))
        self.presets.setToolTip(translate("Presenter", "Load one of the chapter's examples or a lesson"))
        self.views.setText(translate("Presenter", "View"))
        self.views.setToolTip(translate("Presenter", "Show a view (their shortcuts work here too: F1 lists them)"))
        self.keys.setText(translate("Presenter", "Keys (F1)"))
        self.keys.setToolTip(translate("Presenter", "Every keyboard shortcut"))
        self.leave.setText(translate("Presenter", "Leave (F5)"))
        self.leave.setToolTip(translate("Presenter", "Leave presentation mode: the window comes back as it was"))
        self.refresh()

    def _show_position(self, _index: int = -1) -> None:
        shown, total = self.clicker.position
        self.lesson_caption.setText(translate("Presenter", "Slide {shown}/{total}").format(shown=shown, total=total))

    def set_presenting(self, on: bool) -> None:
        """Give the lesson actions their clicker keys (or take them back); the window shows the
        bar."""
        for action, key in zip(self.lesson_actions, ("PgDown", "PgUp")):
            action.setShortcut(QKeySequence(key) if on else QKeySequence())
        self.refresh()

    def refresh(self) -> None:
        """The menus in the current language, the example and the view on show checked."""
        loaded = self._session.loaded_example()
        examples = self.presets.menu()
        examples.clear()
        for name, title in [
            *((name, preset.title) for name, preset in PRESETS.items()),
            *((name, lesson.title) for name, lesson in LESSONS.items()),
        ]:
            action = examples.addAction(tr_text(title), functools.partial(self._load, name))
            action.setCheckable(True)
            action.setChecked(name == loaded)
            if name == next(iter(LESSONS)):
                examples.insertSeparator(action)
        views = self.views.menu()
        views.clear()
        current = self._current_view()
        entries = [(MAIN_VIEW, translate("Presenter", "Attention (the main view)"))] + [
            (name, _plain(tr_text(spec.action_text)))
            for name, spec in DOCKS.items()
            if self._host.dock(name) is not None and spec.placement == "tab"
        ]
        for name, text in entries:
            action = views.addAction(text, functools.partial(self._show_view, name))
            action.setCheckable(True)
            action.setChecked(name == current)
            tool = self._host.dock(name) if name else None
            if tool is not None and not (keys := tool.toggleViewAction().shortcut()).isEmpty():
                # Named, not bound: the view's own action holds the shortcut (two would be ambiguous).
                action.setText(f"{text}\t{keys.toString(QKeySequence.SequenceFormat.NativeText)}")

    def _current_view(self) -> str:
        for name in DOCKS:
            tool = self._host.dock(name)
            if isinstance(tool, ToolTab) and tool.is_current_tab():
                return name
        return MAIN_VIEW

    def _load(self, name: str) -> None:
        if name in LESSONS:
            self._lessons.load(name)
        else:
            self._session.load_preset(name)

    def _show_view(self, name: str) -> None:
        tool = self._host.dock(name) if name else None
        if tool is not None:
            tool.show()
            tool.raise_()
        else:
            self.show_main_view()

    def show_main_view(self) -> None:
        window = self._host.widget()
        tabs = getattr(window, "tool_tabs", None)
        if tabs is not None:
            tabs.setCurrentIndex(0)


def show_keyboard_map(window: QWidget) -> None:
    _show_help(window, translate("Presenter", "Keyboard map"), keyboard_map_html(window))


def show_first_steps(window: QWidget) -> None:
    _show_help(window, translate("Presenter", "First steps"), first_steps_html())


#: Help's entries (marked sources).
FIRST_STEPS = QT_TRANSLATE_NOOP("Presenter", "&First steps")
FIRST_STEPS_TIP = QT_TRANSLATE_NOOP("Presenter", "What to edit, and what each view shows")
KEYBOARD_MAP = QT_TRANSLATE_NOOP("Presenter", "&Keyboard map")
KEYBOARD_MAP_TIP = QT_TRANSLATE_NOOP("Presenter", "Every keyboard shortcut, presentation mode's included")
NEXT_LESSON = QT_TRANSLATE_NOOP("Presenter", "Next slide")
PREVIOUS_LESSON = QT_TRANSLATE_NOOP("Presenter", "Previous slide")
OPEN_PLAN = QT_TRANSLATE_NOOP("Presenter", "Open a lecture plan…")
OPEN_PLAN_TIP = QT_TRANSLATE_NOOP(
    "Presenter", "The order of the slides Page Down walks in presentation mode, from a .json file"
)
SAVE_PLAN = QT_TRANSLATE_NOOP("Presenter", "Save the lecture plan…")
SAVE_PLAN_TIP = QT_TRANSLATE_NOOP(
    "Presenter", "The order of the slides as a small .json file, to reorder by hand and share"
)


def _open_plan(window: QWidget, clicker: LectureClicker) -> None:
    path, _filter = QFileDialog.getOpenFileName(
        window, translate("Presenter", "Open a lecture plan"), "", translate("Presenter", "Lecture plans (*.json)")
    )
    if path:
        clicker.open_plan(path)


def _save_plan(window: QWidget, clicker: LectureClicker) -> None:
    path, _filter = QFileDialog.getSaveFileName(
        window,
        translate("Presenter", "Save the lecture plan"),
        "lecture.json",
        translate("Presenter", "Lecture plans (*.json)"),
    )
    if path:
        clicker.save_plan(path)


def install_presenter(
    session: AppSession, host: Host, lessons: LessonsController, leave: Callable[[], None]
) -> PresenterBar:
    """The presenter bar (hidden until presentation mode shows it), Help's first steps and
    keyboard map (F1), and Page Down / Page Up for the lecture's next and previous slide (or step,
    when a view on show claims the steps: ``AppSession.claim_steps``)."""
    bar = PresenterBar(session, host, lessons, leave)
    window = host.widget()
    add = getattr(window, "add_action", None)
    if add is not None:
        add("help", FIRST_STEPS, lambda: show_first_steps(window), tip=FIRST_STEPS_TIP)
        add("help", KEYBOARD_MAP, lambda: show_keyboard_map(window), shortcut="F1", tip=KEYBOARD_MAP_TIP)
        bar.lesson_actions = (
            # The clicker steps the slide on show first (the pipeline's walk), else the lecture.
            add("presets", NEXT_LESSON, functools.partial(bar.clicker.step, 1)),
            add("presets", PREVIOUS_LESSON, functools.partial(bar.clicker.step, -1)),
        )
        add("presets", OPEN_PLAN, lambda: _open_plan(window, bar.clicker), tip=OPEN_PLAN_TIP)
        add("presets", SAVE_PLAN, lambda: _save_plan(window, bar.clicker), tip=SAVE_PLAN_TIP)
        for action in bar.lesson_actions:
            window.addAction(action)  # its shortcut must work with the menus hidden
    return bar
