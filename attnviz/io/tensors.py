"""Loading user tensor files safely, and exporting arrays.

Supported formats: NumPy ``.npy`` and ``.npz``, PyTorch ``.pt``/``.pth``, ``.safetensors``.
The format is decided by the file's first bytes (so a mislabelled file still loads); the
extension only shapes the error message when the content matches nothing.

Safety rules, for files from untrusted sources:

* nothing from a file is ever executed: NumPy is read without pickle, PyTorch's pickles by a
  reader of our own that builds tensors, storages and plain containers and nothing else
  (``_unpickler``, ``_torchpickle``; not ``torch.load``, which allocates what a file declares);
* no size a file declares is allocated before it is checked: header lengths are bounded before
  the header is read, shapes and dtypes are checked against ``max_elements``/``max_bytes``
  (totals per file) before any array is allocated, and the bytes each array needs against the
  bytes the file holds for it, so truncated and lying files are reported as such;
* every failure is a :class:`~attnviz.io.errors.TensorFileError` with a one-line message
  that starts with the file name.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from attnviz.io import _npy, _safetensors, _torchfile
from attnviz.io._atomic import atomic_write
from attnviz.io._limits import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_ELEMENTS,
    Budget,
    arrays_to_write,
    dtype_problem,
    to_numpy,
)
from attnviz.io.errors import TensorFileError, cannot_write, refusals
from attnviz.io.roles import ROLES, describe, guess_roles, needs_head_choice, select_head
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_ELEMENTS",
    "ROLES",
    "TensorFile",
    "TensorFileError",
    "describe",
    "guess_roles",
    "load_tensor_file",
    "needs_head_choice",
    "save_arrays",
    "save_csv",
    "select_head",
    "sniff_format",
]

Format = Literal["npy", "npz", "pt", "safetensors"]

EXTENSIONS: dict[str, Format] = {
    ".npy": "npy",
    ".npz": "npz",
    ".pt": "pt",
    ".pth": "pt",
    ".safetensors": "safetensors",
}


@dataclass
class TensorFile:
    """The arrays of one loaded file, in file order.

    ``arrays`` hold numbers (and booleans) only. ``texts`` are the file's text labels (tokens) as
    str arrays of shape (), (L,) or (B, L): unicode members of an ``.npz``, lists of strings in a
    ``.pt``, JSON lists of strings in ``.safetensors`` metadata. ``scalars`` are plain Python
    values at the top of a ``.pt`` (``{"is_causal": True, "scale": 0.125}``).

    ``skipped`` names entries that were left out, with the reason in parentheses (non-tensor
    values in a checkpoint, non-array members of an ``.npz``); ``metadata`` is the
    ``.safetensors`` string metadata (empty for other formats). A single-array file (``.npy``, or
    a ``.pt`` holding one tensor) names its array after the file's stem, so ``keys.npy`` yields
    an array called ``keys``.
    """

    path: Path
    format: Format
    arrays: dict[str, np.ndarray]
    skipped: list[str] = field(default_factory=list)
    metadata: dict[str, str] = field(default_factory=dict)
    texts: dict[str, np.ndarray] = field(default_factory=dict)
    scalars: dict[str, bool | int | float | str] = field(default_factory=dict)


def load_tensor_file(
    path: str | os.PathLike[str],
    *,
    max_elements: int = DEFAULT_MAX_ELEMENTS,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> TensorFile:
    """Load every array of a tensor file, refusing unsafe, damaged or oversized files.

    ``max_elements`` and ``max_bytes`` bound the file's arrays in total (bytes as loaded:
    bfloat16 counts as float32). Raises :class:`TensorFileError` and nothing else for bad files.
    """
    file_path = Path(path)
    budget = Budget(file_path, TensorFileError, max_elements, max_bytes)
    with refusals(TensorFileError, file_path):
        head, size = _open_check(file_path, budget)
        fmt, zip_kind = _detect(file_path, head, size, budget)
        if fmt == "npy":
            arrays = {file_path.stem: _npy.read_npy_file(file_path, budget)}
            return TensorFile(file_path, fmt, arrays)
        if fmt == "npz":
            return _load_npz(file_path, budget)
        if fmt == "safetensors":
            arrays, metadata = _safetensors.read_safetensors(file_path, budget)
            if not arrays:
                raise budget.fail(QT_TRANSLATE_NOOP("FileErrors", "holds no arrays"))
            return TensorFile(
                file_path, fmt, arrays, metadata=metadata, texts=_safetensors.metadata_labels(metadata, budget)
            )
        loaded = _torchfile.read_torch(file_path, budget, zip_format=zip_kind)
        return TensorFile(
            file_path, fmt, loaded.arrays, skipped=loaded.skipped, texts=loaded.texts, scalars=loaded.scalars
        )


def _open_check(path: Path, budget: Budget) -> tuple[bytes, int]:
    """Stat and read the first bytes, turning OS errors into plain-language refusals."""
    try:
        info = path.stat()
    except FileNotFoundError as exc:
        raise budget.fail(QT_TRANSLATE_NOOP("FileErrors", "does not exist")) from exc
    except OSError as exc:
        raise budget.fail(
            message(QT_TRANSLATE_NOOP("FileErrors", "cannot be accessed ({error})"), error=exc.strerror or str(exc))
        ) from exc
    if stat.S_ISDIR(info.st_mode):
        raise budget.fail(QT_TRANSLATE_NOOP("FileErrors", "is a directory, not a tensor file"))
    if not stat.S_ISREG(info.st_mode):
        # FIFOs and devices (/dev/zero) could block or stream forever.
        raise budget.fail(QT_TRANSLATE_NOOP("FileErrors", "is not a regular file"))
    if info.st_size == 0:
        raise budget.fail(QT_TRANSLATE_NOOP("FileErrors", "is empty"))
    try:
        with open(path, "rb") as handle:
            head = handle.read(16)
    except PermissionError as exc:
        raise budget.fail(QT_TRANSLATE_NOOP("FileErrors", "cannot be read: permission denied")) from exc
    return head, info.st_size


def sniff_format(head: bytes, size: int) -> Format | Literal["zip"] | None:
    """Format from a file's first 16 bytes; ``"zip"`` needs a look inside (npz or pt)."""
    if head.startswith(_npy.NPY_MAGIC):
        return "npy"
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return "zip"
    if _safetensors.looks_like_safetensors(head, size):
        return "safetensors"
    # Legacy torch.save files are a bare pickle (protocol 2+ starts with the PROTO opcode).
    if head.startswith(b"\x80") and len(head) > 1 and 2 <= head[1] <= 5:
        return "pt"
    return None


