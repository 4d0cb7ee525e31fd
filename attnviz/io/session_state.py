"""The app's ``State`` to and from ``.attnviz`` sessions (``io.session`` reads and writes the
file itself: its manifest and arrays).

No Qt and no torch here (the GUI calls this on its own thread, before PyTorch has loaded).

How a ``State`` is laid out in a session (format version 3, 4 when the run is compared with
something; see ``SESSION_FORMAT.md``):

* the run, always (the book's input is a run of one call and one head, ``source`` "book"):
  ``run/<i>/<name>`` arrays per call and a ``model`` description (calls' names, scales, causal
  flags; tokens; the head on show when saved, reopened on show; version 4: the heads ablated
  and the capture file compared with);
* arrays ``lens_1d`` (B,) and ``lens_2d`` (B, Q) (both kept, the ``lens_mode`` setting picks
  one), ``documents`` (B, K) when set, one ``params/<name>`` array per learnable scoring
  parameter (none: seeded ones);
* settings: the fields of :class:`attnviz.state.document.Settings`, flat
  (``{"scoring": "additive", "mask_mode": "d2l", "lens_mode": "1d", ...}``), each checked by its
  declaration (``io.settings_file``).

Every older session still opens: versions 1 and 2 kept the book's tensors as ``queries``,
``keys``, ``values`` (and ``masks/<argument>``), a run's head on show copied there too, and the
causal flag and scale among the settings; those two are the call's now, and are read into the
call that was on show.

Reading is forgiving where nothing can go wrong (unknown settings keys and unknown arrays are
ignored, missing settings take their defaults, a missing valid-length array means "all keys
valid"; each such case adds a line to ``notes``) and strict where a wrong guess would show a
wrong picture (shapes that disagree, values of the wrong kind): those raise
:class:`SessionFileError` with one line naming what is wrong.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, get_args

import numpy as np

from attnviz.io._json import INFINITE_FIDELITY, fidelity_to_json
from attnviz.io._limits import Budget, label_lists
from attnviz.io.call_fields import checked_call_fields
from attnviz.io.errors import SessionFileError, refusals
from attnviz.io.input_checks import as_lengths, as_tensor, check_qkv
from attnviz.io.paths import network_path
from attnviz.io.session import Session, load_session, save_session
from attnviz.io.settings_file import read_settings
from attnviz.io.storable import storable
from attnviz.state.document import State
from attnviz.state.run import (
    CAUSAL_ALIGNMENTS,
    MASK_ARGUMENTS,
    AttentionCall,
    Focus,
    MaskArguments,
    ModelRun,
    ModelRunError,
    Source,
)
from attnviz.state.settings import shown_value
from attnviz.text.tr import QT_TRANSLATE_NOOP, exception_message, message

__all__ = [
    "INFINITE_FIDELITY",
    "PARAM_PREFIX",
    "load_state_and_focus",
    "load_state_file",
    "save_state_file",
    "session_to_state",
    "session_to_state_and_focus",
    "state_to_session",
]

#: Session array names of the parameters: ``params/W_q`` holds ``state.params["W_q"]``.
PARAM_PREFIX = "params/"
STATE_ARRAYS: tuple[str, ...] = ("queries", "keys", "values", "lens_1d", "lens_2d")
#: The run's arrays: ``run/<call>/<name>``; a version 1 or 2 session's book masks: ``masks/<argument>``.
RUN_PREFIX = "run/"
#: Document ids of packed sequences (B, K): ``State.documents``.
DOCUMENTS = "documents"
MASKS_PREFIX = "masks/"
_CALL_ARRAYS: tuple[str, ...] = ("queries", "keys", "values", "output", "weights")
_RUN_SOURCES: tuple[str, ...] = get_args(Source)


def state_to_session(state: State, focus: tuple[int, int] = Focus()) -> Session:
    """Everything in ``state`` as a :class:`Session`: the run (every call), both valid-length
    arrays, parameters, document ids and every setting, with ``focus`` the head on show. The
    arrays are copies, so later edits cannot leak in."""
    arrays: dict[str, np.ndarray] = {
        "lens_1d": np.array(state.lens_1d, copy=True),
        "lens_2d": np.array(state.lens_2d, copy=True),
    }
    for name, value in state.params.items():
        arrays[PARAM_PREFIX + name] = np.array(value, copy=True)
    if state.documents is not None:
        arrays[DOCUMENTS] = np.array(state.documents, copy=True)
    # A live mask_mod (a FlexAttention call, attnviz.show(mask=...)) as the boolean attn_mask it
    # amounts to: a session keeps arrays, as a capture file does.
    run = storable(state.run)
    layer, head = run.clamp(focus)
    calls = []
    for index, call in enumerate(run.calls):
        for name in (*_CALL_ARRAYS, *MASK_ARGUMENTS):
            value = getattr(call.masks if name in MASK_ARGUMENTS else call, name)
            if value is not None:
                arrays[f"{RUN_PREFIX}{index}/{name}"] = np.array(value, copy=True)
        calls.append(
            {
                "name": call.name,
                "scale": call.scale,
                "is_causal": call.masks.is_causal,
                "causal_alignment": call.masks.causal_alignment,
                "fidelity": fidelity_to_json(call.fidelity),
                "note": str(call.note),
            }
        )
    model: dict[str, Any] = {
        "source": run.source,
        "layer": layer,
        "head": head,
        "calls": calls,
        "query_tokens": _tokens_json(run.query_tokens),
        "key_tokens": _tokens_json(run.key_tokens),
    }
    # Version 4: what the run is compared with (left out when nothing is, so such a session
    # stays readable by a version 3 reader).
    if state.ablated_heads:
        model["ablated_heads"] = [[call, head_index] for call, head_index in sorted(state.ablated_heads)]
    if state.compared_with is not None:
        model["compared_with"] = state.compared_with
    return Session(arrays=arrays, settings=state.settings.as_dict(), model=model)


def _tokens_json(tokens: np.ndarray | None) -> list[list[str]] | None:
    return label_lists(tokens)


def session_to_state(
    session: Session,
    *,
    source: str | os.PathLike[str] = "session",
    notes: list[str] | None = None,
) -> State:
    """Rebuild a ``State`` from a session of any version (``session_to_state_and_focus``)."""
    return session_to_state_and_focus(session, source=source, notes=notes)[0]


def session_to_state_and_focus(
    session: Session,
    *,
    source: str | os.PathLike[str] = "session",
    notes: list[str] | None = None,
) -> tuple[State, Focus]:
    """Rebuild a ``State`` from a session, checking that it is complete and consistent, with the
    head that was on show when it was saved.

    ``source`` names the session in messages (its path). Non-fatal findings (unknown keys,
    defaults used) are appended to ``notes`` when a list is given. Raises
    :class:`SessionFileError` with a one-line message for anything the app cannot show.
    """
    # Whatever the checks below did not foresee is still a one-line refusal naming the file.
    with refusals(SessionFileError, source):
        return _session_to_state(session, source, [] if notes is None else notes)


def _session_to_state(session: Session, source: str | os.PathLike[str], found: list[str]) -> tuple[State, Focus]:
    def fail(reason: str) -> SessionFileError:
        return SessionFileError(source, reason)

    arrays = dict(session.arrays)
    if "mask" in arrays:
        # What a bare mask means would be a guess: a session keeps each under its argument's name.
        raise fail(
            QT_TRANSLATE_NOOP(
                "FileErrors",
                "holds an array 'mask', which sessions do not have: masks are kept "
                "as masks/attn_mask, masks/key_padding_mask or "
                "masks/attention_mask",
            )
        )
    # Versions 1 and 2 kept the causal flag and scale of the head on show among the settings.
    try:
        settings, of_call = read_settings(session.settings, found)
    except ValueError as exc:
        raise fail(exception_message(exc)) from exc
    model = session.model or {}
    damaged = QT_TRANSLATE_NOOP("FileErrors", "has a damaged model description: {error}")
    budget = Budget(source, SessionFileError)
    try:
        if model.get("calls") is None:
            run, focus = _book_run_from_session(arrays, model, of_call, budget), Focus()
        else:
            run, focus = _run_from_session(model, arrays, of_call, budget)
    except SessionFileError:
        raise  # already one line naming the file (a token budget, say)
    except _DamagedModel as exc:
        raise fail(message(damaged, error=str(exc))) from exc
    except ValueError as exc:
        if model.get("calls") is None:
            raise fail(exception_message(exc)) from exc  # the book's tensors themselves
        raise fail(message(damaged, error=exception_message(exc))) from exc
    except (TypeError, KeyError, IndexError) as exc:
        raise fail(message(damaged, error=exception_message(exc))) from exc
    shown = run.head_view(*focus)
    b, n_q, n_k = shown.batch, shown.n_queries, shown.n_keys
    queries_of = {call.shape[2] for call in run.calls}
    keys_of = {call.shape[3] for call in run.calls}

    lens: dict[str, np.ndarray] = {}
    for name, shape in (("lens_1d", (b,)), ("lens_2d", (b, n_q))):
        if name not in arrays:
            found.append(message(QT_TRANSLATE_NOOP("FileNotes", "no '{name}' array: every key is valid"), name=name))
            lens[name] = np.full(shape, n_k, dtype=np.int64)
            continue
        try:
            lens[name] = as_lengths(arrays[name], name)
        except ValueError as exc:
            raise fail(exception_message(exc)) from exc
        # 2-D lengths are made for one call's queries (a model's calls need not share lengths).
        got = lens[name].shape
        fits = got == shape or (name == "lens_2d" and len(got) == 2 and got[0] == b and got[1] in queries_of)
        if not fits:
            raise fail(
                message(
                    QT_TRANSLATE_NOOP("FileErrors", "'{name}' has shape {shape} but queries {queries} need {needed}"),
                    name=name,
                    shape=lens[name].shape,
                    queries=shown.queries.shape,
                    needed=shape,
                )
            )

    params: dict[str, np.ndarray] = {}
    for name, value in arrays.items():
        if name.startswith(PARAM_PREFIX) and len(name) > len(PARAM_PREFIX):
            array = np.asarray(value)
            if array.dtype.kind not in "fiu":  # bool is kind "b": refused too
                raise fail(
                    message(
                        QT_TRANSLATE_NOOP("FileErrors", "parameter '{name}' must hold real numbers, not {dtype}"),
                        name=name,
                        dtype=array.dtype.name,
                    )
                )
            # Float parameters keep their dtype (a saved float32 W reloads bit for bit).
            dtype = array.dtype if array.dtype.kind == "f" else np.float64
            params[name[len(PARAM_PREFIX) :]] = np.array(array, dtype=dtype, copy=True)
        elif name not in STATE_ARRAYS and name != DOCUMENTS and not name.startswith((RUN_PREFIX, MASKS_PREFIX)):
            found.append(message(QT_TRANSLATE_NOOP("FileNotes", "ignored the unknown array '{name}'"), name=name))
    documents = None
    if DOCUMENTS in arrays:
        try:
            documents = as_lengths(arrays[DOCUMENTS], DOCUMENTS)
        except ValueError as exc:
            raise fail(exception_message(exc)) from exc
        if documents.ndim != 2 or documents.shape[0] != b or documents.shape[1] not in keys_of:
            raise fail(
                message(
                    QT_TRANSLATE_NOOP("FileErrors", "'{name}' has shape {shape} but keys {keys} need {needed}"),
                    name=DOCUMENTS,
                    shape=documents.shape,
                    keys=shown.keys.shape,
                    needed=(b, n_k),
                )
            )
    try:
        ablated = _ablated_heads(model.get("ablated_heads", []), run)
        compared_with = _compared_with(model.get("compared_with"), source)
    except ValueError as exc:
        raise fail(message(damaged, error=exception_message(exc))) from exc
    state = State(run, lens["lens_1d"], lens["lens_2d"], settings, params, documents, ablated, compared_with)
    return state, focus


# The longest path a session may name as the capture its run is compared with.
MAX_PATH_CHARS = 4096


def _ablated_heads(value: Any, run: ModelRun) -> frozenset[tuple[int, int]]:
    """``model["ablated_heads"]``: a list of [call, head] pairs of heads the run has."""
    if not isinstance(value, list):
        raise ValueError(
            message(
                QT_TRANSLATE_NOOP("FileErrors", "'ablated_heads' is {value}; expected a list of [call, head] pairs"),
                value=shown_value(value),
            )
        )
    heads = set()
    for pair in value:
        if not isinstance(pair, list) or len(pair) != 2:
            raise ValueError(
                message(
                    QT_TRANSLATE_NOOP("FileErrors", "'ablated_heads' holds {value}; expected a [call, head] pair"),
                    value=shown_value(pair),
                )
            )
        heads.add(
            _head_of(
                run,
                _whole_entry(pair[0], "ablated_heads"),
                _whole_entry(pair[1], "ablated_heads"),
                QT_TRANSLATE_NOOP("FileErrors", "the ablated head {head} of call {layer} is not in the model"),
            )
        )
    return frozenset(heads)


def _compared_with(value: Any, source: str | os.PathLike[str]) -> str | None:
    """``model["compared_with"]``: the capture file's path (a relative one is the session's
    neighbour; a network path is refused), or None. The file itself is read when the
    comparison is shown, with a capture file's checks."""
    if value is None:
        return None
    # A network or device path (\\host\share and its other spellings, paths.network_path) would be
    # reached when the tab shows it: a shared session must not make the app contact a server.
    network = network_path(value) if isinstance(value, str) else False
    if not isinstance(value, str) or not value or len(value) > MAX_PATH_CHARS or "\0" in value or network:
        raise ValueError(
            message(
                QT_TRANSLATE_NOOP("FileErrors", "'compared_with' is {value}; expected the path of a capture file"),
                value=shown_value(value),
            )
        )
    if not os.path.isabs(value):
        return os.path.join(os.path.dirname(os.path.abspath(source)), value)
    return value


