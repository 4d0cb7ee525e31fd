"""Tokens: pick some (click, shift-click, ctrl-click, or search a long input) and see how much
attention they send and receive, and the keys a query looks at most.

Everything is of the head and batch element on show, from the last result: the sums are over
the weights the main view draws. A query picked elsewhere (a click on a cell of a main weights
map: ``AppSession.select_query``) is selected here (shift-click adds it).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QItemSelectionModel, QSortFilterProxyModel, QStringListModel, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from attnviz.compute import Outcome, ViewData
from attnviz.compute.axes import axis_labels, token_of
from attnviz.ui.app.host import Host, ToolPanel
from attnviz.ui.app.session import AppSession
from attnviz.ui.app.view_base import SessionView
from attnviz.ui.heatmap.paint import format_number
from attnviz.ui.i18n import translate
from attnviz.ui.views.docks import DOCKS, TOKENS_DOCK

__all__ = ["TOKENS_DOCK", "TokensView", "install_tokens_view", "token_sums", "top_keys"]

#: The top-k table holds at most this many keys.
MAX_TOP_K = 50


def token_sums(weights: np.ndarray, queries: list[int], keys: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """(sent, received): the attention the selected queries send to each key (sum over their
    rows), and the attention the selected keys receive from each query (sum over their
    columns). NaN weights (a fully masked row under some conventions) count as 0."""
    w = np.nan_to_num(np.asarray(weights, dtype=np.float64), nan=0.0, posinf=0.0, neginf=0.0)
    sent = w[queries].sum(axis=0) if queries else np.zeros(w.shape[1])
    received = w[:, keys].sum(axis=1) if keys else np.zeros(w.shape[0])
    return sent, received


def top_keys(weights: np.ndarray, query: int, k: int) -> list[tuple[int, float]]:
    """The ``k`` keys query ``query`` gives most weight, largest first (NaN last)."""
    row = np.asarray(weights[query], dtype=np.float64)
    order = np.argsort(np.where(np.isnan(row), -np.inf, -row), kind="stable")[:k]
    return [(int(j), float(row[j])) for j in order]


class _SearchableList(QWidget):
    """A token list with a search box; multi-selection by click, shift-click, ctrl-click."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.search = QLineEdit()
        self.search.setClearButtonEnabled(True)
        self.model = QStringListModel()
        self.proxy = QSortFilterProxyModel()
        self.proxy.setSourceModel(self.model)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.search.textChanged.connect(self.proxy.setFilterFixedString)
        self.list = QListView()
        self.list.setModel(self.proxy)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.list.setUniformItemSizes(True)  # thousands of tokens: no per-row size queries
        layout.addWidget(self.search)
        layout.addWidget(self.list, 1)

    def set_labels(self, labels: list[str]) -> None:
        if labels != self.model.stringList():
            self.model.setStringList(labels)

    def selected(self) -> list[int]:
        rows = {self.proxy.mapToSource(i).row() for i in self.list.selectionModel().selectedIndexes()}
        return sorted(r for r in rows if r >= 0)

    def select(self, rows: list[int], *, add: bool = False) -> None:
        sel = self.list.selectionModel()
        flags = QItemSelectionModel.SelectionFlag.Select if add else QItemSelectionModel.SelectionFlag.ClearAndSelect
        for n, row in enumerate(rows):
            index = self.proxy.mapFromSource(self.model.index(row, 0))
            if index.isValid():
                sel.select(index, flags if n == 0 else QItemSelectionModel.SelectionFlag.Select)
                self.list.scrollTo(index)


