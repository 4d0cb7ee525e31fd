"""File > Export: the weight heatmaps as an image, the weights or the output as CSV or .npy.

What is exported is the last result on show (``AppSession.current_outcome``): none yet, or an
error, is said in a message box instead.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QMenu

from attnviz.compute import ViewData
from attnviz.io.errors import AttnvizFileError
from attnviz.io.names import display_name, display_path
from attnviz.text.tr import QT_TRANSLATE_NOOP
from attnviz.ui.files.context import FileContext
from attnviz.ui.files.export import ExportError, build_weights_figure, export_view_arrays, figure_subtitle
from attnviz.ui.i18n import error_text, tr_text, translate

__all__ = ["WHAT_NAMES", "Exports"]

#: What the exports and refusals call each result array.
WHAT_NAMES = {
    "attention map": QT_TRANSLATE_NOOP("FileActions", "attention map"),
    "weights": QT_TRANSLATE_NOOP("FileActions", "weights"),
    "output": QT_TRANSLATE_NOOP("FileActions", "output"),
}


#: The app shows every batch element up to this many (results_panel.MAX_GRID), else the selected one.
_MAX_FIGURE_BATCH = 4


class Exports:
    """The Export menu and what its entries write."""

    def __init__(self, context: FileContext) -> None:
        self.context = context
        self.menu = QMenu(context.window)
        self.menu.setToolTipsVisible(True)
        self.actions: dict[str, QAction] = {}
        for key, slot in (
            ("weights.png", lambda: self.export_weights_image(suffix=".png")),
            ("weights.svg", lambda: self.export_weights_image(suffix=".svg")),
            ("weights.csv", lambda: self.export_array("weights", ".csv")),
            ("weights.npy", lambda: self.export_array("weights", ".npy")),
            ("output.csv", lambda: self.export_array("output", ".csv")),
            ("output.npy", lambda: self.export_array("output", ".npy")),
        ):
            action = QAction(context.window)
            action.triggered.connect(lambda _checked=False, f=slot: f())
            self.menu.addAction(action)
            self.actions[key] = action

    def retranslate(self) -> None:
        for key, text, tip in (
            (
                "weights.png",
                translate("FileActions", "Weights heatmaps as &PNG…"),
                translate("FileActions", "The attention-weight heatmaps as a PNG image"),
            ),
            (
                "weights.svg",
                translate("FileActions", "Weights heatmaps as &SVG…"),
                translate("FileActions", "The attention-weight heatmaps as an SVG drawing"),
            ),
            (
                "weights.csv",
                translate("FileActions", "Weights as &CSV…"),
                translate("FileActions", "Attention weights, one block per batch element"),
            ),
            (
                "weights.npy",
                translate("FileActions", "Weights as &NumPy .npy…"),
                translate("FileActions", "Attention weights (batch, queries, keys)"),
            ),
            (
                "output.csv",
                translate("FileActions", "Output as C&SV…"),
                translate("FileActions", "Attention output, one block per batch element"),
            ),
            (
                "output.npy",
                translate("FileActions", "Output as N&umPy .npy…"),
                translate("FileActions", "Attention output (batch, queries, d_v)"),
            ),
        ):
            action = self.actions[key]
            action.setText(text)
            action.setToolTip(tip)
            action.setStatusTip(tip)
        self.menu.setTitle(translate("FileActions", "&Export"))

    def _current_view(self, what: str) -> ViewData | None:
        outcome = self.context.session.current_outcome()
        name = tr_text(WHAT_NAMES.get(what, what))
        if outcome is None:
            self.context.refuse(
                translate("FileActions", "Nothing to export"),
                translate(
                    "FileActions",
                    "There is no {what} for the current inputs yet; wait until the status bar says “up to date”.",
                ).format(what=name),
            )
            return None
        if outcome.view is None:
            why = translate("FileActions", "The current inputs give an error, so there is no {what}: {error}")
            self.context.refuse(
                translate("FileActions", "Nothing to export"), why.format(what=name, error=tr_text(outcome.error))
            )
            return None
        return outcome.view

    def _ask_export_path(self, title: str, default_name: str, file_filter: str, suffix: str) -> Path | None:
        start = Path(self.context.start_dir()) / default_name
        chosen, _filter = QFileDialog.getSaveFileName(self.context.window, title, str(start), file_filter)
        if not chosen:
            return None
        path = Path(chosen)
        return path if path.suffix.lower() == suffix else path.with_name(path.name + suffix)

    def export_weights_image(self, path: str | os.PathLike[str] | None = None, *, suffix: str = ".png") -> bool:
        """The weight heatmaps as shown (every batch element up to 4, else the selected one)."""
        view = self._current_view("attention map")
        if view is None:
            return False
        file_filter = (
            translate("FileActions", "PNG image") + " (*.png)"
            if suffix == ".png"
            else translate("FileActions", "SVG drawing") + " (*.svg)"
        )
        file_path = self._export_target(
            path, translate("FileActions", "Export weights heatmaps"), "weights" + suffix, file_filter, suffix
        )
        if file_path is None:
            return False
        n_batch = int(view.weights.shape[0])
        selected = min(self.context.session.selection.batch, n_batch - 1)
        batches = list(range(n_batch)) if n_batch <= _MAX_FIGURE_BATCH else [selected]
        title = translate("FileActions", "{name}: attention weights").format(
            name=display_name(self.context.current_path) if self.context.current_path else "attnviz"
        )
        subtitle = figure_subtitle(self.context.session.document.state, self.context.session.selection.focus)
        colormap = self.context.session.colormap
        try:
            figure = build_weights_figure(view, batches=batches, title=title, subtitle=subtitle, colormap=colormap)
            try:
                figure.save(file_path)
            finally:
                figure.close()
        except (ExportError, ValueError) as exc:
            self.context.refuse(translate("FileActions", "Cannot export"), error_text(exc))
            return False
        self.context.remember_dir(file_path)
        self.context.status(translate("FileActions", "Exported {path}").format(path=display_path(file_path)))
        return True

    def _export_target(
        self, path: str | os.PathLike[str] | None, title: str, default_name: str, file_filter: str, suffix: str
    ) -> Path | None:
        """Where an export goes: ``path``, else the one asked for; None when the dialog was
        cancelled or the path is refused (and said so)."""
        if path is None:
            path = self._ask_export_path(title, default_name, file_filter, suffix)
            if path is None:
                return None
        file_path = Path(path)
        return None if self._output_refused(file_path) else file_path

    def _output_refused(self, file_path: Path) -> bool:
        """Refuse (and say so) an export over the file on show or the capture it is compared with,
        a FIFO, a device or a folder (``io.paths.check_output``); False when it may be written."""
        from attnviz.io.paths import OutputRefused, check_output

        compared = self.context.session.document.state.compared_with
        try:
            check_output(file_path, (self.context.current_path, compared))
        except OutputRefused as exc:
            self.context.refuse(
                translate("FileActions", "Cannot export"), f"{display_name(file_path)}: {tr_text(exc.strerror)}"
            )
            return True
        return False

    def export_array(self, what: str, suffix: str, path: str | os.PathLike[str] | None = None) -> bool:
        """Export ``what`` ("weights" or "output") of every batch element as CSV or .npy."""
        view = self._current_view(what)
        if view is None:
            return False
        file_filter = "CSV (*.csv)" if suffix == ".csv" else translate("FileActions", "NumPy array") + " (*.npy)"
        file_path = self._export_target(
            path,
            translate("FileActions", "Export {what}").format(what=tr_text(WHAT_NAMES.get(what, what))),
            what + suffix,
            file_filter,
            suffix,
        )
        if file_path is None:
            return False
        try:
            export_view_arrays(view, what, file_path)
        except AttnvizFileError as exc:
            self.context.refuse(translate("FileActions", "Cannot export"), error_text(exc))
            return False
        self.context.remember_dir(file_path)
        self.context.status(
            translate("FileActions", "Exported {what} to {path}").format(
                what=tr_text(WHAT_NAMES.get(what, what)), path=display_path(file_path)
            )
        )
        return True
