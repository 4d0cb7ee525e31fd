"""Large CPU buffers backed by transparent huge pages where the system allows it.

A fresh 64 MiB tensor costs 16,384 page faults the first time it is written: on these machines
that is 20-50 ms, as much as the softmax that fills it. Asking the kernel for 2 MiB pages
(``madvise(MADV_HUGEPAGE)``, honoured when THP is "madvise" or "always") turns that into 32
faults. PyTorch does the same for every allocation when ``THP_MEM_ALLOC_ENABLE=1`` is set before
it loads; doing it here, for the stage buffers only, needs no environment variable and leaves
the rest of the caller's process alone. Anywhere this is not possible, the buffers are plain.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from collections.abc import Callable

import torch

_HUGE_PAGE = 1 << 21
_MADV_HUGEPAGE = 14
#: Below this a buffer spans too few huge pages to matter.
MIN_BYTES = 4 << 20


def _load_madvise() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        madvise = libc.madvise
    except (OSError, AttributeError):
        return None
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    madvise.restype = ctypes.c_int
    return madvise


_madvise = _load_madvise()

# Whether empty_large asks for huge pages (see use_huge_pages).
_use_huge_pages = True


def use_huge_pages(on: bool) -> None:
    """Ask (or stop asking) for huge pages for the stage buffers, process-wide.

    It pays off in a process that mostly computes attention (a script, a notebook, the engine
    benchmark: (1, 4096, 4096) on one thread 180 ms instead of 296 ms once warm). In a
    long-running process that allocates a lot between computations, such as the desktop app,
    the kernel often has no free 2 MiB page left and compacts memory at fault time ("defrag:
    madvise"): measured in the app, the same computation took 425-506 ms with huge pages and
    285-303 ms without, and the compaction stalled the GUI thread for up to 20 ms.
    """
    global _use_huge_pages
    _use_huge_pages = bool(on)


def empty_large(shape: tuple[int, ...], dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """``torch.empty``, asking for huge pages when the tensor is big, on the CPU, on Linux.

    Must be called before anything is written to the tensor: the advice applies to pages not
    yet touched.
    """
    t = torch.empty(shape, dtype=dtype, device=device)
    nbytes = t.numel() * t.element_size()
    if _madvise is None or not _use_huge_pages or device.type != "cpu" or nbytes < MIN_BYTES:
        return t
    start = t.data_ptr()
    lo = (start + _HUGE_PAGE - 1) & ~(_HUGE_PAGE - 1)
    hi = (start + nbytes) & ~(_HUGE_PAGE - 1)
    if hi > lo:
        _madvise(lo, hi - lo, _MADV_HUGEPAGE)  # advice only: a refusal leaves normal pages
    return t
