"""The state a user edits, as plain numpy and Python: no Qt, no torch.

Every change goes through ``Document.apply(edit)``, which returns the edit that undoes it, bumps
``version`` and tells the subscribers. The app wraps those edits in QUndoCommands; scripts and
tests use the document directly.

The document's arrays are read-only, so states share them: an edit copies only the array it
changes (a typed cell copies one tensor, a setting copies none), and ``snapshot()`` hands the
compute thread the current state itself, with no copy. ``State.copy()`` still gives a caller
private, writable lengths and parameters to change and push back.

The state always holds a model run (``State.run``); the book's input is a run of one call and
one head. Which head is on show is not part of the state: the session's selection holds it, a
``Snapshot`` carries it to the compute thread, and edits remember the head they were made on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

import numpy as np

from attnviz.state.run import MASK_ARGUMENTS, AttentionCall, Focus, HeadView, MaskArguments, ModelRun
from attnviz.state.settings import SETTINGS, call_settings, change_text, resets_params
from attnviz.text.tr import QT_TRANSLATE_NOOP

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


def _default(name: str) -> Any:
    return SETTINGS[name].default


@dataclass(frozen=True)
class Settings:
    """How every call is computed: one field per setting declared in ``attnviz.state.settings`` (its
    type, default, choices or range, label, undo name and checks are there), except those that
    are a call's own. A call's causal flag and scale are the call's (a model's calls differ in
    them): ``SetSettings({"causal": ...})`` writes into the call on show."""

    scoring: str = _default("scoring")
    mask_mode: str = _default("mask_mode")
    lens_mode: LensMode = _default("lens_mode")
    device: str = _default("device")
    dtype: str = _default("dtype")
    dropout: float = _default("dropout")
    train: bool = _default("train")
    dropout_seed: int = _default("dropout_seed")
    #: Long-context masks (0 = off), combined with every other mask (``engine.mask_mods``): a
    #: sliding window of this many keys (causal when the call is), attention sinks (the
    #: first keys, with a window), a prefix-LM prefix, chunked local attention.
    window: int = _default("window")
    sinks: int = _default("sinks")
    prefix: int = _default("prefix")
    chunk: int = _default("chunk")
    num_hiddens: int = _default("num_hiddens")
    param_seed: int = _default("param_seed")
    #: Let NaN/Inf through to the engine (to show what masking does not remove); else refused.
    allow_nonfinite: bool = _default("allow_nonfinite")

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


#: The settings a model's run is shown with: scaled dot-product scoring, masks applied exactly
#: as SDPA applies them, no valid lengths (a model masks with its own masks).
MODEL_SETTINGS = Settings(scoring="scaled_dot", mask_mode="sdpa", lens_mode="none")
#: What ``SetSettings`` writes into a call rather than into ``Settings``: each call of a model
#: has its own causal flag and scale (the book's one call too).
CALL_SETTINGS: tuple[str, ...] = call_settings()


@dataclass
class State:
    """Everything that defines a computation.

    ``run`` holds the attention: every call with its tensors, masks as passed, causal flag,
    scale and tokens (a model's, or the book's input as a run of one call and one head:
    :meth:`from_tensors`). A view reads one head through :meth:`head_view` (views of the run's
    arrays, made on demand); which head that is, is the session's choice, not the state's.

    Alongside, for every call: valid lengths 1-D (B,) and 2-D (B, Q) (both kept, ``lens_mode``
    picks; 2-D lengths made for another number of queries count as all keys valid), the
    settings, ``params`` the learnable scoring parameters by name (empty: seeded from
    ``param_seed``), ``documents`` the ids of packed sequences, (B, K) whole numbers: a query
    attends the keys of its own document only (None: one document).

    What the run is compared with: ``ablated_heads``, the (call, head) pairs a live model runs
    with ablated (``attnviz.show(model=..., inputs=...)``; the run's masks carry the mask
    edits), and ``compared_with``, the capture file the run is compared with (None: none).
    Both are edits like any other (undone, saved in a session).
    """

    run: ModelRun
    lens_1d: np.ndarray
    lens_2d: np.ndarray
    settings: Settings = field(default_factory=Settings)
    params: dict[str, np.ndarray] = field(default_factory=dict)
    documents: np.ndarray | None = None
    ablated_heads: frozenset[tuple[int, int]] = frozenset()
    compared_with: str | None = None

    @classmethod
    def from_tensors(
        cls,
        queries: np.ndarray,
        keys: np.ndarray,
        values: np.ndarray,
        lens_1d: np.ndarray | None = None,
        lens_2d: np.ndarray | None = None,
        settings: Settings | None = None,
        params: dict[str, np.ndarray] | None = None,
        *,
        masks: MaskArguments | None = None,
        causal: str | None = None,
        scale: float | None = None,
        query_tokens: np.ndarray | None = None,
        key_tokens: np.ndarray | None = None,
        documents: np.ndarray | None = None,
    ) -> State:
        """The book's input: queries (B, Q, d_q), keys (B, K, d_k), values (B, K, d_v) as a run of
        one call and one head. Lengths left out: every key valid. ``masks`` as a model's code
        passes them (for the (B, Q, d) tensors), ``causal`` None, "top_left" or "bottom_right"."""
        b, q, k = queries.shape[0], queries.shape[1], keys.shape[1]
        base = MaskArguments() if masks is None else masks
        flag = base.is_causal or causal is not None
        alignment: Any = causal if causal is not None else base.causal_alignment
        call = AttentionCall(
            BOOK_CALL,
            queries[:, None],
            keys[:, None],
            values[:, None],
            replace(
                base,
                attn_mask=_head_axis(base.attn_mask),
                attention_mask=_head_axis(base.attention_mask),
                is_causal=flag,
                causal_alignment=alignment,
            ),
            scale=scale,
        )
        run = ModelRun((call,), query_tokens, key_tokens, source="book")
        return cls(
            run,
            np.full((b,), k, np.int64) if lens_1d is None else lens_1d,
            np.full((b, q), k, np.int64) if lens_2d is None else lens_2d,
            settings or Settings(),
            {} if params is None else params,
            documents,
        )

    @classmethod
    def from_run(cls, run: ModelRun, settings: Settings | None = None) -> State:
        """A model's run with a model's settings (``MODEL_SETTINGS``) and every key valid. A run
        whose queries, keys or values hold NaN or infinities (a speech encoder's padded query
        rows) lets them through: a model's own tensors are shown as they are, never refused."""
        b, _h, q, k = run.calls[0].shape
        if settings is None:
            settings = replace(MODEL_SETTINGS, allow_nonfinite=True) if _nonfinite(run) else MODEL_SETTINGS
        return cls(run, np.full((b,), k, np.int64), np.full((b, q), k, np.int64), settings)

    def head_view(self, focus: tuple[int, int] = Focus()) -> HeadView:
        """Head ``focus.head`` of call ``focus.layer``, as the 3-D tensors the views read (views
        of the run's arrays, no copy). IndexError when the run has no such head."""
        return self.run.head_view(*focus)

    def copy(self) -> State:
        """A deep copy whose lengths and parameters the caller may change (the document's are
        read-only; the run, immutable, is shared: change it with ``with_head``)."""
        return replace(
            self,
            lens_1d=self.lens_1d.copy(),
            lens_2d=self.lens_2d.copy(),
            params={k: v.copy() for k, v in self.params.items()},
            documents=None if self.documents is None else self.documents.copy(),
        )

    def frozen(self) -> State:
        """This state with read-only arrays, as a new object: the arrays already read-only are
        shared, writable ones copied (a caller keeps its own arrays, and its State, to change)."""
        return replace(
            self,
            run=_frozen_run(self.run),
            lens_1d=_frozen(self.lens_1d),
            lens_2d=_frozen(self.lens_2d),
            params={k: _frozen(v) for k, v in self.params.items()},
            documents=_frozen_or_none(self.documents),
        )

    def with_head(self, focus: tuple[int, int], role: str, array: np.ndarray) -> State:
        """This state with the (B, L, d) ``role`` tensor of one head replaced (``array`` copied
        into the run; a key or value head is shared by its group of query heads)."""
        return replace(self, run=self.run.with_head(focus[0], focus[1], role, array))

    @property
    def batch(self) -> int:
        return self.run.batch

    def lens_2d_for(self, view: HeadView) -> np.ndarray:
        """The 2-D valid lengths for ``view``'s call: all keys valid when they were made for
        another number of queries (a model's calls need not share their lengths)."""
        if self.lens_2d.shape == (view.batch, view.n_queries):
            return self.lens_2d
        return np.full((view.batch, view.n_queries), view.n_keys, np.int64)

    def lens_array(self, view: HeadView) -> np.ndarray:
        """The valid lengths the table shows and edits: the 1-D ones, or the 2-D ones in 2-D mode."""
        return self.lens_2d_for(view) if self.settings.lens_mode == "2d" else self.lens_1d

    def valid_lens(self, view: HeadView) -> np.ndarray | None:
        """The valid lengths the engine gets for ``view`` (None: lens mode "none")."""
        return None if self.settings.lens_mode == "none" else self.lens_array(view)

    def documents_for(self, view: HeadView) -> np.ndarray | None:
        """The document ids, when they fit ``view``'s keys (else None: one document)."""
        docs = self.documents
        return docs if docs is not None and docs.shape == (view.batch, view.n_keys) else None

    def array(self, role: str, view: HeadView) -> np.ndarray:
        """What a table of ``role`` shows: one head's tensor, or the valid lengths."""
        return self.lens_array(view) if role == "valid_lens" else getattr(view, role)


