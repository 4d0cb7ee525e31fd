"""Light and dark themes that follow the system unless the user picks one.

``apply_theme`` sets the application's style and palette, nothing else: Qt then sends every
widget a PaletteChange, and the widgets with colours of their own (pyqtgraph plots, error
labels, rich text) restyle themselves from ``plot_colors()`` and ``error_color()``, which are
derived from the application palette. The choice is remembered in QSettings ("theme":
system|light|dark).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QSettings, Qt
from PySide6.QtGui import QColor, QGuiApplication, QPainter, QPalette
from PySide6.QtWidgets import QApplication, QProxyStyle, QStyle, QStyleFactory, QStyleOption, QWidget

from attnviz.ui.preferences import default_settings

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
#: Warning amber and "all is well" green, the same way.
LIGHT_WARNING = "#8a5300"
DARK_WARNING = "#ffb74d"
LIGHT_OK = "#1b7f3b"
DARK_OK = "#6fcf7f"

_mode: ThemeMode = "system"


def is_dark() -> bool:
    """Whether the application palette is dark (its window colour darker than mid grey)."""
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        return False
    return app.palette().color(QPalette.ColorRole.Window).lightness() < 128


def plot_colors() -> PlotColors:
    """Colours for plots in the current theme."""
    return DARK_PLOT if is_dark() else LIGHT_PLOT


def error_color() -> str:
    """The red of error messages in the current theme (for rich text built at display time)."""
    return DARK_ERROR if is_dark() else LIGHT_ERROR


def warning_color() -> str:
    """The amber of warnings in the current theme."""
    return DARK_WARNING if is_dark() else LIGHT_WARNING


def ok_color() -> str:
    """The green of "up to date" and "same as" in the current theme."""
    return DARK_OK if is_dark() else LIGHT_OK


def blend(a: QColor, b: QColor, share_of_b: float) -> QColor:
    """``a`` moved ``share_of_b`` of the way towards ``b``."""
    s = share_of_b
    return QColor(
        *(round((1 - s) * x + s * y) for x, y in zip((a.red(), a.green(), a.blue()), (b.red(), b.green(), b.blue())))
    )


def muted_color(widget: QWidget | None = None) -> str:
    """Secondary text: the text colour a third of the way into the background (reads as
    secondary on the light and the dark theme alike)."""
    palette = widget.palette() if widget is not None else QApplication.palette()
    return blend(palette.windowText().color(), palette.window().color(), 0.35).name()


def tinted_panel(widget: QWidget, accent: QColor, share: float = 0.12) -> None:
    """A panel background of ``accent`` blended into the window colour, with the theme's text
    colour, through the palette (a style sheet would fix the font and the colours)."""
    palette = QPalette(widget.palette())
    base = QApplication.palette()
    palette.setColor(QPalette.ColorRole.Window, blend(base.window().color(), accent, share))
    palette.setColor(QPalette.ColorRole.WindowText, base.windowText().color())
    widget.setAutoFillBackground(True)
    widget.setPalette(palette)


def set_text_color(widget: QWidget, color: str | None) -> None:
    """Colour ``widget``'s text (None: the theme's) without a style sheet."""
    palette = QPalette()
    if color is not None:
        palette.setColor(QPalette.ColorRole.WindowText, QColor(color))
    widget.setPalette(palette)


class _TextColour(QObject):
    """Keeps a label in a theme colour (error red, warning amber): recolours it when the palette
    (the theme) changes.

    The colour goes into the label's palette with only the text role set, not into a style
    sheet: a style sheet would give the label a palette of its own, and it would no longer hear
    of theme changes at all (nor of presentation mode's larger font).
    """

    def __init__(self, label: QWidget, colour: Callable[[], str], bold: bool) -> None:
        super().__init__(label)
        self._label = label
        self._colour = colour
        if bold:
            font = label.font()
            font.setBold(True)
            label.setFont(font)
        label.installEventFilter(self)
        self.apply()

    def apply(self) -> None:
        color = QColor(self._colour())
        palette = self._label.palette()
        if palette.color(QPalette.ColorRole.WindowText) != color:  # a new palette is another PaletteChange
            only_text = QPalette()
            only_text.setColor(QPalette.ColorRole.WindowText, color)
            self._label.setPalette(only_text)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.PaletteChange:
            self.apply()
        return False


def mark_error_label(label: QWidget, bold: bool = False) -> None:
    """Colour ``label`` as an error, now and whenever the theme changes."""
    _TextColour(label, error_color, bold)


def mark_warning_label(label: QWidget) -> None:
    """Colour ``label`` as a warning, now and whenever the theme changes."""
    _TextColour(label, warning_color, False)


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


class _FramedIndicators(QProxyStyle):
    """Fusion, with check boxes and radio buttons framed in the text colour on a dark palette.

    Fusion frames them in the window colour made darker, which on a dark window is all but
    invisible: the menu's check marks (presentation mode, the open views) could not be seen.
    """

    def drawPrimitive(
        self, element: QStyle.PrimitiveElement, option: QStyleOption, painter: QPainter, widget: QWidget | None = None
    ) -> None:  # noqa: N802 - Qt's name
        super().drawPrimitive(element, option, painter, widget)
        if (
            element in (QStyle.PrimitiveElement.PE_IndicatorCheckBox, QStyle.PrimitiveElement.PE_IndicatorRadioButton)
            and option.palette.window().color().lightness() < 128
        ):
            painter.save()
            frame = QColor(option.palette.windowText().color())
            frame.setAlpha(170)
            painter.setPen(frame)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            rect = option.rect.adjusted(0, 0, -1, -1)
            if element == QStyle.PrimitiveElement.PE_IndicatorRadioButton:
                painter.setRenderHint(QPainter.RenderHint.Antialiasing)
                painter.drawEllipse(rect)
            else:
                painter.drawRect(rect)
            painter.restore()


def apply_theme(mode: ThemeMode | str = "system", app: QApplication | None = None) -> bool:
    """Apply a theme to the whole application; returns True when it is dark."""
    global _mode
    app = app or QApplication.instance()  # type: ignore[assignment]
    assert isinstance(app, QApplication)
    _mode = mode if mode in THEME_MODES else "system"
    dark = _mode == "dark" or (_mode == "system" and system_is_dark())
    # Fusion draws the same everywhere and honours a palette fully, which native styles do not.
    fusion = QStyleFactory.create("Fusion")
    palette = _dark_palette() if dark else fusion.standardPalette() if fusion is not None else QPalette()
    if fusion is not None:
        app.setStyle(_FramedIndicators(fusion))  # the proxy owns Fusion from here on
    app.setPalette(palette)
    # Qt posts the change to every widget; deliver it now, so the theme is whole when this returns
    # (every widget restyles itself on its PaletteChange).
    QCoreApplication.sendPostedEvents(None, QEvent.Type.ApplicationPaletteChange)
    return dark


def saved_mode(settings: QSettings | None = None) -> ThemeMode:
    value = (settings or default_settings()).value("theme", "system")
    return value if value in THEME_MODES else "system"


def save_mode(mode: ThemeMode, settings: QSettings | None = None) -> None:
    (settings or default_settings()).setValue("theme", mode)


def follow_system(app: QApplication) -> None:
    """Re-apply when the system switches between light and dark (if the user chose "system")."""
    hints = QGuiApplication.styleHints()
    signal = getattr(hints, "colorSchemeChanged", None)
    if signal is not None:
        signal.connect(lambda _scheme: apply_theme("system", app) if _mode == "system" else None)
