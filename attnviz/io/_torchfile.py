"""Reading and writing PyTorch ``.pt``/``.pth`` files without ever running code from them.

Reading does not go through ``torch.load`` (and needs no torch at all). Even with
``weights_only=True`` its unpickler lets a file choose allocation sizes: it allows
``bytearray(n)``, and it allocates each storage at the size the pickle declares before reading a
byte of it, so a 32-byte file zero-fills gigabytes. Here:

* the pickle runs in :mod:`attnviz.io._unpickler`, which resolves only the globals
  ``torch.save`` writes for tensors (rebuild functions, storage types, dtypes, ``OrderedDict``,
  ``torch.Size``) and turns them into records (:class:`Storage`, :class:`TensorRef`); nothing
  of torch's is called;
* every storage the pickle declares is checked against the bytes the file really holds for it
  (zip: the ``data/<key>`` member; legacy: the record after the pickles) before anything is
  allocated;
* every tensor's shape is claimed from the :class:`~attnviz.io._limits.Budget`, its view checked
  to lie inside its storage, and only then are its bytes read, the span the view covers and no more.

Layouts: ``torch.save`` writes a zip archive ``<root>/data.pkl`` + ``<root>/data/<key>`` (raw
storage bytes in the byte order of ``<root>/byteorder``, little-endian when absent); PyTorch
before 1.6 (and ``_use_new_zipfile_serialization=False``) writes the legacy layout: pickles of a
magic number, a protocol version, system information, the object and its storage keys, then each
storage as an int64 element count and its little-endian bytes.

Writing uses ``torch.save`` (torch is imported then, lazily).
"""

from __future__ import annotations

import struct
import zipfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, BinaryIO, Literal

import numpy as np

from attnviz.io import _unpickler
from attnviz.io._limits import Budget, element_count, for_array, format_bytes
from attnviz.io._npy import open_zip, read_into
from attnviz.io._torchpickle import Storage, TensorRef, Unloadable, dtype_problem, unpickle
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

# data.pkl holds only the object structure (storages live elsewhere): about 100 bytes a tensor.
MAX_PICKLE_BYTES = 32 * 1024 * 1024
_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
_LEGACY_PROTOCOL = 1001
_MAX_BYTEORDER_BYTES = 16


# --- reading the two layouts ----------------------------------------------------------------------

# ``read(storage, start, nbytes, dtype)``: ``nbytes`` of a storage from byte ``start``, in a fresh
# array of ``dtype`` in the file's byte order.
SpanReader = Callable[[Storage, int, int, np.dtype], np.ndarray]


def is_torch_zip(names: Iterable[str]) -> bool:
    """Whether zip member names look like ``torch.save``'s archive (``<root>/data.pkl``)."""
    return any(n == "data.pkl" or n.endswith("/data.pkl") for n in names)


@dataclass
class TorchContents:
    """What a PyTorch file holds: tensors flattened to names, text labels (lists of strings),
    plain values at the top (``"is_causal": True``), and the entries left out."""

    arrays: dict[str, np.ndarray]
    skipped: list[str] = field(default_factory=list)
    texts: dict[str, np.ndarray] = field(default_factory=dict)
    scalars: dict[str, bool | int | float | str] = field(default_factory=dict)


def read_torch(path: Path, budget: Budget, *, zip_format: bool) -> TorchContents:
    """The file's tensors flattened to names, its text labels and plain values, and the entries
    that were none of these."""
    if zip_format:
        with open_zip(path, budget) as archive, open(path, "rb") as raw:
            loaded, read = _open_zip_layout(path, archive, raw, budget)
            return _arrays(loaded, path.stem, budget, read)
    size = path.stat().st_size
    if size > budget.max_bytes:
        # A legacy file's storages all sit in it: one larger than the byte limit cannot be wanted.
        raise budget.fail(
            message(
                QT_TRANSLATE_NOOP(
                    "FileErrors", "is a legacy (non-zip) PyTorch file of {size}, more than the {limit} allowed"
                ),
                size=format_bytes(size),
                limit=format_bytes(budget.max_bytes),
            )
        )
    with open(path, "rb") as stream:
        loaded, read = _open_legacy_layout(stream, size, budget)
        return _arrays(loaded, path.stem, budget, read)