def _detect(path: Path, head: bytes, size: int, budget: Budget) -> tuple[Format, bool]:
    """``(format, is_zip)``; the content wins over a misleading extension."""
    sniffed = sniff_format(head, size)
    by_extension = EXTENSIONS.get(path.suffix.lower())
    if sniffed == "zip":
        with _npy.open_zip(path, budget) as archive:
            names = archive.namelist()
        if _torchfile.is_torch_zip(names):
            return "pt", True
        return "npz", True
    if sniffed is not None:
        return sniffed, False
    if by_extension == "safetensors":
        return "safetensors", False  # let the reader explain what is wrong with the header
    if by_extension is not None:
        # Whole sentences, not "is not {kind}": the article agrees with the noun in Portuguese.
        expected = {
            "npy": QT_TRANSLATE_NOOP(
                "FileErrors", "is not a NumPy .npy file (its first bytes do not match), or is damaged"
            ),
            "npz": QT_TRANSLATE_NOOP(
                "FileErrors", "is not a NumPy .npz archive (its first bytes do not match), or is damaged"
            ),
            "pt": QT_TRANSLATE_NOOP(
                "FileErrors", "is not a PyTorch file (its first bytes do not match), or is damaged"
            ),
        }
        raise budget.fail(expected[by_extension])
    raise budget.fail(
        QT_TRANSLATE_NOOP("FileErrors", "is not a tensor file attnviz can read (.npy, .npz, .pt/.pth or .safetensors)")
    )


def _load_npz(path: Path, budget: Budget) -> TensorFile:
    arrays: dict[str, np.ndarray] = {}
    texts: dict[str, np.ndarray] = {}
    with _npy.NpzArchive(path, budget) as archive:
        for name in archive.names:
            array = archive.read(name, labels=True)
            (texts if array.dtype.kind == "U" else arrays)[name] = array
        skipped: list[str] = [
            message(
                QT_TRANSLATE_NOOP("FileErrors", "{name} ({why})"),
                name=member,
                why=QT_TRANSLATE_NOOP("FileErrors", "not an .npy array"),
            )
            for member in archive.other_members
        ]
    if not arrays:
        raise budget.fail(
            QT_TRANSLATE_NOOP("FileErrors", "holds no arrays")
            if not texts
            else message(
                QT_TRANSLATE_NOOP("FileErrors", "holds no arrays of numbers, only text ({names})"),
                names=", ".join(texts),
            )
        )
    return TensorFile(path, "npz", arrays, skipped=skipped, texts=texts)


