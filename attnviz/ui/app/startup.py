"""The QApplication as attnviz wants it: names, icon, language and theme, set up once, whether
the app was started from the command line or a script opened a window (``attnviz.show``)."""

from __future__ import annotations

import sys

from PySide6.QtWidgets import QApplication

from attnviz import __version__

__all__ = ["application"]


def application(language: str | None = None) -> QApplication:
    """The running QApplication, created and set up the first time (a host program's own
    application, in a notebook say, is used as it is: only names it has not set are set)."""
    app = QApplication.instance()
    created = app is None
    if app is None:
        app = QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    if created or not app.applicationName() or app.applicationName() == "python":
        app.setApplicationName("attnviz")
        app.setApplicationVersion(__version__)
        app.setOrganizationName("attnviz")
        app.setDesktopFileName("attnviz")  # Wayland matches the window to attnviz.desktop by this
    if getattr(app, "_attnviz_ready", False):
        return app
    from attnviz.ui import theme
    from attnviz.ui.app.icons import app_icon
    from attnviz.ui.i18n import startup_language

    app.setWindowIcon(app_icon())
    # Before any widget exists: widgets take their texts when they are built.
    startup_language(app, language)
    theme.apply_theme(theme.saved_mode())
    theme.follow_system(app)
    app._attnviz_ready = True  # type: ignore[attr-defined]
    return app
