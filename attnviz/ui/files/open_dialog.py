"""The dialog that says which array of a tensor file is queries, keys, values, valid lengths.

It opens when the names alone do not tell (``guess_roles`` left a role out) or when a 4-D
(batch, heads, n, d) array needs a head. Every array is listed with its shape and dtype, and
the inputs the choice would give are previewed live (with the same function that will build
them), so the OK button is only enabled for a choice that loads.
"""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHeaderView,
    QLabel,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from attnviz.document import State
from attnviz.ui.i18n import tr_text, translate
from attnviz.tr import QT_TRANSLATE_NOOP
from attnviz.io import ROLES, TensorFile, describe, needs_head_choice
from attnviz.io.errors import AttnvizFileError
from attnviz.io.state_io import state_from_tensor_file
from attnviz.ui.theme import error_color, ok_color

__all__ = ["ROLE_LABELS", "RolesDialog", "ask_roles", "roles_complete"]

ROLE_LABELS: dict[str, str] = {
    "queries": QT_TRANSLATE_NOOP("OpenDialog", "&Queries"),
    "keys": QT_TRANSLATE_NOOP("OpenDialog", "&Keys"),
    "values": QT_TRANSLATE_NOOP("OpenDialog", "&Values"),
    "valid_lens": QT_TRANSLATE_NOOP("OpenDialog", "Valid &lengths"),
    "mask": QT_TRANSLATE_NOOP("OpenDialog", "&Mask"),
}
_KEEP = QT_TRANSLATE_NOOP("OpenDialog", "(keep current)")
_NONE = QT_TRANSLATE_NOOP("OpenDialog", "(none)")


def roles_complete(tf: TensorFile, roles: Mapping[str, str]) -> bool:
    """True when the file can be loaded without asking: queries, keys and values are all named,
    no chosen array is 4-D (which would need a head) and no mask was guessed (which cannot be
    loaded yet: the user has to see that and leave it out)."""
    if not all(r in roles for r in ("queries", "keys", "values")) or "mask" in roles:
        return False
    return not any(needs_head_choice(tf.arrays[name]) for name in roles.values() if name in tf.arrays)


