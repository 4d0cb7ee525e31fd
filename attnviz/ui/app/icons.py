"""The application icon, from resources/icons (every size, so each place picks a sharp one)."""

from __future__ import annotations

from PySide6.QtGui import QIcon

from attnviz.ui.resources import resource_dir


def app_icon() -> QIcon:
    icon = QIcon()
    base = resource_dir()
    if base is not None:
        for png in sorted((base / "icons").glob("attnviz-*.png")):
            icon.addFile(str(png))
    return icon
