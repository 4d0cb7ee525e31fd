"""The app's ``State`` to and from files: ``.attnviz`` sessions and users' tensor files.

No Qt and no torch here (the GUI calls this on its own thread, before PyTorch has loaded).

How a ``State`` is laid out in a session (format version 3, see ``SESSION_FORMAT.md``):

* the run, always (the book's input is a run of one call and one head, ``source`` "book"):
  ``run/<i>/<name>`` arrays per call and a ``model`` description (calls' names, scales, causal
  flags; tokens; the head on show when saved, reopened on show);
* arrays ``lens_1d`` (B,) and ``lens_2d`` (B, Q) (both kept, the ``lens_mode`` setting picks
  one), ``documents`` (B, K) when set, one ``params/<name>`` array per learnable scoring
  parameter (none: seeded ones);
* settings: the fields of :class:`attnviz.document.Settings`, flat
  (``{"scoring": "additive", "mask_mode": "d2l", "lens_mode": "1d", ...}``).

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

import math
import operator
import os
import re
from collections.abc import Mapping
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from attnviz.document import (
    CALL_SETTINGS,
    MAX_BATCH,
    MAX_DIM,
    MAX_HIDDEN,
    MAX_LOADED_LEN,
    MODEL_SETTINGS,
    LensMode,
    Settings,
    State,
)
from attnviz.io._json import whole_or_float
from attnviz.io._limits import Budget, label_lists
from attnviz.io.errors import SessionFileError, TensorFileError, refusals
from attnviz.io.model_files import ROLE_NAMES, check_roles, file_extras, has_heads, model_run_from_file
from attnviz.io.roles import MASK_ROLES, MODEL_ROLES, ROLE_ALIASES, guess_roles, needs_head_choice, select_head
from attnviz.io.session import Session, load_session, save_session
from attnviz.io.tensors import TensorFile
from attnviz.model_run import CAUSAL_ALIGNMENTS, MASK_ARGUMENTS, AttentionCall, Focus, MaskArguments, ModelRun
from attnviz.tr import QT_TRANSLATE_NOOP, exception_message, joined, message, plural

__all__ = [
    "CAUSAL_NAMES",
    "DTYPE_NAMES",
    "LENS_MODES",
    "MASK_MODE_NAMES",
    "PARAM_PREFIX",
    "SCORING_NAMES",
    "StateFileError",
    "is_session_path",
    "load_state_and_focus",
    "load_state_file",
    "save_state_file",
    "session_to_state",
    "session_to_state_and_focus",
    "settings_problem",
    "state_from_tensor_file",
    "state_to_session",
    "tensor_file_focus",
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
_RUN_SOURCES = ("file", "capture", "transformer_lens", "output_attentions", "tensors", "book")

# The names the engine and the settings panel know. Written out here because importing
# attnviz.engine loads torch, which the GUI thread must not wait for; tests/io/test_state_io.py
# checks these against the engine's registries so they cannot drift apart.
SCORING_NAMES: tuple[str, ...] = ("additive", "scaled_dot", "dot", "bilinear", "gaussian", "summation")
MASK_MODE_NAMES: tuple[str, ...] = ("d2l", "strict", "neg_inf", "sdpa", "float01", "inverted")
CAUSAL_NAMES: tuple[str, ...] = CAUSAL_ALIGNMENTS
DTYPE_NAMES: tuple[str, ...] = ("float32", "float64", "float16", "bfloat16")
LENS_MODES: tuple[str, ...] = ("none", "1d", "2d")
_SEED_MAX = 2**31 - 1  # the seed spin boxes' range


class StateFileError(TensorFileError):
    """A tensor file whose arrays cannot become attnviz inputs (wrong ranks, shapes disagree)."""


# ----------------------------------------------------------------------------- sessions


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
    run = state.run
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
                # JSON has no infinity: written as the capture format writes it.
                "fidelity": INFINITE_FIDELITY
                if call.fidelity is not None and math.isinf(call.fidelity)
                else call.fidelity,
                "note": str(call.note),
            }
        )
    model = {
        "source": run.source,
        "layer": layer,
        "head": head,
        "calls": calls,
        "query_tokens": _tokens_json(run.query_tokens),
        "key_tokens": _tokens_json(run.key_tokens),
    }
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
    raw_settings = dict(session.settings)
    # Versions 1 and 2 kept the causal flag and scale of the head on show among the settings.
    of_call: dict[str, Any] = {}
    for name in CALL_SETTINGS:
        if name in raw_settings:
            value = raw_settings.pop(name)
            problem = settings_problem(name, value)
            if problem is not None:
                raise fail(problem)
            of_call[name] = None if value is None else (float(value) if name == "scale" else value)
    settings = _settings_from(raw_settings, found, fail)
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
            lens[name] = _lengths(arrays[name], name)
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
            documents = _lengths(arrays[DOCUMENTS], DOCUMENTS)
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
    state = State(run, lens["lens_1d"], lens["lens_2d"], settings, params, documents)
    return state, focus


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
    queries = _tensor(arrays["queries"], "queries")
    keys = _tensor(arrays["keys"], "keys")
    values = _tensor(arrays["values"], "values")
    _check_qkv(queries, keys, values)
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
    layer, head = _whole_entry(model.get("layer", 0), "layer"), _whole_entry(model.get("head", 0), "head")
    if not run.has_head(layer, head):
        raise ValueError(
            message(
                QT_TRANSLATE_NOOP("FileErrors", "the head shown, {head} of call {layer}, is not in the model"),
                head=head,
                layer=layer,
            )
        )
    for call in run.calls:
        if not call.weights_only:
            view = run.head_view(run.calls.index(call), 0)
            _check_qkv(view.queries, view.keys, view.values)  # the editor's limits, per head
    call = run.calls[layer]
    if "causal" in of_call and of_call["causal"] != call.masks.causal:
        run = run.with_causal(layer, of_call["causal"])
    if "scale" in of_call and of_call["scale"] != call.scale:
        run = run.with_call(layer, scale=of_call["scale"])
    return run, Focus(layer, head)


#: JSON has no infinity: a call's infinite fidelity (NaN in the model's output where attnviz has a
#: number, or the reverse) is stored as this string, as in capture files.
INFINITE_FIDELITY = "inf"


def _call_fields(info: Any, index: int) -> dict[str, Any]:
    """A call's entry of the session's model description, each value of the type it must have:
    a wrong one is refused, never converted (``bool("false")`` is True, ``int(1.9)`` is 1)."""
    if not isinstance(info, dict):
        raise ValueError(
            message(
                QT_TRANSLATE_NOOP("FileErrors", "call {index} is {value}, not an object"),
                index=index,
                value=_shown(info),
            )
        )

    def wrong(key: str, expected: str) -> ValueError:
        return ValueError(
            message(
                QT_TRANSLATE_NOOP("FileErrors", "call {index}: '{key}' is {value}; expected {expected}"),
                index=index,
                key=key,
                value=_shown(info.get(key)),
                expected=expected,
            )
        )

    name, is_causal, note = info.get("name"), info.get("is_causal", False), info.get("note", "")
    scale, fidelity = info.get("scale"), info.get("fidelity")
    scale_value = whole_or_float(scale)
    fidelity_value = math.inf if fidelity == INFINITE_FIDELITY else whole_or_float(fidelity)
    alignment = info.get("causal_alignment", "top_left")
    if not isinstance(name, str) or not name:
        raise wrong("name", QT_TRANSLATE_NOOP("FileErrors", "a non-empty string"))
    if not isinstance(is_causal, bool):
        raise wrong("is_causal", QT_TRANSLATE_NOOP("FileErrors", "true or false"))
    if scale is not None and (scale_value is None or scale_value <= 0):
        raise wrong("scale", QT_TRANSLATE_NOOP("FileErrors", "null or a number > 0"))
    if fidelity is not None and (fidelity_value is None or fidelity_value < 0):
        raise wrong("fidelity", QT_TRANSLATE_NOOP("FileErrors", 'null, "inf" or a number >= 0'))
    if not isinstance(note, str):
        raise wrong("note", QT_TRANSLATE_NOOP("FileErrors", "a string"))
    if alignment not in CAUSAL_NAMES:
        raise ValueError(
            message(
                QT_TRANSLATE_NOOP("FileErrors", "'causal_alignment' is {value}; expected one of {choices}"),
                value=_shown(alignment),
                choices=", ".join(CAUSAL_NAMES),
            )
        )
    return {
        "name": name,
        "is_causal": is_causal,
        "causal_alignment": alignment,
        "scale": scale_value,
        "fidelity": fidelity_value,
        "note": note,
    }


def _whole_entry(value: Any, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(
            message(
                QT_TRANSLATE_NOOP("FileErrors", "'{key}' is {value}; expected a whole number"),
                key=key,
                value=_shown(value),
            )
        )
    return value


def _shown(value: Any) -> str:
    """A value from a file, bounded for a message."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


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
    save_session(path, state_to_session(state, focus))


