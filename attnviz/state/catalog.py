"""What can be chosen, and how it is called: scoring functions, mask modes, the other options and
the inputs' roles.

One place for the names, labels, formulas and flags that the engine, the window, the views,
``attnviz render`` and the lessons all show. No torch and no Qt: the window reads it at start-up
without waiting for PyTorch, and the engine registers into it (``engine.scoring.register``
adds a scoring function here), so a scoring function added with ``@register`` appears in the
settings, the pipeline's formulas and the side-by-side view with no other edit. Views that
list the scoring functions subscribe to ``SCORINGS`` and refresh when one is added.

Labels are marked with ``QT_TRANSLATE_NOOP`` and translated where they are shown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from attnviz.text.tr import QT_TRANSLATE_NOOP

__all__ = [
    "CAUSAL_OPTIONS",
    "DTYPE_OPTIONS",
    "LENS_OPTIONS",
    "MASK_MODES",
    "ROLES",
    "SCORINGS",
    "Catalogue",
    "MaskModeInfo",
    "Named",
    "RoleInfo",
    "ScoringInfo",
    "role_word",
]


@dataclass(frozen=True)
class ScoringInfo:
    """A scoring function a(q, k) as people see it."""

    name: str
    #: Its name in menus and titles (marked for translation).
    label: str
    #: LaTeX of a(q, k): the formula panel renders the built-in ones by hand, others from this.
    formula: str
    #: Queries and keys must have the same length d.
    same_dim: bool = True
    #: Names of its learnable parameters (empty: none), e.g. ("W_q", "W_k", "w_v").
    params: tuple[str, ...] = ()
    #: Whether a hidden size shapes its parameters (additive attention's h).
    uses_hidden: bool = False
    #: The raw scores are divided by a scale (a separate "scaled" stage in the pipeline).
    scaled: bool = False
    #: One line about it for the formula panel (marked for translation; may hold simple HTML).
    note: str = ""


@dataclass(frozen=True)
class MaskModeInfo:
    """A way of applying a mask (a convention or a bug), as people see it."""

    name: str
    label: str
    description: str
    #: A bug people make, not a convention anyone should choose.
    bug: bool = False
    #: What it does with the mask: "applied" as meant, "none" (nothing is masked: a 1/0 mask
    #: added as a float), or "inverted" (the polarity is read the other way round).
    effect: str = "applied"


class Named(Protocol):
    """What a catalogue holds: an entry with a name and a (marked) label."""

    @property
    def name(self) -> str: ...

    @property
    def label(self) -> str: ...


T = TypeVar("T", bound=Named)


class Catalogue(Generic[T]):
    """An ordered, observable registry of entries by name (``ScoringInfo``, ``MaskModeInfo``, the
    settings' declarations of ``attnviz.state.settings``).

    ``subscribe(listener)`` calls ``listener(info)`` whenever an entry is added or replaced; a
    listener that raises is dropped (a view that has been deleted, say) rather than breaking
    the registration.
    """

    def __init__(self, entries: tuple[T, ...]) -> None:
        self._entries: dict[str, T] = {e.name: e for e in entries}
        self._listeners: list[Callable[[T], None]] = []

    def __getitem__(self, name: str) -> T:
        return self._entries[name]

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, name: str) -> T | None:
        return self._entries.get(name)

    def values(self) -> list[T]:
        return list(self._entries.values())

    def label(self, name: str) -> str:
        """The (untranslated, marked) label of ``name``, or the name itself when unknown."""
        entry = self._entries.get(name)
        return entry.label if entry is not None else name

    def register(self, info: T) -> T:
        self._entries[info.name] = info
        for listener in list(self._listeners):
            try:
                listener(info)
            except Exception:  # noqa: BLE001 - a dead view must not stop a registration
                self.unsubscribe(listener)
        return info

    def unregister(self, name: str) -> None:
        """Remove ``name`` (for tests that register an entry of their own)."""
        self._entries.pop(name, None)

    def subscribe(self, listener: Callable[[T], None]) -> None:
        if listener not in self._listeners:
            self._listeners.append(listener)

    def unsubscribe(self, listener: Callable[[T], None]) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    @property
    def listener_count(self) -> int:
        return len(self._listeners)


SCORINGS: Catalogue[ScoringInfo] = Catalogue(
    (
        ScoringInfo(
            "additive",
            QT_TRANSLATE_NOOP("Scoring", "Additive"),
            r"a(\mathbf{q}, \mathbf{k}) = \mathbf{w}_v^\top \tanh(\mathbf{W}_q \mathbf{q} + \mathbf{W}_k \mathbf{k})",
            same_dim=False,
            params=("W_q", "W_k", "w_v"),
            uses_hidden=True,
            note=QT_TRANSLATE_NOOP(
                "Formulas",
                "learned <b>W</b><sub><i>q</i></sub> ∈ ℝ<sup><i>h</i>×<i>q</i></sup>, "
                "<b>W</b><sub><i>k</i></sub> ∈ ℝ<sup><i>h</i>×<i>k</i></sup>, "
                "<b>w</b><sub><i>v</i></sub> ∈ ℝ<sup><i>h</i></sup>",
            ),
        ),
        ScoringInfo(
            "scaled_dot",
            QT_TRANSLATE_NOOP("Scoring", "Scaled dot product"),
            r"a(\mathbf{q}, \mathbf{k}) = \mathbf{q}^\top \mathbf{k} / \sqrt{d}",
            scaled=True,
            note=QT_TRANSLATE_NOOP(
                "Formulas", "the scaling keeps the variance of the scores near 1 for unit-variance inputs"
            ),
        ),
        ScoringInfo(
            "dot",
            QT_TRANSLATE_NOOP("Scoring", "Dot product (unscaled)"),
            r"a(\mathbf{q}, \mathbf{k}) = \mathbf{q}^\top \mathbf{k}",
            note=QT_TRANSLATE_NOOP("Formulas", "no scaling: the scores grow with <i>d</i>"),
        ),
        ScoringInfo(
            "bilinear",
            QT_TRANSLATE_NOOP("Scoring", "Bilinear (general)"),
            r"a(\mathbf{q}, \mathbf{k}) = \mathbf{q}^\top \mathbf{W} \mathbf{k}",
            same_dim=False,
            params=("W",),
            note=QT_TRANSLATE_NOOP(
                "Formulas", "learned <b>W</b> ∈ ℝ<sup><i>q</i>×<i>k</i></sup>: queries and keys may differ in length"
            ),
        ),
        ScoringInfo(
            "gaussian",
            QT_TRANSLATE_NOOP("Scoring", "Gaussian kernel"),
            r"a(\mathbf{q}, \mathbf{k}) = -\tfrac{1}{2}\lVert \mathbf{q} - \mathbf{k} \rVert^2",
            note=QT_TRANSLATE_NOOP("Formulas", "the Nadaraya–Watson kernel the chapter starts from"),
        ),
        ScoringInfo(
            "summation",
            QT_TRANSLATE_NOOP("Scoring", "Vector summation"),
            r"a(\mathbf{q}, \mathbf{k}) = \mathbf{1}^\top (\mathbf{q} + \mathbf{k})",
            note=QT_TRANSLATE_NOOP("Formulas", "the query term is the same for every key, so the softmax cancels it"),
        ),
    )
)

MASK_MODES: Catalogue[MaskModeInfo] = Catalogue(
    (
        MaskModeInfo(
            "d2l",
            QT_TRANSLATE_NOOP("MaskModes", "Book (-1e6 fill)"),
            QT_TRANSLATE_NOOP(
                "MaskModes",
                "Masked scores are replaced by -1e6 before the softmax, as in the book's "
                "masked_softmax. A row with no valid key gets uniform weights over all keys, "
                "padding included.",
            ),
        ),
        MaskModeInfo(
            "strict",
            QT_TRANSLATE_NOOP("MaskModes", "Strict"),
            QT_TRANSLATE_NOOP(
                "MaskModes",
                "Masked keys are excluded exactly. A row with no valid key gets zero weights "
                "and a zero output and is flagged; never NaN, and padded keys and values "
                "cannot leak in.",
            ),
        ),
        MaskModeInfo(
            "neg_inf",
            QT_TRANSLATE_NOOP("MaskModes", "-inf fill"),
            QT_TRANSLATE_NOOP(
                "MaskModes",
                "Masked scores become -inf (an additive float mask of 0 and -inf does the "
                "same) and a plain softmax follows: a row with no valid key becomes NaN.",
            ),
        ),
        MaskModeInfo(
            "sdpa",
            QT_TRANSLATE_NOOP("MaskModes", "PyTorch SDPA (bool mask)"),
            QT_TRANSLATE_NOOP(
                "MaskModes",
                "What torch.nn.functional.scaled_dot_product_attention does with a boolean "
                "attn_mask (True = attend): masked scores become -inf, and a row with no "
                "valid key gets zero weights (PyTorch >= 2.5).",
            ),
        ),
        MaskModeInfo(
            "float01",
            QT_TRANSLATE_NOOP("MaskModes", "1/0 mask as float (bug)"),
            QT_TRANSLATE_NOOP(
                "MaskModes",
                "A 1 = keep / 0 = drop mask handed to an API that expects an additive float "
                "mask: it adds 1 to kept scores and 0 to dropped ones, so nothing is masked "
                "at all.",
            ),
            bug=True,
            effect="none",
        ),
        MaskModeInfo(
            "inverted",
            QT_TRANSLATE_NOOP("MaskModes", "Wrong polarity (bug)"),
            QT_TRANSLATE_NOOP(
                "MaskModes",
                "A True = attend mask handed to an API where True = ignore (such as "
                "nn.MultiheadAttention's key_padding_mask): the padding is attended and the "
                "real keys are hidden; rows whose every key is then hidden become NaN.",
            ),
            bug=True,
            effect="inverted",
        ),
    )
)

#: Valid-length modes of the document, as the settings show them.
LENS_OPTIONS: dict[str, str] = {
    "none": QT_TRANSLATE_NOOP("SettingsPanel", "None"),
    "1d": QT_TRANSLATE_NOOP("SettingsPanel", "1-D (per batch)"),
    "2d": QT_TRANSLATE_NOOP("SettingsPanel", "2-D (per query)"),
}
#: Causal masks: off, PyTorch's is_causal (top-left), or aligned to the last key (KV cache).
CAUSAL_OPTIONS: dict[str | None, str] = {
    None: QT_TRANSLATE_NOOP("SettingsPanel", "Off"),
    "top_left": QT_TRANSLATE_NOOP("SettingsPanel", "Top-left (is_causal)"),
    "bottom_right": QT_TRANSLATE_NOOP("SettingsPanel", "Bottom-right (KV cache)"),
}
#: Floating-point types (their names are the same in every language).
DTYPE_OPTIONS: dict[str, str] = {name: name for name in ("float32", "float64", "float16", "bfloat16")}


@dataclass(frozen=True)
class RoleInfo:
    """One of the inputs a user edits (a tensor of the head on show, or the valid lengths)."""

    name: str
    #: Its tab in the inputs panel (marked, with its accelerator).
    label: str
    #: How sentences name it: "Fill keys with zeros", "Edit 3 cells of valid lengths".
    word: str
    #: The tab's tooltip.
    tip: str
    #: How one of its cells is named in messages ("k2, d1: not a number" says which key).
    value_name: str


#: The inputs, in the order of the inputs panel's tabs.
ROLES: Catalogue[RoleInfo] = Catalogue(
    (
        RoleInfo(
            "queries",
            QT_TRANSLATE_NOOP("InputsPanel", "&Queries"),
            QT_TRANSLATE_NOOP("MainWindow", "queries"),
            QT_TRANSLATE_NOOP("InputsPanel", "Query vectors of the selected batch element: one row per query"),
            QT_TRANSLATE_NOOP("InputsPanel", "query"),
        ),
        RoleInfo(
            "keys",
            QT_TRANSLATE_NOOP("InputsPanel", "&Keys"),
            QT_TRANSLATE_NOOP("MainWindow", "keys"),
            QT_TRANSLATE_NOOP("InputsPanel", "Key vectors of the selected batch element: one row per key"),
            QT_TRANSLATE_NOOP("InputsPanel", "key"),
        ),
        RoleInfo(
            "values",
            QT_TRANSLATE_NOOP("InputsPanel", "&Values"),
            QT_TRANSLATE_NOOP("MainWindow", "values"),
            QT_TRANSLATE_NOOP("InputsPanel", "Value vectors of the selected batch element: one row per key-value pair"),
            QT_TRANSLATE_NOOP("InputsPanel", "value"),
        ),
        RoleInfo(
            "valid_lens",
            QT_TRANSLATE_NOOP("InputsPanel", "Valid &lengths"),
            QT_TRANSLATE_NOOP("MainWindow", "valid lengths"),
            QT_TRANSLATE_NOOP("InputsPanel", "Valid lengths: keys at or past the valid length are masked"),
            QT_TRANSLATE_NOOP("InputsPanel", "valid length"),
        ),
    )
)


def role_word(role: str) -> str:
    """How sentences name ``role`` (marked), or the name itself when it is not an input."""
    info = ROLES.get(role)
    return info.word if info is not None else role
