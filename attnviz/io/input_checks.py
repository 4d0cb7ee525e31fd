"""Arrays as the editor takes them: real-valued (batch, n, d) tensors whose shapes agree and fit
the editor's limits, and valid lengths as whole numbers. Shared by the session reader
(``session_state``) and the tensor-file import (``tensor_import``); each refusal is a
``ValueError`` with one translatable line naming the array.

No Qt and no torch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from attnviz.state.document import MAX_BATCH, MAX_DIM, MAX_LOADED_LEN
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

__all__ = ["as_lengths", "as_tensor", "check_qkv"]


def as_tensor(value: Any, role: str) -> np.ndarray:
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


def as_lengths(value: Any, role: str) -> np.ndarray:
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


def check_qkv(queries: np.ndarray, keys: np.ndarray, values: np.ndarray) -> None:
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
