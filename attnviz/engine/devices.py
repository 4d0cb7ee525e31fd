"""Choosing devices and dtypes by name, with errors that say what this machine has."""

from __future__ import annotations

import torch

from attnviz.text.tr import QT_TRANSLATE_NOOP, message, plural

from .errors import DeviceError, input_error

DTYPES: dict[str, torch.dtype] = {
    "float32": torch.float32,
    "float64": torch.float64,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
}


def dtype_name(dtype: torch.dtype) -> str:
    """The short name used in the UI and in sessions ("float32", ...)."""
    for name, candidate in DTYPES.items():
        if candidate == dtype:
            return name
    return str(dtype).removeprefix("torch.")


def resolve_dtype(dtype: str | torch.dtype | None, default: torch.dtype = torch.float32) -> torch.dtype:
    if dtype is None:
        return default
    if isinstance(dtype, torch.dtype):
        if dtype in DTYPES.values():
            return dtype
    elif isinstance(dtype, str) and dtype.removeprefix("torch.") in DTYPES:
        return DTYPES[dtype.removeprefix("torch.")]
    raise input_error(
        QT_TRANSLATE_NOOP("Errors", "dtype must be one of {choices}; got {value}"),
        "dtype",
        choices=", ".join(DTYPES),
        value=repr(dtype),
    )


def device_of(x: object) -> torch.device:
    """Where a computation on ``x`` runs by default: its device (the CPU for what is not a tensor)."""
    return x.device if isinstance(x, torch.Tensor) and x.device.type != "meta" else torch.device("cpu")


def default_dtype(x: object) -> torch.dtype:
    """What a computation on ``x`` runs in by default: its floating dtype, else float32."""
    if isinstance(x, torch.Tensor) and x.dtype in (torch.float64, torch.float16, torch.bfloat16):
        return x.dtype
    return torch.float32


def _mps_available() -> bool:
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def available_devices() -> list[str]:
    """Device names this machine can run on, best first, CPU always last."""
    names = [f"cuda:{i}" for i in range(torch.cuda.device_count())] if torch.cuda.is_available() else []
    if _mps_available():
        names.append("mps")
    names.append("cpu")
    return names


def resolve_device(device: str | torch.device | None) -> torch.device:
    """Turn "auto", "cpu", "cuda", "cuda:1", "mps" or a torch.device into a usable device.

    "auto" picks CUDA, else MPS, else CPU. An explicit device that is not there raises
    DeviceError naming it: falling back to the CPU silently would hide the problem.
    """
    if device is None or device == "auto":
        return torch.device(available_devices()[0])
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise DeviceError(
            message(
                QT_TRANSLATE_NOOP(
                    "Errors", "unknown device {value}: expected 'auto', 'cpu', 'cuda', 'cuda:N' or 'mps'"
                ),
                value=repr(device),
            )
        ) from exc
    if dev.type == "cpu":
        return dev
    if dev.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        index = 0 if dev.index is None else dev.index
        if index >= count:
            if count:
                have: str = plural(
                    count,
                    QT_TRANSLATE_NOOP("Errors", "{n} CUDA device"),
                    QT_TRANSLATE_NOOP("Errors", "{n} CUDA devices"),
                )
            else:
                have = QT_TRANSLATE_NOOP("Errors", "no CUDA device")
            raise DeviceError(
                message(
                    QT_TRANSLATE_NOOP("Errors", "device '{device}' is not available: this machine has {have}"),
                    device=str(dev),
                    have=have,
                )
            )
        return torch.device("cuda", index)
    if dev.type == "mps":
        if not _mps_available():
            raise DeviceError(
                QT_TRANSLATE_NOOP("Errors", "device 'mps' is not available: this machine has no Apple GPU (MPS)")
            )
        return dev
    raise DeviceError(
        message(
            QT_TRANSLATE_NOOP("Errors", "device '{device}' is not supported: use one of {choices}"),
            device=str(dev),
            choices=", ".join(available_devices()),
        )
    )


#: How each allocator words running out: CUDA and MPS ("out of memory"), PyTorch's CPU allocator
#: on Linux/macOS ("DefaultCPUAllocator: can't allocate memory: you tried to allocate ...") and on
#: Windows ("DefaultCPUAllocator: not enough memory: ...").
_OUT_OF_MEMORY_WORDS = ("out of memory", "can't allocate memory", "not enough memory")


def is_out_of_memory(exc: BaseException) -> bool:
    """True for the out-of-memory errors of every backend (CUDA raises its own class)."""
    oom_type = getattr(torch.cuda, "OutOfMemoryError", None)
    if isinstance(exc, MemoryError) or (oom_type is not None and isinstance(exc, oom_type)):
        return True
    text = str(exc).lower()
    return isinstance(exc, RuntimeError) and any(words in text for words in _OUT_OF_MEMORY_WORDS)
