"""A user's tensor file as the app's ``State``: which array plays which role (queries, keys,
values, valid lengths, masks, tokens), the book's 3-D tensors or a model's heads and layers.

``roles`` maps a role (``attnviz.io.roles.ALL_ROLES``) to an array of the file
(``roles.guess_roles`` guesses them from the names); ``model_files`` reads a model's masks,
tokens, causal flag and scale. No Qt and no torch here (the GUI calls this on its own thread).
"""

from __future__ import annotations

import operator
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from attnviz.io.errors import TensorFileError
from attnviz.io.input_checks import as_lengths, check_qkv
from attnviz.io.model_files import ROLE_NAMES, check_roles, file_extras, has_heads, model_run_from_file
from attnviz.io.roles import MASK_ROLES, MODEL_ROLES, ROLE_ALIASES, guess_roles, needs_head_choice, select_head
from attnviz.io.tensors import TensorFile
from attnviz.state.document import MODEL_SETTINGS, LensMode, Settings, State
from attnviz.state.run import Focus
from attnviz.text.tr import QT_TRANSLATE_NOOP, exception_message, joined, message, plural

__all__ = ["NO_SETTINGS_NOTE", "StateFileError", "state_from_tensor_file", "tensor_file_focus"]


class StateFileError(TensorFileError):
    """A tensor file whose arrays cannot become attnviz inputs (wrong ranks, shapes disagree)."""


def state_from_tensor_file(
    tf: TensorFile,
    roles: Mapping[str, str],
    head: int | None,
    base: State,
    *,
    layer: int | None = None,
    notes: list[str] | None = None,
    base_focus: tuple[int, int] = Focus(),
) -> State:
    """A new ``State`` from a user's arrays: ``roles`` maps role -> name in ``tf``
    (``attnviz.io.roles.ALL_ROLES``; ``guess_roles`` guesses them from the names).

    * queries/keys/values: 3-D (batch, n, d); 2-D (n, d) gets a batch axis of 1. With all three
      from the file, 4-D (batch, heads, n, d) or 5-D (layers, batch, heads, n, d) make a model run
      (``model_files.model_run_from_file``: keys and values may have fewer heads), to be shown
      at head ``head`` of layer ``layer`` (None: 0, with a note when there are more; see
      ``tensor_file_focus``). A role left out keeps the array of ``base``'s head ``base_focus``
      (the shapes must then still agree); then a 4-D array needs ``head``, which is taken out
      of it.
    * valid_lens: 1-D (batch,) or 2-D (batch, n_queries) whole numbers; switches ``lens_mode``.
      Left out: ``base``'s lengths when the batch, query and key counts are unchanged, else
      "none" (every key valid).
    * masks (``attn_mask``, ``key_padding_mask``, ``attention_mask``, ``mask``), ``is_causal``,
      ``causal``, ``scale`` and tokens: read as ``attnviz.io.model_files`` says, with queries,
      keys and values from the same file.

    Settings: a file brings no scoring settings, so a file with queries, keys and values is
    shown with scaled dot-product scoring (as real models compute), with its own scale and
    causality, and a note says so (additive, with seeded parameters, where d_q != d_k); device
    and dtype stay ``base``'s. A file that replaces only some of the inputs keeps ``base``'s
    settings and parameters (parameters only while d_q and d_k are unchanged), with a note.
    Raises :class:`StateFileError` (a :class:`TensorFileError`) with one line naming the shapes.
    """
    found: list[str] = [] if notes is None else notes
    path = tf.path

    def fail(reason: str) -> StateFileError:
        return StateFileError(path, reason)

    try:
        check_roles(tf, roles)
    except ValueError as exc:
        raise fail(exception_message(exc)) from exc
    if not any(r in roles for r in ("queries", "keys", "values", "valid_lens")):
        raise fail(QT_TRANSLATE_NOOP("FileErrors", "no array was chosen for queries, keys, values or valid lengths"))
    full = all(r in roles for r in ("queries", "keys", "values"))
    extra = [r for r in roles if r in MODEL_ROLES or r == "mask"]
    if extra and not full:
        raise fail(
            message(
                QT_TRANSLATE_NOOP(
                    "FileErrors",
                    "'{name}' ({role}) comes with queries, keys and values from the same file, and {missing} "
                    "were not chosen",
                ),
                name=roles[extra[0]],
                role=extra[0],
                missing=joined([ROLE_NAMES[r] for r in ("queries", "keys", "values") if r not in roles]),
            )
        )
    _check_lengths_name(roles, fail)
    head_index = _whole(head, "head", fail)
    layer_index = _whole(layer, "layer", fail)
    try:
        if full and has_heads(tf, roles):
            state = _run_state(tf, roles, head_index, layer_index, base, found)
        else:
            if layer_index:
                raise ValueError(
                    message(
                        QT_TRANSLATE_NOOP("FileErrors", "layer {layer} is out of range: the tensors have no layers"),
                        layer=layer_index,
                    )
                )
            state = _book_state(tf, roles, head_index, base, Focus(*base_focus), found, fail)
    except StateFileError:
        raise
    except ValueError as exc:
        raise fail(exception_message(exc)) from exc
    _note_unused(tf, roles, found)
    if tf.skipped:
        found.append(message(QT_TRANSLATE_NOOP("FileNotes", "skipped {entries}"), entries=joined(tf.skipped)))
    return state


