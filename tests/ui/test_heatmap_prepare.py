"""The heatmap's display preparation (attnviz.ui.heatmap.prepare), tested without Qt.

``prepare_map`` runs on the compute thread; ``picture`` draws a big matrix a screen at a time.
What must hold at every zoom: a pixel shows the mean of the cells under it (never a blurred
guess), cells as big as pixels are shown exactly, and masked, NaN and inf cells stay visible.
"""

from __future__ import annotations

import itertools
import subprocess
import sys

import numpy as np
import pytest

from attnviz.ui.heatmap import paint
from attnviz.ui.heatmap.paint import MASK_COLOR, TINT_BELOW_PX
from attnviz.ui.heatmap.prepare import Frame, build_pyramid, picture, prepare_map


def test_importing_prepare_loads_no_qt():
    code = (
        "import sys\n"
        "import attnviz.ui.heatmap.prepare\n"
        "qt = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'superqt', 'shiboken6'))\n"
        "print(','.join(qt))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def _block_reference(a: np.ndarray, f: int) -> np.ndarray:
    """Means of f x f blocks, a last partial block averaging the cells it has (float64)."""
    rows, cols = a.shape
    out = np.empty((-(-rows // f), -(-cols // f)))
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[i, j] = a[i * f : (i + 1) * f, j * f : (j + 1) * f].astype(np.float64).mean()
    return out


def test_pyramid_levels_are_block_means_and_block_shares_of_the_cells():
    rng = np.random.default_rng(0)
    values = rng.random((301, 517)).astype(np.float32)  # odd sides: partial blocks at the edges
    values[7, 9] = np.nan
    values[50, 400] = np.inf
    allowed = rng.random(values.shape) < 0.7
    allowed[100:, :] = False
    allowed[50, 400] = True  # a masked inf shows as masked
    allowed[7, 9] = True  # an unmasked NaN (a masked one has a code of its own)
    cells = paint.special_cells(values, allowed)
    code = paint.overlay_codes(cells, values, show_masked_values=False)
    pyramid = build_pyramid(values, code)
    assert pyramid.factors == (1, 2, 4, 8)  # down to 128 a side or less
    assert pyramid.images[0] is values
    assert set(pyramid.kinds) == {1, 2, 3}  # masked, inf, NaN
    for f, image, shares in zip(pyramid.factors[1:], pyramid.images[1:], pyramid.shares[1:]):
        assert image.dtype == np.float32
        with np.errstate(invalid="ignore"):
            np.testing.assert_allclose(image, _block_reference(values, f), rtol=1e-5, equal_nan=True)
        for kind, share in shares.items():
            np.testing.assert_allclose(share, _block_reference((code == kind).astype(np.float32), f), atol=1e-6)
    # The NaN cell's blocks are NaN at every level (a mean propagates it, as block_mean does).
    assert all(np.isnan(image[7 // f, 9 // f]) for f, image in zip(pyramid.factors, pyramid.images))


def test_prepare_map_resolves_what_set_data_needs():
    values = np.full((600, 500), 0.25, dtype=np.float32)
    values[3, 4] = np.nan
    mask = np.ones(values.shape, bool)
    mask[10] = False  # an empty row
    small = prepare_map(values, mask=mask, levels=None, pyramid=False)
    big = prepare_map(values, mask=mask, levels=None)  # 300,000 cells: a pyramid
    assert small.pyramid is None and small.cells is not None and small.locators is None
    assert big.pyramid is not None and big.cells is None
    for prepared in (small, big):
        assert prepared.levels == (0.125, 0.375) and prepared.constant == 0.25
        assert prepared.empty_rows.nonzero()[0].tolist() == [10]
        assert prepared.values is not values and not prepared.values.flags.writeable
    # Big: the NaN cell and the empty row are located where the map was prepared.
    loc = big.locators
    assert loc is not None and (loc.n_nan, loc.n_inf, loc.n_empty) == (1, 0, 1)
    assert (loc.x[0], loc.y[0]) == (4.5, 3.5)
    with pytest.raises(ValueError, match="logarithmic"):
        prepare_map(values, log=True, levels=(0.0, 1.0))
    logged = prepare_map(values, log=True, levels=(0.01, 1.0))
    np.testing.assert_allclose(logged.shown[0, 0], np.log10(0.25), rtol=1e-6)


def _expected_axis(lo: float, hi: float, n: int, f: int, pixels: int) -> list[tuple[int, int]]:
    """The cells each pixel along one axis averages, as prepare's docstrings promise: the finest
    level's blocks in view, run by run (at most two blocks a pixel), or each one when they are
    fewer than the pixels."""
    start, stop = int(lo // f), min(-(-n // f), int(np.ceil(hi / f)))
    count = stop - start
    if count <= pixels:
        runs = [(b, b + 1) for b in range(start, stop)]
    else:
        edges = [start + i * count // pixels for i in range(pixels + 1)]
        runs = list(itertools.pairwise(edges))
    return [(a * f, min(b * f, n)) for a, b in runs]


@pytest.mark.parametrize(
    "frame",
    [
        Frame(0, 517, 0, 301, 300, 200),  # zoomed out: about 1.7 x 1.5 cells a pixel
        Frame(0, 517, 0, 301, 100, 60),  # a thumbnail: level 4
        Frame(40.5, 390.2, 20.0, 230.7, 160, 90),  # part of it, still under a pixel a cell
        Frame(40.5, 390.2, 20.0, 230.7, 250, 160),  # part of it, one or two cells a pixel
        Frame(40.5, 140.2, 20.0, 80.7, 400, 300),  # zoomed in: every cell is a few pixels
    ],
)
def test_every_pixel_shows_the_mean_of_the_cells_under_it(frame):
    rng = np.random.default_rng(1)
    values = rng.random((301, 517)).astype(np.float32)
    prepared = prepare_map(values, pyramid=True)
    pic = picture(prepared, frame)
    cells_per_px = min((frame.x1 - frame.x0) / frame.px_w, (frame.y1 - frame.y0) / frame.px_h)
    f = max(f for f in prepared.pyramid.factors if f <= max(1.0, cells_per_px))
    assert f <= max(1.0, cells_per_px)  # never coarser than a pixel
    ys = _expected_axis(frame.y0, frame.y1, 301, f, frame.px_h)
    xs = _expected_axis(frame.x0, frame.x1, 517, f, frame.px_w)
    assert pic.data.shape == (len(ys), len(xs))
    assert pic.data.shape[0] <= frame.px_h and pic.data.shape[1] <= frame.px_w  # a screen's worth
    expected = np.array([[values[a:b, c:d].astype(np.float64).mean() for c, d in xs] for a, b in ys])
    np.testing.assert_allclose(pic.data, expected, rtol=1e-5)
    assert pic.rect == (xs[0][0], ys[0][0], xs[-1][1] - xs[0][0], ys[-1][1] - ys[0][0])
    # It covers the view.
    x, y, w, h = pic.rect
    assert x <= frame.x0 and y <= frame.y0 and x + w >= frame.x1 and y + h >= frame.y1


@pytest.mark.parametrize(
    "frame",
    [
        Frame(0, 517, 0, 301, 300, 200),  # level 0, one or two cells a pixel
        Frame(40.5, 390.2, 20.0, 230.7, 250, 160),  # level 0, part of the matrix
        Frame(40.5, 390.2, 20.0, 230.7, 160, 90),  # level 2, part of the matrix
        Frame(0, 517, 0, 301, 100, 60),  # level 4
    ],
)
def test_the_overlay_of_a_pixel_is_the_tint_of_the_cells_under_it(frame):
    rng = np.random.default_rng(5)
    values = rng.random((301, 517))
    values[rng.random(values.shape) < 0.01] = np.nan
    values[rng.random(values.shape) < 0.01] = np.inf
    allowed = rng.random(values.shape) < 0.6
    values[~allowed & (rng.random(values.shape) < 0.5)] = 0.0
    prepared = prepare_map(values, mask=allowed, show_masked_values=True, pyramid=True)
    pic = picture(prepared, frame)
    code = paint.overlay_codes(paint.special_cells(values, allowed), values, True)
    cells_per_px = min((frame.x1 - frame.x0) / frame.px_w, (frame.y1 - frame.y0) / frame.px_h)
    f = max(f for f in prepared.pyramid.factors if f <= max(1.0, cells_per_px))
    ys = _expected_axis(frame.y0, frame.y1, 301, f, frame.px_h)
    xs = _expected_axis(frame.x0, frame.x1, 517, f, frame.px_w)
    assert pic.overlay is not None and pic.overlay.shape == (len(ys), len(xs), 4) and pic.tinted
    tints = paint.overlay_image(code, 1, tint=True).astype(np.float64)  # each cell's own tint
    for i, (a, b) in enumerate(ys):
        for j, (c, d) in enumerate(xs):
            block = tints[a:b, c:d].reshape(-1, 4)
            alpha = block[:, 3].mean()
            assert abs(int(pic.overlay[i, j, 3]) - alpha) <= 1
            if alpha > 0:
                colour = (block[:, :3] * block[:, 3:]).sum(axis=0) / block[:, 3].sum()
                assert np.abs(pic.overlay[i, j, :3] - colour).max() <= 1


def test_zoomed_in_the_cells_themselves_are_drawn_and_masked_ones_hatched():
    rng = np.random.default_rng(2)
    values = rng.random((700, 800))
    values[rng.random(values.shape) < 0.3] = 0.0
    allowed = rng.random(values.shape) < 0.5
    prepared = prepare_map(values, mask=allowed, show_masked_values=True)
    frame = Frame(100.0, 130.0, 200.0, 220.0, 600, 400)  # 20 pixels a cell
    pic = picture(prepared, frame)
    assert pic.rect == (100.0, 200.0, 30.0, 20.0)
    np.testing.assert_array_equal(pic.data, values[200:220, 100:130])  # exact, no averaging
    assert not pic.tinted
    # The overlay is the whole matrix's overlay, cut to these cells: same stripes, same phase.
    # (Drawn from the matrix's first cell to the last one in view: a pixel depends only on its
    # cell and its place, and the whole 700 x 800 at 34 pixels a cell would be 2.6 GB.)
    code = paint.overlay_codes(paint.special_cells(values, allowed), values, True)
    k = paint.overlay_scale(20, 30)
    whole = paint.overlay_image(code[:220, :130], k)
    np.testing.assert_array_equal(pic.overlay, whole[200 * k : 220 * k, 100 * k : 130 * k])
    # A cell or two a pixel: one flat tint pixel per cell, as set_data draws small cells.
    frame = Frame(100.0, 400.0, 200.0, 400.0, 400, 300)
    pic = picture(prepared, frame)
    assert pic.tinted and TINT_BELOW_PX > 1
    np.testing.assert_array_equal(pic.overlay, paint.overlay_image(code[200:400, 100:400], 1, tint=True))


def test_zoomed_out_masked_cells_tint_their_pixels_by_how_many_they_are():
    values = np.full((1024, 1024), 0.001, dtype=np.float32)
    allowed = np.ones(values.shape, bool)
    allowed[:, 768:] = False  # the last quarter of the keys: masked, weight 0
    allowed[:, 512:514] = False  # two masked columns: a pixel of 4 columns half masked
    values[~allowed] = 0.0
    prepared = prepare_map(values, mask=allowed, show_masked_values=True)
    pic = picture(prepared, Frame(0, 1024, 0, 1024, 256, 256))  # 4 x 4 cells a pixel
    assert pic.data.shape == (256, 256) and pic.overlay is not None
    tint = paint.overlay_image(np.array([[1]], dtype=np.uint8), 1, tint=True)[0, 0]
    assert (pic.overlay[:, 192:] == tint).all()  # wholly masked: the masked tint
    assert (pic.overlay[:, :128, 3] == 0).all()  # nothing masked
    assert pic.overlay[0, 128].tolist() == [*MASK_COLOR[:3], round(tint[3] / 2)]  # half masked
    np.testing.assert_allclose(pic.data[0, 128], 0.0005)  # the data pixel: the mean weight


def test_a_frame_prepared_ahead_gives_the_same_picture():
    rng = np.random.default_rng(3)
    values = rng.random((640, 640)).astype(np.float32)
    mask = rng.random(values.shape) < 0.9
    frame = Frame(0.0, 640.0, 0.0, 640.0, 500, 300)
    prepared = prepare_map(values, mask=mask, frame=frame)
    assert prepared.frame_picture is not None and prepared.frame_picture[0] == frame
    ready = prepared.frame_picture[1]
    again = picture(prepared, frame)
    np.testing.assert_array_equal(ready.data, again.data)
    np.testing.assert_array_equal(ready.overlay, again.overlay)
    assert ready.rect == again.rect
    # A frame that does not fit the matrix (the view of an earlier, bigger one) is not prepared.
    assert prepare_map(values, frame=Frame(0.0, 900.0, 0.0, 640.0, 500, 300)).frame_picture is None


def test_nan_and_inf_cells_reach_the_pixels_over_them():
    values = np.zeros((2048, 2048), dtype=np.float32)
    values[1000, 1500] = np.nan
    values[10, 20] = np.inf
    prepared = prepare_map(values)
    pic = picture(prepared, Frame(0, 2048, 0, 2048, 500, 500))  # level 4, pairs of blocks
    nan_px = np.argwhere(np.isnan(pic.data))
    assert len(nan_px) == 1 and pic.overlay is not None
    r, c = nan_px[0]
    (a, b), (d, e) = _expected_axis(0, 2048, 2048, 4, 500)[r], _expected_axis(0, 2048, 2048, 4, 500)[c]
    assert a <= 1000 < b and d <= 1500 < e
    assert pic.overlay[r, c, 3] > 0 and tuple(pic.overlay[r, c, :3]) == paint.NAN_COLOR[:3]
    assert np.isinf(pic.data).sum() == 1
