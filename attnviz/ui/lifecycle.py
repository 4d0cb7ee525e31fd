"""Let Qt run the lifecycle: texts follow a language switch, colours follow a theme switch.

Qt sends every widget ``QEvent.LanguageChange`` when a translator is installed and
``QEvent.PaletteChange`` when the application palette changes. A widget that mixes in
``Retranslating`` sets its texts in ``retranslate()`` (called once by the widget itself after
building, and again at every language change) and its theme-dependent colours in ``restyle()``.
Nothing is rebuilt and no list of widgets is walked: each widget looks after its own texts.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent

__all__ = ["Retranslating"]


class Retranslating:
    """Mixin for QWidget subclasses (put it first: ``class View(Retranslating, QWidget)``)."""

    def retranslate(self) -> None:
        """Set every user-visible text in the current language."""

    def restyle(self) -> None:
        """Apply the colours of the current theme (``theme.plot_colors()`` and friends)."""

    def changeEvent(self, event: QEvent) -> None:
        kind = event.type()
        if kind == QEvent.Type.LanguageChange:
            self.retranslate()
        elif kind == QEvent.Type.PaletteChange:
            self.restyle()
        super().changeEvent(event)  # type: ignore[misc]
