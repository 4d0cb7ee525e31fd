"""A real model's attention from a user's tensor file: heads, layers, masks, causality, scale and
tokens, as a :class:`~attnviz.state.run.ModelRun` (or, for the book's 3-D tensors, as the masks
and tokens of one ``State``). No Qt and no torch here. What a file may hold: ``FILE_FORMATS.md``.

Tensors: queries, keys and values all (B, H, L, d) or all (layers, B, H, L, d); keys and values
may have fewer heads than the queries (grouped-query attention), a divisor of theirs.

A mask means what the argument it is named after says, never what its values look like:

  attn_mask         as torch SDPA reads it: bool True = attend, float added to the scores
  key_padding_mask  as ``nn.MultiheadAttention`` reads it: (B, L_k), bool True = ignore, float added
  attention_mask    as Hugging Face builds it: 0/1 (int, bool or float), 1 = attend; (B, L_k) or
                    broadcastable to (B, H, L_q, L_k)
  mask              a name code uses for any of these, so a rule, said in a note: bool or float
                    is read as ``attn_mask`` (True = attend; SDPA's convention, which Hugging
                    Face's boolean masks share), whole numbers as ``attention_mask`` (SDPA and
                    ``nn.MultiheadAttention`` take no integer masks; tokenizers return int64
                    0/1). A mask whose True means "ignore" must be named ``key_padding_mask``.

Masks broadcast as PyTorch code broadcasts them against (B, H, L_q, L_k): (L_q, L_k),
(B, 1, 1, L_k), (B, 1, L_q, L_k), (B, H, L_q, L_k); the padding forms (B, L_k) of
``key_padding_mask`` and ``attention_mask``. In a file with layers, a mask may start with a
layer axis (layers or 1): 5-D ``attn_mask``/``attention_mask``, 3-D ``key_padding_mask``;
without one it serves every layer. In a file without heads (3-D tensors), masks broadcast
against (B, L_q, L_k), and a head axis of 1 ((B, 1, 1, L_k) as captured from a model) is dropped.

``is_causal`` (true/false) is SDPA's flag: top-left aligned. ``causal`` ("top_left" or
"bottom_right") says the alignment too; "bottom_right" lines the last query up with the last
key, as a KV-cache step needs. ``scale`` is SDPA's ``scale`` (default 1/sqrt(d)). These three
may be 0-d arrays, plain values in a ``.pt`` or strings in ``.safetensors`` metadata.

Tokens: ``tokens`` labels both axes (each axis whose length it matches), ``query_tokens`` and
``key_tokens`` one axis each; shaped (L,) for every batch element or (B, L).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from attnviz.io.roles import ALL_ROLES, MASK_ROLES, TEXT_ROLES, role_names
from attnviz.io.tensors import TensorFile
from attnviz.state.run import AttentionCall, MaskArguments, ModelRun
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

__all__ = [
    "CAUSAL_ALIGNMENTS",
    "ROLE_NAMES",
    "FileExtras",
    "ModelFileError",
    "check_roles",
    "file_extras",
    "has_heads",
    "model_run_from_file",
]

CAUSAL_ALIGNMENTS: tuple[str, ...] = ("top_left", "bottom_right")
_TENSORS = ("queries", "keys", "values")
# Roles as messages name them: the English is the role's name in ``roles`` (so scripts see
# "valid_lens"), the UI shows words. queries/keys/values share the engine's entries.
ROLE_NAMES = {
    "queries": QT_TRANSLATE_NOOP("Errors", "queries"),
    "keys": QT_TRANSLATE_NOOP("Errors", "keys"),
    "values": QT_TRANSLATE_NOOP("Errors", "values"),
    "valid_lens": QT_TRANSLATE_NOOP("FileErrors", "valid_lens"),
    "mask": QT_TRANSLATE_NOOP("FileErrors", "mask"),
}


class ModelFileError(ValueError):
    """A file's model arrays that do not fit together; the message is one line naming shapes."""


@dataclass(frozen=True)
class FileExtras:
    """What a file brings besides queries, keys, values and valid lengths.

    ``masks`` has one entry per layer (one for a file without layers); ``query_tokens`` and
    ``key_tokens`` are (B, L) str arrays or None.
    """

    masks: tuple[MaskArguments, ...]
    scale: float | None
    query_tokens: np.ndarray | None
    key_tokens: np.ndarray | None

    @property
    def causal(self) -> str | None:
        """The causal setting: None, "top_left" or "bottom_right"."""
        return self.masks[0].causal