#: The name of the book's one call (a model's calls are named by its code).
BOOK_CALL = "attention"


def _head_axis(mask: np.ndarray | None) -> np.ndarray | None:
    """A (B, Q, K) mask of the book's 3-D tensors with the head axis of its (B, 1, Q, K) call;
    smaller masks ((Q, K), (B, K)) broadcast as they are."""
    return mask[:, None] if mask is not None and mask.ndim == 3 else mask


def _nonfinite(run: ModelRun) -> bool:
    """Whether a call's queries, keys or values hold a NaN or an infinity."""
    return any(
        a is not None and a.dtype.kind == "f" and not bool(np.isfinite(a).all())
        for call in run.calls
        for a in (call.queries, call.keys, call.values)
    )


def _frozen_run(run: ModelRun) -> ModelRun:
    """``run`` with read-only arrays (the same run when they all are already)."""
    calls = []
    changed = False
    for call in run.calls:
        changes: dict[str, Any] = {}
        for name in ("queries", "keys", "values", "output", "weights"):
            array = getattr(call, name)
            if array is not None and array.flags.writeable:
                changes[name] = _frozen(array)
        masks = call.masks
        mask_changes: dict[str, Any] = {
            name: _frozen(m) for name in MASK_ARGUMENTS if (m := getattr(masks, name)) is not None and m.flags.writeable
        }
        if mask_changes:
            changes["masks"] = replace(masks, **mask_changes)
        if changes:
            changed = True
            call = replace(call, **changes)
        calls.append(call)
    tokens: dict[str, Any] = {
        name: _frozen(t)
        for name in ("query_tokens", "key_tokens")
        if (t := getattr(run, name)) is not None and t.flags.writeable
    }
    if not changed and not tokens:
        return run
    return replace(run, calls=tuple(calls), **tokens)


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
    """The inputs at one document version (read-only arrays, shared with the document) and the
    head on show when it was taken: a result is current only for both."""

    version: int
    state: State
    focus: Focus = Focus()