def _open_zip_layout(path: Path, archive: zipfile.ZipFile, raw: BinaryIO, budget: Budget) -> tuple[Any, SpanReader]:
    """The pickled object, and a reader of its storages; ``raw`` is the archive opened as a file."""
    infos = archive.infolist()
    file_size = path.stat().st_size
    for info in infos:
        if info.header_offset < 0:  # a damaged directory: zipfile would seek before the start
            raise budget.fail(QT_TRANSLATE_NOOP("FileErrors", "is truncated or damaged: not a complete zip archive"))
        # A member past the end would be read as if it were there: report the file as cut short.
        if info.header_offset + info.compress_size > file_size:
            raise budget.fail(
                message(
                    QT_TRANSLATE_NOOP("FileErrors", "is truncated: member '{name}' extends beyond the end of the file"),
                    name=info.filename,
                )
            )
    pickle_info = next(i for i in infos if i.filename == "data.pkl" or i.filename.endswith("/data.pkl"))
    root = pickle_info.filename[: -len("data.pkl")]
    with archive.open(pickle_info) as member:
        # Read with a bound: the size in the zip directory is only a claim.
        data = member.read(MAX_PICKLE_BYTES + 1)
    if len(data) > MAX_PICKLE_BYTES:
        raise budget.fail(
            message(
                QT_TRANSLATE_NOOP(
                    "FileErrors", "has a {size} object description (data.pkl), more than the {limit} allowed"
                ),
                size=format_bytes(pickle_info.file_size),
                limit=format_bytes(MAX_PICKLE_BYTES),
            )
        )
    byteorder: Literal["<", ">"] = "<"
    if root + "byteorder" in archive.NameToInfo:
        with archive.open(root + "byteorder") as member:
            mark = member.read(_MAX_BYTEORDER_BYTES)
        if mark not in (b"little", b"big"):
            raise budget.fail(QT_TRANSLATE_NOOP("FileErrors", "is truncated or damaged"))
        byteorder = "<" if mark == b"little" else ">"

    storages: dict[str, Storage] = {}
    try:
        loaded, _end = unpickle(data, 0, budget, storages)
    except _unpickler.Truncated as exc:
        raise budget.fail(QT_TRANSLATE_NOOP("FileErrors", "is truncated or damaged")) from exc

    records: dict[str, zipfile.ZipInfo] = {}
    for key, storage in storages.items():
        record = archive.NameToInfo.get(f"{root}data/{key}")
        if record is None:
            raise budget.fail(
                message(QT_TRANSLATE_NOOP("FileErrors", "is truncated or damaged: storage '{key}' is missing"), key=key)
            )
        if record.file_size < storage.nbytes:
            raise budget.fail(
                message(
                    QT_TRANSLATE_NOOP(
                        "FileErrors",
                        "is truncated or damaged: storage '{key}' declares {declared} bytes but its record "
                        "holds {found} bytes",
                    ),
                    key=key,
                    declared=f"{storage.nbytes:,}",
                    found=f"{record.file_size:,}",
                )
            )
        records[key] = record

    def read(storage: Storage, start: int, nbytes: int, dtype: np.dtype) -> np.ndarray:
        record = records[storage.key]
        if record.compress_type == zipfile.ZIP_STORED:
            # torch.save stores storages uncompressed: read them straight from the file (zipfile
            # would copy every byte twice and checksum the whole record, 4x slower).
            raw.seek(_stored_data_start(raw, record, budget) + start)
            buffer = _read_span(raw, nbytes, storage, budget)
        else:
            with archive.open(record) as member:
                member.seek(start)
                buffer = _read_span(member, nbytes, storage, budget)
        return buffer.view(dtype.newbyteorder(byteorder))

    return loaded, read


def _stored_data_start(raw: BinaryIO, info: zipfile.ZipInfo, budget: Budget) -> int:
    """Where an uncompressed member's bytes start: after its local header, whose name and extra
    field lengths may differ from the central directory's."""
    raw.seek(info.header_offset)
    local = raw.read(30)
    if len(local) < 30 or local[:4] != b"PK\x03\x04":
        raise budget.fail(QT_TRANSLATE_NOOP("FileErrors", "is truncated or damaged: not a complete zip archive"))
    name_length, extra_length = struct.unpack("<HH", local[26:30])
    return info.header_offset + 30 + name_length + extra_length


