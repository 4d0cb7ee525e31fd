"""What every File-menu job shares: the session, the window (parent of dialogs, its title names
the file), the settings (the last folder), and the file on show.

Opening, saving, exporting, autosaving and restoring each live in their own module of
``attnviz.ui.files`` and get one ``FileContext``; ``file_actions.FileActions`` puts them together.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import shiboken6
from PySide6.QtCore import QSettings
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMessageBox, QWidget

from attnviz.io.names import display_name
from attnviz.ui.app.session import AppSession
from attnviz.ui.i18n import translate

__all__ = ["LAST_DIR_KEY", "FileContext"]

LAST_DIR_KEY = "lastDirectory"


@dataclass(eq=False)
class FileContext:
    """The session, the window and the settings the file jobs work with, and the file on show."""

    session: AppSession
    window: QWidget
    settings: QSettings
    current_path: Path | None = None
    #: The name of an opened tensor file (not a session: Save asks for a name), else None.
    tensor_name: str | None = None
    #: The session ended: no more reading, writing or asking.
    closed: bool = False

    def __post_init__(self) -> None:
        self.session.undo_stack.cleanChanged.connect(self._on_clean_changed)
        if "[*]" not in self.window.windowTitle():
            # Where Qt shows the unsaved-changes marker.
            self.window.setWindowTitle(self.window.windowTitle() + "[*]")

    def _on_clean_changed(self, clean: bool) -> None:
        # The undo stack also reports while the window is being destroyed.
        if shiboken6.isValid(self.window):
            self.window.setWindowModified(not clean)

    def shortcut_action(self, key: QKeySequence.StandardKey, slot: Callable[[], object]) -> QAction:
        """A menu action of the window with the platform's ``key`` (texts set by its job)."""
        action = QAction(self.window)
        action.setShortcut(QKeySequence(key))
        action.triggered.connect(lambda _checked=False: slot())
        return action

    def refuse(self, title: str, message: str) -> None:
        QMessageBox.warning(self.window, title, message)

    def status(self, text: str, ms: int = 8000) -> None:
        self.session.show_status(text, ms)

    def start_dir(self) -> str:
        """Where file dialogs open: the current file's folder, else the last one used."""
        if self.current_path is not None:
            return str(self.current_path.parent)
        value = self.settings.value(LAST_DIR_KEY, "")
        return str(value) if value else str(Path.home())

    def remember_dir(self, path: Path) -> None:
        self.settings.setValue(LAST_DIR_KEY, str(path.parent))

    def set_current(self, path: Path | None) -> None:
        """The inputs are now those of the session file ``path`` (saved or opened): clean."""
        self.current_path = path
        self.tensor_name = None
        self.update_title()
        self.session.undo_stack.setClean()

    def show_tensors(self, name: str) -> None:
        """The inputs come from the tensor file ``name``: not a session, so Save asks for a name
        rather than overwrite it."""
        self.current_path = None
        self.tensor_name = name
        self.update_title()

    def update_title(self) -> None:
        # "[*]" is where Qt shows the modified marker (setWindowModified).
        if self.tensor_name is not None:
            name = translate("FileActions", "{name} (tensors)").format(name=self.tensor_name)
        elif self.current_path is not None:
            name = display_name(self.current_path)
        else:
            name = translate("FileActions", "untitled")
        self.window.setWindowTitle(f"{name}[*] — attnviz")
