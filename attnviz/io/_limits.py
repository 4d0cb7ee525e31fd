"""Size limits, dtype rules and array conversion shared by every reader and writer.

Readers learn each array's shape and dtype from the file's header first and ask a
:class:`Budget` before allocating anything, so an absurd header is refused without touching
memory. The limits are per file, summed over its arrays: what matters is how much one load can
allocate in total.
"""

from __future__ import annotations

import math
import os
import stat
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from attnviz.io.errors import AttnvizFileError
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

# 64 Mi elements is 256 MiB of float32 (512 MiB of float64): far more than any attention tensor
# one can inspect visually, yet well under a desktop's memory.
DEFAULT_MAX_ELEMENTS: int = 64 * 1024 * 1024
# Bytes after conversion (bfloat16 becomes float32); lets the full element budget be float64.
DEFAULT_MAX_BYTES: int = 1024 * 1024 * 1024

ACCEPTED_DTYPES_TEXT = QT_TRANSLATE_NOOP("FileErrors", "bool, integers, float16, bfloat16, float32, float64")

# Text (token labels, a causal alignment) is read only as 0-, 1- or 2-D arrays of short strings:
# a label wider than a line helps nobody, and numpy stores every string at the widest one's size
# (4 bytes a character), so one long string among many short ones would multiply the memory.
MAX_LABEL_CHARS = 256
#: Characters of text a reader parses as one JSON list of labels (safetensors metadata): parsed,
#: a long list of short strings takes tens of times its length in memory.
MAX_TEXT_CHARS = 4 * 1024 * 1024
#: Characters of all the text arrays of one file together, as numpy stores them (every string at
#: the widest one's width, 4 bytes a character: 64 MiB). Every reader's labels and tokens count
#: against it: two lists of 131,072 tokens up to 64 characters wide fit.
MAX_STORED_TEXT_CHARS = 16 * 1024 * 1024


def label_lists(tokens: Any) -> list[list[str]] | None:
    """Tokens (B, L) as the lists of strings a file's JSON holds; a token longer than
    ``MAX_LABEL_CHARS`` is shortened to fit, ending in "…" (readers refuse longer labels, and
    no label is shown that wide), so what attnviz writes it can read back."""
    if tokens is None:
        return None
    return [[_label(str(token)) for token in row] for row in tokens]


def _label(token: str) -> str:
    return token if len(token) <= MAX_LABEL_CHARS else token[: MAX_LABEL_CHARS - 1] + "\u2026"


def format_bytes(n: int) -> str:
    """Decimal units, like file managers: ``4_000_000_000`` -> ``"4.0 GB"``."""
    value = float(n)
    for unit in ("bytes", "kB", "MB", "GB", "TB", "PB"):
        if value < 1000 or unit == "PB":
            return f"{n:,} bytes" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1000
    raise AssertionError("unreachable")


def dtype_problem(dtype: np.dtype) -> str | None:
    """Why ``dtype`` is not accepted (a ``Message`` starting with a verb: "holds text..."), or
    ``None`` when it is."""
    if dtype.hasobject:
        # Object arrays can only be stored pickled, and unpickling can run arbitrary code.
        return QT_TRANSLATE_NOOP(
            "FileErrors", "holds Python objects (dtype object), which can only be loaded by running code from the file"
        )
    if dtype.names is not None or dtype.subdtype is not None:
        return message(
            QT_TRANSLATE_NOOP(
                "FileErrors", "has a structured dtype ({dtype}); only plain numeric arrays are supported"
            ),
            dtype=str(dtype),
        )
    kind = dtype.kind
    if kind in "biu":
        return None
    if kind == "f" and dtype.itemsize in (2, 4, 8):
        return None
    if kind == "c":
        return message(
            QT_TRANSLATE_NOOP(
                "FileErrors", "holds complex numbers ({dtype}); attention tensors must be real ({accepted})"
            ),
            dtype=dtype.name,
            accepted=ACCEPTED_DTYPES_TEXT,
        )
    if kind in "US":
        return message(QT_TRANSLATE_NOOP("FileErrors", "holds text (dtype {dtype}), not numbers"), dtype=dtype.str)
    if kind in "Mm":
        return message(
            QT_TRANSLATE_NOOP("FileErrors", "holds dates or times (dtype {dtype}), not numbers"), dtype=dtype.name
        )
    return message(
        QT_TRANSLATE_NOOP("FileErrors", "has dtype {dtype}, which is not supported ({accepted})"),
        dtype=dtype.name,
        accepted=ACCEPTED_DTYPES_TEXT,
    )


