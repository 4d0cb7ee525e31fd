"""The heatmap's paint maths in plain numpy: what colour, stripe or text each cell gets.

Nothing here imports Qt or pyqtgraph, and nothing keeps state: every function takes arrays and
returns arrays, so the work can be tested without a QApplication and could run on a compute
thread. ``widget.py`` hands the results to pyqtgraph items; the masking lab reuses the stripes.

Cells that are not values on the colour scale get reserved colours, and when several apply the
priority is NaN > masked > inf: a NaN is always a bug worth seeing (even in a masked cell, it
propagates), while -inf in a masked cell is the normal way to mask, so it shows as masked.

Everything here runs on every keystroke and on matrices up to 4096x4096: each function makes as
few passes over the cells as it can, and says so where a simpler spelling would cost more.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

__all__ = [
    "DARK_TEXT",
    "EMPTY_ROW_COLOR",
    "INF_COLOR",
    "LIGHT_TEXT",
    "LOCATOR_MAX_POINTS",
    "MASK_COLOR",
    "MASK_HATCH_COLOR",
    "NAN_COLOR",
    "WEIGHT_LEVELS",
    "Levels",
    "LocatorPoints",
    "SpecialCells",
    "TINT_BELOW_PX",
    "TINT_CODES",
    "allowed_cells",
    "annotation_format",
    "block_mean",
    "cell_colors",
    "diagonal_stripes",
    "display_values",
    "empty_bar_width",
    "empty_row_bar",
    "empty_row_flags",
    "format_number",
    "locator_points",
    "mean_tint",
    "opaque_masked",
    "overlay_codes",
    "overlay_image",
    "overlay_scale",
    "prefers_dark_text",
    "relative_luminance",
    "resolve_levels",
    "special_cells",
    "spread_subset",
    "upsample",
]

Levels = tuple[float, float]
RGBA = tuple[int, int, int, int]

# Reserved colours (RGBA, uint8).  Chosen far away from every colour in every map in
# colormaps.COLORMAPS (tests/ui/test_heatmap.py checks the distance), so they stay distinct
# whatever map is chosen.
NAN_COLOR: RGBA = (255, 0, 255, 255)  # magenta: no perceptual map uses it
INF_COLOR: RGBA = (0, 229, 255, 255)  # electric cyan, for +inf and -inf
# Masked cells: neutral light grey with darker diagonal hatching.  The hatching (not the grey)
# is what makes them unmistakable, including under the "gray" map.
MASK_COLOR: RGBA = (200, 200, 200, 255)
MASK_HATCH_COLOR: RGBA = (95, 95, 95, 255)
EMPTY_ROW_COLOR: RGBA = (235, 25, 25, 255)  # red marker: row has no key
# Masked cells that still have a value keep their colour under these light stripes.
_VALUED_STRIPE_COLOR: RGBA = (255, 255, 255, 170)
_CLEAR: RGBA = (0, 0, 0, 0)

# Text colours for annotations: near-black / near-white read better than pure black/white.
DARK_TEXT: tuple[int, int, int] = (20, 20, 20)
LIGHT_TEXT: tuple[int, int, int] = (245, 245, 245)

# Weights live in [0, 1]; this is also how "weights" are recognised for annotation formatting.
WEIGHT_LEVELS: Levels = (0.0, 1.0)

# Upper bound for an overlay's side in pixels.  Small matrices get several overlay pixels per
# cell (so a hatch is a pattern *inside* each cell); big ones get one pixel per cell.
OVERLAY_TARGET_PX = 1024  # the heatmap's default (HeatmapWidget.overlay_pixels)
_OVERLAY_MAX_SUPERSAMPLE = 48

# Past this many points, locator markers are an evenly spread subset: markers are several
# pixels wide while cells are a fraction of one, so a subset still draws solid lines and areas.
LOCATOR_MAX_POINTS = 20_000

# Overlay codes, one uint8 per overlay pixel, looked up in _OVERLAY_PALETTE at the end.
_CODE_MASKED = 1
_CODE_INF = 2
_CODE_NAN = 3
_CODE_MASKED_VALUED = 5  # masked but with a value: transparent, the value's colour shows
_CODE_NAN_MASKED = 7  # a masked cell that turned NaN: magenta, hatched as masked
# Stripes add to the code of the cell under them: masked 1 -> 4 (dark hatch), valued 5 -> 6,
# NaN and masked 7 -> 8 (dark hatch on magenta).
_OVERLAY_PALETTE = np.array(
    [
        _CLEAR,
        MASK_COLOR,
        INF_COLOR,
        NAN_COLOR,
        MASK_HATCH_COLOR,
        _CLEAR,
        _VALUED_STRIPE_COLOR,
        NAN_COLOR,
        MASK_HATCH_COLOR,
    ],
    dtype=np.uint8,
)
_OVERLAY_PALETTE.setflags(write=False)
#: The same codes without stripes (cells too small for them): flat grey, or a light veil.
_TINT_PALETTE = _OVERLAY_PALETTE.copy()
_TINT_PALETTE[_CODE_MASKED] = (*MASK_COLOR[:3], 215)
_TINT_PALETTE[_CODE_MASKED_VALUED] = (255, 255, 255, 110)
_TINT_PALETTE.setflags(write=False)


# --------------------------------------------------------------------------- numbers as text


def format_number(x: float, spec: str = ".4g") -> str:
    """A number as text: NaN and the infinities spelt out, anything else with ``spec``."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return format(x, spec)