# ------------------------------------------------------------------------------------ edits


class Edit:
    """One undoable change. ``apply(state, focus)`` changes the state and returns the inverse
    edit; ``focus`` is the head on show when it is applied (edits of one head's tensors or of a
    call's settings are made there).

    ``focus`` on an edit says where it was made: applying it (an undo, a redo) brings that head
    back on show. None: it shows no head in particular (the session keeps its own).
    """

    # Defaults for edits made without a description (the app always gives one): marked, so an
    # undo menu never shows English in another language.
    text: str = QT_TRANSLATE_NOOP("Undo", "Edit")
    focus: Focus | None = None

    def apply(self, state: State, focus: Focus = Focus()) -> tuple[State, Edit]:
        raise NotImplementedError


@dataclass
class SetBlock(Edit):
    """Write a rectangular block into one batch element of one head's tensor (a typed cell, a
    paste) or into the valid lengths."""

    role: str
    batch: int
    row: int
    col: int
    block: np.ndarray
    #: The (layer, head) the block belongs to (None: the one on show when applied).
    focus: Focus | None = None

    @property
    def text(self) -> str:  # type: ignore[override]
        cells = self.block.size
        return f"Edit {cells} cell{'s' if cells != 1 else ''} of {self.role.replace('_', ' ')}"

    def apply(self, state: State, focus: Focus = Focus()) -> tuple[State, Edit]:
        block = np.asarray(self.block)
        if block.ndim != 2:
            raise ValueError(f"a block must be 2-D, got shape {block.shape}")
        at = Focus(*(focus if self.focus is None else self.focus))
        view = state.head_view(at)
        tensor = self.role in TENSOR_ROLES
        if tensor and view.weights_only:
            raise ValueError("recorded weights only: there is no tensor to edit")
        source = state.array(self.role, view)
        array = source.copy()  # the one array this edit changes
        cells = table_view_of(array, self.role, self.batch)
        rows = slice(self.row, self.row + block.shape[0])
        cols = slice(self.col, self.col + block.shape[1])
        if cells[rows, cols].shape != block.shape:
            raise ValueError(f"block of shape {block.shape} does not fit at ({self.row}, {self.col})")
        old = cells[rows, cols].copy()
        cells[rows, cols] = block
        array.setflags(write=False)
        if tensor:
            # The one path: the block goes into the run's call, the book's one head included.
            return state.with_head(at, self.role, array), SetBlock(self.role, self.batch, self.row, self.col, old, at)
        lens_field = "lens_2d" if state.settings.lens_mode == "2d" else "lens_1d"
        inverse: Edit = SetBlock(self.role, self.batch, self.row, self.col, old)
        if lens_field == "lens_2d" and source is not state.lens_2d:
            # Lengths made for another call's queries were shown as "all valid": an undo brings
            # the ones they replace back whole.
            inverse = ReplaceState(state, self.text)
        return replace(state, **{lens_field: array}), inverse


