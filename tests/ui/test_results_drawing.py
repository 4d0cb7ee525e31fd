"""Big results are drawn without stalling the GUI thread: the weights maps are prepared on the
compute thread, by the panel's computation (``ResultsPanel.pictures``), with each result and
alone for another scale or batch element; the GUI thread only shows them."""

from __future__ import annotations

import threading
import weakref

import numpy as np
import pytest

from attnviz.bench.app_bench import random_state
from attnviz.state.document import ReplaceState
from attnviz.ui.app import results_panel
from attnviz.ui.app.results_panel import PreparedWeights, weight_levels
from tests.ui.conftest import wait_current
from tests.ui.test_heatmap_prepared import forbid_whole_matrix_passes


def _load(qtbot, window, state) -> None:
    window.session.push(ReplaceState(state, "big"))
    wait_current(qtbot, window)


def _edit(qtbot, window, text: str) -> None:
    model = window.inputs.models["queries"]
    assert model.setData(model.index(0, 0), text)
    wait_current(qtbot, window)


def _guard_panel(monkeypatch) -> list[str]:
    called = forbid_whole_matrix_passes(monkeypatch)
    for name in ("weight_levels", "shown_mask"):
        original = getattr(results_panel, name)

        def guarded(view_or_weights, *args, _name=name, _original=original):
            weights = getattr(view_or_weights, "weights", view_or_weights)
            if threading.get_ident() == threading.main_thread().ident and weights.size >= 1 << 18:
                called.append(_name)
                raise AssertionError(f"{_name} on the GUI thread")
            return _original(view_or_weights, *args)

        monkeypatch.setattr(results_panel, name, guarded)
    return called


def test_a_big_result_is_drawn_from_maps_prepared_on_the_compute_thread(window, qtbot, monkeypatch):
    _load(qtbot, window, random_state(1, 1024, 16, seed=1))
    called = _guard_panel(monkeypatch)
    _edit(qtbot, window, "0.75")
    heatmap = window.results.maps[0]
    heatmap.grab()  # the paint: the data and the overlay pictures
    assert called == []
    view = window.session.current_view()
    prepared = window.results.prepared_pictures
    assert isinstance(prepared, PreparedWeights) and prepared.batches == (0,) and prepared.view is view
    assert heatmap.image_item.source is not None  # drawn a screen at a time
    assert heatmap.values is prepared.maps[0].values
    with np.errstate(all="ignore"):
        expected = weight_levels(np.array(view.weights[0:1]), view.mask[0:1], "batch")
    assert heatmap.levels == expected
    # The hover of the result panel: every number of the cell.
    assert heatmap._hover_text_for(3, 5) == results_panel.hover_text(view, 0, 3, 5)

    # Another scale: prepared on the compute thread alone, the map drawn once it is ready.
    window.session.set_color_range("log")
    qtbot.waitUntil(lambda: heatmap.log_scale, timeout=20000)
    heatmap.grab()
    assert called == []
    low, top = heatmap.levels
    assert 0 < low < top
    # Edits on that scale come prepared for it from the compute thread.
    _edit(qtbot, window, "0.5")
    prepared = window.results.prepared_pictures
    assert prepared.view is window.session.current_view() and prepared.color_range == "log"
    assert heatmap.log_scale and heatmap.values is prepared.maps[0].values
    assert called == []


def test_another_batch_element_of_a_big_batch_is_prepared_off_the_gui_thread(window, qtbot, monkeypatch):
    _load(qtbot, window, random_state(6, 512, 16, seed=2))  # more than MAX_GRID: one map at a time
    assert len(window.results.maps) == 1
    called = _guard_panel(monkeypatch)
    heatmap = window.results.maps[0]
    view = window.session.current_view()
    window.session.set_batch(4)
    qtbot.waitUntil(
        lambda: heatmap.values is not None and np.shares_memory(heatmap.values, view.weights[4]), timeout=20000
    )
    heatmap.grab()
    assert called == []
    assert "batch 4 of 6" in heatmap.title


def test_small_results_are_drawn_as_they_come(window, qtbot):
    _edit(qtbot, window, "0.25")  # the toy preset
    assert window.results.prepared_pictures is None  # nothing to prepare: drawn whole on the GUI thread
    assert all(m.image_item.source is None for m in window.results.maps)