def _book_run_from_session(
    arrays: Mapping[str, np.ndarray], model: Mapping[str, Any], of_call: Mapping[str, Any], budget: Budget
) -> ModelRun:
    """A version 1 or 2 session of the book's tensors (no calls): ``queries``, ``keys``,
    ``values`` and ``masks/<argument>`` arrays, tokens in ``model``, the causal flag and scale
    from the settings (``of_call``). ValueError names what is wrong."""
    missing = [name for name in ("queries", "keys", "values") if name not in arrays]
    if missing:
        raise ValueError(
            message(
                QT_TRANSLATE_NOOP("FileErrors", "has no '{name}' array; a session needs queries, keys and values"),
                name=missing[0],
            )
        )
    queries = as_tensor(arrays["queries"], "queries")
    keys = as_tensor(arrays["keys"], "keys")
    values = as_tensor(arrays["values"], "values")
    check_qkv(queries, keys, values)
    masks: dict[str, Any] = {
        name: arrays[MASKS_PREFIX + name] for name in MASK_ARGUMENTS if MASKS_PREFIX + name in arrays
    }
    batch = queries.shape[0]
    try:
        return State.from_tensors(
            queries,
            keys,
            values,
            masks=MaskArguments(**masks) if masks else None,
            causal=of_call.get("causal"),
            scale=of_call.get("scale"),
            query_tokens=_tokens_from(model.get("query_tokens"), batch, "query_tokens", budget),
            key_tokens=_tokens_from(model.get("key_tokens"), batch, "key_tokens", budget),
        ).run
    except SessionFileError:
        raise
    except (ValueError, TypeError, KeyError, IndexError) as exc:
        raise _DamagedModel(exception_message(exc)) from exc