def _open_legacy_layout(stream: BinaryIO, file_size: int, budget: Budget) -> tuple[Any, SpanReader]:
    data = stream.read(MAX_PICKLE_BYTES)
    storages: dict[str, Storage] = {}
    pos = 0
    try:
        magic, pos = unpickle(data, pos, budget, storages, legacy=True)
        if magic != _LEGACY_MAGIC:
            raise budget.fail(
                QT_TRANSLATE_NOOP("FileErrors", "is not a PyTorch file (its first bytes do not match), or is damaged")
            )
        protocol, pos = unpickle(data, pos, budget, storages, legacy=True)
        if protocol != _LEGACY_PROTOCOL:
            raise budget.fail(QT_TRANSLATE_NOOP("FileErrors", "is truncated or damaged"))
        _system, pos = unpickle(data, pos, budget, storages, legacy=True)
        loaded, pos = unpickle(data, pos, budget, storages, legacy=True)
        keys, pos = unpickle(data, pos, budget, storages, legacy=True)
    except _unpickler.Truncated as exc:
        if len(data) < file_size:
            raise budget.fail(
                message(
                    QT_TRANSLATE_NOOP("FileErrors", "has an object description larger than the {limit} allowed"),
                    limit=format_bytes(MAX_PICKLE_BYTES),
                )
            ) from exc
        raise budget.fail(QT_TRANSLATE_NOOP("FileErrors", "is truncated or damaged")) from exc
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys) or sorted(keys) != sorted(storages):
        raise budget.fail(QT_TRANSLATE_NOOP("FileErrors", "is truncated or damaged"))

    # Each storage: its element count (int64), then its bytes. Checked against the declarations
    # and the file's size before anything is read into memory.
    starts: dict[str, int] = {}
    for key in keys:
        storage = storages[key]
        stream.seek(pos)
        head = stream.read(8)
        if len(head) < 8:
            raise budget.fail(QT_TRANSLATE_NOOP("FileErrors", "is truncated or damaged"))
        (numel,) = struct.unpack("<q", head)
        if numel != storage.numel:
            raise budget.fail(
                message(
                    QT_TRANSLATE_NOOP(
                        "FileErrors",
                        "is damaged: storage '{key}' declares {declared} elements but its record says {found}",
                    ),
                    key=key,
                    declared=f"{storage.numel:,}",
                    found=f"{numel:,}",
                )
            )
        starts[key] = pos + 8
        left = max(file_size - starts[key], 0)
        if storage.nbytes > left:
            raise budget.fail(
                message(
                    QT_TRANSLATE_NOOP(
                        "FileErrors",
                        "is truncated or damaged: storage '{key}' declares {declared} bytes but only {found} "
                        "bytes remain in the file",
                    ),
                    key=key,
                    declared=f"{storage.nbytes:,}",
                    found=f"{left:,}",
                )
            )
        pos = starts[key] + storage.nbytes

    def read(storage: Storage, start: int, nbytes: int, dtype: np.dtype) -> np.ndarray:
        stream.seek(starts[storage.key] + start)
        return _read_span(stream, nbytes, storage, budget).view(dtype.newbyteorder("<"))

    return loaded, read


def _read_span(stream: IO[bytes], nbytes: int, storage: Storage, budget: Budget) -> np.ndarray:
    buffer = np.empty(nbytes, dtype=np.uint8)
    if read_into(stream, buffer.data) < nbytes:
        raise budget.fail(
            message(QT_TRANSLATE_NOOP("FileErrors", "is truncated: storage '{key}' ends early"), key=storage.key)
        )
    return buffer


# --- from records to arrays -------------------------------------------------------------------------


def _arrays(loaded: Any, stem: str, budget: Budget, read: SpanReader) -> TorchContents:
    contents = TorchContents({})
    tensors = _flatten(loaded, stem, budget, contents)
    single = isinstance(loaded, (TensorRef, Unloadable))
    contents.arrays = {name: _to_numpy(t, None if single else name, budget, read) for name, t in tensors.items()}
    return contents


def _items(container: Mapping[Any, Any] | list[Any] | tuple[Any, ...]) -> Iterable[tuple[str, Any]]:
    if isinstance(container, Mapping):
        return ((str(k), v) for k, v in container.items())
    return ((str(i), v) for i, v in enumerate(container))


def _flatten(loaded: Any, stem: str, budget: Budget, contents: TorchContents) -> dict[str, TensorRef | Unloadable]:
    """Tensor, or a container of tensors nested at most one level, to ``{"outer.inner": t}``;
    the container's text labels and plain values go to ``contents``, the rest to its skipped."""
    tensor_like = (TensorRef, Unloadable)
    if isinstance(loaded, tensor_like):
        return {stem: loaded}
    if not isinstance(loaded, (Mapping, list, tuple)):
        raise budget.fail(
            message(QT_TRANSLATE_NOOP("FileErrors", "holds a Python {type}, not tensors"), type=type(loaded).__name__)
        )
    skipped = contents.skipped
    found: list[tuple[str, TensorRef | Unloadable]] = []
    for key, value in _items(loaded):
        if isinstance(value, tensor_like):
            found.append((key, value))
        elif isinstance(value, (bool, int, float, str)):
            contents.scalars[key] = value
        elif _is_text(value):
            contents.texts[key] = budget.labels(key, value)
        elif isinstance(value, (Mapping, list, tuple)):
            for inner_key, inner in _items(value):
                name = f"{key}.{inner_key}"
                if isinstance(inner, tensor_like):
                    found.append((name, inner))
                else:
                    # Deeper levels are optimizer state and the like, not attention inputs.
                    skipped.append(_skipped(name, inner))
        else:
            skipped.append(_skipped(key, value))
    tensors: dict[str, TensorRef | Unloadable] = {}
    for name, tensor in found:
        if name in tensors:
            raise budget.fail(
                message(QT_TRANSLATE_NOOP("FileErrors", "has two tensors that would both be named '{name}'"), name=name)
            )
        tensors[name] = tensor
    if not tensors:
        raise budget.fail(QT_TRANSLATE_NOOP("FileErrors", "holds no tensors"))
    return tensors