def settings_problem(name: str, value: Any) -> str | None:
    """Why ``value`` is not acceptable for the setting ``name`` (None when it is)."""
    choices: dict[str, tuple[str, ...]] = {
        "scoring": SCORING_NAMES,
        "mask_mode": MASK_MODE_NAMES,
        "lens_mode": LENS_MODES,
        "dtype": DTYPE_NAMES,
    }
    shown = repr(value)
    if name in choices:
        if value not in choices[name]:
            return message(
                QT_TRANSLATE_NOOP("FileErrors", "setting '{name}' is {value}; expected one of {choices}"),
                name=name,
                value=shown,
                choices=", ".join(choices[name]),
            )
        return None
    if name == "causal":
        if value is not None and value not in CAUSAL_NAMES:
            return message(
                QT_TRANSLATE_NOOP("FileErrors", "setting '{name}' is {value}; expected null, {choices}"),
                name=name,
                value=shown,
                choices=", ".join(CAUSAL_NAMES),
            )
        return None
    if name == "scale":
        ok = value is None or (
            isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0
        )
        return (
            None
            if ok
            else message(
                QT_TRANSLATE_NOOP("FileErrors", "setting '{name}' is {value}; expected null or a number above 0"),
                name=name,
                value=shown,
            )
        )
    if name == "device":
        if not isinstance(value, str) or not value.strip():
            return message(
                QT_TRANSLATE_NOOP("FileErrors", "setting '{name}' is {value}; expected a device name such as \"cpu\""),
                name=name,
                value=shown,
            )
        return None
    if name == "train":
        return (
            None
            if isinstance(value, bool)
            else message(
                QT_TRANSLATE_NOOP("FileErrors", "setting '{name}' is {value}; expected true or false"),
                name=name,
                value=shown,
            )
        )
    if name == "dropout":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and 0.0 <= value <= 1.0
        return (
            None
            if ok
            else message(
                QT_TRANSLATE_NOOP("FileErrors", "setting '{name}' is {value}; expected a number from 0 to 1"),
                name=name,
                value=shown,
            )
        )
    limits = {
        "num_hiddens": (1, MAX_HIDDEN),
        "dropout_seed": (0, _SEED_MAX),
        "param_seed": (0, _SEED_MAX),
        "window": (0, _SEED_MAX),
        "sinks": (0, _SEED_MAX),
        "prefix": (0, _SEED_MAX),
        "chunk": (0, _SEED_MAX),
    }
    if name in limits:
        low, high = limits[name]
        ok = isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
        return (
            None
            if ok
            else message(
                QT_TRANSLATE_NOOP(
                    "FileErrors", "setting '{name}' is {value}; expected a whole number from {low} to {high}"
                ),
                name=name,
                value=shown,
                low=low,
                high=high,
            )
        )
    defaults = Settings()
    if hasattr(defaults, name):
        # A setting without a rule of its own (added after this module was written): it must at
        # least have the type of its default, so a file cannot put a string where a flag goes.
        default = getattr(defaults, name)
        if default is None or value is None:
            return None
        if isinstance(default, bool) or isinstance(value, bool):
            ok = isinstance(value, bool) and isinstance(default, bool)
        elif isinstance(default, float):
            ok = isinstance(value, (int, float))
        else:
            ok = isinstance(value, type(default))
        return (
            None
            if ok
            else message(
                QT_TRANSLATE_NOOP("FileErrors", "setting '{name}' is {value}; expected a {type}"),
                name=name,
                value=shown,
                type=type(default).__name__,
            )
        )
    return message(QT_TRANSLATE_NOOP("FileErrors", "'{name}' is not a setting"), name=name)


