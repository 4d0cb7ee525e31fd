"""Two runs of a model side by side: where their attention differs, and what an edit changes.

File › Compare with… compares the run on show with a capture file (``attnviz.compare``): a
layers x heads map of each head's largest weight difference, and for the head chosen (a click on
that map, or the head on show) the two runs' weights and their difference, with tokens.

A live model (``attnviz.show(model=model, inputs=inputs)``) is compared with itself re-run with
the edits made in the window: a click on a cell of the edited run's map flips that mask cell of
the call (an undoable edit of the run, kept in a saved session), the heads grid's context menu
ablates a head (undoable too). Each change re-runs the model on a worker thread (latest wins:
a change made while it runs replaces the one waiting), and the output change is shown beside
the maps: the largest change of the output and, for a language model, the KL divergence of the
next-token distribution per position and the top tokens before and after.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QGridLayout, QPushButton, QWidget

from attnviz.compute.axes import axis_labels
from attnviz.compute.jobs import Job
from attnviz.state.document import ReplaceState
from attnviz.state.run import Focus, ModelRun
from attnviz.text.tr import QT_TRANSLATE_NOOP, message
from attnviz.ui.app.host import Host, ToolPanel
from attnviz.ui.app.live_model import live_controller, live_models
from attnviz.ui.app.session import AppSession
from attnviz.ui.app.view_base import SessionView, titled_row, view_column
from attnviz.ui.heatmap import HeatmapWidget
from attnviz.ui.heatmap.paint import format_number
from attnviz.ui.i18n import tr_text, translate
from attnviz.ui.labels import WrappedStatusLabel, mark_error_label
from attnviz.ui.views.docks import DOCKS, RUN_COMPARE_DOCK

__all__ = ["RUN_COMPARE_DOCK", "Compared", "HeadMaps", "RunCompareView", "install_run_compare"]

# ---------------------------------------------------------------------- the work, off the GUI thread


@dataclass(frozen=True)
class Compared:
    """What the view shows: a comparison (``attnviz.compare.Comparison``), with the live
    model's re-run (``attnviz.intervene.Intervention``) when it compares that, the two runs'
    names (marked sources), or the error that stopped it."""

    comparison: Any = None
    intervention: Any = None
    labels: tuple[str, str] = ("", "")
    error: str = ""


_FILE_LABELS = (QT_TRANSLATE_NOOP("RunCompare", "on show"), QT_TRANSLATE_NOOP("RunCompare", "file"))
_LIVE_LABELS = (QT_TRANSLATE_NOOP("RunCompare", "captured"), QT_TRANSLATE_NOOP("RunCompare", "edited"))


class _Captures:
    """The capture file last compared with, read once while it is unchanged (each edit of the
    run compares again). Used on the comparison's own thread only."""

    def __init__(self) -> None:
        self._key: tuple[str, int, int] | None = None
        self._run: ModelRun | None = None

    def forget(self) -> None:
        """Let the file go (a memory-mapped capture keeps it open)."""
        self._key, self._run = None, None

    def run(self, path: str) -> ModelRun:
        from attnviz.compare import as_run

        try:
            info = os.stat(path)
            key = (path, info.st_mtime_ns, info.st_size)
        except OSError:
            key = None  # the reader says what is wrong, naming the file
        if key is None or key != self._key or self._run is None:
            self._key, self._run = None, None
            run = as_run(path)
            self._key, self._run = key, run
            return run
        return self._run


def _compare(state: Any, live: Any, captures: _Captures) -> Compared | None:
    """The comparison ``state`` asks for: with its capture file, else the live model run again
    with the edits (None: neither, or the run on show is not the live model's)."""
    from attnviz.compare import compare

    try:
        if state.compared_with is not None:
            return Compared(compare(state.run, captures.run(state.compared_with)), None, _FILE_LABELS)
        captures.forget()
        if live is None or len(state.run.calls) != len(live.run.calls):
            return None
        result = live.apply(live.edits_for(state.run, state.ablated_heads))
        return Compared(compare(live.run, result.after_capture.to_run(fidelity=False)), result, _LIVE_LABELS)
    except Exception as exc:  # noqa: BLE001 - shown in the view, never a traceback
        return Compared(error=f"{type(exc).__name__}: {exc}")


