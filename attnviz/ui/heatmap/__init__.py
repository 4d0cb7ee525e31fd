"""The attention heatmap: numpy paint code, pyqtgraph items and the widget."""

from attnviz.ui.heatmap.widget import PRESENTATION_SCALE, HeatmapWidget

__all__ = ["HeatmapWidget", "PRESENTATION_SCALE"]