#: The one line that says a file's tensors are shown with a real model's scoring, not the toy's.
NO_SETTINGS_NOTE = QT_TRANSLATE_NOOP(
    "FileNotes", "the file brings no scoring settings: scaled dot-product scoring, as real models use"
)


def tensor_file_focus(state: State, layer: int | None, head: int | None) -> Focus:
    """The head to show first of what ``state_from_tensor_file(..., head, layer=layer)`` gave:
    the one asked for (0 where None), or the book's one head."""
    return state.run.clamp((layer or 0, head or 0))


def _run_state(
    tf: TensorFile, roles: Mapping[str, str], head: int | None, layer: int | None, base: State, found: list[str]
) -> State:
    """The model run in the file, to be shown at head ``head`` of layer ``layer``, with a model's
    settings."""
    run = model_run_from_file(tf, roles, notes=found)
    layer = _pick(layer, run.layers, _LAYER_RANGE, _LAYERS_NOTE, found)
    head = _pick(head, run.heads(layer), _HEAD_RANGE, _HEADS_NOTE, found, layer=layer)
    for index, call in enumerate(run.calls):
        if not call.weights_only:
            view = run.head_view(index, 0)
            check_qkv(view.queries, view.keys, view.values)  # the editor's limits, per head
    shown = run.head_view(layer, head)
    settings = replace(MODEL_SETTINGS, device=base.settings.device, dtype=base.settings.dtype)
    found.append(NO_SETTINGS_NOTE)
    state = State.from_run(run, settings)
    b, q, k = shown.batch, shown.n_queries, shown.n_keys
    state = replace(state, lens_1d=np.full((b,), k, np.int64), lens_2d=np.full((b, q), k, np.int64))
    if "valid_lens" in roles:
        lens_1d, lens_2d, mode = _file_lengths(tf, roles["valid_lens"], b, q, k, False, found)
        return replace(state, lens_1d=lens_1d, lens_2d=lens_2d, settings=replace(settings, lens_mode=mode))
    return state


_LAYER_RANGE = (
    QT_TRANSLATE_NOOP("FileErrors", "layer {index} is out of range: the file has {n} layer (0)"),
    QT_TRANSLATE_NOOP("FileErrors", "layer {index} is out of range: the file has {n} layers (0 to {last})"),
)
_HEAD_RANGE = (
    QT_TRANSLATE_NOOP("FileErrors", "head {index} is out of range: layer {layer} has {n} head (0)"),
    QT_TRANSLATE_NOOP("FileErrors", "head {index} is out of range: layer {layer} has {n} heads (0 to {last})"),
)
_LAYERS_NOTE = QT_TRANSLATE_NOOP("FileNotes", "the file has {n} layers: layer 0 is shown")
_HEADS_NOTE = QT_TRANSLATE_NOOP("FileNotes", "the file has {n} heads: head 0 is shown")


