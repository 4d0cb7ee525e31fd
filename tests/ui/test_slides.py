"""Slides as teaching tools (issue 37): the output of every batch element beside the weights,
labelled and with numbers a slide's cells hold; a caption that never quotes numbers an edit
changed; side by side's two maps on one colour scale fitted to their weights, level when a title
wraps; a lesson's answer longer than its panel shown a page at a time."""

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


def _settled_width(widget, qtbot) -> int:  # noqa: ANN001
    """The widget's width once it stops changing (at most ~2 s): a slide's lesson panel is fitted
    a turn after the font reaches its texts, and under a loaded machine one 50 ms wait measured
    it mid-fit (448 px, then 503)."""
    width = -1
    for _ in range(40):
        qtbot.wait(50)
        if widget.width() == width:
            break
        width = widget.width()
    return width


def test_a_long_answer_is_shown_a_page_at_a_time_by_page_down_never_scrolled(window, qtbot):
    """At the back row's size the zero-length pitfall's answer is longer than the lesson panel:
    it used to widen the panel over the maps (62% of the slide) and still scroll. Now the panel
    keeps the question's width, the answer is cut between sentences into pages that each fit, and
    the clicker's Page Down turns them before it leaves the lesson (Page Up turns back)."""
    from attnviz.teaching.lessons import LESSONS

    window.set_presentation_mode(True)
    try:
        for _ in range(3):
            window.zoom_text(1)  # the back row's size: the answer no longer fits the panel
        window.lessons.load("pitfall-zero-length")
        lesson, view = window.lessons.dock, window.lessons.view
        clicker = window.presenter.clicker
        qtbot.waitUntil(lambda: lesson.isVisible() and view.isVisible(), timeout=30000)
        question_width = _settled_width(lesson, qtbot)
        bar = view.answer_scroll.verticalScrollBar()

        def fits() -> bool:
            return not bar.isVisible() or bar.maximum() == 0

        clicker.step(1)  # the answer revealed (its first page)
        qtbot.waitUntil(lambda: view.answer_shown and len(view.answer_pages) > 1, timeout=30000)
        qtbot.wait(50)
        pages = list(view.answer_pages)
        # All of the answer, in order (cut between sentences, or words where one is too long).
        assert " ".join(pages).split() == LESSONS["pitfall-zero-length"].explanation.split()
        assert abs(lesson.width() - question_width) <= 16  # the maps beside it keep their room
        for number in range(len(pages)):
            assert view.answer_page == number
            qtbot.waitUntil(fits, timeout=10000)
            assert f"({number + 1}/{len(pages)})" in view.explanation.text()
            if number + 1 < len(pages):
                clicker.step(1)
        clicker.step(-1)  # Page Up: the page before, still on this lesson
        assert view.answer_page == len(pages) - 2 and view.answer_shown
        clicker.step(1)
        clicker.step(1)  # past the last page: the next lesson's question
        qtbot.waitUntil(lambda: view.lesson is not LESSONS["pitfall-zero-length"], timeout=30000)
        assert not view.answer_shown and view.answer_pages == []
    finally:
        window.zoom_text(0)
        window.set_presentation_mode(False)


def test_answers_are_cut_between_sentences_and_between_words_only_where_one_is_too_long():
    from attnviz.ui.views.lessons import _pack, sentences

    assert sentences("One. Two? Three: four, five! Six") == ["One.", "Two?", "Three:", "four, five!", "Six"]
    assert sentences("1/4 on each of the 4 keys, [3, 4]: done.") == ["1/4 on each of the 4 keys, [3, 4]:", "done."]
    assert sentences("  ") == []

    def at_most(n: int):
        return lambda words: len(" ".join(words).split()) <= n  # a page of n words

    text = "One two. Three four five. Six seven eight nine ten eleven. Twelve."
    assert _pack(sentences(text), at_most(5)) == [
        "One two. Three four five.",
        "Six seven eight nine ten",  # a sentence longer than a page, cut between words
        "eleven. Twelve.",
    ]
    assert _pack(sentences(text), at_most(100)) == [text]


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
