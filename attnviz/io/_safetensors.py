"""Reading and writing ``.safetensors`` with plain numpy (the ``safetensors`` package is optional).

Layout (https://github.com/huggingface/safetensors): an unsigned little-endian 64-bit header
length N, N bytes of UTF-8 JSON mapping each tensor name to
``{"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}`` (offsets relative to the
byte buffer that follows the header) plus an optional ``"__metadata__"`` string map, then the
little-endian, C-ordered data. Everything is validated against the file size and the budget
before any array is allocated.
"""

from __future__ import annotations

import itertools
import json
import os
import struct
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from attnviz.io._limits import MAX_TEXT_CHARS, Budget, dtype_problem, element_count, for_array
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

# The reference implementation refuses larger headers too; a real one is a few kB.
MAX_HEADER_BYTES = 100_000_000
METADATA_KEY = "__metadata__"

# bfloat16 has no numpy dtype: it is read as uint16 and widened to float32 (exact).
_BF16 = "BF16"
_DTYPES: dict[str, np.dtype] = {
    "BOOL": np.dtype(np.bool_),
    "U8": np.dtype("<u1"),
    "I8": np.dtype("<i1"),
    "U16": np.dtype("<u2"),
    "I16": np.dtype("<i2"),
    "U32": np.dtype("<u4"),
    "I32": np.dtype("<i4"),
    "U64": np.dtype("<u8"),
    "I64": np.dtype("<i8"),
    "F16": np.dtype("<f2"),
    _BF16: np.dtype("<u2"),
    "F32": np.dtype("<f4"),
    "F64": np.dtype("<f8"),
}
#: The code numpy's dtype is written under (bfloat16 aside: numpy has none).
_CODES: dict[tuple[str, int], str] = {(d.kind, d.itemsize): code for code, d in _DTYPES.items() if code != _BF16}


def looks_like_safetensors(head: bytes, file_size: int) -> bool:
    """Sniff: a plausible header length followed by the JSON object's opening brace."""
    if len(head) < 9:
        return False
    (length,) = struct.unpack("<Q", head[:8])
    return 2 <= length <= file_size - 8 and head[8:9] == b"{"


