"""The state a user edits, as plain numpy and Python: no Qt, no torch.

Every change goes through ``Document.apply(edit)``, which returns the edit that undoes it, bumps
``version`` and tells the subscribers. The app wraps those edits in QUndoCommands; scripts and
tests use the document directly.

The document's arrays are read-only, so states share them: an edit copies only the array it
changes (a typed cell copies one tensor, a setting copies none), and ``snapshot()`` hands the
compute thread the current state itself, with no copy. ``State.copy()`` still gives a caller a
private, writable copy to change and push back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

import numpy as np

from .model_run import MaskArguments, ModelRun
from .tr import QT_TRANSLATE_NOOP

Role = Literal["queries", "keys", "values", "valid_lens"]
LensMode = Literal["none", "1d", "2d"]
TENSOR_ROLES: tuple[str, ...] = ("queries", "keys", "values")
FILL_KINDS: tuple[str, ...] = ("random", "zeros", "ones", "arange")

#: Shape limits of the editor. The engine takes anything; a table of a million rows does not
#: help anyone, and these keep a typo in a spin box from asking for terabytes.
MAX_BATCH = 64
MAX_LEN = 4096
#: Tensors loaded from files, captures or scripts may be longer than the editor makes them:
#: the main view then refuses every stage at once (the memory budget) and the long-context view
#: streams them. The bound keeps a typo'd or hostile file from asking for absurd lengths.
MAX_LOADED_LEN = 1 << 17
MAX_DIM = 1024
MAX_HIDDEN = 1024


@dataclass(frozen=True)
class Settings:
    scoring: str = "additive"
    mask_mode: str = "d2l"
    causal: str | None = None  # None, "top_left", "bottom_right"
    lens_mode: LensMode = "1d"
    device: str = "cpu"
    dtype: str = "float32"
    dropout: float = 0.0
    train: bool = False
    dropout_seed: int = 0
    #: Dot-product scorings: multiply the dot products by this instead of dividing them by
    #: sqrt(d) (SDPA's ``scale``; a model run brings its own). None = 1/sqrt(d).
    scale: float | None = None
    #: Long-context masks (0 = off), combined with every other mask (``engine.mask_mods``): a
    #: sliding window of this many keys (causal when ``causal`` is set), attention sinks (the
    #: first keys, with a window), a prefix-LM prefix, chunked local attention.
    window: int = 0
    sinks: int = 0
    prefix: int = 0
    chunk: int = 0
    num_hiddens: int = 8
    param_seed: int = 0
    #: Let NaN/Inf through to the engine (to show what masking does not remove); else refused.
    allow_nonfinite: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass
class State:
    """Everything that defines a computation. Arrays: queries (B, Q, d_q), keys (B, K, d_k),
    values (B, K, d_v), valid lengths 1-D (B,) and 2-D (B, Q) (both kept, ``lens_mode`` picks),
    ``params`` the learnable scoring parameters by name (empty: seeded from ``param_seed``).

    ``masks`` are masks as a model's code passed them (``attn_mask``, ``key_padding_mask``,
    ``attention_mask``), combined with the valid lengths and the causal setting; None: none.
    ``query_tokens`` (B, Q) and ``key_tokens`` (B, K) label the axes (None: q0.., k0..).

    ``run`` is the model this state shows one head of: the tensors, masks and tokens above are
    then head ``head`` of call ``layer`` of the run (``focused_state``), and table edits are
    written back into the run, so another head and back shows them still.
    """

    queries: np.ndarray
    keys: np.ndarray
    values: np.ndarray
    lens_1d: np.ndarray
    lens_2d: np.ndarray
    settings: Settings = field(default_factory=Settings)
    params: dict[str, np.ndarray] = field(default_factory=dict)
    masks: MaskArguments | None = None
    query_tokens: np.ndarray | None = None
    key_tokens: np.ndarray | None = None
    run: ModelRun | None = None
    layer: int = 0
    head: int = 0
    #: Document ids of packed sequences, (B, K) whole numbers: a query attends the keys of its
    #: own document only (block-diagonal). None: one document.
    documents: np.ndarray | None = None

    def copy(self) -> State:
        """A deep copy whose arrays the caller may change (the document's are read-only; the
        run, immutable, is shared)."""
        return replace(
            self,
            queries=self.queries.copy(),
            keys=self.keys.copy(),
            values=self.values.copy(),
            lens_1d=self.lens_1d.copy(),
            lens_2d=self.lens_2d.copy(),
            params={k: v.copy() for k, v in self.params.items()},
        )

    def frozen(self) -> State:
        """This state with read-only arrays: the ones already read-only are shared, writable ones
        copied (a caller keeps its own arrays to change)."""
        return replace(
            self,
            queries=_frozen(self.queries),
            keys=_frozen(self.keys),
            values=_frozen(self.values),
            lens_1d=_frozen(self.lens_1d),
            lens_2d=_frozen(self.lens_2d),
            params={k: _frozen(v) for k, v in self.params.items()},
            masks=None
            if self.masks is None
            else replace(
                self.masks,
                attn_mask=_frozen_or_none(self.masks.attn_mask),
                key_padding_mask=_frozen_or_none(self.masks.key_padding_mask),
                attention_mask=_frozen_or_none(self.masks.attention_mask),
            ),
            query_tokens=_frozen_or_none(self.query_tokens),
            key_tokens=_frozen_or_none(self.key_tokens),
            documents=_frozen_or_none(self.documents),
        )

    @property
    def batch(self) -> int:
        return int(self.queries.shape[0])

    @property
    def n_queries(self) -> int:
        return int(self.queries.shape[1])

    @property
    def n_keys(self) -> int:
        return int(self.keys.shape[1])

    @property
    def dims(self) -> dict[str, int]:
        return {
            "batch": self.batch,
            "n_queries": self.n_queries,
            "n_keys": self.n_keys,
            "d_q": int(self.queries.shape[2]),
            "d_k": int(self.keys.shape[2]),
            "d_v": int(self.values.shape[2]),
        }

    def array(self, role: str) -> np.ndarray:
        if role == "valid_lens":
            return self.lens_1d if self.settings.lens_mode != "2d" else self.lens_2d
        return getattr(self, role)

    def valid_lens(self) -> np.ndarray | None:
        mode = self.settings.lens_mode
        return None if mode == "none" else (self.lens_1d if mode == "1d" else self.lens_2d)

    def tokens(self, batch: int) -> tuple[list[str] | None, list[str] | None]:
        """The query and key tokens of one batch element (None where there are none)."""

        def one(tokens: np.ndarray | None) -> list[str] | None:
            return None if tokens is None else [str(t) for t in tokens[batch]]

        return one(self.query_tokens), one(self.key_tokens)


def focused_state(run: ModelRun, layer: int, head: int, base: State | None = None) -> State:
    """The state showing head ``head`` of call ``layer`` of ``run``.

    ``base`` gives the settings, valid lengths and parameters to keep (its lengths are kept when
    they still fit the shapes); without it, the settings are a model's: scaled dot-product
    scoring with the call's scale, masks applied exactly as SDPA applies them, causal as the call
    was, no valid lengths.
    """
    call = run.calls[layer]
    if call.weights_only:
        # Recorded weights only: no tensor to show or edit. One-column zero placeholders keep the
        # shapes (B, L_q, L_k) every view reads; compute shows the recorded weights instead.
        b, _h, q, k = call.shape
        zeros_q, zeros_k = np.zeros((b, q, 1), np.float32), np.zeros((b, k, 1), np.float32)
        settings = base.settings if base is not None else Settings(scoring="scaled_dot", lens_mode="none")
        return State(
            zeros_q,
            zeros_k,
            zeros_k,
            np.full((b,), k, np.int64),
            np.full((b, q), k, np.int64),
            settings,
            query_tokens=None if run.query_tokens is None else run.query_tokens[:, :q],
            key_tokens=None if run.key_tokens is None else run.key_tokens[:, :k],
            run=run,
            layer=layer,
            head=head,
        ).frozen()
    focus = run.focus(layer, head)
    b, q = focus.queries.shape[:2]
    k = focus.keys.shape[1]
    causal = focus.masks.causal
    if base is None:
        settings = Settings(scoring="scaled_dot", mask_mode="sdpa", lens_mode="none", causal=causal, scale=focus.scale)
        lens_1d, lens_2d, params = np.full((b,), k, np.int64), np.full((b, q), k, np.int64), {}
    else:
        settings = replace(base.settings, scale=focus.scale)
        if base.run is not None and base.layer != layer:
            # Another call: its own causal flag, as the model ran it.
            settings = replace(settings, causal=causal)
        fits = base.lens_1d.shape == (b,) and base.lens_2d.shape == (b, q)
        lens_1d = base.lens_1d if fits else np.full((b,), k, np.int64)
        lens_2d = base.lens_2d if fits else np.full((b, q), k, np.int64)
        same_dims = base.queries.shape[2] == focus.queries.shape[2] and base.keys.shape[2] == focus.keys.shape[2]
        params = base.params if same_dims else {}
    masks = replace(focus.masks, is_causal=False)  # the causal setting carries it, editable
    query_tokens, key_tokens = run.query_tokens, run.key_tokens
    return State(
        focus.queries,
        focus.keys,
        focus.values,
        lens_1d,
        lens_2d,
        settings,
        params,
        masks=masks if masks.any else None,
        query_tokens=None if query_tokens is None else query_tokens[:, :q],
        key_tokens=None if key_tokens is None else key_tokens[:, :k],
        run=run,
        layer=layer,
        head=head,
        documents=base.documents
        if base is not None and base.documents is not None and base.documents.shape == (b, k)
        else None,
    ).frozen()


def _frozen_or_none(array: np.ndarray | None) -> np.ndarray | None:
    return None if array is None else _frozen(array)


def _frozen(array: np.ndarray) -> np.ndarray:
    if not array.flags.writeable:
        return array
    out = np.array(array, copy=True)
    out.setflags(write=False)
    return out


@dataclass(frozen=True)
class Snapshot:
    """The inputs at one document version (read-only arrays, shared with the document)."""

    version: int
    state: State


# ------------------------------------------------------------------------------------ edits


class Edit:
    """One undoable change. ``apply`` changes the state and returns the inverse edit."""

    # Defaults for edits made without a description (the app always gives one): marked, so an
    # undo menu never shows English in another language.
    text: str = QT_TRANSLATE_NOOP("Undo", "Edit")

    def apply(self, state: State) -> tuple[State, Edit]:
        raise NotImplementedError


@dataclass
class SetBlock(Edit):
    """Write a rectangular block into one batch element of a tensor (a typed cell, a paste)."""

    role: str
    batch: int
    row: int
    col: int
    block: np.ndarray
    #: The (layer, head) of a model run the block belongs to (None: the one shown).
    focus: tuple[int, int] | None = None

    @property
    def text(self) -> str:  # type: ignore[override]
        cells = self.block.size
        return f"Edit {cells} cell{'s' if cells != 1 else ''} of {self.role.replace('_', ' ')}"

    def apply(self, state: State) -> tuple[State, Edit]:
        block = np.asarray(self.block)
        if block.ndim != 2:
            raise ValueError(f"a block must be 2-D, got shape {block.shape}")
        if state.run is not None and state.run.calls[state.layer].weights_only and self.role in TENSOR_ROLES:
            raise ValueError("recorded weights only: there is no tensor to edit")
        if (
            state.run is not None
            and self.role in TENSOR_ROLES
            and self.focus is not None
            and self.focus != (state.layer, state.head)
        ):
            # An undo of an edit made on another head: show that head again, then undo there.
            state = focused_state(state.run, *self.focus, base=state)
        field_name = _field_of(state, self.role)
        array = getattr(state, field_name).copy()  # the one array this edit changes
        view = table_view_of(array, self.role, self.batch)
        rows = slice(self.row, self.row + block.shape[0])
        cols = slice(self.col, self.col + block.shape[1])
        if view[rows, cols].shape != block.shape:
            raise ValueError(f"block of shape {block.shape} does not fit at ({self.row}, {self.col})")
        old = view[rows, cols].copy()
        view[rows, cols] = block
        array.setflags(write=False)
        focus = None
        if state.run is not None and self.role in TENSOR_ROLES:
            focus = (state.layer, state.head)
            run = state.run.with_head(state.layer, state.head, self.role, array)
            new_state = focused_state(run, state.layer, state.head, base=state)
        else:
            new_state = replace(state, **{field_name: array})
        return new_state, SetBlock(self.role, self.batch, self.row, self.col, old, focus)


def _field_of(state: State, role: str) -> str:
    """The State field a table of ``role`` edits (valid lengths: the one the lens mode shows)."""
    if role == "valid_lens":
        return "lens_2d" if state.settings.lens_mode == "2d" else "lens_1d"
    return role


def table_view_of(array: np.ndarray, role: str, batch: int) -> np.ndarray:
    """The 2-D part of ``array`` (a state field of ``role``) that a table shows."""
    if role == "valid_lens":
        return array.reshape(-1, 1) if array.ndim == 1 else array
    return array[batch]


def table_view(state: State, role: str, batch: int) -> np.ndarray:
    """The 2-D array a table shows for ``role`` (a view of the state's array).

    Q, K and V show one batch element; valid lengths show every batch element, as a column
    (1-D) or one row per batch element with a column per query (2-D).
    """
    return table_view_of(state.array(role), role, batch)


@dataclass
class ReplaceState(Edit):
    """Swap the whole state (shape changes, fills, presets, loaded files)."""

    new: State
    text: str = QT_TRANSLATE_NOOP("Undo", "Change")

    def apply(self, state: State) -> tuple[State, Edit]:
        # The state being replaced is read-only already: the inverse keeps it as it is.
        return self.new.frozen(), ReplaceState(state, self.text)


@dataclass
class SetSettings(Edit):
    changes: dict[str, Any]
    text: str = QT_TRANSLATE_NOOP("Undo", "Change setting")

    def apply(self, state: State) -> tuple[State, Edit]:
        old = {name: getattr(state.settings, name) for name in self.changes}
        new_state = replace(state, settings=replace(state.settings, **self.changes))
        if "num_hiddens" in self.changes or "scoring" in self.changes or "param_seed" in self.changes:
            # Parameters no longer fit (or belong to another function): back to seeded ones.
            new_state = replace(new_state, params={})
        return new_state, SetSettings(old, self.text)


@dataclass
class SetFocus(Edit):
    """Show another head or call (layer) of the model run: the tables, masks and tokens follow."""

    layer: int
    head: int
    text: str = QT_TRANSLATE_NOOP("Undo", "Show another head")

    def apply(self, state: State) -> tuple[State, Edit]:
        if state.run is None:
            raise ValueError("no model run to focus")
        run = state.run
        if not (0 <= self.layer < run.layers and 0 <= self.head < run.heads(self.layer)):
            raise ValueError(f"no head {self.head} in call {self.layer}")
        return focused_state(run, self.layer, self.head, base=state), SetFocus(state.layer, state.head, self.text)


# ---------------------------------------------------------------------------- the document


class Document:
    """Holds the current ``State``; every change is an ``Edit`` that can be undone."""

    def __init__(self, state: State) -> None:
        self._state = state.frozen()
        self.version = 0
        self._listeners: list[Callable[[Edit | None], None]] = []

    @property
    def state(self) -> State:
        """The current state (read-only arrays): change it through ``apply``."""
        return self._state

    def subscribe(self, listener: Callable[[Edit | None], None]) -> None:
        self._listeners.append(listener)

    def unsubscribe(self, listener: Callable[[Edit | None], None]) -> None:
        """Stop telling ``listener`` (a window replaced after a language switch, say)."""
        if listener in self._listeners:
            self._listeners.remove(listener)

    def apply(self, edit: Edit) -> Edit:
        """Apply ``edit``; return the edit that undoes it."""
        new_state, inverse = edit.apply(self._state)
        self._state = new_state.frozen()  # an edit of another kind may hand back writable arrays
        self.version += 1
        for listener in list(self._listeners):
            listener(edit)
        return inverse

    def snapshot(self) -> Snapshot:
        """The current state and version for another thread: nothing is copied, every array is
        read-only, and edits replace arrays rather than change them."""
        return Snapshot(self.version, self._state)


# ------------------------------------------------------------------------------ state makers


def resize_state(state: State, **dims: int) -> State:
    """A copy of ``state`` with new dimensions; values that still fit are kept.

    New cells of Q, K, V are 0; new valid lengths are the number of keys (all valid).
    """
    cur = state.dims
    cur.update({k: int(v) for k, v in dims.items() if v is not None})
    b, n, m = cur["batch"], cur["n_queries"], cur["n_keys"]

    def fit(arr: np.ndarray, shape: tuple[int, ...], fill: float) -> np.ndarray:
        out = np.full(shape, fill, dtype=arr.dtype)
        common = tuple(slice(0, min(a, s)) for a, s in zip(arr.shape, shape))
        out[common] = arr[common]
        return out

    new = state.copy()
    new.queries = fit(state.queries, (b, n, cur["d_q"]), 0.0)
    new.keys = fit(state.keys, (b, m, cur["d_k"]), 0.0)
    new.values = fit(state.values, (b, m, cur["d_v"]), 0.0)
    new.lens_1d = fit(state.lens_1d, (b,), m)
    new.lens_2d = fit(state.lens_2d, (b, n), m)
    if (cur["d_q"], cur["d_k"]) != (state.dims["d_q"], state.dims["d_k"]):
        new.params = {}
    # The tensors no longer are a head of the model: the run is set aside (an undo brings it
    # back). Masks drawn for other lengths would be misread: they go unless the lengths stay.
    new.run = None
    if (b, n, m) != (state.batch, state.n_queries, state.n_keys):
        new.masks = None
    new.query_tokens = _fit_tokens(state.query_tokens, b, n)
    new.key_tokens = _fit_tokens(state.key_tokens, b, m)
    return new


def _fit_tokens(tokens: np.ndarray | None, batch: int, length: int) -> np.ndarray | None:
    """Tokens cut or padded with empty labels to (batch, length)."""
    if tokens is None:
        return None
    out = np.full((batch, length), "", dtype=tokens.dtype)
    rows, cols = min(batch, tokens.shape[0]), min(length, tokens.shape[1])
    out[:rows, :cols] = tokens[:rows, :cols]
    return out


def fill_values(shape: tuple[int, ...], kind: str, seed: int = 0) -> np.ndarray:
    """Values for a fill: seeded standard normal, zeros, ones, or the book's arange per batch
    element (``arange(rows * cols).reshape(rows, cols)``, the same in every batch element)."""
    if kind == "random":
        return np.random.default_rng(seed).standard_normal(shape)
    if kind == "zeros":
        return np.zeros(shape)
    if kind == "ones":
        return np.ones(shape)
    if kind == "arange":
        one = np.arange(int(np.prod(shape[1:])), dtype=np.float64).reshape(shape[1:])
        return np.broadcast_to(one, shape).copy()
    raise ValueError(f"unknown fill {kind!r}: expected one of {', '.join(FILL_KINDS)}")


def filled_state(state: State, role: str, kind: str, seed: int = 0) -> State:
    values = fill_values(getattr(state, role).shape, kind, seed)
    if state.run is not None and state.run.calls[state.layer].weights_only:
        raise ValueError("recorded weights only: there is no tensor to fill")
    if state.run is not None and role in TENSOR_ROLES:
        run = state.run.with_head(state.layer, state.head, role, values)
        return focused_state(run, state.layer, state.head, base=state)
    new = state.copy()
    setattr(new, role, values)
    return new


def make_state(
    batch: int = 2,
    n_queries: int = 1,
    n_keys: int = 10,
    d_q: int = 20,
    d_k: int = 2,
    d_v: int = 4,
    settings: Settings | None = None,
) -> State:
    return State(
        np.zeros((batch, n_queries, d_q)),
        np.zeros((batch, n_keys, d_k)),
        np.zeros((batch, n_keys, d_v)),
        np.full((batch,), n_keys, dtype=np.int64),
        np.full((batch, n_queries), n_keys, dtype=np.int64),
        settings or Settings(),
    )