def _pick(
    index: int | None, count: int, out_of_range: tuple[str, str], chosen_note: str, found: list[str], **params: Any
) -> int:
    """``index`` checked against ``count``; None is 0 (a note says so when there are more)."""
    if index is None:
        if count > 1:
            found.append(message(chosen_note, n=count))
        return 0
    if not 0 <= index < count:
        raise ValueError(plural(count, *out_of_range, index=index, last=count - 1, **params))
    return index


def _book_state(
    tf: TensorFile,
    roles: Mapping[str, str],
    head: int | None,
    base: State,
    base_focus: Focus,
    found: list[str],
    fail: Any,
) -> State:
    """The book's 3-D tensors (2-D ones get a batch axis), or one head of 4-D arrays when only some
    roles come from the file; the file's masks, causality, scale and tokens with them."""
    tensors: dict[str, np.ndarray] = {}
    batched_up = False
    shown = base.head_view(base_focus)
    for role in ("queries", "keys", "values"):
        if role not in roles:
            tensors[role] = np.array(getattr(shown, role), dtype=np.float64, copy=True)
            continue
        name = roles[role]
        array = np.asarray(tf.arrays[name])
        if array.dtype.kind not in "fiu":  # bool (kind "b") is refused too
            raise fail(
                message(
                    QT_TRANSLATE_NOOP("FileErrors", "'{name}' ({role}) must hold real numbers, not {dtype}"),
                    name=name,
                    role=ROLE_NAMES[role],
                    dtype=array.dtype.name,
                )
            )
        if array.ndim == 5:
            raise fail(
                message(
                    QT_TRANSLATE_NOOP(
                        "FileErrors",
                        "'{name}' ({role}) has shape {shape} (layers, batch, "
                        "heads, n, d): a model's layers load with queries, keys "
                        "and values from the file together",
                    ),
                    name=name,
                    role=ROLE_NAMES[role],
                    shape=array.shape,
                )
            )
        if needs_head_choice(array):
            array = _one_head(array, head, name, role, fail)
        if array.ndim == 2:
            array = array[None]
            batched_up = True
        if array.ndim != 3:
            raise fail(
                message(
                    QT_TRANSLATE_NOOP(
                        "FileErrors",
                        "'{name}' ({role}) has shape {shape}; expected (n, d), "
                        "(batch, n, d), (batch, heads, n, d) or (layers, batch, "
                        "heads, n, d)",
                    ),
                    name=name,
                    role=ROLE_NAMES[role],
                    shape=array.shape,
                )
            )
        tensors[role] = np.array(array, dtype=np.float64, copy=True)

    queries, keys, values = tensors["queries"], tensors["keys"], tensors["values"]
    full = all(r in roles for r in ("queries", "keys", "values"))
    try:
        check_qkv(queries, keys, values)
    except ValueError as exc:
        kept = [ROLE_NAMES[r] for r in ("queries", "keys", "values") if r not in roles]
        problem = exception_message(exc)
        if kept:
            problem = message(
                QT_TRANSLATE_NOOP("FileErrors", "{problem} ({roles} kept from the current inputs)"),
                problem=problem,
                roles=joined(kept),
            )
        raise fail(problem) from exc
    b, n_q, n_k = queries.shape[0], queries.shape[1], keys.shape[1]
    same_layout = (b, n_q, n_k) == (shown.batch, shown.n_queries, shown.n_keys)

    if "valid_lens" in roles:
        lens_1d, lens_2d, mode = _file_lengths(tf, roles["valid_lens"], b, n_q, n_k, batched_up, found)
    elif same_layout and not full:
        lens_1d, lens_2d, mode = base.lens_1d.copy(), base.lens_2d_for(shown).copy(), base.settings.lens_mode
    else:
        lens_1d = np.full((b,), n_k, dtype=np.int64)
        lens_2d = np.full((b, n_q), n_k, dtype=np.int64)
        mode = "none"
        if full or base.settings.lens_mode != "none":
            found.append(QT_TRANSLATE_NOOP("FileNotes", "no valid lengths in the file: every key is valid"))

    d_q, d_k = queries.shape[2], keys.shape[2]
    if not full:
        settings = replace(base.settings, lens_mode=mode)
        same_dims = (d_q, d_k) == (shown.queries.shape[2], shown.keys.shape[2])
        params = {k: v.copy() for k, v in base.params.items()} if same_dims else {}
        found.append(
            message(
                QT_TRANSLATE_NOOP("FileNotes", "the current settings are kept: {scoring} scoring"),
                scoring=settings.scoring,
            )
        )
        if settings.scoring in ("dot", "scaled_dot") and d_q != d_k:
            found.append(
                message(
                    QT_TRANSLATE_NOOP(
                        "FileNotes",
                        "{scoring} scoring needs d_q = d_k (here {d_q} and "
                        "{d_k}): choose additive, bilinear or another scoring",
                    ),
                    scoring=settings.scoring,
                    d_q=d_q,
                    d_k=d_k,
                )
            )
        return State.from_tensors(
            queries, keys, values, lens_1d, lens_2d, settings, params, causal=shown.causal, scale=shown.scale
        )

    extras = file_extras(tf, roles, (b,), n_q, n_k, notes=found)
    masks = replace(extras.masks[0], is_causal=False)  # the call's causal flag carries it
    scoring = "scaled_dot" if d_q == d_k else "additive"
    settings = Settings(
        scoring=scoring,
        mask_mode="sdpa" if masks.any else "d2l",
        lens_mode=mode,
        device=base.settings.device,
        dtype=base.settings.dtype,
    )
    if scoring == "scaled_dot":
        found.append(NO_SETTINGS_NOTE)
    else:
        found.append(
            message(
                QT_TRANSLATE_NOOP(
                    "FileNotes",
                    "the file brings no scoring settings, and dot products need d_q = d_k (here {d_q} and {d_k}): "
                    "additive scoring with seeded parameters, as in the book",
                ),
                d_q=d_q,
                d_k=d_k,
            )
        )
    return State.from_tensors(
        queries,
        keys,
        values,
        lens_1d,
        lens_2d,
        settings,
        {},
        masks=masks if masks.any else None,
        causal=extras.causal,
        scale=extras.scale,
        query_tokens=extras.query_tokens,
        key_tokens=extras.key_tokens,
    )


