"""Which loaded array plays which part in attention, and picking one head out of many.

Role guessing only looks at names; the UI asks the user whenever the guess is incomplete, so a
wrong guess costs a click while a confident wrong guess would silently show nonsense. That is
why an ambiguous role (two equally good candidates) is left out rather than picked.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Mapping
from typing import SupportsIndex

import numpy as np

from attnviz.text.tr import QT_TRANSLATE_NOOP, message

__all__ = [
    "ALL_ROLES",
    "MASK_ROLES",
    "MODEL_ROLES",
    "ROLES",
    "ROLE_ALIASES",
    "TEXT_ROLES",
    "describe",
    "guess_roles",
    "role_names",
    "needs_head_choice",
    "select_head",
]

#: The book's roles (and ``mask``, read as ``attn_mask``: see ``attnviz.io.model_files``).
ROLES: tuple[str, ...] = ("queries", "keys", "values", "valid_lens", "mask")
#: What a real model's file adds: masks under the argument they are passed through (which says
#: what their values mean), the causal flag and its alignment, SDPA's scale, and the tokens.
MODEL_ROLES: tuple[str, ...] = (
    "attn_mask",
    "key_padding_mask",
    "attention_mask",
    "is_causal",
    "causal",
    "scale",
    "tokens",
    "query_tokens",
    "key_tokens",
)
ALL_ROLES: tuple[str, ...] = ROLES + MODEL_ROLES
#: The roles that hold a mask, each read as the argument of that name reads it.
MASK_ROLES: tuple[str, ...] = ("attn_mask", "key_padding_mask", "attention_mask", "mask")
#: Roles whose value is text (token labels) rather than numbers.
TEXT_ROLES: tuple[str, ...] = ("tokens", "query_tokens", "key_tokens")
# Roles whose value may be a plain value (a .pt's Python bool, .safetensors metadata) or 0-d.
_SETTING_ROLES: tuple[str, ...] = ("is_causal", "causal", "scale")

# Lower-case names accepted for each role; matching is case-insensitive, so "Q" is "q".
ROLE_ALIASES: dict[str, tuple[str, ...]] = {
    "queries": ("queries", "query", "q"),
    "keys": ("keys", "key", "k"),
    "values": ("values", "value", "v"),
    "valid_lens": ("valid_lens", "valid_len", "valid_lengths", "lengths", "lens"),
    "mask": ("mask", "masks"),
    "attn_mask": ("attn_mask",),
    "key_padding_mask": ("key_padding_mask", "src_key_padding_mask"),
    "attention_mask": ("attention_mask",),
    "is_causal": ("is_causal",),
    "causal": ("causal",),
    "scale": ("scale",),
    "tokens": ("tokens",),
    "query_tokens": ("query_tokens",),
    "key_tokens": ("key_tokens",),
}

# Nested names come as "layer.q" (.pt/.safetensors) or "layer/q" (.npz written from dicts).
_SEPARATORS = re.compile(r"[./]")


def _arrays_of(source: object) -> Mapping[str, np.ndarray]:
    arrays = getattr(source, "arrays", source)
    if not isinstance(arrays, Mapping):
        raise TypeError(f"expected a TensorFile or a mapping of arrays, got {type(source).__name__}")
    return arrays


def role_names(source: object, role: str) -> list[str]:
    """The names in ``source`` that can play ``role``: arrays of numbers for tensors and masks,
    text labels for tokens; for the causal flag, its alignment and the scale also a ``.pt``'s
    plain values and ``.safetensors`` metadata."""
    arrays = list(_arrays_of(source))
    texts = list(getattr(source, "texts", {}))
    if role in TEXT_ROLES:
        return texts
    if role in _SETTING_ROLES:
        extra = [*getattr(source, "scalars", {}), *getattr(source, "metadata", {})]
        return list(dict.fromkeys(arrays + texts + extra))
    return arrays


def guess_roles(source: object) -> dict[str, str]:
    """Map role -> array name for the roles whose array can be told from names alone.

    ``source`` is a :class:`~attnviz.io.tensors.TensorFile` or a ``{name: array}`` mapping.
    A whole-name match ("Q", "attention_mask") beats a last-component match ("attn.q");
    a role with several equally good candidates is left out.
    """
    _arrays_of(source)
    result: dict[str, str] = {}
    for role, aliases in ROLE_ALIASES.items():
        names = role_names(source, role)
        exact = [n for n in names if n.lower() in aliases]
        suffix = [n for n in names if _SEPARATORS.split(n.lower())[-1] in aliases]
        for candidates in (exact, suffix):
            if len(candidates) == 1:
                result[role] = candidates[0]
                break
            if len(candidates) > 1:
                break  # ambiguous at the best level: let the user choose
    return result


def describe(source: object) -> list[tuple[str, tuple[int, ...], str]]:
    """``(name, shape, dtype name)`` per array, in file order, for the role dialog."""
    return [(name, tuple(int(s) for s in a.shape), a.dtype.name) for name, a in _arrays_of(source).items()]


def needs_head_choice(array: np.ndarray) -> bool:
    """True for 4-D ``(batch, heads, n, d)`` arrays, which must be reduced with :func:`select_head`."""
    return np.ndim(array) == 4


def select_head(array: np.ndarray, head: SupportsIndex, head_axis: SupportsIndex = 1) -> np.ndarray:
    """Take one head out of a 4-D array: ``(batch, heads, n, d)`` -> ``(batch, n, d)``.

    Returns a copy, so editing the result never changes the multi-head original.
    Raises ``ValueError`` for a rank other than 4, a bad axis, or a head out of range
    (negative indices are refused: a head number from the UI is never meant to wrap around).
    """
    array = np.asarray(array)
    if array.ndim != 4:
        raise ValueError(
            message(
                QT_TRANSLATE_NOOP(
                    "FileErrors", "select_head needs a 4-D (batch, heads, n, d) array, got {ndim}-D of shape {shape}"
                ),
                ndim=array.ndim,
                shape=array.shape,
            )
        )
    if isinstance(head, bool) or isinstance(head_axis, bool):
        raise ValueError(QT_TRANSLATE_NOOP("FileErrors", "head and head_axis must be integers, not booleans"))
    try:
        head = operator.index(head)
        head_axis = operator.index(head_axis)
    except TypeError as exc:
        raise ValueError(
            message(
                QT_TRANSLATE_NOOP("FileErrors", "head and head_axis must be integers, got {head} and {axis}"),
                head=repr(head),
                axis=repr(head_axis),
            )
        ) from exc
    if not -4 <= head_axis < 4:
        raise ValueError(
            message(QT_TRANSLATE_NOOP("FileErrors", "head_axis {axis} is out of range for a 4-D array"), axis=head_axis)
        )
    axis = head_axis % 4
    count = array.shape[axis]
    if not 0 <= head < count:
        valid = f"0-{count - 1}" if count else QT_TRANSLATE_NOOP("FileErrors", "none")
        raise ValueError(
            message(
                QT_TRANSLATE_NOOP(
                    "FileErrors",
                    "head {head} is out of range: the array has {count} heads on axis {axis} (valid: {valid})",
                ),
                head=head,
                count=count,
                axis=axis,
                valid=valid,
            )
        )
    result: np.ndarray = np.take(array, head, axis=axis)  # take always copies
    return result
