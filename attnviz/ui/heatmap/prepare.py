"""What a heatmap draws from a matrix, prepared ahead of drawing: plain numpy, for any thread.

``prepare_map`` does to the arrays everything ``HeatmapWidget.set_data`` needs done (checks,
colour levels, special cells) and, for a big matrix, builds a *pyramid*: the values averaged
over 2x2, 4x4, 8x8... blocks, with the share of each block's cells that are masked, NaN or
infinite. Those are passes over every cell (a quarter of a second at 4096x4096); the app runs
them on the compute thread (``ResultsPanel.pictures``, a computation run with the main one), so
that the GUI thread only hands pictures to pyqtgraph.

``picture`` then draws a big matrix one screen at a time. For the cells in view and the pixels
they cover it takes the finest level whose blocks are no bigger than a pixel and averages the
blocks under each pixel, so every pixel shows the mean of the cells under it; once cells are as
big as pixels it shows the cells themselves (hatched once they are big enough). Its cost follows
the size of the screen, never the size of the matrix.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

from attnviz.ui.heatmap.paint import (
    TINT_BELOW_PX,
    TINT_CODES,
    WEIGHT_LEVELS,
    Levels,
    LocatorPoints,
    SpecialCells,
    allowed_cells,
    constant_value,
    display_values,
    empty_bar_width,
    empty_row_flags,
    locator_points,
    log_display,
    mean_tint,
    overlay_codes,
    overlay_image,
    overlay_scale,
    resolve_levels,
    special_cells,
)

__all__ = ["PYRAMID_MIN_CELLS", "Frame", "Picture", "PreparedMap", "Pyramid", "build_pyramid", "picture", "prepare_map"]

#: From this many cells on, a matrix is drawn from a pyramid, a screen at a time: below, drawing
#: it whole costs the GUI thread a millisecond or two (512 x 512).
PYRAMID_MIN_CELLS = 1 << 18
#: The pyramid stops at the first level no bigger than this a side (a thumbnail of a map).
_TOP_SIDE = 128


class Frame(NamedTuple):
    """What is on screen: cells ``[x0, x1) x [y0, y1)`` (within the matrix) over ``px_w x px_h``
    device pixels."""

    x0: float
    x1: float
    y0: float
    y1: float
    px_w: int
    px_h: int


def same_view(a: Frame, b: Frame) -> bool:
    """Whether a picture made for ``a`` may be drawn for ``b``: the same cells, and pixel sizes
    at most one apart (a frame predicted from the plot area, ``HeatmapWidget.frame_for``, may
    round the other way; the picture is stretched over its cells whatever its size)."""
    return (
        max(abs(a.x0 - b.x0), abs(a.x1 - b.x1), abs(a.y0 - b.y0), abs(a.y1 - b.y1)) < 1e-6
        and abs(a.px_w - b.px_w) <= 1
        and abs(a.px_h - b.px_h) <= 1
    )


class Picture(NamedTuple):
    """A frame's images: ``data`` (values or block means, for the colour table) and ``overlay``
    (RGBA of masked / NaN / inf cells, None when none is in view), both stretched over ``rect``
    (x, y, width, height in cells)."""

    data: np.ndarray
    overlay: np.ndarray | None
    tinted: bool  # masked cells are a flat tint (too small on screen for hatching)
    rect: tuple[float, float, float, float]


class Pyramid(NamedTuple):
    """A matrix averaged over ever bigger square blocks. Level ``i`` has blocks of
    ``factors[i]`` cells a side, ``ceil(rows / f) x ceil(cols / f)`` of them (a last, partial
    block averages the cells it has)."""

    factors: tuple[int, ...]  # 1, 2, 4, ...
    images: tuple[np.ndarray, ...]  # level 0: the shown values themselves; then block means (float32)
    #: ``paint.overlay_codes`` of every cell, None when no cell is masked, NaN or infinite.
    code: np.ndarray | None
    kinds: tuple[int, ...]  # the codes of TINT_CODES that some cell has
    #: Per level, per code of ``kinds``, the share of each block's cells with it (float32);
    #: level 0 has none (the codes themselves are the shares).
    shares: tuple[dict[int, np.ndarray], ...]


@dataclass(frozen=True, eq=False)
class PreparedMap:
    """A matrix made ready for ``HeatmapWidget.show_prepared``: the arrays checked, the colour
    levels resolved, and either its special cells (small: drawn whole) or a pyramid (big: drawn
    a screen at a time, see ``picture``)."""

    values: np.ndarray  # read-only, what hover reads
    allowed: np.ndarray | None  # True = may attend; None: nothing masked
    empty_rows: np.ndarray  # bool per row
    levels: Levels
    log: bool
    constant: float | None  # the value of a flat map (automatic levels only)
    show_masked_values: bool
    shown: np.ndarray  # what the colours show: the values, or their log10 on a log scale
    cells: SpecialCells | None  # small matrices
    pyramid: Pyramid | None  # big matrices
    locators: LocatorPoints | None  # big matrices with NaN / inf cells or empty rows
    #: A pyramid's picture of the frame the map was prepared for (the one on screen then).
    frame_picture: tuple[Frame, Picture] | None = None

    @property
    def shape(self) -> tuple[int, int]:
        rows, cols = self.values.shape
        return rows, cols


def prepare_map(
    values: np.ndarray,
    *,
    mask: np.ndarray | None = None,
    empty_rows: np.ndarray | None = None,
    levels: Levels | None = WEIGHT_LEVELS,
    log: bool = False,
    show_masked_values: bool = False,
    pyramid: bool | None = None,
    frame: Frame | None = None,
) -> PreparedMap:
    """Everything ``HeatmapWidget`` draws of ``values``; the arguments are ``set_data``'s (and the
    widget's ``show_masked_values``). ``pyramid``: build one (True), not (False), or from
    ``PYRAMID_MIN_CELLS`` cells on (None); with a pyramid, ``frame`` (the heatmap's
    ``last_frame``) has its picture made too, for a redraw of an unmoved view. Raises ValueError
    for inputs set_data refuses."""
    arr = display_values(values)
    rows, cols = arr.shape
    allowed = allowed_cells(mask, arr.shape)
    empty = empty_row_flags(empty_rows, allowed, rows)
    if log and (levels is None or not levels[0] > 0):
        raise ValueError(f"a logarithmic scale needs levels with a positive low end, got {levels!r}")
    resolved = resolve_levels(arr, allowed, levels)
    constant = None if levels is not None else constant_value(arr, allowed)
    shown = log_display(arr, resolved[0]) if log else arr
    cells = special_cells(arr, allowed)
    if pyramid is None:
        pyramid = arr.size >= PYRAMID_MIN_CELLS
    if not pyramid or arr.size == 0:
        return PreparedMap(arr, allowed, empty, resolved, log, constant, show_masked_values, shown, cells, None, None)
    code = overlay_codes(cells, arr, show_masked_values)
    locators = None
    if cells.has_nan or cells.has_inf or empty.any():
        locators = locator_points(cells.nan, cells.inf, empty, empty_bar_width(cols) / 2)
    prepared = PreparedMap(
        arr,
        allowed,
        empty,
        resolved,
        log,
        constant,
        show_masked_values,
        shown,
        None,
        build_pyramid(shown, code),
        locators,
    )
    if frame is not None and frame.x0 < frame.x1 <= cols and frame.y0 < frame.y1 <= rows:
        prepared = replace(prepared, frame_picture=(frame, picture(prepared, frame)))
    return prepared


def build_pyramid(shown: np.ndarray, code: np.ndarray | None) -> Pyramid:
    """Block means of ``shown`` and block shares of each overlay code, level by level."""
    rows, cols = shown.shape
    acc = np.float32 if shown.dtype.itemsize < 4 else shown.dtype
    # Per code, a count of cells per block, as uint8 0/1 to begin with (a bool array's bytes).
    counts = {} if code is None else {k: m.view(np.uint8) for k in TINT_CODES if (m := code == k).any()}
    kinds = tuple(counts)
    factors, images = [1], [shown]
    shares: list[dict[int, np.ndarray]] = [{}]
    sums: np.ndarray = shown
    f = 1
    while max(-(-rows // f), -(-cols // f)) > _TOP_SIDE:
        # The first level sums at most 4 zeros and ones per block: uint8 is enough and 4x less
        # memory traffic than floats; past it float32 counts stay exact (below 2**24 cells).
        count_type = np.uint8 if f == 1 else np.float32
        f *= 2
        with np.errstate(invalid="ignore", over="ignore"):  # inf - inf, huge sums: as a mean does
            sums = _pair_sums(sums, acc)
            cells = _block_cells(rows, f)[:, None] * _block_cells(cols, f)[None, :]
            images.append((sums / cells).astype(np.float32, copy=False))
        counts = {k: _pair_sums(c, count_type) for k, c in counts.items()}
        shares.append({k: c / cells for k, c in counts.items()})
        factors.append(f)
    return Pyramid(tuple(factors), tuple(images), code if kinds else None, kinds, tuple(shares))


def _pair_sums(a: np.ndarray, dtype: type | np.dtype) -> np.ndarray:
    """Sums over 2x2 blocks, in ``dtype``; a last odd row or column forms blocks of its own."""
    h, w = a.shape
    he, we = h - h % 2, w - w % 2
    # Strided additions, as paint.block_mean: numpy's reductions over small blocks are slow.
    rows = np.empty(((h + 1) // 2, w), dtype)
    np.add(a[0:he:2], a[1:he:2], out=rows[: he // 2], dtype=dtype)
    if h % 2:
        rows[-1] = a[-1]
    out = np.empty(((h + 1) // 2, (w + 1) // 2), dtype)
    np.add(rows[:, 0:we:2], rows[:, 1:we:2], out=out[:, : we // 2])
    if w % 2:
        out[:, -1] = rows[:, -1]
    return out


def _block_cells(n: int, f: int) -> np.ndarray:
    """How many of ``n`` cells each block of ``f`` holds (the last may hold fewer), float32."""
    return np.minimum(f, n - np.arange(-(-n // f)) * f).astype(np.float32)


# --------------------------------------------------------------------------- one screen


class _Axis(NamedTuple):
    """Along one axis: the level's pixels in view ``[start, stop)`` and, when there are more of
    them than screen pixels, ``edges``: screen pixel i averages level pixels
    ``[edges[i], edges[i + 1])`` (relative to ``start``)."""

    start: int
    stop: int
    edges: np.ndarray | None


def _axis(lo: float, hi: float, n_cells: int, factor: int, pixels: int) -> _Axis:
    n = -(-n_cells // factor)
    start = min(n - 1, max(0, math.floor(lo / factor)))
    stop = max(start + 1, min(n, math.ceil(hi / factor)))
    count = stop - start
    if count <= pixels:
        return _Axis(start, stop, None)
    return _Axis(start, stop, np.arange(pixels + 1) * count // pixels)


def _resample(a: np.ndarray, edges: np.ndarray | None, axis: int, last: float) -> np.ndarray:
    """Means of ``a``'s runs ``[edges[i], edges[i + 1])`` along ``axis`` (all of ``a`` when None).
    ``last``: the weight of ``a``'s last entry, a partial block of the matrix's edge holding that
    share of a block's cells (1 for a whole one), so that every mean is of the cells."""
    if edges is None:
        return a
    lengths = np.diff(edges)
    with np.errstate(invalid="ignore", over="ignore"):
        if lengths.max() <= 2:
            # The usual case (the level is chosen so): the mean of a run's first and last,
            # which are one and the same for a run of one. Two gathers, no reduction.
            out = np.take(a, edges[:-1], axis=axis)
            out += np.take(a, edges[1:] - 1, axis=axis)
            out *= 0.5
        else:
            shape = [1, 1]
            shape[axis] = len(lengths)
            out = np.add.reduceat(a, edges[:-1], axis=axis) / lengths.reshape(shape)
        if last < 1.0 and lengths[-1] > 1:
            # The last run holds the partial block: weigh its entries by their cells.
            run = np.take(a, np.arange(edges[-2], edges[-1]), axis=axis)
            weights = np.ones(lengths[-1], dtype=np.float32)
            weights[-1] = last
            mean = np.tensordot(run, weights, axes=([axis], [0])) / weights.sum()
            if axis == 0:
                out[-1] = mean
            else:
                out[:, -1] = mean
    return out


