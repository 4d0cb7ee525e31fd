"""Saving the inputs and settings as a session file (File > Save, Save As)."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QFileDialog

from attnviz.io.errors import AttnvizFileError
from attnviz.io.names import display_path
from attnviz.io.session_state import save_state_file
from attnviz.ui.files.context import FileContext
from attnviz.ui.files.recent import RecentFiles
from attnviz.ui.i18n import error_text, translate

__all__ = ["SessionSaver", "session_filter"]


def session_filter() -> str:
    return translate("FileActions", "attnviz session") + " (*.attnviz)"


class SessionSaver:
    """Save and Save As: the session file becomes the current one, the window clean."""

    def __init__(self, context: FileContext, recent: RecentFiles) -> None:
        self.context = context
        self.recent = recent
        self.save_action = context.shortcut_action(QKeySequence.StandardKey.Save, lambda: self.save())
        self.save_as_action = context.shortcut_action(QKeySequence.StandardKey.SaveAs, lambda: self.save_as())

    def retranslate(self) -> None:
        for action, text, tip in (
            (
                self.save_action,
                translate("FileActions", "&Save"),
                translate("FileActions", "Save the inputs and settings as a session (.attnviz)"),
            ),
            (
                self.save_as_action,
                translate("FileActions", "Save &As…"),
                translate("FileActions", "Save the session under a new name"),
            ),
        ):
            action.setText(text)
            action.setToolTip(tip)
            action.setStatusTip(tip)

    def save(self) -> bool:
        """Save to the current session file, or ask for one (Save As)."""
        if self.context.current_path is None:
            return self.save_as()
        return self._save_to(self.context.current_path)

    def save_as(self, path: str | os.PathLike[str] | None = None) -> bool:
        if path is None:
            start = self.context.current_path or Path(self.context.start_dir()) / (
                translate("FileActions", "untitled") + ".attnviz"
            )
            chosen, _filter = QFileDialog.getSaveFileName(
                self.context.window, translate("FileActions", "Save session"), str(start), session_filter()
            )
            if not chosen:
                return False
            path = chosen
        file_path = Path(path)
        if file_path.suffix.lower() != ".attnviz":
            file_path = file_path.with_name(file_path.name + ".attnviz")
        return self._save_to(file_path)

    def _save_to(self, path: Path) -> bool:
        try:
            save_state_file(path, self.context.session.document.state, self.context.session.selection.focus)
        except AttnvizFileError as exc:
            self.context.refuse(translate("FileActions", "Cannot save"), error_text(exc))
            return False
        self.context.set_current(path)
        self.recent.add(path)
        self.context.remember_dir(path)
        self.context.status(translate("FileActions", "Saved {path}").format(path=display_path(path)))
        return True
