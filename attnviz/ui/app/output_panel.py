"""The attention output (weights @ values): the selected batch element's numbers in a table, and a
map of every batch element's output that the weights maps show, each titled with its batch
element (issue 37: beside the weights on a slide, batch 0 alone, unlabelled, was read as the
output of the batch element the caption talked about)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QAbstractItemView, QTabWidget, QVBoxLayout, QWidget

from attnviz.compute.axes import index_labels
from attnviz.text.tr import QT_TRANSLATE_NOOP
from attnviz.ui.heatmap.paint import format_number
from attnviz.ui.heatmap.widget import HeatmapWidget
from attnviz.ui.i18n import translate
from attnviz.ui.lifecycle import Retranslating
from attnviz.ui.tables.tensor_table import ArrayTableModel, TensorTableView

__all__ = ["OutputPanel", "output_format", "output_hover_text"]

#: One batch element's output: (its index, its (queries, value dimensions) array, its row labels).
BatchOutput = tuple[int, np.ndarray, list[str]]


def output_hover_text(output: np.ndarray, rows: list[str], r: int, c: int) -> str:
    """A cell of the output: a query and a value dimension (not a key: the output has one
    column per dimension of the values)."""
    query = translate("ResultsPanel", "query {index}").format(index=r)
    if r < len(rows) and rows[r] != str(r):
        query += f" ({rows[r]})"
    dimension = translate("ResultsPanel", "value dimension {index}").format(index=c)
    return f"{query}, {dimension} (d{c}): {format_number(float(output[r, c]))}"


def output_format(outputs: Sequence[np.ndarray]) -> str:
    """The cells' number format for these outputs: three significant digits of the largest as
    fixed decimals ("3.73" and "-0.21", "13.0"), never wider than five characters below 100;
    ".3g" gave "-0.214" beside "3.73", and "13.00" was one character wider than a slide's cell
    holds: every number of the map disappeared."""
    finite = [np.abs(o[np.isfinite(o)]) for o in outputs]
    largest = max((float(a.max()) for a in finite if a.size), default=0.0)
    if largest < 9.995:
        return ".2f"
    return ".1f" if largest < 99.95 else ".3g"


class OutputPanel(Retranslating, QTabWidget):
    """The output of the batch elements on show: the selected one's numbers (a table) and a map of
    each (``heatmaps``, the first also ``heatmap``; the maps' page is ``map_page``)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = ArrayTableModel(
            row_label=lambda r: f"q{r}",
            column_label=lambda c: f"d{c}",
            value_name=QT_TRANSLATE_NOOP("ResultsPanel", "output"),
        )
        self.table = TensorTableView(self.model)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        #: Makes a map follow its owner's colour map, fonts and theme (the results panel's
        #: ``own_map``); the maps after the first are made when a result has more batch elements.
        self.own_map: Callable[[HeatmapWidget], HeatmapWidget] = lambda heatmap: heatmap
        self.map_page = QWidget()
        self._column = QVBoxLayout(self.map_page)
        self._column.setContentsMargins(0, 0, 0, 0)
        self.heatmap = self._new_map()
        self.heatmaps: list[HeatmapWidget] = [self.heatmap]
        self._column.addWidget(self.heatmap)
        self.addTab(self.table, "")
        self.addTab(self.map_page, "")
        self._pending: list[BatchOutput] | None = None
        self._pending_batches = 1  # the run's batch size that the pending maps belong to
        self._titled: list[int] = []  # the batch elements the maps show, for their titles
        self._n_batch = 1
        self._rows: list[str] = []
        self.currentChanged.connect(lambda _index: self._draw_maps() if self.maps_on_show else None)
        self.retranslate()

    @property
    def maps_on_show(self) -> bool:
        return self.currentWidget() is self.map_page

    def _new_map(self) -> HeatmapWidget:
        heatmap = HeatmapWidget()
        # Beside the input tables the output shares the width: its map may be small.
        heatmap.setMinimumSize(200, 120)
        return heatmap

    def retranslate(self) -> None:
        self.setToolTip(
            translate("ResultsPanel", "The attention output (weights @ values) of the batch elements on show")
        )
        self.table.set_tip_prefix(QT_TRANSLATE_NOOP("ResultsPanel", "Output numbers (read-only; Ctrl+C copies)"))
        for heatmap in self.heatmaps:
            heatmap.set_axis_labels(translate("ResultsPanel", "Value dimension"), translate("ResultsPanel", "Queries"))
            heatmap.setToolTip(translate("ResultsPanel", "Output as a heatmap (colour scale from its own range)"))
        self._set_titles()
        self.setTabText(0, translate("ResultsPanel", "&Output"))
        self.setTabText(1, translate("ResultsPanel", "Output &map"))

    def _set_titles(self) -> None:
        shown, n_batch = self._titled, self._n_batch
        for heatmap, b in zip(self.heatmaps, shown or [0]):
            if n_batch == 1:
                title = translate("ResultsPanel", "Output")
            # Titled as the weights maps beside them are (the tab says "Output map"): "Output,
            # batch 0" wrapped onto two lines in a slide's narrow column and widened the plot.
            elif len(shown) < n_batch:
                title = translate("ResultsPanel", "batch {b} of {n}").format(b=b, n=n_batch)
            else:
                title = translate("ResultsPanel", "batch {b}").format(b=b)
            heatmap.set_title(title)

    def show_output(self, output: np.ndarray, row_labels: list[str] | None = None) -> None:
        """One batch element's output (of a run of one)."""
        self.show_outputs([(0, output, row_labels or index_labels("q", output.shape[0]))], 0, 1)

    def show_outputs(self, outputs: Sequence[BatchOutput], selected: int, n_batch: int) -> None:
        """The outputs of the batch elements on show (as the weights maps show them), the table
        with the ``selected`` one's numbers, of a run of ``n_batch`` batch elements."""
        chosen = next((o for o in outputs if o[0] == selected), outputs[0])
        _b, output, rows = chosen
        if rows != self._rows:
            self._rows = list(rows)
            labels = self._rows
            self.model.set_labels(
                row_label=lambda r: labels[r] if r < len(labels) else f"q{r}", column_label=lambda c: f"d{c}"
            )
        self.model.set_array(output)
        self._fit_columns()
        # The maps' titles follow the maps: they change when the maps are drawn, never before
        # (a language switch in between would title the old maps with the new run's count).
        self._pending = list(outputs)
        self._pending_batches = n_batch
        if self.maps_on_show:
            self._draw_maps()

    #: Up to this many value dimensions share the table's width; more scroll sideways.
    FIT_COLUMNS = 16

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_columns()

    def _fit_columns(self) -> None:
        """Every column in view when they fit: the output beside the input tables is narrow, and
        the default width (room for -0.0000e+00) cut its last column (the book's toy's d3, 5)."""
        n_cols, n_rows = self.model.columnCount(), self.model.rowCount()
        if not 0 < n_cols <= self.FIT_COLUMNS:
            return
        header = self.table.horizontalHeader()
        metrics = self.table.fontMetrics()
        texts = [str(self.model.headerData(c, Qt.Orientation.Horizontal)) for c in range(n_cols)]
        texts += [
            str(self.model.index(r, c).data() or "") for r in range(min(n_rows, 64)) for c in range(n_cols)
        ]  # the first rows tell the numbers' width; all rows are formatted alike
        least = max(metrics.horizontalAdvance(text) for text in texts) + 16
        # The viewport as if no scroll bar showed, less the vertical one when the rows need it.
        room = self.table.maximumViewportSize().width()
        if n_rows * self.table.verticalHeader().defaultSectionSize() > self.table.maximumViewportSize().height():
            room -= self.table.verticalScrollBar().sizeHint().width()
        room = max(room, 0) // n_cols
        width = max(least, min(header.defaultSectionSize(), room))
        for column in range(n_cols):
            header.resizeSection(column, width)

    def least_map_width(self) -> int:
        """The narrowest width at which every output map on show is laid out whole: its plot's
        least width (the value dimensions' axis name in slide type is wider than two cells)
        and the widget's frame around it (0: no map drawn)."""
        least = 0
        for heatmap in self.heatmaps:
            if heatmap.isVisibleTo(self) and heatmap.values is not None:
                plot = heatmap.plot_item.effectiveSizeHint(Qt.SizeHint.MinimumSize).width()
                frame = self.width() - heatmap.width() + 8  # the page's margins, a little room
                least = max(least, int(plot) + frame)
        return least

    def _ensure_maps(self, count: int) -> None:
        while len(self.heatmaps) < count:
            heatmap = self.own_map(self._new_map())
            heatmap.set_axis_labels(translate("ResultsPanel", "Value dimension"), translate("ResultsPanel", "Queries"))
            heatmap.setToolTip(self.heatmap.toolTip())
            self.heatmaps.append(heatmap)
            self._column.addWidget(heatmap)
        for i, heatmap in enumerate(self.heatmaps):
            heatmap.setVisible(i < count)

    def _draw_maps(self) -> None:
        # The maps are drawn only when they are the tab showing: hidden maps cost time at every
        # edit for nobody.
        outputs = self._pending
        if not outputs:
            return
        self._pending = None
        self._ensure_maps(len(outputs))
        self._n_batch = self._pending_batches
        self._titled = [b for b, _output, _rows in outputs]
        self._set_titles()
        for heatmap, (_b, output, rows) in zip(self.heatmaps, outputs):
            heatmap.value_format = output_format([output])  # each map its own range and digits
            heatmap.set_data(
                output,
                levels=None,
                row_labels=list(rows[: output.shape[0]]),
                col_labels=index_labels("d", output.shape[1]),
                hover=partial(output_hover_text, output, list(rows)),
            )
