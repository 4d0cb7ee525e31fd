"""Reading and writing NumPy ``.npy`` and ``.npz`` files without pickle.

``np.load`` would read headers and data in one go; here the header is parsed first, the dtype and
size are checked against a :class:`~attnviz.io._limits.Budget`, and only then is memory
allocated and filled. ``.npz`` members are streamed from the zip archive one at a time, so a
compressed member whose header promises gigabytes is refused before it is inflated.
"""

from __future__ import annotations

import io
import os
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import numpy as np
import numpy.lib.format as npformat

from attnviz.io._limits import (
    Budget,
    dtype_problem,
    element_count,
    for_array,
    format_bytes,
)
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

NPY_MAGIC = npformat.MAGIC_PREFIX  # b"\x93NUMPY"
NPY_SUFFIX = ".npy"
_CHUNK = 16 * 1024 * 1024  # read in slices so zip streams never buffer a whole member twice
# numpy's own default (``max_header_size`` of numpy.lib.format): real headers are a few hundred
# bytes, and numpy refuses longer ones unless told otherwise.
MAX_HEADER_BYTES = 10_000


@dataclass(frozen=True)
class NpyHeader:
    """What an ``.npy`` header promises; ``data_offset`` is where the raw data starts."""

    shape: tuple[int, ...]
    fortran_order: bool
    dtype: np.dtype
    data_offset: int

    @property
    def data_bytes(self) -> int:
        return element_count(self.shape) * self.dtype.itemsize


def _read_raw_header(stream: IO[bytes], budget: Budget, name: str | None) -> NpyHeader:
    """Parse magic and header (dtype via ``ast.literal_eval``, never pickle); no checks yet.

    The header's length is checked before the header is read: numpy reads whatever length the
    file declares and only then refuses it, so a compressed ``.npz`` member declaring gigabytes of
    padding made it inflate and keep gigabytes.
    """
    try:
        version = npformat.read_magic(stream)
        if version not in ((1, 0), (2, 0)):
            # Version 3.0 only exists for structured dtypes with non-Latin-1 field names,
            # which are refused anyway.
            raise budget.fail(
                for_array(
                    name,
                    message(
                        QT_TRANSLATE_NOOP("FileErrors", "uses .npy format version {version}, which is not supported"),
                        version=f"{version[0]}.{version[1]}",
                    ),
                )
            )
        field = stream.read(2 if version == (1, 0) else 4)
        length = int.from_bytes(field, "little")
        if length > MAX_HEADER_BYTES:
            raise budget.fail(
                for_array(
                    name,
                    message(
                        QT_TRANSLATE_NOOP(
                            "FileErrors", "claims a {length}-byte .npy header (at most {limit} bytes allowed)"
                        ),
                        length=f"{length:,}",
                        limit=f"{MAX_HEADER_BYTES:,}",
                    ),
                )
            )
        # numpy parses the (now bounded) header from memory.
        header = io.BytesIO(field + stream.read(length))
        if version == (1, 0):
            shape, fortran, dtype = npformat.read_array_header_1_0(header, max_header_size=MAX_HEADER_BYTES)
        else:
            shape, fortran, dtype = npformat.read_array_header_2_0(header, max_header_size=MAX_HEADER_BYTES)
    except budget.error:
        raise
    except Exception as exc:
        # numpy's parser raises ValueError, TokenError, SyntaxError...: whatever it trips on,
        # the header is damaged, and nothing has been allocated yet.
        raise budget.fail(
            for_array(
                name,
                message(QT_TRANSLATE_NOOP("FileErrors", "has a damaged .npy header ({error})"), error=_first_line(exc)),
            )
        ) from exc
    offset = len(NPY_MAGIC) + 2 + len(field) + length
    return NpyHeader(tuple(int(s) for s in shape), bool(fortran), dtype, offset)


def read_npy_header(stream: IO[bytes], budget: Budget, name: str | None) -> NpyHeader:
    """Parse the header at the stream's position (0) and check dtype and size; no data is read."""
    return _checked(_read_raw_header(stream, budget, name), budget, name)