def _settings_from(raw: Mapping[str, Any], notes: list[str], fail: Any) -> Settings:
    known = {f.name for f in fields(Settings)}
    defaults = Settings()
    values: dict[str, Any] = {}
    for name, value in raw.items():
        if name not in known:
            notes.append(message(QT_TRANSLATE_NOOP("FileNotes", "ignored the unknown setting '{name}'"), name=name))
            continue
        if isinstance(getattr(defaults, name), float) and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)  # some JSON writers store 0.0 as 0
        problem = settings_problem(name, value)
        if problem is not None:
            raise fail(problem)
        values[name] = value
    defaulted = sorted(known - set(values))
    if defaulted:
        notes.append(
            message(QT_TRANSLATE_NOOP("FileNotes", "used the default for {names}"), names=", ".join(defaulted))
        )
    return Settings(**values)


# ------------------------------------------------------------------------- array checks


def _tensor(value: Any, role: str) -> np.ndarray:
    """A 3-D float64 copy of a Q/K/V array, or ValueError naming the role."""
    array = np.asarray(value)
    if array.dtype.kind not in "fiu":  # bool (kind "b") is refused too
        raise ValueError(
            message(
                QT_TRANSLATE_NOOP("FileErrors", "'{name}' must hold real numbers, not {dtype}"),
                name=role,
                dtype=array.dtype.name,
            )
        )
    if array.ndim != 3:
        raise ValueError(
            message(
                QT_TRANSLATE_NOOP("FileErrors", "'{name}' must be 3-D (batch, n, d), got shape {shape}"),
                name=role,
                shape=array.shape,
            )
        )
    # float64 holds every float16/32 and int32 value exactly; the compute dtype is a setting.
    return np.array(array, dtype=np.float64, copy=True)


