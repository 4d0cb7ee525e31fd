"""The side-by-side view: two configurations computed off the GUI thread, live, with the
difference map equal to the engine's weights A minus weights B."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QScrollArea

from attnviz.compute.side_by_side import EXERCISE_1, Comparison, variants
from attnviz.state.document import ReplaceState
from attnviz.teaching.presets import PRESETS

from .conftest import engine_result, wait_current


def engine_weights(state) -> np.ndarray:
    return engine_result(state).weights.double().numpy()


def expected_diff(state, comparison: Comparison, batch: int = 0) -> np.ndarray:
    a, b = variants(state, comparison)
    return engine_weights(a)[batch].astype(np.float64) - engine_weights(b)[batch].astype(np.float64)


def wait_compare(qtbot, window, view) -> None:
    qtbot.waitUntil(lambda: view.shown_doc_version == window.session.document.version and not view.busy, timeout=30000)


def _shown(qtbot, dock):
    dock.show()
    qtbot.waitUntil(lambda: dock.view().isVisible())
    return dock.view()


# ---------------------------------------------------------------------------- no window


def test_variants_differ_in_the_compared_setting_only():
    state = PRESETS["additive-toy"].build()
    state.params = {"W_q": np.zeros((8, 20)), "W_k": np.zeros((8, 2)), "w_v": np.zeros((1, 8))}
    a, b = variants(state, Comparison("scoring", "additive", "scaled_dot"))
    assert (a.settings.scoring, b.settings.scoring) == ("additive", "scaled_dot")
    assert a.settings.mask_mode == b.settings.mask_mode == state.settings.mask_mode
    assert set(a.params) == {"W_q", "W_k", "w_v"}  # A keeps the document's parameters
    assert b.params == {}  # another scoring function: its own seeded parameters
    a, b = variants(state, Comparison("dtype", "float32", "float16"))
    assert (a.settings.dtype, b.settings.dtype) == ("float32", "float16")
    assert a.params.keys() == b.params.keys() == state.params.keys()
    np.testing.assert_array_equal(a.head_view().keys, state.head_view().keys)


def test_a_comparison_names_a_real_choice():
    with pytest.raises(ValueError, match="choose one of"):
        Comparison("scoring", "additive", "cosine")
    with pytest.raises(ValueError, match="cannot compare"):
        Comparison("colour", "a", "b")


# ---------------------------------------------------------------------------- in the window


def test_difference_updates_live_from_an_edit_and_equals_the_engine(window, qtbot):
    dock = window.compare_dock
    view = _shown(qtbot, dock)
    window.session.load_preset("dot-toy")
    view.set_comparison(EXERCISE_1)  # the dot-product toy allows it: the view's default elsewhere
    wait_current(qtbot, window)
    wait_compare(qtbot, window, view)
    assert view.comparison == EXERCISE_1
    # Identical keys: every scoring function gives uniform weights, the difference is 0.
    assert view.max_abs_diff == pytest.approx(0.0, abs=1e-6)
    model = window.inputs.models["keys"]
    assert model.setData(model.index(0, 1), "3.5")
    wait_compare(qtbot, window, view)
    state = window.session.document.state
    expected = expected_diff(state, EXERCISE_1)
    np.testing.assert_allclose(view.map_diff.values, expected, rtol=1e-5, atol=1e-6)
    assert view.max_abs_diff == pytest.approx(np.abs(expected).max(), rel=1e-5)
    assert view.max_abs_diff > 0.01
    lo, hi = view.map_diff.levels
    assert lo == pytest.approx(-hi) and hi == pytest.approx(view.max_abs_diff)
    a, b = variants(state, EXERCISE_1)
    np.testing.assert_allclose(view.map_a.values, engine_weights(a)[0], rtol=1e-5)
    np.testing.assert_allclose(view.map_b.values, engine_weights(b)[0], rtol=1e-5)
    assert f"{view.max_abs_diff:.3g}" in view.max_label.text()


def test_mask_mode_and_dtype_comparisons(window, qtbot):
    view = _shown(qtbot, window.compare_dock)
    window.session.load_preset("masked-softmax-1d")
    # Valid length 0 for batch element 1: the book's fill and strict masking part ways there.
    state = window.session.document.state.copy()
    state.lens_1d[1] = 0
    window.session.push(ReplaceState(state, "empty rows"))
    view.set_comparison(Comparison("mask_mode", "d2l", "strict"))
    window.session.set_batch(1)
    wait_compare(qtbot, window, view)
    expected = expected_diff(window.session.document.state, view.comparison, batch=1)
    np.testing.assert_allclose(view.map_diff.values, expected, atol=1e-6)
    assert view.max_abs_diff == pytest.approx(0.25, abs=1e-6)  # uniform 1/4 against 0
    view.set_comparison(Comparison("dtype", "float32", "float64"))
    wait_compare(qtbot, window, view)
    window.session.set_batch(0)
    expected = expected_diff(window.session.document.state, view.comparison, batch=0)
    np.testing.assert_allclose(view.map_diff.values, expected, atol=1e-9)
    assert 0 < view.max_abs_diff < 1e-6


def test_exercise_1_says_why_weights_agree_when_no_query_has_two_valid_keys(window, qtbot):
    """A batch element whose queries have no valid key gives the same weights under any scoring:
    the explanation says so instead of promising that different keys make them differ."""
    view = _shown(qtbot, window.compare_dock)
    window.lessons.load("pitfall-zero-length")  # batch element 0: valid length 0
    window.session.set_batch(0)
    view.start_exercise_1()
    wait_compare(qtbot, window, view)
    assert view.max_abs_diff == pytest.approx(0.0, abs=1e-9)
    assert "no query of batch element 0 has more than one valid key" in view.explanation.text()
    assert "Now the keys differ" not in view.explanation.text()
    window.session.set_batch(1)
    assert "Now the keys differ" in view.explanation.text()


def test_exercise_1_is_one_click_and_randomising_keys_makes_them_differ(window, qtbot):
    view = _shown(qtbot, window.compare_dock)
    view.set_comparison(Comparison("mask_mode", "d2l", "strict"))
    window.session.load_preset("dot-toy")
    wait_compare(qtbot, window, view)
    qtbot.mouseClick(view.exercise_button, Qt.MouseButton.LeftButton)
    assert view.comparison == EXERCISE_1
    assert view.explanation.isVisible()
    assert "all the same vector" in view.explanation.text()
    wait_compare(qtbot, window, view)
    assert view.max_abs_diff == pytest.approx(0.0, abs=1e-6)
    undo_count = window.session.undo_stack.count()
    qtbot.mouseClick(view.randomise_button, Qt.MouseButton.LeftButton)
    assert window.session.undo_stack.count() == undo_count + 1  # one undoable edit in the window
    wait_compare(qtbot, window, view)
    assert "keys differ" in view.explanation.text()
    np.testing.assert_allclose(
        view.map_diff.values, expected_diff(window.session.document.state, EXERCISE_1), rtol=1e-5, atol=1e-6
    )
    assert view.max_abs_diff > 0.01


def test_on_unequal_lengths_it_opens_on_two_results_and_exercise_1_is_one_click(window, qtbot):
    # The additive toy: queries of length 20, keys of length 2; scaled dot cannot run there, so
    # the view opens comparing two mask modes, both computed.
    view = _shown(qtbot, window.compare_dock)
    wait_compare(qtbot, window, view)
    assert view.comparison == Comparison("mask_mode", "d2l", "strict")
    assert not view.errors["A"].isVisible() and not view.errors["B"].isVisible()
    assert view.max_abs_diff is not None
    # Exercise 1 in one click: it loads the dot-product toy (one undoable edit) and compares.
    depth = window.session.undo_stack.count()
    qtbot.mouseClick(view.exercise_button, Qt.MouseButton.LeftButton)
    assert window.session.undo_stack.count() == depth + 1
    wait_compare(qtbot, window, view)
    assert view.comparison == EXERCISE_1 and window.session.head_view().queries.shape[2] == 2
    assert not view.errors["B"].isVisible() and not view.dot_toy_button.isVisible()
    assert view.max_abs_diff == pytest.approx(0.0, abs=1e-6)


def test_a_side_that_cannot_compute_says_why_and_offers_the_dot_toy(window, qtbot):
    view = _shown(qtbot, window.compare_dock)
    view.set_comparison(EXERCISE_1)  # scaled dot on queries of 20 and keys of 2: B fails
    wait_compare(qtbot, window, view)
    assert view.errors["B"].isVisible() and view.errors["B"].text().startswith("⚠ B:")
    assert view.max_abs_diff is None and view.map_diff.values.size == 0
    view._update_explanation(force=True)
    assert view.dot_toy_button.isVisible()
    qtbot.mouseClick(view.dot_toy_button, Qt.MouseButton.LeftButton)
    wait_compare(qtbot, window, view)
    assert window.session.head_view().queries.shape[2] == 2
    assert not view.errors["B"].isVisible() and not view.dot_toy_button.isVisible()


def test_a_hidden_dock_computes_nothing_and_catches_up_when_shown(window, qtbot):
    dock = window.compare_dock
    view = dock.view()  # built, but hidden
    window.session.load_preset("dot-toy")
    model = window.inputs.models["keys"]
    assert model.setData(model.index(3, 0), "-1")
    wait_current(qtbot, window)
    assert view.pair.scheduler.started_count == 0
    _shown(qtbot, dock)
    wait_compare(qtbot, window, view)
    assert view.pair.scheduler.started_count == 1
    np.testing.assert_allclose(
        view.map_diff.values, expected_diff(window.session.document.state, EXERCISE_1), rtol=1e-5, atol=1e-6
    )


def test_a_burst_of_edits_ends_on_the_last_state(window, qtbot):
    view = _shown(qtbot, window.compare_dock)
    window.session.load_preset("dot-toy")
    view.set_comparison(EXERCISE_1)
    model = window.inputs.models["keys"]
    for i in range(60):
        model.setData(model.index(0, 0), str(0.05 * i))
    wait_compare(qtbot, window, view)
    assert view.pair.scheduler.started_count < 61
    np.testing.assert_allclose(
        view.map_diff.values, expected_diff(window.session.document.state, EXERCISE_1), rtol=1e-5, atol=1e-6
    )


def test_the_compute_thread_stops_with_the_window(qtbot):
    from attnviz.ui.window.main_window import MainWindow

    threads_before = threading.active_count()
    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    view = _shown(qtbot, win.compare_dock)
    qtbot.waitUntil(lambda: view.shown_doc_version == win.session.document.version and not view.busy, timeout=30000)
    started = view.pair.scheduler.started_count
    win.close()
    assert not view.busy
    # After the close nothing more is computed, whatever is asked.
    view.pair.request(EXERCISE_1)
    assert view.pair.scheduler.started_count == started
    assert not view.busy
    assert threading.active_count() <= threads_before + 2


def test_a_refused_close_keeps_the_session_computing(qtbot):
    from attnviz.ui.app.host import HostWindow
    from attnviz.ui.app.session import AppSession

    class Stubborn(HostWindow):
        refuse = True

        def closeEvent(self, event):
            if self.refuse:
                event.ignore()
                return
            super().closeEvent(event)

    host = Stubborn(AppSession())
    qtbot.addWidget(host)
    host.show()
    host.close()
    qtbot.wait(20)
    assert host.isVisible() and not host.session.closed
    host.refuse = False
    host.close()
    assert host.session.closed


def test_every_control_of_the_teaching_docks_has_a_tooltip(window, qtbot):
    from PySide6.QtWidgets import QAbstractButton, QAbstractSpinBox, QComboBox, QTabBar, QTabWidget

    docks = [window.pipeline_dock, window.compare_dock]
    for dock in docks:
        dock.setFloating(True)  # both visible at once, not tabbed
        _shown(qtbot, dock)
    wait_current(qtbot, window)
    docks[1].view().start_exercise_1()

    def described(w) -> bool:
        parent = w.parentWidget()
        return bool(w.toolTip()) or isinstance(parent, (QTabBar, QAbstractSpinBox, QComboBox))

    missing = [
        f"{type(w).__name__} {getattr(w, 'text', lambda: '')()!r}"
        for dock in docks
        for cls in (QAbstractButton, QAbstractSpinBox, QComboBox, QTabWidget)
        for w in dock.view().findChildren(cls)
        if w.isVisibleTo(dock.view()) and not described(w)
    ]
    assert missing == []


def test_fits_beside_a_docked_lesson_on_a_projector(qtbot, window):
    """At 1280x720 with a lesson docked at a third of the width (as presentation mode sets it),
    side by side still fits its tab: the controls wrap, the maps shrink, nothing scrolls sideways."""
    window.resize(1280, 720)
    window.lessons.load("pitfall-zero-length")
    view = _shown(qtbot, window.compare_dock)
    lesson = window.lessons.dock
    window.resizeDocks([lesson], [int(0.32 * 1280)], Qt.Orientation.Horizontal)
    wait_compare(qtbot, window, view)
    page = view.parentWidget()
    while not isinstance(page, QScrollArea):  # the tab's scroll area
        page = page.parentWidget()
    qtbot.waitUntil(lambda: page.viewport().width() < 1280 - 0.3 * 1280)
    assert view.minimumSizeHint().width() <= page.viewport().width()
    assert not page.horizontalScrollBar().isVisible()


def test_a_heads_maps_over_the_budget_are_refused_in_one_line_and_the_overview_stays():
    """A (4096, 4096) head's maps (both runs' weights, masks and their difference) were over the
    window's budget and ended as "unexpected error: MemoryBudgetError"; they are refused before
    anything is allocated, with their size, and the comparison's call x head map stays exact."""
    import attnviz
    from attnviz.engine.budget import memory_budget_scope
    from attnviz.state.run import AttentionCall, ModelRun
    from attnviz.text.tr import Message
    from attnviz.ui.views.run_compare import _head_maps, _Weights

    g = np.random.default_rng(0)
    q, k, v = (g.standard_normal((1, 2, 64, 1)).astype(np.float32) for _ in range(3))
    run = ModelRun((AttentionCall("layer.0", q, k, v),))
    comparison = attnviz.compare(run, ModelRun((AttentionCall("layer.0", q * 2, k, v),)))
    with memory_budget_scope(50_000):  # the maps of a 64 x 64 head need about 90 KB
        refused = _head_maps(comparison, 0, 1, 0, _Weights())
    assert isinstance(refused.refusal, Message) and refused.a.size == 0
    assert "64 x 64" in str(refused.refusal) and "48.8 KiB" in str(refused.refusal)
    maps = _head_maps(comparison, 0, 1, 0, _Weights())
    assert not maps.refusal and maps.a.shape == (64, 64) and comparison.max_weight_diff > 0
