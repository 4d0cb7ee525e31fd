"""Teaching from presentation mode (issue 21): views, lessons and examples reachable without
leaving it, lessons that set up the views they talk about, the example on show named over the
maps, and a window that comes back exactly as it was. What fits at 1280x720 and 1920x1080 is
checked by tests/ui/test_layout.py (layout_probe.py)."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractButton, QApplication, QLabel

from attnviz.compute.side_by_side import Comparison
from attnviz.teaching.lessons import LESSONS
from attnviz.teaching.presets import PRESETS
from attnviz.ui.views.docks import COMPARE_DOCK, SCALING_LAB_DOCK
from attnviz.ui.views.side_by_side import CompareView

from .conftest import wait_current


def _compare(qtbot, window) -> CompareView:
    view = window.dock(COMPARE_DOCK).view()
    assert isinstance(view, CompareView)
    qtbot.waitUntil(
        lambda: (
            view.last_result is not None and view.shown_doc_version == window.session.document.version and not view.busy
        ),
        timeout=30000,
    )
    return view


# ---------------------------------------------------------------- reachable while presenting


def test_a_view_opens_and_a_lesson_changes_without_leaving_presentation_mode(window, qtbot):
    window.set_presentation_mode(True)
    assert not window.menuBar().isVisible() and window.presenter.isVisible()
    # A view's shortcut works with the menus hidden (it did nothing before).
    qtbot.keyClick(window, Qt.Key.Key_D, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert window.compare_dock.is_current_tab()
    qtbot.keyClick(window, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert window.dock(SCALING_LAB_DOCK).is_current_tab()
    # A view's shortcut shows the view, never closes it: side by side, open behind the scaling
    # lab, comes in front (a toggle closed it in front of the class).
    for _ in range(2):
        qtbot.keyClick(window, Qt.Key.Key_D, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
        assert window.compare_dock.is_current_tab() and window.compare_dock.isVisible()
    # The presenter's clicker keys step through the lecture: a lesson reveals its answer before
    # the next one; the bar's view menu goes back.
    first, second = list(LESSONS)[:2]
    window.lessons.load(first)
    qtbot.keyClick(window, Qt.Key.Key_PageDown)
    assert window.session.loaded_example() == first and window.lessons.view.lesson is LESSONS[first]
    assert window.lessons.view.answer_shown
    qtbot.keyClick(window, Qt.Key.Key_PageDown)
    assert window.session.loaded_example() == second and not window.lessons.view.answer_shown
    qtbot.keyClick(window, Qt.Key.Key_PageUp)
    assert window.session.loaded_example() == first
    main = next(a for a in window.presenter.views.menu().actions() if a.isCheckable() and a.text().startswith("Att"))
    main.trigger()
    assert window.tool_tabs.currentIndex() == 0
    example = next(a for a in window.presenter.presets.menu().actions() if a.text() == PRESETS["dot-toy"].title)
    example.trigger()
    assert window.session.loaded_example() == "dot-toy"
    assert window.presentation_action.isChecked()  # never left


def test_page_keys_are_the_tables_outside_presentation_mode(window):
    assert all(action.shortcut().isEmpty() for action in window.presenter.lesson_actions)
    window.set_presentation_mode(True)
    assert [a.shortcut().toString() for a in window.presenter.lesson_actions] == ["PgDown", "PgUp"]
    window.set_presentation_mode(False)
    assert all(action.shortcut().isEmpty() for action in window.presenter.lesson_actions)


def test_the_output_is_beside_the_weights_while_presenting_and_the_tables_come_back(window, qtbot):
    sizes = window.right_splitter.sizes()
    window.set_presentation_mode(True)
    assert window.output.isVisible() and not window.inputs.isVisible()
    assert window.right_splitter.orientation() == Qt.Orientation.Horizontal
    assert window.output.currentWidget() is window.output.map_page
    wait_current(qtbot, window)
    np.testing.assert_allclose(window.output.heatmap.values, window.session.current_view().output[0])
    window.set_presentation_mode(False)
    qtbot.wait(20)
    assert window.inputs.isVisible() and window.right_splitter.orientation() == Qt.Orientation.Vertical
    assert window.right_splitter.sizes() == sizes and window.output.currentIndex() == 0


def test_f5_twice_gives_the_window_back_as_it_was(window, qtbot):
    window.lessons.load("pitfall-zero-length")
    window.compare_dock.show()
    window.tool_tabs.setCurrentIndex(0)
    qtbot.wait(20)

    def layout() -> tuple:
        return (
            window.saveState(),
            window.right_splitter.sizes(),
            window.bottom_splitter.sizes(),
            window.tool_tabs.count(),
            window.tool_tabs.currentIndex(),
            QApplication.font().pointSizeF(),
            window.lessons.dock.isVisible(),
        )

    before = layout()
    qtbot.keyClick(window, Qt.Key.Key_F5)
    qtbot.keyClick(window, Qt.Key.Key_F5)
    qtbot.wait(50)
    assert layout() == before
    assert not window.presenter_toolbar.isVisible()


def test_a_closed_lesson_panel_stays_closed_after_f5_twice(window, qtbot):
    window.lessons.load("pitfall-zero-length")
    window.set_presentation_mode(True)
    window.lessons.dock.close()  # closed by its button while presenting
    window.set_presentation_mode(False)
    qtbot.wait(50)
    assert not window.lessons.dock.isVisible()
    window.set_presentation_mode(True)
    window.set_presentation_mode(False)
    qtbot.wait(50)
    assert not window.lessons.dock.isVisible()


def test_the_lesson_steps_aside_for_a_wide_view_and_comes_back(window, qtbot):
    window.lessons.load("pitfall-zero-length")
    window.set_presentation_mode(True)
    window.dock(SCALING_LAB_DOCK).show()
    assert not window.lessons.dock.isVisible()
    window.presenter.show_main_view()
    assert window.lessons.dock.isVisible()
    window.dock(SCALING_LAB_DOCK).show()
    window.set_presentation_mode(False)
    qtbot.wait(50)
    assert window.lessons.dock.isVisible()


# ---------------------------------------------------------------- lessons drive the views


@pytest.mark.parametrize(
    ("name", "comparison"),
    [
        ("exercise-1-keys", Comparison("scoring", "additive", "scaled_dot")),
        ("exercise-2-bilinear", Comparison("scoring", "additive", "dot")),
        ("exercise-3-summation", Comparison("scoring", "summation", "dot")),
    ],
)
def test_each_exercise_sets_up_side_by_side_as_its_text_asks(window, qtbot, name, comparison):
    # Side by side left on another comparison first: the exercise must set its own.
    window.compare_dock.show()
    view = _compare(qtbot, window)
    view.set_comparison(Comparison("mask_mode", "d2l", "strict"))
    window.tool_tabs.setCurrentIndex(0)
    window.lessons.load(name)
    assert window.compare_dock.is_current_tab() and window.lessons.dock.isVisible()
    view = _compare(qtbot, window)
    assert view.comparison == comparison
    result = view.last_result
    assert result.comparison == comparison
    if name == "exercise-2-bilinear":
        # Additive (what the exercise opens on) computes; the dot product of 3 against 5 features
        # cannot, and the B side says why in its map's place, with no axes or colour bar. Not
        # bilinear: the design the student is asked to find is not chosen for them.
        assert "bilinear" not in (view.choice_a.currentData(), view.choice_b.currentData())
        assert result.a.view is not None and result.b.view is None
        assert not view.map_b.isVisible() and view.errors["B"].isVisible()
        assert "B:" in view.errors["B"].text() and not view.map_diff.isVisible()
        assert view.map_b.title == "B: Dot product (unscaled)"
    else:
        assert result.a.view is not None and result.b.view is not None
        assert view.map_a.isVisible() and view.map_b.isVisible() and view.map_diff.isVisible()
    if name == "exercise-3-summation":
        # What the exercise asks the class to see: summation gives every query the same weights.
        weights = result.a.view.weights[0]
        np.testing.assert_allclose(weights, np.broadcast_to(weights[0], weights.shape), atol=1e-6)
    # No answer before the lesson reveals it: exercise 1's banner (which states it) stays for
    # side by side's own Exercise 1 button.
    assert not view.explanation.isVisible()


def test_the_lesson_panel_follows_the_example_on_show(window, qtbot):
    lessons = window.lessons
    lessons.load("pitfall-float-mask")
    assert lessons.dock.isVisible() and lessons.view.lesson is LESSONS["pitfall-float-mask"]
    window.session.load_preset("dot-toy")
    assert not lessons.dock.isVisible()  # another preset takes the lesson away
    window.session.undo_stack.undo()
    assert lessons.dock.isVisible() and lessons.view.lesson is LESSONS["pitfall-float-mask"]
    window.session.undo_stack.undo()  # back to the start: the additive toy, no lesson
    assert not lessons.dock.isVisible() and window.session.loaded_example() == "additive-toy"


def test_an_edit_keeps_the_example_a_file_replaces_it(window, qtbot):
    from attnviz.state.document import ReplaceState, SetBlock
    from attnviz.text.tr import QT_TRANSLATE_NOOP, message

    session = window.session
    session.load_preset("masked-softmax-1d")
    session.push(SetBlock("valid_lens", 0, 0, 0, np.array([[1]])))
    assert session.loaded_example() == "masked-softmax-1d"
    state = session.document.state
    session.push(ReplaceState(state, message(QT_TRANSLATE_NOOP("FileActions", "Open {name}"), name="x.npz")))
    assert session.loaded_example() is None
    assert not window.results.example.isVisible()
    session.undo_stack.undo()
    assert session.loaded_example() == "masked-softmax-1d"


# ---------------------------------------------------------------- the example, named


def test_the_example_on_show_is_named_over_the_maps_in_full(window, qtbot):
    caption = window.results.example
    preset = PRESETS["additive-toy"]
    assert caption.isVisible() and preset.title in caption.text() and preset.description in caption.text()
    assert caption.wordWrap()  # never cut: it wraps
    window.session.load_preset("masked-softmax-2d")
    assert PRESETS["masked-softmax-2d"].description in caption.text()
    window.set_language("pt_BR")
    try:
        assert "Livro" in caption.text()
    finally:
        window.set_language("en")
    assert PRESETS["masked-softmax-2d"].title in caption.text()


def test_help_has_first_steps_and_the_keyboard_map(window):
    from attnviz.ui.views.presenter import first_steps_html, keyboard_map_html

    texts = [a.text().replace("&", "") for a in window.menu("help").actions()]
    assert "First steps" in texts and "Keyboard map" in texts and "About attnviz" in texts
    keys = keyboard_map_html(window)
    for shortcut, what in (("Ctrl+Shift+D", "Side by side"), ("F5", "Presentation mode"), ("F1", "Keyboard map")):
        assert shortcut in keys and what in keys
    assert "PgDown" in keys
    # Every key: the walk's own shortcut (not an action) and the text zoom too.
    for shortcut in ("Ctrl+Shift+W", "Ctrl+=", "Ctrl+-", "PgUp"):
        assert shortcut in keys, shortcut
    assert "What to edit" in first_steps_html()


def test_slide_text_has_capitals_of_20_px_and_the_zoom_scales_it(monkeypatch):
    """The back row reads capitals of 20 px (issue 37; at the old factor 1.6 they were 14): the
    slide font reaches them from any normal size, and a font whose capitals are small for its
    point size is enlarged further rather than left short."""
    from PySide6.QtGui import QFont, QFontMetricsF

    from attnviz.ui.window import presentation
    from attnviz.ui.window.presentation import SLIDE_CAPITAL_PX, slide_font

    normal = QApplication.font()
    for size in (7.0, 9.0, 11.0):
        base = QFont(normal)
        base.setPointSizeF(size)
        big = slide_font(base)
        assert QFontMetricsF(big).capHeight() >= SLIDE_CAPITAL_PX - 0.05
        assert big.pointSizeF() < 40  # enlarged to the minimum, not without bound
        zoomed = slide_font(base, 1.15)
        assert zoomed.pointSizeF() == pytest.approx(big.pointSizeF() * 1.15, rel=1e-6)
    # Were the factor too small for this font (capitals of 9 px at 1.0), the minimum is still met.
    monkeypatch.setattr(presentation, "PRESENTATION_FONT", 1.0)
    assert QFontMetricsF(slide_font(normal)).capHeight() >= SLIDE_CAPITAL_PX - 0.05


def test_ctrl_plus_and_minus_scale_the_slides_text_further_and_f5_gives_it_back(window, qtbot):
    app = QApplication.instance()
    normal = app.font().pointSizeF()
    window.set_presentation_mode(True)
    slide = app.font().pointSizeF()
    maps = window.results.maps
    scale = maps[0].font_scale
    ctrl = Qt.KeyboardModifier.ControlModifier
    qtbot.keyClick(window, Qt.Key.Key_Equal, ctrl)
    assert app.font().pointSizeF() == pytest.approx(slide * 1.15, rel=1e-3)
    assert maps[0].font_scale == pytest.approx(scale * 1.15, rel=1e-3)
    qtbot.keyClick(window, Qt.Key.Key_Minus, ctrl)
    qtbot.keyClick(window, Qt.Key.Key_Minus, ctrl)
    assert app.font().pointSizeF() == pytest.approx(slide / 1.15, rel=1e-3)
    window.set_presentation_mode(False)
    assert app.font().pointSizeF() == pytest.approx(normal) and maps[0].font_scale == 1.0
    # The zoom is kept for the next F5, and Ctrl+0 gives the designed size back.
    window.set_presentation_mode(True)
    assert app.font().pointSizeF() == pytest.approx(slide / 1.15, rel=1e-3)
    qtbot.keyClick(window, Qt.Key.Key_0, ctrl)
    assert app.font().pointSizeF() == pytest.approx(slide) and maps[0].font_scale == pytest.approx(scale)
    window.set_presentation_mode(False)


# ---------------------------------------------------------------- nothing changes on the way back


def _texts(window) -> list[str]:
    """Every title and label on show: labels, buttons, tabs, menus and actions, map titles."""
    from attnviz.ui.heatmap import HeatmapWidget

    texts = [window.windowTitle()]
    texts += [label.text() for label in window.findChildren(QLabel) if label.isVisibleTo(window)]
    texts += [button.text() for button in window.findChildren(QAbstractButton) if button.isVisibleTo(window)]
    texts += [window.tool_tabs.tabText(i) for i in range(window.tool_tabs.count())]
    texts += [action.text() for action in window.menuBar().actions()]
    texts += [a.text() for menu in ("view", "presets", "tools", "help") for a in window.menu(menu).actions()]
    texts += [m.title for m in window.findChildren(HeatmapWidget)]
    return texts


def test_language_presentation_and_theme_round_trips_leave_every_text_as_it_was(window, qtbot):
    from attnviz.ui import theme

    window.lessons.load("exercise-3-summation")
    _compare(qtbot, window)
    window.tool_tabs.setCurrentIndex(0)
    wait_current(qtbot, window)
    qtbot.wait(20)
    before = _texts(window)
    mode = theme.current_mode()
    window.set_language("pt_BR")
    assert _texts(window) != before
    window.set_language("en")
    window.set_presentation_mode(True)
    window.set_presentation_mode(False)
    window.set_theme("dark" if mode != "dark" else "light")
    window.set_theme(mode)
    qtbot.wait(50)
    assert _texts(window) == before


# ---------------------------------------------------------------- wording


def test_counts_of_one_are_singular(window, qtbot):
    from attnviz.engine import attend

    window.heads_dock.show()
    grid = window.heads_dock.view()
    assert ": 1 head, batch 0" in grid.title.text()  # the book's one call has one head, not "1 heads"
    result = attend(np.zeros((1, 1, 2)), np.zeros((1, 5, 2)), np.zeros((1, 5, 1)), np.array([7]))
    assert any(w.startswith("1 valid length exceeds the 5 keys") for w in result.diagnostics.warnings)


def test_the_scaling_labs_uniform_label_follows_presentation_mode(window):
    window.dock(SCALING_LAB_DOCK).show()
    lab = window.dock(SCALING_LAB_DOCK).view()
    size = lab.guides["entropy"].label.textItem.font().pointSizeF()
    window.set_presentation_mode(True)
    assert lab.guides["entropy"].label.textItem.font().pointSizeF() > 1.5 * size
    window.set_presentation_mode(False)
    assert lab.guides["entropy"].label.textItem.font().pointSizeF() == size


def test_a_refused_cell_goes_with_the_next_valid_edit_and_the_tables_do_not_move(window, qtbot):
    model = window.inputs.models["queries"]
    wait_current(qtbot, window)
    qtbot.wait(100)  # the window's first layout passes are over
    tabs_y = window.inputs.tabs.y()
    assert not model.setData(model.index(0, 0), "abc")
    assert window.inputs.error.isVisible() and "'abc' is not a number" in window.inputs.error.text()
    assert window.inputs.tabs.y() == tabs_y  # the message's line was held: no jump under the pointer
    window.controls.settings.settingsChanged.emit({"dropout": 0.2})  # a valid edit elsewhere
    wait_current(qtbot, window)
    assert not window.inputs.error.isVisible()
    assert window.inputs.tabs.y() == tabs_y


def test_the_presenter_bar_lists_every_view_of_the_table(window):
    """Every view's place is read from one table (views/docks.py), the presenter bar's View
    menu too: a view declared elsewhere (Compare runs was) was missing from it."""
    from attnviz.ui.i18n import tr_text
    from attnviz.ui.views.docks import DOCKS, RUN_COMPARE_DOCK

    window.set_presentation_mode(True)
    try:
        window.presenter.refresh()
        texts = {a.text().split("\t")[0] for a in window.presenter.views.menu().actions()}
        assert tr_text(DOCKS[RUN_COMPARE_DOCK].action_text).replace("&", "") in texts
    finally:
        window.set_presentation_mode(False)


def test_hover_on_the_output_names_a_value_dimension_not_a_key(window, qtbot):
    window.set_presentation_mode(True)  # the output as a map beside the weights
    try:
        from attnviz.ui.heatmap.paint import format_number

        heatmap = window.output.heatmap
        qtbot.waitUntil(lambda: heatmap.values is not None)
        text = heatmap._hover_text_for(0, 1)  # noqa: SLF001 - what the tooltip shows
        output = window.session.last_outcome.view.output[window.session.selection.batch]
        assert "value dimension 1" in text and "key" not in text
        assert text.endswith(f": {format_number(float(output[0, 1]))}")
    finally:
        window.set_presentation_mode(False)
