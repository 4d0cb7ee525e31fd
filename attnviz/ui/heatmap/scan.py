"""Passes over every cell of big maps a block of rows at a time: plain numpy, any thread.

Spelled whole, ``w[np.isfinite(w) & (w > 0)]`` or ``np.array_equal(a, b, equal_nan=True)`` make
temporaries as big as the maps (masks, filtered copies): on the heads grid of 8 heads of
1400 x 1400, well over 100 MB for a moment on the GUI thread, which took the window past its
300 MB. Here the temporaries are one block (``BLOCK_ELEMENTS`` cells) whatever the map's size,
and the answers are the same as the whole-array spelling's.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import numpy as np

__all__ = ["BLOCK_ELEMENTS", "PositiveValues", "blocks", "equal", "positive_values"]

#: Cells per block: 4 MiB of float32, the size of one block's temporaries.
BLOCK_ELEMENTS = 1 << 20


def blocks(a: np.ndarray) -> Iterator[np.ndarray]:
    """Views of ``a`` that cover it in C order, each at most about ``BLOCK_ELEMENTS`` cells (a
    block of rows of one matrix; a 1-D or 0-D array in slices)."""
    if a.ndim < 2:
        flat = a.reshape(-1) if a.ndim == 0 else a
        for start in range(0, flat.shape[0], BLOCK_ELEMENTS):
            yield flat[start : start + BLOCK_ELEMENTS]
        return
    n_rows, n_cols = a.shape[-2:]
    step = max(1, BLOCK_ELEMENTS // max(1, n_cols))
    for index in np.ndindex(*a.shape[:-2]):
        matrix = a[index]
        for start in range(0, n_rows, step):
            yield matrix[start : start + step]


def equal(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether ``a`` and ``b`` have the same shape and values, NaN equal to NaN for floats (as
    ``np.array_equal(a, b, equal_nan=True)``), stopping at the first block that differs."""
    if a is b:
        return True
    if a.shape != b.shape:
        return False
    nan_equal = a.dtype.kind in "fc" and b.dtype.kind in "fc"
    return all(np.array_equal(x, y, equal_nan=nan_equal) for x, y in zip(blocks(a), blocks(b), strict=True))


class PositiveValues(NamedTuple):
    """The finite positive values of an array, as one pass finds them."""

    #: How many there are.
    total: int
    #: The least of them (inf when there are none).
    least: float
    #: Every ``step``-th of them in C order (``values[::step]`` of the filtered array), ``step``
    #: being ``max(1, total // sample)``: all of them when ``total`` is at most ``sample``.
    strided: np.ndarray


def positive_values(a: np.ndarray, sample: int) -> PositiveValues:
    """The finite positive values of ``a`` (``a[np.isfinite(a) & (a > 0)]``) without building
    that array: their count, least and a strided sample of at most about ``2 * sample``."""
    count, least = 0, np.inf
    for block in blocks(a):
        kept = block[np.isfinite(block) & (block > 0)]
        if kept.size:
            count += kept.size
            least = min(least, float(kept.min()))
    step = max(1, count // sample) if count else 1
    picked: list[np.ndarray] = []
    before = 0  # positive values in the blocks already read
    for block in blocks(a):
        kept = block[np.isfinite(block) & (block > 0)]
        # The global indices 0, step, 2 step... that fall in this block.
        picked.append(kept[(-before) % step :: step].copy())  # a view would hold the block's copy
        before += kept.size
    strided = np.concatenate(picked) if picked else np.empty(0, a.dtype)
    return PositiveValues(total=count, least=least, strided=strided)
