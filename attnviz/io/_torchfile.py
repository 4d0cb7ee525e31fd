"""Reading and writing PyTorch ``.pt``/``.pth`` files without ever running code from them.

Only ``torch.load(weights_only=True)`` is used: its unpickler accepts tensors and plain
containers and refuses every other global (``os.system``, ``builtins.open``...) before calling
it. Zip-format files are memory-mapped so tensor storage is not read until the element counts
have been checked; this matters because a tiny file can describe a huge tensor (a stride-0
expansion of one element). torch is imported lazily: ``attnviz.io`` must stay cheap to import.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np

from attnviz.io._limits import Budget, for_array, format_bytes
from attnviz.io._npy import open_zip
from attnviz.tr import QT_TRANSLATE_NOOP, message

if TYPE_CHECKING:
    import torch

# data.pkl holds only the object structure (storages live in separate members); a real one is
# kilobytes, and the unpickler builds it fully in memory.
MAX_PICKLE_BYTES = 64 * 1024 * 1024


def is_torch_zip(names: Iterable[str]) -> bool:
    """Whether zip member names look like ``torch.save``'s archive (``<root>/data.pkl``)."""
    return any(n == "data.pkl" or n.endswith("/data.pkl") for n in names)


def read_torch(path: Path, budget: Budget, *, zip_format: bool) -> tuple[dict[str, np.ndarray], list[str]]:
    """Return ``(arrays, skipped)``: tensors flattened to names, and entries that were not tensors."""
    try:
        import torch
    except ImportError as exc:
        raise budget.fail(QT_TRANSLATE_NOOP("FileErrors", "reading PyTorch files needs the 'torch' package, which is "
                                                          "not installed")) from exc

    if zip_format:
        _precheck_zip(path, budget)
    else:
        # Legacy files cannot be memory-mapped: torch reads every storage into memory.
        size = path.stat().st_size
        if size > budget.max_bytes:
            raise budget.fail(message(QT_TRANSLATE_NOOP(
                "FileErrors", "is a legacy (non-zip) PyTorch file of {size}, more than the {limit} allowed"),
                size=format_bytes(size), limit=format_bytes(budget.max_bytes)))
    try:
        with warnings.catch_warnings():
            # Protocol-version and storage-deprecation chatter is not actionable for the user.
            warnings.simplefilter("ignore")
            loaded = torch.load(path, map_location="cpu", weights_only=True, mmap=zip_format)
    except MemoryError as exc:
        raise budget.fail(QT_TRANSLATE_NOOP("FileErrors", "is too large to load")) from exc
    except Exception as exc:  # torch raises many types (UnpicklingError, RuntimeError, EOFError...)
        raise budget.fail(_describe_load_error(exc)) from exc

    skipped: list[str] = []
    tensors = _flatten(loaded, path.stem, budget, skipped)
    single = isinstance(loaded, torch.Tensor)
    arrays = {name: _to_numpy(t, None if single else name, budget) for name, t in tensors.items()}
    return arrays, skipped


def _precheck_zip(path: Path, budget: Budget) -> None:
    with open_zip(path, budget) as archive:
        infos = archive.infolist()
    file_size = path.stat().st_size
    for info in infos:
        # A member extending past the end would be read through the memory map: SIGBUS, not an error.
        if info.header_offset + info.compress_size > file_size:
            raise budget.fail(message(QT_TRANSLATE_NOOP(
                "FileErrors", "is truncated: member '{name}' extends beyond the end of the file"), name=info.filename))
        if info.filename.endswith("data.pkl") and info.file_size > MAX_PICKLE_BYTES:
            raise budget.fail(message(QT_TRANSLATE_NOOP(
                "FileErrors", "has a {size} object description (data.pkl), more than the {limit} allowed"),
                size=format_bytes(info.file_size), limit=format_bytes(MAX_PICKLE_BYTES)))


_GLOBAL_RE = re.compile(r"GLOBAL (\w[\w.]*\w)")


def _describe_load_error(exc: BaseException) -> str:
    text = str(exc)
    match = _GLOBAL_RE.search(text)
    if match:
        return message(QT_TRANSLATE_NOOP(
            "FileErrors", "refused: its pickle would call {name}, which could run code (only tensors and plain "
                          "containers are loaded)"), name=match.group(1))
    if isinstance(exc, EOFError) or "EOF" in text or "truncated" in text.lower():
        return QT_TRANSLATE_NOOP("FileErrors", "is truncated or damaged")
    if "Unsupported operand" in text or "WeightsUnpickler" in text:
        detail = text.split("WeightsUnpickler error:")[-1].strip().splitlines()
        # torch's own words stay as they are; only the fallback is ours to translate.
        reason = detail[0][:160] if detail else QT_TRANSLATE_NOOP("FileErrors", "unsupported content")
        return message(QT_TRANSLATE_NOOP("FileErrors", "is not a PyTorch file that can be loaded safely ({error})"),
                       error=reason)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return message(QT_TRANSLATE_NOOP("FileErrors", "cannot be loaded as PyTorch tensors ({error})"),
                   error=(lines[0] if lines else type(exc).__name__)[:160])


