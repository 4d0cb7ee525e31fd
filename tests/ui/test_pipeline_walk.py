"""The pipeline's stage-by-stage walk, its temperature what-if and the code beside the stage."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from attnviz.compute import run_state
from attnviz.compute.pipeline import softmax_allowed
from attnviz.snippets import FRAMEWORKS, make_snippet
from attnviz.state.document import SetSettings
from attnviz.teaching.presets import PRESETS
from attnviz.ui.views.pipeline import WALK_SHORTCUT
from attnviz.ui.views.pipeline_code import FRAMEWORK_KEY, snippet_stage
from attnviz.ui.views.pipeline_steps import HIDDEN, changed_cells, walk_stages, what_if

from .conftest import wait_current

# ---------------------------------------------------------------------------- the numbers (no Qt)


def _view(preset: str):
    state = PRESETS[preset].build()
    outcome = run_state(state, 0)
    assert outcome.view is not None
    return state, outcome.view


@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize("mode", ["d2l", "strict", "neg_inf", "sdpa", "float01", "inverted"])
def test_the_what_if_at_factor_one_is_the_apps_result(preset, mode):
    from dataclasses import replace

    state = PRESETS[preset].build()
    state = replace(state, settings=replace(state.settings, mask_mode=mode))
    view = run_state(state, 0).view
    head = state.head_view()
    for b in range(view.weights.shape[0]):
        w = what_if(view, b, head.values[b], mode, 1.0)
        np.testing.assert_allclose(w.weights, view.weights[b], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(w.output, view.output[b], rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(w.masked_scores, view.masked_scores[b].astype(np.float64))


def test_the_what_if_sharpens_and_flattens_the_weights():
    state, view = _view("masked-softmax-2d")
    head = state.head_view()
    allowed = softmax_allowed(view.mask[1].astype(bool), "d2l")
    flat = what_if(view, 1, head.values[1], "d2l", 1e-6).weights
    # Scores × 0: uniform over the keys each query may attend, 0 elsewhere (the mask stays).
    np.testing.assert_allclose(flat, allowed / allowed.sum(axis=-1, keepdims=True), atol=1e-5)
    sharp = what_if(view, 1, head.values[1], "d2l", 1e4).weights
    top = np.argmax(np.where(allowed, view.scores[1], -np.inf), axis=-1)
    np.testing.assert_allclose(sharp[np.arange(sharp.shape[0]), top], 1.0, atol=1e-6)
    # The output is those weights times the values (the values are the identity here).
    doubled = what_if(view, 1, head.values[1], "d2l", 2.0)
    np.testing.assert_allclose(doubled.output, doubled.weights)


def test_changed_cells_compares_like_shapes_only():
    a = np.array([[1.0, np.nan], [3.0, 4.0]])
    b = np.array([[1.0, np.nan], [-1e6, 4.0]])
    assert changed_cells(a, b).tolist() == [[False, False], [True, False]]
    assert changed_cells(a, np.zeros((2, 3))) is None
    assert walk_stages(True)[0] == HIDDEN and walk_stages(False)[0] == "raw_scores"


# ---------------------------------------------------------------------------- in the window


def _pipeline(window, qtbot):
    dock = window.pipeline_dock
    dock.show()
    qtbot.waitUntil(lambda: dock.view().isVisible())
    return dock.view()


def _key(qtbot, widget, key):
    qtbot.keyClick(widget, key)
    QApplication.processEvents()


def test_the_walk_steps_with_the_keys_and_outlines_what_changed(window, qtbot):
    view = _pipeline(window, qtbot)
    window.session.load_preset("masked-softmax-2d")
    wait_current(qtbot, window)
    view.set_walking(True)
    walk = view.walk
    qtbot.waitUntil(lambda: walk.isVisible())
    assert walk.stages == walk_stages(False) and walk.stage == "raw_scores"
    _key(qtbot, walk, Qt.Key.Key_Right)
    assert walk.stage == "scores"
    _key(qtbot, walk, Qt.Key.Key_PageDown)  # what a presentation clicker sends
    assert walk.stage == "mask"
    _key(qtbot, walk, Qt.Key.Key_PageDown)
    assert walk.stage == "masked_scores"
    assert view.highlighted_stage == "masked_scores"  # the formulas follow
    # The masked scores against the scores they came from: exactly the masked cells changed.
    outcome = window.session.last_outcome.view
    mask = outcome.mask[0].astype(bool)
    np.testing.assert_array_equal(walk.changed(), ~mask)
    np.testing.assert_array_equal(walk.now.values, outcome.masked_scores[0])
    np.testing.assert_array_equal(walk.before.values, outcome.scores[0])
    assert not walk._outline.path().isEmpty()  # noqa: SLF001 - the outline is drawn
    _key(qtbot, walk, Qt.Key.Key_Left)
    _key(qtbot, walk, Qt.Key.Key_PageUp)
    assert walk.stage == "scores"
    # Dot scoring has no scaling step: nothing changed, and the walk says so.
    assert not walk.changed().any()
    assert "no cell changed" in walk.change.text()
    # Live to edits: a new mask mode redraws the step on show.
    walk.show_stage("weights")
    window.session.push(SetSettings({"mask_mode": "strict"}, "strict"))
    wait_current(qtbot, window)
    qtbot.waitUntil(
        lambda: (
            walk.now.values is not None and np.array_equal(walk.now.values, window.session.last_outcome.view.weights[0])
        )
    )
    # The shortcut leaves the walk and comes back to it.
    assert view.walk_shortcut.key().toString() == WALK_SHORTCUT
    view.walk_shortcut.activated.emit()
    assert not view.walking
    view.walk_shortcut.activated.emit()
    assert view.walking and walk.stage == "weights"


def test_presenting_the_walk_takes_the_arrows_wherever_the_focus_is(window, qtbot):
    view = _pipeline(window, qtbot)
    view.set_walking(True)
    window.set_presentation_mode(True)
    try:
        assert all(shortcut.isEnabled() for shortcut in view._walk_keys)  # noqa: SLF001
        start = view.walk.stage
        example = window.session.loaded_example()
        window.setFocus()
        qtbot.keyClick(window, Qt.Key.Key_PageDown)
        # The clicker's key steps the walk on show, not the lessons (one owner of the key: the
        # presenter bar; two shortcuts on it would be ambiguous and neither would fire).
        assert view.walk.stage != start
        assert window.session.loaded_example() == example
        qtbot.keyClick(window, Qt.Key.Key_PageUp)
        assert view.walk.stage == start
        # At its last step the walk hands the clicker on to the lecture's next slide (the next
        # example), and the walk of that example is entered at its step 1.
        view.walk.show_stage(view.walk.stages[-1])
        qtbot.keyClick(window, Qt.Key.Key_PageDown)
        assert window.session.loaded_example() != example and window.tool_tabs.currentIndex() == 0
        wait_current(qtbot, window)
        qtbot.keyClick(window, Qt.Key.Key_PageDown)
        wait_current(qtbot, window)
        assert view.walking and view.isVisible() and view.walk.stage == view.walk.stages[0]
        # At its first step Page Up hands back to the example's slide.
        qtbot.keyClick(window, Qt.Key.Key_PageUp)
        assert window.tool_tabs.currentIndex() == 0
    finally:
        window.set_presentation_mode(False)
    assert not any(shortcut.isEnabled() for shortcut in view._walk_keys)  # noqa: SLF001


def test_the_additive_walk_has_the_hidden_features_as_a_step(window, qtbot):
    view = _pipeline(window, qtbot)
    window.session.load_preset("additive-toy")
    wait_current(qtbot, window)
    view.set_walking(True)
    walk = view.walk
    assert walk.stages[0] == HIDDEN
    walk.show_stage(HIDDEN)
    outcome = window.session.last_outcome.view
    head = window.session.document.state.head_view()
    hidden = walk.now.values
    # Row j: tanh(W_q q_0 + W_k k_j); w_v · row j is the raw score of query 0 and key j.
    np.testing.assert_allclose(hidden @ outcome.params["w_v"].reshape(-1), outcome.raw_scores[0, 0], rtol=1e-5)
    assert hidden.shape == (head.n_keys, outcome.params["w_v"].size)
    _key(qtbot, walk, Qt.Key.Key_Right)
    assert walk.stage == "raw_scores"
    # Of the query picked (here in another view): w_v · row j is that query's raw score with key j.
    window.session.load_preset("masked-softmax-2d")
    window.session.push(SetSettings({"scoring": "additive"}, "additive"))
    wait_current(qtbot, window)
    walk.show_stage(HIDDEN)
    window.session.select_query(1)
    assert walk.hidden_query == 1 and walk.query_box.isVisible()
    outcome = window.session.last_outcome.view
    w_v = outcome.params["w_v"].reshape(-1)
    np.testing.assert_allclose(walk.now.values @ w_v, outcome.raw_scores[0, 1], rtol=1e-5, atol=1e-6)


def test_the_temperature_slider_is_a_what_if_of_the_walk_only(window, qtbot):
    view = _pipeline(window, qtbot)
    window.session.load_preset("masked-softmax-2d")
    wait_current(qtbot, window)
    view.set_walking(True)
    walk = view.walk
    walk.show_stage("weights")
    version = window.session.document.version
    app_weights = window.session.last_outcome.view.weights[0].copy()
    walk.set_factor(4.0)
    assert walk.factor == pytest.approx(4.0)
    assert walk.what_if_banner.isVisible() and "4" in walk.what_if_banner.text()
    # Sharper weights on the walk; the document, its result and the stage cards unchanged.
    assert walk.now.values[1].max() > app_weights[1].max() + 0.05  # row 0 has one key: 1 either way
    np.testing.assert_allclose(walk.now.values.sum(axis=-1), 1.0, rtol=1e-6)
    assert window.session.document.version == version
    np.testing.assert_array_equal(view.stage_values("weights"), app_weights)
    walk.set_factor(1.0)
    assert not walk.what_if_banner.isVisible()
    np.testing.assert_allclose(walk.now.values, app_weights)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_the_code_panel_shows_the_lines_of_the_stage_on_show(window, qtbot, framework):
    view = _pipeline(window, qtbot)
    window.session.load_preset("masked-softmax-2d")
    wait_current(qtbot, window)
    view.set_code_visible(True)
    view.code_panel.set_framework(framework)
    view.code_panel.frameworkChosen.emit(framework)
    view.set_walking(True)
    view.walk.show_stage("masked_scores")
    panel = view.code_panel
    qtbot.waitUntil(lambda: panel.snippet is not None and panel.snippet.framework == framework, timeout=20000)
    state, outcome = window.session.document.state, window.session.current_outcome()
    expected = make_snippet(state, framework, outcome=outcome)
    assert panel.editor.toPlainText() == expected.code
    spans = expected.stage_spans[snippet_stage("masked_scores")]
    assert panel.highlighted_lines() == [n for s in spans for n in range(s.first, s.last + 1)]
    assert panel.highlighted_lines()
    # Highlighted in the editor: the stage's lines and their function's.
    painted = {sel.cursor.blockNumber() + 1 for sel in panel.editor.extraSelections()}
    assert set(panel.highlighted_lines()) <= painted
    assert set(range(spans[0].function_lines[0], spans[0].function_lines[1] + 1)) <= painted
    assert spans[0].function in panel.caption.text()
    # The next stage's lines follow the walk.
    view.walk.forward()
    assert panel.stage == "weights"
    assert panel.highlighted_lines() == [n for s in expected.stage_spans["weights"] for n in range(s.first, s.last + 1)]
    # Copy as code's setting is the panel's.
    from attnviz.ui.preferences import default_settings

    assert default_settings().value(FRAMEWORK_KEY) == framework


def test_the_code_panel_follows_hovers_and_the_language(window, qtbot):
    from attnviz.ui.i18n import install_language

    view = _pipeline(window, qtbot)
    view.set_code_visible(True)
    panel = view.code_panel
    qtbot.waitUntil(lambda: panel.snippet is not None, timeout=20000)
    view.set_highlight("mask")  # what hovering the mask's card does
    view.set_highlight(None)  # the mouse left: the lines stay, to be read
    assert panel.stage == "mask"
    lines = panel.highlighted_lines()
    assert lines
    english = panel.caption.text()
    assert english.startswith("Computed by")
    app = QApplication.instance()
    try:
        assert install_language(app, "pt_BR")
        QApplication.processEvents()
        assert panel.caption.text() != english
        assert panel.framework_caption.text() != "&Code in"
        assert view.walk_button.text() != "&Walk the stages"
        assert panel.highlighted_lines() == lines
    finally:
        install_language(app, "en")
    assert panel.caption.text() == english


def test_the_panel_takes_the_framework_chosen_in_the_edit_menu(window, qtbot):
    view = _pipeline(window, qtbot)
    view.set_code_visible(True)
    window.tool_tabs.setCurrentIndex(0)  # the pipeline off show
    window.code_copier.set_framework("tensorflow")  # Edit › Code framework
    view = _pipeline(window, qtbot)
    assert view.code_panel.framework == "tensorflow"
    qtbot.waitUntil(
        lambda: view.code_panel.snippet is not None and view.code_panel.snippet.framework == "tensorflow",
        timeout=20000,
    )
    # And the other way: chosen in the panel, copy as code writes it.
    view.code_panel.framework_box.setCurrentIndex(view.code_panel.framework_box.findData("jax"))
    assert window.code_copier.copy() is not None
    assert window.code_copier.last_snippet.framework == "jax"


def test_every_stage_map_is_whole_with_a_labelled_colour_bar(window, qtbot):
    """A batch element with no valid key: its masked scores are all −10⁶, whose colour bar's labels
    ("-1.5e+06") were wider than the bar's fixed axis and all left out."""
    from .layout_probe import map_problems

    view = _pipeline(window, qtbot)
    window.lessons.load("pitfall-zero-length")
    wait_current(qtbot, window)
    qtbot.waitUntil(lambda: view.cards["masked_scores"].heatmap.values is not None)
    assert (view.cards["masked_scores"].heatmap.values == -1e6).all()
    for stage, card in view.cards.items():
        view.stage_grid.parentWidget().parentWidget().ensureWidgetVisible(card)
        qtbot.wait(30)
        assert map_problems(card, stage) == []