def constant_value(values: np.ndarray, allowed: np.ndarray | None) -> float | None:
    """The one value every finite allowed cell holds (a flat stage), or None when they differ."""
    if values.size == 0:
        return None
    finite = np.isfinite(values)
    sel = finite if allowed is None else finite & allowed
    if not sel.any():
        return None
    lo = float(np.min(values, where=sel, initial=np.inf))
    hi = float(np.max(values, where=sel, initial=-np.inf))
    return lo if lo == hi else None


def colorbar_ticks(levels: Levels, *, log: bool = False, constant: float | None = None) -> list[tuple[float, str]]:
    """Labelled ticks of a colour bar spanning ``levels`` (in log10 units when ``log``): its two
    ends and round values between, so no bar is ever left without numbers (pyqtgraph's own
    ticks vanish for ranges like -1e6 .. 2). A constant map gets one tick at its value."""
    lo, hi = levels
    if constant is not None:
        return [((lo + hi) / 2, format_number(constant, ".3g"))]
    if log:
        ticks = [(lo, format_number(10.0**lo, ".2g")), (hi, format_number(10.0**hi, ".2g"))]
        inner = [
            float(e)
            for e in range(math.ceil(lo), math.floor(hi) + 1)
            if lo + 0.15 * (hi - lo) < e < hi - 0.15 * (hi - lo)
        ]
        return (
            ticks[:1]
            + [(e, format_number(10.0**e, ".0e") if abs(e) > 2 else format_number(10.0**e, "g")) for e in inner]
            + ticks[1:]
        )
    span = hi - lo
    step = 10.0 ** math.floor(math.log10(span / 4)) if span > 0 else 1.0
    for factor in (1.0, 2.0, 2.5, 5.0, 10.0):
        if span / (step * factor) <= 5:
            step *= factor
            break
    first = math.ceil(lo / step) * step
    inner = []
    value = first
    while value < hi - 0.12 * span:
        if value > lo + 0.12 * span:
            inner.append(value)
        value += step
    spec = ".3g"
    return (
        [(lo, format_number(lo, spec))]
        + [(v, format_number(v + 0.0, spec)) for v in inner]
        + [(hi, format_number(hi, spec))]
    )


