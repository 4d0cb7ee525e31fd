"""The pyqtgraph internals the heatmap's items rely on, pinned one by one.

``attnviz.ui.heatmap.items`` (and ``cell_text``, and the widget's colour bar and locator) use
attributes and methods of pyqtgraph that are not its documented API. A pyqtgraph release that
renames or changes one would not raise anywhere: the heatmap would silently draw the wrong
picture (stale NaN positions, a second downsampling, an axis that never redraws). Each test
here names what it pins and who relies on it, so such a release fails here first, clearly.
Written against pyqtgraph 0.14.0.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6 import QtCore, QtGui

from attnviz.ui.heatmap.items import CellAxisItem, FastImageItem, hold_tick_room
from attnviz.ui.heatmap.paint import block_mean


def _plot_with(qtbot, item: pg.GraphicsObject, size: tuple[int, int] = (300, 200)) -> pg.PlotWidget:
    """A shown plot holding ``item``, ranged to its image (so a big image is many cells a pixel)."""
    plot = pg.PlotWidget()
    qtbot.addWidget(plot)
    plot.resize(*size)
    plot.addItem(item)
    plot.show()
    qtbot.waitExposed(plot)
    if isinstance(item, pg.ImageItem) and item.image is not None:
        rows, cols = item.image.shape[:2]
        plot.getViewBox().setRange(xRange=(0, cols), yRange=(0, rows), padding=0)
    QtCore.QCoreApplication.processEvents()
    return plot


# --------------------------------------------------------------------------- ImageItem


IMAGE_ITEM_STATE = {
    # name: who relies on it
    "_imageHasNans": "FastImageItem.render resets pyqtgraph's NaN cache around the averaged image",
    "_imageNanLocations": "FastImageItem.render: the cached NaN positions must not outlive the image they index",
    "_lastDownsample": "FastImageItem.render records its own factors there (pyqtgraph compares them on zoom)",
    "_unrenderable": "FastImageItem._premultiply converts only a successfully rendered image",
    "qimage": "FastImageItem._premultiply replaces the rendered QImage by a premultiplied copy",
    "autoDownsample": "FastImageItem.render switches it off while pyqtgraph renders the averaged image",
    "axisOrder": "FastImageItem.render averages row-major images only",
}


@pytest.mark.parametrize("name", sorted(IMAGE_ITEM_STATE))
def test_image_item_has_the_state_fast_image_item_uses(qapp, name):
    item = pg.ImageItem()
    assert hasattr(item, name), f"pyqtgraph {pg.__version__}: ImageItem.{name} is gone; {IMAGE_ITEM_STATE[name]}"


def test_compute_downsample_factors_returns_two_ints_even_off_screen(qapp):
    """FastImageItem.render unpacks the factors and compares them with (1, 1). pyqtgraph 0.13
    returned (None, None) before the item was in a view (render would divide by None)."""
    item = pg.ImageItem(np.zeros((10, 10)), axisOrder="row-major")
    factors = item._computeDownsampleFactors()
    assert isinstance(factors, tuple) and len(factors) == 2
    assert all(isinstance(f, int) and f >= 1 for f in factors), factors


def test_compute_downsample_factors_are_cells_per_pixel_along_x_then_y(qtbot):
    """(x factor, y factor): FastImageItem.render swaps them for a row-major image."""
    item = pg.ImageItem(np.zeros((1000, 4000), np.float32), axisOrder="row-major")
    plot = _plot_with(qtbot, item, (400, 400))
    kx, ky = item._computeDownsampleFactors()
    view = plot.getViewBox().sceneBoundingRect()  # 4000 x 1000 cells over these pixels
    assert kx > 1 and ky > 1
    assert abs(kx - 4000 / view.width()) < 1 and abs(ky - 1000 / view.height()) < 1


def test_render_reads_image_and_auto_downsample_at_render_time(qtbot):
    """FastImageItem.render sets ``image`` to the averaged matrix and ``autoDownsample`` to
    False, calls pyqtgraph's render, and puts them back: pyqtgraph must render what is in the
    attributes then, with no second downsampling, and set ``qimage`` and ``_unrenderable``."""
    item = pg.ImageItem(np.zeros((3000, 3000), np.float32), axisOrder="row-major", levels=(0, 1))
    item.setAutoDownsample(True)
    plot = _plot_with(qtbot, item)  # noqa: F841  (keeps the view alive)
    small = np.ones((7, 5), np.float32)
    item.image, item.autoDownsample = small, False
    item._imageHasNans = None
    item._imageNanLocations = None
    item.render()
    assert item._unrenderable is False
    assert isinstance(item.qimage, QtGui.QImage)
    assert (item.qimage.width(), item.qimage.height()) == (5, 7)
    item.image = np.zeros((0, 0), np.float32)
    item.render()
    assert item._unrenderable is True  # FastImageItem._premultiply must then leave qimage alone


def test_render_caches_nan_positions_and_trusts_the_cache(qtbot):
    """pyqtgraph computes ``_imageHasNans`` once and ``_imageNanLocations`` (index arrays into the
    rendered image) once per downsampling, and reuses them: the reason FastImageItem resets both
    around the averaged image (a stale cache made paint raise IndexError, a blank heatmap)."""
    values = np.zeros((4, 6), np.float32)
    values[1, 2] = np.nan
    item = pg.ImageItem(values, axisOrder="row-major", levels=(0, 1))
    plot = _plot_with(qtbot, item)  # noqa: F841  (keeps the view alive)
    item.render()
    assert item._imageHasNans
    rows, cols = item._imageNanLocations
    assert rows.tolist() == [1] and cols.tolist() == [2]
    # A cached position is used as it is: pointing it elsewhere moves the transparent cell.
    item._imageNanLocations = (np.array([3]), np.array([5]))
    item.render()
    alpha = [[item.qimage.pixelColor(x, y).alpha() for x in range(6)] for y in range(4)]
    assert alpha[3][5] == 0 and alpha[1][2] != 0


def test_fast_image_item_renders_the_block_mean_and_keeps_the_full_matrix(qtbot):
    values = np.random.default_rng(0).random((3000, 2000)).astype(np.float32)
    values[1234, 567] = np.nan
    item = FastImageItem(axisOrder="row-major")
    item.setImage(values, autoLevels=False, levels=(0, 1), autoDownsample=True)
    plot = _plot_with(qtbot, item)  # noqa: F841  (keeps the view alive)
    item.render()
    kx, ky = item._lastDownsample
    assert kx > 1 and ky > 1
    assert item.image.shape == values.shape and item.autoDownsample
    assert item._imageHasNans is None and item._imageNanLocations is None
    assert item.qimage.format() == QtGui.QImage.Format.Format_ARGB32_Premultiplied
    assert (item.qimage.width(), item.qimage.height()) == block_mean(values, ky, kx).shape[::-1]
    assert item.qimage.pixelColor(567 // kx, 1234 // ky).alpha() == 0  # the NaN's block, transparent


def test_block_mean_matches_pyqtgraphs_downsample_with_nan_and_inf():
    """``block_mean`` stands in for pyqtgraph's ``functions.downsample`` (mean of each block;
    NaN and inf propagate)."""
    rng = np.random.default_rng(4)
    a = rng.random((50, 70)).astype(np.float32)
    a[5, 9], a[20, 30], a[40, 40], a[40, 41] = np.nan, np.inf, np.inf, -np.inf
    with np.errstate(invalid="ignore"):
        ref = pg.functions.downsample(pg.functions.downsample(a, 3, axis=1), 4, axis=0)
    np.testing.assert_allclose(block_mean(a, 4, 3), ref, rtol=1e-5, equal_nan=True)


# --------------------------------------------------------------------------- AxisItem


def _shown_axis(qtbot, side: str) -> tuple[CellAxisItem, pg.PlotWidget]:
    """A cell axis on ``side`` of a small plot on screen."""
    axis = CellAxisItem(side)
    plot = pg.PlotWidget(axisItems={side: axis})
    qtbot.addWidget(plot)
    plot.resize(300, 200)
    plot.show()
    qtbot.waitExposed(plot)
    return axis, plot


def test_axis_item_caches_its_drawing_in_picture(qtbot):
    """CellAxisItem.set_cell_labels drops ``picture`` so the new labels are drawn; pyqtgraph must
    keep its drawing there and draw again when it is None."""
    axis, plot = _shown_axis(qtbot, "bottom")
    plot.grab()
    assert isinstance(axis.picture, QtGui.QPicture)
    axis.set_cell_labels(["a", "b"])
    assert axis.picture is None
    plot.grab()
    assert isinstance(axis.picture, QtGui.QPicture)


def test_axis_item_style_orientation_and_tick_api(qapp):
    """CellAxisItem measures labels with ``style["tickFont"]`` (None until set), reads
    ``orientation``, and overrides ``tickValues(min, max, size)`` -> [(spacing, values)] and
    ``tickStrings(values, scale, spacing)``, calling pyqtgraph's own tickValues."""
    axis = pg.AxisItem("left")
    assert axis.orientation == "left"
    assert "tickFont" in axis.style and axis.style["tickFont"] is None
    font = QtGui.QFont()
    font.setPointSizeF(17.0)
    axis.setTickFont(font)
    assert axis.style["tickFont"] == font
    levels = axis.tickValues(0.0, 100.0, 400)
    assert levels and all(isinstance(spacing, float | int) and isinstance(values, list) for spacing, values in levels)
    assert axis.tickStrings([1.0, 2.0], 1.0, 1.0) == ["1", "2"]
    # pyqtgraph calls the overrides: a CellAxisItem's integer ticks sit at cell centres.
    cell_axis = CellAxisItem("bottom")
    strings = [s for _, vals in cell_axis.tickValues(0.0, 10.0, 400) for s in cell_axis.tickStrings(vals, 1.0, 1.0)]
    assert strings and all(s.isdigit() for s in strings)


