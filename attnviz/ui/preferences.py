"""Where preferences live (recent files, theme, window layout)."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QSettings

from attnviz.io.session import STATE_DIR_ENV


def default_settings() -> QSettings:
    """Next to the autosave when ``ATTNVIZ_STATE_DIR`` is set (tests, portable installs), else
    the platform's usual place for the "attnviz" application."""
    override = os.environ.get(STATE_DIR_ENV)
    if override:
        return QSettings(str(Path(override) / "settings.ini"), QSettings.Format.IniFormat)
    return QSettings("attnviz", "attnviz")
