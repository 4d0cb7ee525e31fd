"""The layers x heads overview of a model run: one cell per head of every call, coloured by a
per-head statistic (entropy, attention to the first token, to padding...). A click on a cell
shows that head everywhere.

The statistics need every call's weights, so they are a computation of the view on a thread of
its own (latest request wins, a newer one stops it between calls), run only while the view is
on show and again only when the run changes, not when another head is picked.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from attnviz.compute.heads import HEAD_STATISTICS, HeadStatistics, head_statistics
from attnviz.compute.jobs import Job
from attnviz.state.run import MASK_ARGUMENTS
from attnviz.text.tr import QT_TRANSLATE_NOOP, exception_message
from attnviz.ui.app.host import Host, ToolPanel
from attnviz.ui.app.session import AppSession
from attnviz.ui.app.view_base import SessionView, captioned_choice, view_column
from attnviz.ui.heatmap import HeatmapWidget
from attnviz.ui.heatmap.paint import format_number
from attnviz.ui.i18n import tr_text, translate
from attnviz.ui.labels import WrappedStatusLabel
from attnviz.ui.theme import mark_error_label
from attnviz.ui.views.docks import DOCKS, OVERVIEW_DOCK

__all__ = ["OVERVIEW_DOCK", "ModelOverview", "install_model_overview"]

#: The calls table's columns.
_CALL_COLUMNS = (
    QT_TRANSLATE_NOOP("ModelOverview", "call"),
    QT_TRANSLATE_NOOP("ModelOverview", "heads"),
    QT_TRANSLATE_NOOP("ModelOverview", "B x Q x K"),
    QT_TRANSLATE_NOOP("ModelOverview", "masks given"),
    QT_TRANSLATE_NOOP("ModelOverview", "fidelity"),
    QT_TRANSLATE_NOOP("ModelOverview", "note"),
)


def _statistics(job: Job[None]) -> tuple[HeadStatistics | None, str | None]:
    """On the view's thread: every head's statistics, or why there are none."""
    try:
        return head_statistics(job.snapshot.state, should_stop=job.should_stop), None
    except Exception as exc:  # noqa: BLE001 - shown in the view, the app goes on
        return None, exception_message(exc)


class ModelOverview(SessionView):
    """Layers down, heads across; ``heatmap`` shows the statistic picked in ``statistic``."""

    def __init__(self, session: AppSession, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self._session = session
        self._stats: HeadStatistics | None = None
        layout = view_column(self)
        row = QHBoxLayout()
        self.caption, self.statistic = captioned_choice(HEAD_STATISTICS, self.request_draw)
        row.addWidget(self.caption)
        row.addWidget(self.statistic)
        self.description = WrappedStatusLabel()  # not height-for-width: see its docstring
        row.addWidget(self.description, 1)
        layout.addLayout(row)
        self.message = WrappedStatusLabel()
        mark_error_label(self.message)
        self.message.setVisible(False)
        layout.addWidget(self.message)
        self.heatmap = self.own_map(
            HeatmapWidget(),
            x_label=QT_TRANSLATE_NOOP("ModelOverview", "Heads"),
            y_label=QT_TRANSLATE_NOOP("ModelOverview", "Layers"),
        )
        self.heatmap.value_format = ".2f"
        self.heatmap.cellClicked.connect(lambda r, c, _mods: self._choose(r, c))
        # The calls of the run: what each received and how faithfully attnviz recomputes it.
        self.calls = QTableWidget(0, len(_CALL_COLUMNS))  # one row per layer: items are fine
        self.calls.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.calls.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.calls.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.calls.verticalHeader().setVisible(False)
        header = self.calls.horizontalHeader()
        header.setStretchLastSection(True)
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.calls.setMinimumHeight(110)
        self.calls.cellClicked.connect(lambda row, _col: self._session.set_focus(row, self._session.selection.head))
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.heatmap)
        split.addWidget(self.calls)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        layout.addWidget(split, 1)

        self.statistics_of_heads = self.while_shown(
            self.session.register("head statistics", _statistics, follows="document")
        )
        self.statistics_of_heads.on_result(self._on_statistics)
        self.retranslate()

    def retranslate(self) -> None:
        self.caption.setText(translate("ModelOverview", "&Statistic"))
        for index, name in enumerate(HEAD_STATISTICS):
            self.statistic.setItemText(index, tr_text(HEAD_STATISTICS[name][0]))
        self.statistic.setToolTip(translate("ModelOverview", "What each cell shows about its head"))
        self.calls.setToolTip(
            translate(
                "ModelOverview",
                "The model's attention calls: what each was given, and the "
                "largest difference between its own output and attnviz's "
                "recomputation (fidelity); click one to show it",
            )
        )
        self.request_draw()

    # ------------------------------------------------------------------ computing

    def _on_statistics(self, result: tuple[HeadStatistics | None, str | None]) -> None:
        stats, error = result
        self._stats = stats
        self._show_message(error)
        self.request_draw()

    # ------------------------------------------------------------------ drawing

    @property
    def statistics(self) -> HeadStatistics | None:
        return self._stats

    def _fill_calls(self) -> None:
        run = self._session.document.state.run
        self.calls.setHorizontalHeaderLabels([tr_text(text) for text in _CALL_COLUMNS])
        names = run.short_names()
        self.calls.setRowCount(run.layers)
        for row, call in enumerate(run.calls):
            b, h, lq, lk = call.shape
            masks = [name for name in MASK_ARGUMENTS if getattr(call.masks, name) is not None]
            if call.masks.is_causal:
                masks.append("is_causal")
            if call.fidelity is None:
                fidelity = translate("ModelOverview", "not checked")
            else:
                fidelity = f"{call.fidelity:.1e}"
            cells = (
                names[row],
                str(h) if call.kv_heads == h else f"{h} ({call.kv_heads} kv)",
                f"{b} x {lq} x {lk}",
                ", ".join(masks) or "—",
                translate("ModelOverview", "weights only") if call.weights_only else fidelity,
                str(call.note),
            )
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(call.name if col == 0 else text)
                self.calls.setItem(row, col, item)
        self.calls.selectRow(self._session.selection.layer)

    def draw(self) -> None:
        self._fill_calls()
        name = self.statistic.currentData() or "entropy"
        self.description.setText(tr_text(HEAD_STATISTICS[name][1]))
        stats = self._stats
        state = self._session.document.state
        if stats is None:
            self.heatmap.clear()
            return
        b = min(self._session.selection.batch, stats.values[name].shape[1] - 1)
        values = stats.values[name][:, b, :]
        n_layers, n_heads = values.shape
        finite = values[np.isfinite(values)]
        levels = (0.0, 1.0) if name != "max" or not finite.size else (0.0, max(1e-9, float(finite.max())))
        rows = state.run.short_names() if len(state.run.calls) == n_layers else list(stats.names)
        cols = [str(h) for h in range(n_heads)]
        shown = self._session.selection
        self.heatmap.set_title(
            translate("ModelOverview", "{statistic}, batch {b} (on show: layer {layer}, head {head})").format(
                statistic=tr_text(HEAD_STATISTICS[name][0]), b=b, layer=shown.layer, head=shown.head
            )
        )
        self.heatmap.set_data(
            values,
            mask=np.isfinite(values),
            levels=levels,
            row_labels=rows,
            col_labels=cols,
            hover=lambda r, c: self._hover(stats, name, b, r, c),
        )
        notes = [f"{stats.names[i]}: {text}" for i, text in stats.errors.items()]
        if notes:
            self._show_message("; ".join(notes))
        elif state.run.single_head:
            self._show_message(
                translate(
                    "ModelOverview",
                    "One head here: open a file of a model's tensors with layers and heads, or a capture.",
                ),
                error=False,
            )
        else:
            self._show_message(None)

    def _hover(self, stats: HeadStatistics, name: str, b: int, r: int, c: int) -> str:
        value = stats.values[name][r, b, c]
        shown = format_number(float(value)) if np.isfinite(value) else translate("ModelOverview", "does not apply")
        return (
            translate("ModelOverview", "{call}, head {h}").format(call=stats.names[r], h=c)
            + "\n"
            + f"{tr_text(HEAD_STATISTICS[name][0])}: {shown}\n"
            + translate("ModelOverview", "click to show this head everywhere")
        )

    def _choose(self, layer: int, head: int) -> None:
        self._session.set_focus(layer, head)

    def _show_message(self, text: str | None, *, error: bool = True) -> None:
        self.message.setVisible(bool(text))
        if text:
            self.message.setText(("⚠ " if error else "") + text)


def install_model_overview(session: AppSession, host: Host) -> ToolPanel:
    """Add the layers x heads overview as a hidden tab; View > Layers x heads shows it."""
    return host.add_dock(DOCKS[OVERVIEW_DOCK], lambda: ModelOverview(session))