def check_roles(tf: TensorFile, roles: Mapping[str, str]) -> None:
    """ModelFileError unless each role names something of the right kind in ``tf``: an array of
    numbers for tensors and masks, text for tokens (one-line messages naming the array)."""
    for role, name in roles.items():
        if role not in ALL_ROLES:
            raise ModelFileError(
                message(
                    QT_TRANSLATE_NOOP("FileErrors", "'{name}' is not a role ({roles})"),
                    name=role,
                    roles=", ".join(ALL_ROLES),
                )
            )
        if name in role_names(tf, role):
            continue
        if name in tf.texts:
            raise ModelFileError(
                message(
                    QT_TRANSLATE_NOOP("FileErrors", "'{name}' ({role}) holds text (dtype {dtype}), not numbers"),
                    name=name,
                    role=_role_name(role),
                    dtype=tf.texts[name].dtype.str,
                )
            )
        if name in tf.arrays:
            raise ModelFileError(
                message(
                    QT_TRANSLATE_NOOP("FileErrors", "'{name}' ({role}) holds numbers, not text labels"),
                    name=name,
                    role=role,
                )
            )
        raise ModelFileError(
            message(
                QT_TRANSLATE_NOOP("FileErrors", "has no array named '{name}' (for {role})"),
                name=name,
                role=_role_name(role),
            )
        )


def _role_name(role: str) -> str:
    return ROLE_NAMES.get(role, role)


def has_heads(tf: TensorFile, roles: Mapping[str, str]) -> bool:
    """Whether a chosen query, key or value array has heads (4-D) or layers (5-D)."""
    return any(np.ndim(tf.arrays[roles[r]]) >= 4 for r in _TENSORS if roles.get(r) in tf.arrays)


def model_run_from_file(tf: TensorFile, roles: Mapping[str, str], *, notes: list[str]) -> ModelRun:
    """The model run in ``tf``: queries, keys and values (B, H, L, d), one call, or
    (layers, B, H, L, d), a call per layer, with the file's masks, causality, scale and tokens.

    ``roles`` maps role -> name (``attnviz.io.roles.ALL_ROLES``) and must name all three tensors.
    Findings go to ``notes``. Raises :class:`ModelFileError` (or the run's ``ModelRunError``),
    both ``ValueError`` with one line naming the shapes.
    """
    check_roles(tf, roles)
    missing = [r for r in _TENSORS if r not in roles]
    if missing:
        raise ModelFileError(
            message(
                QT_TRANSLATE_NOOP(
                    "FileErrors", "a model's file needs queries, keys and values: no array was chosen for {role}"
                ),
                role=ROLE_NAMES[missing[0]],
            )
        )
    q, k, v = (_numbers(tf, roles[r], r) for r in _TENSORS)
    ranks = {q.ndim, k.ndim, v.ndim}
    if len(ranks) != 1 or ranks.pop() not in (4, 5):
        raise ModelFileError(
            message(
                QT_TRANSLATE_NOOP(
                    "FileErrors",
                    "queries {q}, keys {k} and values {v} must all be (batch, heads, n, d) or all (layers, "
                    "batch, heads, n, d)",
                ),
                q=q.shape,
                k=k.shape,
                v=v.shape,
            )
        )
    with_layers = q.ndim == 5
    if not with_layers:
        q, k, v = q[None], k[None], v[None]
    elif not q.shape[0] == k.shape[0] == v.shape[0]:
        raise ModelFileError(
            message(
                QT_TRANSLATE_NOOP(
                    "FileErrors", "queries {q}, keys {k} and values {v} disagree on the number of layers (axis 0)"
                ),
                q=q.shape,
                k=k.shape,
                v=v.shape,
            )
        )
    layers, batch, heads, n_q, _ = q.shape
    n_k = k.shape[3]
    extras = file_extras(tf, roles, (batch, heads), n_q, n_k, layers=layers if with_layers else None, notes=notes)
    calls = tuple(
        AttentionCall(f"layer {i}", q[i], k[i], v[i], extras.masks[i], scale=extras.scale) for i in range(layers)
    )
    return ModelRun(calls, extras.query_tokens, extras.key_tokens, source="file")