def for_array(name: str | None, problem: str) -> str:
    """``problem`` (a phrase starting with a verb) said of array ``name``; single-array files
    (``name`` None) read best without one: "keys.npy: holds ..."."""
    if name is None:
        return problem
    return message(QT_TRANSLATE_NOOP("FileErrors", "array '{name}' {problem}"), name=name, problem=problem)


def to_numpy(value: Any) -> np.ndarray:
    """``np.asarray`` that also takes torch tensors needing grad (which refuse ``__array__``)."""
    detach = getattr(value, "detach", None)
    if callable(detach):  # duck-typed so that torch is not imported here
        value = detach().cpu().numpy()
    return np.asarray(value)


def element_count(shape: Sequence[int]) -> int:
    """Exact element count as a Python int (numpy's ``prod`` would overflow on hostile shapes)."""
    return math.prod(int(s) for s in shape)


class Budget:
    """Running totals for one file; :meth:`claim` raises before a too-large allocation."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        error: type[AttnvizFileError],
        max_elements: int = DEFAULT_MAX_ELEMENTS,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        if max_elements < 0 or max_bytes < 0:
            raise ValueError("limits must be non-negative")
        self.path = path
        self.error = error
        self.max_elements = max_elements
        self.max_bytes = max_bytes
        self.elements = 0
        self.bytes = 0
        self.text_chars = 0

    def fail(self, reason: str) -> AttnvizFileError:
        """An error naming this budget's file, for the caller to raise."""
        return self.error(self.path, reason)

    def refuse(self, name: str | None, template: str, **params: Any) -> AttnvizFileError:
        """``fail`` with ``template`` (a marked phrase starting with a verb) filled with
        ``params``, said of array ``name`` (``for_array``)."""
        return self.fail(for_array(name, message(template, **params)))

    def claim(self, name: str | None, shape: Sequence[int], itemsize: int) -> None:
        """Account for an array about to be allocated; ``name`` is None for single-array files."""
        if any(int(s) < 0 for s in shape):
            raise self.refuse(
                name,
                QT_TRANSLATE_NOOP("FileErrors", "has a negative dimension in its shape {shape}"),
                shape=tuple(shape),
            )
        count = element_count(shape)
        nbytes = count * itemsize
        size = message(
            QT_TRANSLATE_NOOP("FileErrors", "{count} elements ({size})"), count=f"{count:,}", size=format_bytes(nbytes)
        )
        for needed, most, limit in (
            (count, self.max_elements, f"{self.max_elements:,}"),
            (nbytes, self.max_bytes, format_bytes(self.max_bytes)),
        ):
            if needed > most:
                too_big = QT_TRANSLATE_NOOP("FileErrors", "holds {size}, more than the {limit} allowed")
                raise self.refuse(name, too_big, size=size, limit=limit)
        if self.elements + count > self.max_elements:
            raise self.fail(
                message(
                    QT_TRANSLATE_NOOP(
                        "FileErrors",
                        "its arrays hold more than the {limit} elements allowed in total (reached at {where})",
                    ),
                    limit=f"{self.max_elements:,}",
                    where=_where(name),
                )
            )
        if self.bytes + nbytes > self.max_bytes:
            raise self.fail(
                message(
                    QT_TRANSLATE_NOOP(
                        "FileErrors", "its arrays need more than the {limit} allowed in total (reached at {where})"
                    ),
                    limit=format_bytes(self.max_bytes),
                    where=_where(name),
                )
            )
        self.elements += count
        self.bytes += nbytes

    def claim_text(self, name: str, shape: Sequence[int], width: int) -> None:
        """Account for a text array of ``shape`` whose strings are stored ``width`` characters wide."""
        if len(shape) > 2:
            raise self.refuse(
                name,
                QT_TRANSLATE_NOOP(
                    "FileErrors",
                    "holds text of shape {shape}: text labels come as (length,) or (batch, length)",
                ),
                shape=tuple(shape),
            )
        if width > MAX_LABEL_CHARS:
            raise self.refuse(
                name,
                QT_TRANSLATE_NOOP(
                    "FileErrors", "holds text {width} characters wide (labels of at most {limit} are read)"
                ),
                width=f"{width:,}",
                limit=MAX_LABEL_CHARS,
            )
        chars = element_count(shape) * max(width, 1)
        if self.text_chars + chars > MAX_STORED_TEXT_CHARS:
            raise self.refuse(
                name,
                QT_TRANSLATE_NOOP("FileErrors", "takes the file's text past the {limit} characters allowed"),
                limit=f"{MAX_STORED_TEXT_CHARS:,}",
            )
        self.text_chars += chars

    def labels(self, name: str, value: object) -> np.ndarray:
        """A str array from text a file holds as plain data (a list of strings, or a list of
        such lists, from a PyTorch pickle or JSON metadata), checked before it is built: the
        count and every string's length are read on the list itself, because numpy stores every
        string at the widest one's width (one token of a million characters among 899 short
        ones would take 3.6 GB)."""
        if not isinstance(value, (list, tuple)):
            raise self.fail(for_array(name, QT_TRANSLATE_NOOP("FileErrors", "is not a list of text labels")))
        rows = value
        if rows and all(isinstance(row, (list, tuple)) for row in rows):
            lengths = {len(row) for row in rows}
            if len(lengths) > 1:
                raise self.refuse(
                    name,
                    QT_TRANSLATE_NOOP(
                        "FileErrors",
                        "holds lists of text of different lengths ({lengths}): one label per position of "
                        "each batch element",
                    ),
                    lengths=", ".join(str(n) for n in sorted(lengths)),
                )
            items = [item for row in rows for item in row]
            shape: tuple[int, ...] = (len(rows), lengths.pop())
        else:
            items, shape = list(rows), (len(rows),)
        if not all(isinstance(item, str) for item in items):
            raise self.fail(
                for_array(
                    name, QT_TRANSLATE_NOOP("FileErrors", "mixes text with other values: labels must all be strings")
                )
            )
        width = max((len(item) for item in items), default=0)
        self.claim_text(name, shape, width)
        return np.array(items, dtype=f"<U{max(width, 1)}").reshape(shape)