class _DamagedModel(Exception):
    """What a session's ``model`` description says does not fit its tensors (tokens, say)."""


def _tokens_from(value: Any, batch: int, name: str, budget: Budget) -> np.ndarray | None:
    if value is None:
        return None
    if (
        not isinstance(value, list)
        or len(value) != batch
        or not all(isinstance(row, list) and all(isinstance(t, str) for t in row) for row in value)
        or len({len(row) for row in value}) > 1
    ):
        raise ValueError(
            message(
                QT_TRANSLATE_NOOP("FileErrors", "'{name}' must be {batch} lists of strings of one length"),
                name=name,
                batch=batch,
            )
        )
    # Counted and measured on the lists before numpy stores every token as wide as the widest.
    return budget.labels(name, value).reshape(batch, -1)


def _run_from_session(
    model: Mapping[str, Any], arrays: Mapping[str, np.ndarray], of_call: Mapping[str, Any], budget: Budget
) -> tuple[ModelRun, Focus]:
    """The run a session's ``model`` describes and the head on show; ``of_call``: a version 2
    session's causal flag and scale of that head, written into its call."""
    calls_json = model.get("calls")
    if not isinstance(calls_json, list) or not calls_json:
        raise ValueError(message(QT_TRANSLATE_NOOP("FileErrors", "'calls' must be a non-empty list")))
    calls = []
    for index, info in enumerate(calls_json):

        def arr(name: str, index: int = index) -> np.ndarray | None:
            return arrays.get(f"{RUN_PREFIX}{index}/{name}")

        fields = _call_fields(info, index)
        calls.append(
            AttentionCall(
                fields["name"],
                arr("queries"),
                arr("keys"),
                arr("values"),
                MaskArguments(
                    arr("attn_mask"),
                    arr("key_padding_mask"),
                    arr("attention_mask"),
                    fields["is_causal"],
                    fields["causal_alignment"],
                ),
                scale=fields["scale"],
                output=arr("output"),
                weights=arr("weights"),
                fidelity=fields["fidelity"],
                note=fields["note"],
            )
        )
    source = model.get("source", "file")
    batch = calls[0].shape[0]
    run = ModelRun(
        tuple(calls),
        _tokens_from(model.get("query_tokens"), batch, "query_tokens", budget),
        _tokens_from(model.get("key_tokens"), batch, "key_tokens", budget),
        source=source if source in _RUN_SOURCES else "file",
    )
    layer, head = _head_of(
        run,
        _whole_entry(model.get("layer", 0), "layer"),
        _whole_entry(model.get("head", 0), "head"),
        QT_TRANSLATE_NOOP("FileErrors", "the head shown, {head} of call {layer}, is not in the model"),
    )
    for call in run.calls:
        if not call.weights_only:
            view = run.head_view(run.calls.index(call), 0)
            check_qkv(view.queries, view.keys, view.values)  # the editor's limits, per head
    call = run.calls[layer]
    if "causal" in of_call and of_call["causal"] != call.masks.causal:
        run = run.with_causal(layer, of_call["causal"])
    if "scale" in of_call and of_call["scale"] != call.scale:
        run = run.with_call(layer, scale=of_call["scale"])
    return run, Focus(layer, head)