def test_the_stage_cards_follow_presentation_mode_when_the_pipeline_was_shown_first(window, qtbot):
    """A card's frame is a style sheet, and Qt's style sheets keep the font a widget was polished
    with: presentation mode's larger type stopped at the cards (their titles and notes stayed
    small) when the pipeline was on show before presentation mode began."""
    view = _pipeline(window, qtbot)
    card = view.cards["raw_scores"]
    normal = card.note.font().pointSizeF()
    window.set_presentation_mode(True)
    try:
        qtbot.waitUntil(lambda: view.font().pointSizeF() > normal)
        big = view.font().pointSizeF()
        assert card.note.font().pointSizeF() == big and card.title.font().pointSizeF() == big
        assert card.title.font().bold()
    finally:
        window.set_presentation_mode(False)
    qtbot.waitUntil(lambda: card.note.font().pointSizeF() == normal)
    assert card.title.font().pointSizeF() == normal


def test_on_a_slide_the_walks_maps_keep_their_place_and_the_what_if_keeps_to_one_line(window, qtbot):
    """Issue 37: the "Computed from" caption took one line at a step and two at the next (the
    maps moved at every press), step 1 had no thumbnail (the big map widened), the what-if's
    banner wrapped in slide type and pushed the map's axis off, and the notes under the softmax
    ran the explanation below a 1280x720 slide."""
    view = _pipeline(window, qtbot)
    window.session.load_preset("masked-softmax-2d")
    wait_current(qtbot, window)
    view.set_walking(True)
    walk = view.walk
    window.set_presentation_mode(True)
    try:
        qtbot.waitUntil(lambda: walk.isVisible())
        places = set()
        for stage in walk.stages:
            walk.show_stage(stage)
            qtbot.wait(30)
            places.add((walk.now.geometry().getRect(), walk.before_caption.height()))
        assert len(places) == 1, places
        # On a slide the softmax's notes keep to the step's: what m_i is at the mask.
        walk.show_stage("mask")
        assert "may be attended" in walk.equation.text() and "Mask mode" not in walk.equation.text()
        walk.show_stage("weights")
        assert "Mask mode" in walk.equation.text() and "may be attended" not in walk.equation.text()
        walk.set_factor(2.0)
        qtbot.wait(30)
        banner = walk.what_if_banner
        assert banner.isVisible() and banner.height() < 2 * banner.fontMetrics().height()
        assert "temperature" in banner.toolTip()  # the whole text, for the lecturer
        walk.set_factor(1.0)
    finally:
        window.set_presentation_mode(False)
    # Off a slide the equation keeps every note.
    walk.show_stage("mask")
    assert "may be attended" in walk.equation.text() and "Mask mode" in walk.equation.text()
