"""The pipeline's side panels, under the formulas: additive attention's hidden features of one
query-key pair, and the scoring function's learned parameters as editable tables."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGroupBox, QHBoxLayout, QLabel, QSpinBox, QTabWidget, QVBoxLayout, QWidget

from attnviz.compute.attention import ViewData
from attnviz.compute.pipeline import additive_features
from attnviz.state.run import HeadView
from attnviz.ui.app.view_base import message_label
from attnviz.ui.i18n import translate
from attnviz.ui.lifecycle import Retranslating
from attnviz.ui.tables.tensor_table import ArrayTableModel, TensorTableView
from attnviz.ui.theme import error_color, plot_colors
from attnviz.ui.views.pipeline_notes import format_value

__all__ = ["FeaturesBox", "ParametersBox"]


class FeaturesBox(Retranslating, QGroupBox):
    """tanh(W_q q + W_k k) of the query and key picked (``query``, ``key``), and the w_v-weighted
    features whose sum is their score, as bars (``plot``)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        row = QHBoxLayout()
        self.query = QSpinBox()
        self.key = QSpinBox()
        self.query_caption = QLabel()
        self.key_caption = QLabel()
        for label, spin in ((self.query_caption, self.query), (self.key_caption, self.key)):
            label.setBuddy(spin)
            row.addWidget(label)
            row.addWidget(spin)
            spin.valueChanged.connect(lambda _v: self._draw())
        row.addStretch(1)
        layout.addLayout(row)
        self.plot = pg.PlotWidget()
        self.plot.setMinimumHeight(150)
        self.plot.setMaximumHeight(230)
        self.plot.setMenuEnabled(False)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.hideButtons()
        self._legend = self.plot.addLegend(offset=(-4, 4))
        self.plot.addLine(y=0, pen=pg.mkPen("#888"))
        self._bars_hidden = pg.BarGraphItem(x=[], height=[], width=0.38, brush="#3a6fb0", name="tanh(W_q q + W_k k)")
        self._bars_weighted = pg.BarGraphItem(x=[], height=[], width=0.38, brush="#d08a1a", name="w_v ⊙ tanh(…)")
        self.plot.addItem(self._bars_hidden)
        self.plot.addItem(self._bars_weighted)
        layout.addWidget(self.plot)
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.text.setTextFormat(Qt.TextFormat.RichText)
        layout.addWidget(self.text)
        self._shown: tuple[ViewData, HeadView, int] | None = None
        self.setVisible(False)
        self.retranslate()
        self.restyle()

    def retranslate(self) -> None:
        self.setTitle(translate("PipelineView", "Additive attention: hidden features of one query–key pair"))
        self.setToolTip(
            translate("PipelineView", "tanh(W_q q + W_k k): the h hidden units whose w_v-weighted sum is the score")
        )
        self.query.setToolTip(translate("PipelineView", "Query index i"))
        self.key.setToolTip(translate("PipelineView", "Key index j"))
        self.query_caption.setText(translate("PipelineView", "&Query i"))
        self.key_caption.setText(translate("PipelineView", "&Key j"))
        self.plot.setLabel("bottom", translate("PipelineView", "hidden unit"))
        self._draw()

    def restyle(self) -> None:
        # The plot's background and axes are the view's (``SessionView.own_plot``); the legend's
        # labels drawn already keep their colour: set it on them too.
        foreground = plot_colors().foreground
        self._legend.setLabelTextColor(foreground)
        for _sample, label in self._legend.items:
            label.setText(label.text, color=foreground)

    def show_pair(self, view: ViewData | None, head: HeadView | None, batch: int, additive: bool) -> None:
        """The features of ``view``'s additive scoring of ``head``, batch element ``batch`` (hidden
        unless ``additive`` and the result has W_q)."""
        shown = additive and view is not None and head is not None and "W_q" in view.params
        self.setVisible(shown)
        if not shown or view is None or head is None:
            self._shown = None
            return
        self._shown = (view, head, batch)
        for spin, n in ((self.query, head.n_queries), (self.key, head.n_keys)):
            spin.blockSignals(True)
            spin.setRange(0, max(n - 1, 0))
            spin.blockSignals(False)
        self._draw()

    def _draw(self) -> None:
        if self._shown is None:
            return
        view, head, b = self._shown
        i, j = self.query.value(), self.key.value()
        try:
            hidden, weighted = additive_features(view.params, head.queries[b, i], head.keys[b, j])
        except (KeyError, ValueError, IndexError) as exc:
            self.text.setText(
                f"<span style='color:{error_color()}'>"
                + translate("PipelineView", "cannot compute the features: {error}").format(error=exc)
                + "</span>"
            )
            self._bars_hidden.setOpts(x=[], height=[])
            self._bars_weighted.setOpts(x=[], height=[])
            return
        x = np.arange(hidden.size, dtype=np.float64)
        self._bars_hidden.setOpts(x=x - 0.2, height=hidden)
        self._bars_weighted.setOpts(x=x + 0.2, height=weighted)
        self.plot.getPlotItem().getAxis("bottom").setTicks([[(float(k), str(k)) for k in range(hidden.size)]])
        self.plot.setXRange(-0.7, hidden.size - 0.3, padding=0)
        top = max(1.0, float(np.abs(weighted).max(initial=0.0)))
        self.plot.setYRange(-top, top, padding=0.05)
        score = float(weighted.sum())
        shown = float(view.raw_scores[b, i, j])
        self.text.setText(
            f"<i>a</i>(<b>q</b><sub>{i}</sub>, <b>k</b><sub>{j}</sub>) = ∑ <b>w</b><sub><i>v</i></sub> ⊙ "
            f"tanh(<b>W</b><sub><i>q</i></sub><b>q</b><sub>{i}</sub> + "
            f"<b>W</b><sub><i>k</i></sub><b>k</b><sub>{j}</sub>)"
            f" = <b>{format_value(score)}</b> &nbsp;"
            + translate("PipelineView", "(raw-score map, batch {b}: {value})").format(b=b, value=format_value(shown))
        )