def file_extras(
    tf: TensorFile,
    roles: Mapping[str, str],
    lead: tuple[int, ...],
    n_q: int,
    n_k: int,
    *,
    layers: int | None = None,
    notes: list[str],
) -> FileExtras:
    """The masks, causality, scale and tokens ``roles`` name in ``tf``, checked against inputs
    with leading dimensions ``lead`` ((B,) or (B, H)), ``n_q`` queries and ``n_k`` keys, in a
    file of ``layers`` layers (None: a file without a layer axis)."""
    is_causal, alignment = _causal(tf, roles)
    if is_causal and alignment == "top_left" and n_q < n_k:
        notes.append(
            message(
                QT_TRANSLATE_NOOP(
                    "FileNotes",
                    "is_causal with fewer queries ({n_q}) than keys ({n_k}) is aligned top-left, as SDPA does: "
                    'a KV-cache step is causal="bottom_right"',
                ),
                n_q=n_q,
                n_k=n_k,
            )
        )
    per_layer: dict[str, list[np.ndarray]] = {}
    for role in MASK_ROLES:
        if role not in roles:
            continue
        name = roles[role]
        array = _numbers(tf, name, role)
        argument = role
        if role == "mask":
            argument = "attention_mask" if array.dtype.kind in "iu" else "attn_mask"
            notes.append(message(_MASK_RULE[argument], name=name))
        if argument in per_layer:
            raise ModelFileError(
                message(
                    QT_TRANSLATE_NOOP(
                        "FileErrors", "'{name}' and '{other}' would both be the {argument}: leave one out"
                    ),
                    name=name,
                    other=roles[argument],
                    argument=argument,
                )
            )
        per_layer[argument] = _mask(name, argument, array, lead, n_q, n_k, layers)
    masks = tuple(
        MaskArguments(
            **{argument: arrays[i] for argument, arrays in per_layer.items()},
            is_causal=is_causal,
            causal_alignment=alignment,
        )
        for i in range(layers or 1)
    )
    query_tokens, key_tokens = _tokens(tf, roles, lead[0], n_q, n_k, notes)
    return FileExtras(masks, _scale(tf, roles), query_tokens, key_tokens)


# ------------------------------------------------------------------------------------- masks

_MASK_RULE = {
    "attn_mask": QT_TRANSLATE_NOOP(
        "FileNotes",
        "'{name}' is read as SDPA's attn_mask: True = attend, floats added "
        "to the scores (a mask whose True means ignore is named "
        "key_padding_mask)",
    ),
    "attention_mask": QT_TRANSLATE_NOOP(
        "FileNotes", "'{name}' holds whole numbers: read as Hugging Face's attention_mask, 1 = attend"
    ),
}
_AXES = {
    1: QT_TRANSLATE_NOOP("FileErrors", "(batch, queries, keys)"),
    2: QT_TRANSLATE_NOOP("FileErrors", "(batch, heads, queries, keys)"),
}


def _mask(
    name: str, argument: str, array: np.ndarray, lead: tuple[int, ...], n_q: int, n_k: int, layers: int | None
) -> list[np.ndarray]:
    """``array`` as the ``argument`` mask of each layer (read-only views), or ModelFileError."""
    kind = array.dtype.kind
    if argument != "attention_mask" and kind in "iu":
        why = {
            "attn_mask": QT_TRANSLATE_NOOP(
                "FileErrors", "SDPA's attn_mask is bool (True = attend) or float (added to the scores)"
            ),
            "key_padding_mask": QT_TRANSLATE_NOOP(
                "FileErrors", "a key_padding_mask is bool (True = ignore) or float (added to the scores)"
            ),
        }[argument]
        raise ModelFileError(
            message(
                QT_TRANSLATE_NOOP(
                    "FileErrors",
                    "'{name}' ({argument}) holds whole numbers ({dtype}): {why}; a 0/1 mask with 1 = attend is "
                    "named attention_mask",
                ),
                name=name,
                argument=argument,
                dtype=array.dtype.name,
                why=why,
            )
        )
    if argument == "attention_mask" and kind != "b":
        odd = (array != 0) & (array != 1)
        if odd.any():
            raise ModelFileError(
                message(
                    QT_TRANSLATE_NOOP(
                        "FileErrors",
                        "'{name}' (attention_mask) must hold 0 and 1 (1 = attend), found {value}; an additive "
                        "mask (0 and large negative numbers) is named attn_mask",
                    ),
                    name=name,
                    value=f"{array[odd].flat[0]:g}",
                )
            )
    full = len(lead) + 2  # (*lead, L_q, L_k)
    padding = argument == "key_padding_mask"
    if layers is not None and array.ndim == (3 if padding else full + 1):
        if array.shape[0] not in (1, layers):
            raise ModelFileError(
                message(
                    QT_TRANSLATE_NOOP(
                        "FileErrors",
                        "'{name}' ({argument}) has shape {shape}: its first axis is {found} layers, the tensors "
                        "have {layers}",
                    ),
                    name=name,
                    argument=argument,
                    shape=array.shape,
                    found=array.shape[0],
                    layers=layers,
                )
            )
        parts = [array[i if array.shape[0] > 1 else 0] for i in range(layers)]
    else:
        if len(lead) == 1 and array.ndim == 4 and array.shape[1] == 1 and not padding:
            array = array[:, 0]  # a head axis of 1 on tensors without heads: (B, 1, 1, L_k) -> (B, 1, L_k)
        parts = [array] * (layers or 1)
    _check_mask_shape(name, argument, parts[0].shape, lead, n_q, n_k)
    return [_read_only(part) for part in parts]


