"""Open Recent: the last files opened or saved, newest first, kept in the settings."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QMenu

from attnviz.io.names import display_name, display_path
from attnviz.ui.files.context import FileContext
from attnviz.ui.i18n import translate

__all__ = ["MAX_RECENT", "RECENT_KEY", "RecentFiles"]

MAX_RECENT = 10
RECENT_KEY = "recentFiles"


class RecentFiles:
    """The recent files and the Open Recent menu (filled when it is about to show)."""

    def __init__(self, context: FileContext, open_file: Callable[[str], object]) -> None:
        self.settings = context.settings
        self._open_file = open_file
        self.menu = QMenu(context.window)
        self.menu.setToolTipsVisible(True)
        self.menu.aboutToShow.connect(self._fill_menu)

    def retranslate(self) -> None:
        self.menu.setTitle(translate("FileActions", "Open &Recent"))

    def paths(self) -> list[str]:
        value: Any = self.settings.value(RECENT_KEY, [])
        if isinstance(value, str):  # QSettings gives a lone string for a one-item list (INI)
            value = [value]
        return [str(v) for v in (value or []) if v]

    def _store(self, paths: list[str]) -> None:
        self.settings.setValue(RECENT_KEY, paths[:MAX_RECENT])
        self.settings.sync()

    def add(self, path: Path) -> None:
        text = str(path.resolve())
        self._store([text] + [p for p in self.paths() if p != text])

    def forget(self, path: Path) -> None:
        text = str(path.resolve())
        self._store([p for p in self.paths() if p != text])

    def _fill_menu(self) -> None:
        self.menu.clear()
        paths = self.paths()
        for index, text in enumerate(paths, start=1):
            path = Path(text)
            action = self.menu.addAction(f"&{index % 10} {display_name(path)}   —   {display_path(path.parent)}")
            action.setToolTip(text)
            action.setData(text)
            action.triggered.connect(lambda _checked=False, p=text: self._open_file(p))
        if not paths:
            self.menu.addAction(translate("FileActions", "No recent files")).setEnabled(False)
            return
        self.menu.addSeparator()
        self.menu.addAction(translate("FileActions", "&Clear list"), lambda: self._store([]))