class RolesDialog(QDialog):
    """Pick an array per role (and a head for 4-D arrays); ``choice()`` gives the answer."""

    def __init__(self, tf: TensorFile, guess: Mapping[str, str], base: State,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tf = tf
        self.base = base
        self.setWindowTitle(translate("OpenDialog", "Open {name}").format(name=tf.path.name))
        layout = QVBoxLayout(self)
        intro = QLabel(translate(
            "OpenDialog", "{name} ({format}) holds {n} array(s). Say which is which; a role left on “keep current” "
                          "keeps the array you have now.").format(name=f"<b>{_html(tf.path.name)}</b>",
                                                                  format=tf.format, n=len(tf.arrays)))
        intro.setWordWrap(True)
        layout.addWidget(intro)

        listing = describe(tf)
        self.table = QTableWidget(len(listing), 3)
        self.table.setHorizontalHeaderLabels([translate("OpenDialog", "Array"), translate("OpenDialog", "Shape"),
                                              "dtype"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.setToolTip(translate("OpenDialog", "The arrays in the file"))
        for row, (name, shape, dtype) in enumerate(listing):
            for col, text in enumerate((name, str(shape), dtype)):
                self.table.setItem(row, col, QTableWidgetItem(text))
        self.table.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # a listing, not something to edit
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col in (1, 2):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        self.table.resizeRowsToContents()
        # Tall enough for every array up to 8 rows (then it scrolls), never a tall empty box.
        shown = min(len(listing), 8)
        rows_height = sum(self.table.rowHeight(r) for r in range(shown))
        self.table.setFixedHeight(header.sizeHint().height() + rows_height + 2 * self.table.frameWidth() + 2)
        layout.addWidget(self.table)

        form = QFormLayout()
        self.combos: dict[str, QComboBox] = {}
        for role in ROLES:
            box = QComboBox()
            box.addItem(tr_text(_KEEP if role in ("queries", "keys", "values") else _NONE), None)
            for name, shape, dtype in listing:
                box.addItem(f"{name}   {shape}  {dtype}", name)
            chosen = guess.get(role)
            if chosen is not None:
                box.setCurrentIndex(max(0, box.findData(chosen)))
            box.setToolTip(_role_tip(role))
            box.currentIndexChanged.connect(self._update)
            caption = QLabel(tr_text(ROLE_LABELS[role]))
            caption.setBuddy(box)
            form.addRow(caption, box)
            self.combos[role] = box
        self.head = QSpinBox()
        self.head.setToolTip(translate("OpenDialog", "Which head to take from (batch, heads, n, d) arrays"))
        self.head.valueChanged.connect(self._update)
        head_caption = QLabel(translate("OpenDialog", "&Head"))
        head_caption.setBuddy(self.head)
        form.addRow(head_caption, self.head)
        layout.addLayout(form)

        self.preview = QLabel()
        self.preview.setWordWrap(True)
        self.preview.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.preview.setToolTip(translate("OpenDialog", "What loading with this choice gives, or why it cannot load"))
        layout.addWidget(self.preview)

        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.resize(620, self.sizeHint().height())
        self._update()

    def roles(self) -> dict[str, str]:
        return {role: box.currentData() for role, box in self.combos.items() if box.currentData() is not None}

    def choice(self) -> tuple[dict[str, str], int | None]:
        """The chosen role -> array name mapping and head (None when no chosen array is 4-D)."""
        return self.roles(), (self.head.value() if self.head.isEnabled() else None)

    def _update(self, *_: object) -> None:
        roles = self.roles()
        heads = [self.tf.arrays[n].shape[1] for n in roles.values() if needs_head_choice(self.tf.arrays[n])]
        self.head.setEnabled(bool(heads))
        if heads:
            self.head.setRange(0, max(0, min(heads) - 1))
            self.head.setSuffix("   " + translate("OpenDialog", "(of {n} heads: 0 to {last})").format(
                n=min(heads), last=min(heads) - 1))
        else:
            self.head.setSuffix("   " + translate("OpenDialog", "(no 4-D array chosen)"))
        _, head = self.choice()
        ok_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        notes: list[str] = []
        try:
            state = state_from_tensor_file(self.tf, roles, head, self.base, notes=notes)
        except AttnvizFileError as exc:
            cannot = translate("OpenDialog", "Cannot load:")
            self.preview.setText(f"<span style='color:{error_color()}'><b>{cannot}</b> {_html(tr_text(exc.reason))}</span>")
            ok_button.setEnabled(False)
            return
        lens = {"none": translate("OpenDialog", "no valid lengths"),
                "1d": translate("OpenDialog", "valid lengths per batch element"),
                "2d": translate("OpenDialog", "valid lengths per query")}[state.settings.lens_mode]
        loads_as = translate("OpenDialog", "Loads as")
        text = f"<span style='color:{ok_color()}'><b>{loads_as}</b></span> " + translate(
            "OpenDialog", "queries {q}, keys {k}, values {v}, {lengths}.").format(
            q=state.queries.shape, k=state.keys.shape, v=state.values.shape, lengths=lens)
        if notes:
            text += "<br>" + "<br>".join(f"• {_html(tr_text(n))}" for n in notes)
        self.preview.setText(text)
        ok_button.setEnabled(True)


def ask_roles(parent: QWidget | None, tf: TensorFile, guess: Mapping[str, str],
              base: State) -> tuple[dict[str, str], int | None] | None:
    """Show :class:`RolesDialog` modally; the choice, or None when cancelled."""
    dialog = RolesDialog(tf, guess, base, parent)
    try:
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        return dialog.choice()
    finally:
        dialog.deleteLater()


def _role_tip(role: str) -> str:
    return {
        "queries": translate("OpenDialog", "Queries: (batch, n_queries, d_q); (n, d) gets a batch of 1; 4-D needs a "
                                           "head"),
        "keys": translate("OpenDialog", "Keys: (batch, n_keys, d_k)"),
        "values": translate("OpenDialog", "Values: (batch, n_keys, d_v), as many rows as the keys"),
        "valid_lens": translate("OpenDialog", "Valid lengths: (batch,) per batch element or (batch, n_queries) per "
                                              "query"),
        "mask": translate("OpenDialog", "Explicit boolean masks cannot be loaded yet; use valid lengths"),
    }[role]


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