# --------------------------------------------------------------------------- the widget's other items


def test_color_bar_item_api_the_widget_uses(qtbot):
    """HeatmapWidget inserts a non-interactive bar with ``setImageItem([], insert_in=plot)`` and
    styles, fonts and compares its ``axis`` and ``levels()``."""
    plot = pg.PlotWidget()
    qtbot.addWidget(plot)
    bar = pg.ColorBarItem(
        values=(0.0, 1.0), colorMap=pg.colormap.get("viridis"), interactive=False, width=16, colorMapMenu=False
    )
    bar.setImageItem([], insert_in=plot.getPlotItem())
    assert bar.parentItem() is plot.getPlotItem()
    assert isinstance(bar.axis, pg.AxisItem)
    assert tuple(bar.levels()) == (0.0, 1.0)
    bar.setLevels((2.0, 5.0))
    assert tuple(bar.levels()) == (2.0, 5.0)


def test_scatter_plot_item_data_counts_its_points(qapp):
    """HeatmapWidget._hide_locator reads ``len(scatter.data)`` to skip clearing an empty scatter."""
    scatter = pg.ScatterPlotItem()
    assert len(scatter.data) == 0
    scatter.setData(x=[0.5, 1.5], y=[0.5, 0.5])
    assert len(scatter.data) == 2
    scatter.clear()
    assert len(scatter.data) == 0