@pytest.mark.parametrize("color_range", ["batch", "map", "unit"])
def test_prepared_maps_have_the_levels_the_panel_would_compute(color_range):
    """prepare_weights gives every map the scale show_view gives it drawing unprepared."""
    from attnviz.compute.attention import run_state

    view = run_state(random_state(3, 512, 16, seed=3)).view
    assert view is not None
    prepared = results_panel.prepare_weights(view, color_range, 0)
    assert prepared is not None and prepared.batches == (0, 1, 2)
    for b, m in zip(prepared.batches, prepared.maps):
        if color_range == "map":
            expected = weight_levels(view.weights[b], view.mask[b], "map")
        else:
            expected = weight_levels(view.weights[[0, 1, 2]], view.mask[[0, 1, 2]], color_range)
        assert m.levels == expected
        np.testing.assert_array_equal(m.allowed if m.allowed is not None else True, results_panel.shown_mask(view, b))
        assert m.show_masked_values


def test_big_pipeline_stages_are_prepared_off_the_gui_thread(window, qtbot, monkeypatch):
    dock = window.pipeline_dock
    dock.show()
    qtbot.waitUntil(lambda: dock.view().isVisible())
    pipeline = dock.view()
    _load(qtbot, window, random_state(1, 1024, 16, seed=4))
    called = _guard_panel(monkeypatch)
    _edit(qtbot, window, "0.25")
    view = window.session.current_view()
    stages = ("raw_scores", "scores", "mask", "masked_scores", "weights", "applied_weights")

    def drawn() -> bool:
        return all(
            np.shares_memory(pipeline.cards[s].heatmap.values, getattr(view, s)[0]) for s in stages if s != "mask"
        ) and pipeline.cards["mask"].heatmap.values.shape == (1024, 1024)

    qtbot.waitUntil(drawn, timeout=30000)
    for stage in stages:
        heatmap = pipeline.cards[stage].heatmap
        heatmap.grab()
        assert heatmap.image_item.source is not None  # a screen at a time
    assert called == []
    # The same maps as drawn whole: values, hatching of what the softmax masked, hover.
    weights = pipeline.cards["weights"].heatmap
    np.testing.assert_array_equal(weights._mask if weights._mask is not None else True, view.mask[0])
    np.testing.assert_array_equal(pipeline.cards["mask"].heatmap.values, view.mask[0].astype(np.float32))
    assert pipeline.cards["raw_scores"].heatmap.levels == (
        float(np.nanmin(view.raw_scores[0])),
        float(np.nanmax(view.raw_scores[0])),
    )
    text = weights._hover_text_for(2, 1000)
    assert "query 2, key 1000" in text and "(masked)" in text  # keys past 3/4 are padding


def test_replaced_pipeline_pictures_are_freed_off_the_gui_thread(window, qtbot):
    """Tens of MiB of pyramid per stage map: freeing them took the GUI thread ~5 ms."""
    dock = window.pipeline_dock
    dock.show()
    qtbot.waitUntil(lambda: dock.view().isVisible())
    pipeline = dock.view()
    _load(qtbot, window, random_state(1, 1024, 16, seed=5))
    qtbot.waitUntil(
        lambda: pipeline._prepared is not None and pipeline._prepared.request.view is window.session.current_view(),
        timeout=30000,
    )
    freed_on: list[bool] = []
    weakref.finalize(
        pipeline._prepared.maps["weights"].pyramid.images[1],
        lambda: freed_on.append(threading.get_ident() == threading.main_thread().ident),
    )
    _edit(qtbot, window, "0.125")
    qtbot.waitUntil(lambda: bool(freed_on), timeout=30000)
    assert freed_on == [False]


def test_maps_prepared_for_another_scale_are_freed_off_the_gui_thread(window, qtbot):
    _load(qtbot, window, random_state(1, 1024, 16, seed=6))
    heatmap = window.results.maps[0]
    window.session.set_color_range("unit")  # prepared alone on the compute thread, held by the panel only
    qtbot.waitUntil(lambda: heatmap.levels == (0.0, 1.0), timeout=20000)
    freed_on: list[bool] = []
    weakref.finalize(
        window.results._prepared.maps[0].pyramid.images[1],
        lambda: freed_on.append(threading.get_ident() == threading.main_thread().ident),
    )
    _edit(qtbot, window, "0.625")  # comes prepared for "unit" from the compute thread
    qtbot.waitUntil(lambda: bool(freed_on), timeout=30000)
    assert freed_on == [False]