def _checked(header: NpyHeader, budget: Budget, name: str | None) -> NpyHeader:
    """``header`` once its dtype is a numeric one and its size fits the budget."""
    problem = dtype_problem(header.dtype)
    if problem is not None:
        raise budget.fail(for_array(name, problem))
    budget.claim(name, header.shape, _native(header.dtype).itemsize)
    return header


def read_npy_data(stream: IO[bytes], header: NpyHeader, budget: Budget, name: str | None) -> np.ndarray:
    """Read the data that follows a checked header into a fresh C-ordered native array."""
    flat = np.empty(element_count(header.shape), dtype=header.dtype)
    filled = read_into(stream, flat.data)
    if filled < flat.nbytes:
        raise budget.fail(
            for_array(
                name,
                message(
                    QT_TRANSLATE_NOOP(
                        "FileErrors", "is truncated: its header promises {promised} of data but only {found} are there"
                    ),
                    promised=format_bytes(flat.nbytes),
                    found=format_bytes(filled),
                ),
            )
        )
    array = flat.reshape(header.shape, order="F" if header.fortran_order else "C")
    # Callers get native-endian C-ordered arrays whatever the writer used.
    # np.asarray, not ascontiguousarray: the latter turns 0-d arrays into 1-d.
    return np.asarray(array, dtype=_native(header.dtype), order="C")


def read_into(stream: IO[bytes], buffer: memoryview) -> int:
    """Fill ``buffer`` from ``stream`` in slices; the number of bytes read (fewer if it ends)."""
    view = buffer.cast("B")
    filled = 0
    while filled < len(view):
        got = stream.readinto(view[filled : filled + _CHUNK])  # type: ignore[attr-defined]
        if not got:
            break
        filled += got
    return filled


def read_npy_file(path: Path, budget: Budget) -> np.ndarray:
    """Read a whole ``.npy`` file, checking the header against the budget and the file size."""
    with open(path, "rb") as stream:
        header = read_npy_header(stream, budget, None)
        available = os.fstat(stream.fileno()).st_size - header.data_offset
        if available < header.data_bytes:
            raise budget.fail(
                message(
                    QT_TRANSLATE_NOOP(
                        "FileErrors", "is truncated: its header promises {promised} of data but only {found} follow"
                    ),
                    promised=format_bytes(header.data_bytes),
                    found=format_bytes(max(available, 0)),
                )
            )
        return read_npy_data(stream, header, budget, None)


def open_zip(path: Path, budget: Budget) -> zipfile.ZipFile:
    """Open a zip archive, reporting a damaged one in the budget's error type."""
    try:
        return zipfile.ZipFile(path)
    except OSError:
        raise  # permission and the like: the caller words those
    except Exception as exc:
        # BadZipFile, NotImplementedError ("zip file version 6.6"), struct.error, ValueError...
        raise budget.fail(
            QT_TRANSLATE_NOOP("FileErrors", "is truncated or damaged: not a complete zip archive")
        ) from exc


