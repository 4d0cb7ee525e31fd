"""The text size that maps and plots sizing their own text start from.

Presentation mode enlarges the application font (the main window does) and scales the text of
every map and plot by its own factor on top (``SessionView.font_scale``). Made while it is on,
a map that took the application's font as its starting size would be enlarged twice: every map
starts from the size the application font has outside presentation mode.
"""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

__all__ = ["base_point_size", "hold_normal_size"]

#: The application font's size outside presentation mode, while presentation mode is on.
_normal: float | None = None


def hold_normal_size(point_size: float | None) -> None:
    """Presentation mode enlarges the application font, which was ``point_size`` (None: it is
    left, the application font is the normal one again)."""
    global _normal
    _normal = point_size if point_size is None or point_size > 0 else None


def base_point_size() -> float:
    """The application font's size outside presentation mode (9 pt where none is set)."""
    if _normal is not None:
        return _normal
    size = QApplication.font().pointSizeF()
    return size if size > 0 else 9.0
