"""A big matrix prepared off the GUI thread (prepare.prepare_map) and shown with
HeatmapWidget.show_prepared: drawn a screen at a time, with what the user sees unchanged.

Pixel tests look at what is rendered (widget.grab()): the colours of cells zoomed out and
zoomed in, the masked tint and hatching. The guard test checks that nothing shown from a
prepared map passes over every cell on the GUI thread.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from PySide6 import QtCore

from attnviz.ui.heatmap import items, paint, plot, prepare
from attnviz.ui.heatmap import widget as widget_module
from attnviz.ui.heatmap.colormaps import MASK_COLOR, MASK_HATCH_COLOR, lookup_table
from attnviz.ui.heatmap.prepare import PYRAMID_MIN_CELLS, prepare_map
from attnviz.ui.heatmap.widget import HeatmapWidget
from tests.ui.test_heatmap import _centre_patch, _close, _pixel_of_cell, _shown


@pytest.fixture
def widget(qtbot):
    w = HeatmapWidget()
    qtbot.addWidget(w)
    w.resize(640, 480)
    w.annotate_limit = 0
    return w


def forbid_whole_matrix_passes(monkeypatch) -> list[str]:
    """Make the functions that pass over every cell fail when the GUI thread calls them on a big
    matrix; returns the names of those called (the test fails at the first anyway)."""
    main = threading.main_thread().ident
    called: list[str] = []

    def guard(module: object, name: str) -> None:
        original = getattr(module, name)

        def guarded(*args: object, **kwargs: object) -> object:
            # get_ident, not current_thread: that would register the compute thread with threading.
            big = any(isinstance(a, np.ndarray) and a.size >= PYRAMID_MIN_CELLS for a in (*args, *kwargs.values()))
            if big and threading.get_ident() == main:
                called.append(name)
                raise AssertionError(f"{name} passed over a whole big matrix on the GUI thread")
            return original(*args, **kwargs)

        monkeypatch.setattr(module, name, guarded)

    for name in (
        "display_values",
        "allowed_cells",
        "resolve_levels",
        "constant_value",
        "special_cells",
        "overlay_codes",
        "overlay_image",
        "locator_points",
        "log_display",
        "block_mean",
        "cell_colors",
        "opaque_masked",
    ):
        guard(paint, name)
    for name in ("prepare_map", "build_pyramid", "special_cells", "overlay_codes", "locator_points", "log_display"):
        guard(prepare, name)
    guard(widget_module, "prepare_map")
    guard(items, "block_mean")
    return called


def _prepared_off_the_gui_thread(values: np.ndarray, **kwargs: object) -> prepare.PreparedMap:
    out: list[prepare.PreparedMap] = []
    worker = threading.Thread(target=lambda: out.append(prepare_map(values, **kwargs)))
    worker.start()
    worker.join()
    return out[0]


def _masked_values(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Left half 0, right half 1, the last quarter of the keys masked (weight 0 there), a NaN
    and an empty row."""
    values = np.zeros((n, n), dtype=np.float32)
    values[:, n // 2 :] = 1.0
    mask = np.ones((n, n), bool)
    mask[:, 3 * n // 4 :] = False
    values[~mask] = 0.0
    values[5, 7] = np.nan
    mask[100] = False  # a query with no valid key
    return values, mask


def test_a_prepared_big_map_looks_and_hovers_as_set_data_draws_it(qtbot, widget, monkeypatch):
    n = 1024
    values, mask = _masked_values(n)
    _shown(qtbot, widget)
    prepared = _prepared_off_the_gui_thread(values, mask=mask)
    called = forbid_whole_matrix_passes(monkeypatch)
    widget.show_prepared(prepared)
    img = widget.grab().toImage()
    assert called == []
    # The item keeps the whole matrix (its size and hover are per cell); the image rendered
    # is a screen's worth, not the matrix.
    assert widget.values is prepared.values and widget.image_item.image.shape == (n, n)
    view_px = widget.plot_item.getViewBox().boundingRect()
    qimage = widget.image_item.qimage
    assert qimage.width() <= view_px.width() + 1 and qimage.height() <= view_px.height() + 1
    lut = lookup_table(widget.colormap_name)
    assert _close(_pixel_of_cell(widget, img, 500, 100), lut[0])
    assert _close(_pixel_of_cell(widget, img, 500, 600), lut[255])
    # The masked quarter: the flat masked tint over the colour of weight 0.
    tint = paint.overlay_image(np.array([[1]], dtype=np.uint8), 1, tint=True)[0, 0].astype(float)
    over = tint[:3] * tint[3] / 255 + lut[0][:3] * (1 - tint[3] / 255)
    assert widget.overlay_tinted
    assert _close(_pixel_of_cell(widget, img, 500, 900), over, tol=8)
    # Markers on the NaN cell and the empty row; the empty row's bar and tooltip.
    xs, ys = widget.locator_item.getData()
    points = set(zip(xs.tolist(), ys.tolist()))
    assert (7.5, 5.5) in points and any(y == 100.5 for _x, y in points)
    assert widget.empty_rows == (100,)
    # Hover: exactly the cell under the mouse.
    vb = widget.plot_item.getViewBox()
    widget._on_mouse_moved(vb.mapViewToScene(QtCore.QPointF(600.5, 3.5)))
    assert widget.hover_text == "query 3, key 600: 1"
    widget._on_mouse_moved(vb.mapViewToScene(QtCore.QPointF(900.5, 3.5)))
    assert widget.hover_text.startswith("query 3, key 900: 0") and "masked" in widget.hover_text
    widget._on_mouse_moved(vb.mapViewToScene(QtCore.QPointF(7.5, 5.5)))
    assert widget.hover_text == "query 5, key 7: NaN"
    assert called == []


@pytest.mark.slow
def test_a_prepared_4096_square_is_shown_zoomed_and_hovered_with_no_pass_over_its_cells(qtbot, widget, monkeypatch):
    n = 4096
    values = np.random.default_rng(3).random((n, n), dtype=np.float32)
    values[5, 7] = np.nan
    mask = np.tril(np.ones((n, n), bool))
    _shown(qtbot, widget)
    prepared = _prepared_off_the_gui_thread(values, mask=mask)
    called = forbid_whole_matrix_passes(monkeypatch)
    widget.show_prepared(prepared)
    img = widget.grab().toImage()
    # Upper-right corner is masked: the flat masked grey; the NaN cell has its marker.
    r, g, b = _pixel_of_cell(widget, img, 10, n - 10)
    assert abs(r - g) < 8 and abs(g - b) < 8 and 60 < r < 230
    assert (7.5, 5.5) in set(zip(*(a.tolist() for a in widget.locator_item.getData())))
    vb = widget.plot_item.getViewBox()
    for span in (3000, 1500, 600, 40):  # every level of the pyramid, then the cells themselves
        vb.setRange(xRange=(1000, 1000 + span), yRange=(2000, 2000 + span * 0.7), padding=0)
        widget.grab()
    widget._on_mouse_moved(vb.mapViewToScene(QtCore.QPointF(1010.5, 2020.5)))
    assert widget.hover_text == f"query 2020, key 1010: {paint.format_number(float(values[2020, 1010]))}"
    assert called == []


def test_zooming_into_a_prepared_map_shows_the_exact_cells_and_hatching(qtbot, widget, monkeypatch):
    n = 1024
    rng = np.random.default_rng(4)
    values = rng.random((n, n)).astype(np.float32)
    mask = rng.random((n, n)) < 0.7
    values[~mask & (rng.random((n, n)) < 0.5)] = 0.0  # some masked cells have no weight
    widget.show_masked_values = True
    _shown(qtbot, widget)
    called = forbid_whole_matrix_passes(monkeypatch)
    widget.show_prepared(_prepared_off_the_gui_thread(values, mask=mask, show_masked_values=True))
    widget.grab()
    vb = widget.plot_item.getViewBox()
    vb.setRange(xRange=(300, 310), yRange=(200, 206), padding=0)
    img = widget.grab().toImage()
    assert not widget.overlay_tinted  # cells of tens of pixels: hatched, as a small matrix
    r0, c0 = 200, 300
    region = values[r0 : r0 + 6, c0 : c0 + 10]
    allowed = mask[r0 : r0 + 6, c0 : c0 + 10]
    cells = paint.special_cells(region, allowed)
    colours = paint.cell_colors(
        region,
        widget.levels,
        lookup_table(widget.colormap_name),
        cells,
        paint.opaque_masked(region, cells.masked, True),
    )
    checked = {"exact": 0, "hatched": 0}
    for r in range(6):
        for c in range(10):
            if allowed[r, c]:  # each cell is its own exact colour, not a blend of its neighbours
                assert _close(_pixel_of_cell(widget, img, r0 + r, c0 + c), colours[r, c])
                checked["exact"] += 1
            elif region[r, c] == 0:  # masked without weight: grey with dark hatching
                patch = {tuple(p) for p in _centre_patch(widget, img, r0 + r, c0 + c, half=10).reshape(-1, 3)}
                assert any(_close(p, MASK_COLOR[:3]) for p in patch)
                assert any(_close(p, MASK_HATCH_COLOR[:3]) for p in patch)
                checked["hatched"] += 1
    assert checked["exact"] > 20 and checked["hatched"] > 3
    # Hover still names the exact cell.
    widget._on_mouse_moved(vb.mapViewToScene(QtCore.QPointF(c0 + 2.5, r0 + 1.5)))
    assert widget.hover_text.startswith(f"query {r0 + 1}, key {c0 + 2}: {paint.format_number(float(region[1, 2]))}")
    # Zoomed out again: a tint, and a screen's worth of pixels.
    vb.setRange(xRange=(0, n), yRange=(0, n), padding=0)
    widget.grab()
    assert widget.overlay_tinted
    assert called == []


def test_the_guard_catches_passes_over_a_big_matrix_on_the_gui_thread(widget, monkeypatch):
    """The guard above is no test that cannot fail: set_data does its passes right here."""
    called = forbid_whole_matrix_passes(monkeypatch)
    with pytest.raises(AssertionError, match="GUI thread"):
        widget.set_data(np.zeros((1024, 1024), dtype=np.float32))
    assert called


def test_small_maps_and_set_data_are_still_drawn_whole(qtbot, widget):
    values, mask = _masked_values(600)
    widget.set_data(values, mask=mask)  # 360,000 cells, but set_data: drawn whole as before
    assert widget.image_item.source is None and widget.image_item.autoDownsample
    small = prepare_map(values[:100, :100], mask=mask[:100, :100])
    assert small.pyramid is None
    widget.show_prepared(small)
    assert widget.image_item.source is None and widget.image_item.image.shape == (100, 100)
    # From a pyramid back to drawn whole: the overlay is the whole one again, stretched on the cells.
    widget.show_prepared(prepare_map(values, mask=mask))
    assert widget.image_item.source is not None and widget.overlay_item.source is not None
    widget.set_data(values, mask=mask)
    assert widget.image_item.source is None and widget.overlay_item.source is None
    assert widget.overlay_item.image.shape[:2] == (600, 600) and widget.overlay_item.isVisible()
    with pytest.raises(ValueError, match="show_masked_values"):
        widget.show_prepared(prepare_map(values, show_masked_values=True))


def test_a_prepared_map_drawn_again_in_an_unmoved_view_uses_its_ready_picture(qtbot, widget, monkeypatch):
    values, mask = _masked_values(1024)
    _shown(qtbot, widget)
    widget.show_prepared(prepare_map(values, mask=mask))
    widget.grab()
    frame = widget.last_frame
    assert frame is not None
    again = prepare_map(values * 0.5, mask=mask, frame=frame)
    monkeypatch.setattr(plot, "picture", lambda *a: pytest.fail("the picture was ready"))
    widget.show_prepared(again)
    widget.grab()
    assert widget.last_frame == frame


def test_labels_given_again_are_kept_and_any_sequence_is_taken(widget):
    labels = [f"t{i}" for i in range(5)]
    widget.set_data(np.zeros((5, 5)), row_labels=labels, col_labels=np.array(labels))
    kept = widget._row_labels
    widget.set_data(np.ones((5, 5)), row_labels=list(labels), col_labels=tuple(labels))
    assert widget._row_labels is kept and widget.row_labels == labels and widget.col_labels == labels
    widget.set_data(np.ones((5, 5)), row_labels=list(range(5)))
    assert widget.row_labels == ["0", "1", "2", "3", "4"]
    with pytest.raises(ValueError, match="row_labels"):
        widget.set_data(np.ones((5, 5)), row_labels=labels[:4])