def table_view_of(array: np.ndarray, role: str, batch: int) -> np.ndarray:
    """The 2-D part of ``array`` (a head's tensor or the valid lengths) that a table shows."""
    if role == "valid_lens":
        return array.reshape(-1, 1) if array.ndim == 1 else array
    return array[batch]


def table_view(state: State, role: str, batch: int, focus: tuple[int, int] = Focus()) -> np.ndarray:
    """The 2-D array a table shows for ``role`` (a view of the state's array).

    Q, K and V show one batch element of the head ``focus``; valid lengths show every batch
    element, as a column (1-D) or one row per batch element with a column per query (2-D).
    """
    return table_view_of(state.array(role, state.head_view(focus)), role, batch)


@dataclass
class ReplaceState(Edit):
    """Swap the whole state (shape changes, fills, presets, loaded files). ``focus``: the head
    to show with it (a file's saved head; None: the one on show, moved into the new run)."""

    new: State
    text: str = QT_TRANSLATE_NOOP("Undo", "Change")
    focus: Focus | None = None

    def apply(self, state: State, focus: Focus = Focus()) -> tuple[State, Edit]:
        # The state being replaced is read-only already: the inverse keeps it as it is, and
        # brings back the head that was on show with it.
        return self.new.frozen(), ReplaceState(state, self.text, Focus(*focus))