def _check_lengths_name(roles: Mapping[str, str], fail: Any) -> None:
    """A mask must not be read as valid lengths: a Hugging Face ``attention_mask`` (B, L) of 0/1
    read as lengths would show every query on key 0 and nothing else."""
    name = roles.get("valid_lens")
    if name is None:
        return
    last = re.split(r"[./]", name.lower())[-1]
    argument = next((role for role in MASK_ROLES if last in ROLE_ALIASES[role]), None)
    if argument is not None:
        raise fail(
            message(
                QT_TRANSLATE_NOOP(
                    "FileErrors", "'{name}' is a mask by its name, not valid lengths: choose it as {argument}"
                ),
                name=name,
                argument=argument,
            )
        )


def _file_lengths(
    tf: TensorFile, name: str, b: int, n_q: int, n_k: int, batched_up: bool, found: list[str]
) -> tuple[np.ndarray, np.ndarray, LensMode]:
    """(lens_1d, lens_2d, lens_mode) from the file's valid lengths ``name``, or ValueError."""
    raw = np.asarray(tf.arrays[name])
    if needs_head_choice(raw):
        raise ValueError(
            message(
                QT_TRANSLATE_NOOP(
                    "FileErrors", "'{name}' (valid lengths) has shape {shape}; expected (batch,) or (batch, n_queries)"
                ),
                name=name,
                shape=raw.shape,
            )
        )
    lens = as_lengths(raw, name)
    if lens.ndim == 0:
        lens = lens.reshape(1)
    if lens.ndim == 1 and lens.shape[0] != b and batched_up and b == 1 and lens.shape[0] == n_q:
        # An unbatched (n, d) input with one length per query.
        lens = lens[None]
    wrong_shape = message(
        QT_TRANSLATE_NOOP(
            "FileErrors",
            "valid lengths '{name}' have shape {shape} but queries ({b}, {n_q}, d) need ({b},) or ({b}, {n_q})",
        ),
        name=name,
        shape=lens.shape,
        b=b,
        n_q=n_q,
    )
    if lens.ndim == 1:
        if lens.shape != (b,):
            raise ValueError(wrong_shape)
        return lens, np.repeat(lens[:, None], n_q, axis=1), "1d"
    if lens.ndim == 2:
        if lens.shape != (b, n_q):
            raise ValueError(wrong_shape)
        if n_k > 1 and lens.size and bool(np.isin(lens, (0, 1)).all()):
            # Said, never acted on: lengths of 0 and 1 are lengths, but they are what a 0/1 mask
            # read as lengths looks like.
            found.append(
                message(
                    QT_TRANSLATE_NOOP(
                        "FileNotes",
                        "valid lengths '{name}' are all 0 or 1: each query sees at most key 0; a 0/1 mask "
                        "(1 = attend) is loaded as attention_mask",
                    ),
                    name=name,
                )
            )
        return np.full((b,), n_k, dtype=np.int64), lens, "2d"
    raise ValueError(
        message(
            QT_TRANSLATE_NOOP(
                "FileErrors", "valid lengths '{name}' have shape {shape}; expected (batch,) or (batch, n_queries)"
            ),
            name=name,
            shape=lens.shape,
        )
    )