def log_display(values: np.ndarray, floor: float) -> np.ndarray:
    """log10 of ``values`` for a logarithmic colour scale; values at or below ``floor`` (zero
    weights) sit at log10(floor), the bottom of the scale. NaN and inf stay as they are."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log10(np.maximum(values, floor, where=np.isfinite(values), out=np.array(values, dtype=np.float64)))
    out = out.astype(np.float32)
    out.setflags(write=False)
    return out


def annotation_format(levels: Levels, value_format: str | None) -> str:
    """Format spec for the values printed in the cells: ``value_format`` if given, else two
    decimals for weights (levels (0, 1)) and three significant digits for scores."""
    if value_format is not None:
        return value_format
    return ".2f" if levels == WEIGHT_LEVELS else ".3g"


# --------------------------------------------------------------------------- inputs


def display_values(values: np.ndarray) -> np.ndarray:
    """The read-only float matrix to show.

    Copied, so later in-place edits by the caller cannot make the picture and the hover text
    disagree; a read-only array (a computed result) is kept as it is (no 64 MiB copy).  Integers
    and bools become float64, float16 becomes float32 (pyqtgraph renders neither directly).
    """
    if isinstance(values, np.ndarray) and not values.flags.writeable:
        arr = values
    else:
        arr = np.array(values, copy=True)
    if arr.ndim != 2:
        raise ValueError(f"values must be 2-D, got shape {arr.shape}")
    if arr.dtype.kind != "f" or arr.dtype == np.float16:
        arr = arr.astype(np.float64 if arr.dtype.kind != "f" else np.float32)
    arr.setflags(write=False)
    return arr


def allowed_cells(mask: np.ndarray | None, shape: tuple[int, ...]) -> np.ndarray | None:
    """``mask`` as a bool array of ``shape`` (True = may attend), or None when nothing is masked
    (which lets every later step skip its mask work)."""
    if mask is None:
        return None
    allowed = np.asarray(mask)
    if allowed.dtype != np.bool_:
        allowed = allowed.astype(bool)
    try:
        allowed = np.broadcast_to(allowed, shape)
    except ValueError:
        raise ValueError(f"mask shape {allowed.shape} does not match values {shape}") from None
    return None if allowed.all() else allowed


def empty_row_flags(empty_rows: np.ndarray | None, allowed: np.ndarray | None, rows: int) -> np.ndarray:
    """Bool per row, True = the row has no valid key: ``empty_rows`` if given, else the rows of
    ``allowed`` with no True."""
    if empty_rows is not None:
        flags = np.asarray(empty_rows, dtype=bool).reshape(-1)
        if flags.shape != (rows,):
            raise ValueError(f"empty_rows must have {rows} entries, got {flags.shape}")
        return flags
    if allowed is not None:
        return np.asarray(~allowed.any(axis=1))
    return np.zeros(rows, dtype=bool)


def resolve_levels(values: np.ndarray, allowed: np.ndarray | None, levels: Levels | None) -> Levels:
    """The colour scale's (low, high): ``levels`` checked, or for None the finite min/max of the
    allowed cells (of all cells if none is allowed and finite)."""
    if levels is not None:
        lo, hi = (float(levels[0]), float(levels[1]))
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise ValueError(f"levels must be finite with low < high, got {levels!r}")
        return (lo, hi)
    if values.size == 0:
        return WEIGHT_LEVELS
    finite = np.isfinite(values)
    # Masked scores are often filled with -1e9 or -inf; letting them set the range would
    # squash every real score into one colour, so prefer the allowed cells.
    sel = finite if allowed is None else finite & allowed
    if not sel.any():
        sel = finite
    if not sel.any():
        return WEIGHT_LEVELS  # all NaN/inf: any range will do, every cell is special
    # where= avoids copying a 4096x4096 selection.
    lo = float(np.min(values, where=sel, initial=np.inf))
    hi = float(np.max(values, where=sel, initial=-np.inf))
    if lo == hi:  # constant matrix: centre it on the scale instead of dividing by zero
        pad = 0.5 if lo == 0 else abs(lo) * 0.5
        lo, hi = lo - pad, hi + pad
    return (lo, hi)


# --------------------------------------------------------------------------- special cells


class SpecialCells(NamedTuple):
    """The cells drawn in a reserved colour: three mutually exclusive bool masks (NaN > masked >
    inf), and whether any NaN or inf exists at all (so callers can skip passes over nothing)."""

    nan: np.ndarray
    inf: np.ndarray  # infinite and not masked
    masked: np.ndarray  # masked and not NaN
    has_nan: bool
    has_inf: bool
    #: The NaN cells that are masked too (None: none): magenta, and still hatched as masked.
    nan_masked: np.ndarray | None = None


def special_cells(values: np.ndarray, allowed: np.ndarray | None) -> SpecialCells:
    """Which cells are NaN, inf or masked, with the priorities of the module docstring."""
    # Each operation is a pass over up to 16M cells on the GUI thread: skip the ones that
    # cannot change anything (usually no NaN and no inf at all).
    if np.isfinite(values).all():  # the usual case: one pass instead of two
        # calloc'd zeros: no pass over memory until something reads them
        nan, inf = np.zeros(values.shape, dtype=bool), np.zeros(values.shape, dtype=bool)
        has_nan = has_inf = False
    else:
        nan = np.isnan(values)
        has_nan = bool(nan.any())
        inf = np.isinf(values)
        has_inf = bool(inf.any())
    if allowed is None:
        masked = np.zeros(values.shape, dtype=bool)
    elif has_nan:
        masked = ~allowed & ~nan
    else:
        masked = ~allowed
    if has_inf:
        inf &= ~masked
    nan_masked = None
    if has_nan and allowed is not None:
        nan_masked = nan & ~allowed
        nan_masked = nan_masked if nan_masked.any() else None
    return SpecialCells(nan, inf, masked, has_nan, has_inf, nan_masked)


def opaque_masked(values: np.ndarray, masked: np.ndarray, show_masked_values: bool) -> np.ndarray:
    """Masked cells drawn in solid grey: all of them, or with ``show_masked_values`` only those
    whose value is zero (the others keep their colour under light stripes)."""
    if not show_masked_values:
        return masked
    return masked & (values == 0)


# --------------------------------------------------------------------------- overlay


def overlay_scale(rows: int, cols: int, target: int = OVERLAY_TARGET_PX) -> int:
    """Overlay pixels per cell per side for a rows x cols matrix: about ``target`` pixels a side
    (1 per cell past that many cells)."""
    return max(1, min(_OVERLAY_MAX_SUPERSAMPLE, target // max(rows, cols, 1)))


def upsample(cells: np.ndarray, k: int) -> np.ndarray:
    """A (rows, cols) array repeated into k x k pixels per cell: (rows * k, cols * k)."""
    return np.repeat(np.repeat(cells, k, axis=0), k, axis=1)


def diagonal_stripes(
    h: int, w: int, period: int, width: int, *, rising: bool = True, origin: tuple[int, int] = (0, 0)
) -> np.ndarray:
    """Bool (h, w) image of diagonal stripes ``width`` pixels wide, one every ``period`` pixels.

    In pixel coordinates (y down), rising stripes run from bottom left to top right ("/", where
    ``(y + x) % period < width``), falling ones from top left to bottom right ("\\").  Drawn in
    overlay pixels, they continue across neighbouring cells.  ``origin`` (y, x) is where the
    image's first pixel sits in a larger pattern: a piece of a big overlay drawn alone keeps the
    stripes where the whole overlay has them.
    """
    y0, x0 = origin
    # Row y of the pattern is row y % period of a small table: no h * w index arithmetic.
    step = np.arange(x0, x0 + w)[None, :] if rising else -np.arange(x0, x0 + w)[None, :]
    table = (np.arange(period)[:, None] + step) % period < width
    return table[np.arange(y0, y0 + h) % period]


def overlay_codes(cells: SpecialCells, values: np.ndarray, show_masked_values: bool) -> np.ndarray | None:
    """One uint8 code per cell for ``overlay_image`` (masked, inf, NaN, masked but valued), or
    None when no cell is special and there is nothing to overlay."""
    if not (cells.has_nan or cells.has_inf or cells.masked.any()):
        return None
    # The three masks never overlap, so plain assignments build the code; the ones with nothing
    # to mark are skipped (each is a pass over every cell).
    code = cells.masked.astype(np.uint8)
    if cells.has_inf:
        code[cells.inf] = _CODE_INF
    if cells.has_nan:
        code[cells.nan] = _CODE_NAN
        if cells.nan_masked is not None:
            code[cells.nan_masked] = _CODE_NAN_MASKED
    if show_masked_values:
        code[cells.masked & (values != 0)] = _CODE_MASKED_VALUED
    return code


#: Below this many screen pixels per cell, stripes become grey noise: masked cells are tinted.
TINT_BELOW_PX = 6.0


def overlay_image(code: np.ndarray, k: int, *, tint: bool = False, origin: tuple[int, int] = (0, 0)) -> np.ndarray:
    """RGBA uint8 image, k x k pixels per cell, of the cells ``overlay_codes`` gave.

    Masked cells are grey with dark hatching, masked-but-valued cells transparent with light
    stripes, NaN magenta and inf cyan; every other pixel is transparent. With ``tint`` (cells a
    few pixels on screen, where stripes would read as noise) masked cells are a flat grey and
    masked-but-valued ones a light veil over their colour. ``origin`` (row, column) is the cell
    ``code[0, 0]`` is in a bigger matrix, so the stripes of a piece line up with the whole's.
    """
    if tint:
        return _TINT_PALETTE.view(np.uint32).ravel()[code].view(np.uint8).reshape(*code.shape, 4)
    # A per-pixel code looked up in a palette at the end: boolean-indexed writes into a
    # 4096x4096x4 array take half a second, this ~0.1 s.  The stripes are added in place, so
    # work on a new array, never on ``code`` itself.
    px = upsample(code, k) if k > 1 else code.copy()
    h, w = px.shape
    # Two stripes per cell from k >= 8; at k == 1 a pixel texture that averages to a mid grey
    # when zoomed out.
    period = max(4, k // 2)
    stripes = diagonal_stripes(h, w, period, max(1, period // 4), origin=(origin[0] * k, origin[1] * k))
    px += 3 * ((px == _CODE_MASKED) & stripes).view(np.uint8)
    px += ((px == _CODE_MASKED_VALUED) & stripes).view(np.uint8)
    px += ((px == _CODE_NAN_MASKED) & stripes).view(np.uint8)
    # Gather whole RGBA pixels as uint32 (one 4-byte copy per pixel), then view as bytes.
    return _OVERLAY_PALETTE.view(np.uint32).ravel()[px].view(np.uint8).reshape(h, w, 4)


#: The overlay codes a flat tint has a colour for (the others are transparent).
TINT_CODES = (_CODE_MASKED, _CODE_INF, _CODE_NAN, _CODE_MASKED_VALUED, _CODE_NAN_MASKED)


def mean_tint(shares: dict[int, np.ndarray]) -> np.ndarray:
    """RGBA uint8 image of the flat tint (``overlay_image(..., tint=True)``) averaged over blocks
    of cells, from the share of each block's cells that have each code of ``TINT_CODES`` (equal
    shapes, at least one; codes left out have none): what a screen pixel over a whole block shows.

    Colours are averaged weighted by their opacity (premultiplied), as drawing the cells one by
    one and shrinking the picture would: a block half masked is the masked grey, half as opaque.
    """
    items = list(shares.items())
    shape = items[0][1].shape
    palette = _TINT_PALETTE.astype(np.float32)
    # + 0.5 then truncation: rounding of values known to be >= 0, a pass cheaper than np.rint.
    if len(items) == 1:  # the usual case (masked cells only): their colour, as opaque as they are many
        code, share = items[0]
        # Whole RGBA pixels as little-endian uint32 (R in the low byte): two passes, not four.
        alpha = (share * palette[code, 3] + 0.5).astype("<u4")
        alpha <<= 24
        alpha |= int.from_bytes(bytes(_TINT_PALETTE[code, :3]), "little")
        return alpha.view(np.uint8).reshape(*shape, 4)
    alpha = np.zeros(shape, dtype=np.float32)
    colour = np.zeros((3, *shape), dtype=np.float32)  # channel first: whole-plane operations
    for code, share in items:
        weight = share * palette[code, 3]
        alpha += weight
        for c in range(3):
            colour[c] += weight * palette[code, c]
    with np.errstate(invalid="ignore", divide="ignore"):
        colour /= alpha  # 0 / 0 where no cell is special: NaN, made transparent black below
    out = np.empty((*shape, 4), dtype=np.uint8)
    for c in range(3):
        out[..., c] = np.nan_to_num(colour[c], nan=0.0) + 0.5
    out[..., 3] = alpha + 0.5
    return out


# --------------------------------------------------------------------------- empty rows and locators


def empty_bar_width(cols: int) -> float:
    """Width in cells of the empty-row bar: a fixed fraction of the width, never thinner than a
    fifth of a cell."""
    return min(float(cols), max(0.2, 0.012 * cols))


def empty_row_bar(empty_rows: np.ndarray) -> np.ndarray:
    """RGBA uint8 image (rows, 1, 4): the empty-row colour on empty rows, transparent elsewhere."""
    bar = np.zeros((len(empty_rows), 1, 4), dtype=np.uint8)
    bar[empty_rows] = EMPTY_ROW_COLOR
    return bar


def spread_subset(*arrays: np.ndarray, limit: int = LOCATOR_MAX_POINTS) -> tuple[np.ndarray, ...]:
    """At most ``limit`` evenly spaced entries of equally long index arrays."""
    n = len(arrays[0])
    if n <= limit:
        return arrays
    keep = np.linspace(0, n - 1, limit).astype(np.intp)
    return tuple(a[keep] for a in arrays)


class LocatorPoints(NamedTuple):
    """Marker centres in cell coordinates, NaN cells first, then inf cells, then empty rows."""

    x: np.ndarray
    y: np.ndarray
    n_nan: int
    n_inf: int
    n_empty: int


def locator_points(nan: np.ndarray, inf: np.ndarray, empty_rows: np.ndarray, bar_x: float) -> LocatorPoints:
    """Centres of the NaN and inf cells and of the empty rows' bar (at ``bar_x``), each kind
    thinned to ``LOCATOR_MAX_POINTS`` by ``spread_subset``."""
    rr_nan, cc_nan = spread_subset(*np.nonzero(nan))
    rr_inf, cc_inf = spread_subset(*np.nonzero(inf))
    (empty,) = spread_subset(np.flatnonzero(empty_rows))
    x = np.concatenate([cc_nan + 0.5, cc_inf + 0.5, np.full(len(empty), bar_x)])
    y = np.concatenate([rr_nan + 0.5, rr_inf + 0.5, empty + 0.5])
    return LocatorPoints(x, y, len(rr_nan), len(rr_inf), len(empty))


# --------------------------------------------------------------------------- colours and text contrast


def cell_colors(
    values: np.ndarray, levels: Levels, lut: np.ndarray, cells: SpecialCells, opaque: np.ndarray
) -> np.ndarray:
    """Displayed colour of every cell, (rows, cols, 3) uint8: ``values`` through the (256, 3)
    ``lut`` scaled to ``levels``, then the reserved colours (``opaque`` = solid grey masked cells)."""
    lo, hi = levels
    with np.errstate(invalid="ignore"):
        scaled = (values - lo) * (256.0 / (hi - lo))
    idx = np.clip(np.nan_to_num(scaled, nan=0.0, posinf=255.0, neginf=0.0), 0, 255).astype(np.intp)
    rgb = lut[idx].copy()
    rgb[cells.nan] = NAN_COLOR[:3]
    rgb[cells.inf] = INF_COLOR[:3]
    rgb[opaque] = MASK_COLOR[:3]
    return rgb


def relative_luminance(rgb: np.ndarray) -> np.ndarray:
    """WCAG relative luminance of uint8 sRGB colours, shape (..., 3) -> (...)."""
    c = rgb[..., :3].astype(np.float64) / 255.0
    lin = np.where(c <= 0.03928, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return lin @ np.array([0.2126, 0.7152, 0.0722])


def prefers_dark_text(rgb: np.ndarray) -> np.ndarray:
    """True where DARK_TEXT has more contrast than LIGHT_TEXT on the given background colours."""
    lum = relative_luminance(rgb)
    dark = relative_luminance(np.array(DARK_TEXT, dtype=np.uint8))
    light = relative_luminance(np.array(LIGHT_TEXT, dtype=np.uint8))
    return (lum + 0.05) / (dark + 0.05) >= (light + 0.05) / (lum + 0.05)


# --------------------------------------------------------------------------- downsampling


def block_mean(a: np.ndarray, ky: int, kx: int) -> np.ndarray:
    """Means of ky x kx blocks of a 2-D array, trailing partial blocks dropped (as pyqtgraph's
    ``downsample``); float16 is averaged in float32.

    pyqtgraph's own downsampling averages with two ``mean`` calls, the first over tiny innermost
    blocks (numpy's slow case): ~90 ms for 4096x4096.  A few strided additions give the same
    block averages (NaN and inf propagate the same way).
    """
    h, w = (a.shape[0] // ky) * ky, (a.shape[1] // kx) * kx
    a = a[:h, :w]
    acc_type = np.float32 if a.dtype.itemsize < 4 else a.dtype
    # inf + -inf is NaN and huge sums overflow, as in the mean: quietly, it is only a picture.
    with np.errstate(invalid="ignore", over="ignore"):
        cols = a[:, 0::kx].astype(acc_type)  # a copy: the sums below are in place
        for i in range(1, kx):
            cols += a[:, i::kx]
        out = cols[0::ky].copy()
        for j in range(1, ky):
            out += cols[j::ky]
        out /= kx * ky
    return out