# --- saving -------------------------------------------------------------------------------


def save_arrays(path: str | os.PathLike[str], arrays: Mapping[str, Any]) -> None:
    """Export arrays in the format named by the extension, atomically.

    ``.npy`` takes exactly one array; ``.npz``, ``.pt``/``.pth`` (a ``{name: tensor}`` dict)
    and ``.safetensors`` take any number. Values may be numpy arrays or anything
    ``np.asarray`` accepts (torch CPU tensors included). Raises :class:`TensorFileError` for an
    unknown extension, an unsupported dtype or a write failure; the destination is either
    fully written or left as it was.
    """
    file_path = Path(path)
    fmt = EXTENSIONS.get(file_path.suffix.lower())
    if fmt is None:
        raise TensorFileError(
            file_path,
            QT_TRANSLATE_NOOP("FileErrors", "has an unknown extension; use .npy, .npz, .pt, .pth or .safetensors"),
        )
    prepared = _prepare(file_path, arrays)
    if fmt == "npy" and len(prepared) != 1:
        raise TensorFileError(
            file_path,
            message(
                QT_TRANSLATE_NOOP("FileErrors", "a .npy file holds exactly one array, {n} given; use .npz"),
                n=len(prepared),
            ),
        )
    try:
        with atomic_write(file_path) as stream:
            if fmt == "npy":
                _npy.write_npy(stream, next(iter(prepared.values())))
            elif fmt == "npz":
                _npy.write_npz(stream, prepared)
            elif fmt == "safetensors":
                _safetensors.write_safetensors(stream, prepared)
            else:
                _torchfile.write_torch(stream, prepared)
    except OSError as exc:
        raise TensorFileError(file_path, cannot_write(exc)) from exc


def _prepare(path: Path, arrays: Mapping[str, Any]) -> dict[str, np.ndarray]:
    if _safetensors.METADATA_KEY in arrays and path.suffix.lower() == ".safetensors":
        raise TensorFileError(
            path,
            message(
                QT_TRANSLATE_NOOP("FileErrors", "'{name}' is reserved in .safetensors and cannot name an array"),
                name=_safetensors.METADATA_KEY,
            ),
        )
    return arrays_to_write(arrays, lambda reason: TensorFileError(path, reason))


def save_csv(path: str | os.PathLike[str], array: Any, *, block: str = "batch") -> None:
    """Write a 1-D, 2-D or 3-D array as comma-separated text, atomically.

    Format: one matrix row per line, values separated by ``,`` (floats with enough digits to
    round-trip their dtype, booleans as ``0``/``1``). A 1-D array is one line. A 3-D array
    ``(batch, rows, cols)`` is written as ``batch`` blocks, each preceded by a comment line
    ``# batch <b>: <rows> rows x <cols> columns`` (``block`` names the first axis: "head" for a
    layer's heads). ``np.loadtxt(path, delimiter=",", ndmin=2)``
    reads it back (comments are skipped) as a ``(batch * rows, cols)`` matrix.
    """
    file_path = Path(path)
    data = to_numpy(array)
    problem = dtype_problem(data.dtype)
    if problem is not None:
        raise TensorFileError(
            file_path,
            message(QT_TRANSLATE_NOOP("FileErrors", "cannot be written as CSV: the array {problem}"), problem=problem),
        )
    if data.ndim not in (1, 2, 3):
        raise TensorFileError(
            file_path,
            message(
                QT_TRANSLATE_NOOP("FileErrors", "CSV export takes a 1-D, 2-D or 3-D array, got shape {shape}"),
                shape=data.shape,
            ),
        )
    fmt = _csv_number_format(data.dtype)
    if data.dtype.kind == "b":
        data = data.astype(np.uint8)
    try:
        with atomic_write(file_path) as stream:
            if data.ndim == 3:
                for index, matrix in enumerate(data):
                    stream.write(f"# {block} {index}: {matrix.shape[0]} rows x {matrix.shape[1]} columns\n".encode())
                    np.savetxt(stream, matrix, delimiter=",", fmt=fmt)
            else:
                np.savetxt(stream, np.atleast_2d(data), delimiter=",", fmt=fmt)
    except OSError as exc:
        raise TensorFileError(file_path, cannot_write(exc)) from exc


def _csv_number_format(dtype: np.dtype) -> str:
    # Shortest decimal that reads back to the same value for each float width.
    if dtype.kind == "f":
        return {2: "%.5g", 4: "%.9g"}.get(dtype.itemsize, "%.17g")
    return "%d"