class ParametersBox(Retranslating, QGroupBox):
    """The scoring function's learned parameters, one editable table per matrix (``models``):
    an edit hands every parameter, one block changed, to ``on_edit``."""

    #: In the order the formula reads them (W_q, W_k, w_v), whatever order they came in.
    ORDER = {"W_q": 0, "W_k": 1, "w_v": 2, "W": 3}

    def __init__(self, on_edit: Callable[[dict[str, np.ndarray]], None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._on_edit = on_edit
        layout = QVBoxLayout(self)
        self.error = message_label()
        layout.addWidget(self.error)
        self.tabs = QTabWidget()
        self.tabs.setMinimumHeight(200)
        layout.addWidget(self.tabs)
        self.models: dict[str, ArrayTableModel] = {}
        self.tables: dict[str, TensorTableView] = {}
        self._params: dict[str, np.ndarray] = {}
        self.setVisible(False)
        self.retranslate()

    def retranslate(self) -> None:
        self.setTitle(translate("PipelineView", "Learned parameters (edit a cell: the scores follow; Ctrl+Z undoes)"))
        self.tabs.setToolTip(
            translate(
                "PipelineView",
                "The scoring function's learned parameters, one tab per matrix (rows × columns as in "
                "nn.Linear: out × in)",
            )
        )
        for name, table in self.tables.items():
            table.setToolTip(self._tip(name))

    @staticmethod
    def _tip(name: str) -> str:
        return translate(
            "PipelineView", "{name}: type or paste numbers; each edit is one undo step in the main window"
        ).format(name=name)

    def show_error(self, text: str | None) -> None:
        self.error.setText(text or "")
        self.error.setVisible(bool(text))

    def show_params(self, params: dict[str, np.ndarray]) -> None:
        """Show ``params`` (hidden when there are none), keeping the tables when the names stay."""
        self.setVisible(bool(params))
        self._params = params
        if not params:
            return
        params = dict(sorted(params.items(), key=lambda kv: self.ORDER.get(kv[0], len(self.ORDER))))
        if list(params) == list(self.models):
            for name, model in self.models.items():
                model.set_array(np.asarray(params[name]))
            return
        self.tabs.clear()
        for table in self.tables.values():
            table.deleteLater()
        self.models.clear()
        self.tables.clear()
        for name, value in params.items():
            model = ArrayTableModel(
                np.asarray(value), value_name=name, row_label=lambda r: str(r), column_label=lambda c: str(c)
            )
            model.blockEdited.connect(lambda r, c, block, name=name: self._on_block(name, r, c, block))
            model.inputRejected.connect(self.show_error)
            table = TensorTableView(model)
            table.setToolTip(self._tip(name))
            self.models[name] = model
            self.tables[name] = table
            rows, cols = np.shape(value)
            self.tabs.addTab(table, f"{name} ({rows}×{cols})")

    def _on_block(self, name: str, row: int, col: int, block: object) -> None:
        if not self._params:
            return
        arr = np.asarray(block, dtype=np.float64)
        if not np.isfinite(arr).all():
            self.show_error(
                translate("PipelineView", "{name} must hold finite numbers: NaN and ±inf are not accepted here").format(
                    name=name
                )
            )
            return
        self.show_error(None)
        params = {k: np.array(v, dtype=np.float32, copy=True) for k, v in self._params.items()}
        target = params[name]
        rows, cols = arr.shape
        if row + rows > target.shape[0] or col + cols > target.shape[1]:
            self.show_error(
                translate("PipelineView", "the block does not fit into {name} {shape}").format(
                    name=name, shape=target.shape
                )
            )
            return
        target[row : row + rows, col : col + cols] = arr
        self._on_edit(params)
