"""The mask doctor: every finding of ``attnviz.capture.diagnose_run`` on the run on show,
each one click away from the cells it names.

A click on a finding shows its call, head and batch element in every view and asks for the
query rows it names to be outlined (``AppSession.outline_rows``: the weights come to the front
with them). The diagnosis is a computation of the view on a thread of its own, run only while
the view is on show, again whenever the run changes (an edit), not when another head is picked
(the findings are the whole run's).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from attnviz.compute.jobs import Job
from attnviz.text.tr import exception_message
from attnviz.ui.app.host import Host, ToolPanel
from attnviz.ui.app.session import AppSession
from attnviz.ui.app.view_base import SessionView, bold_label, message_label, view_column
from attnviz.ui.i18n import tr_text, translate
from attnviz.ui.theme import error_color, warning_color
from attnviz.ui.views.docks import DOCKS, DOCTOR_DOCK

if TYPE_CHECKING:
    from attnviz.capture import Finding

__all__ = ["DOCTOR_DOCK", "DoctorView", "install_doctor"]


def _diagnose(job: Job[None]) -> tuple[list[Any] | None, str | None]:
    """On the view's thread: the findings of the state's run, or why there are none."""
    try:
        from attnviz.capture import diagnose_run

        return diagnose_run(job.snapshot.state.run), None
    except Exception as exc:  # noqa: BLE001 - shown in the view
        return None, exception_message(exc)


class DoctorView(SessionView):
    """``table`` lists the findings (errors first); a click on one shows it (``choose``)."""

    def __init__(self, session: AppSession, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self._session = session
        self.findings: list[Finding] | None = None
        layout = view_column(self)
        self.summary = bold_label()
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)
        self.message = message_label()
        layout.addWidget(self.message)
        self.table = QTableWidget(0, 3)  # a few findings per run: items are fine
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setWordWrap(True)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.table.cellClicked.connect(lambda row, _col: self._choose(row))
        layout.addWidget(self.table, 1)
        # What the run could not be checked for (``Diagnosis.notes``): as much a part of the
        # verdict as the findings, so never left to the command line alone.
        self.notes = QLabel()
        self.notes.setWordWrap(True)
        self.notes.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.notes.setVisible(False)
        layout.addWidget(self.notes)

        self.diagnosis = self.while_shown(self.session.register("mask doctor", _diagnose, follows="document"))
        self.diagnosis.on_result(self._on_findings)
        self.diagnosis.busyChanged.connect(self._on_busy)
        self.retranslate()

    def retranslate(self) -> None:
        self.table.setHorizontalHeaderLabels(
            [translate("Doctor", "severity"), translate("Doctor", "where"), translate("Doctor", "what is wrong")]
        )
        self.table.setToolTip(translate("Doctor", "Click a finding to see its cells"))
        self._fill()

    # ------------------------------------------------------------------ computing

    def _on_busy(self, busy: bool) -> None:
        if busy:
            self.summary.setText(translate("Doctor", "Examining every call's masks…"))

    def _on_findings(self, result: tuple[list[Any] | None, str | None]) -> None:
        findings, error = result
        self.findings = findings
        self.message.setVisible(bool(error))
        if error:
            self.message.setText("⚠ " + error)
        self._fill()

    # ------------------------------------------------------------------ showing

    def _fill(self) -> None:
        findings = self.findings
        state = self._session.document.state
        self.table.setRowCount(0)
        if findings is None:
            self.notes.setVisible(False)
            return
        notes = [tr_text(note) for note in getattr(findings, "notes", ())]
        self.notes.setVisible(bool(notes))
        self.notes.setText(
            "\n".join(translate("Doctor", "Note: {text}").format(text=note) for note in notes) if notes else ""
        )
        errors = sum(f.severity == "error" for f in findings)
        warnings = len(findings) - errors
        if not findings and not any(call.masks.any for call in state.run.calls):
            self.summary.setText(
                translate(
                    "Doctor",
                    "No mask here to examine: capture a model (attnviz.capture) or open a file of a "
                    "model's tensors, and the doctor examines every mask it received.",
                )
            )
        elif not findings:
            self.summary.setText(
                translate("Doctor", "No problem found in the masks of the one call.")
                if state.run.layers == 1
                else translate("Doctor", "No problem found in the masks of {n} calls.").format(n=state.run.layers)
            )
            if notes:
                self.summary.setText(
                    self.summary.text() + " " + translate("Doctor", "Some things could not be checked: see below.")
                )
        else:
            self.summary.setText(
                translate(
                    "Doctor", "Errors: {errors}, warnings: {warnings}, calls examined: {n}. Click one to see its cells."
                ).format(errors=errors, warnings=warnings, n=state.run.layers)
            )
        ordered = sorted(findings, key=lambda f: (f.severity != "error", f.call))
        self._ordered = ordered
        self.table.setRowCount(len(ordered))
        for row, finding in enumerate(ordered):
            severity = QTableWidgetItem(
                translate("Doctor", "error") if finding.severity == "error" else translate("Doctor", "warning")
            )
            severity.setForeground(QColor(error_color() if finding.severity == "error" else warning_color()))
            where = QTableWidgetItem(tr_text(finding.where))
            what = QTableWidgetItem(tr_text(finding.message))
            what.setToolTip(tr_text(finding.message))
            for col, item in enumerate((severity, where, what)):
                item.setData(Qt.ItemDataRole.UserRole, row)
                self.table.setItem(row, col, item)
        self.table.resizeRowsToContents()

    def _choose(self, row: int) -> None:
        ordered = getattr(self, "_ordered", [])
        if not 0 <= row < len(ordered):
            return
        finding = ordered[row]
        head = finding.heads[0] if finding.heads else self._session.selection.head
        self._session.set_focus(finding.call, head)
        if finding.batch:
            self._session.set_batch(finding.batch[0])
        self._session.outline_rows(tuple(finding.rows))


def install_doctor(session: AppSession, host: Host) -> ToolPanel:
    """Add the mask doctor as a hidden tab; View > Mask doctor (Ctrl+Shift+K) shows it."""
    return host.add_dock(DOCKS[DOCTOR_DOCK], lambda: DoctorView(session))
