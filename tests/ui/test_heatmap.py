"""Tests for attnviz.ui.heatmap.widget.HeatmapWidget.

Several tests look at *rendered pixels* (widget.grab()), not only at item state: a transposed
image, a half-cell offset or levels silently overridden all leave the item state looking fine.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6 import QtCore, QtGui, QtTest

from attnviz.ui.heatmap.colormaps import (
    COLORMAPS,
    INF_COLOR,
    MASK_COLOR,
    NAN_COLOR,
    canonical_colormap_name,
    lookup_table,
)
from attnviz.ui.heatmap.items import CellAxisItem
from attnviz.ui.heatmap.paint import MASK_HATCH_COLOR, block_mean
from attnviz.ui.heatmap.widget import HeatmapWidget


@pytest.fixture
def widget(qtbot):
    w = HeatmapWidget()
    qtbot.addWidget(w)
    w.resize(640, 480)
    return w


def _shown(qtbot, w: HeatmapWidget) -> HeatmapWidget:
    w.show()
    qtbot.waitExposed(w)
    QtCore.QCoreApplication.processEvents()
    return w


def _pixel_of_cell(w: HeatmapWidget, img: QtGui.QImage, row: int, col: int, fx: float = 0.5, fy: float = 0.5):
    """RGB of the rendered pixel at fraction (fx, fy) inside cell (row, col)."""
    scene_pt = w.plot_item.getViewBox().mapViewToScene(QtCore.QPointF(col + fx, row + fy))
    view_pt = w._view.mapFromScene(scene_pt)
    pt = w._view.mapTo(w, view_pt)
    dpr = img.devicePixelRatio()
    c = img.pixelColor(int(pt.x() * dpr), int(pt.y() * dpr))
    return (c.red(), c.green(), c.blue())


def _close(a, b, tol: int = 6) -> bool:
    return all(abs(int(x) - int(y)) <= tol for x, y in zip(a, b))


def _cell_rgba(w: HeatmapWidget) -> np.ndarray:
    """Overlay image reduced to one RGBA per cell: min alpha and the cell's centre colour."""
    img = w.overlay_item.image
    k = w.overlay_scale
    return img[k // 2 :: k, k // 2 :: k]


# --------------------------------------------------------------------------- data layout


def test_image_is_row_major_and_holds_values(widget):
    values = np.arange(15, dtype=np.float64).reshape(3, 5) / 14.0
    widget.set_data(values)
    img = widget.image_item.image
    assert widget.image_item.axisOrder == "row-major"
    assert img.shape == values.shape == (3, 5)
    for r in range(3):
        for c in range(5):
            assert img[r, c] == values[r, c]


def test_values_are_copied(widget):
    values = np.zeros((2, 3))
    widget.set_data(values)
    values[0, 0] = 99.0  # caller edits in place without calling set_data
    assert widget.image_item.image[0, 0] == 0.0
    assert widget.values[0, 0] == 0.0


def test_rendered_image_is_not_transposed_and_query0_on_top(qtbot, widget):
    widget.annotate_limit = 0  # nothing drawn over the cell centres
    values = np.zeros((3, 5))
    values[0, 4] = 1.0  # top-right cell bright, everything else dark
    widget.set_data(values)
    _shown(qtbot, widget)
    img = widget.grab().toImage()
    lut = lookup_table(widget.colormap_name)
    assert _close(_pixel_of_cell(widget, img, 0, 4), lut[255])
    assert _close(_pixel_of_cell(widget, img, 2, 0), lut[0])
    assert _close(_pixel_of_cell(widget, img, 0, 0), lut[0])
    # Cells are [i, i+1): the bright cell must fill its whole square, edges included.
    assert _close(_pixel_of_cell(widget, img, 0, 4, 0.08, 0.08), lut[255])
    assert _close(_pixel_of_cell(widget, img, 0, 4, 0.92, 0.92), lut[255])
    assert _close(_pixel_of_cell(widget, img, 0, 3, 0.92, 0.5), lut[0])
    # Query 0 is the top row on screen, key 0 the left column.
    vb = widget.plot_item.getViewBox()
    top = vb.mapViewToScene(QtCore.QPointF(0.5, 0.5))
    below = vb.mapViewToScene(QtCore.QPointF(0.5, 2.5))
    right = vb.mapViewToScene(QtCore.QPointF(4.5, 0.5))
    assert top.y() < below.y()
    assert top.x() < right.x()


def test_rejects_bad_shapes(widget):
    with pytest.raises(ValueError):
        widget.set_data(np.zeros(5))
    with pytest.raises(ValueError):
        widget.set_data(np.zeros((2, 3)), mask=np.ones((3, 2), bool))
    with pytest.raises(ValueError):
        widget.set_data(np.zeros((2, 3)), empty_rows=np.zeros(3, bool))
    with pytest.raises(ValueError):
        widget.set_data(np.zeros((2, 3)), row_labels=["a"])
    with pytest.raises(ValueError):
        widget.set_data(np.zeros((2, 3)), levels=(1.0, 1.0))


# --------------------------------------------------------------------------- levels


def test_explicit_levels_on_first_set_data(widget):
    # First call on a fresh widget: pyqtgraph's "deferred levels" must not override these.
    widget.set_data(np.linspace(-2, 5, 12).reshape(3, 4), levels=(-2.0, 5.0))
    assert tuple(widget.image_item.getLevels()) == (-2.0, 5.0)
    assert tuple(widget.colorbar.levels()) == (-2.0, 5.0)
    assert widget.levels == (-2.0, 5.0)


def test_default_levels_are_weights(widget):
    widget.set_data(np.full((2, 2), 0.3))
    assert tuple(widget.image_item.getLevels()) == (0.0, 1.0)
    assert tuple(widget.colorbar.levels()) == (0.0, 1.0)


def test_auto_levels_ignore_nan_inf_and_masked(widget):
    v = np.array([[-3.0, np.nan, 2.0], [np.inf, -np.inf, 0.5], [-1e9, 1.0, 1.5]])
    widget.set_data(v, levels=None)
    assert widget.levels == (-1e9, 2.0)  # finite min/max; NaN/inf ignored
    mask = np.ones((3, 3), bool)
    mask[2, 0] = False  # the -1e9 "masked fill" must not stretch the scale
    widget.set_data(v, mask=mask, levels=None)
    assert widget.levels == (-3.0, 2.0)
    assert tuple(widget.image_item.getLevels()) == (-3.0, 2.0)
    assert tuple(widget.colorbar.levels()) == (-3.0, 2.0)


def test_auto_levels_degenerate_inputs(widget):
    widget.set_data(np.full((2, 2), np.nan), levels=None)
    lo, hi = widget.levels
    assert math.isfinite(lo) and math.isfinite(hi) and lo < hi
    widget.set_data(np.full((2, 2), 4.0), levels=None)
    lo, hi = widget.levels
    assert lo < 4.0 < hi


def test_rendered_colour_follows_levels(qtbot, widget):
    widget.annotate_limit = 0
    widget.set_data(np.array([[10.0, 20.0, 30.0]]), levels=(10.0, 30.0))
    _shown(qtbot, widget)
    img = widget.grab().toImage()
    lut = lookup_table(widget.colormap_name)
    assert _close(_pixel_of_cell(widget, img, 0, 0), lut[0])
    assert _close(_pixel_of_cell(widget, img, 0, 2), lut[255])
    assert _close(_pixel_of_cell(widget, img, 0, 1), lut[128], tol=10)


# --------------------------------------------------------------------------- special cells


def test_masked_overlay_alpha_exactly_at_masked_cells(widget):
    mask = np.array(
        [
            [True, True, False, False],
            [True, False, True, False],
            [False, False, False, True],
        ]
    )
    widget.set_data(np.full((3, 4), 0.25), mask=mask)
    ov = widget.overlay_item.image
    k = widget.overlay_scale
    assert widget.overlay_item.isVisible()
    assert ov.shape == (3 * k, 4 * k, 4)
    per_cell = ov.reshape(3, k, 4, k, 4)
    alpha_min = per_cell[..., 3].min(axis=(1, 3))
    alpha_max = per_cell[..., 3].max(axis=(1, 3))
    assert np.array_equal(alpha_min > 0, ~mask)  # every pixel of a masked cell is covered
    assert np.array_equal(alpha_max > 0, ~mask)  # no pixel of an allowed cell is
    # Hatched: a masked cell holds more than one colour.
    masked_cell = per_cell[2, :, 0, :, :3].reshape(-1, 3)
    assert len(np.unique(masked_cell, axis=0)) >= 2
    assert (masked_cell == MASK_COLOR[:3]).all(axis=1).any()


def test_overlay_maps_onto_data_rectangle(widget):
    mask = np.ones((3, 7), bool)
    mask[0, 0] = False
    widget.set_data(np.zeros((3, 7)), mask=mask)
    rect = widget.overlay_item.mapRectToParent(widget.overlay_item.boundingRect())
    assert rect == QtCore.QRectF(0, 0, 7, 3)


def test_nan_and_inf_colours_in_overlay_and_render(qtbot, widget):
    widget.annotate_limit = 0
    v = np.full((20, 20), 0.1)
    v[3, 5] = np.nan
    v[7, 2] = np.inf
    v[8, 9] = -np.inf
    mask = np.ones((20, 20), bool)
    mask[10, 10] = False
    mask[11, 11] = False
    v[11, 11] = np.nan  # NaN wins over masked: it is always a bug worth seeing
    widget.set_data(v, mask=mask)
    cells = _cell_rgba(widget)
    assert tuple(cells[3, 5]) == NAN_COLOR
    # A masked NaN is magenta too, and keeps the mask's hatching over it.
    k = widget.overlay_scale
    block = widget.overlay_item.image[11 * k : 12 * k, 11 * k : 12 * k].reshape(-1, 4)
    magenta = np.all(block == NAN_COLOR, axis=-1)
    assert magenta.mean() > 0.5 and (magenta | np.all(block == MASK_HATCH_COLOR, axis=-1)).all()
    assert tuple(cells[7, 2]) == INF_COLOR
    assert tuple(cells[8, 9]) == INF_COLOR
    assert cells[0, 0, 3] == 0

    _shown(qtbot, widget)
    img = widget.grab().toImage()
    assert _close(_pixel_of_cell(widget, img, 3, 5), NAN_COLOR[:3])
    assert _close(_pixel_of_cell(widget, img, 7, 2), INF_COLOR[:3])
    lut = lookup_table(widget.colormap_name)
    assert _close(_pixel_of_cell(widget, img, 3, 6), lut[int(0.1 * 256)], tol=10)


def test_masked_minus_inf_shows_as_masked_not_inf(widget):
    v = np.array([[0.0, -np.inf]])
    widget.set_data(v, mask=np.array([[True, False]]), levels=None)
    cells = _cell_rgba(widget)
    assert tuple(cells[0, 1]) != INF_COLOR
    assert cells[0, 1, 3] > 0


def test_special_colours_distinct_from_every_colormap():
    for name in COLORMAPS:
        lut = lookup_table(name).astype(float)
        for special in (NAN_COLOR, INF_COLOR):
            dist = np.sqrt(((lut - np.array(special[:3], float)) ** 2).sum(axis=1))
            assert dist.min() > 100, (name, special)


def test_empty_rows_marker_tooltip_and_label(widget):
    mask = np.ones((4, 3), bool)
    mask[2] = False
    widget.set_data(np.zeros((4, 3)), mask=mask)  # empty_rows derived from the mask
    assert widget.empty_rows == (2,)
    assert widget.empty_row_marker_item.isVisible()
    bar = widget.empty_row_marker_item.image
    assert bar.shape[:2] == (4, 1)
    assert list(bar[:, 0, 3] > 0) == [False, False, True, False]
    assert tuple(bar[2, 0, :3])[0] > 200 and bar[2, 0, 1] < 80  # red
    assert "2" in widget.toolTip().split("no valid key")[1]
    labels = widget.plot_item.getAxis("left").cell_labels
    assert labels[2].startswith("∅") and not labels[1].startswith("∅")

    widget.set_data(np.zeros((4, 3)), empty_rows=np.array([True, False, False, True]))
    assert widget.empty_rows == (0, 3)
    widget.set_data(np.zeros((4, 3)))
    assert widget.empty_rows == ()
    assert not widget.empty_row_marker_item.isVisible()
    assert "no valid key" not in widget.toolTip()


# --------------------------------------------------------------------------- annotations


def test_small_matrix_annotations_texts_and_contrast(widget):
    v = np.array([[0.0, 0.25, 1.0], [np.nan, np.inf, -np.inf]])
    widget.set_data(v)
    ann = widget.annotations
    assert len(ann) == 6
    texts = [a.text for a in ann]
    assert texts == ["0.00", "0.25", "1.00", "NaN", "inf", "-inf"]
    # Row-major order.
    assert (ann[5].row, ann[5].col) == (1, 2)
    # cividis: 0 is dark blue -> light text; 1 is yellow -> dark text.
    dark_text = ann[2].color
    light_text = ann[0].color
    assert light_text.lightness() > 200 and dark_text.lightness() < 60


def test_annotations_for_scores_use_three_significant_digits(widget):
    widget.set_data(np.array([[123.456, -0.012345]]), levels=None)
    assert [a.text for a in widget.annotations] == ["123", "-0.0123"]


def test_large_matrix_has_no_annotations(widget):
    widget.set_data(np.zeros((17, 17)))
    assert widget.annotations == ()
    widget.set_data(np.zeros((16, 16)))
    assert len(widget.annotations) == 256
    widget.annotate_limit = 4
    widget.set_data(np.zeros((5, 2)))
    assert widget.annotations == ()


def test_repeated_set_data_keeps_counts_right(widget):
    vb = widget.plot_item.getViewBox()

    def n_text_items_in_view() -> int:
        # Count what is really in the scene: stale items left behind would still be drawn.
        return sum(1 for it in widget._view.scene().items() if isinstance(it, pg.TextItem))

    for shape, expected in [((4, 4), 16), ((2, 3), 6), ((20, 20), 0), ((3, 3), 9), ((1, 1), 1)]:
        mask = np.ones(shape, bool)
        mask[0, 0] = shape == (1, 1)  # overlay present except for the last one
        widget.set_data(np.random.default_rng(0).random(shape), mask=mask)
        assert len(widget.annotations) == expected
        assert n_text_items_in_view() == 0  # one layer draws every cell's text
        assert widget.image_item.image.shape == shape
        if shape != (1, 1):
            k = widget.overlay_scale
            assert widget.overlay_item.image.shape[:2] == (shape[0] * k, shape[1] * k)
            rect = widget.overlay_item.mapRectToParent(widget.overlay_item.boundingRect())
            assert rect == QtCore.QRectF(0, 0, shape[1], shape[0])
    assert not widget.overlay_item.isVisible()
    assert vb.viewRange() == [[0.0, 1.0], [0.0, 1.0]]


def test_annotations_hidden_when_cells_too_small(qtbot, widget):
    widget.set_data(np.full((16, 16), 0.5))
    widget.resize(300, 300)
    widget.setMinimumSize(0, 0)
    _shown(qtbot, widget)
    assert len(widget.annotations) == 256 and not widget.annotations_legible
    widget.resize(1400, 900)
    QtCore.QCoreApplication.processEvents()
    assert widget.annotations_legible


# --------------------------------------------------------------------------- ticks


def test_ticks_label_every_cell_centre(widget):
    widget.set_data(np.zeros((3, 4)), row_labels=["a", "b", "c"])
    left = widget.plot_item.getAxis("left")
    bottom = widget.plot_item.getAxis("bottom")
    assert left.cell_labels == ["a", "b", "c"]
    assert bottom.cell_labels == ["0", "1", "2", "3"]
    # Plenty of room: one tick per cell, at the centre, with that cell's label.
    ((_, values),) = bottom.tickValues(0, 4, 800)
    assert values == [0.5, 1.5, 2.5, 3.5]
    assert bottom.tickStrings(values, 1.0, 1.0) == ["0", "1", "2", "3"]
    ((_, values),) = left.tickValues(0, 3, 600)
    assert left.tickStrings(values, 1.0, 1.0) == ["a", "b", "c"]


def test_crowded_labels_are_thinned_not_overprinted(widget):
    words = [f"token_{i:02d}" for i in range(32)]
    widget.set_data(np.zeros((32, 32)), col_labels=words)
    bottom = widget.plot_item.getAxis("bottom")
    ((step, values),) = bottom.tickValues(0, 32, 400)  # 12.5 px per cell: "token_07" is wider
    assert step > 1
    assert values[0] == 0.5 and all((v - 0.5) % step == 0 for v in values)
    assert bottom.tickStrings(values, 1.0, step)[1] == words[int(step)]
    long = "x" * 60
    widget.set_data(np.zeros((1, 2)), col_labels=[long, "b"])
    assert len(bottom.cell_labels[0]) < 20 and bottom.cell_labels[0].endswith("…")


def test_many_rows_use_automatic_integer_ticks_at_centres(widget):
    widget.set_data(np.zeros((100, 40)))
    axis = widget.plot_item.getAxis("left")
    assert axis.cell_labels is None
    assert widget.plot_item.getAxis("bottom").cell_labels is None  # 40 cols > label_limit
    levels = axis.tickValues(0, 100, 400)
    assert levels
    for spacing, values in levels:
        assert spacing >= 1
        for v in values:
            assert v - 0.5 == int(v - 0.5)
    assert axis.tickStrings([0.5, 10.5], 1.0, 10.0) == ["0", "10"]
    # Zoomed in below one cell per tick: still labels whole cells.
    tight = CellAxisItem("left").tickValues(3.0, 5.0, 400)
    assert [3.5, 4.5] in [vals for _, vals in tight]


# --------------------------------------------------------------------------- hover


def test_hover_calls_function_with_row_and_col(qtbot, widget):
    calls: list[tuple[int, int]] = []

    def hover(r: int, c: int) -> str:
        calls.append((r, c))
        return f"cell {r},{c}"

    widget.set_data(np.random.default_rng(1).random((4, 6)), hover=hover)
    _shown(qtbot, widget)
    vb = widget.plot_item.getViewBox()
    # Near the corners of cell (2, 3), to catch half-cell offsets.
    for fx, fy in [(0.5, 0.5), (0.05, 0.05), (0.95, 0.95)]:
        pos = vb.mapViewToScene(QtCore.QPointF(3 + fx, 2 + fy))
        assert widget._cell_at_scene_pos(pos) == (2, 3)
    with qtbot.waitSignal(widget.cellHovered, timeout=1000) as blocker:
        widget._on_mouse_moved(vb.mapViewToScene(QtCore.QPointF(3.5, 2.5)))
    assert blocker.args == [2, 3]
    assert calls == [(2, 3)]
    assert widget.hover_text == "cell 2,3"
    assert widget.image_item.toolTip() == "cell 2,3"
    # Moving within the same cell does not call again; another cell does.
    widget._on_mouse_moved(vb.mapViewToScene(QtCore.QPointF(3.2, 2.7)))
    widget._on_mouse_moved(vb.mapViewToScene(QtCore.QPointF(0.5, 3.5)))
    assert calls == [(2, 3), (3, 0)]
    # Outside the matrix: ignored, hover cleared.
    widget._on_mouse_moved(QtCore.QPointF(-50, -50))
    assert calls == [(2, 3), (3, 0)]
    assert widget.hover_text == ""


def test_real_mouse_move_reaches_hover(qtbot, widget):
    """End to end: a mouse move over the viewport -> scene.sigMouseMoved -> cellHovered."""
    widget.set_data(np.zeros((4, 6)))
    _shown(qtbot, widget)
    scene_pt = widget.plot_item.getViewBox().mapViewToScene(QtCore.QPointF(3.5, 2.5))
    with qtbot.waitSignal(widget.cellHovered, timeout=2000) as blocker:
        QtTest.QTest.mouseMove(widget._view.viewport(), widget._view.mapFromScene(scene_pt))
    assert blocker.args == [2, 3]
    assert widget.hover_text == "query 2, key 3: 0"


def test_default_hover_text(qtbot, widget):
    v = np.zeros((2, 3))
    v[1, 2] = 0.5
    mask = np.ones((2, 3), bool)
    mask[0, 1] = False
    widget.set_data(v, mask=mask)
    _shown(qtbot, widget)
    vb = widget.plot_item.getViewBox()
    widget._on_mouse_moved(vb.mapViewToScene(QtCore.QPointF(2.5, 1.5)))
    assert widget.hover_text == "query 1, key 2: 0.5"
    widget._on_mouse_moved(vb.mapViewToScene(QtCore.QPointF(1.5, 0.5)))
    assert widget.hover_text.startswith("query 0, key 1: 0") and "masked" in widget.hover_text


def test_hover_text_refreshes_on_new_data(qtbot, widget):
    widget.set_data(np.zeros((2, 2)))
    _shown(qtbot, widget)
    vb = widget.plot_item.getViewBox()
    widget._on_mouse_moved(vb.mapViewToScene(QtCore.QPointF(1.5, 1.5)))
    widget.set_data(np.full((2, 2), 0.75))
    assert widget.hover_text == "query 1, key 1: 0.75"
    widget.set_data(np.zeros((1, 1)))  # hovered cell no longer exists
    assert widget.hover_text == ""


# --------------------------------------------------------------------------- colour maps, fonts, export


def test_colormaps(widget):
    widget.set_data(np.zeros((2, 2)))
    assert widget.colormap_name == "cividis"
    for name in COLORMAPS:
        widget.set_colormap(name)
        lut = widget.image_item.lut
        assert lut.shape == (256, 3) and lut.dtype == np.uint8
        assert np.array_equal(lut, lookup_table(name))
    assert not np.array_equal(lookup_table("viridis"), lookup_table("magma"))
    widget.set_colormap("Greys")
    assert widget.colormap_name == "gray"
    assert canonical_colormap_name("grey") == "gray"
    with pytest.raises(ValueError):
        widget.set_colormap("no-such-map")


def test_colormap_change_updates_annotation_contrast(widget):
    widget.set_data(np.array([[0.0]]))
    before = widget.annotations[0].color.lightness()
    widget.set_colormap("gray")  # 0 is black in gray too: still light text
    assert widget.annotations[0].color.lightness() == before
    widget.set_data(np.array([[1.0]]))
    assert widget.annotations[0].color.lightness() < 60


def test_font_scale(widget):
    widget.set_data(np.zeros((2, 2)))
    base_ann = widget.annotation_font.pointSizeF()
    base_tick = widget.plot_item.getAxis("left").style["tickFont"].pointSizeF()
    widget.set_font_scale(2.0)
    assert widget.annotation_font.pointSizeF() == pytest.approx(2 * base_ann)
    assert widget.plot_item.getAxis("left").style["tickFont"].pointSizeF() == pytest.approx(2 * base_tick)
    assert widget.plot_item.getAxis("bottom").style["tickFont"].pointSizeF() == pytest.approx(2 * base_tick)
    assert "font-size" in widget.plot_item.getAxis("bottom").labelStyle
    # Label colour survives restyling (black-on-black axis labels were a real bug).
    assert widget.plot_item.getAxis("bottom").labelStyle.get("color")
    with pytest.raises(ValueError):
        widget.set_font_scale(0)


def test_render_image_matches_grab(qtbot, widget, tmp_path):
    widget.set_data(np.random.default_rng(2).random((5, 7)), mask=np.tril(np.ones((5, 7), bool)))
    _shown(qtbot, widget)
    path = tmp_path / "heatmap.png"
    assert widget.render_image(path)
    saved = QtGui.QImage(str(path)).convertToFormat(QtGui.QImage.Format.Format_RGB32)
    grabbed = widget.grab().toImage().convertToFormat(QtGui.QImage.Format.Format_RGB32)
    assert saved.size() == grabbed.size()
    assert saved == grabbed


def test_tooltips_and_minimum_size(widget):
    widget.set_data(np.zeros((2, 10)))
    assert widget.toolTip()
    assert widget.colorbar.toolTip()
    for side in ("left", "bottom"):
        assert widget.plot_item.getAxis(side).toolTip()
    assert widget.image_item.toolTip()
    assert widget.minimumWidth() >= 400 and widget.minimumHeight() >= 180


def test_labels_and_title_are_configurable(qtbot):
    w = HeatmapWidget(title="Layer 0", x_label="Tokens", y_label="Heads")
    qtbot.addWidget(w)
    assert w.plot_item.getAxis("bottom").labelText == "Tokens"
    assert w.plot_item.getAxis("left").labelText == "Heads"
    assert "Layer 0" in w.plot_item.titleLabel.text
    w.set_axis_labels(x_label="Keys")
    w.set_title("")
    assert w.plot_item.getAxis("bottom").labelText == "Keys"
    assert not w.plot_item.titleLabel.isVisible()


def test_empty_matrix_is_allowed(widget):
    widget.set_data(np.zeros((3, 3)), mask=np.eye(3, dtype=bool))
    widget.clear()
    assert widget.annotations == ()
    assert not widget.overlay_item.isVisible()
    widget.set_data(np.zeros((2, 2)))
    assert len(widget.annotations) == 4


# --------------------------------------------------------------------------- scale


@pytest.mark.slow
def test_4096_square_with_causal_mask(qtbot, widget):
    n = 4096
    v = np.random.default_rng(3).random((n, n), dtype=np.float32)
    v[5, 7] = np.nan
    mask = np.tril(np.ones((n, n), bool))
    widget.set_data(v, mask=mask)
    assert widget.image_item.autoDownsample
    # The RGBA overlay is not averaged at paint time (too slow): Qt scales it when drawing.
    assert not widget.overlay_item.autoDownsample
    assert widget.image_item.image.shape == (n, n)
    assert widget.annotations == ()
    assert widget.plot_item.getAxis("left").cell_labels is None
    # The lone NaN cell gets a fixed-size marker so it stays findable when zoomed out.
    xs, ys = widget.locator_item.getData()
    assert (7.5, 5.5) in set(zip(xs.tolist(), ys.tolist()))
    # Painting goes through pyqtgraph's downsampling of the data image.
    _shown(qtbot, widget)
    img = widget.grab().toImage()
    assert not img.isNull()
    # Upper-right corner is masked: its rendered colour is the (downsampled) hatch grey.
    r, g, b = _pixel_of_cell(widget, img, 10, n - 10)
    assert abs(r - g) < 8 and abs(g - b) < 8 and 60 < r < 230


def test_locators_only_for_big_matrices(widget):
    v = np.zeros((200, 300))
    v[10, 20] = np.nan
    v[30, 40] = np.inf
    mask = np.ones(v.shape, bool)
    mask[50] = False  # empty row 50
    widget.set_data(v, mask=mask)
    xs, ys = widget.locator_item.getData()
    pts = set(zip(xs.tolist(), ys.tolist()))
    assert (20.5, 10.5) in pts and (40.5, 30.5) in pts
    assert any(y == 50.5 and x < 5 for x, y in pts)
    assert len(pts) == 3
    widget.set_data(np.full((200, 300), np.nan))  # 60000 NaN: an evenly spread subset
    xs, ys = widget.locator_item.getData()
    assert 0 < len(xs) <= 20_000 and ys.min() < 5 and ys.max() > 195
    widget.set_data(np.full((4, 4), np.nan))  # small: the overlay alone is enough
    assert len(widget.locator_item.getData()[0]) == 0


def test_masked_cells_with_weight_keep_their_colour_when_asked(qtbot, widget):
    """The book's fill gives an empty row uniform weights over padding: that must be seen."""
    values = np.array([[0.25, 0.25, 0.25, 0.25], [0.5, 0.5, 0.0, 0.0]])
    mask = np.array([[False] * 4, [True, True, False, False]])
    widget.show_masked_values = True
    widget.set_data(values, mask=mask)
    img = widget.overlay_item.image
    k = widget.overlay_scale
    # Row 0 is masked but weighted: mostly transparent (light stripes only), never the solid grey.
    row0 = img[:k, : 4 * k]
    assert (row0[..., 3] == 0).mean() > 0.5
    # Row 1's masked cells have weight 0: the usual opaque grey hatch.
    row1_masked = img[k : 2 * k, 2 * k : 4 * k]
    assert (row1_masked[..., 3] == 255).all()
    widget.show_masked_values = False
    widget.set_data(values, mask=mask)
    assert (widget.overlay_item.image[:k, : 4 * k][..., 3] == 255).all()


def test_live_edit_reuses_overlay_and_colour_bar_but_follows_every_change(widget):
    """A new value under the same mask keeps the overlay image and the colour bar's axis
    drawing (rebuilding them made every keystroke repaint more); a new mask, new specials or new
    levels must still be drawn."""
    rng = np.random.default_rng(1)
    mask = np.ones((3, 5), bool)
    mask[:, 3:] = False
    widget.set_data(rng.random((3, 5)), mask=mask)
    overlay = widget.overlay_item.image
    widget._colorbar.axis.picture = "cached"  # stands in for the axis's cached drawing
    widget.set_data(rng.random((3, 5)), mask=mask)
    assert widget.overlay_item.image is overlay
    assert widget._colorbar.axis.picture == "cached"
    # A different mask: a new overlay whose masked cells are exactly the new ones.
    mask2 = mask.copy()
    mask2[1, 3] = True
    widget.set_data(rng.random((3, 5)), mask=mask2)
    assert widget.overlay_item.image is not overlay
    assert (_cell_rgba(widget)[..., 3] > 0).tolist() == (~mask2).tolist()
    # A NaN under the same mask is a change too.
    values = rng.random((3, 5))
    values[0, 0] = np.nan
    widget.set_data(values, mask=mask2)
    assert tuple(_cell_rgba(widget)[0, 0]) == tuple(NAN_COLOR)
    # New levels reach the colour bar.
    widget.set_data(rng.random((3, 5)) * 10, mask=mask2, levels=None)
    assert widget._colorbar.levels() == widget.levels != (0.0, 1.0)
    # Everything allowed again: no overlay; then the old mask once more: drawn again.
    widget.set_data(rng.random((3, 5)))
    assert not widget.overlay_item.isVisible()
    widget.set_data(rng.random((3, 5)), mask=mask)
    assert widget.overlay_item.isVisible()
    assert (_cell_rgba(widget)[..., 3] > 0).tolist() == (~mask).tolist()


def test_big_matrix_overlay_is_reused_too(widget):
    # Past 1024 cells a side the overlay has one pixel per cell, built without a supersampled
    # copy: the kept code must not be the array the stripes are drawn into.
    n = 1100
    mask = np.ones((n, n), bool)
    mask[:, 900:] = False
    rng = np.random.default_rng(2)
    widget.set_data(rng.random((n, n)), mask=mask)
    assert widget.overlay_scale == 1
    overlay = widget.overlay_item.image
    widget.set_data(rng.random((n, n)), mask=mask)
    assert widget.overlay_item.image is overlay
    mask[:, 800:] = False
    widget.set_data(rng.random((n, n)), mask=mask)
    assert widget.overlay_item.image is not overlay
    assert (widget.overlay_item.image[:, 800:900, 3] > 0).all()


def test_empty_row_bar_follows_changes_and_locator_hides_when_unused(widget):
    mask = np.ones((4, 4), bool)
    mask[2] = False
    widget.set_data(np.zeros((4, 4)), mask=mask)
    bar = widget.empty_row_marker_item.image
    widget.set_data(np.ones((4, 4)) / 4, mask=mask)
    assert widget.empty_row_marker_item.image is bar  # same empty rows: kept
    mask[1] = False
    widget.set_data(np.zeros((4, 4)), mask=mask)
    assert widget.empty_row_marker_item.image[:, 0, 3].tolist() == [0, 255, 255, 0]
    # The locator is for big matrices: hidden (not merely empty) on small ones.
    assert not widget.locator_item.isVisible()
    v = np.zeros((200, 200))
    v[5, 5] = np.nan
    widget.set_data(v)
    assert widget.locator_item.isVisible()
    widget.set_data(np.zeros((200, 200)))
    assert not widget.locator_item.isVisible()


def test_rendered_images_are_in_the_format_qt_scales_fast(qtbot, widget):
    """Indexed8 (pyqtgraph's choice with a colour table) took 1.5 ms per repaint of a 1x10 image
    stretched over the plot; every image item hands Qt premultiplied ARGB32 instead, with the
    same colours (the pixel tests above check the rendered colours)."""
    mask = np.ones((2, 5), bool)
    mask[1, 3:] = False
    widget.annotate_limit = 0  # the digits would cover the sampled pixel
    _shown(qtbot, widget)
    values = np.linspace(0, 1, 10).reshape(2, 5)
    values[0, 4] = 1.0
    widget.set_data(values, mask=mask)
    img = widget.grab().toImage()
    assert not img.isNull()
    premultiplied = QtGui.QImage.Format.Format_ARGB32_Premultiplied
    for item in (widget.image_item, widget.overlay_item, widget.empty_row_marker_item):
        if item.isVisible():
            assert item.qimage is not None and item.qimage.format() == premultiplied
    lut = lookup_table(widget.colormap_name)
    assert _close(_pixel_of_cell(widget, img, 0, 4), lut[255][:3])


def _centre_patch(w: HeatmapWidget, img: QtGui.QImage, row: int, col: int, half: int = 6) -> np.ndarray:
    """RGB pixels of a small square around the centre of a cell in a grabbed image."""
    scene_pt = w.plot_item.getViewBox().mapViewToScene(QtCore.QPointF(col + 0.5, row + 0.5))
    pt = w._view.mapTo(w, w._view.mapFromScene(scene_pt))
    x, y = int(pt.x()), int(pt.y())
    return np.array(
        [[img.pixelColor(i, j).getRgb()[:3] for i in range(x - half, x + half)] for j in range(y - half, y + half)]
    )


def test_cell_values_are_drawn_in_contrasting_colour_and_on_a_patch_when_masked(qtbot, widget):
    values = np.array([[0.0, 1.0], [0.0, 0.0]])
    mask = np.array([[True, True], [True, False]])
    _shown(qtbot, widget)
    widget.set_data(values, mask=mask)
    img = widget.grab().toImage()
    dark_cell = _centre_patch(widget, img, 0, 0)  # cividis 0: dark blue, light digits on it
    bright_cell = _centre_patch(widget, img, 0, 1)  # cividis 1: yellow, dark digits on it
    assert (dark_cell.min(axis=2) > 200).any()
    assert (bright_cell.max(axis=2) < 80).any()
    masked = _centre_patch(widget, img, 1, 1)  # hatched cell: the digits sit on solid mask grey
    assert (np.abs(masked - np.array(MASK_COLOR[:3])).max(axis=2) <= 6).mean() > 0.3
    # Without annotations the same cells are flat colour.
    widget.annotate_limit = 0
    widget.set_data(values, mask=mask)
    img = widget.grab().toImage()
    assert np.ptp(_centre_patch(widget, img, 0, 0), axis=(0, 1)).max() <= 6


def test_block_mean_matches_pyqtgraphs_downsample():
    rng = np.random.default_rng(4)
    a = rng.random((203, 307), dtype=np.float32)
    a[5, 9] = np.nan
    a[50, 60] = np.inf
    a[100, 100], a[100, 101] = np.inf, -np.inf
    for ky, kx in [(1, 2), (3, 1), (4, 5), (7, 13)]:
        with np.errstate(invalid="ignore"):  # inf + -inf
            ref = pg.functions.downsample(pg.functions.downsample(a, kx, axis=1), ky, axis=0)
        np.testing.assert_allclose(block_mean(a, ky, kx), ref, rtol=1e-5, equal_nan=True)
    half = a.astype(np.float16)
    assert block_mean(half, 2, 2).dtype == np.float32


def test_big_matrix_is_drawn_downsampled_but_kept_whole(qtbot, widget):
    n = 3000
    values = np.zeros((n, n), np.float32)
    values[:, n // 2 :] = 1.0  # right half bright
    widget.annotate_limit = 0
    _shown(qtbot, widget)
    widget.set_data(values)
    img = widget.grab().toImage()
    item = widget.image_item
    kx, ky = item._lastDownsample
    assert kx > 1 and ky > 1
    assert item.image.shape == (n, n)  # the item keeps the full matrix (hover, size per cell)
    assert item.qimage.width() == n // kx and item.qimage.height() == n // ky
    lut = lookup_table(widget.colormap_name)
    assert _close(_pixel_of_cell(widget, img, n // 2, n // 4), lut[0])
    assert _close(_pixel_of_cell(widget, img, n // 2, 3 * n // 4), lut[255])


def test_a_read_only_matrix_is_kept_without_a_copy_and_a_writable_one_is_copied(widget):
    frozen = np.random.default_rng(5).random((3, 4))
    frozen.setflags(write=False)
    widget.set_data(frozen)
    assert widget.values is frozen
    writable = np.random.default_rng(6).random((3, 4))
    widget.set_data(writable)
    assert widget.values is not writable and not np.shares_memory(widget.values, writable)


def test_nan_cells_survive_a_change_of_downsampling(qtbot, widget):
    """pyqtgraph remembers where the NaN cells are; after a render at full size those positions
    must not be applied to the averaged image (IndexError in paint, blank heatmap)."""
    import sys

    values = np.random.default_rng(7).random((600, 600)).astype(np.float32)
    values[590, 595] = np.nan
    values.setflags(write=False)
    widget.annotate_limit = 0
    widget.resize(1400, 1000)
    _shown(qtbot, widget)
    widget.set_data(values)
    widget.grab()
    errors: list[BaseException] = []
    hook = sys.excepthook
    sys.excepthook = lambda *a: errors.append(a[1])
    try:
        widget.resize(500, 300)
        QtCore.QCoreApplication.processEvents()
        img = widget.grab().toImage()
        QtCore.QCoreApplication.processEvents()
    finally:
        sys.excepthook = hook
    assert errors == []
    assert widget.image_item._lastDownsample != (1, 1)
    qimage = widget.image_item.qimage
    assert qimage is not None and not img.isNull()
    # The averaged block holding the NaN is transparent in the rendered image, and only it.
    kx, ky = widget.image_item._lastDownsample
    alpha = np.array([[qimage.pixelColor(x, y).alpha() for x in range(qimage.width())] for y in range(qimage.height())])
    assert alpha[590 // ky, 595 // kx] == 0 and (alpha == 0).sum() == 1


def test_presentation_scale_enlarges_the_drawn_cell_values(qtbot, widget):
    """The cell values are drawn with the layer's font (drawStaticText uses the painter's)."""
    widget.set_colormap("gray")
    _shown(qtbot, widget)

    def ink_height() -> int:
        widget.set_data(np.zeros((1, 1)))  # black cell, light digits "0.00"
        img = widget.grab().toImage()
        with_text = _centre_patch(widget, img, 0, 0, half=30)
        widget.annotate_limit = 0
        widget.set_data(np.zeros((1, 1)))
        plain = _centre_patch(widget, widget.grab().toImage(), 0, 0, half=30)
        widget.annotate_limit = 16
        rows = np.flatnonzero((np.abs(with_text.astype(int) - plain.astype(int)).max(axis=2) > 60).any(axis=1))
        return int(rows.max() - rows.min() + 1) if rows.size else 0

    normal = ink_height()
    widget.set_font_scale(1.8)
    big = ink_height()
    assert normal > 0 and big >= 1.5 * normal


def test_a_subclass_with_its_own_colour_table_picks_the_digits_colour_from_it(qtbot, widget):
    """The compare view's difference map (DivergingHeatmap) has a colour table that is none of
    COLORMAPS and supplies the cell colours the digits' contrast is chosen from."""
    from attnviz.ui.views.side_by_side import DivergingHeatmap

    diff = DivergingHeatmap()
    qtbot.addWidget(diff)
    values = np.array([[-1.0, 0.0, 1.0]])
    dark_text = QtGui.QColor(20, 20, 20)
    diff.set_data(values, levels=(-1.0, 1.0))
    widget.set_data(values, levels=(-1.0, 1.0))
    # CET-CBD1 runs light blue - light grey - yellow: dark digits everywhere; cividis starts
    # dark blue, where the digits are light.
    assert [cell.color == dark_text for cell in diff.annotations] == [True, True, True]
    assert [cell.color == dark_text for cell in widget.annotations] == [False, True, True]


# ------------------------------------------------------------------------ readability at any size


def test_masked_cells_are_tinted_when_too_small_for_stripes_and_hatched_when_large(qtbot):
    w = HeatmapWidget()
    qtbot.addWidget(w)
    w.resize(500, 400)
    w.show()
    qtbot.waitExposed(w)
    mask = np.ones((512, 512), bool)
    mask[:, 400:] = False
    w.set_data(np.full((512, 512), 1 / 400), mask=mask)
    assert w.overlay_tinted  # under a pixel per cell: stripes would be grey noise
    img = w.overlay_item.image
    assert img.shape[:2] == (512, 512)  # one flat pixel per cell
    assert len({tuple(px) for px in img[:, 400:].reshape(-1, 4)}) == 1  # one uniform tint
    w.set_data(np.full((4, 4), 0.25), mask=np.tril(np.ones((4, 4), bool)))
    assert w.overlay_item.isVisible() and not w.overlay_tinted  # big cells: hatched


def test_zooming_in_turns_a_tint_back_into_hatching(qtbot):
    w = HeatmapWidget()
    qtbot.addWidget(w)
    w.resize(500, 400)
    w.show()
    qtbot.waitExposed(w)
    mask = np.ones((300, 300), bool)
    mask[:, 200:] = False
    w.set_data(np.random.default_rng(0).random((300, 300)), mask=mask)
    assert w.overlay_tinted
    w.plot_item.getViewBox().setRange(xRange=(190, 210), yRange=(0, 20), padding=0)
    qtbot.waitUntil(lambda: not w.overlay_tinted, timeout=2000)


def test_a_flat_map_says_constant_and_every_colour_bar_has_labels(widget):
    from PySide6.QtWidgets import QApplication  # noqa: F401 - a running app for the fonts

    widget.set_data(np.full((3, 4), -0.09), levels=None)
    assert widget.constant == pytest.approx(-0.09)
    ticks = widget.colorbar.axis._tickLevels[0]
    assert len(ticks) == 1 and "constant" in ticks[0][1] and "-0.09" in ticks[0][1]
    # A range from the book's -1e6 fill to a few units: pyqtgraph's own ticks were none.
    values = np.array([[-1e6, 0.5, 2.0]])
    widget.set_data(values, levels=None)
    labels = [label for _value, label in widget.colorbar.axis._tickLevels[0]]
    assert labels[0] == "-1e+06" and labels[-1] == "2" and widget.constant is None


def test_a_log_scale_shows_small_weights_apart_and_labels_powers_of_ten(widget):
    weights = np.array([[1e-4, 1e-3, 1e-2, 0.0]])
    widget.set_data(weights, levels=(1e-4, 1e-2), log=True)
    assert widget.log_scale
    shown = widget.image_item.image
    np.testing.assert_allclose(shown[0, :3], [-4, -3, -2], atol=1e-6)
    assert shown[0, 3] == pytest.approx(-4)  # zero sits at the bottom of the scale
    assert widget.values[0, 0] == pytest.approx(1e-4)  # hover and cell texts keep the weights
    assert [label for _v, label in widget.colorbar.axis._tickLevels[0]][-1] == "0.01"
    with pytest.raises(ValueError, match="positive low end"):
        widget.set_data(weights, levels=(0.0, 1.0), log=True)


def test_digits_on_striped_cells_get_a_halo_and_crowded_digits_are_hidden(qtbot):
    w = HeatmapWidget()
    qtbot.addWidget(w)
    w.show_masked_values = True
    w.resize(700, 300)
    w.show()
    qtbot.waitExposed(w)
    mask = np.array([[True, True, False, False]])
    w.set_data(np.array([[0.25, 0.25, 0.25, 0.25]]), mask=mask)  # masked but given weight
    halo = [cell.halo for cell in w.annotations]
    assert halo == [False, False, True, True]
    qtbot.waitUntil(lambda: w.annotations_legible, timeout=2000)  # once the view has laid out
    # Sixteen columns in 260 pixels: with the gap a value needs, they would run together.
    w.set_data(np.full((1, 16), 0.06))
    w.resize(260, 300)
    qtbot.waitUntil(lambda: not w.annotations_legible, timeout=2000)


def test_a_language_switch_keeps_the_owners_axis_names_and_translates_the_defaults(qtbot, qapp):
    """The output map names its columns "Value dimension"; its heatmap was built with the default
    names, and at each language switch it put back "Keys" after the panel had retranslated its own."""
    from attnviz.ui.app.results_panel import OutputPanel
    from attnviz.ui.i18n import install_language

    panel = OutputPanel()
    qtbot.addWidget(panel)
    owners_x = HeatmapWidget(y_label="Layers")
    qtbot.addWidget(owners_x)
    owners_x.set_axis_labels(x_label="Heads")

    def titles(w: HeatmapWidget) -> tuple[str, str]:
        return w.plot_item.getAxis("bottom").labelText, w.plot_item.getAxis("left").labelText

    assert titles(panel.heatmap) == ("Value dimension", "Queries")
    try:
        for language, output_titles, owners_titles in (
            ("pt_BR", ("Dimensão do valor", "Consultas"), ("Heads", "Layers")),
            ("en", ("Value dimension", "Queries"), ("Heads", "Layers")),
            ("pt_BR", ("Dimensão do valor", "Consultas"), ("Heads", "Layers")),
        ):
            assert install_language(qapp, language)
            assert titles(panel.heatmap) == output_titles, language
            assert titles(owners_x) == owners_titles, language
        fresh = HeatmapWidget()  # nobody names its axes: they follow the language
        qtbot.addWidget(fresh)
        assert titles(fresh) == ("Chaves", "Consultas")
        install_language(qapp, "en")
        assert titles(fresh) == ("Keys", "Queries")
    finally:
        install_language(qapp, "en")


def test_a_flat_maps_colour_bar_label_is_drawn(qtbot, widget):
    """A flat map (the additive toy's scores: identical keys) says "0.3 (constant)" on its bar:
    pyqtgraph dropped that text, wider than the bar's fixed 45-pixel axis, leaving no label."""
    from PySide6 import QtGui

    widget.set_data(np.full((2, 10), 0.3), levels=None)
    widget.resize(600, 300)
    widget.show()
    qtbot.wait(20)
    axis = widget.colorbar.axis
    image = QtGui.QImage(200, 400, QtGui.QImage.Format.Format_ARGB32)
    painter = QtGui.QPainter(image)
    texts = axis.generateDrawSpecs(painter)[2]
    painter.end()
    assert [text for _rect, _flags, text in texts] == ["0.3 (constant)"]
    room = axis.width()
    widget.set_data(np.random.default_rng(0).random((2, 10)), levels=(0.0, 1.0))
    qtbot.wait(20)
    # Ordinary ticks keep the room (it only grows between fonts: a width following every
    # result's labels would lay the plot out twice per keystroke), and are drawn in it.
    assert axis.width() == room
