"""Lessons in the Presets menu: pitfalls and the chapter's exercises, each with its question.

``install_lessons(session, host)`` adds two submenus, "Pitfalls" and "Exercises", to the host's
Presets menu (tooltips: the lesson's question). Choosing a lesson loads its preset as ONE
undoable edit and shows the "Lesson" dock: the question, a "Show the answer" button that reveals
the explanation, and for pitfalls a button that opens the masking lab (where the disagreement
the answer describes is outlined).
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QColor, QFontMetricsF, QResizeEvent
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QFrame,
    QLabel,
    QMenu,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from attnviz.state.document import Edit, ReplaceState, SetSettings
from attnviz.teaching.lessons import LESSONS, Lesson
from attnviz.text.tr import QT_TRANSLATE_NOOP, message
from attnviz.ui.app.controls import SettingsPanel
from attnviz.ui.app.host import Host, ToolPanel
from attnviz.ui.app.session import AppSession
from attnviz.ui.app.view_base import SessionView
from attnviz.ui.flow_layout import flow_widget
from attnviz.ui.i18n import tr_text, translate
from attnviz.ui.theme import muted_color, tinted_panel
from attnviz.ui.views.docks import COMPARE_DOCK, DOCKS, LESSON_DOCK, MASKING_LAB_DOCK

__all__ = ["LESSON_DOCK", "LessonView", "LessonsController", "install_lessons", "menu_text"]


_JOINS = re.compile(r"(?<=\w)([._])(?=\w)")
#: Where an answer may be cut into slide pages: after a sentence's full stop, question or
#: exclamation mark (or colon), before the next word.
_SENTENCE_END = re.compile(r"(?<=[.!?:;])\s+(?=\S)")


def _breakable(text: str) -> str:
    """``text`` as HTML where long identifiers (scaled_dot_product_attention, torch.nn.functional)
    may break after their dots and underscores: unbroken, one such word would set the panel's
    minimum width, and a narrow panel would cut every line at its right edge."""
    return _JOINS.sub(lambda m: m.group(1) + "&#8203;", html.escape(text))


def sentences(text: str) -> list[str]:
    """``text`` cut after each sentence (the pieces a slide's answer pages are made of)."""
    return [piece for piece in _SENTENCE_END.split(text.strip()) if piece]


def _pack(pieces: list[str], fits: Callable[[list[str]], bool]) -> list[str]:
    """``pieces`` (sentences) joined into pages, as many to a page as ``fits`` a page's words;
    a sentence too long for a page alone is cut between words (at the back row's size a
    sentence can be taller than the panel)."""
    pages: list[str] = []
    page: list[str] = []
    for piece in pieces:
        if fits([*page, piece]):
            page.append(piece)
            continue
        if page:
            pages.append(" ".join(page))
            page = []
        if fits([piece]):
            page = [piece]
            continue
        for word in piece.split():
            if page and not fits([*page, word]):
                pages.append(" ".join(page))
                page = []
            page.append(word)
    if page:
        pages.append(" ".join(page))
    return pages


def menu_text(lesson: Lesson) -> str:
    """The lesson's title without its "Pitfall: " / "Exercise n: " prefix (the submenu says it),
    in the current language."""
    title = tr_text(lesson.title)
    head, sep, tail = title.partition(": ")
    if sep and lesson.title.lower().startswith(("pitfall", "exercise")):
        return tail[:1].upper() + tail[1:]
    return title


class LessonSettings(SettingsPanel):
    """The settings a lesson's question asks to switch (``Lesson.asks``), on the slide beside it:
    presentation mode hides the settings panel."""

    def __init__(self, parent: QWidget | None = None, *, only: tuple[str, ...] = ()) -> None:
        super().__init__(parent, only=only)
        for box in self.combos.values():
            # As wide as the panel gives, not as its longest choice: a Portuguese mode's name
            # widened the lesson panel on a slide, and the views beside it lost the room.
            box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            box.setMinimumContentsLength(8)
            box.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        form = self.layout()
        if isinstance(form, QFormLayout):
            form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
            # The caption beside its list where both fit, else above it: on a slide each line
            # of the lesson panel counts (a Portuguese question ran below the screen).
            form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)

    def fit_combos(self) -> None:
        """Each list at least as wide as the choice it shows, in the font on show: the panel
        (fitted to its content on a slide) must not cut "Livro (preenchimento -1e6)"."""
        for box in getattr(self, "combos", {}).values():  # (a font change while being built)
            text = box.currentText()
            box.setMinimumWidth(int(QFontMetricsF(box.font()).horizontalAdvance(text)) + 36 if text else 0)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self.fit_combos()

    def retranslate(self) -> None:
        super().retranslate()
        self.fit_combos()
        self.setTitle(translate("Lessons", "Try it"))
        self.setToolTip(translate("Lessons", "The settings the question asks about (the same as the settings panel's)"))


