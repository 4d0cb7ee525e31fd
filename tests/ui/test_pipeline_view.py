"""The pipeline view and its formulas: every stage drawn is the engine's, live, and the maths
has a rendered formula for every scoring function."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from PySide6.QtCore import QEvent, QPointF
from PySide6.QtGui import QEnterEvent
from PySide6.QtWidgets import QApplication

from attnviz.compute.pipeline import additive_features, softmax_allowed
from attnviz.engine import SCORINGS, STAGES, attend
from attnviz.state.document import ReplaceState, filled_state
from attnviz.ui.views.formulas import (
    HIGHLIGHT_BG,
    SCORING_FORMULAS,
    missing_formulas,
    pipeline_formulas,
    scoring_formula,
)

from .conftest import engine_result, wait_current


def _highlighted(html: str) -> list[str]:
    """The HTML inside each highlighted span (no nesting of spans inside them is assumed)."""
    return re.findall(rf'<span style="background-color:{HIGHLIGHT_BG};[^"]*">(.*?)</span>', html)


# ---------------------------------------------------------------------------- formulas


def test_every_registered_scoring_function_has_a_rendered_formula():
    assert missing_formulas() == []
    assert set(SCORING_FORMULAS) >= set(SCORINGS)
    for name in SCORINGS:
        html = scoring_formula(name)
        assert "<code>" not in html, f"{name} falls back to LaTeX source"
        assert "\\" not in html, f"{name} shows LaTeX commands"
        assert "<b>q</b>" in html and "<i>a</i>" in html, name


def test_a_scoring_function_without_a_laid_out_formula_is_shown_from_its_latex():
    from attnviz.state import catalog

    catalog.SCORINGS.register(catalog.ScoringInfo("made_up", "Made up", r"a(\mathbf{q}, \mathbf{k}) = \tfrac{1}{2}"))
    try:
        assert missing_formulas() == ["made_up"]
        html = scoring_formula("made_up")
        assert "<b>q</b>" in html and "1/2" in html and "\\" not in html
        assert HIGHLIGHT_BG in scoring_formula("made_up", highlight="raw_scores")
    finally:
        catalog.SCORINGS.unregister("made_up")


def test_fraction_sum_and_root_are_laid_out_not_written_as_source():
    html = pipeline_formulas("scaled_dot", "d2l", d=4)
    assert "border-bottom:1px solid" in html  # the fraction bar of softmax and of q^T k / sqrt(d)
    assert "∑" in html and "√" in html and "<sup>⊤</sup>" in html
    assert "√<span style='text-decoration:overline;'>" in html
    assert "\\frac" not in html and "\\sqrt" not in html and "$" not in html
    assert "2</b>" not in html  # no stray markup from the d value
    assert "= 2" in html  # sqrt(4) is printed


@pytest.mark.parametrize("scoring", list(SCORING_FORMULAS))
def test_every_stage_has_a_place_in_the_formulas(scoring):
    assert HIGHLIGHT_BG not in pipeline_formulas(scoring, "d2l", dropout=0.1)
    for stage in STAGES:
        html = pipeline_formulas(scoring, "d2l", dropout=0.1, highlight=stage)
        assert HIGHLIGHT_BG in html, f"{stage} is highlighted nowhere for {scoring}"


def test_raw_scores_highlight_the_dot_product_and_scores_the_whole_fraction():
    raw = scoring_formula("scaled_dot", highlight="raw_scores")
    assert _highlighted(raw) == ["<b>q</b><sup>⊤</sup><b>k</b>"]
    scaled = scoring_formula("scaled_dot", highlight="scores")
    assert f'bgcolor="{HIGHLIGHT_BG}"' in scaled  # the fraction cells
    hidden = scoring_formula("additive", highlight="hidden")
    assert len(_highlighted(hidden)) == 1 and "tanh" in _highlighted(hidden)[0]


# ---------------------------------------------------------------------------- helpers


def test_additive_features_sum_to_the_additive_score():
    rng = np.random.default_rng(3)
    params = {
        "W_q": rng.standard_normal((5, 3)),
        "W_k": rng.standard_normal((5, 2)),
        "w_v": rng.standard_normal((1, 5)),
    }
    q, k = rng.standard_normal(3), rng.standard_normal(2)
    hidden, weighted = additive_features(params, q, k)
    np.testing.assert_allclose(hidden, np.tanh(params["W_q"] @ q + params["W_k"] @ k))
    score = attend(
        torch.tensor(q[None, None]),
        torch.tensor(k[None, None]),
        torch.ones(1, 1, 1),
        scoring="additive",
        params={n: torch.tensor(v) for n, v in params.items()},
        num_hiddens=5,
        dtype="float64",
    ).raw_scores
    assert weighted.sum() == pytest.approx(float(score[0, 0, 0]), rel=1e-6)


def test_softmax_allowed_follows_the_bug_modes():
    mask = np.array([[True, False]])
    np.testing.assert_array_equal(softmax_allowed(mask, "d2l"), mask)
    np.testing.assert_array_equal(softmax_allowed(mask, "inverted"), ~mask)
    assert softmax_allowed(mask, "float01").all()


# ---------------------------------------------------------------------------- in the window


def _shown(qtbot, dock):
    dock.show()
    qtbot.waitUntil(lambda: dock.view().isVisible())
    return dock.view()


def test_stages_update_live_from_an_edit_and_equal_the_engine(window, qtbot):
    dock = window.pipeline_dock
    view = _shown(qtbot, dock)
    window.session.load_preset("dot-toy")
    wait_current(qtbot, window)
    model = window.inputs.models["keys"]
    assert model.setData(model.index(1, 0), "-2.5")
    wait_current(qtbot, window)
    state = window.session.document.state
    assert state.head_view().keys[0, 1, 0] == -2.5
    result = engine_result(state)
    for stage in STAGES:
        expected = getattr(result, stage)[0].numpy().astype(np.float32)
        np.testing.assert_allclose(view.stage_values(stage), expected, rtol=1e-5, atol=1e-6, err_msg=stage)
    # The key really changed the picture: no longer uniform over the two valid keys.
    assert abs(view.stage_values("weights")[0, 0] - 0.5) > 0.01
    assert view.cards["mask"].heatmap.values[0].tolist() == [1, 1] + [0] * 8
    assert "√d" in view.cards["scores"].note.text()


def test_following_the_batch_selector(window, qtbot):
    view = _shown(qtbot, window.pipeline_dock)
    window.inputs.batch.setValue(1)
    assert view.batch == 1
    expected = window.session.last_outcome.view.weights[1]
    np.testing.assert_allclose(view.stage_values("weights"), expected)
    np.testing.assert_allclose(view.stage_values("weights")[0, :6], np.full(6, 1 / 6), rtol=1e-5)


def test_a_hidden_dock_draws_nothing_and_catches_up_when_shown(window, qtbot):
    dock = window.pipeline_dock
    view = dock.view()  # built, but hidden
    assert not dock.isVisible()
    assert view.draw_count == 0
    model = window.inputs.models["queries"]
    assert model.setData(model.index(0, 3), "4")
    wait_current(qtbot, window)
    assert view.draw_count == 0
    _shown(qtbot, dock)
    assert view.draw_count == 1
    expected = engine_result(window.session.document.state).raw_scores[0].numpy()
    np.testing.assert_allclose(view.stage_values("raw_scores"), expected, rtol=1e-5)


def test_hovering_a_stage_highlights_its_part_of_the_formula(window, qtbot):
    view = _shown(qtbot, window.pipeline_dock)
    card = view.cards["masked_scores"]
    QApplication.sendEvent(card, QEnterEvent(QPointF(5, 5), QPointF(5, 5), QPointF(5, 5)))
    assert view.highlighted_stage == "masked_scores"
    parts = _highlighted(view.formula_html())
    assert parts and all("ã" in p for p in parts)
    QApplication.sendEvent(card, QEvent(QEvent.Type.Leave))
    assert view.highlighted_stage is None
    assert HIGHLIGHT_BG not in view.formula_html()
    QApplication.sendEvent(view.cards["raw_scores"], QEnterEvent(QPointF(5, 5), QPointF(5, 5), QPointF(5, 5)))
    # The additive toy: the raw score is the whole w_v^T tanh(...) expression.
    assert any("tanh" in p for p in _highlighted(view.formula_html()))


def test_editing_a_parameter_changes_the_weights_through_the_window(window, qtbot):
    view = _shown(qtbot, window.pipeline_dock)
    # The toy's keys are identical, which makes every parameter irrelevant: vary them first.
    window.session.push(ReplaceState(filled_state(window.session.document.state, "keys", "random", seed=5), "keys"))
    wait_current(qtbot, window)
    before = window.session.last_outcome.view.weights.copy()
    assert set(view.parameters.models) == {"W_q", "W_k", "w_v"}
    assert list(view.parameters.models) == ["W_q", "W_k", "w_v"]
    undo_count = window.session.undo_stack.count()
    model = view.parameters.models["W_k"]
    assert model.setData(model.index(2, 1), "3.25")
    wait_current(qtbot, window)
    state = window.session.document.state
    assert window.session.undo_stack.count() == undo_count + 1
    assert window.session.undo_stack.undoText() == "Edit W_k"
    assert state.params["W_k"][2, 1] == 3.25
    after = window.session.last_outcome.view.weights
    np.testing.assert_allclose(after, engine_result(state).weights.numpy(), rtol=1e-5, atol=1e-7)
    assert np.abs(after - before).max() > 1e-3
    np.testing.assert_allclose(view.stage_values("weights"), after[0])
    assert view.parameters.models["W_k"].array()[2, 1] == 3.25
    # The hidden features follow the new parameters and still add up to the drawn score.
    i, j = 0, 1
    view.features.key.setValue(j)
    _, weighted = additive_features(state.params, state.head_view().queries[0, i], state.head_view().keys[0, j])
    assert weighted.sum() == pytest.approx(
        float(window.session.last_outcome.view.raw_scores[0, i, j]), rel=1e-4, abs=1e-6
    )
    window.session.undo_stack.undo()
    wait_current(qtbot, window)
    np.testing.assert_allclose(window.session.last_outcome.view.weights, before, rtol=1e-6)


def test_a_non_finite_parameter_is_refused_with_a_message(window, qtbot):
    view = _shown(qtbot, window.pipeline_dock)
    version = window.session.document.version
    model = view.parameters.models["w_v"]
    assert model.setData(model.index(0, 0), "nan")
    assert window.session.document.version == version
    assert view.parameters.error.isVisible()
    assert "finite" in view.parameters.error.text()


def test_presentation_mode_enlarges_the_stage_maps_and_formulas(window, qtbot):
    view = _shown(qtbot, window.pipeline_dock)
    size = view.formula.font().pointSizeF()
    window.set_presentation_mode(True)
    try:
        assert view.cards["weights"].heatmap.font_scale == pytest.approx(1.8)
        # The application font change reaches widgets through posted events.
        qtbot.waitUntil(lambda: view.formula.font().pointSizeF() > size * 1.3)
    finally:
        window.set_presentation_mode(False)
    assert view.cards["weights"].heatmap.font_scale == pytest.approx(1.0)
    qtbot.waitUntil(lambda: view.formula.font().pointSizeF() == pytest.approx(size))


def test_a_parameter_edit_during_a_recompute_is_refused_not_misapplied(window, qtbot):
    view = _shown(qtbot, window.pipeline_dock)
    model = view.parameters.models["W_q"]
    window.controls.settings.settingsChanged.emit({"num_hiddens": 3})  # the shapes are about to change
    assert window.session.shown_version != window.session.document.version
    version = window.session.document.version
    assert model.setData(model.index(0, 0), "1.5")
    assert window.session.document.version == version  # nothing pushed with the old shapes
    wait_current(qtbot, window)
    assert view.parameters.models["W_q"].array().shape == (3, 20)
    assert window.session.last_outcome.error is None


def test_the_dark_theme_reaches_the_feature_chart_and_the_notes(window, qtbot):
    from attnviz.ui import theme

    view = _shown(qtbot, window.pipeline_dock)
    note = view.cards["weights"].note
    try:
        theme.apply_theme("dark")
        assert note.palette().color(note.foregroundRole()).lightness() > 110
        assert view.features.plot.backgroundBrush().color().name() == theme.DARK_PLOT.background
        theme.apply_theme("light")
        assert note.palette().color(note.foregroundRole()).lightness() < 110
        assert view.features.plot.backgroundBrush().color().name() == theme.LIGHT_PLOT.background
    finally:
        theme.apply_theme("system")
