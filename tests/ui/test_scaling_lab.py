"""The scaling lab dock: the curves, the user's inputs marked on them, tanh saturation."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from PySide6.QtGui import QKeySequence

from attnviz.compute.labs import curves_for
from attnviz.engine.scaling import current_point, scaling_curves, tanh_saturation
from attnviz.state.document import ReplaceState, SetBlock, SetSettings, State
from attnviz.teaching.presets import PRESETS
from attnviz.ui.views.scaling_lab import (
    PLOTS,
    SCALING_LAB_DOCK,
    ScalingLabView,
    install_scaling_lab,
)


def point_of(state: State) -> dict[str, float]:
    lens = state.valid_lens(state.head_view())
    return current_point(
        torch.from_numpy(state.head_view().queries),
        torch.from_numpy(state.head_view().keys),
        None if lens is None else torch.from_numpy(lens),
    )


def wait_lab(qtbot, window, view: ScalingLabView) -> None:
    qtbot.waitUntil(lambda: view.shown_version == window.session.document.version and not view.busy, timeout=30000)


@pytest.fixture
def lab(host, qtbot):
    host.session.load_preset("dot-toy")  # d_q = d_k: dot products exist
    dock = install_scaling_lab(host.session, host)
    dock.show()
    view = dock.view()
    assert isinstance(view, ScalingLabView)
    wait_lab(qtbot, host, view)
    return view


def marked(view: ScalingLabView, key: str) -> tuple[list[float], list[float]]:
    """The (x, y) of the unscaled and scaled markers of one plot (y as drawn: log10 for variance)."""
    xs, ys = [], []
    for mark in view.point_items[key]:
        x, y = mark.getData()
        assert len(x) == 1
        xs.append(float(x[0]))
        ys.append(float(y[0]))
    return xs, ys


def test_dock_is_hidden_with_a_tools_menu_toggle(host):
    dock = install_scaling_lab(host.session, host)
    assert dock.objectName() == SCALING_LAB_DOCK and not dock.isVisible() and not dock.is_built
    assert host.dock(SCALING_LAB_DOCK) is dock
    action = dock.toggleViewAction()
    assert action in host.menu("tools").actions() and action.shortcut() == QKeySequence("Ctrl+Shift+L")
    assert action.toolTip()


def test_the_current_point_matches_current_point_and_follows_edits(host, qtbot, lab):
    expected = point_of(host.session.document.state)
    assert lab.outcome.point == pytest.approx(expected, nan_ok=True)
    xs, ys = marked(lab, "var")
    # At the inputs' d, one on each side so neither hides the other.
    assert xs[0] < math.log2(expected["d"]) < xs[1] and xs == pytest.approx([math.log2(expected["d"])] * 2, abs=0.25)
    assert ys == pytest.approx([math.log10(expected["var_unscaled"]), math.log10(expected["var_scaled"])])
    _, ys = marked(lab, "entropy")
    assert ys == pytest.approx([expected["entropy_unscaled"], expected["entropy_scaled"]])

    # Live: a bigger query changes the point, and the markers move to the new numbers.
    host.session.push(SetBlock("queries", 0, 0, 0, np.array([[6.0, -4.0]])))
    wait_lab(qtbot, host, lab)
    after = point_of(host.session.document.state)
    assert after["var_unscaled"] != pytest.approx(expected["var_unscaled"])
    assert lab.outcome.point == pytest.approx(after, nan_ok=True)
    _, ys = marked(lab, "max_weight")
    assert ys == pytest.approx([after["max_weight_unscaled"], after["max_weight_scaled"]])
    _, ys = marked(lab, "jacobian")
    assert ys == pytest.approx([after["jacobian_norm_unscaled"], after["jacobian_norm_scaled"]])


def test_the_curves_are_the_engines_for_the_inputs_number_of_keys(host, qtbot, lab):
    point = point_of(host.session.document.state)
    n = round(point["n_keys"])
    curves = lab.outcome.curves
    assert int(curves["n_keys"]) == n
    expected = scaling_curves(n_keys=n, samples=int(curves["samples"]))
    for key, _title, _ylabel, stat, _logy in PLOTS:
        unscaled, scaled = lab.curve_items[key]
        x, _y = unscaled.getData()
        np.testing.assert_allclose(x, np.log2(expected["dims"]))
        # PlotDataItem keeps the data it was given; log mode is applied when drawing.
        np.testing.assert_allclose(unscaled.yData, expected[f"{stat}_unscaled"])
        np.testing.assert_allclose(scaled.yData, expected[f"{stat}_scaled"])
    # The theory the plot teaches: variance d without scaling, 1 with it.
    np.testing.assert_allclose(curves["var_unscaled"] / curves["dims"], 1.0, rtol=0.1)
    np.testing.assert_allclose(curves["var_scaled"], 1.0, rtol=0.1)
    assert lab.guides["entropy"].value() == pytest.approx(math.log(n))
    assert lab.guides["max_weight"].value() == pytest.approx(1 / n)
    assert curves_for(n) is curves_for(n)  # cached: computed once per number of keys


def test_queries_and_keys_of_different_lengths_get_a_note_instead_of_a_point(host, qtbot, lab):
    host.session.load_preset("additive-toy")  # d_q = 20, d_k = 2
    wait_lab(qtbot, host, lab)
    assert lab.outcome.point is None
    assert "d_q = 20, d_k = 2" in lab.outcome.point_note and "d_q = 20, d_k = 2" in lab.notes.text()
    for key, *_ in PLOTS:
        for mark in lab.point_items[key]:
            assert len(mark.getData()[0]) == 0


def test_additive_attention_gets_the_tanh_histogram_and_its_saturated_share(host, qtbot, lab):
    assert lab.plots["tanh"] not in lab.graphics.ci.items  # dot product: no tanh, no plot
    host.session.push(SetSettings({"scoring": "additive", "num_hiddens": 6, "param_seed": 3}))
    wait_lab(qtbot, host, lab)
    state = host.session.document.state
    lens = state.valid_lens(state.head_view())
    expected = tanh_saturation(
        torch.from_numpy(state.head_view().queries),
        torch.from_numpy(state.head_view().keys),
        None,
        num_hiddens=6,
        seed=3,
        valid_lens=None if lens is None else torch.from_numpy(lens),
    )
    sat = lab.outcome.saturation
    assert sat is not None and sat.saturated_fraction == expected.saturated_fraction
    np.testing.assert_array_equal(sat.pre_counts, expected.pre_counts)
    assert lab.plots["tanh"] in lab.graphics.ci.items
    _x, below = lab.tanh_hist.getData()
    _x, above = lab.tanh_saturated.getData()
    np.testing.assert_array_equal(below + above, expected.pre_counts)
    assert lab.tanh_line.value() == pytest.approx(expected.pre_threshold)
    assert f"{100 * expected.saturated_fraction:.1f}%" in lab.plots["tanh"].titleLabel.text

    # Keys 100 times larger: most hidden units saturate, and the printed share says so.
    big = state.with_head((0, 0), "keys", state.head_view().keys * 100)
    host.session.push(ReplaceState(big, "scale keys"))
    wait_lab(qtbot, host, lab)
    assert lab.outcome.saturation.saturated_fraction > 0.5
    assert f"{100 * lab.outcome.saturation.saturated_fraction:.1f}%" in lab.notes.text()


def test_font_scale_enlarges_ticks_titles_and_legend(host, lab):
    before = lab.plots["var"].getAxis("bottom").style["tickFont"].pointSizeF()
    host.session.set_presenting(True)  # presentation mode: the view's font scale is 1.8
    assert lab.font_scale == pytest.approx(1.8)
    after = lab.plots["var"].getAxis("bottom").style["tickFont"].pointSizeF()
    assert after == pytest.approx(1.8 * before)
    assert f"{lab._base_pt * 1.2 * 1.8:.1f}pt" in str(lab.plots["entropy"].titleLabel.opts.get("size"))
    assert lab.legends[0].opts["labelTextSize"] == f"{lab._base_pt * 1.8:.1f}pt"
    # The axes keep their numbers: no SI prefix rescaling an entropy of 0.7 into "700 (x0.001)".
    assert lab.plots["jacobian"].getAxis("left").autoSIPrefixScale == 1.0


def test_the_labs_thread_stops_with_the_window(host, qtbot, lab):
    host.close()
    assert lab.lab.scheduler._closed
    qtbot.waitUntil(lambda: not lab.lab.scheduler.busy, timeout=5000)
    assert lab.lab.scheduler._pool.activeThreadCount() == 0


def test_presets_all_compute(host, qtbot, lab):
    for name in PRESETS:
        host.session.load_preset(name)
        wait_lab(qtbot, host, lab)
        assert lab.error is None, (name, lab.error)


def test_on_a_slide_the_plots_come_a_page_at_a_time_beside_whole_notes(host, qtbot, lab):
    """Two rows of plots and the notes outgrew a 1280x720 slide in slide type (issue 37: the page
    scrolled, the notes scrolled in a 140 px strip): a slide shows the softmax's three plots with
    the legend, then the gradient beside the notes, whole; Page Down walks the pages."""
    host.session.set_presenting(True)
    qtbot.wait(50)
    assert lab.slide_pages.count == 2 and lab.on_page() == ("var", "entropy", "max_weight")
    in_layout = [key for key, plot in lab.plots.items() if plot in lab.graphics.ci.items]
    assert in_layout == ["var", "entropy", "max_weight"] and lab.legends[0] in lab.graphics.ci.items
    assert lab.header.isVisible() and not lab.notes_scroll.isVisible()
    assert host.session.step_slide(1) is True
    qtbot.wait(50)
    assert [key for key, plot in lab.plots.items() if plot in lab.graphics.ci.items] == ["jacobian"]
    assert lab.legends[0] not in lab.graphics.ci.items and lab.notes_scroll.isVisible()
    # The plot fills the view (taking plots out of the grid shrank it to its preferred size).
    assert lab.plots["jacobian"].height() > 0.8 * lab.graphics.height()
    # The notes are whole: no scroll bar, a colour key for the legend that is not on this page.
    bar = lab.notes_scroll.verticalScrollBar()
    assert not (bar.isVisible() and bar.maximum() > 0)
    assert "q·k / √d (scaled)" in lab.notes.text() and "variance" in lab.notes.text()
    assert host.session.step_slide(1) is False  # the last page hands the clicker on
    # Additive attention: the tanh histogram a page of its own.
    host.session.push(SetSettings({"scoring": "additive", "num_hiddens": 6, "param_seed": 3}))
    wait_lab(qtbot, host, lab)
    assert lab.slide_pages.count == 3
    assert host.session.step_slide(1) is True and lab.on_page() == ("tanh",)
    qtbot.wait(50)
    assert lab.plots["tanh"].height() > 0.8 * lab.graphics.height()
    host.session.set_presenting(False)
    qtbot.wait(50)
    assert lab.slide_pages.count == 1 and lab.header.isVisible() and lab.notes_scroll.isVisible()
    assert {key for key, plot in lab.plots.items() if plot in lab.graphics.ci.items} == set(lab.plots)


def test_the_lab_opens_no_window_of_its_own(host, qtbot):
    """Its parts were shown before they had a parent: windows of their own, which took the main
    window's focus (and the clicker's Page Down with it)."""
    from PySide6.QtWidgets import QApplication

    host.session.set_presenting(True)
    before = {id(w) for w in QApplication.topLevelWidgets() if w.isVisible()}
    dock = install_scaling_lab(host.session, host)
    dock.show()
    dock.view()
    qtbot.wait(50)
    opened = [w for w in QApplication.topLevelWidgets() if w.isVisible() and id(w) not in before]
    assert opened == []
    assert QApplication.activeWindow() is host


def test_the_uniform_label_follows_the_language_while_its_plot_is_hidden(host, qtbot, lab, qapp):
    """pyqtgraph's line label keeps its text while hidden: the entropy plot, off the slide page on
    show when the language changed, still said "uniform" in Portuguese on its page."""
    from attnviz.ui.i18n import install_language

    host.session.set_presenting(True)
    assert host.session.step_slide(1) and not lab.plots["entropy"].isVisible()
    assert install_language(qapp, "pt_BR")
    try:
        qtbot.wait(20)
        assert host.session.step_slide(-1) and lab.plots["entropy"].isVisible()
        assert lab.guides["entropy"].label.toPlainText() == "uniforme"
    finally:
        install_language(qapp, "en")
        host.session.set_presenting(False)
