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

import concurrent.futures
import os
import threading
import weakref
from dataclasses import replace
from typing import Any

import numpy as np
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QUndoCommand
from PySide6.QtWidgets import QFileDialog, QGridLayout, QLabel, QPushButton, QWidget

from attnviz.compute.axes import axis_labels
from attnviz.document import ReplaceState
from attnviz.model_run import Focus, ModelRun
from attnviz.tr import QT_TRANSLATE_NOOP
from attnviz.ui.app.host import Host, ToolPanel
from attnviz.ui.app.session import AppSession
from attnviz.ui.app.view_base import SessionView, message_label, titled_row, view_column
from attnviz.ui.heatmap import HeatmapWidget
from attnviz.ui.heatmap.paint import format_number
from attnviz.ui.i18n import tr_text, translate
from attnviz.ui.views.docks import DOCKS, RUN_COMPARE_DOCK

__all__ = [
    "RUN_COMPARE_DOCK",
    "LiveController",
    "RunCompareView",
    "attach_live_model",
    "install_run_compare",
    "live_controller",
]

# ---------------------------------------------------------------------- the work, off the GUI thread


class _Jobs(QObject):
    """One worker thread; the latest job wins (a job submitted while another runs replaces the
    one waiting, and a result is delivered only if no job was submitted after it)."""

    finished = Signal(int, object, str)  # generation, result, error
    _done = Signal(int, object, str)  # from the worker, queued to the GUI thread

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        # Checked again on the GUI thread: a result queued before a cancel or a newer job is dropped.
        self._done.connect(self._deliver)
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="attnviz-compare")
        self._lock = threading.Lock()
        self.generation = 0

    def submit(self, job: Any) -> int:
        with self._lock:
            self.generation += 1
            generation = self.generation
        self._pool.submit(self._run, generation, job)
        return generation

    def cancel(self) -> None:
        """Forget what is waiting or running: its result will not be delivered."""
        with self._lock:
            self.generation += 1

    def _run(self, generation: int, job: Any) -> None:
        if generation != self.generation:  # replaced while it waited
            return
        try:
            result, error = job(), ""
        except Exception as exc:  # noqa: BLE001 - shown in the view, never a traceback
            result, error = None, f"{type(exc).__name__}: {exc}"
        if generation == self.generation:
            self._done.emit(generation, result, error)

    def _deliver(self, generation: int, result: Any, error: str) -> None:
        if generation == self.generation:
            self.finished.emit(generation, result, error)

    def shutdown(self) -> None:
        self.cancel()
        self._pool.shutdown(wait=False, cancel_futures=True)


class LiveController(QObject):
    """A live model beside a session: the edits the window makes to its run (masks, in the
    document) and the heads ablated (``ablations``, undoable), re-run at each change."""

    #: (Intervention, Comparison of the captured run with the edited one), or an error text.
    resultReady = Signal(object, object)
    failed = Signal(str)
    started = Signal()
    cancelled = Signal()

    def __init__(self, session: AppSession, live: Any) -> None:
        super().__init__(session)
        self.session = session
        self.live = live
        self.ablations: set[tuple[int, int]] = set()
        self.latest: tuple[Any, Any] | None = None
        #: A re-run asked for and not shown yet (running, or waiting for the one running).
        self.running = False
        self._jobs = _Jobs(self)
        self._jobs.finished.connect(self._finished)
        session.documentChanged.connect(lambda _edit: self.rerun())
        session.destroyed.connect(self._jobs.shutdown)

    def is_ablated(self, layer: int, head: int) -> bool:
        return (layer, head) in self.ablations

    def toggle_ablation(self, layer: int, head: int) -> None:
        """Ablate (or restore) ``head`` of call ``layer``: an undoable step."""
        self.session.undo_stack.push(_Ablate(self, layer, head))

    def toggle_mask_cell(self, layer: int, batch: int, head: int, query: int, key: int) -> None:
        """Flip one mask cell of call ``layer`` in the run on show: an undoable edit."""
        from attnviz.intervene import toggled_mask

        state = self.session.document.state
        run = toggled_mask(state.run, layer, batch, head, query, key)
        self.session.push(
            ReplaceState(
                replace(state, run=run),
                QT_TRANSLATE_NOOP("RunCompare", "Flip a mask cell"),
                Focus(layer, head),
            )
        )

    def rerun(self) -> None:
        """Run the model again with the edits as they are now (latest wins)."""
        run = self.session.document.state.run
        live = self.live
        if len(run.calls) != len(live.run.calls):  # another run is on show: not this model's
            return
        edits = live.edits_for(run, self.ablations)
        self.running = True
        self.started.emit()
        self._jobs.submit(lambda: _rerun(live, edits))

    def cancel(self) -> None:
        """Drop the re-run asked for: its result is not shown (a forward already running ends
        on the worker, unseen); the view keeps the last result."""
        if self.running:
            self._jobs.cancel()
            self.running = False
            self.cancelled.emit()

    def _finished(self, generation: int, result: Any, error: str) -> None:
        self.running = False
        if error:
            self.failed.emit(error)
            return
        self.latest = result
        self.resultReady.emit(*result)

    def shutdown(self) -> None:
        self._jobs.shutdown()