def picture(prepared: PreparedMap, frame: Frame) -> Picture:
    """The images of a prepared big matrix (``pyramid`` set) for one frame on screen."""
    pyramid = prepared.pyramid
    if pyramid is None:
        raise ValueError("picture() draws a prepared map with a pyramid")
    rows, cols = prepared.shape
    cells_per_px = min((frame.x1 - frame.x0) / frame.px_w, (frame.y1 - frame.y0) / frame.px_h)
    level = max(i for i, f in enumerate(pyramid.factors) if f <= max(1.0, cells_per_px))
    f = pyramid.factors[level]
    ys = _axis(frame.y0, frame.y1, rows, f, frame.px_h)
    xs = _axis(frame.x0, frame.x1, cols, f, frame.px_w)
    # A last block at the matrix's edge may hold fewer cells than the others.
    y_last = (rows - (ys.stop - 1) * f) / f if ys.stop * f >= rows else 1.0
    x_last = (cols - (xs.stop - 1) * f) / f if xs.stop * f >= cols else 1.0

    def cut(a: np.ndarray) -> np.ndarray:
        return a[ys.start : ys.stop, xs.start : xs.stop]

    def resample(a: np.ndarray) -> np.ndarray:
        return _resample(_resample(a, ys.edges, 0, y_last), xs.edges, 1, x_last)

    data = resample(cut(pyramid.images[level]))
    # A last partial block is drawn as wide as the others, squeezed under a pixel at the edge.
    x, y = xs.start * f, ys.start * f
    rect = (float(x), float(y), float(min(xs.stop * f, cols) - x), float(min(ys.stop * f, rows) - y))
    cell_px = 1.0 / cells_per_px
    tinted = cell_px < TINT_BELOW_PX
    overlay = None
    if pyramid.code is not None:
        if level == 0 and ys.edges is None and xs.edges is None:
            # Cells at least a pixel: each one drawn, hatched when big enough, as set_data does.
            code = cut(pyramid.code)
            if code.any():
                k = 1 if tinted else overlay_scale(*code.shape)
                overlay = overlay_image(code, k, tint=tinted, origin=(ys.start, xs.start))
        else:
            if level == 0:
                code = cut(pyramid.code)
                shares = {k: resample((code == k).astype(np.float32)) for k in pyramid.kinds}
            else:
                shares = {k: resample(cut(share)) for k, share in pyramid.shares[level].items()}
            shares = {k: s for k, s in shares.items() if s.any()}
            if shares:
                overlay = mean_tint(shares)
    return Picture(data, overlay, tinted, rect)
