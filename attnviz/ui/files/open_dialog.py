"""The dialog that says which array of a tensor file is queries, keys, values, valid lengths,
which is a mask (under the argument it is passed through) and which labels are the tokens.

It opens when the names alone do not tell (``guess_roles`` left queries, keys or values out).
Every array is listed with its shape and dtype, and the inputs the choice would give are
previewed live (with the same function that will build them), so the OK button is only enabled
for a choice that loads. Files with heads or layers load whole (a model run); the layer and head
chosen here are the ones shown first.
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

from attnviz.io import ROLES, TensorFile, describe, role_names
from attnviz.io.errors import AttnvizFileError
from attnviz.io.names import display_name
from attnviz.io.tensor_import import state_from_tensor_file, tensor_file_focus
from attnviz.state.document import State
from attnviz.text.tr import QT_TRANSLATE_NOOP
from attnviz.ui.i18n import tr_text, translate
from attnviz.ui.theme import error_color, ok_color

__all__ = ["ROLE_LABELS", "RolesDialog", "ask_roles", "roles_complete"]

ROLE_LABELS: dict[str, str] = {
    "queries": QT_TRANSLATE_NOOP("OpenDialog", "&Queries"),
    "keys": QT_TRANSLATE_NOOP("OpenDialog", "&Keys"),
    "values": QT_TRANSLATE_NOOP("OpenDialog", "&Values"),
    "valid_lens": QT_TRANSLATE_NOOP("OpenDialog", "Valid &lengths"),
    "mask": QT_TRANSLATE_NOOP("OpenDialog", "&Mask"),
    "attn_mask": "attn_mask",
    "key_padding_mask": "key_padding_mask",
    "attention_mask": "attention_mask",
    "tokens": QT_TRANSLATE_NOOP("OpenDialog", "&Tokens"),
    "query_tokens": QT_TRANSLATE_NOOP("OpenDialog", "Query tokens"),
    "key_tokens": QT_TRANSLATE_NOOP("OpenDialog", "Key tokens"),
}
#: The roles the dialog offers, in form order (causal flag and scale are read by name only).
DIALOG_ROLES: tuple[str, ...] = (
    "queries",
    "keys",
    "values",
    "valid_lens",
    "attn_mask",
    "key_padding_mask",
    "attention_mask",
    "mask",
    "tokens",
    "query_tokens",
    "key_tokens",
)
_KEEP = QT_TRANSLATE_NOOP("OpenDialog", "(keep current)")
_NONE = QT_TRANSLATE_NOOP("OpenDialog", "(none)")


def roles_complete(tf: TensorFile, roles: Mapping[str, str]) -> bool:
    """True when the file can be loaded without asking: queries, keys and values are all named
    (masks and tokens load under the names code gives them; a model's heads and layers load
    whole, the first one shown with a note)."""
    return all(r in roles and roles[r] in tf.arrays for r in ("queries", "keys", "values"))


def _heads_and_layers(tf: TensorFile, names: list[str]) -> tuple[int, int]:
    """(heads, layers) the chosen tensors have: 4-D (B, H, L, d), 5-D (layers, B, H, L, d)."""
    heads, layers = [], []
    for name in names:
        shape = tf.arrays[name].shape
        if len(shape) == 4:
            heads.append(shape[1])
        elif len(shape) == 5:
            heads.append(shape[2])
            layers.append(shape[0])
    return (min(heads) if heads else 0), (min(layers) if layers else 0)


class RolesDialog(QDialog):
    """Pick an array per role (and a head for 4-D arrays); ``choice()`` gives the answer."""

    def __init__(self, tf: TensorFile, guess: Mapping[str, str], base: State, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tf = tf
        self.base = base
        self.setWindowTitle(translate("OpenDialog", "Open {name}").format(name=display_name(tf.path)))
        layout = QVBoxLayout(self)
        intro = QLabel(
            translate(
                "OpenDialog",
                "{name} ({format}) holds {n} array(s). Say which is which; a role left on “keep current” "
                "keeps the array you have now.",
            ).format(name=f"<b>{_html(display_name(tf.path))}</b>", format=tf.format, n=len(tf.arrays))
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)

        listing = describe(tf)
        self.table = QTableWidget(len(listing), 3)
        self.table.setHorizontalHeaderLabels(
            [translate("OpenDialog", "Array"), translate("OpenDialog", "Shape"), "dtype"]
        )
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
        shapes = {name: (shape, dtype) for name, shape, dtype in listing}
        for role in DIALOG_ROLES:
            candidates = role_names(tf, role)
            if role not in ROLES and not candidates and role not in guess:
                continue  # nothing in this file could be a mask or tokens of that kind
            box = QComboBox()
            box.addItem(tr_text(_KEEP if role in ("queries", "keys", "values") else _NONE), None)
            for name in candidates:
                shape, dtype = shapes.get(name, ((), ""))
                texts = tf.texts.get(name) if hasattr(tf, "texts") else None
                detail = f"{shape}  {dtype}" if name in shapes else (f"({len(texts)})" if texts is not None else "")
                box.addItem(f"{name}   {detail}", name)
            chosen = guess.get(role)
            if chosen is not None:
                box.setCurrentIndex(max(0, box.findData(chosen)))
            box.setToolTip(_role_tip(role))
            box.currentIndexChanged.connect(self._update)
            caption = QLabel(tr_text(ROLE_LABELS[role]))
            caption.setBuddy(box)
            form.addRow(caption, box)
            self.combos[role] = box
        self.layer = QSpinBox()
        self.layer.setToolTip(
            translate(
                "OpenDialog",
                "Which layer to show first, of (layers, batch, heads, n, d) arrays (every layer is loaded)",
            )
        )
        self.layer.valueChanged.connect(self._update)
        layer_caption = QLabel(translate("OpenDialog", "La&yer"))
        layer_caption.setBuddy(self.layer)
        form.addRow(layer_caption, self.layer)
        self.head = QSpinBox()
        self.head.setToolTip(
            translate("OpenDialog", "Which head to show first, of (batch, heads, n, d) arrays (every head is loaded)")
        )
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
        """The chosen role -> array name mapping and head (None when no chosen array has heads)."""
        return self.roles(), (self.head.value() if self.head.isEnabled() else None)

    def chosen_layer(self) -> int | None:
        """The layer to show first (None when no chosen array has layers)."""
        return self.layer.value() if self.layer.isEnabled() else None

    def _update(self, *_: object) -> None:
        roles = self.roles()
        tensors = [n for r, n in roles.items() if r in ("queries", "keys", "values") and n in self.tf.arrays]
        heads, layers = _heads_and_layers(self.tf, tensors)
        for spin, count, of_what in (
            (self.head, heads, translate("OpenDialog", "(of {n} heads: 0 to {last})")),
            (self.layer, layers, translate("OpenDialog", "(of {n} layers: 0 to {last})")),
        ):
            spin.setEnabled(bool(count))
            if count:
                spin.setRange(0, max(0, count - 1))
                spin.setSuffix("   " + of_what.format(n=count, last=count - 1))
            else:
                spin.setSuffix("   " + translate("OpenDialog", "(none in the chosen arrays)"))
        head = self.choice()[1]
        ok_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        notes: list[str] = []
        try:
            state = state_from_tensor_file(self.tf, roles, head, self.base, layer=self.chosen_layer(), notes=notes)
        except AttnvizFileError as exc:
            cannot = translate("OpenDialog", "Cannot load:")
            self.preview.setText(
                f"<span style='color:{error_color()}'><b>{cannot}</b> {_html(tr_text(exc.reason))}</span>"
            )
            ok_button.setEnabled(False)
            return
        lens = {
            "none": translate("OpenDialog", "no valid lengths"),
            "1d": translate("OpenDialog", "valid lengths per batch element"),
            "2d": translate("OpenDialog", "valid lengths per query"),
        }[state.settings.lens_mode]
        loads_as = translate("OpenDialog", "Loads as")
        layer, head = tensor_file_focus(state, self.chosen_layer(), head)
        shown = state.head_view((layer, head))
        text = f"<span style='color:{ok_color()}'><b>{loads_as}</b></span> " + translate(
            "OpenDialog", "queries {q}, keys {k}, values {v}, {lengths}."
        ).format(q=shown.queries.shape, k=shown.keys.shape, v=shown.values.shape, lengths=lens)
        if not state.run.single_head:
            text += " " + translate(
                "OpenDialog", "A model of {layers} layer(s) x {heads} head(s); layer {layer}, head {head} shown first."
            ).format(layers=state.run.layers, heads=state.run.heads(layer), layer=layer, head=head)
        if notes:
            text += "<br>" + "<br>".join(f"• {_html(tr_text(n))}" for n in notes)
        self.preview.setText(text)
        ok_button.setEnabled(True)


def ask_roles(
    parent: QWidget | None, tf: TensorFile, guess: Mapping[str, str], base: State
) -> tuple[dict[str, str], int | None, int | None] | None:
    """Show :class:`RolesDialog` modally; (roles, head, layer), or None when cancelled."""
    dialog = RolesDialog(tf, guess, base, parent)
    try:
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        roles, head = dialog.choice()
        return roles, head, dialog.chosen_layer()
    finally:
        dialog.deleteLater()


def _role_tip(role: str) -> str:
    return {
        "queries": translate(
            "OpenDialog", "Queries: (batch, n_queries, d_q); (n, d) gets a batch of 1; 4-D needs a head"
        ),
        "keys": translate("OpenDialog", "Keys: (batch, n_keys, d_k)"),
        "values": translate("OpenDialog", "Values: (batch, n_keys, d_v), as many rows as the keys"),
        "valid_lens": translate(
            "OpenDialog", "Valid lengths: (batch,) per batch element or (batch, n_queries) per query"
        ),
        "mask": translate(
            "OpenDialog",
            "A mask named only 'mask': bool or float is read as SDPA's attn_mask (True = "
            "attend, floats added), whole numbers as Hugging Face's attention_mask (1 = "
            "attend)",
        ),
        "attn_mask": translate(
            "OpenDialog",
            "As torch's scaled_dot_product_attention reads it: bool True = attend; floats are added to the scores",
        ),
        "key_padding_mask": translate(
            "OpenDialog", "As nn.MultiheadAttention reads it: (batch, n_keys), True = ignore"
        ),
        "attention_mask": translate("OpenDialog", "As Hugging Face builds it: (batch, n_keys) 0/1, 1 = attend"),
        "tokens": translate("OpenDialog", "Token labels for both axes: (n,) or (batch, n)"),
        "query_tokens": translate("OpenDialog", "Token labels of the queries"),
        "key_tokens": translate("OpenDialog", "Token labels of the keys"),
    }[role]


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