def _rerun(live: Any, edits: list[Any]) -> tuple[Any, Any]:
    from attnviz.compare import compare

    result = live.apply(edits)
    return result, compare(live.run, result.after_capture.to_run(fidelity=False))


class _Ablate(QUndoCommand):
    def __init__(self, controller: LiveController, layer: int, head: int) -> None:
        ablated = (layer, head) in controller.ablations
        text = (
            translate("RunCompare", "Restore head {h} of call {c}")
            if ablated
            else translate("RunCompare", "Ablate head {h} of call {c}")
        )
        super().__init__(text.format(h=head, c=layer))
        self._controller = weakref.ref(controller)
        self._key = (layer, head)

    def _flip(self) -> None:
        controller = self._controller()
        if controller is None:
            return
        controller.ablations ^= {self._key}
        controller.rerun()

    def redo(self) -> None:
        self._flip()

    def undo(self) -> None:
        self._flip()


_CONTROLLERS: weakref.WeakKeyDictionary[AppSession, LiveController] = weakref.WeakKeyDictionary()


def attach_live_model(session: AppSession, live: Any) -> LiveController:
    """Keep ``live`` (an ``attnviz.intervene.LiveModel``) beside ``session``: edits re-run it."""
    old = _CONTROLLERS.get(session)
    if old is not None:
        old.shutdown()
    controller = _CONTROLLERS[session] = LiveController(session, live)
    return controller


def live_controller(session: AppSession) -> LiveController | None:
    """The live model kept beside ``session``, if any."""
    return _CONTROLLERS.get(session)


# ---------------------------------------------------------------------- the view