def _note_unused(tf: TensorFile, roles: Mapping[str, str], found: list[str]) -> None:
    """Say which masks, tokens and flags the names promise but the roles leave out: a mask left
    out changes the picture, and nothing may change it silently."""
    chosen = set(roles.values())
    for role, name in guess_roles(tf).items():
        if role not in roles and name not in chosen and (role in MODEL_ROLES or role == "mask"):
            found.append(
                message(QT_TRANSLATE_NOOP("FileNotes", "'{name}' ({role}) was left out"), name=name, role=role)
            )


def _whole(index: int | None, what: str, fail: Any) -> int | None:
    if index is None:
        return None
    not_whole = message(
        QT_TRANSLATE_NOOP("FileErrors", "{what} must be a whole number, got {value}"), what=what, value=repr(index)
    )
    if isinstance(index, bool):
        raise fail(not_whole)
    try:
        value = operator.index(index)
    except TypeError as exc:
        raise fail(not_whole) from exc
    if value < 0:
        raise fail(
            message(QT_TRANSLATE_NOOP("FileErrors", "{what} must be 0 or more, got {value}"), what=what, value=value)
        )
    return value


def _one_head(array: np.ndarray, head: int | None, name: str, role: str, fail: Any) -> np.ndarray:
    if head is None:
        raise fail(
            message(
                QT_TRANSLATE_NOOP(
                    "FileErrors",
                    "'{name}' ({role}) has shape {shape} (batch, heads, n, d): choose a head from 0 to {last}",
                ),
                name=name,
                role=ROLE_NAMES[role],
                shape=array.shape,
                last=array.shape[1] - 1,
            )
        )
    try:
        return select_head(array, head)
    except ValueError as exc:
        raise fail(
            message(
                QT_TRANSLATE_NOOP("FileErrors", "'{name}' ({role}): {problem}"),
                name=name,
                role=ROLE_NAMES[role],
                problem=exception_message(exc),
            )
        ) from exc