def _where(name: str | None) -> str:
    if name is None:
        return QT_TRANSLATE_NOOP("FileErrors", "its only array")
    return message(QT_TRANSLATE_NOOP("FileErrors", "array '{name}'"), name=name)


def regular_file_size(path: Path, budget: Budget, directory: str) -> int:
    """The size of ``path``, refused with one line when it does not exist, is a folder
    (``directory``: "is a directory, not a session file") or is not a regular file (a device,
    a pipe: reading one could block or never end)."""
    try:
        info = path.stat()
    except FileNotFoundError as exc:
        raise budget.fail(QT_TRANSLATE_NOOP("FileErrors", "does not exist")) from exc
    if stat.S_ISDIR(info.st_mode):
        raise budget.fail(directory)
    if not stat.S_ISREG(info.st_mode):
        raise budget.fail(QT_TRANSLATE_NOOP("FileErrors", "is not a regular file"))
    return info.st_size


def arrays_to_write(
    arrays: Mapping[Any, Any], fail: Callable[[str], Exception], reserved: Collection[str] = ()
) -> dict[str, np.ndarray]:
    """``arrays`` as the numpy arrays a file will hold, or ``fail(reason)`` raised: every name a
    non-empty string without NUL (an archive member's name) and not one of ``reserved``, every
    dtype one attnviz writes and reads back."""
    checked: dict[str, np.ndarray] = {}
    for name, value in arrays.items():
        if not isinstance(name, str) or not name or "\x00" in name or name in reserved:
            raise fail(message(QT_TRANSLATE_NOOP("FileErrors", "cannot store an array named {name}"), name=repr(name)))
        array = to_numpy(value)
        problem = dtype_problem(array.dtype)
        if problem is not None:
            raise fail(for_array(name, problem))
        checked[name] = array
    return checked
