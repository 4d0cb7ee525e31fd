"""Light and dark themes that follow the system unless the user picks one.

Qt widgets take a palette; pyqtgraph plots take their own background and pen colours, so every
HeatmapWidget is told too. The choice is remembered in QSettings ("theme": system|light|dark).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QStyleFactory, QWidget

from attnviz.ui.app.settings import default_settings

ThemeMode = Literal["system", "light", "dark"]
THEME_MODES: tuple[ThemeMode, ...] = ("system", "light", "dark")


@dataclass(frozen=True)
class PlotColors:
    background: str
    foreground: str


LIGHT_PLOT = PlotColors("#ffffff", "#202020")
DARK_PLOT = PlotColors("#1b1b1f", "#d8d8d8")

#: Error red: dark enough to read on white, light enough to read on the dark theme.
LIGHT_ERROR = "#b00020"
DARK_ERROR = "#ff6b6b"

_current: PlotColors = LIGHT_PLOT
_mode: ThemeMode = "system"


def plot_colors() -> PlotColors:
    """Colours for a plot created now (HeatmapWidget reads them in its constructor)."""
    return _current


def error_color() -> str:
    """The red of error messages in the current theme (for rich text built at display time)."""
    return DARK_ERROR if _current is DARK_PLOT else LIGHT_ERROR


def mark_error_label(label: QWidget, bold: bool = False) -> None:
    """Colour ``label`` as an error, now and whenever the theme changes (``apply_theme``)."""
    label.setProperty("attnvizErrorBold", bold)
    label.setProperty("attnvizError", True)
    _style_error_label(label)


def _style_error_label(label: QWidget) -> None:
    weight = " font-weight: bold;" if label.property("attnvizErrorBold") else ""
    label.setStyleSheet(f"QLabel {{ color: {error_color()};{weight} }}")


def current_mode() -> ThemeMode:
    return _mode


def system_is_dark() -> bool:
    hints = QGuiApplication.styleHints()
    scheme = getattr(hints, "colorScheme", None)
    return scheme is not None and scheme() == Qt.ColorScheme.Dark


def _dark_palette() -> QPalette:
    p = QPalette()
    base, window, text = QColor("#232327"), QColor("#2d2d32"), QColor("#e6e6e6")
    for group in (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive):
        p.setColor(group, QPalette.ColorRole.Window, window)
        p.setColor(group, QPalette.ColorRole.WindowText, text)
        p.setColor(group, QPalette.ColorRole.Base, base)
        p.setColor(group, QPalette.ColorRole.AlternateBase, window)
        p.setColor(group, QPalette.ColorRole.Text, text)
        p.setColor(group, QPalette.ColorRole.Button, window)
        p.setColor(group, QPalette.ColorRole.ButtonText, text)
        p.setColor(group, QPalette.ColorRole.ToolTipBase, QColor("#3a3a40"))
        p.setColor(group, QPalette.ColorRole.ToolTipText, text)
        p.setColor(group, QPalette.ColorRole.Highlight, QColor("#3d6fb4"))
        p.setColor(group, QPalette.ColorRole.HighlightedText, QColor("#ffffff"))
        p.setColor(group, QPalette.ColorRole.PlaceholderText, QColor("#9a9aa0"))
        p.setColor(group, QPalette.ColorRole.Link, QColor("#8ab4f8"))
    disabled = QColor("#7c7c82")
    for role in (QPalette.ColorRole.WindowText, QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, role, disabled)
    p.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Base, window)
    p.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Window, window)
    p.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Button, window)
    return p


def apply_theme(mode: ThemeMode | str = "system", app: QApplication | None = None) -> bool:
    """Apply a theme to the whole application; returns True when it is dark."""
    global _current, _mode
    app = app or QApplication.instance()  # type: ignore[assignment]
    assert isinstance(app, QApplication)
    _mode = mode if mode in THEME_MODES else "system"  # type: ignore[assignment]
    dark = _mode == "dark" or (_mode == "system" and system_is_dark())
    # Fusion draws the same everywhere and honours a palette fully, which native styles do not.
    fusion = QStyleFactory.create("Fusion")
    if fusion is not None:
        app.setStyle(fusion)
    app.setPalette(_dark_palette() if dark else fusion.standardPalette() if fusion else QPalette())
    _current = DARK_PLOT if dark else LIGHT_PLOT
    from attnviz.ui.heatmap.widget import HeatmapWidget

    for widget in app.allWidgets():
        if widget.property("attnvizError"):
            _style_error_label(widget)
        if isinstance(widget, HeatmapWidget):
            widget.set_plot_colors(_current)
        elif hasattr(widget, "set_plot_colors") and isinstance(widget, QWidget):
            widget.set_plot_colors(_current)
    return dark


def saved_mode(settings: QSettings | None = None) -> ThemeMode:
    value = (settings or default_settings()).value("theme", "system")
    return value if value in THEME_MODES else "system"  # type: ignore[return-value]


def save_mode(mode: ThemeMode, settings: QSettings | None = None) -> None:
    (settings or default_settings()).setValue("theme", mode)


def follow_system(app: QApplication) -> None:
    """Re-apply when the system switches between light and dark (if the user chose "system")."""
    hints = QGuiApplication.styleHints()
    signal = getattr(hints, "colorSchemeChanged", None)
    if signal is not None:
        signal.connect(lambda _scheme: apply_theme("system", app) if _mode == "system" else None)