class TokensView(SessionView):
    """``queries``/``keys`` list the tokens; ``sent_plot``/``received_plot`` the sums; ``top``
    the keys the first selected query looks at most."""

    def __init__(self, session: AppSession, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self._session = session
        self._view: ViewData | None = None
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        splitter = QSplitter()
        layout.addWidget(splitter)

        lists = QWidget()
        lists_layout = QVBoxLayout(lists)
        lists_layout.setContentsMargins(0, 0, 0, 0)
        self.queries_caption = QLabel()
        self.queries = _SearchableList()
        self.keys_caption = QLabel()
        self.keys = _SearchableList()
        for caption, widget in ((self.queries_caption, self.queries), (self.keys_caption, self.keys)):
            # Captions wrap: in slide type one line of them was wider than a 1280-pixel slide.
            caption.setWordWrap(True)
            caption.setBuddy(widget.search)
            lists_layout.addWidget(caption)
            lists_layout.addWidget(widget, 1)
        splitter.addWidget(lists)

        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        self.sent_plot = self.own_plot(pg.PlotWidget())
        self.received_plot = self.own_plot(pg.PlotWidget())
        for plot in (self.sent_plot, self.received_plot):
            plot.setMouseEnabled(x=True, y=False)
            plot.setMinimumHeight(150)
            right_layout.addWidget(plot, 1)
        # Blue for what queries send, orange for what keys receive: apart for colour-blind eyes too.
        self._sent_bars = pg.BarGraphItem(x=[], height=[], width=0.8, brush=pg.mkBrush(70, 120, 200))
        self._received_bars = pg.BarGraphItem(x=[], height=[], width=0.8, brush=pg.mkBrush(220, 140, 40))
        self.sent_plot.addItem(self._sent_bars)
        self.received_plot.addItem(self._received_bars)
        top_row = QHBoxLayout()
        self.top_caption = QLabel()
        self.top_caption.setWordWrap(True)
        self.top_k = QSpinBox()
        self.top_k.setRange(1, MAX_TOP_K)
        self.top_k.setValue(5)
        self.top_k.valueChanged.connect(lambda _v: self.request_draw())
        self.top_caption.setBuddy(self.top_k)
        self.k_caption = QLabel()
        self.k_caption.setBuddy(self.top_k)  # its "&p" is a shortcut, not a character to show
        top_row.addWidget(self.top_caption, 1)
        top_row.addWidget(self.k_caption)
        top_row.addWidget(self.top_k)
        right_layout.addLayout(top_row)
        self.top = QTableWidget(0, 3)  # at most MAX_TOP_K rows: items are fine here
        self.top.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.top.verticalHeader().setVisible(False)
        self.top.setMaximumHeight(200)
        right_layout.addWidget(self.top)
        splitter.addWidget(right)
        splitter.setStretchFactor(1, 3)

        self.queries.list.selectionModel().selectionChanged.connect(lambda *_: self.request_draw())
        self.keys.list.selectionModel().selectionChanged.connect(lambda *_: self.request_draw())
        self.retranslate()
        outcome = session.current_outcome()
        if outcome is not None:
            self.on_outcome(outcome)

    def retranslate(self) -> None:
        self.queries_caption.setText(translate("TokensView", "&Queries (click, shift-click; type to search)"))
        self.keys_caption.setText(translate("TokensView", "&Keys (click, shift-click; type to search)"))
        self.queries.search.setPlaceholderText(translate("TokensView", "Search tokens"))
        self.keys.search.setPlaceholderText(translate("TokensView", "Search tokens"))
        self.top_caption.setText(translate("TokensView", "Keys the first selected query looks at most"))
        self.k_caption.setText(translate("TokensView", "to&p"))
        self.top.setHorizontalHeaderLabels(
            [translate("TokensView", "key"), translate("TokensView", "token"), translate("TokensView", "weight")]
        )
        self._set_titles()

    def _set_titles(self) -> None:
        """What each plot shows, or, with nothing selected on its side, how to fill it."""
        queries = bool(self.queries.selected()) if self._view is not None else True
        keys = bool(self.keys.selected()) if self._view is not None else True
        self.set_plot_title(
            self.sent_plot,
            translate("TokensView", "Attention the selected queries send, per key")
            if queries
            else translate("TokensView", "Select queries on the left: the attention they send, per key"),
        )
        self.set_plot_title(
            self.received_plot,
            translate("TokensView", "Attention the selected keys receive, per query")
            if keys
            else translate("TokensView", "Select keys on the left: the attention they receive, per query"),
        )

    # ------------------------------------------------------------------ session

    def on_outcome(self, outcome: Outcome) -> None:
        if outcome.view is not None:
            self._view = outcome.view
            self.request_draw()

    def on_query_selected(self, row: int, add: bool) -> None:
        self.select_query(row, add=add)

    def select_query(self, row: int, *, add: bool = False) -> None:
        """Select query ``row`` (``add``: keep the others selected), as a click on a map does."""
        self.queries.select([row], add=add)

    # ------------------------------------------------------------------ drawing

    def draw(self) -> None:
        view = self._view
        if view is None:
            return
        b = min(self._session.selection.batch, view.weights.shape[0] - 1)
        weights = view.weights[b]
        n_q, n_k = weights.shape
        rows, cols = axis_labels(view.query_tokens, view.key_tokens, b, n_q, n_k)
        self.queries.set_labels([f"{i}  {t}" if t != f"q{i}" else t for i, t in enumerate(rows)])
        self.keys.set_labels([f"{j}  {t}" if t != f"k{j}" else t for j, t in enumerate(cols)])
        queries, keys = self.queries.selected(), self.keys.selected()
        queries = [q for q in queries if q < n_q]
        keys = [k for k in keys if k < n_k]
        sent, received = token_sums(weights, queries, keys)
        self._sent_bars.setOpts(x=np.arange(n_k), height=sent, width=0.8)
        self._received_bars.setOpts(x=np.arange(n_q), height=received, width=0.8)
        for plot, labels in ((self.sent_plot, cols), (self.received_plot, rows)):
            step = max(1, len(labels) // 40)  # at most ~40 labels along the axis: never overlapping
            plot.getAxis("bottom").setTicks([[(i, labels[i]) for i in range(0, len(labels), step)], []])
        self._fill_top(weights, queries, b, view)
        self._set_titles()

    def _fill_top(self, weights: np.ndarray, queries: list[int], b: int, view: ViewData) -> None:
        if not queries:
            self.top.setRowCount(0)
            return
        best = top_keys(weights, queries[0], min(self.top_k.value(), weights.shape[1]))
        self.top.setRowCount(len(best))
        for row, (key, weight) in enumerate(best):
            token = token_of(view.key_tokens, b, key)
            for col, text in enumerate((str(key), "" if token is None else token, format_number(weight))):
                self.top.setItem(row, col, QTableWidgetItem(text))

    @property
    def sums(self) -> tuple[np.ndarray, np.ndarray]:
        """The bars on show: (sent per key, received per query)."""
        return (np.asarray(self._sent_bars.opts["height"]), np.asarray(self._received_bars.opts["height"]))


def install_tokens_view(session: AppSession, host: Host) -> ToolPanel:
    """Add the tokens view as a hidden tab; View > Tokens (Ctrl+Shift+T) shows it."""
    return host.add_dock(DOCKS[TOKENS_DOCK], lambda: TokensView(session))
