"""The attention heatmap: numpy paint code, pyqtgraph items and the widget.

``paint`` imports no Qt, and importing it must not load Qt through this package either (it is
meant to run anywhere, a compute thread or a test without a QApplication): so the widget's names
are imported on first use, not here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from attnviz.ui.heatmap.widget import PRESENTATION_SCALE, HeatmapWidget

__all__ = ["PRESENTATION_SCALE", "HeatmapWidget"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from attnviz.ui.heatmap import widget

        return getattr(widget, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