@dataclass(frozen=True)
class HeadMaps:
    """One head's maps of a comparison, computed off the GUI thread: the two runs' weights
    (``a``, ``b``: (L_q, L_k)), what each query attends in each (``keep_a``, ``keep_b``), their
    difference (``gap``, None for maps of different shapes) and what they are of (``of``:
    the comparison, call, head and batch element asked for)."""

    of: tuple[Any, int, int, int]
    a: np.ndarray
    b: np.ndarray
    keep_a: np.ndarray
    keep_b: np.ndarray
    gap: np.ndarray | None
    #: Why the maps were not made (a head over the memory budget): a marked text, else "".
    refusal: object = ""


class _Weights:
    """The heads' weights of the comparison last drawn, computed once each, one head at a time
    (a call's every head in float64 was gigabytes for long captures). Used on the maps' own
    thread only."""

    def __init__(self) -> None:
        self._of: Any = None
        self._weights: dict[tuple[int, int, int], np.ndarray] = {}

    def of(self, comparison: Any, side: int, index: int, call: Any, head: int) -> np.ndarray:
        """(B, L_q, L_k) weights of head ``head`` of ``call``, side ``side`` of ``comparison``."""
        from attnviz.compare import head_weights

        if comparison is not self._of:
            self._of, self._weights = comparison, {}
        key = (side, index, head)
        if key not in self._weights:
            # Only the heads on show are kept: another head of the same call is computed anew.
            self._weights = {k: v for k, v in self._weights.items() if k[0] != side}
            self._weights[key] = np.asarray(head_weights(call, head))
        return self._weights[key]


def _head_maps(comparison: Any, layer: int, head: int, batch: int, weights: _Weights) -> HeadMaps:
    """Call ``layer``'s head ``head`` (batch element ``batch``) in both runs of ``comparison``."""
    from attnviz.compare import elementwise_difference
    from attnviz.compute.call_mask import call_allowed

    diff = comparison.calls[layer]
    sides = ((0, comparison.a.calls[diff.index_a], diff.index_a), (1, comparison.b.calls[diff.index_b], diff.index_b))
    refusal = _over_budget(diff, head)
    if refusal:
        empty = np.zeros((0, 0))
        return HeadMaps((comparison, layer, head, batch), empty, empty, empty, empty, None, refusal)
    maps, keeps = [], []
    for side, call, index in sides:
        w = weights.of(comparison, side, index, call, min(head, call.shape[1] - 1))
        maps.append(w[min(batch, w.shape[0] - 1)])
        keep = call_allowed(call).numpy()
        keeps.append(keep[min(batch, keep.shape[0] - 1), min(head, keep.shape[1] - 1)])
    # As the overview counts it: NaN in both runs is no difference, in one of them infinite.
    gap = elementwise_difference(maps[1], maps[0]) if maps[0].shape == maps[1].shape else None
    return HeadMaps((comparison, layer, head, batch), maps[0], maps[1], keeps[0], keeps[1], gap)


def _over_budget(diff: Any, head: int) -> object:
    """Why head ``head``'s maps of a matched call cannot be made within the memory budget of this
    thread (the window's), or "": both runs' weights and masks, and their difference in float64."""
    from attnviz.engine.budget import default_budget, format_bytes

    batch, heads, n_q, n_k = (max(a, b) for a, b in zip(diff.shape_a, diff.shape_b, strict=True))
    cells = n_q * n_k
    need = 2 * batch * cells * 4 + 2 * batch * heads * cells + cells * 8
    budget = default_budget()
    if need <= budget:
        return ""
    return message(
        QT_TRANSLATE_NOOP(
            "RunCompare",
            "The maps of head {head} of {name} ({n_q} x {n_k}) need about {size}, more than the memory budget of "
            "{budget}: the call x head map above compares every head exactly, a block of rows at a time",
        ),
        head=head,
        name=diff.name,
        n_q=n_q,
        n_k=n_k,
        size=format_bytes(need),
        budget=format_bytes(budget),
    )


