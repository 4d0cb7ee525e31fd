"""The long-context view: an overview in bins that equals the full matrix's, exact tiles on
click, lines per query and per key, and a newer request stopping an older one."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from attnviz.state.document import ReplaceState, Settings, State
from attnviz.state.run import MaskArguments
from tests.ui.conftest import wait_current


def long_state(n: int = 600, *, window: int = 64):
    rng = np.random.default_rng(1)
    queries, keys, values = (rng.standard_normal((1, n, 16)) for _ in range(3))
    pad = np.ones((1, n), np.int64)
    pad[0, -50:] = 0
    settings = Settings(scoring="scaled_dot", lens_mode="none", window=window, dtype="float64")
    masks = MaskArguments(attention_mask=pad)
    return State.from_tensors(queries, keys, values, settings=settings, masks=masks, causal="top_left")


@pytest.fixture
def view(qtbot):
    from attnviz.ui.window.main_window import MainWindow

    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    win.session.push(ReplaceState(long_state()))
    wait_current(qtbot, win)
    win.long_dock.show()
    win.long_dock.raise_()
    v = win.long_dock.view()
    qtbot.waitUntil(lambda: v.result is not None and v.result.mean is not None, timeout=30000)
    return win, v


def test_the_overview_and_a_clicked_tile_equal_the_main_views_weights(qtbot, view):
    win, v = view
    weights = win.session.current_view().weights[0]  # the full matrix, computed the plain way
    r = v.result
    assert r.error is None and r.mean.shape == (300, 300)  # 600 rows in bins of 2: at most 512 bins
    edges_r, edges_c = r.row_edges, r.col_edges
    i, j = 150, 140
    block = weights[edges_r[i] : edges_r[i + 1], edges_c[j] : edges_c[j + 1]]
    assert r.mean[i, j] == pytest.approx(block.mean(), abs=1e-9)
    assert r.max[i, j] == pytest.approx(block.max(), abs=1e-9)
    np.testing.assert_allclose(r.column_sums, weights.sum(axis=0), atol=1e-9)
    v.overview_map.cellClicked.emit(i, j, None)
    qtbot.waitUntil(
        lambda: v.tile is not None and v.tile.request.rows[0] <= edges_r[i] < v.tile.request.rows[1], timeout=10000
    )
    (r0, r1), (c0, c1) = v.tile.request.rows, v.tile.request.cols
    np.testing.assert_allclose(v.tile.weights, weights[r0:r1, c0:c1], atol=1e-9)
    np.testing.assert_allclose(v.tile.row, weights[v.tile.request.query], atol=1e-9)
    assert v.tile_map.values.shape == (32, 32) and v.tile_map.row_labels[0] == f"q{r0}"


def test_a_full_attn_mask_is_drawn_as_the_main_view_masks_it(qtbot, view):
    """The long-context view binds the main view's mask description: a full (L_q, L_k) attn_mask
    (here a band the settings' window does not make) is streamed, not refused."""
    win, v = view
    base = long_state(200, window=0)
    head = base.head_view()
    band = np.abs(np.arange(200)[:, None] - np.arange(200)[None, :]) < 20
    state = State.from_tensors(
        head.queries,
        head.keys,
        head.values,
        settings=base.settings,
        masks=MaskArguments(attn_mask=band),
        causal="top_left",
    )
    win.session.push(ReplaceState(state))
    wait_current(qtbot, win)
    qtbot.waitUntil(lambda: v.result is not None and v.result.version == win.session.document.version, timeout=20000)
    r = v.result
    assert r.error is None and r.mean is not None
    allowed = win.session.current_view().mask[0]
    assert not allowed[0, 30] and allowed[30, 29]  # the band, as the main view masks it
    for i in range(len(r.row_edges) - 1):
        rows = slice(r.row_edges[i], r.row_edges[i + 1])
        shares = [(~allowed[rows, r.col_edges[j] : r.col_edges[j + 1]]).mean() for j in range(len(r.col_edges) - 1)]
        np.testing.assert_allclose(r.masked_share[i], shares, atol=1e-12)


def test_a_newer_request_stops_the_running_overview(qtbot, view):
    from attnviz.compute.long_view import LongRequest, compute_overview

    win, v = view
    state = long_state(2000).frozen()
    calls = []

    def stop() -> bool:
        calls.append(1)
        return len(calls) > 2  # a newer request arrived after two blocks

    result = compute_overview(LongRequest(1, state, 0, (64, 64), 1), should_stop=stop)
    assert result.cancelled and result.mean is None


def test_an_input_over_the_budget_opens_the_long_context_view(qtbot):
    from attnviz.engine import set_default_memory_budget
    from attnviz.ui.window.main_window import MainWindow

    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    wait_current(qtbot, win)
    set_default_memory_budget(20e6)  # every stage of 1500 x 1500 at once needs more
    try:
        win.session.push(ReplaceState(long_state(1500)))
        wait_current(qtbot, win)
        outcome = win.session.current_outcome()
        assert outcome.too_large and "budget" in outcome.error
        qtbot.waitUntil(win.long_dock.isVisible)
        v = win.long_dock.view()
        qtbot.waitUntil(lambda: v.result is not None and v.result.mean is not None, timeout=30000)
        assert win.controls.shapes.spins["n_queries"].value() == 1500
    finally:
        set_default_memory_budget(None)


def test_each_statistic_is_drawn_from_its_own_values(qtbot, view):
    """The statistic on show comes prepared with the overview; another is prepared when chosen."""
    _win, v = view
    result = v.result
    for name in ("masked_share", "max", "mean"):
        v.shown.setCurrentIndex(v.shown.findData(name))
        np.testing.assert_array_equal(v.overview_map.values, getattr(result, name))
    assert set(v._prepared) == {"mean", "max", "masked_share"}  # each prepared once, then kept


def test_a_first_overview_is_drawn_with_the_picture_prepared_on_the_compute_thread(qtbot, monkeypatch, window):
    """The overview map has no picture before its first overview: the compute thread predicts its
    frame from the plot area (``frame_for``), so the GUI thread resamples nothing to draw it."""
    import attnviz.ui.heatmap.plot as plot_module

    resampled = []
    real_picture = plot_module.picture
    monkeypatch.setattr(plot_module, "picture", lambda *a: resampled.append(a) or real_picture(*a))
    win = window
    win.resize(1280, 720)
    win.long_dock.show()
    v = win.long_dock.view()
    # Its plots appear one per frame once it is shown; then its layout is final.
    qtbot.waitUntil(lambda: all(plot.isVisible() for plot in v._plots()) and v.result is not None)
    # The book's toy is additive, which the overview refuses with a message over the maps:
    # a long input first, so that the maps keep their size (the frame predicted is exact).
    win.session.push(ReplaceState(long_state(600)))
    qtbot.waitUntil(lambda: v.result is not None and v.result.mean is not None, timeout=30000)
    assert v.overview_map.frame_for((600, 600)) is not None
    resampled.clear()
    # 1024 rows in 512 bins of 2: a map drawn from a pyramid, a screen at a time.
    win.session.push(ReplaceState(long_state(1024)))
    qtbot.waitUntil(lambda: v.result is not None and v.result.mean is not None and v.result.mean.shape == (512, 512))
    v.overview_map.grab()
    assert v.overview_map.last_frame is not None  # drawn from the pyramid
    # (The main view's 1024 x 1024 map is a pyramid too, with pictures of its own.)
    ours = [frame for prepared, frame in resampled if any(prepared is p for p in v._prepared.values())]
    assert ours == []


def test_a_message_over_the_maps_leaves_the_view_the_height_of_its_tab(qtbot, window):
    """The book's additive toy has no overview (dot products only): a message says so. A wrapped
    label there made the tab's scroll area size the view by its preferred height (970 px in a
    720-pixel window), so the plots fell below the fold until the message went away."""
    window.resize(1280, 720)
    window.long_dock.show()
    v = window.long_dock.view()
    qtbot.waitUntil(lambda: v.message.isVisible() and all(plot.isVisible() for plot in v._plots()))
    assert "additive" in v.message.text()
    page = v.parentWidget()
    assert v.height() <= page.height(), (v.height(), page.height())


def test_an_input_over_the_budget_brings_an_open_long_context_tab_forward_once(qtbot, window):
    """Open already but behind another tab (a restored layout, say): the refusal brings it
    forward; the next edit of the same long input leaves the user where they went."""
    from attnviz.engine import set_default_memory_budget

    win = window
    win.long_dock.show()
    win.tool_tabs.setCurrentIndex(0)  # the long-context tab open, the main view on show
    assert win.long_dock.isVisible() and not win.long_dock.is_current_tab()
    set_default_memory_budget(20e6)
    try:
        win.session.push(ReplaceState(long_state(1500)))
        wait_current(qtbot, win)
        qtbot.waitUntil(win.long_dock.is_current_tab)
        win.tool_tabs.setCurrentIndex(0)
        state = win.session.document.state.copy()
        state.settings = replace(state.settings, window=32)
        win.session.push(ReplaceState(state))
        wait_current(qtbot, win)
        qtbot.wait(100)
        assert win.session.current_outcome().too_large and not win.long_dock.is_current_tab()
    finally:
        set_default_memory_budget(None)


def test_a_long_context_window_of_its_own_is_not_raised_again_by_a_long_input(qtbot, window):
    from attnviz.engine import set_default_memory_budget

    win = window
    win.long_dock.show()
    win.long_dock.setFloating(True)
    shown = []
    real_show = win.long_dock.show
    win.long_dock.show = lambda: shown.append(1) or real_show()
    set_default_memory_budget(20e6)
    try:
        win.session.push(ReplaceState(long_state(1500)))
        wait_current(qtbot, win)
        qtbot.wait(100)
        assert win.session.current_outcome().too_large and shown == []
    finally:
        set_default_memory_budget(None)


def test_the_windows_threads_compute_under_its_budget_and_a_longer_call_streams(qtbot, window):
    """Every stage and map of a long head at once took the window to +3.0 GB (a 4096-token
    session): its threads compute under ``APP_MEMORY_BUDGET`` and the long-context view takes
    over, without the process-wide default changing."""
    from attnviz.engine.budget import default_budget
    from attnviz.ui.scheduler import APP_MEMORY_BUDGET, in_app

    assert in_app(lambda _item: default_budget())(None) == APP_MEMORY_BUDGET < default_budget()
    win = window
    win.session.push(ReplaceState(long_state(2048)))  # float64 stages of 32 MiB each: over it
    wait_current(qtbot, win)
    outcome = win.session.current_outcome()
    assert outcome.too_large and "96 MiB" in outcome.error
    qtbot.waitUntil(win.long_dock.is_current_tab)
    v = win.long_dock.view()
    qtbot.waitUntil(lambda: v.result is not None and v.result.mean is not None, timeout=60000)
    assert v.result.error is None and v.result.mean.shape == (512, 512)
