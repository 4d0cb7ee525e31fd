"""The window's own menu entries: File › Quit, Edit's undo, redo, copy and paste, View's
presentation mode (with its text zoom), theme and language, the Examples and Help › About.

The features add theirs through the ``Host`` (``ui/views/docks.py`` and each view's ``install``);
these are the window's. Texts are marked in the "MainWindow" context, where they always were, so
the translations carry over. The window holds every action with a shortcut: a hidden menu bar's
shortcuts do not fire, and presentation mode hides it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QApplication, QMenu, QMessageBox

from attnviz import __version__
from attnviz.teaching.presets import PRESETS
from attnviz.text.tr import QT_TRANSLATE_NOOP
from attnviz.ui import theme
from attnviz.ui.app.host import HostWindow
from attnviz.ui.i18n import (
    LANGUAGES,
    current_language,
    install_language,
    resolve_language,
    save_language,
    saved_language,
    tr_text,
    translate,
)
from attnviz.ui.window.presentation import PresentationLayout

__all__ = ["LANGUAGE_SYSTEM", "THEME_CHOICES", "WindowMenus"]

THEME_CHOICES = (
    (
        "system",
        QT_TRANSLATE_NOOP("MainWindow", "Follow the &system"),
        QT_TRANSLATE_NOOP("MainWindow", "Light or dark as the desktop is"),
    ),
    (
        "light",
        QT_TRANSLATE_NOOP("MainWindow", "&Light"),
        QT_TRANSLATE_NOOP("MainWindow", "Light theme (good on a projector in a bright room)"),
    ),
    ("dark", QT_TRANSLATE_NOOP("MainWindow", "&Dark"), QT_TRANSLATE_NOOP("MainWindow", "Dark theme")),
)
LANGUAGE_SYSTEM = (
    QT_TRANSLATE_NOOP("MainWindow", "Follow the &system"),
    QT_TRANSLATE_NOOP(
        "MainWindow", "The language of the desktop (Portuguese for any Portuguese locale, otherwise English)"
    ),
)


class WindowMenus(QObject):
    """The window's own actions, built into ``window``'s menus in the order they show.

    ``table_command("copy" | "paste")`` acts on a table (the edit controller's); presentation
    mode's zoom actions come from ``presentation``, right after its F5 action. A child of the
    window: its slots go with it (a session given to the window may outlive it).
    """

    def __init__(
        self, window: HostWindow, presentation: PresentationLayout, table_command: Callable[[str], object]
    ) -> None:
        super().__init__(window)
        self.window = window
        # (action, text, tip) of the checkable actions made here rather than by add_action.
        self._texts: list[tuple[QAction, str, str]] = []
        self.quit_action = window.add_action(
            "file",
            QT_TRANSLATE_NOOP("MainWindow", "&Quit"),
            window.close,
            shortcut=QKeySequence(QKeySequence.StandardKey.Quit),
            tip=QT_TRANSLATE_NOOP("MainWindow", "Close attnviz"),
        )
        self._build_edit_menu(table_command)
        self._build_view_menu(presentation)
        for preset in PRESETS.values():
            action = window.add_action(
                "presets",
                preset.title,
                functools.partial(window.session.load_preset, preset.name),
                tip=preset.description,
            )
            action.setStatusTip(tr_text(preset.description))
        window.add_action("help", QT_TRANSLATE_NOOP("MainWindow", "&About attnviz"), self.about)

    def _build_edit_menu(self, table_command: Callable[[str], object]) -> None:
        window = self.window
        undo_stack = window.session.undo_stack
        edit_menu = window.menu("edit")
        # Our own actions rather than QUndoStack.createUndoAction: that one fixes its "Undo"
        # prefix when it is made, and the prefix must follow the language.
        self.undo_action = QAction(window)
        self.undo_action.setShortcut(QKeySequence.StandardKey.Undo)
        self.undo_action.triggered.connect(undo_stack.undo)
        self.redo_action = QAction(window)
        self.redo_action.setShortcut(QKeySequence.StandardKey.Redo)
        self.redo_action.triggered.connect(undo_stack.redo)
        undo_stack.canUndoChanged.connect(self.undo_action.setEnabled)
        undo_stack.canRedoChanged.connect(self.redo_action.setEnabled)
        # The texts come with the signals: the stack emits them while it is being deleted too.
        undo_stack.undoTextChanged.connect(self._show_undo_text)
        undo_stack.redoTextChanged.connect(self._show_redo_text)
        self.undo_action.setEnabled(undo_stack.canUndo())
        self.redo_action.setEnabled(undo_stack.canRedo())
        edit_menu.addAction(self.undo_action)
        edit_menu.addAction(self.redo_action)
        window.addAction(self.undo_action)
        window.addAction(self.redo_action)
        edit_menu.addSeparator()
        # Copy and Paste act on the table that has the focus (the tables also take the keys
        # themselves); from the menu they reach the table the user last worked in.
        self.copy_action, self.paste_action = (
            window.add_action("edit", text, functools.partial(table_command, command), shortcut=key, tip=tip)
            for command, text, key, tip in (
                (
                    "copy",
                    QT_TRANSLATE_NOOP("MainWindow", "&Copy"),
                    QKeySequence(QKeySequence.StandardKey.Copy),
                    QT_TRANSLATE_NOOP(
                        "MainWindow", "Copy the selected cells of the current table as tab-separated text"
                    ),
                ),
                (
                    "paste",
                    QT_TRANSLATE_NOOP("MainWindow", "&Paste"),
                    QKeySequence(QKeySequence.StandardKey.Paste),
                    QT_TRANSLATE_NOOP("MainWindow", "Paste a block of numbers into the current table as one edit"),
                ),
            )
        )

    def _build_view_menu(self, presentation: PresentationLayout) -> None:
        window = self.window
        view_menu = window.menu("view")
        self.presentation_action = window.add_action(
            "view",
            QT_TRANSLATE_NOOP("MainWindow", "&Presentation mode"),
            lambda: None,
            shortcut="F5",
            tip=QT_TRANSLATE_NOOP(
                "MainWindow",
                "For a lecture hall: large fonts and cells, editing chrome hidden, still live (F5 or Esc to leave)",
            ),
        )
        self.presentation_action.setCheckable(True)
        self.presentation_action.toggled.connect(self.set_presentation_mode)
        # Shortcuts of a hidden menu bar do not fire: the window holds the actions that must work
        # in presentation mode too (F5 to leave it, undo and redo).
        window.addAction(self.presentation_action)
        presentation.add_zoom_actions()
        view_menu.addSeparator()
        self.theme_menu = view_menu.addMenu("")
        self.theme_actions = self._choices(
            self.theme_menu, [(mode, label, tip, True) for mode, label, tip in THEME_CHOICES], self.set_theme
        )
        self.theme_actions[theme.current_mode()].setChecked(True)
        self.language_menu = view_menu.addMenu("")
        choices = [("system", *LANGUAGE_SYSTEM, True)] + [(code, name, name, False) for code, name in LANGUAGES.items()]
        self.language_actions = self._choices(self.language_menu, choices, self.set_language)
        self.language_actions[saved_language()].setChecked(True)
        view_menu.addSeparator()

    def _choices(
        self, menu: QMenu, choices: list[tuple[str, str, str, bool]], choose: Callable[[str], None]
    ) -> dict[str, QAction]:
        """One checkable action per choice, exclusive; a marked text follows the language (a
        language's own name is written in that language and stays)."""
        menu.setToolTipsVisible(True)
        group = QActionGroup(self.window)
        actions: dict[str, QAction] = {}
        for choice, caption, hint, marked in choices:
            action = QAction(caption, self.window, checkable=True)
            action.setToolTip(hint)
            if marked:
                self._texts.append((action, caption, hint))
            action.triggered.connect(lambda _checked=False, c=choice: choose(c))
            group.addAction(action)
            menu.addAction(action)
            actions[choice] = action
        return actions

    def retranslate(self) -> None:
        self.theme_menu.setTitle(translate("MainWindow", "&Theme"))
        self.language_menu.setTitle(translate("MainWindow", "&Language"))
        for action, text, tip in self._texts:
            action.setText(tr_text(text))
            action.setToolTip(tr_text(tip))
            action.setStatusTip(tr_text(tip))
        stack = self.window.session.undo_stack
        self._show_undo_text(stack.undoText())
        self._show_redo_text(stack.redoText())

    def _show_undo_text(self, text: str) -> None:
        prefix = translate("MainWindow", "&Undo")
        self.undo_action.setText(f"{prefix} {text}" if text else prefix)

    def _show_redo_text(self, text: str) -> None:
        prefix = translate("MainWindow", "&Redo")
        self.redo_action.setText(f"{prefix} {text}" if text else prefix)

    def about(self) -> None:
        QMessageBox.about(
            self.window,
            translate("MainWindow", "About attnviz"),
            f"<b>attnviz {__version__}</b>"
            + translate(
                "MainWindow",
                "<p>See and debug attention: edit queries, keys, values and masks and watch "
                "every stage of the computation change.</p><p>Built on the chapter “Attention "
                "Scoring Functions” of <i>Dive into Deep Learning</i>.</p>",
            ),
        )

    # ------------------------------------------------------------------ what the actions do

    def set_presentation_mode(self, on: bool) -> None:
        if self.presentation_action.isChecked() != on:
            self.presentation_action.setChecked(on)  # re-enters through toggled
            return
        self.window.session.set_presenting(on)

    def set_theme(self, mode: str) -> None:
        theme.apply_theme(mode)
        theme.save_mode(theme.current_mode())
        self.theme_actions[theme.current_mode()].setChecked(True)

    def set_language(self, choice: str) -> None:
        """Switch to ``choice`` ("system", or a code of LANGUAGES) and remember it. Every widget
        retranslates itself (Qt's LanguageChange): nothing is rebuilt, nothing is lost."""
        save_language(choice)
        if choice in self.language_actions:
            self.language_actions[choice].setChecked(True)
        code, previous = resolve_language(choice), current_language()
        if code == previous:
            return
        app = QApplication.instance()
        if not install_language(app, code):
            install_language(app, previous)  # the window keeps the language it is in
            self.window.session.show_status(
                translate("MainWindow", "The translation for {language} could not be loaded").format(
                    language=LANGUAGES.get(code, code)
                ),
                10000,
            )