def _is_text(value: Any) -> bool:
    """A non-empty list of strings, or of lists of strings: token labels."""
    if not isinstance(value, (list, tuple)) or not value:
        return False
    return all(isinstance(item, str) for item in value) or all(
        isinstance(item, (list, tuple)) and all(isinstance(s, str) for s in item) for item in value
    )


def _skipped(name: str, value: Any) -> str:
    """An entry of ``TensorFile.skipped``: the name, and why in parentheses."""
    if isinstance(value, (Mapping, list, tuple)):
        why: str = QT_TRANSLATE_NOOP("FileErrors", "nested too deeply")
    else:
        why = message(QT_TRANSLATE_NOOP("FileErrors", "{type}, not a tensor"), type=type(value).__name__)
    return message(QT_TRANSLATE_NOOP("FileErrors", "{name} ({why})"), name=name, why=why)


def _to_numpy(ref: TensorRef | Unloadable, name: str | None, budget: Budget, read: SpanReader) -> np.ndarray:
    if isinstance(ref, Unloadable):
        raise budget.fail(for_array(name, ref.reason))
    problem = dtype_problem(ref.dtype)
    if problem is not None:
        raise budget.fail(for_array(name, problem))
    widen = ref.dtype.name == "bfloat16"
    itemsize = ref.dtype.itemsize
    # The count comes from the shape, not the storage: a stride-0 view of one element can claim
    # a billion. Claimed before anything is read.
    budget.claim(name, ref.shape, 4 if widen else itemsize)
    stored = np.dtype(ref.dtype.numpy)
    if element_count(ref.shape) == 0:
        return np.zeros(ref.shape, dtype=np.float32 if widen else stored.newbyteorder("="))
    last = ref.offset + sum((size - 1) * step for size, step in zip(ref.shape, ref.stride, strict=True))
    if (last + 1) * itemsize > ref.storage.nbytes:
        raise budget.fail(
            for_array(
                name,
                message(
                    QT_TRANSLATE_NOOP(
                        "FileErrors",
                        "reaches past the end of its storage (it needs {needed} bytes, the storage holds {held})",
                    ),
                    needed=f"{(last + 1) * itemsize:,}",
                    held=f"{ref.storage.nbytes:,}",
                ),
            )
        )
    span = (last + 1 - ref.offset) * itemsize
    if span > budget.max_bytes:
        # A sparse view (a big step) would have its whole span read to copy a few elements.
        raise budget.fail(
            for_array(
                name,
                message(
                    QT_TRANSLATE_NOOP(
                        "FileErrors", "is a view spanning {span} of its storage, more than the {limit} allowed"
                    ),
                    span=format_bytes(span),
                    limit=format_bytes(budget.max_bytes),
                ),
            )
        )
    elements = read(ref.storage, ref.offset * itemsize, span, stored)
    native = stored.newbyteorder("=")
    if _c_contiguous(ref.shape, ref.stride):
        # The span is exactly the tensor, in C order, in a buffer of its own: no copy needed
        # (astype copies only to change the byte order).
        array = elements.reshape(ref.shape).astype(native, copy=False)
    else:
        strides = tuple(step * itemsize for step in ref.stride)
        view = np.lib.stride_tricks.as_strided(elements, shape=ref.shape, strides=strides, writeable=False)
        # A copy in native byte order and C order: the span buffer is not kept.
        array = np.array(view, dtype=native, order="C", copy=True)
    if widen:
        # bfloat16 is the top half of a float32, so widening is a shift, and exact.
        array = (array.astype(np.uint32) << 16).view(np.float32)
    if ref.negated:
        np.negative(array, out=array)
    return array


def _c_contiguous(shape: tuple[int, ...], stride: tuple[int, ...]) -> bool:
    expected = 1
    for size, step in zip(reversed(shape), reversed(stride), strict=True):
        if size != 1 and step != expected:
            return False
        expected *= size
    return True


def write_torch(stream: BinaryIO, arrays: Mapping[str, np.ndarray]) -> None:
    """``torch.save`` a ``{name: tensor}`` dict (loadable with ``weights_only=True``)."""
    import torch

    tensors = {}
    for name, array in arrays.items():
        native = np.array(array, dtype=array.dtype.newbyteorder("="), order="C", copy=True)
        tensors[name] = torch.from_numpy(native)
    torch.save(tensors, stream)
