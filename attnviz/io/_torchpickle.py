"""What a PyTorch pickle may build: tensors, their storages and plain containers, as records.

``torch.save`` pickles a tensor as a call of a rebuild function (``torch._utils._rebuild_tensor_v2``
and kin) on a storage reference (a persistent id naming a storage type, a key and an element
count), a storage offset, a shape and strides. Here those globals resolve to this module's own
functions, which check their arguments and return records (:class:`TensorRef`, :class:`Storage`,
:class:`Unloadable` for sparse, quantized and other tensors attnviz does not read); dtypes and
storage types resolve to inert values. Nothing of torch's is imported or called, and every other
global is refused. The pickle itself runs in :mod:`attnviz.io._unpickler`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from attnviz.io import _unpickler
from attnviz.io._limits import Budget
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

# A real pickle takes about 32 opcodes per tensor: this allows some 60,000 tensors, and bounds
# the memory the pickle's objects take (see _unpickler).
MAX_PICKLE_OPS = 2_000_000


@dataclass(frozen=True)
class DType:
    """A torch dtype as the pickle names it; ``numpy`` is the little-endian dtype attnviz reads it
    as (bfloat16: ``<u2``, widened later), or None when it refuses the dtype."""

    name: str
    itemsize: int
    numpy: str | None
    kind: str = "plain"  # "plain", "complex" or "quantized": picks the refusal's words


_DTYPES: dict[str, DType] = {d.name: d for d in [
    DType("float64", 8, "<f8"), DType("float32", 4, "<f4"), DType("float16", 2, "<f2"),
    DType("bfloat16", 2, "<u2"), DType("int64", 8, "<i8"), DType("int32", 4, "<i4"), DType("int16", 2, "<i2"),
    DType("int8", 1, "|i1"), DType("uint8", 1, "|u1"), DType("bool", 1, "|b1"), DType("uint16", 2, "<u2"),
    DType("uint32", 4, "<u4"), DType("uint64", 8, "<u8"),
    DType("complex32", 4, None, "complex"), DType("complex64", 8, None, "complex"),
    DType("complex128", 16, None, "complex"),
    DType("qint8", 1, None, "quantized"), DType("quint8", 1, None, "quantized"),
    DType("qint32", 4, None, "quantized"), DType("quint4x2", 1, None, "quantized"),
    DType("quint2x4", 1, None, "quantized"),
    DType("float8_e5m2", 1, None), DType("float8_e4m3fn", 1, None), DType("float8_e5m2fnuz", 1, None),
    DType("float8_e4m3fnuz", 1, None), DType("float8_e8m0fnu", 1, None), DType("float4_e2m1fn_x2", 1, None),
    DType("bits8", 1, None), DType("bits16", 2, None), DType("bits1x8", 1, None), DType("bits2x4", 1, None),
    DType("bits4x2", 1, None),
]}  # fmt: skip

# Storage classes name their element type; UntypedStorage holds bytes (its tensors name a dtype).
_STORAGE_TYPES: dict[str, str] = {
    "DoubleStorage": "float64", "FloatStorage": "float32", "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32", "ShortStorage": "int16",
    "CharStorage": "int8", "ByteStorage": "uint8", "BoolStorage": "bool", "ComplexDoubleStorage": "complex128",
    "ComplexFloatStorage": "complex64", "QInt8Storage": "qint8", "QUInt8Storage": "quint8",
    "QInt32Storage": "qint32", "QUInt4x2Storage": "quint4x2", "QUInt2x4Storage": "quint2x4",
    "UntypedStorage": "uint8",
}  # fmt: skip


@dataclass(frozen=True)
class StorageType:
    dtype: DType


@dataclass(frozen=True)
class Storage:
    """A storage the pickle declares: ``numel`` elements of ``dtype``, found under ``key``."""

    key: str
    dtype: DType
    numel: int

    @property
    def nbytes(self) -> int:
        return self.numel * self.dtype.itemsize


@dataclass(frozen=True)
class TensorRef:
    """A dense tensor: a strided view (in elements of ``dtype``) into ``storage``."""

    storage: Storage
    dtype: DType
    offset: int
    shape: tuple[int, ...]
    stride: tuple[int, ...]
    negated: bool  # torch's lazy negation bit (a view of the imaginary part of a conjugate)


@dataclass(frozen=True)
class Unloadable:
    """A tensor of a kind attnviz does not read; ``reason`` says which, once its name is known."""

    reason: str


@dataclass(frozen=True)
class _Marker:
    """An inert global (a tensor class, a quantization scheme): a value, never called."""

    name: str


def _index(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise TypeError("expected a non-negative integer")
    return value


def _indices(value: Any) -> tuple[int, ...]:
    if not isinstance(value, tuple):
        raise TypeError("expected a tuple")
    return tuple(_index(v) for v in value)


def _tensor(
    storage: Any, offset: Any, size: Any, stride: Any, dtype: DType | None = None, metadata: Any = None
) -> TensorRef:
    shape, steps = _indices(size), _indices(stride)  # torch refuses negative strides too
    if not isinstance(storage, Storage) or len(shape) != len(steps):
        raise TypeError("a tensor needs a storage and as many strides as dimensions")
    negated = isinstance(metadata, dict) and metadata.get("neg") is True
    return TensorRef(storage, dtype or storage.dtype, _index(offset), shape, steps, negated)


def _rebuild_tensor_v2(
    storage: Any,
    offset: Any,
    size: Any,
    stride: Any,
    _requires_grad: Any = False,
    _hooks: Any = None,
    metadata: Any = None,
) -> TensorRef:
    return _tensor(storage, offset, size, stride, None, metadata)


def _rebuild_tensor_v3(
    storage: Any,
    offset: Any,
    size: Any,
    stride: Any,
    _requires_grad: Any,
    _hooks: Any,
    dtype: Any,
    metadata: Any = None,
) -> TensorRef:
    if not isinstance(dtype, DType):
        raise TypeError("expected a dtype")
    return _tensor(storage, offset, size, stride, dtype, metadata)


def _parameter(data: Any, *_rest: Any) -> Any:
    if not isinstance(data, (TensorRef, Unloadable)):
        raise TypeError("a parameter wraps a tensor")
    return data


def _from_type(func: Any, new_type: Any, args: Any, _state: Any) -> Any:
    # A tensor with Python attributes, or a Parameter: the attributes are dropped.
    if not isinstance(func, _unpickler.Constructor) or not isinstance(new_type, _Marker) or not isinstance(args, tuple):
        raise TypeError("expected a rebuild function, a tensor class and arguments")
    return func.build(*args)


def _sparse(layout: Any, _data: Any) -> Unloadable:
    return Unloadable(
        message(
            QT_TRANSLATE_NOOP("FileErrors", "is a {layout} tensor; only dense tensors are supported"),
            layout=str(layout),
        )
    )


def _quantized(storage: Any, *_rest: Any) -> Unloadable:
    if not isinstance(storage, Storage):
        raise TypeError("expected a storage")
    return Unloadable(dtype_problem(storage.dtype) or "")


def _meta(*_args: Any) -> Unloadable:
    return Unloadable(
        message(QT_TRANSLATE_NOOP("FileErrors", "is on device '{device}' and holds no loadable data"), device="meta")
    )


def _other_kind(kind: str) -> Callable[..., Unloadable]:
    def build(*_args: Any) -> Unloadable:
        return Unloadable(
            message(QT_TRANSLATE_NOOP("FileErrors", "is a kind of tensor attnviz does not read ({kind})"), kind=kind)
        )

    return build


def _ordered_dict() -> dict[Any, Any]:
    return {}  # filled by the SETITEMS that follow, as pickle fills an OrderedDict


def _size(dims: Any) -> tuple[int, ...]:
    return _indices(tuple(dims) if isinstance(dims, list) else dims)


def _layout(name: Any) -> str:
    if not isinstance(name, str):
        raise TypeError("expected a layout name")
    return name


def _constructors() -> dict[str, Any]:
    rebuild = "torch._utils."
    table: dict[str, Any] = {
        rebuild + "_rebuild_tensor": lambda s, o, size, stride: _tensor(s, o, size, stride),
        rebuild + "_rebuild_tensor_v2": _rebuild_tensor_v2,
        rebuild + "_rebuild_tensor_v3": _rebuild_tensor_v3,
        rebuild + "_rebuild_parameter": _parameter,
        rebuild + "_rebuild_parameter_with_state": _parameter,
        "torch._tensor._rebuild_from_type_v2": _from_type,
        rebuild + "_rebuild_sparse_tensor": _sparse,
        rebuild + "_rebuild_qtensor": _quantized,
        rebuild + "_rebuild_meta_tensor_no_storage": _meta,
        "torch.serialization._get_layout": _layout,
        "collections.OrderedDict": _ordered_dict,
        "torch.Size": _size,
    }
    for function, kind in (
        ("nested_tensor", "nested"),
        ("wrapper_subclass", "tensor subclass"),
        ("device_tensor_from_numpy", "device tensor"),
        ("device_tensor_from_cpu_tensor", "device tensor"),
    ):
        table[f"{rebuild}_rebuild_{function}"] = _other_kind(kind)
    return {name: _unpickler.Constructor(name, build) for name, build in table.items()}


_CONSTRUCTORS = _constructors()
_VALUES: dict[str, Any] = {
    **{f"torch.{name}": dtype for name, dtype in _DTYPES.items()},
    **{
        f"{module}.{name}": StorageType(_DTYPES[dtype])
        for name, dtype in _STORAGE_TYPES.items()
        for module in ("torch", "torch.cuda", "torch.storage")
    },
    **{
        name: _Marker(name)
        for name in (
            "torch.Tensor",
            "torch.nn.parameter.Parameter",
            "torch.per_tensor_affine",
            "torch.per_channel_affine",
            "torch.per_tensor_symmetric",
            "torch.per_channel_symmetric",
            "torch.per_channel_affine_float_qparams",
        )
    },
}


def _find_global(budget: Budget) -> Callable[[str, str], Any]:
    def find(module: str, name: str) -> Any:
        full = f"{module}.{name}"
        found = _CONSTRUCTORS.get(full, _VALUES.get(full))
        if found is None:
            raise budget.fail(
                message(
                    QT_TRANSLATE_NOOP(
                        "FileErrors",
                        "refused: its pickle would call {name}, which could run code (only tensors and plain "
                        "containers are loaded)",
                    ),
                    name=full,
                )
            )
        return found

    return find


def _persistent_load(budget: Budget, storages: dict[str, Storage], *, legacy: bool) -> Callable[[Any], Storage]:
    """torch's storage references: ``("storage", type, key, location, numel)``, plus a view
    (always None since PyTorch 0.4) in legacy files. The location is ignored: every storage is
    read from the file into memory, whatever device it was saved from."""

    def load(pid: Any) -> Storage:
        if not isinstance(pid, tuple) or len(pid) != (6 if legacy else 5) or pid[0] != "storage":
            raise TypeError("not a storage reference")
        storage_type, key, _location, numel = pid[1:5]
        if not isinstance(storage_type, StorageType) or not isinstance(key, str) or (legacy and pid[5] is not None):
            raise TypeError("not a storage reference")
        storage = Storage(key, storage_type.dtype, _index(numel))
        if storages.setdefault(key, storage) != storage:
            raise budget.fail(
                message(
                    QT_TRANSLATE_NOOP("FileErrors", "is damaged: storage '{key}' is described twice, differently"),
                    key=key,
                )
            )
        return storage

    return load


def dtype_problem(dtype: DType) -> str | None:
    """Why attnviz does not read tensors of ``dtype`` (a phrase starting with a verb), or None."""
    shown = f"torch.{dtype.name}"
    if dtype.kind == "complex":
        return message(
            QT_TRANSLATE_NOOP("FileErrors", "holds complex numbers ({dtype}); attention tensors must be real"),
            dtype=shown,
        )
    if dtype.kind == "quantized":
        return message(
            QT_TRANSLATE_NOOP("FileErrors", "is quantized ({dtype}); only plain tensors are supported"), dtype=shown
        )
    if dtype.numpy is None:
        return message(QT_TRANSLATE_NOOP("FileErrors", "has dtype {dtype}, which is not supported"), dtype=shown)
    return None


def unpickle(
    data: bytes, start: int, budget: Budget, storages: dict[str, Storage], *, legacy: bool = False
) -> tuple[Any, int]:
    """The object pickled at ``data[start:]`` and where its pickle ends; the storages it
    references are added to ``storages``.

    Raises :class:`attnviz.io._unpickler.Truncated` when the data ends first, the budget's error
    for anything refused or damaged.
    """
    return _unpickler.load(
        data,
        start,
        find_global=_find_global(budget),
        persistent_load=_persistent_load(budget, storages, legacy=legacy),
        fail=budget.fail,
        max_ops=MAX_PICKLE_OPS,
    )