def _check_mask_shape(
    name: str, argument: str, shape: tuple[int, ...], lead: tuple[int, ...], n_q: int, n_k: int
) -> None:
    batch = lead[0]
    if argument == "key_padding_mask" or (argument == "attention_mask" and len(shape) == 2):
        if shape != (batch, n_k):
            raise ModelFileError(
                message(
                    QT_TRANSLATE_NOOP(
                        "FileErrors",
                        "'{name}' ({argument}) has shape {shape}; a padding mask is (batch, keys) = {needed}",
                    ),
                    name=name,
                    argument=argument,
                    shape=shape,
                    needed=(batch, n_k),
                )
            )
        return
    target = (*lead, n_q, n_k)
    if 2 <= len(shape) <= len(target) and all(s in (1, t) for s, t in zip(reversed(shape), reversed(target))):
        return
    examples = [
        (n_q, n_k),
        (batch, *(1,) * (len(lead) - 1), 1, n_k),
        (batch, *(1,) * (len(lead) - 1), n_q, n_k),
        target,
    ]
    raise ModelFileError(
        message(
            QT_TRANSLATE_NOOP(
                "FileErrors",
                "'{name}' ({argument}) has shape {shape}, which does not broadcast to {target} {axes}; "
                "expected a shape such as {examples}",
            ),
            name=name,
            argument=argument,
            shape=shape,
            target=target,
            axes=_AXES[len(lead)],
            examples=", ".join(str(e) for e in dict.fromkeys(examples)),
        )
    )


# -------------------------------------------------------------------------- causal and scale


def _plain(tf: TensorFile, name: str) -> Any:
    """The value named ``name``: a one-element array's element, a 0-d text, a .pt's plain
    value or a .safetensors metadata string."""
    for source in (tf.arrays, tf.texts):
        if name in source:
            array = source[name]
            return array.reshape(-1)[0].item() if array.size == 1 else array
    if name in tf.scalars:
        return tf.scalars[name]
    return tf.metadata[name]


def _causal(tf: TensorFile, roles: Mapping[str, str]) -> tuple[bool, Any]:
    """(is_causal, alignment) from the file's ``is_causal`` and ``causal``."""
    flag: bool | None = None
    if "is_causal" in roles:
        flag = _flag(roles["is_causal"], _plain(tf, roles["is_causal"]))
    alignment: str | None = None
    if "causal" in roles:
        name = roles["causal"]
        value = _plain(tf, name)
        on = _flag(name, value, strict=False)
        if isinstance(value, str) and value.strip().lower() in CAUSAL_ALIGNMENTS:
            alignment = value.strip().lower()
        elif on is not None:
            alignment = "top_left" if on else None
        else:
            raise ModelFileError(
                message(
                    QT_TRANSLATE_NOOP(
                        "FileErrors", "'{name}' (causal) is {value}; expected top_left, bottom_right, true or false"
                    ),
                    name=name,
                    value=_shown(value),
                )
            )
        if flag is not None and flag != (alignment is not None):
            raise ModelFileError(
                message(
                    QT_TRANSLATE_NOOP("FileErrors", "'{name}' (is_causal) and '{other}' (causal) disagree"),
                    name=roles["is_causal"],
                    other=name,
                )
            )
    causal = alignment is not None or bool(flag)
    return causal, alignment or "top_left"


def _flag(name: str, value: Any, *, strict: bool = True) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0"):
        return value.strip().lower() in ("true", "1")
    if not strict:
        return None
    raise ModelFileError(
        message(
            QT_TRANSLATE_NOOP("FileErrors", "'{name}' (is_causal) is {value}; expected true or false (one value)"),
            name=name,
            value=_shown(value),
        )
    )


def _scale(tf: TensorFile, roles: Mapping[str, str]) -> float | None:
    if "scale" not in roles:
        return None
    name = roles["scale"]
    value = _plain(tf, name)
    number: float | None = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            number = None
    if number is None or not math.isfinite(number):
        raise ModelFileError(
            message(
                QT_TRANSLATE_NOOP(
                    "FileErrors", "'{name}' (scale) is {value}; expected one finite number (SDPA's scale)"
                ),
                name=name,
                value=_shown(value),
            )
        )
    return number


