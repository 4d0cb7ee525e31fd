"""One catalogue of scoring functions and mask modes: a scoring function registered in the engine
appears in every view that lists them, with no other edit."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnviz.compute.side_by_side import Comparison, compare_choices
from attnviz.engine import SCORINGS, attend
from attnviz.engine.scoring import ScoringFunction, register
from attnviz.state import catalog
from attnviz.state.document import SetSettings

from .conftest import wait_current


@pytest.fixture
def cosine():
    """A scoring function the project does not have, registered the documented way."""

    @register
    class Cosine(ScoringFunction):
        name = "cosine_test"
        label = "Cosine similarity (test)"
        formula = (
            r"a(\mathbf{q}, \mathbf{k}) = "
            r"\frac{\mathbf{q}^\top \mathbf{k}}{\lVert \mathbf{q} \rVert \lVert \mathbf{k} \rVert}"
        )

        def scores(self, queries, keys, params):
            q = queries / queries.norm(dim=-1, keepdim=True).clamp_min(1e-12)
            k = keys / keys.norm(dim=-1, keepdim=True).clamp_min(1e-12)
            return torch.bmm(q, k.transpose(1, 2))

    yield Cosine
    SCORINGS.pop("cosine_test", None)
    catalog.SCORINGS.unregister("cosine_test")


def test_the_engines_builtins_take_their_labels_from_the_catalogue():
    for name, fn in SCORINGS.items():
        assert fn.label == catalog.SCORINGS[name].label and fn.formula == catalog.SCORINGS[name].formula


def test_a_registered_scoring_function_appears_in_settings_formulas_and_compare_view(window, qtbot, cosine):
    # Registered after the window was built: the settings list grows as it arrives.
    box = window.controls.settings.combos["scoring"]
    index = box.findData("cosine_test")
    assert index >= 0 and box.itemText(index) == "Cosine similarity (test)"
    assert catalog.SCORINGS["cosine_test"].same_dim and not catalog.SCORINGS["cosine_test"].params

    # Choosing it computes with it, and the pipeline shows its formula, rendered (no LaTeX left).
    window.session.load_preset("dot-toy")
    box.setCurrentIndex(box.findData("cosine_test"))
    wait_current(qtbot, window)
    assert window.session.document.state.settings.scoring == "cosine_test"
    state = window.session.document.state
    expected = attend(
        torch.from_numpy(state.head_view().queries),
        torch.from_numpy(state.head_view().keys),
        torch.from_numpy(state.head_view().values),
        torch.from_numpy(state.lens_1d),
        scoring="cosine_test",
    ).weights.numpy()
    np.testing.assert_allclose(window.session.last_outcome.view.weights, expected, rtol=1e-6)
    window.pipeline_dock.show()
    pipeline = window.pipeline_dock.view()
    qtbot.waitUntil(lambda: pipeline.draw_count > 0)
    html = pipeline.formula_html()
    assert "Cosine similarity (test)" in html and "‖" in html and "<b>q</b>" in html and "\\" not in html

    # The side-by-side view offers it for A and B.
    window.compare_dock.show()
    compare = window.compare_dock.view()
    assert "cosine_test" in compare_choices("scoring")
    compare.set_comparison(Comparison("scoring", "cosine_test", "scaled_dot"))
    assert compare.choice_a.currentData() == "cosine_test"
    assert compare.choice_a.currentText() == "Cosine similarity (test)"
    qtbot.waitUntil(
        lambda: (
            compare.last_result is not None and not compare.busy and compare.last_result.comparison.a == "cosine_test"
        ),
        timeout=30000,
    )
    assert compare.errors["A"].isHidden()
    window.session.push(SetSettings({"scoring": "scaled_dot"}))