class RunCompareView(SessionView):
    """The comparison on show (``comparison``), its overview map (``overview``), the chosen
    call's maps (``map_a``, ``map_b``, ``map_diff``) and the output change (``output``)."""

    def __init__(self, session: AppSession, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self.comparison: Any = None
        self.intervention: Any = None
        self.labels = (QT_TRANSLATE_NOOP("RunCompare", "A"), QT_TRANSLATE_NOOP("RunCompare", "B"))
        self.chosen: Focus | None = None
        self._weights: dict[tuple[int, int], np.ndarray] = {}
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
        layout.addLayout(header)
        self.message = message_label()
        layout.addWidget(self.message)
        # The overview and the output change on top, the chosen head's three maps below.
        grid = QGridLayout()
        self.overview = self.own_map(HeatmapWidget(), x_label="", y_label="")
        self.overview.annotate_limit = 0
        self.overview.setMinimumSize(220, 150)
        self.overview.setMaximumHeight(240)
        self.overview.set_colorbar_visible(False)  # its range is in its title
        self.overview.cellClicked.connect(self._choose)
        grid.addWidget(self.overview, 0, 0)
        self.output = QLabel()
        self.output.setWordWrap(True)
        self.output.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.output.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        grid.addWidget(self.output, 0, 1, 1, 2)
        self.map_a = self.own_map(HeatmapWidget(), x_label="", y_label="")
        self.map_b = self.own_map(HeatmapWidget(), x_label="", y_label="")
        self.map_diff = self.own_map(HeatmapWidget(), x_label="", y_label="")
        for column, heatmap in enumerate((self.map_a, self.map_b, self.map_diff)):
            heatmap.setMinimumSize(170, 170)
            heatmap.annotate_limit = 0
            grid.addWidget(heatmap, 1, column)
            grid.setColumnStretch(column, 1)
        grid.setRowStretch(0, 1)
        grid.setRowStretch(1, 4)
        self.map_a.set_colorbar_visible(False)  # the same weight scale as the edited run's map
        self.map_b.cellClicked.connect(self._flip_cell)
        layout.addLayout(grid, 1)

        controller = live_controller(session)
        if controller is not None:
            self.follow(controller)
        self.retranslate()
        self.request_draw()

    # ------------------------------------------------------------------ sources

    def follow(self, controller: LiveController) -> None:
        """Show the live model's re-runs."""
        controller.resultReady.connect(self.show_intervention)
        controller.failed.connect(self._failed)
        controller.started.connect(self._running)
        controller.cancelled.connect(self._stopped)
        if controller.latest is not None:
            self.show_intervention(*controller.latest)
        else:
            controller.rerun()

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
        """Compare the run on show with the capture file ``path`` (read and compared on a worker)."""
        run = self.session.document.state.run
        self._jobs().submit(lambda: _compare_file(run, path))
        self._show_message(translate("RunCompare", "Comparing with {name}…").format(name=os.fspath(path)), error=False)

    def _jobs(self) -> _Jobs:
        jobs = getattr(self, "_file_jobs", None)
        if jobs is None:
            jobs = self._file_jobs = _Jobs(self)
            jobs.finished.connect(self._file_compared)
            self.destroyed.connect(jobs.shutdown)
        return jobs

    def _file_compared(self, _generation: int, result: Any, error: str) -> None:
        if error:
            self._failed(error)
            return
        self.intervention = None
        self.labels = (QT_TRANSLATE_NOOP("RunCompare", "on show"), QT_TRANSLATE_NOOP("RunCompare", "file"))
        self.set_comparison(result)

    def show_intervention(self, intervention: Any, comparison: Any) -> None:
        self.intervention = intervention
        self.labels = (QT_TRANSLATE_NOOP("RunCompare", "captured"), QT_TRANSLATE_NOOP("RunCompare", "edited"))
        self.set_comparison(comparison)

    def set_comparison(self, comparison: Any) -> None:
        self.comparison = comparison
        self._weights.clear()
        self.cancel_button.setVisible(False)
        self._show_message(None)
        self.shown_count += 1
        self.request_draw()

    def _failed(self, error: str) -> None:
        self.cancel_button.setVisible(False)
        self._show_message(error, error=True)

    def _running(self) -> None:
        self.cancel_button.setVisible(True)
        self._show_message(translate("RunCompare", "Running the model again with the edits…"), error=False)

    def _stopped(self) -> None:
        self.cancel_button.setVisible(False)
        self._show_message(translate("RunCompare", "Cancelled: the maps show the last run that finished"), error=False)

    def _cancel(self) -> None:
        controller = live_controller(self.session)
        if controller is not None:
            controller.cancel()

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
        self.cancel_button.setText(translate("RunCompare", "Cancel the re-run"))
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
        from attnviz.compare import call_weights, difference_map

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
        self.overview.set_title(
            translate("RunCompare", "largest difference, up to {value}").format(value=format_number(high))
        )
        focus = self._focus()
        if focus.layer >= len(comparison.calls):
            return
        diff = comparison.calls[focus.layer]
        call_a, call_b = comparison.a.calls[diff.index_a], comparison.b.calls[diff.index_b]
        head = min(focus.head, diff.shape_a[1] - 1)
        b = self._batch(diff.shape_a[0])
        maps: list[np.ndarray] = []
        for side, call, index in (("a", call_a, diff.index_a), ("b", call_b, diff.index_b)):
            key = (0 if side == "a" else 1, index)
            if key not in self._weights:
                self._weights[key] = call_weights(call)
            weights = self._weights[key]
            maps.append(weights[min(b, weights.shape[0] - 1), min(head, weights.shape[1] - 1)])
        rows, cols = axis_labels(call_a.query_tokens, call_a.key_tokens, b, maps[0].shape[0], maps[0].shape[1])
        from attnviz.intervene import run_call_keep

        keeps = [run_call_keep(c)[min(b, c.shape[0] - 1), min(head, c.shape[1] - 1)] for c in (call_a, call_b)]
        for heatmap, values, keep, label in zip((self.map_a, self.map_b), maps, keeps, self.labels):
            heatmap.set_data(values, mask=keep, row_labels=rows, col_labels=cols)
            heatmap.set_title(tr_text(label))
        if maps[0].shape == maps[1].shape:
            gap = np.abs(maps[1] - maps[0])
            top = float(np.nanmax(gap)) if gap.size and np.isfinite(gap).any() else 0.0
            self.map_diff.set_data(gap, levels=(0.0, max(top, 1e-12)), row_labels=rows, col_labels=cols)
            self.map_diff.set_title(
                translate("RunCompare", "difference, up to {value}").format(value=format_number(top))
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
        comparison = self.comparison
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


def _compare_file(run: ModelRun, path: str | os.PathLike[str]) -> Any:
    from attnviz.compare import compare

    return compare(run, path)


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
