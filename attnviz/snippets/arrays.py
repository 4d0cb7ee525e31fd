"""Arrays written into a script exactly: as number literals, as embedded ``.npy`` bytes, or read
from a data file, by size.

Floats are written by ``repr`` of their float64 value, the shortest text that reads back as the
same float64; a float32 or float16 value is exactly a float64, so the literal reproduces every bit.
Tensors of more than ``MAX_INLINE`` numbers are embedded as base64 of zlib-compressed ``.npy``
bytes (still exact, still one self-contained script), those of more than ``MAX_EMBEDDED`` go to a
data file (``.npz``) the script loads. Plain numpy: no torch, no Qt.
"""

from __future__ import annotations

import base64
import io
import math
import textwrap
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

import numpy as np

__all__ = [
    "DATA_FILE",
    "MAX_EMBEDDED",
    "MAX_INLINE",
    "Form",
    "form",
    "has_nonfinite",
    "literal",
    "number",
    "pack",
    "short_number",
    "write_data_file",
]

#: Tensors with more numbers than this are not written out number by number.
MAX_INLINE = 2000
#: Tensors with more numbers than this go to a separate data file instead of into the script.
MAX_EMBEDDED = 1 << 16
#: Rows of numbers longer than this are written over several lines.
ROW_WIDTH = 116
#: The data file's default name (looked up in the current directory when the script runs).
DATA_FILE = "attnviz_snippet_data.npz"

Form = Literal["inline", "embedded", "file"]


def form(arr: np.ndarray, max_inline: int = MAX_INLINE, max_embedded: int = MAX_EMBEDDED) -> Form:
    """How an array goes into a script: number literals, embedded bytes or the data file."""
    if arr.size <= max_inline:
        return "inline"
    return "embedded" if arr.size <= max_embedded else "file"


def number(x: object) -> str:
    """A literal that reads back as exactly ``x`` (``nan``/``inf`` need those names defined)."""
    if isinstance(x, (bool, np.bool_)):
        return repr(bool(x))
    if isinstance(x, (int, np.integer)):
        return repr(int(x))
    f = float(x)  # type: ignore[arg-type]
    if math.isnan(f):
        return "nan"
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    return repr(f)


def short_number(x: float) -> str:
    """The shortest text that reads back as the same float32 (for tolerant checks only: read
    through float64 it could, in rare cases, land one float32 away)."""
    if not math.isfinite(x):
        return number(x)
    return (
        np.format_float_positional(np.float32(x), unique=True, trim="0")
        if abs(x) >= 1e-4 or x == 0
        else np.format_float_scientific(np.float32(x), unique=True, trim="0")
    )


def literal(arr: np.ndarray, indent: str = "", short: bool = False) -> str:
    """A nested list literal, the innermost rows one per line."""
    fmt = short_number if short else number
    if arr.ndim == 0:
        return fmt(arr.item())
    if arr.ndim == 1:
        row = "[" + ", ".join(fmt(x) for x in arr.tolist()) + "]"
        if len(indent) + len(row) <= ROW_WIDTH:
            return row
        # A long row: several lines, each under the width (a number is never split).
        parts = textwrap.wrap(row[1:-1], ROW_WIDTH - len(indent) - 4, break_long_words=False, break_on_hyphens=False)
        return "[\n" + "\n".join(f"{indent}    {part}" for part in parts) + "\n" + indent + "]"
    inner = indent + "    "
    parts = [inner + literal(sub, inner, short) + "," for sub in arr]
    return "[\n" + "\n".join(parts) + "\n" + indent + "]"


def pack(arr: np.ndarray) -> str:
    """``arr`` as base64 of zlib-compressed ``.npy`` bytes (``np.load`` reads it back exactly)."""
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(arr), allow_pickle=False)
    return base64.b64encode(zlib.compress(buf.getvalue(), 9)).decode("ascii")


def packed_lines(arr: np.ndarray, width: int = 96) -> list[str]:
    """``pack(arr)`` as string literals of at most ``width`` characters, one per line."""
    return [f'"{chunk}"' for chunk in textwrap.wrap(pack(arr), width, break_on_hyphens=False)]


def has_nonfinite(arrays: Mapping[str, np.ndarray] | list[np.ndarray]) -> bool:
    """Whether a float array holds NaN or ±inf (which have no literal: a script names them)."""
    values = arrays.values() if isinstance(arrays, Mapping) else arrays
    return any(a.dtype.kind == "f" and not np.isfinite(a).all() for a in values)


def write_data_file(
    arrays: Mapping[str, np.ndarray], path: str | Path, inputs: Iterable[str | Path | None] = ()
) -> list[str]:
    """Write ``arrays`` to ``path`` as ``.npz`` (nothing when there are none); the names written.
    Written whole or not at all (``atomic_write``), never over one of ``inputs``, a FIFO or a
    device (``OSError`` saying why)."""
    from attnviz.io._atomic import atomic_write

    data: dict[str, Any] = dict(arrays)
    if data:
        with atomic_write(path, inputs=inputs) as fh:
            np.savez(fh, **data)
    return sorted(data)