def _lengths(value: Any, role: str) -> np.ndarray:
    """Valid lengths as int64, or ValueError when they are not whole numbers."""
    array = np.asarray(value)
    if array.dtype.kind in "iu":
        if array.dtype.kind == "u" and array.size and int(array.max()) > np.iinfo(np.int64).max:
            raise ValueError(message(_TOO_LARGE, name=role))
        return array.astype(np.int64)
    if array.dtype.kind == "f":
        finite = np.isfinite(array)
        if not finite.all() or not np.array_equal(array, np.round(array)):
            raise ValueError(
                message(
                    QT_TRANSLATE_NOOP("FileErrors", "'{name}' must hold whole numbers (valid lengths), found {value}"),
                    name=role,
                    value=_first_bad(array),
                )
            )
        if array.size and float(np.abs(array).max()) > 2.0**62:
            raise ValueError(message(_TOO_LARGE, name=role))
        return array.astype(np.int64)
    raise ValueError(
        message(
            QT_TRANSLATE_NOOP("FileErrors", "'{name}' must hold whole numbers (valid lengths), not {dtype}"),
            name=role,
            dtype=array.dtype.name,
        )
    )


_TOO_LARGE = QT_TRANSLATE_NOOP("FileErrors", "'{name}' has lengths too large for int64")


def _first_bad(array: np.ndarray) -> str:
    flat = array.reshape(-1)
    bad = ~np.isfinite(flat) | (flat != np.round(flat))
    return repr(float(flat[int(np.argmax(bad))]))


def _check_qkv(queries: np.ndarray, keys: np.ndarray, values: np.ndarray) -> None:
    """Shapes must agree with each other and fit the editor's limits."""
    shapes = {"q": queries.shape, "k": keys.shape, "v": values.shape}
    if queries.shape[0] != keys.shape[0] or keys.shape[0] != values.shape[0]:
        raise ValueError(
            message(
                QT_TRANSLATE_NOOP("FileErrors", "batch sizes disagree: queries {q}, keys {k}, values {v}"), **shapes
            )
        )
    if keys.shape[1] != values.shape[1]:
        raise ValueError(
            message(
                QT_TRANSLATE_NOOP(
                    "FileErrors", "keys {k} and values {v} must have the same number of entries (axis 1)"
                ),
                k=keys.shape,
                v=values.shape,
            )
        )
    limits = (
        (QT_TRANSLATE_NOOP("FileErrors", "batch size"), queries.shape[0], MAX_BATCH),
        (QT_TRANSLATE_NOOP("FileErrors", "number of queries"), queries.shape[1], MAX_LOADED_LEN),
        (QT_TRANSLATE_NOOP("FileErrors", "number of keys"), keys.shape[1], MAX_LOADED_LEN),
        ("d_q", queries.shape[2], MAX_DIM),
        ("d_k", keys.shape[2], MAX_DIM),
        ("d_v", values.shape[2], MAX_DIM),
    )
    for what, size, limit in limits:
        if size < 1:
            raise ValueError(
                message(
                    QT_TRANSLATE_NOOP(
                        "FileErrors", "the {what} is 0 (queries {q}, keys {k}, values {v}); attnviz needs at least 1"
                    ),
                    what=what,
                    **shapes,
                )
            )
        if size > limit:
            raise ValueError(
                message(
                    QT_TRANSLATE_NOOP("FileErrors", "the {what} is {size}, more than the {limit} attnviz can edit"),
                    what=what,
                    size=size,
                    limit=limit,
                )
            )


# --------------------------------------------------------------------------- tensor files


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
            _check_qkv(view.queries, view.keys, view.values)  # the editor's limits, per head
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
        _check_qkv(queries, keys, values)
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
        settings = _replace(base.settings, lens_mode=mode)
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
    lens = _lengths(raw, name)
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


def _replace(settings: Settings, **changes: Any) -> Settings:
    return replace(settings, **changes)


def is_session_path(path: str | os.PathLike[str]) -> bool:
    """True when the name says ``.attnviz`` session (anything else is read as a tensor file)."""
    return Path(path).suffix.lower() == ".attnviz"
