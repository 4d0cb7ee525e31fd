"""Lessons in the Presets menu (one undo step each, the lab shows what the answer claims). Copy as
code is tested in test_copy_code.py."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.state.document import SetSettings
from attnviz.teaching.lessons import EXERCISE_PRESETS, LESSONS, PITFALL_PRESETS
from attnviz.ui.views.lessons import LESSON_DOCK, install_lessons, menu_text
from attnviz.ui.views.masking_lab import MASKING_LAB_DOCK, MaskingLabView, install_masking_lab

from .conftest import wait_session


@pytest.fixture
def lessons(host):
    install_masking_lab(host.session, host)
    return install_lessons(host.session, host)


def wait_lab(qtbot, window) -> MaskingLabView:
    view = window.dock(MASKING_LAB_DOCK).view()
    qtbot.waitUntil(lambda: view.shown_version == window.session.document.version and not view.busy, timeout=30000)
    return view


# ------------------------------------------------------------------------------ the menus


def test_pitfalls_and_exercises_submenus_with_the_question_as_tooltip(host, lessons):
    window = host
    assert lessons.pitfalls_menu.menuAction() in window.menu("presets").actions()
    assert lessons.exercises_menu.menuAction() in window.menu("presets").actions()
    assert lessons.pitfalls_menu.title() == "Pitfalls" and lessons.exercises_menu.title() == "Exercises"
    pitfalls = lessons.pitfalls_menu.actions()
    exercises = lessons.exercises_menu.actions()
    assert [a.text() for a in pitfalls] == [menu_text(LESSONS[n]) for n in PITFALL_PRESETS]
    assert [a.text() for a in exercises] == [menu_text(LESSONS[n]) for n in EXERCISE_PRESETS]
    assert pitfalls[0].text() == "A valid length of 0"
    for action, name in zip([*pitfalls, *exercises], [*PITFALL_PRESETS, *EXERCISE_PRESETS]):
        assert action.toolTip() == LESSONS[name].question
    assert lessons.pitfalls_menu.toolTipsVisible()
    assert window.dock(LESSON_DOCK) is lessons.dock and not lessons.dock.isVisible()


@pytest.mark.parametrize("name", list(LESSONS))
def test_a_lesson_is_one_undo_step_and_shows_its_question(host, qtbot, lessons, name):
    window = host
    lesson = LESSONS[name]
    before = window.session.document.state.copy()
    count = window.session.undo_stack.count()
    lessons.actions[name].trigger()
    assert window.session.undo_stack.count() == count + 1
    assert window.session.undo_stack.undoText() == f"Lesson: {lesson.title}"
    expected = lesson.preset.build()
    state = window.session.document.state
    assert state.settings == expected.settings
    for role in ("queries", "keys", "values"):
        np.testing.assert_array_equal(getattr(state.head_view(), role), getattr(expected.head_view(), role))
    for lens in ("lens_1d", "lens_2d"):
        np.testing.assert_array_equal(getattr(state, lens), getattr(expected, lens))
    wait_session(qtbot, window.session)
    assert window.session.last_outcome.error is None

    view = lessons.view
    assert lessons.dock.isVisible() and view.lesson is lesson
    assert lesson.question[:40] in view.question.text().replace("&#x27;", "'").replace("&#8203;", "")
    assert not view.answer_shown
    view.answer_button.click()
    assert view.answer_shown and view.answer_button.text() == "Hide the answer"
    assert lesson.explanation[:40] in view.explanation.text().replace("&#x27;", "'").replace("&#8203;", "")
    assert view.lab_button.isVisibleTo(view) == (lesson.kind == "pitfall")

    window.session.undo_stack.undo()  # one step back is the state before the lesson
    np.testing.assert_array_equal(window.session.head_view().queries, before.head_view().queries)
    assert window.session.document.state.settings == before.settings


def test_a_new_lesson_hides_the_previous_answer(host, lessons):
    lessons.load("pitfall-zero-length")
    lessons.view.answer_button.click()
    lessons.load("exercise-3-summation")
    assert not lessons.view.answer_shown and not lessons.view.lab_button.isVisibleTo(lessons.view)


# --------------------------------------------------- each pitfall's claim, in the lab's numbers


def _check_zero_length(lab, _window, _qtbot):
    c = lab.outcome.conventions
    np.testing.assert_allclose(c["d2l"].weights[0], np.full((2, 4), 0.25), rtol=1e-6)
    np.testing.assert_allclose(lab.outcome.report.conventions["d2l"].output[0].numpy(), [[3, 4], [3, 4]], rtol=1e-6)
    assert np.isnan(c["neg_inf"].weights[0]).all()
    assert (c["sdpa"].weights[0] == 0).all() and (c["strict"].weights[0] == 0).all()
    assert c["d2l"].cells[0].all() and not c["sdpa"].cells.any()


def _check_wrong_polarity(lab, _window, _qtbot):
    inv = lab.outcome.conventions["inverted"]
    # Batch 0 (valid length 2): all the weight on the two padded keys, none on the real ones.
    assert (inv.weights[0, :, :2] == 0).all()
    np.testing.assert_allclose(inv.weights[0, :, 2:].sum(-1), 1.0, rtol=1e-6)
    # Batch 1 (no padding): every key hidden, NaN rows.
    assert np.isnan(inv.weights[1]).all() and (inv.row_kinds[1] == "nan_row").all()
    assert inv.cells.all()


def _check_float_mask(lab, _window, _qtbot):
    f01 = lab.outcome.conventions["float01"]
    allowed = lab.outcome.allowed
    # Every padded key keeps a share of the weight: nothing is masked.
    assert (f01.weights[~allowed] > 0).all()
    assert f01.cells[0, :, 1:].all() and f01.cells[1, :, 3].all()
    assert not lab.outcome.conventions["d2l"].cells.any()


def _check_float16(lab, window, qtbot):
    d2l = lab.outcome.conventions["d2l"]
    assert (d2l.row_kinds[0] == "nan_row").all() and np.isnan(d2l.weights[0]).all()
    assert (d2l.row_kinds[1] == "ok").all()
    # The same inputs in float32: uniform weights instead of NaN.
    window.session.push(SetSettings({"dtype": "float32"}))
    lab = wait_lab(qtbot, window)
    d2l = lab.outcome.conventions["d2l"]
    assert (d2l.row_kinds[0] == "uniform_over_padding").all()
    np.testing.assert_allclose(d2l.weights[0], 0.25, rtol=1e-6)


def _check_fill_too_small(lab, _window, _qtbot):
    c = lab.outcome.conventions
    np.testing.assert_array_equal(c["d2l"].weights[0], [[0, 0, 0.5, 0.5]] * 2)
    np.testing.assert_array_equal(c["strict"].weights[0], [[0, 1, 0, 0]] * 2)
    # Key 0 gets nothing either way; keys 1 (robbed) and 2, 3 (padding) differ.
    np.testing.assert_array_equal(c["d2l"].cells[0], [[False, True, True, True]] * 2)


def _check_query_padding(lab, _window, _qtbot):
    report = lab.outcome.report
    for name in ("strict", "d2l", "sdpa", "neg_inf"):
        # The padded queries (rows 2, 3 of batch 0) get 1/2, 1/2 and the mean of the real values.
        np.testing.assert_allclose(lab.outcome.conventions[name].weights[0, 2:], [[0.5, 0.5, 0, 0]] * 2, rtol=1e-6)
        np.testing.assert_allclose(report.conventions[name].output[0, 2:].numpy(), [[2, 3]] * 2, rtol=1e-6)
        # ...and no masking convention notices: key masks cannot fix query padding.
        assert not lab.outcome.conventions[name].cells.any()


def _check_nan_padding(lab, _window, _qtbot):
    report = lab.outcome.report
    c = lab.outcome.conventions
    assert not c["d2l"].cells.any()  # the weights agree with strict...
    assert c["d2l"].output_rows.all()  # ...the outputs do not: 0 x NaN = NaN
    assert np.isnan(report.conventions["d2l"].output.numpy()).all()
    assert np.isfinite(report.conventions["strict"].output.numpy()).all()
    assert c["sdpa"].output_rows.all() and c["neg_inf"].output_rows.all()


PITFALL_CHECKS = {
    "pitfall-zero-length": _check_zero_length,
    "pitfall-wrong-polarity": _check_wrong_polarity,
    "pitfall-float-mask": _check_float_mask,
    "pitfall-float16": _check_float16,
    "pitfall-fill-too-small": _check_fill_too_small,
    "pitfall-query-padding": _check_query_padding,
    "pitfall-nan-padding": _check_nan_padding,
}


def test_every_pitfall_has_a_check():
    assert set(PITFALL_CHECKS) == set(PITFALL_PRESETS)


@pytest.mark.parametrize("name", list(PITFALL_PRESETS))
def test_a_pitfall_opens_the_masking_lab_which_shows_the_claimed_disagreement(host, qtbot, lessons, name):
    window = host
    lab_dock = window.dock(MASKING_LAB_DOCK)
    lessons.load(name)
    assert not lab_dock.isVisible()
    lessons.view.lab_button.click()
    assert lab_dock.isVisible()
    lab = wait_lab(qtbot, window)
    assert lab.error is None
    PITFALL_CHECKS[name](lab, window, qtbot)