def _items(container: Mapping[Any, Any] | list[Any] | tuple[Any, ...]) -> Iterable[tuple[str, Any]]:
    if isinstance(container, Mapping):
        return ((str(k), v) for k, v in container.items())
    return ((str(i), v) for i, v in enumerate(container))


def _flatten(loaded: Any, stem: str, budget: Budget, skipped: list[str]) -> dict[str, torch.Tensor]:
    """Tensor, or a container of tensors nested at most one level, to ``{"outer.inner": t}``."""
    import torch

    if isinstance(loaded, torch.Tensor):
        return {stem: loaded}
    if not isinstance(loaded, (Mapping, list, tuple)):
        raise budget.fail(message(QT_TRANSLATE_NOOP("FileErrors", "holds a Python {type}, not tensors"),
                                  type=type(loaded).__name__))
    found: list[tuple[str, torch.Tensor]] = []
    for key, value in _items(loaded):
        if isinstance(value, torch.Tensor):
            found.append((key, value))
        elif isinstance(value, (Mapping, list, tuple)):
            for inner_key, inner in _items(value):
                name = f"{key}.{inner_key}"
                if isinstance(inner, torch.Tensor):
                    found.append((name, inner))
                else:
                    # Deeper levels are optimizer state and the like, not attention inputs.
                    skipped.append(_skipped(name, inner))
        else:
            skipped.append(_skipped(key, value))
    tensors: dict[str, torch.Tensor] = {}
    for name, tensor in found:
        if name in tensors:
            raise budget.fail(message(QT_TRANSLATE_NOOP("FileErrors", "has two tensors that would both be named "
                                                                      "'{name}'"), name=name))
        tensors[name] = tensor
    if not tensors:
        raise budget.fail(QT_TRANSLATE_NOOP("FileErrors", "holds no tensors"))
    return tensors


def _skipped(name: str, value: Any) -> str:
    """An entry of ``TensorFile.skipped``: the name, and why in parentheses."""
    if isinstance(value, (Mapping, list, tuple)):
        why = QT_TRANSLATE_NOOP("FileErrors", "nested too deeply")
    else:
        why = message(QT_TRANSLATE_NOOP("FileErrors", "{type}, not a tensor"), type=type(value).__name__)
    return message(QT_TRANSLATE_NOOP("FileErrors", "{name} ({why})"), name=name, why=why)


def _to_numpy(tensor: torch.Tensor, name: str | None, budget: Budget) -> np.ndarray:
    import torch

    if tensor.layout != torch.strided:
        raise budget.fail(for_array(name, message(QT_TRANSLATE_NOOP(
            "FileErrors", "is a {layout} tensor; only dense tensors are supported"), layout=str(tensor.layout))))
    if tensor.device.type != "cpu":
        raise budget.fail(for_array(name, message(QT_TRANSLATE_NOOP(
            "FileErrors", "is on device '{device}' and holds no loadable data"), device=str(tensor.device))))
    if tensor.is_quantized:
        raise budget.fail(for_array(name, message(QT_TRANSLATE_NOOP(
            "FileErrors", "is quantized ({dtype}); only plain tensors are supported"), dtype=str(tensor.dtype))))
    if tensor.is_complex():
        raise budget.fail(for_array(name, message(QT_TRANSLATE_NOOP(
            "FileErrors", "holds complex numbers ({dtype}); attention tensors must be real"), dtype=str(tensor.dtype))))
    allowed = {
        torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
        torch.uint16, torch.uint32, torch.uint64,
        torch.float16, torch.bfloat16, torch.float32, torch.float64,
    }  # fmt: skip
    if tensor.dtype not in allowed:
        raise budget.fail(for_array(name, message(QT_TRANSLATE_NOOP(
            "FileErrors", "has dtype {dtype}, which is not supported"), dtype=str(tensor.dtype))))
    widen = tensor.dtype == torch.bfloat16
    # The count comes from the tensor's shape, not its storage: a stride-0 view of one element
    # can claim a billion. Checked before anything is copied out of the memory map.
    budget.claim(name, tuple(tensor.shape), 4 if widen else tensor.element_size())
    tensor = tensor.detach()
    if widen:
        tensor = tensor.to(torch.float32)  # numpy has no bfloat16; float32 holds it exactly
    # A copy: the result must not keep the file mapped or alias torch's storage.
    return np.array(tensor.numpy(), copy=True, order="C")


def write_torch(stream: BinaryIO, arrays: Mapping[str, np.ndarray]) -> None:
    """``torch.save`` a ``{name: tensor}`` dict (loadable with ``weights_only=True``)."""
    import torch

    tensors = {}
    for name, array in arrays.items():
        native = np.array(array, dtype=array.dtype.newbyteorder("="), order="C", copy=True)
        tensors[name] = torch.from_numpy(native)
    torch.save(tensors, stream)
