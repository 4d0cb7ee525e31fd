"""The heatmap's paint maths (attnviz.ui.heatmap.paint), tested without Qt.

Nothing here imports PySide6 or pyqtgraph, and the first test checks that importing the module
does not load them either: it must stay usable off the GUI thread and outside a QApplication.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from attnviz.ui.heatmap import paint
from attnviz.ui.heatmap.paint import (
    EMPTY_ROW_COLOR,
    INF_COLOR,
    MASK_COLOR,
    MASK_HATCH_COLOR,
    NAN_COLOR,
    WEIGHT_LEVELS,
)


def test_importing_paint_loads_no_qt():
    code = (
        "import sys\n"
        "import attnviz.ui.heatmap.paint\n"
        "qt = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'superqt', 'shiboken6'))\n"
        "print(','.join(qt))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


# --------------------------------------------------------------------------- numbers as text


def test_format_number_spells_out_specials_and_formats_the_rest():
    assert paint.format_number(float("nan")) == "NaN"
    assert paint.format_number(float("inf")) == "inf"
    assert paint.format_number(float("-inf")) == "-inf"
    assert paint.format_number(0.123456) == "0.1235"  # tooltips: four significant digits
    assert paint.format_number(-12345.678) == "-1.235e+04"
    assert paint.format_number(0.5, ".2f") == "0.50"
    assert paint.format_number(float("nan"), ".2f") == "NaN"
    assert paint.format_number(np.float32(0.25)) == "0.25"


def test_annotation_format_depends_on_levels_unless_given():
    assert paint.annotation_format(WEIGHT_LEVELS, None) == ".2f"
    assert paint.annotation_format((-3.0, 4.0), None) == ".3g"
    assert paint.annotation_format(WEIGHT_LEVELS, ".0f") == ".0f"


# --------------------------------------------------------------------------- inputs


def test_display_values_copies_writable_input_and_keeps_read_only():
    writable = np.zeros((2, 3))
    shown = paint.display_values(writable)
    assert not np.shares_memory(shown, writable) and not shown.flags.writeable
    frozen = np.ones((2, 3))
    frozen.setflags(write=False)
    assert paint.display_values(frozen) is frozen
    assert paint.display_values(np.arange(6).reshape(2, 3)).dtype == np.float64
    assert paint.display_values(np.zeros((2, 2), np.float16)).dtype == np.float32
    assert paint.display_values([[True, False]]).dtype == np.float64
    with pytest.raises(ValueError, match="2-D"):
        paint.display_values(np.zeros((2, 2, 2)))


def test_allowed_cells_broadcasts_and_drops_an_all_true_mask():
    assert paint.allowed_cells(None, (2, 3)) is None
    assert paint.allowed_cells(np.ones((2, 3)), (2, 3)) is None  # nothing masked: no overlay work
    row = paint.allowed_cells(np.array([1, 0, 1]), (2, 3))
    assert row is not None and row.dtype == np.bool_ and row.tolist() == [[True, False, True]] * 2
    with pytest.raises(ValueError, match="mask shape"):
        paint.allowed_cells(np.ones((3, 2), bool), (2, 3))


def test_empty_row_flags_given_or_derived():
    allowed = np.array([[True, False], [False, False], [False, True]])
    assert paint.empty_row_flags(None, allowed, 3).tolist() == [False, True, False]
    assert paint.empty_row_flags(None, None, 3).tolist() == [False] * 3
    assert paint.empty_row_flags([1, 0, 0], allowed, 3).tolist() == [True, False, False]
    with pytest.raises(ValueError, match="3 entries"):
        paint.empty_row_flags([True, False], None, 3)


def test_resolve_levels():
    values = np.array([[1.0, 2.0, -1e9], [np.nan, 5.0, np.inf]])
    allowed = np.array([[True, True, False], [True, True, True]])
    assert paint.resolve_levels(values, allowed, (0.0, 1.0)) == (0.0, 1.0)
    # Masked fills and non-finite cells do not stretch the scale...
    assert paint.resolve_levels(values, allowed, None) == (1.0, 5.0)
    # ...unless nothing else is left: then every finite cell counts.
    assert paint.resolve_levels(values, np.zeros_like(allowed), None) == (-1e9, 5.0)
    assert paint.resolve_levels(np.full((2, 2), np.nan), None, None) == WEIGHT_LEVELS
    assert paint.resolve_levels(np.zeros((0, 0)), None, None) == WEIGHT_LEVELS
    assert paint.resolve_levels(np.full((2, 2), 4.0), None, None) == (2.0, 6.0)  # constant: centred
    assert paint.resolve_levels(np.zeros((2, 2)), None, None) == (-0.5, 0.5)
    for bad in ((1.0, 1.0), (2.0, 1.0), (0.0, float("nan")), (float("-inf"), 0.0)):
        with pytest.raises(ValueError, match="levels"):
            paint.resolve_levels(values, None, bad)


# --------------------------------------------------------------------------- special cells


def test_special_cells_priorities_nan_then_masked_then_inf():
    values = np.array([[np.nan, np.nan, -np.inf, np.inf, 0.5]])
    allowed = np.array([[True, False, False, True, True]])
    cells = paint.special_cells(values, allowed)
    assert cells.nan.tolist() == [[True, True, False, False, False]]  # a NaN shows even masked
    assert cells.masked.tolist() == [[False, False, True, False, False]]  # -inf masked: masked
    assert cells.inf.tolist() == [[False, False, False, True, False]]
    assert cells.has_nan and cells.has_inf
    assert not (cells.nan & cells.masked).any() and not (cells.inf & (cells.nan | cells.masked)).any()


def test_a_masked_cell_that_turned_nan_keeps_its_hatching():
    """A masked row whose softmax is NaN (every key masked with -inf) is magenta and still
    hatched: the mask must stay visible under the NaN (it lost its stripes before)."""
    values = np.array([[np.nan, np.nan, 0.5]])
    allowed = np.array([[False, True, True]])
    cells = paint.special_cells(values, allowed)
    assert cells.nan_masked is not None and cells.nan_masked.tolist() == [[True, False, False]]
    code = paint.overlay_codes(cells, values, show_masked_values=False)
    image = paint.overlay_image(code, 16)
    masked_nan, plain_nan = image[:, :16], image[:, 16:32]
    magenta = np.all(masked_nan == paint.NAN_COLOR, axis=-1)
    hatch = np.all(masked_nan == paint.MASK_HATCH_COLOR, axis=-1)
    assert magenta.any() and hatch.any() and (magenta | hatch).all()
    assert np.all(plain_nan == paint.NAN_COLOR)  # an unmasked NaN stays plain magenta


def test_special_cells_of_a_plain_matrix():
    cells = paint.special_cells(np.zeros((3, 4)), None)
    assert not (cells.has_nan or cells.has_inf)
    assert not (cells.nan.any() or cells.inf.any() or cells.masked.any())
    assert cells.nan.shape == cells.inf.shape == cells.masked.shape == (3, 4)


def test_opaque_masked_keeps_valued_cells_only_when_asked():
    values = np.array([[0.0, 0.3, 0.0]])
    masked = np.array([[True, True, False]])
    assert paint.opaque_masked(values, masked, False) is masked
    assert paint.opaque_masked(values, masked, True).tolist() == [[True, False, False]]


# --------------------------------------------------------------------------- overlay


def test_overlay_scale():
    assert paint.overlay_scale(2, 10) == 48  # capped supersampling for tiny matrices
    assert paint.overlay_scale(100, 3) == 10
    assert paint.overlay_scale(1100, 1100) == 1
    assert paint.overlay_scale(0, 0) == 48


def test_upsample():
    assert paint.upsample(np.array([[1, 2]]), 2).tolist() == [[1, 1, 2, 2], [1, 1, 2, 2]]


@pytest.mark.parametrize("rising", [True, False])
def test_diagonal_stripes_match_their_definition(rising):
    h, w, period, width = 23, 37, 6, 2
    yy, xx = np.mgrid[:h, :w]
    expected = ((yy + xx) if rising else (yy - xx)) % period < width
    np.testing.assert_array_equal(paint.diagonal_stripes(h, w, period, width, rising=rising), expected)


def test_overlay_codes_are_none_without_special_cells():
    values = np.ones((2, 2))
    assert paint.overlay_codes(paint.special_cells(values, None), values, True) is None


def _cell_pixels(img: np.ndarray, k: int, r: int, c: int) -> set[tuple[int, ...]]:
    return {tuple(p) for p in img[r * k : (r + 1) * k, c * k : (c + 1) * k].reshape(-1, 4)}


def test_overlay_image_colours_each_kind_of_cell():
    values = np.array([[np.nan, np.inf, 0.0, 0.4, 0.7]])
    allowed = np.array([[True, True, False, False, True]])
    cells = paint.special_cells(values, allowed)
    code = paint.overlay_codes(cells, values, show_masked_values=True)
    assert code is not None
    k = paint.overlay_scale(*values.shape)
    img = paint.overlay_image(code, k)
    assert img.shape == (k, 5 * k, 4) and img.dtype == np.uint8
    assert _cell_pixels(img, k, 0, 0) == {NAN_COLOR}
    assert _cell_pixels(img, k, 0, 1) == {INF_COLOR}
    assert _cell_pixels(img, k, 0, 2) == {MASK_COLOR, MASK_HATCH_COLOR}  # hatched grey
    # Masked but valued: mostly transparent, light stripes let the value's colour show.
    valued = img[:, 3 * k : 4 * k]
    assert {tuple(p) for p in valued.reshape(-1, 4)} == {(0, 0, 0, 0), (255, 255, 255, 170)}
    assert (valued[..., 3] == 0).mean() > 0.5
    assert _cell_pixels(img, k, 0, 4) == {(0, 0, 0, 0)}
    # Without show_masked_values that cell is opaque hatched grey like any masked cell.
    opaque = paint.overlay_image(paint.overlay_codes(cells, values, show_masked_values=False), k)
    assert _cell_pixels(opaque, k, 0, 3) == {MASK_COLOR, MASK_HATCH_COLOR}


def test_overlay_hatch_continues_across_neighbouring_masked_cells():
    values = np.zeros((3, 4))
    cells = paint.special_cells(values, np.zeros((3, 4), bool))
    code = paint.overlay_codes(cells, values, False)
    for k in (1, 3, 8, 48):
        img = paint.overlay_image(code, k)
        period = max(4, k // 2)
        stripes = paint.diagonal_stripes(3 * k, 4 * k, period, max(1, period // 4))
        np.testing.assert_array_equal(np.all(img == MASK_HATCH_COLOR, axis=-1), stripes)
        np.testing.assert_array_equal(np.all(img == MASK_COLOR, axis=-1), ~stripes)


def test_overlay_image_leaves_the_codes_untouched():
    values = np.zeros((2, 2))
    code = paint.overlay_codes(paint.special_cells(values, np.eye(2, dtype=bool)), values, False)
    assert code is not None
    before = code.copy()
    for k in (1, 4):
        paint.overlay_image(code, k)
    np.testing.assert_array_equal(code, before)


def test_a_piece_of_the_overlay_drawn_alone_has_the_wholes_stripes():
    """A zoomed-in view draws only the cells on screen: their hatching must be where the whole
    overlay has it, or it would crawl while the view pans."""
    rng = np.random.default_rng(8)
    values = rng.random((30, 40))
    values[rng.random((30, 40)) < 0.5] = 0.0
    allowed = rng.random((30, 40)) < 0.6
    code = paint.overlay_codes(paint.special_cells(values, allowed), values, True)
    for k in (1, 5, 8, 13):
        whole = paint.overlay_image(code, k)
        for r0, c0 in [(0, 0), (3, 7), (11, 2)]:
            piece = paint.overlay_image(code[r0 : r0 + 9, c0 : c0 + 15], k, origin=(r0, c0))
            np.testing.assert_array_equal(piece, whole[r0 * k : (r0 + 9) * k, c0 * k : (c0 + 15) * k])
    yy, xx = np.mgrid[5:12, 9:20]
    np.testing.assert_array_equal(paint.diagonal_stripes(7, 11, 6, 2, origin=(5, 9)), (yy + xx) % 6 < 2)


def test_mean_tint_is_the_opacity_weighted_mean_of_the_cells_tints():
    codes = np.array([[1, 0, 3, 5], [1, 1, 2, 0]], dtype=np.uint8)
    one_by_one = paint.overlay_image(codes, 1, tint=True).astype(np.float64)  # RGBA per cell
    # Each pixel: the share of its block's cells with each code (here the 2 x 2 blocks).
    shares = {
        k: (codes == k).reshape(1, 2, 2, 2).mean(axis=(1, 3)).astype(np.float32)
        for k in paint.TINT_CODES
        if (codes == k).any()
    }
    got = paint.mean_tint(shares)
    assert got.shape == (1, 2, 4) and got.dtype == np.uint8
    for j in range(2):
        block = one_by_one[:, 2 * j : 2 * j + 2].reshape(-1, 4)
        alpha = block[:, 3].mean()
        colour = (block[:, :3] * block[:, 3:]).sum(axis=0) / block[:, 3].sum()
        assert abs(int(got[0, j, 3]) - alpha) <= 0.5
        assert np.abs(got[0, j, :3] - colour).max() <= 0.5
    # One kind of cell (the usual masked block): its colour, as opaque as it is common.
    alone = paint.mean_tint({1: np.array([[1.0, 0.5, 0.0]], dtype=np.float32)})
    full = paint.overlay_image(np.array([[1]], dtype=np.uint8), 1, tint=True)[0, 0]
    assert alone[0, 0].tolist() == full.tolist()
    assert alone[0, 1, :3].tolist() == full[:3].tolist() and alone[0, 1, 3] == round(full[3] / 2)
    assert alone[0, 2, 3] == 0


# --------------------------------------------------------------------------- empty rows and locators


def test_empty_row_bar_and_its_width():
    bar = paint.empty_row_bar(np.array([False, True, False]))
    assert bar.shape == (3, 1, 4)
    assert [tuple(p) for p in bar[:, 0]] == [(0, 0, 0, 0), EMPTY_ROW_COLOR, (0, 0, 0, 0)]
    assert paint.empty_bar_width(1) == 0.2 * 1  # a fifth of a cell at least
    assert paint.empty_bar_width(1000) == pytest.approx(12.0)  # 1.2 % of the width


def test_spread_subset_keeps_short_arrays_and_thins_long_ones_evenly():
    a, b = np.arange(10), np.arange(10) * 2
    assert paint.spread_subset(a, b, limit=10) == (a, b)
    kept_a, kept_b = paint.spread_subset(np.arange(1000), np.arange(1000) * 2, limit=11)
    assert kept_a[0] == 0 and kept_a[-1] == 999 and len(kept_a) == 11
    np.testing.assert_array_equal(kept_b, kept_a * 2)  # the same entries of every array
    assert np.ptp(np.diff(kept_a)) <= 1


def test_locator_points_in_order_nan_inf_empty():
    nan = np.zeros((4, 5), bool)
    nan[1, 2] = True
    inf = np.zeros((4, 5), bool)
    inf[3, 0] = inf[0, 4] = True
    points = paint.locator_points(nan, inf, np.array([False, False, True, False]), bar_x=0.1)
    assert (points.n_nan, points.n_inf, points.n_empty) == (1, 2, 1)
    assert list(zip(points.x.tolist(), points.y.tolist())) == [(2.5, 1.5), (4.5, 0.5), (0.5, 3.5), (0.1, 2.5)]
    many = paint.locator_points(np.ones((300, 300), bool), np.zeros((300, 300), bool), np.zeros(300, bool), 0.0)
    assert many.n_nan == paint.LOCATOR_MAX_POINTS == len(many.x)


# --------------------------------------------------------------------------- colours and text contrast


def test_cell_colors_map_values_through_the_lut_and_special_cells_to_their_colours():
    lut = np.stack([np.arange(256)] * 3, axis=1).astype(np.uint8)  # grey ramp: index = level
    values = np.array([[0.0, 1.0, 0.5, np.nan], [-5.0, 7.0, np.inf, 0.0]])
    allowed = np.array([[True, True, True, True], [True, True, True, False]])
    cells = paint.special_cells(values, allowed)
    rgb = paint.cell_colors(values, WEIGHT_LEVELS, lut, cells, cells.masked)
    assert rgb.shape == (2, 4, 3) and rgb.dtype == np.uint8
    assert rgb[0, :3, 0].tolist() == [0, 255, 128]
    assert rgb[1, :2, 0].tolist() == [0, 255]  # out of range: clipped to the ends of the map
    assert tuple(rgb[0, 3]) == NAN_COLOR[:3]
    assert tuple(rgb[1, 2]) == INF_COLOR[:3]
    assert tuple(rgb[1, 3]) == MASK_COLOR[:3]


def test_text_contrast():
    colours = np.array([[0, 0, 0], [255, 255, 255], [0, 0, 255], [255, 255, 0]], dtype=np.uint8)
    np.testing.assert_allclose(paint.relative_luminance(colours[:2]), [0.0, 1.0])
    assert paint.prefers_dark_text(colours).tolist() == [False, True, False, True]


# --------------------------------------------------------------------------- downsampling


def test_block_mean_equals_the_mean_of_each_block():
    rng = np.random.default_rng(3)
    a = rng.random((23, 31)).astype(np.float32)
    a[2, 3] = np.nan
    a[10, 10] = np.inf
    for ky, kx in [(1, 1), (2, 3), (5, 4), (23, 31)]:
        h, w = (23 // ky) * ky, (31 // kx) * kx
        ref = a[:h, :w].astype(np.float64).reshape(h // ky, ky, w // kx, kx).mean(axis=(1, 3))
        np.testing.assert_allclose(paint.block_mean(a, ky, kx), ref, rtol=1e-5, equal_nan=True)
    assert paint.block_mean(a.astype(np.float16), 2, 2).dtype == np.float32
    assert paint.block_mean(a.astype(np.float64), 2, 2).dtype == np.float64