@dataclass
class SetSettings(Edit):
    """Change settings. ``causal`` and ``scale`` (``CALL_SETTINGS``) belong to a call: they are
    written into the call of the head on show (or ``focus``), as the book's one call has them.
    Without a ``text``, the settings' declared names describe it ("Change dropout")."""

    changes: dict[str, Any]
    text: str = ""
    focus: Focus | None = None

    def __post_init__(self) -> None:
        if not self.text:
            self.text = change_text(self.changes)

    def apply(self, state: State, focus: Focus = Focus()) -> tuple[State, Edit]:
        at = Focus(*(focus if self.focus is None else self.focus))
        settings = {k: v for k, v in self.changes.items() if k not in CALL_SETTINGS}
        of_call = {k: v for k, v in self.changes.items() if k in CALL_SETTINGS}
        old: dict[str, Any] = {name: getattr(state.settings, name) for name in settings}
        new_state = replace(state, settings=replace(state.settings, **settings))
        if of_call:
            view = state.head_view(at)
            old.update(causal=view.causal, scale=view.scale)
            old = {k: v for k, v in old.items() if k in self.changes}
            run = state.run
            if "causal" in of_call:
                run = run.with_causal(at.layer, of_call["causal"])
            if "scale" in of_call:
                run = run.with_call(at.layer, scale=None if of_call["scale"] is None else float(of_call["scale"]))
            new_state = replace(new_state, run=run)
        if resets_params(self.changes):
            # Parameters no longer fit (or belong to another function): back to seeded ones.
            new_state = replace(new_state, params={})
        return new_state, SetSettings(old, self.text, at if of_call else None)


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

    def apply(self, edit: Edit, focus: tuple[int, int] = Focus()) -> Edit:
        """Apply ``edit`` with ``focus`` the head on show; return the edit that undoes it."""
        new_state, inverse = edit.apply(self._state, Focus(*focus))
        self._state = new_state.frozen()  # an edit of another kind may hand back writable arrays
        self.version += 1
        for listener in list(self._listeners):
            listener(edit)
        return inverse

    def snapshot(self, focus: tuple[int, int] = Focus()) -> Snapshot:
        """The current state and version, with ``focus`` the head on show, for another thread:
        nothing is copied, every array is read-only, and edits replace arrays, never change them."""
        return Snapshot(self.version, self._state, Focus(*focus))


# ------------------------------------------------------------------------------ state makers


def resize_state(state: State, *, focus: tuple[int, int] = Focus(), **dims: int) -> State:
    """The head ``focus`` with new dimensions, as the book's input; values that still fit are
    kept, with the head's masks (while the lengths stay), causal flag, scale and tokens.

    New cells of Q, K, V are 0; new valid lengths are the number of keys (all valid). The other
    heads of a model are set aside (an undo brings them back).
    """
    view = state.head_view(focus)
    cur = view.dims
    cur.update({k: int(v) for k, v in dims.items() if v is not None})
    b, n, m = cur["batch"], cur["n_queries"], cur["n_keys"]

    def fit(arr: np.ndarray, shape: tuple[int, ...], fill: float) -> np.ndarray:
        out = np.full(shape, fill, dtype=arr.dtype)
        common = tuple(slice(0, min(a, s)) for a, s in zip(arr.shape, shape))
        out[common] = arr[common]
        return out

    same_lengths = (b, n, m) == (view.batch, view.n_queries, view.n_keys)
    docs = state.documents_for(view)
    return State.from_tensors(
        fit(view.queries, (b, n, cur["d_q"]), 0.0),
        fit(view.keys, (b, m, cur["d_k"]), 0.0),
        fit(view.values, (b, m, cur["d_v"]), 0.0),
        fit(state.lens_1d, (b,), m),
        fit(state.lens_2d_for(view), (b, n), m),
        state.settings,
        # Parameters belong to the sizes they were made for.
        {k: v.copy() for k, v in state.params.items()}
        if (cur["d_q"], cur["d_k"]) == (view.dims["d_q"], view.dims["d_k"])
        else {},
        # Masks drawn for other lengths would be misread: they go unless the lengths stay.
        masks=view.masks if same_lengths else None,
        causal=view.causal,
        scale=view.scale,
        query_tokens=_fit_tokens(view.query_tokens, b, n),
        key_tokens=_fit_tokens(view.key_tokens, b, m),
        documents=docs if same_lengths else None,
    )


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


def filled_state(state: State, role: str, kind: str, seed: int = 0, focus: tuple[int, int] = Focus()) -> State:
    """``state`` with the ``role`` tensor of head ``focus`` filled (``fill_values``)."""
    if role not in TENSOR_ROLES:
        raise ValueError(f"only queries, keys and values are filled, not {role!r}")
    view = state.head_view(focus)
    if view.weights_only:
        raise ValueError("recorded weights only: there is no tensor to fill")
    return state.with_head(focus, role, fill_values(getattr(view, role).shape, kind, seed))


def make_state(
    batch: int = 2,
    n_queries: int = 1,
    n_keys: int = 10,
    d_q: int = 20,
    d_k: int = 2,
    d_v: int = 4,
    settings: Settings | None = None,
) -> State:
    return State.from_tensors(
        np.zeros((batch, n_queries, d_q)),
        np.zeros((batch, n_keys, d_k)),
        np.zeros((batch, n_keys, d_v)),
        settings=settings,
    )