def _shown(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return message(QT_TRANSLATE_NOOP("FileErrors", "an array of shape {shape}"), shape=value.shape)
    return repr(value)


# ------------------------------------------------------------------------------------ tokens


def _tokens(
    tf: TensorFile, roles: Mapping[str, str], batch: int, n_q: int, n_k: int, notes: list[str]
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """(query tokens, key tokens), each (B, L) or None."""
    read = {role: _labels(tf, roles[role], role, batch) for role in TEXT_ROLES if role in roles}
    query, key = read.get("query_tokens"), read.get("key_tokens")
    for tokens, role, length, what in ((query, "query_tokens", n_q, _QUERIES), (key, "key_tokens", n_k, _KEYS)):
        if tokens is not None and tokens.shape[1] != length:
            raise ModelFileError(
                message(_WRONG_LENGTH, name=roles[role], shape=tokens.shape, what=what, n=length, batch=batch)
            )
    both = read.get("tokens")
    if both is not None:
        name, length = roles["tokens"], both.shape[1]
        if length not in (n_q, n_k):
            raise ModelFileError(
                message(
                    QT_TRANSLATE_NOOP(
                        "FileErrors",
                        "'{name}' (tokens) has shape {shape}: {n} labels, but the queries are {n_q} and the keys "
                        "{n_k}; give ({n_k},) or ({batch}, {n_k})",
                    ),
                    name=name,
                    shape=both.shape,
                    n=length,
                    n_q=n_q,
                    n_k=n_k,
                    batch=batch,
                )
            )
        query = both if query is None and length == n_q else query
        key = both if key is None and length == n_k else key
        if query is None or key is None:
            axis, n, role = (_QUERIES, n_q, "query_tokens") if query is None else (_KEYS, n_k, "key_tokens")
            notes.append(
                message(
                    QT_TRANSLATE_NOOP(
                        "FileNotes",
                        "the {axis} have no labels: '{name}' has {length}, and there are {n} {axis} (give {role})",
                    ),
                    axis=axis,
                    name=name,
                    length=length,
                    n=n,
                    role=role,
                )
            )
    return query, key


_QUERIES = QT_TRANSLATE_NOOP("FileErrors", "queries")
_KEYS = QT_TRANSLATE_NOOP("FileErrors", "keys")
_WRONG_LENGTH = QT_TRANSLATE_NOOP(
    "FileErrors", "'{name}' has shape {shape}, but there are {n} {what}: give ({n},) or ({batch}, {n})"
)


def _labels(tf: TensorFile, name: str, role: str, batch: int) -> np.ndarray:
    """Text labels ``name`` as (B, L) (one sequence (L,) repeated for every batch element)."""
    labels = tf.texts[name]
    if labels.ndim == 2 and labels.shape[0] != batch:
        raise ModelFileError(
            message(
                QT_TRANSLATE_NOOP(
                    "FileErrors", "'{name}' ({role}) has shape {shape}: {rows} rows of labels for a batch of {batch}"
                ),
                name=name,
                role=role,
                shape=labels.shape,
                rows=labels.shape[0],
                batch=batch,
            )
        )
    if labels.ndim not in (1, 2):
        raise ModelFileError(
            message(
                QT_TRANSLATE_NOOP(
                    "FileErrors", "'{name}' ({role}) is one text; tokens are a list of labels, (L,) or (batch, L)"
                ),
                name=name,
                role=role,
            )
        )
    result = ModelRun.broadcast_tokens(labels, batch)
    assert result is not None
    return _read_only(result)


# ------------------------------------------------------------------------------------ arrays


def _numbers(tf: TensorFile, name: str, role: str) -> np.ndarray:
    """Array ``name`` as a read-only view (a copy in float64 for whole numbers of a tensor role)."""
    array = tf.arrays[name]
    if role in _TENSORS:
        if array.dtype.kind not in "fiu":
            raise ModelFileError(
                message(
                    QT_TRANSLATE_NOOP("FileErrors", "'{name}' ({role}) must hold real numbers, not {dtype}"),
                    name=name,
                    role=role,
                    dtype=array.dtype.name,
                )
            )
        if array.dtype.kind != "f":
            array = array.astype(np.float64)
    return _read_only(array)


def _read_only(array: np.ndarray) -> np.ndarray:
    # A view: the run's arrays cannot be changed through it, and the file's stay as they were.
    view = array.view()
    view.setflags(write=False)
    return view