class LessonView(SessionView):
    """The current lesson: its title, question, the answer behind a button, and for pitfalls a
    button to open the masking lab (``openMaskingLab``). Its texts follow the application font
    (presentation mode enlarges it)."""

    openMaskingLab = Signal()
    #: What the panel holds changed (another lesson, the answer shown or hidden): a slide fits
    #: the panel to it again.
    contentChanged = Signal()

    def __init__(self, session: AppSession, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self.lesson: Lesson | None = None
        self.title = QLabel()
        self.title.setWordWrap(True)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.question = QLabel()
        self.question.setWordWrap(True)
        self.question.setTextFormat(Qt.TextFormat.RichText)
        self.question.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.answer_button = QPushButton()
        self.answer_button.setCheckable(True)
        self.answer_button.toggled.connect(self._on_answer_toggled)
        self.lab_button = QPushButton()
        self.lab_button.clicked.connect(self.openMaskingLab)
        self.explanation = QLabel()
        self.explanation.setWordWrap(True)
        self.explanation.setTextFormat(Qt.TextFormat.RichText)
        self.explanation.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.explanation.setFrameShape(QFrame.Shape.StyledPanel)
        # A tinted panel through the palette, not a style sheet: a style sheet would fix its
        # font (presentation mode could not enlarge it) and its colours (the dark theme neither).
        self.explanation.setAutoFillBackground(True)
        self.explanation.setContentsMargins(6, 6, 6, 6)
        self.explanation.setVisible(False)

        body = QWidget()
        inner = QVBoxLayout(body)
        inner.addWidget(self.title)
        inner.addWidget(self.question)
        #: The settings the lesson asks about, on a slide (None: it asks about none).
        self.settings: LessonSettings | None = None
        self._settings_row = QVBoxLayout()
        self._settings_row.setContentsMargins(0, 0, 0, 0)
        inner.addLayout(self._settings_row)
        # The buttons wrap under each other in a narrow panel (or in presentation fonts).
        inner.addWidget(flow_widget(self.answer_button, self.lab_button))
        inner.addWidget(self.explanation)
        inner.addStretch(1)
        scroll = self.answer_scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        # Text wraps to the width: never a sideways scroll that hides the ends of lines.
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(body)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(scroll)
        # Narrower than this, a question of four lines becomes fifteen.
        self.setMinimumWidth(220)
        self._lab_available = True
        #: On a slide a long answer is shown a page at a time, each page what the panel holds
        #: (Page Down shows the next; never a scroll bar): the text of each page.
        self.answer_pages: list[str] = []
        self.answer_page = 0
        self._paging = False
        self.restyle()
        self.set_lesson(None)

    def restyle(self) -> None:
        tinted_panel(self.explanation, QColor(60, 150, 60))
        self._muted = muted_color(self)
        if self.lesson is not None:
            self._show_texts()

    def retranslate(self) -> None:
        self.answer_button.setToolTip(translate("Lessons", "Reveal (or hide again) the explanation"))
        self.lab_button.setText(translate("Lessons", "Open the masking lab"))
        self.lab_button.setToolTip(
            translate("Lessons", "See this input under every masking convention, with the differences outlined")
        )
        shown = self.answer_button.isChecked()
        self._show_texts()
        self._on_answer_toggled(shown)

    def set_lesson(self, lesson: Lesson | None, *, lab_available: bool = True) -> None:
        """Show ``lesson`` with its answer hidden (None: an invitation to pick one)."""
        self.lesson = lesson
        self._lab_available = lab_available
        self.answer_button.setChecked(False)
        self._build_settings()
        self.retranslate()
        self.contentChanged.emit()

    def _build_settings(self) -> None:
        if self.settings is not None:
            self._settings_row.removeWidget(self.settings)
            self.settings.deleteLater()
            self.settings = None
        asks = self.lesson.asks if self.lesson is not None else ()
        if asks:
            self.settings = LessonSettings(only=asks)
            self.settings.settingsChanged.connect(lambda changes: self.session.push(SetSettings(changes)))
            self._settings_row.addWidget(self.settings)
            self._show_settings()

    def _show_settings(self) -> None:
        if self.settings is not None:
            self.settings.show_state(self.session.document.state, self.session.head_view())
            self.settings.fit_combos()
            self.settings.setVisible(self.session.presenting)

    def on_document(self, edit: Edit | None) -> None:
        self._show_settings()

    def _show_texts(self) -> None:
        lesson = self.lesson
        if lesson is None:
            self.title.setText("<b>" + translate("Lessons", "No lesson chosen") + "</b>")
            self.question.setText(translate("Lessons", "Pick one under Presets › Pitfalls or Presets › Exercises."))
            self.explanation.setText("")
            self.answer_button.setVisible(False)
            self.lab_button.setVisible(False)
            return
        kind = translate("Lessons", "Pitfall") if lesson.kind == "pitfall" else translate("Lessons", "Exercise")
        # On a slide (capitals of 20 px) the panel holds the question and its settings without
        # scrolling: the kind line goes, the title is bold at slide size rather than larger
        # still, and the inputs' description goes (the question states them; it is the caption
        # over the maps outside presentation mode).
        slide = self.session.presenting
        kind_line = "" if slide else f"<span style='color:{self._muted}'>{kind}</span><br>"
        size = "" if slide else " style='font-size:large'"
        self.title.setText(f"{kind_line}<b{size}>{html.escape(menu_text(lesson))}</b>")
        description = (
            ""
            if slide
            else f"<p style='color:{self._muted}'><i>{_breakable(tr_text(lesson.preset.description))}</i></p>"
        )
        self.question.setText(f"<p>{_breakable(tr_text(lesson.question))}</p>{description}")
        self._show_answer_text()
        self.answer_button.setVisible(True)
        self.lab_button.setVisible(self._lab_shown())

    def _answer_html(self, text: str, page: int = 0, pages: int = 1) -> str:
        if pages > 1:
            head = translate("Lessons", "Answer ({page}/{pages}).").format(page=page + 1, pages=pages)
        else:
            head = translate("Lessons", "Answer.")
        more = f" <span style='color:{self._muted}'>…</span>" if page < pages - 1 else ""
        return f"<b>{head}</b> {_breakable(text)}{more}"

    def _show_answer_text(self) -> None:
        lesson = self.lesson
        if lesson is None:
            return
        pages = self.answer_pages if self._slide_answer() else []
        if len(pages) > 1:
            page = min(self.answer_page, len(pages) - 1)
            self.explanation.setText(self._answer_html(pages[page], page, len(pages)))
        else:
            self.explanation.setText(self._answer_html(tr_text(lesson.explanation)))

    def _slide_answer(self) -> bool:
        return self.lesson is not None and self.answer_button.isChecked() and self.session.presenting

    def paginate(self) -> None:
        """On a slide, the revealed answer cut into pages the panel holds at its width and
        height, whole sentences each where a sentence fits a page, else as many words as fit
        (one page when it all fits; elsewhere the panel scrolls)."""
        if self._paging:
            return
        lesson = self.lesson
        if not self._slide_answer() or lesson is None:
            self.answer_pages, self.answer_page = [], 0
            return
        body, room = self.answer_scroll.widget(), self.answer_scroll.viewport().height()
        width = self.answer_scroll.viewport().width()
        if body is None or room <= 0 or width <= 0:
            return
        self._paging = True
        try:
            text = tr_text(lesson.explanation)

            def fits(words: list[str]) -> bool:
                # Measured as it would show: with its "(1/2)" head and its ellipsis.
                self.explanation.setText(self._answer_html(" ".join(words), 0, 2))
                return body.heightForWidth(width) <= room

            self.explanation.setText(self._answer_html(text))
            if body.heightForWidth(width) <= room:
                pages = [text]
            else:
                pages = _pack(sentences(text), fits)
            changed = pages != self.answer_pages
            self.answer_pages = pages
            self.answer_page = 0 if changed else min(self.answer_page, len(pages) - 1)
        finally:
            self._paging = False
        self._show_answer_text()

    def step_answer(self, direction: int) -> bool:
        """The clicker's step inside a paged answer on a slide: the next (1) or previous (-1)
        page, True when there was one."""
        if not self._slide_answer() or len(self.answer_pages) < 2:
            return False
        page = self.answer_page + direction
        if not 0 <= page < len(self.answer_pages):
            return False
        self.answer_page = page
        self._show_answer_text()
        self.contentChanged.emit()
        return True

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if self._slide_answer():
            self.paginate()

    def _lab_shown(self) -> bool:
        return self.lesson is not None and self.lesson.kind == "pitfall" and self._lab_available

    @property
    def answer_shown(self) -> bool:
        return self.explanation.isVisibleTo(self)

    def on_presentation(self, on: bool) -> None:
        self._on_answer_toggled(self.answer_button.isChecked())
        self._show_settings()

    def _on_answer_toggled(self, on: bool) -> None:
        self.explanation.setVisible(on)
        # On a slide the answer takes the question's place (the class has read it, and the
        # answer below it ran off the bottom of a 720-pixel screen); elsewhere both stay.
        slide = on and self.session.presenting
        if self.lesson is not None:
            self._show_texts()
        self.question.setVisible(not slide)
        # The masking lab is a slide of its own in a lecture: its button makes room for the answer.
        self.lab_button.setVisible(not slide and self.lesson is not None and self._lab_shown())
        self.answer_button.setText(
            translate("Lessons", "Hide the answer") if on else translate("Lessons", "Show the answer")
        )
        self.answer_page = 0
        self.answer_pages = []
        if slide:
            # Once the panel has laid out the answer's place (the question gone).
            QTimer.singleShot(0, self, self._repaginate)
        self.contentChanged.emit()

    def _repaginate(self) -> None:
        self.paginate()
        self.contentChanged.emit()


class LessonsController(QObject):
    """What ``install_lessons`` returns: the menus' actions, the dock, and ``load(name)``."""

    def __init__(self, session: AppSession, host: Host) -> None:
        super().__init__(host.widget())
        self.session = session
        self.host = host
        self.dock = host.add_dock(DOCKS[LESSON_DOCK], self._build_view)
        menu = host.menu("presets")
        menu.addSeparator()
        self.pitfalls_menu: QMenu = menu.addMenu("")
        self.exercises_menu: QMenu = menu.addMenu("")
        self.actions: dict[str, QAction] = {}
        for lesson in LESSONS.values():
            target = self.pitfalls_menu if lesson.kind == "pitfall" else self.exercises_menu
            action = QAction(host.widget())
            action.triggered.connect(lambda _checked=False, name=lesson.name: self.load(name))
            target.addAction(action)
            self.actions[lesson.name] = action
        for sub in (self.pitfalls_menu, self.exercises_menu):
            sub.setToolTipsVisible(True)  # the question, as the tooltip of each lesson
        self.retranslate()
        session.languageChanged.connect(self.retranslate)
        # The panel follows the example on show: another preset takes the lesson away, an undo
        # back to a lesson brings it back.
        session.exampleChanged.connect(self._on_example)

    def _build_view(self) -> LessonView:
        view = LessonView(self.session)
        view.openMaskingLab.connect(self.open_masking_lab)
        return view

    @property
    def view(self) -> LessonView:
        view = self.dock.view()
        assert isinstance(view, LessonView)
        return view

    def retranslate(self) -> None:
        self.pitfalls_menu.setTitle(translate("Lessons", "Pitfalls"))
        self.exercises_menu.setTitle(translate("Lessons", "Exercises"))
        for name, action in self.actions.items():
            lesson = LESSONS[name]
            action.setText(menu_text(lesson))
            action.setToolTip(tr_text(lesson.question))
            action.setStatusTip(tr_text(lesson.preset.description))

    @property
    def lesson(self) -> Lesson | None:
        """The lesson whose inputs are on show (edited or not), if any."""
        return LESSONS.get(self.session.loaded_example() or "")

    def load(self, name: str) -> None:
        """Load lesson ``name``'s inputs as one undoable edit, show its question and open the
        views its text talks about (side by side on the comparison it asks for)."""
        lesson = LESSONS[name]
        self.session.push(
            ReplaceState(
                lesson.preset.build(),
                message(QT_TRANSLATE_NOOP("Lessons", "Lesson: {title}"), title=lesson.title, example=name),
            )
        )
        self._show(lesson)
        if lesson.side_by_side is not None and (compare := self.host.dock(COMPARE_DOCK)) is not None:
            # The view sets itself up from the lesson loaded (it follows the session's example).
            compare.show()
            compare.raise_()
        self.session.show_status(
            translate("Lessons", "Lesson loaded: {title} (Ctrl+Z goes back)").format(title=tr_text(lesson.title)), 10000
        )

    def step(self, delta: int) -> None:
        """Load the next (``delta`` 1) or previous (-1) lesson, in menu order, from the one on show
        (from the first or last when none is)."""
        names = list(LESSONS)
        current = self.lesson
        if current is None:
            index = 0 if delta > 0 else len(names) - 1
        else:
            index = (names.index(current.name) + delta) % len(names)
        self.load(names[index])

    def _show(self, lesson: Lesson) -> None:
        self.view.set_lesson(lesson, lab_available=self._masking_lab() is not None)
        self.dock.show()
        self.dock.raise_()

    def _on_example(self, name: str | None) -> None:
        lesson = LESSONS.get(name or "")
        if lesson is None:
            if self.dock.is_built:
                self.view.set_lesson(None)
            self.dock.hide()
        elif not self.dock.is_built or self.view.lesson is not lesson:
            self._show(lesson)

    def open_masking_lab(self) -> None:
        dock = self._masking_lab()
        if dock is None:
            self.session.show_status(translate("Lessons", "The masking lab is not part of this window"), 8000)
            return
        dock.show()
        dock.raise_()

    def _masking_lab(self) -> ToolPanel | None:
        return self.host.dock(MASKING_LAB_DOCK)


def install_lessons(session: AppSession, host: Host) -> LessonsController:
    """Presets › Pitfalls and Presets › Exercises, and the (hidden) Lesson dock."""
    return LessonsController(session, host)