# ---------------------------------------------------------------------- the view


class RunCompareView(SessionView):
    """The comparison on show (``comparison``), its overview map (``overview``), the chosen
    call's maps (``map_a``, ``map_b``, ``map_diff``) and the output change (``output``)."""

    def __init__(self, session: AppSession, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self.comparison: Any = None
        self.intervention: Any = None
        self.labels: tuple[str, str] = (QT_TRANSLATE_NOOP("RunCompare", "A"), QT_TRANSLATE_NOOP("RunCompare", "B"))
        self.chosen: Focus | None = None
        self.maps: HeadMaps | None = None
        self.shown_count = 0

        layout = view_column(self)
        header, self.title = titled_row()
        self.cancel_button = QPushButton()
        self.cancel_button.setVisible(False)
        self.cancel_button.clicked.connect(self._cancel)
        header.addWidget(self.cancel_button)
        self.open_button = QPushButton()
        self.open_button.clicked.connect(self.choose_file)
        header.addWidget(self.open_button)
        self.close_button = QPushButton()
        self.close_button.setVisible(False)
        self.close_button.clicked.connect(self.stop_comparing_with_file)
        header.addWidget(self.close_button)
        layout.addLayout(header)
        # Not height-for-width (as a wrapped QLabel is): the tab's scroll area would size the view
        # by its preferred height, taller than the tab, while a message is shown.
        self.message = WrappedStatusLabel()
        mark_error_label(self.message)
        self.message.setVisible(False)
        layout.addWidget(self.message)
        # The overview and the output change on top, the chosen head's three maps below.
        grid = QGridLayout()
        self.overview = self.own_map(HeatmapWidget(), x_label="", y_label="")
        self.overview.annotate_limit = 0
        self.overview.setMinimumSize(220, 200)  # a title of two or three lines (presentation type) and its rows
        self.overview.setMaximumHeight(280)
        self.overview.set_colorbar_visible(False)  # its range is in its title
        self.overview.cellClicked.connect(self._choose)
        grid.addWidget(self.overview, 0, 0)
        self.output = WrappedStatusLabel()
        self.output.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.output.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        grid.addWidget(self.output, 0, 1, 1, 2, Qt.AlignmentFlag.AlignTop)
        self.map_a = self.own_map(HeatmapWidget(), x_label="", y_label="")
        self.map_b = self.own_map(HeatmapWidget(), x_label="", y_label="")
        self.map_diff = self.own_map(HeatmapWidget(), x_label="", y_label="")
        for column, heatmap in enumerate((self.map_a, self.map_b, self.map_diff)):
            heatmap.setMinimumSize(170, 170)
            heatmap.annotate_limit = 0
            grid.addWidget(heatmap, 1, column)
            grid.setColumnStretch(column, 1)
        grid.setRowStretch(0, 2)
        grid.setRowStretch(1, 5)
        self.map_a.set_colorbar_visible(False)  # the same weight scale as the edited run's map
        self.map_b.cellClicked.connect(self._flip_cell)
        layout.addLayout(grid, 1)

        captures = _Captures()

        def compared(job: Job[None]) -> Compared | None:
            controller = live_controller(session)
            return _compare(job.snapshot.state, None if controller is None else controller.live, captures)

        self.compared = self.while_shown(session.register("run comparison", compared, follows="document"))
        self.compared.on_result(self.show_compared)
        self.compared.on_failure(self._failed)
        self.compared.busyChanged.connect(self._busy)
        live_models(session).attached.connect(self.compared.request)

        weights = _Weights()

        def head_maps(job: Job[tuple[Any, int, int, int] | None]) -> HeadMaps | None:
            return None if job.params is None else _head_maps(*job.params, weights)

        # The chosen head's weights and masks (torch): never on the GUI thread, asked for by draw().
        self.head_maps = self.while_shown(session.register("run comparison maps", head_maps, auto=False))
        self.head_maps.on_result(self._show_maps)
        self.head_maps.on_failure(self._failed)
        self.retranslate()
        self.request_draw()

    # ------------------------------------------------------------------ sources

    def choose_file(self) -> None:
        """Ask for a capture file and compare the run on show with it."""
        path, _filter = QFileDialog.getOpenFileName(
            self,
            translate("RunCompare", "Compare with a capture"),
            "",
            translate("RunCompare", "Captures (*.attnviz-capture);;All files (*)"),
        )
        if path:
            self.compare_with(path)

    def compare_with(self, path: str | os.PathLike[str]) -> None:
        """Compare the run on show with the capture file ``path`` (an undoable edit; the file is
        read and compared on the comparison's thread, again at each edit of the run)."""
        state = self.session.document.state
        self.session.push(
            ReplaceState(
                replace(state, compared_with=os.path.abspath(os.fspath(path))),
                QT_TRANSLATE_NOOP("RunCompare", "Compare with a capture file"),
            )
        )
        self._show_message(translate("RunCompare", "Comparing with {name}…").format(name=os.fspath(path)), error=False)

    def stop_comparing_with_file(self) -> None:
        """Compare no more with the capture file (an undoable edit): a live model's run again."""
        state = self.session.document.state
        if state.compared_with is not None:
            self.session.push(
                ReplaceState(
                    replace(state, compared_with=None),
                    QT_TRANSLATE_NOOP("RunCompare", "Stop comparing with the capture file"),
                )
            )

    def show_compared(self, compared: Compared | None) -> None:
        if compared is None:
            self.intervention = None
            self.set_comparison(None)
        elif compared.error:
            self._failed(compared.error)
        else:
            self.intervention = compared.intervention
            self.labels = compared.labels
            self.set_comparison(compared.comparison)

    def set_comparison(self, comparison: Any) -> None:
        self.comparison = comparison
        self._show_message(None)
        self.shown_count += 1
        self.request_draw()

    @property
    def maps_current(self) -> bool:
        """Whether the chosen head's maps drawn are of the comparison on show."""
        return self.maps is not None and self.comparison is not None and self.maps.of[0] is self.comparison

    def _show_maps(self, maps: HeadMaps | None) -> None:
        self.maps = maps
        self.request_draw()

    def _failed(self, error: str) -> None:
        self._show_message(error, error=True)

    def _busy(self, busy: bool) -> None:
        file = self.session.document.state.compared_with is not None
        live = not file and live_controller(self.session) is not None
        busy = busy and (file or live)  # with neither, nothing runs: nothing to say
        self.cancel_button.setVisible(busy)
        if busy:
            self._show_message(
                translate("RunCompare", "Running the model again with the edits…")
                if live
                else translate("RunCompare", "Comparing with the capture file…"),
                error=False,
            )

    def _cancel(self) -> None:
        """Drop the comparison asked for: its result is not shown (a forward already running
        ends on the worker, unseen); the view keeps the last result."""
        self.compared.cancel()
        self.cancel_button.setVisible(False)
        self._show_message(translate("RunCompare", "Cancelled: the maps show the last run that finished"), error=False)

    # ------------------------------------------------------------------ choosing and editing

    def _choose(self, row: int, col: int, _modifiers: object = None) -> None:
        if self.comparison is None or row >= len(self.comparison.calls):
            return
        self.chosen = Focus(row, col)
        self.request_draw()

    def _focus(self) -> Focus:
        if self.chosen is not None:
            return self.chosen
        return self.session.selection.focus

    def _flip_cell(self, row: int, col: int, _modifiers: object = None) -> None:
        controller = live_controller(self.session)
        if controller is None or self.comparison is None:
            return
        focus = self._focus()
        if focus.layer >= len(self.comparison.calls):
            return
        batch = self._batch(self.comparison.calls[focus.layer].shape_a[0])
        controller.toggle_mask_cell(focus.layer, batch, focus.head, row, col)

    def _batch(self, size: int) -> int:
        return min(self.session.selection.batch, size - 1)

    # ------------------------------------------------------------------ drawing

    def retranslate(self) -> None:
        self.open_button.setText(translate("RunCompare", "Compare with…"))
        self.cancel_button.setText(translate("RunCompare", "Cancel"))
        self.close_button.setText(translate("RunCompare", "Stop comparing with the file"))
        self.open_button.setToolTip(tr_text(DOCKS[RUN_COMPARE_DOCK].tip))
        self.map_b.setToolTip(
            translate("RunCompare", "With a live model: click a cell to flip that mask cell and run the model again")
        )
        self._show_texts()

    def draw(self) -> None:
        self._show_texts()
        comparison = self.comparison
        if comparison is None or not comparison.calls:
            return
        from attnviz.compare import difference_map

        table, names = difference_map(comparison)
        finite = table[np.isfinite(table)]
        high = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
        self.overview.set_data(
            np.nan_to_num(table, nan=0.0, posinf=high),
            levels=(0.0, high),
            row_labels=[str(i) for i in range(len(names))],
            col_labels=[f"h{h}" for h in range(table.shape[1])],
            hover=lambda r, c: translate(
                "RunCompare", "call {index} ({call}), head {h}: weights differ by up to {value}; click to show it"
            ).format(index=r, call=names[r], h=c, value=format_number(float(table[r, c]))),
        )
        self.overview.set_title(translate("RunCompare", "call × head, up to {value}").format(value=format_number(high)))
        focus = self._focus()
        if focus.layer >= len(comparison.calls):
            return
        diff = comparison.calls[focus.layer]
        call_a = comparison.a.calls[diff.index_a]
        head = min(focus.head, diff.shape_a[1] - 1)
        b = self._batch(diff.shape_a[0])
        maps = self.maps
        if maps is None or maps.of[0] is not comparison or maps.of[1:] != (focus.layer, head, b):
            self.head_maps.request((comparison, focus.layer, head, b))
        elif maps.refusal:
            self._show_message(tr_text(maps.refusal), error=False)
        else:
            rows, cols = axis_labels(call_a.query_tokens, call_a.key_tokens, b, maps.a.shape[0], maps.a.shape[1])
            for heatmap, values, keep, label in zip(
                (self.map_a, self.map_b), (maps.a, maps.b), (maps.keep_a, maps.keep_b), self.labels
            ):
                heatmap.set_data(values, mask=keep, row_labels=rows, col_labels=cols)
                heatmap.set_title(tr_text(label))
            if maps.gap is not None:
                # Drawn at the top of the scale where infinite (NaN in one run), and said in the title.
                finite = maps.gap[np.isfinite(maps.gap)]
                top = float(finite.max()) if finite.size else 0.0
                self.map_diff.set_data(
                    np.minimum(maps.gap, top), levels=(0.0, max(top, 1e-12)), row_labels=rows, col_labels=cols
                )
                largest = math.inf if np.isinf(maps.gap).any() else top
                self.map_diff.set_title(
                    translate("RunCompare", "difference, up to {value}").format(value=format_number(largest))
                )
        worst = ", ".join(f"{c.index_a} {c.name} ({format_number(c.max_weight_diff)})" for c in comparison.worst(3))
        lines = [
            translate(
                "RunCompare", "Call {index} ({name}), head {h}, batch {b}: {a}, {b_run} and |{b_run} − {a}|"
            ).format(
                index=focus.layer,
                name=diff.name,
                h=head,
                b=b,
                a=tr_text(self.labels[0]),
                b_run=tr_text(self.labels[1]),
            ),
            translate("RunCompare", "Differ most: {calls}").format(calls=worst or "—"),
        ]
        output = self._output_text(b)
        self.output.setText("\n".join([*lines, output] if output else lines))

    def _output_text(self, b: int) -> str:
        result = self.intervention
        if result is None:
            return ""
        parts = [
            translate("RunCompare", "The model's output changed by up to {value}").format(
                value=format_number(result.max_output_diff)
            )
        ]
        if result.edits == ():
            parts.append(translate("RunCompare", "(no edits: the captured run)"))
        if result.kl is not None:
            kl = result.kl[min(b, result.kl.shape[0] - 1)]
            parts.append(
                translate("RunCompare", "KL per position, batch {b}: {values}").format(
                    b=b, values=" ".join(format_number(float(x)) for x in kl)
                )
            )
            if result.top_before is not None and result.top_after is not None:
                position = int(kl.argmax())
                before = _top_text(result.top_before, b, position)
                after = _top_text(result.top_after, b, position)
                parts.append(
                    translate("RunCompare", "position {p}: next tokens {before} → {after}").format(
                        p=position, before=before, after=after
                    )
                )
        return "\n".join(parts)

    def _show_texts(self) -> None:
        self.close_button.setVisible(self.session.document.state.compared_with is not None)
        comparison = self.comparison
        # Empty maps say nothing: until there is a comparison only the line saying how to make one.
        for heatmap in (self.overview, self.map_a, self.map_b, self.map_diff):
            heatmap.setVisible(comparison is not None)
        if comparison is None:
            self.title.setText(
                translate(
                    "RunCompare",
                    "No comparison yet: File › Compare with… a capture, or attnviz.show(model=model, inputs=inputs)",
                )
            )
            return
        summary = translate(
            "RunCompare", "{a} vs {b}: {n} calls, largest weight difference {w}, heads' output difference {o}"
        ).format(
            a=tr_text(self.labels[0]),
            b=tr_text(self.labels[1]),
            n=len(comparison.calls),
            w=format_number(comparison.max_weight_diff),
            o=format_number(comparison.max_output_diff),
        )
        unmatched = len(comparison.only_a) + len(comparison.only_b)
        if unmatched:
            summary += "; " + translate("RunCompare", "{n} calls unmatched").format(n=unmatched)
        self.title.setText(summary)

    def _show_message(self, text: str | None, *, error: bool = True) -> None:
        self.message.setVisible(bool(text))
        if text:
            self.message.setText(("⚠ " if error else "") + text)


def _top_text(top: tuple[Any, Any], b: int, position: int) -> str:
    ids, probs = top
    row_ids, row_probs = ids[min(b, ids.shape[0] - 1), position], probs[min(b, probs.shape[0] - 1), position]
    return ", ".join(f"{int(i)} ({float(p):.2f})" for i, p in zip(row_ids[:3], row_probs[:3]))


def install_run_compare(session: AppSession, host: Host) -> ToolPanel:
    """Add the comparison as a hidden tab, and File › Compare with… (which shows it)."""
    panel = host.add_dock(DOCKS[RUN_COMPARE_DOCK], lambda: RunCompareView(session))

    def compare_with() -> None:
        panel.show()
        panel.raise_()
        view = panel.view()
        if isinstance(view, RunCompareView):
            view.choose_file()

    add_action = getattr(host, "add_action", None)
    text = QT_TRANSLATE_NOOP("RunCompare", "Compare &with…")
    tip = QT_TRANSLATE_NOOP("RunCompare", "Compare the run on show with a capture file, call by call")
    menu = host.menu("file")
    # Above the separator before Quit (Quit stays last), below Open, Save and Export.
    anchor = next((a for a in reversed(menu.actions()) if a.isSeparator()), None)
    action = (
        add_action("file", text, compare_with, tip=tip)
        if add_action is not None
        else menu.addAction(tr_text(text), compare_with)
    )
    if anchor is not None:
        menu.removeAction(action)
        menu.insertAction(anchor, action)
    return panel