def test_device_transform_is_none_off_screen(qtbot):
    """CellTextLayer.legible calls ``deviceTransform_()``: None when the item is in no view."""
    item = pg.ImageItem(np.zeros((2, 2)))
    assert item.deviceTransform_() is None
    plot = _plot_with(qtbot, item)  # noqa: F841  (keeps the view alive)
    transform = item.deviceTransform_()
    assert isinstance(transform, QtGui.QTransform) and transform.m11() > 0


def test_image_item_set_image_keeps_explicit_levels_and_rect(qtbot):
    """HeatmapWidget passes ``levels``/``autoLevels=False``/``autoDownsample`` to ``setImage``
    and stretches the overlay with ``setRect``: both must be honoured as given."""
    item = pg.ImageItem(axisOrder="row-major")
    item.setImage(np.zeros((4, 6), np.float32), autoLevels=False, levels=(-2.0, 3.0), autoDownsample=True)
    assert tuple(item.levels) == (-2.0, 3.0) and item.autoDownsample
    item.setRect(QtCore.QRectF(0, 0, 3, 2))
    assert item.mapRectToParent(item.boundingRect()) == QtCore.QRectF(0, 0, 3, 2)


# --------------------------------------------------------------------------- room for tick labels


def test_held_tick_room_does_not_shrink_when_labels_get_shorter(qtbot):
    """``hold_tick_room`` relies on AxisItem's ``textWidth`` / ``textHeight``, its
    ``autoReduceTextSpace`` style and ``_adjustSize``: an axis given room for six digits keeps
    its width when its labels shrink to one digit (pyqtgraph's default shrinks it, which relays
    the plot out and paints it again)."""

    def width_after(labels: list[str], *, held: bool) -> tuple[float, float]:
        axis, plot = _shown_axis(qtbot, "left")
        if held:
            hold_tick_room(axis, "000000")
        plot.getViewBox().setRange(yRange=(0, 2), padding=0)

        def settled_width(cells: list[str]) -> float:
            axis.set_cell_labels(cells)
            for _ in range(3):  # paint (measures the labels), relayout, paint again
                plot.grab()
                QtCore.QCoreApplication.processEvents()
            return axis.width()

        return settled_width(["123456", "234567"]), settled_width(labels)

    wide, narrow = width_after(["1", "2"], held=False)
    assert narrow < wide  # pyqtgraph's own behaviour, which the helper changes
    wide, kept = width_after(["1", "2"], held=True)
    assert kept == wide


# --------------------------------------------------------------------------- RGBA overlays


def test_an_rgba_overlay_renders_the_same_pixels_as_pyqtgraphs_own_path(qtbot):
    """FastImageItem hands uint8 RGBA with levels 0-255 to Qt directly; the image equals what
    pyqtgraph's general path makes of it (premultiplied the same way)."""
    rng = np.random.default_rng(0)
    rgba = rng.integers(0, 256, (40, 60, 4), dtype=np.uint8)
    rgba[..., 3] = rng.choice([0, 90, 255], (40, 60)).astype(np.uint8)
    fast, plain = FastImageItem(axisOrder="row-major"), pg.ImageItem(axisOrder="row-major")
    for item in (fast, plain):
        item.setImage(rgba, autoLevels=False, levels=(0, 255), autoDownsample=False)
        item.render()
    assert fast.qimage is not None and plain.qimage is not None
    a = fast.qimage.convertToFormat(QtGui.QImage.Format.Format_ARGB32_Premultiplied)
    b = plain.qimage.convertToFormat(QtGui.QImage.Format.Format_ARGB32_Premultiplied)
    assert (a.width(), a.height()) == (60, 40) and a == b
