"""Slides as teaching tools (issue 37): the output of every batch element beside the weights,
labelled and with numbers a slide's cells hold; a caption that never quotes numbers an edit
changed; side by side's two maps on one colour scale fitted to their weights, level when a title
wraps; the lesson panel as wide as its revealed answer needs."""

from __future__ import annotations

import numpy as np

from attnviz.ui.app.output_panel import output_format
from attnviz.ui.views.docks import COMPARE_DOCK
from attnviz.ui.views.side_by_side import CompareView

from .conftest import wait_current


def test_the_output_beside_the_weights_shows_every_batch_element_labelled(window, qtbot):
    window.session.load_preset("masked-softmax-2d")  # two batch elements, both maps on show
    window.set_presentation_mode(True)
    try:
        wait_current(qtbot, window)
        output = window.output
        qtbot.waitUntil(lambda: all(m.values is not None for m in output.heatmaps[:2]), timeout=10000)
        view = window.session.current_view()
        shown = [m for m in output.heatmaps if m.isVisible()]
        assert len(shown) == view.output.shape[0] == 2
        for b, heatmap in enumerate(shown):
            np.testing.assert_allclose(heatmap.values, view.output[b])
            assert heatmap.title == f"batch {b}"  # as the weights map of the same row
        # Batch element 1 picked: the table follows it, the maps still show both.
        window.session.set_batch(1)
        qtbot.waitUntil(lambda: np.allclose(output.model.array(), view.output[1]))
        assert [m.title for m in output.heatmaps if m.isVisible()] == ["batch 0", "batch 1"]
    finally:
        window.set_presentation_mode(False)


def test_output_numbers_keep_three_digits_so_they_still_fit_a_slides_cell():
    # "-0.214" (".3g") was one character wider than "3.73" and a slide's cell hid every number.
    assert output_format([np.array([[3.73, -0.214]])]) == ".2f"
    assert format(-0.214, output_format([np.array([[3.73, -0.214]])])) == "-0.21"
    assert format(13.0, output_format([np.array([[10.0, 13.0]])])) == "13.0"  # not "13.00"
    assert output_format([np.array([[1.0, np.nan]]), np.array([[250.0]])]) == ".3g"


def test_the_caption_says_the_example_was_edited_instead_of_quoting_stale_numbers(window, qtbot):
    from attnviz.state.document import SetSettings

    window.session.load_preset("masked-softmax-2d")
    wait_current(qtbot, window)
    caption = window.results.example
    assert "[[1, 3], [2, 4]]" in caption.text()  # the description quotes the valid lengths
    window.session.push(SetSettings({"mask_mode": "strict"}))
    wait_current(qtbot, window)
    assert "[[1, 3], [2, 4]]" not in caption.text() and "edited" in caption.text()
    window.session.undo_stack.undo()
    wait_current(qtbot, window)
    assert "[[1, 3], [2, 4]]" in caption.text()


def test_side_by_side_maps_share_a_scale_fitted_to_their_weights_and_stay_level(window, qtbot):
    window.lessons.load("exercise-3-summation")
    window.set_presentation_mode(True)
    try:
        view = window.dock(COMPARE_DOCK).view()
        assert isinstance(view, CompareView)
        qtbot.waitUntil(lambda: view.last_result is not None and not view.busy, timeout=30000)
        qtbot.wait(50)
        a, b = view.map_a, view.map_b
        both = np.concatenate([a.values.ravel(), b.values.ravel()])
        assert a.levels == b.levels
        # Fitted to the data: the top of the scale is the largest weight of the two (within
        # float32's rounding of the weights), not a fixed 1.
        assert abs(a.levels[1] - float(np.nanmax(both))) < 1e-3 < 1.0 - a.levels[1]
        # One title wrapped (or neither): the plots start at the same height.
        top_a = a.plot_item.getViewBox().sceneBoundingRect().top()
        top_b = b.plot_item.getViewBox().sceneBoundingRect().top()
        assert abs(top_a - top_b) <= 1
    finally:
        window.set_presentation_mode(False)


def test_the_lesson_panel_widens_for_a_revealed_answer_on_a_slide(window, qtbot):
    window.set_presentation_mode(True)
    try:
        for _ in range(3):
            window.zoom_text(1)  # the back row's size: the answer no longer fits a third
        window.lessons.load("pitfall-zero-length")
        lesson = window.lessons.dock
        qtbot.waitUntil(lambda: lesson.isVisible() and window.lessons.view.isVisible(), timeout=30000)
        qtbot.wait(50)
        question_width = lesson.width()
        window.lessons.view.answer_button.setChecked(True)
        bar = window.lessons.view.answer_scroll.verticalScrollBar()

        def answer_fits() -> bool:
            return not bar.isVisible() or bar.maximum() == 0

        # The panel widens until the answer fits (a panel already as wide as the answer needs,
        # left so by the tests before this one in the same process, need not widen).
        qtbot.waitUntil(answer_fits, timeout=30000)
        qtbot.wait(50)
        assert answer_fits()
        assert lesson.width() >= question_width
        assert lesson.width() <= 0.62 * window.width() + 1
    finally:
        window.zoom_text(0)
        window.set_presentation_mode(False)


def test_the_settings_a_lesson_asks_about_are_on_its_slide(window, qtbot):
    """Presentation mode hides the settings panel: the mask mode the zero-length pitfall asks to
    switch is beside its question, and switching it there is the same undoable edit."""
    window.set_presentation_mode(True)
    try:
        window.lessons.load("pitfall-zero-length")
        view = window.lessons.view
        qtbot.waitUntil(lambda: view.settings is not None and view.settings.isVisible())
        assert view.settings is not None and list(view.settings.declared) == ["mask_mode"]
        box = view.settings.combos["mask_mode"]
        assert box.currentData() == window.session.document.state.settings.mask_mode == "d2l"
        box.setCurrentIndex(box.findData("neg_inf"))
        assert window.session.document.state.settings.mask_mode == "neg_inf"
        window.session.undo_stack.undo()
        assert box.currentData() == "d2l"
        window.lessons.load("pitfall-float16")
        assert view.settings is not None and list(view.settings.declared) == ["dtype"]
        window.lessons.load("pitfall-wrong-polarity")  # its question asks to switch nothing
        assert view.settings is None
    finally:
        window.set_presentation_mode(False)
    window.lessons.load("pitfall-zero-length")
    assert view.settings is not None and not view.settings.isVisible()  # the settings panel has it


def test_a_window_closed_on_a_slide_gives_the_application_its_font_back(qtbot):
    """A notebook's second window (the QApplication outlives the first) starts at normal size."""
    from PySide6.QtWidgets import QApplication

    from attnviz.ui.window.main_window import MainWindow

    before = QApplication.font().pointSizeF()
    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    win.set_presentation_mode(True)
    assert QApplication.font().pointSizeF() > before
    win.close()
    assert QApplication.font().pointSizeF() == before