def read_safetensors(path: Path, budget: Budget) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Return ``(arrays, metadata)`` in header order."""
    with open(path, "rb") as stream:
        file_size = os.fstat(stream.fileno()).st_size
        entries, metadata, data_start = _read_header(stream, file_size, budget)
        arrays: dict[str, np.ndarray] = {}
        for name, (code, shape, begin, _end) in entries.items():
            stream.seek(data_start + begin)
            arrays[name] = _read_array(stream, code, shape, budget, name)
    return arrays, metadata


def _read_header(
    stream: BinaryIO, file_size: int, budget: Budget
) -> tuple[dict[str, tuple[str, tuple[int, ...], int, int]], dict[str, str], int]:
    prefix = stream.read(8)
    if len(prefix) < 8:
        raise budget.fail(QT_TRANSLATE_NOOP("FileErrors", "is too short to be a .safetensors file"))
    (length,) = struct.unpack("<Q", prefix)
    if length > MAX_HEADER_BYTES:
        raise budget.fail(
            message(
                QT_TRANSLATE_NOOP(
                    "FileErrors",
                    "is not a valid .safetensors file: it claims a {length}-byte header (at most {limit} allowed)",
                ),
                length=f"{length:,}",
                limit=f"{MAX_HEADER_BYTES:,}",
            )
        )
    if length > file_size - 8:
        raise budget.fail(
            message(
                QT_TRANSLATE_NOOP(
                    "FileErrors",
                    "is truncated or not .safetensors: its header length ({length} bytes) is larger than the file",
                ),
                length=f"{length:,}",
            )
        )
    raw = stream.read(length)
    try:
        header = json.loads(raw.decode("utf-8"), object_pairs_hook=_unique_keys)
    except _RepeatedKey as exc:
        raise budget.fail(
            message(
                QT_TRANSLATE_NOOP("FileErrors", "has a damaged .safetensors header: the name '{name}' appears twice"),
                name=exc.key,
            )
        ) from exc
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise budget.fail(
            QT_TRANSLATE_NOOP("FileErrors", "has a damaged .safetensors header (not valid JSON)")
        ) from exc
    if not isinstance(header, dict):
        raise budget.fail(QT_TRANSLATE_NOOP("FileErrors", "has a damaged .safetensors header (not a JSON object)"))

    metadata = header.pop(METADATA_KEY, None) or {}
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise budget.fail(
            QT_TRANSLATE_NOOP("FileErrors", "has damaged .safetensors metadata (must map names to strings)")
        )

    data_start = 8 + length
    data_size = file_size - data_start
    entries: dict[str, tuple[str, tuple[int, ...], int, int]] = {}
    for name, info in header.items():
        code, shape, begin, end = _parse_entry(name, info, budget)
        if end > data_size:
            raise budget.fail(
                message(
                    QT_TRANSLATE_NOOP(
                        "FileErrors",
                        "is truncated: array '{name}' lies at bytes {begin}-{end} of the data but only {size} "
                        "bytes follow the header",
                    ),
                    name=name,
                    begin=f"{begin:,}",
                    end=f"{end:,}",
                    size=f"{data_size:,}",
                )
            )
        entries[name] = (code, shape, begin, end)

    # Overlapping ranges would let a small file claim much more data than it holds.
    spans = sorted((begin, end, name) for name, (_c, _s, begin, end) in entries.items())
    for (_b1, end1, name1), (begin2, _e2, name2) in itertools.pairwise(spans):
        if begin2 < end1:
            raise budget.fail(
                message(
                    QT_TRANSLATE_NOOP("FileErrors", "has overlapping data for arrays '{a}' and '{b}'"), a=name1, b=name2
                )
            )
    return entries, {str(k): v for k, v in metadata.items()}, data_start


class _RepeatedKey(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # Plain json.loads keeps the last of two equal keys: two readers could then disagree on which
    # array a name holds.
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _RepeatedKey(key)
        result[key] = value
    return result


def _parse_entry(name: str, info: Any, budget: Budget) -> tuple[str, tuple[int, ...], int, int]:
    if not isinstance(info, dict):
        raise budget.fail(
            message(QT_TRANSLATE_NOOP("FileErrors", "has a damaged header entry for array '{name}'"), name=name)
        )
    code = info.get("dtype")
    shape = _int_list(info.get("shape"))
    offsets = _int_list(info.get("data_offsets"))
    if not isinstance(code, str):
        raise budget.fail(message(QT_TRANSLATE_NOOP("FileErrors", "has no dtype for array '{name}'"), name=name))
    if code not in _DTYPES:
        if code.startswith("C"):
            kind: str = QT_TRANSLATE_NOOP("FileErrors", "complex numbers")
        else:
            kind = message(QT_TRANSLATE_NOOP("FileErrors", "dtype {dtype}"), dtype=code)
        raise budget.fail(
            for_array(
                name,
                message(
                    QT_TRANSLATE_NOOP("FileErrors", "holds {kind}, which is not supported ({accepted})"),
                    kind=kind,
                    accepted=QT_TRANSLATE_NOOP("FileErrors", "bool, integers, F16, BF16, F32, F64"),
                ),
            )
        )
    if shape is None or any(s < 0 for s in shape):
        raise budget.fail(
            message(QT_TRANSLATE_NOOP("FileErrors", "has an invalid shape for array '{name}'"), name=name)
        )
    if offsets is None or len(offsets) != 2 or not 0 <= offsets[0] <= offsets[1]:
        raise budget.fail(
            message(QT_TRANSLATE_NOOP("FileErrors", "has invalid data offsets for array '{name}'"), name=name)
        )
    begin, end = offsets
    shape_t = tuple(shape)
    budget.claim(name, shape_t, 4 if code == _BF16 else _DTYPES[code].itemsize)
    stored = element_count(shape_t) * _DTYPES[code].itemsize
    if end - begin != stored:
        raise budget.fail(
            message(
                QT_TRANSLATE_NOOP(
                    "FileErrors",
                    "has a lying header: array '{name}' of shape {shape} needs {needed} bytes but its offsets "
                    "span {span}",
                ),
                name=name,
                shape=shape_t,
                needed=f"{stored:,}",
                span=f"{end - begin:,}",
            )
        )
    return code, shape_t, begin, end


def _int_list(value: Any) -> list[int] | None:
    # bool is an int subclass; JSON true must not pass as a dimension.
    if isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return value
    return None


def _read_array(stream: BinaryIO, code: str, shape: tuple[int, ...], budget: Budget, name: str) -> np.ndarray:
    stored = _DTYPES[code]
    flat = np.empty(element_count(shape), dtype=stored)
    view = flat.data.cast("B")
    got = stream.readinto(view)  # type: ignore[attr-defined]
    if got != len(view):
        raise budget.fail(message(QT_TRANSLATE_NOOP("FileErrors", "is truncated inside array '{name}'"), name=name))
    if code == _BF16:
        # bfloat16 is the top half of a float32, so widening is a shift, and exact.
        widened = flat.astype(np.uint32) << 16
        return widened.view(np.float32).reshape(shape)
    return np.asarray(flat.reshape(shape), dtype=stored.newbyteorder("="), order="C")


def metadata_labels(metadata: Mapping[str, str], budget: Budget) -> dict[str, np.ndarray]:
    """Metadata values that are JSON lists of strings (``"tokens": "[\\"the\\", \\"cat\\"]"``),
    or lists of such lists, as str arrays; every other value stays plain metadata."""
    texts: dict[str, np.ndarray] = {}
    for key, value in metadata.items():
        text = value.lstrip()
        if not text.startswith("["):
            continue
        if len(text) > MAX_TEXT_CHARS:
            # Parsed, a long list of short strings takes tens of times its length in memory.
            raise budget.fail(
                for_array(
                    key,
                    message(
                        QT_TRANSLATE_NOOP("FileErrors", "is metadata text longer than the {limit} characters allowed"),
                        limit=f"{MAX_TEXT_CHARS:,}",
                    ),
                )
            )
        try:
            parsed = json.loads(text)
        except (ValueError, RecursionError):
            continue  # not JSON: someone's own text that happens to start with "["
        if isinstance(parsed, list) and all(
            isinstance(item, str) or (isinstance(item, list) and all(isinstance(s, str) for s in item))
            for item in parsed
        ):
            texts[key] = budget.labels(key, parsed)
    return texts


def safetensors_code(dtype: np.dtype) -> str:
    """The safetensors dtype code for a numpy dtype, or raise ``ValueError``."""
    problem = dtype_problem(dtype)
    code = _CODES.get((dtype.kind, dtype.itemsize))
    if problem is not None or code is None:
        raise ValueError(
            problem
            or message(
                QT_TRANSLATE_NOOP("FileErrors", "dtype {dtype} cannot be stored in .safetensors"), dtype=str(dtype)
            )
        )
    return code


def write_safetensors(
    stream: BinaryIO, arrays: Mapping[str, np.ndarray], metadata: Mapping[str, str] | None = None
) -> None:
    """Write arrays contiguously in the given order, as the reference implementation expects."""
    header: dict[str, Any] = {}
    if metadata:
        header[METADATA_KEY] = {str(k): str(v) for k, v in metadata.items()}
    blobs: list[np.ndarray] = []
    offset = 0
    for name, array in arrays.items():
        if name == METADATA_KEY:
            raise ValueError(f"'{METADATA_KEY}' is reserved in .safetensors and cannot name an array")
        code = safetensors_code(array.dtype)
        little = np.asarray(array, dtype=array.dtype.newbyteorder("<"), order="C")
        header[name] = {
            "dtype": code,
            "shape": list(array.shape),
            "data_offsets": [offset, offset + little.nbytes],
        }
        offset += little.nbytes
        blobs.append(little)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    # Pad with spaces so the data starts 8-byte aligned, as the reference writer does.
    text += b" " * (-len(text) % 8)
    stream.write(struct.pack("<Q", len(text)))
    stream.write(text)
    for blob in blobs:
        # A flat uint8 view writes any dtype (bool, 0-d) without a tobytes() copy.
        stream.write(blob.reshape(-1).view(np.uint8).data)