def _call_fields(info: Any, index: int) -> dict[str, Any]:
    """A call's entry of the session's model description, each value of the type it must have:
    a wrong one is refused, never converted (``bool("false")`` is True, ``int(1.9)`` is 1)."""
    if not isinstance(info, dict):
        raise ValueError(
            message(
                QT_TRANSLATE_NOOP("FileErrors", "call {index} is {value}, not an object"),
                index=index,
                value=shown_value(info),
            )
        )

    fields = checked_call_fields(info, index)
    alignment = info.get("causal_alignment", "top_left")
    if alignment not in CAUSAL_ALIGNMENTS:
        raise ValueError(
            message(
                QT_TRANSLATE_NOOP("FileErrors", "'causal_alignment' is {value}; expected one of {choices}"),
                value=shown_value(alignment),
                choices=", ".join(CAUSAL_ALIGNMENTS),
            )
        )
    return {**fields, "causal_alignment": alignment}


def _head_of(run: ModelRun, layer: int, head: int, missing: str) -> tuple[int, int]:
    """(``layer``, ``head``) when the run has that head, else ValueError ``missing`` (a template
    of ``{head}`` and ``{layer}``)."""
    if not run.has_head(layer, head):
        raise ValueError(message(missing, head=head, layer=layer))
    return layer, head


