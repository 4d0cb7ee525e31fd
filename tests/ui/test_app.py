"""The app end to end, offscreen: edits reach the heatmaps through the worker."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QLabel

from attnviz.compute.attention import run_state
from attnviz.state.document import Snapshot

from .conftest import engine_result, wait_current


def engine_weights(state) -> np.ndarray:
    return engine_result(state).weights.numpy()


def test_opens_on_the_books_additive_toy(window):
    view = window.session.last_outcome.view
    np.testing.assert_allclose(view.output[:, 0], [[2, 3, 4, 5], [10, 11, 12, 13]], rtol=1e-5)
    assert len(window.results.maps) == 2
    np.testing.assert_allclose(window.results.maps[1].values[0, :6], np.full(6, 1 / 6), rtol=1e-5)
    assert window.status.state_label.text() == "up to date"


def test_editing_a_cell_updates_the_heatmap_to_the_engines_weights(window, qtbot):
    window.session.load_preset("dot-toy")
    wait_current(qtbot, window)
    model = window.inputs.models["keys"]
    assert model.setData(model.index(0, 1), "3.5")
    wait_current(qtbot, window)
    expected = engine_weights(window.session.document.state)
    assert window.session.head_view().keys[0, 0, 1] == 3.5
    np.testing.assert_allclose(window.results.maps[0].values, expected[0], rtol=1e-6)
    assert not np.allclose(expected[0, 0, :2], 0.5)  # the key changed, so the weights did


def test_a_pasted_block_is_one_edit(window, qtbot):
    view = window.inputs.views["values"]
    view.setCurrentIndex(window.inputs.models["values"].index(1, 0))
    version = window.session.document.version
    undo_count = window.session.undo_stack.count()
    QGuiApplication.clipboard().setText("1\t2\n3\t4\n")
    assert view.paste()
    assert window.session.document.version == version + 1
    assert window.session.undo_stack.count() == undo_count + 1
    np.testing.assert_array_equal(window.session.head_view().values[0, 1:3, 0:2], [[1, 2], [3, 4]])
    window.session.undo_stack.undo()
    np.testing.assert_array_equal(window.session.head_view().values[0, 1:3, 0:2], [[4, 5], [8, 9]])


def test_a_burst_of_edits_ends_on_the_last_state(window, qtbot):
    window.session.load_preset("dot-toy")
    wait_current(qtbot, window)
    model = window.inputs.models["queries"]
    started = window.session.scheduler.started_count
    for i in range(200):
        model.setData(model.index(0, 0), str(0.01 * i))
    wait_current(qtbot, window)
    # One in flight plus one pending: most of the 200 never ran.
    assert window.session.scheduler.started_count - started < 200
    assert window.session.head_view().queries[0, 0, 0] == pytest.approx(1.99)
    expected = engine_weights(window.session.document.state)
    np.testing.assert_allclose(window.session.last_outcome.view.weights, expected, rtol=1e-6)
    assert window.session.shown_version == window.session.document.version


def test_a_shape_error_is_shown_and_recovered_from(window, qtbot):
    # The additive toy has d_q = 20, d_k = 2: scaled dot product cannot score that.
    good = window.session.last_outcome.view
    window.controls.settings.combos["scoring"].setCurrentIndex(
        window.controls.settings.combos["scoring"].findData("scaled_dot")
    )
    wait_current(qtbot, window)
    error = window.controls.shape_error
    assert error.isVisible() and "d_q = 20, d_k = 2" in error.text()
    assert window.results._view is good  # the last good picture stays
    assert "error" in window.status.state_label.text()
    window.controls.shapes.spins["d_q"].setValue(2)
    wait_current(qtbot, window)
    assert not error.isVisible()
    assert window.session.last_outcome.error is None and window.status.state_label.text() == "up to date"


def test_a_non_number_in_a_cell_is_refused_where_the_user_looks(window, qtbot):
    model = window.inputs.models["queries"]
    version = window.session.document.version
    assert not model.setData(model.index(0, 0), "abc")
    assert window.session.document.version == version
    assert window.inputs.error.isVisible() and "'abc' is not a number" in window.inputs.error.text()


def test_valid_length_edits_mask_keys(window, qtbot):
    model = window.inputs.models["valid_lens"]
    assert model.setData(model.index(1, 0), "3")
    wait_current(qtbot, window)
    weights = window.session.last_outcome.view.weights
    np.testing.assert_allclose(weights[1, 0, :3], np.full(3, 1 / 3), rtol=1e-5)
    assert (weights[1, 0, 3:] == 0).all()
    assert not window.session.last_outcome.view.mask[1, 0, 3:].any()


def test_shape_change_keeps_values_that_fit(window, qtbot):
    before = window.session.head_view().queries.copy()
    window.controls.shapes.spins["d_q"].setValue(25)
    wait_current(qtbot, window)
    after = window.session.head_view().queries
    assert after.shape == (2, 1, 25)
    np.testing.assert_array_equal(after[:, :, :20], before)
    assert (after[:, :, 20:] == 0).all()
    window.session.undo_stack.undo()
    np.testing.assert_array_equal(window.session.head_view().queries, before)


def test_every_table_model_passes_the_model_tester(window, qtmodeltester):
    for model in [*window.inputs.models.values(), window.output.model]:
        qtmodeltester.check(model)


def test_every_control_has_a_tooltip(window):
    from PySide6.QtWidgets import QAbstractButton, QAbstractSpinBox, QComboBox, QTabBar, QTabWidget

    def described(w) -> bool:
        # A control inside a tab bar or a spin box is part of that widget, which has the tip.
        parent = w.parentWidget()
        return bool(w.toolTip()) or isinstance(parent, (QTabBar, QAbstractSpinBox, QComboBox))

    missing = [
        f"{type(w).__name__} {getattr(w, 'text', lambda: '')()!r}"
        for cls in (QAbstractButton, QAbstractSpinBox, QComboBox, QTabWidget)
        for w in window.findChildren(cls)
        if w.isVisibleTo(window) and not described(w)
    ]
    assert missing == []


def test_presets_load_and_compute(window, qtbot):
    from attnviz.teaching.presets import PRESETS

    for name in PRESETS:
        window.session.load_preset(name)
        wait_current(qtbot, window)
        assert window.session.last_outcome.error is None, name
    # masked softmax 2-D preset: the first query of batch 0 has valid length 1.
    np.testing.assert_allclose(window.session.last_outcome.view.weights[0, 0], [1, 0, 0, 0])


def test_compute_reports_errors_as_data():
    from attnviz.teaching.presets import PRESETS

    state = PRESETS["dot-toy"].build()
    state.lens_1d[0] = -1
    outcome = run_state(state, 7)
    assert outcome.version == 7 and outcome.view is None
    assert outcome.error_field == "valid_lens" and ">= 0" in outcome.error
    state = PRESETS["dot-toy"].build()
    from dataclasses import replace

    state.settings = replace(state.settings, device="cuda:3")
    if not torch.cuda.is_available():
        outcome = run_state(state, 1)
        assert outcome.error_field == "device" and "cuda:3" in outcome.error


def test_scheduler_latest_wins_without_a_window(qtbot):
    from attnviz.teaching.presets import PRESETS
    from attnviz.ui.scheduler import ComputeScheduler, run_in_app

    scheduler = ComputeScheduler(run_in_app)
    seen = []
    scheduler.finished.connect(lambda outcome: seen.append(outcome.version))
    state = PRESETS["dot-toy"].build()
    for version in range(50):
        scheduler.submit(Snapshot(version, state))
    qtbot.waitUntil(lambda: not scheduler.busy, timeout=30000)
    assert seen[-1] == 49
    assert scheduler.started_count <= 3
    assert scheduler.shutdown()


def test_help_and_version_need_no_display():
    env = {"PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-m", "attnviz", "--version"], capture_output=True, text=True, env=env, check=True
    )
    from attnviz import __version__

    assert out.stdout.strip() == f"attnviz {__version__}"
    out = subprocess.run(
        [sys.executable, "-m", "attnviz", "--help"], capture_output=True, text=True, env=env, check=True
    )
    assert "usage: attnviz" in out.stdout


def test_presentation_mode_enlarges_hides_chrome_and_stays_live(window, qtbot):
    from PySide6.QtWidgets import QApplication

    from attnviz.state.document import SetBlock

    size = QApplication.font().pointSizeF()
    window.presentation_action.trigger()
    assert QApplication.font().pointSizeF() > size * 1.5
    # The editing chrome goes: controls, tables, menu bar, toolbar, status bar; a hint says how
    # to leave.
    assert not window.controls_scroll.isVisible() and not window.inputs.isVisible()
    assert not window.menuBar().isVisible() and not window.statusBar().isVisible()
    assert not window.code_copier.toolbar.isVisible()
    hint = window.findChild(QLabel, "presentationHint")
    assert hint.isVisible() and "F5" in hint.text() and hint.font().pointSizeF() > size * 1.5
    assert window.results.maps[0].font_scale > 1.5
    # Still live: an edit (a lesson, an undo, a script) shows at once.
    window.session.push(SetBlock("valid_lens", 0, 0, 0, np.array([[1]])))
    wait_current(qtbot, window)
    np.testing.assert_allclose(window.results.maps[0].values[0, :2], [1.0, 0.0])
    qtbot.keyClick(window, Qt.Key.Key_F5)  # F5 toggles it off again, with the menu bar hidden
    assert QApplication.font().pointSizeF() == size and window.controls_scroll.isVisible()
    assert window.menuBar().isVisible() and window.inputs.isVisible() and not hint.isVisible()
    window.presentation_action.trigger()
    qtbot.keyClick(window, Qt.Key.Key_Escape)  # and Esc leaves it
    assert QApplication.font().pointSizeF() == size and window.controls_scroll.isVisible()


def test_a_missing_device_offers_the_cpu(window, qtbot):
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA, so cuda:7 might exist")
    window.edits.on_settings({"device": "cuda:7"})
    wait_current(qtbot, window)
    assert window.status.cpu_button.isVisible()
    assert "cuda:7" in window.controls.settings_error.text()
    window.status.cpu_button.click()
    wait_current(qtbot, window)
    assert not window.status.cpu_button.isVisible() and window.session.last_outcome.error is None


def test_dark_and_light_themes_reach_the_heatmaps(window):
    from PySide6.QtGui import QPalette
    from PySide6.QtWidgets import QApplication

    from attnviz.ui import theme

    try:
        window.theme_actions["dark"].trigger()
        heatmap = window.results.maps[0]
        assert heatmap._view.backgroundBrush().color().name() == theme.DARK_PLOT.background
        assert QApplication.palette().color(QPalette.ColorRole.Window).lightness() < 100
        window.theme_actions["light"].trigger()
        assert heatmap._view.backgroundBrush().color().name() == theme.LIGHT_PLOT.background
        assert QApplication.palette().color(QPalette.ColorRole.Window).lightness() > 150
    finally:
        theme.apply_theme("system")


def test_window_layout_persists(qtbot):
    from attnviz.ui.window.main_window import MainWindow

    first = MainWindow()
    qtbot.addWidget(first)
    first.show()
    first.resize(1234, 777)
    first._fit_to_screen()  # as on every show: the offscreen screen is smaller than that
    first.pipeline_dock.show()
    wait_current(qtbot, first)
    size = first.size()
    first.close()
    second = MainWindow()
    qtbot.addWidget(second)
    second.show()
    # Offscreen windows have no frame, but before its first show a window keeps room for one
    # (16 x 40) when it fits itself into the (800 x 600 offscreen) screen.
    assert 0 <= size.width() - second.size().width() <= 16 and 0 <= size.height() - second.size().height() <= 40
    assert second.pipeline_dock.isVisible()
    wait_current(qtbot, second)
    second.close()


def test_edit_menu_copy_and_paste_reach_the_current_table(window, qtbot):
    view = window.inputs.views["queries"]
    model = window.inputs.models["queries"]
    view.setCurrentIndex(model.index(0, 0))
    view.selectionModel().select(model.index(0, 0), view.selectionModel().SelectionFlag.ClearAndSelect)
    window.copy_action.trigger()
    assert float(QGuiApplication.clipboard().text()) == window.session.head_view().queries[0, 0, 0]
    QGuiApplication.clipboard().setText("7.5")
    version = window.session.document.version
    window.paste_action.trigger()
    assert window.session.document.version == version + 1 and window.session.head_view().queries[0, 0, 0] == 7.5


def test_building_the_window_does_not_import_torch():
    """The window must be on screen while PyTorch loads on the compute thread: building it
    (every dock and menu included) imports no torch on the GUI thread."""
    code = (
        "import sys, os; os.environ['QT_QPA_PLATFORM'] = 'offscreen'\n"
        "from PySide6.QtWidgets import QApplication\n"
        "app = QApplication([])\n"
        "from attnviz.compute.attention import Outcome\n"
        "from attnviz.ui.app.session import AppSession\n"
        "from attnviz.ui.window.main_window import MainWindow\n"
        "session = AppSession(compute=lambda snapshot: Outcome(snapshot.version, error='stub'))\n"
        "w = MainWindow(session=session)\n"
        "w.show(); app.processEvents()\n"
        "print('torch' in sys.modules)\n"
        "session.shutdown()\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "False"


def test_error_text_follows_the_theme(window, qtbot):
    from attnviz.ui import theme

    window.controls.settings.combos["scoring"].setCurrentIndex(
        window.controls.settings.combos["scoring"].findData("scaled_dot")
    )
    wait_current(qtbot, window)
    from PySide6.QtGui import QPalette

    label = window.controls.shape_error

    def text_color() -> str:
        return label.palette().color(QPalette.ColorRole.WindowText).name()

    assert text_color() == theme.error_color()
    try:
        window.theme_actions["dark"].trigger()
        assert text_color() == theme.DARK_ERROR
        window.theme_actions["light"].trigger()
        assert text_color() == theme.LIGHT_ERROR
    finally:
        theme.apply_theme("system")


def test_valid_lengths_tab_follows_the_lens_mode(window, qtbot):
    tabs = window.inputs.tabs
    index = list(window.inputs.views).index("valid_lens")
    assert tabs.isTabEnabled(index)
    window.edits.on_settings({"lens_mode": "none"})
    wait_current(qtbot, window)
    assert not tabs.isTabEnabled(index) and "off" in tabs.tabToolTip(index)
    window.edits.on_settings({"lens_mode": "2d"})
    wait_current(qtbot, window)
    assert tabs.isTabEnabled(index) and "off" not in tabs.tabToolTip(index)


def test_device_list_is_refilled_only_when_it_changes(window):
    box = window.controls.settings.combos["device"]
    listed = [box.itemData(i) for i in range(box.count())]
    removed: list[int] = []
    box.model().rowsRemoved.connect(lambda *_: removed.append(1))
    window.controls.settings.set_devices(listed)  # what every result reports
    assert not removed
    window.controls.settings.set_devices([*listed, "cuda:7"])
    assert removed and [box.itemData(i) for i in range(box.count())] == [*listed, "cuda:7"]
    assert box.currentData() == window.session.document.state.settings.device  # the choice is kept


def test_objects_alive_after_the_first_result_are_out_of_the_collectors_reach(window):
    """A full collection over torch's, Qt's and pyqtgraph's objects took 120-140 ms on the GUI
    thread; after the first result they are frozen, so one no longer walks them."""
    import gc

    assert window.session.shown_version >= 0
    assert gc.get_freeze_count() > 100_000


def test_the_apps_compute_thread_turns_huge_pages_off(monkeypatch):
    from attnviz.engine import memory
    from attnviz.state.document import Snapshot
    from attnviz.teaching.presets import PRESETS
    from attnviz.ui import scheduler as worker

    monkeypatch.setattr(memory, "_use_huge_pages", True)
    monkeypatch.setattr(worker, "_threads_configured", False)
    monkeypatch.setattr(torch, "set_num_threads", lambda n: None)  # leave the test process's threads alone
    outcome = worker.run_in_app(Snapshot(1, PRESETS["dot-toy"].build()))
    assert outcome.view is not None
    assert memory._use_huge_pages is False


def test_a_replaced_result_is_freed_off_the_gui_thread(window, qtbot):
    """Freeing the previous result (hundreds of MiB at 4096x4096) took ~50 ms on the GUI thread."""
    import threading
    import weakref

    freed_on: list[bool] = []
    weakref.finalize(
        window.session.last_outcome.view, lambda: freed_on.append(threading.current_thread() is threading.main_thread())
    )
    model = window.inputs.models["queries"]
    assert model.setData(model.index(0, 0), "0.75")
    wait_current(qtbot, window)
    qtbot.waitUntil(lambda: bool(freed_on), timeout=5000)
    assert freed_on == [False]
    assert not window.session.last_outcome.view.weights.flags.writeable  # shared read-only by every view


def test_every_tool_dock_joins_its_menu_with_a_shortcut_tip_and_a_close_tip(window):
    from PySide6.QtWidgets import QAbstractButton

    docks = {
        window.pipeline_dock: window.menu("view"),
        window.compare_dock: window.menu("view"),
        window.masking_lab_dock: window.menu("tools"),
        window.scaling_lab_dock: window.menu("tools"),
        window.lessons.dock: window.menu("tools"),
    }
    from attnviz.ui.app.host import ToolTab

    for dock, menu in docks.items():
        action = dock.toggleViewAction()
        assert action in menu.actions() and action.toolTip(), dock.objectName()
        assert not dock.isVisible()
        if isinstance(dock, ToolTab):  # a tab of the central area: its close button is in the tab bar
            dock.show()
            close = [dock.close_button()]
            assert dock.is_current_tab()
            dock.hide()
            assert not dock.is_current_tab() and not action.isChecked()
        else:
            close = [b for b in dock.findChildren(QAbstractButton) if b.objectName() == "qt_dockwidget_closebutton"]
        assert close and ("View menu" if menu is window.menu("view") else "Tools menu") in close[0].toolTip()
    # Views that can scale their text follow presentation mode, whichever kind of dock holds them.
    scales = {
        "pipeline": lambda: window.pipeline_dock.view().cards["weights"].heatmap.font_scale,
        "masking lab": lambda: window.masking_lab_dock.view().font_scale,
        "scaling lab": lambda: window.scaling_lab_dock.view().font_scale,
        "side by side": lambda: window.compare_dock.view().map_a.font_scale,
        "layers x heads": lambda: window.overview_dock.view().heatmap.font_scale,
        "long context": lambda: window.long_dock.view().overview_map.font_scale,
        "long context tile": lambda: window.long_dock.view().tile_map.font_scale,
        "heads": lambda: window.heads_dock.view().font_scale,
    }
    window.set_presentation_mode(True)
    try:
        assert {name: scale() for name, scale in scales.items()} == dict.fromkeys(scales, pytest.approx(1.8))
    finally:
        window.set_presentation_mode(False)
    assert {name: scale() for name, scale in scales.items()} == dict.fromkeys(scales, 1.0)


def test_every_compute_thread_of_the_app_configures_the_process_first(window):
    """Whichever computes first, the main view or a lab, torch gets cores - 1 threads and no
    huge pages: each scheduler runs its function through worker.in_app."""
    from attnviz.ui import scheduler as worker

    assert worker.run_in_app.__wrapped__ is worker.run_snapshot
    for tool in window.tools():
        tool.view()  # every view built, with its computations
    session = window.session
    # The main thread (the main outcome, then the computations of the views on show that run
    # with it) and every view's thread of its own.
    schedulers = [session.scheduler, *session.computations.schedulers()]
    assert len(schedulers) >= 8 and all(getattr(s._compute, "in_app", False) for s in schedulers)
    names = {c.name for c in session.computations if c.scheduler is not None}
    assert {"masking lab", "scaling lab", "side by side", "long-context overview", "mask doctor"} <= names


def test_every_tool_view_that_can_fit_its_tab_does_at_1280x720(qtbot, window):
    """A view taller than its tab scrolls; one that could be as short as the tab must not. A
    height-for-width child (a wrapped label) made the tab's scroll area size two views by their
    preferred height instead (layers x heads 26 px too tall, the long-context view 326 px)."""
    window.resize(1280, 720)
    for tool in window.tools():
        tool.show()
        view = tool.view()
        qtbot.wait(50)
        page = view.parentWidget()
        if page is not None and view.minimumSizeHint().height() <= page.height():
            assert view.height() <= page.height(), (tool.objectName(), view.height(), page.height())
        tool.hide()