class NpzArchive:
    """An open ``.npz`` (zip of ``.npy`` members) read member by member.

    Raises the budget's error type for a damaged archive. ``names`` lists array names (member
    names without ``.npy``) in archive order; ``other_members`` the entries that are not arrays.
    """

    def __init__(self, path: Path, budget: Budget) -> None:
        self.path = path
        self.budget = budget
        self._zip = open_zip(path, budget)
        self._members: dict[str, zipfile.ZipInfo] = {}
        self.other_members: list[str] = []
        for info in self._zip.infolist():
            if info.is_dir():
                continue
            if not info.filename.endswith(NPY_SUFFIX):
                self.other_members.append(info.filename)
                continue
            name = info.filename[: -len(NPY_SUFFIX)]
            if name in self._members:
                self.close()
                raise budget.fail(
                    message(QT_TRANSLATE_NOOP("FileErrors", "has two members named '{name}'"), name=info.filename)
                )
            self._members[name] = info

    @property
    def names(self) -> list[str]:
        return list(self._members)

    def read(self, name: str, *, allow_text: bool = False, max_text_chars: int = 0, labels: bool = False) -> np.ndarray:
        """Read one array; ``allow_text`` admits a 0-d unicode string (session metadata), ``labels``
        a unicode array of text labels (token names) within the budget's text limits."""
        info = self._members[name]
        if info.flag_bits & 0x1:
            raise self.budget.fail(for_array(name, QT_TRANSLATE_NOOP("FileErrors", "is encrypted")))
        try:
            with self._zip.open(info) as stream:
                header = self._header(stream, name, allow_text, max_text_chars, labels)
                available = info.file_size - header.data_offset
                if available < header.data_bytes:
                    raise self.budget.fail(
                        for_array(
                            name,
                            message(
                                QT_TRANSLATE_NOOP(
                                    "FileErrors",
                                    "is truncated: its header promises {promised} of data but the archive holds "
                                    "{found}",
                                ),
                                promised=format_bytes(header.data_bytes),
                                found=format_bytes(max(available, 0)),
                            ),
                        )
                    )
                return read_npy_data(stream, header, self.budget, name)
        except self.budget.error:
            raise
        except MemoryError:
            raise
        except Exception as exc:
            # Bad CRC, inflated stream ending early, unsupported compression method, zlib error...
            raise self.budget.fail(
                for_array(
                    name, message(QT_TRANSLATE_NOOP("FileErrors", "is damaged ({error})"), error=_first_line(exc))
                )
            ) from exc

    def _header(self, stream: IO[bytes], name: str, allow_text: bool, max_text_chars: int, labels: bool) -> NpyHeader:
        if labels:
            header = _read_raw_header(stream, self.budget, name)
            if header.dtype.kind == "U":
                # Unicode arrays are plain fixed-width data (no pickle): bounded, then read.
                self.budget.claim_text(name, header.shape, header.dtype.itemsize // 4)
                return header
            return _checked(header, self.budget, name)
        if not allow_text:
            return read_npy_header(stream, self.budget, name)
        header = _read_raw_header(stream, self.budget, name)
        if header.dtype.kind != "U" or header.shape != ():
            raise self.budget.fail(
                message(
                    QT_TRANSLATE_NOOP(
                        "FileErrors", "member '{name}' should be a single text string, not {dtype} of shape {shape}"
                    ),
                    name=name,
                    dtype=str(header.dtype),
                    shape=header.shape,
                )
            )
        if header.dtype.itemsize // 4 > max_text_chars:
            raise self.budget.fail(
                message(
                    QT_TRANSLATE_NOOP("FileErrors", "member '{name}' is longer than the {limit} characters allowed"),
                    name=name,
                    limit=f"{max_text_chars:,}",
                )
            )
        return header

    def close(self) -> None:
        self._zip.close()

    def __enter__(self) -> NpzArchive:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def write_npy(stream: IO[bytes], array: np.ndarray) -> None:
    """Write one array in ``.npy`` format; pickle is never used."""
    npformat.write_array(stream, array, allow_pickle=False)


def write_npz(stream: IO[bytes], arrays: Mapping[str, np.ndarray], *, compress: bool = False) -> None:
    """Write an ``.npz`` that ``np.load(..., allow_pickle=False)`` reads back.

    Written by hand rather than with ``np.savez(file, **arrays)`` because keyword names would
    collide with savez's own parameters (an array called ``file`` or ``allow_pickle``).
    """
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(stream, mode="w", compression=method, allowZip64=True) as archive:
        for name, array in arrays.items():
            # force_zip64 as np.savez does: member sizes are unknown until written.
            with archive.open(name + NPY_SUFFIX, mode="w", force_zip64=True) as member:
                write_npy(member, array)


def _native(dtype: np.dtype) -> np.dtype:
    return dtype.newbyteorder("=") if dtype.byteorder not in ("=", "|") else dtype


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__