def _whole_entry(value: Any, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(
            message(
                QT_TRANSLATE_NOOP("FileErrors", "'{key}' is {value}; expected a whole number"),
                key=key,
                value=shown_value(value),
            )
        )
    return value


def load_state_file(path: str | os.PathLike[str], *, notes: list[str] | None = None) -> State:
    """Read an ``.attnviz`` file into a ``State``; raises :class:`SessionFileError` only."""
    return load_state_and_focus(path, notes=notes)[0]


def load_state_and_focus(path: str | os.PathLike[str], *, notes: list[str] | None = None) -> tuple[State, Focus]:
    """Read an ``.attnviz`` file: its ``State`` and the head that was on show; raises
    :class:`SessionFileError` only."""
    return session_to_state_and_focus(load_session(path), source=path, notes=notes)


def save_state_file(path: str | os.PathLike[str], state: State, focus: tuple[int, int] = Focus()) -> None:
    """Write ``state`` as an ``.attnviz`` session (atomically), ``focus`` the head on show;
    raises :class:`SessionFileError`."""
    try:
        session = state_to_session(state, focus)
    except ModelRunError as exc:  # a live mask_mod too large or failing as the arrays a file keeps
        raise SessionFileError(
            path, message(QT_TRANSLATE_NOOP("FileErrors", "cannot be written: {problem}"), problem=exc)
        ) from exc
    save_session(path, session)
