"""The masking lab dock: live from edits, off the GUI thread, the differing cells outlined."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PySide6.QtGui import QKeySequence

from attnviz.engine import MASK_MODES
from attnviz.engine.lab import LabReport, compare_conventions
from attnviz.state.document import ReplaceState, SetBlock, SetSettings, State
from attnviz.teaching.lessons import LESSONS
from attnviz.ui.views.masking_lab import (
    DIFF_COLOR,
    MASKING_LAB_DOCK,
    MaskingLabView,
    disagreement_image,
    install_masking_lab,
)

from .conftest import wait_session


def lab_of(state: State) -> LabReport:
    """compare_conventions called independently of the app, with the state's settings."""
    s = state.settings
    lens = state.valid_lens(state.head_view())
    return compare_conventions(
        torch.from_numpy(state.head_view().queries),
        torch.from_numpy(state.head_view().keys),
        torch.from_numpy(state.head_view().values),
        None if lens is None else torch.from_numpy(lens),
        causal=state.head_view().causal,
        scoring=s.scoring,
        dtype=s.dtype,
        num_hiddens=s.num_hiddens,
        seed=s.param_seed,
        allow_nonfinite=s.allow_nonfinite,
    )


def wait_lab(qtbot, host, view: MaskingLabView) -> None:
    qtbot.waitUntil(lambda: view.shown_version == host.session.document.version and not view.busy, timeout=30000)


def set_cell(host, role: str, row: int, col: int, value: float) -> None:
    """What typing ``value`` into a cell of the input tables does."""
    host.session.push(SetBlock(role, 0, row, col, np.array([[value]])))


@pytest.fixture
def lab(host, qtbot):
    dock = install_masking_lab(host.session, host)
    dock.show()
    view = dock.view()
    assert isinstance(view, MaskingLabView)
    wait_lab(qtbot, host, view)
    return view


def test_dock_is_hidden_with_a_tools_menu_toggle(host):
    dock = install_masking_lab(host.session, host)
    assert dock.objectName() == MASKING_LAB_DOCK
    assert host.dock(MASKING_LAB_DOCK) is dock
    assert not dock.isVisible() and not dock.is_built  # nothing is built before it is shown
    action = dock.toggleViewAction()
    assert action in host.menu("tools").actions()
    assert action.shortcut() == QKeySequence("Ctrl+Shift+M") and action.toolTip()


def test_a_hidden_lab_computes_nothing_and_catches_up_when_shown(host, qtbot):
    dock = install_masking_lab(host.session, host)
    view = dock.view()  # built, but hidden
    set_cell(host, "valid_lens", 0, 0, 1)
    qtbot.wait(50)
    assert view.lab.scheduler.started_count == 0 and view.outcome is None
    dock.show()
    wait_lab(qtbot, host, view)
    assert view.lab.scheduler.started_count == 1
    assert view.outcome.allowed[0, 0].tolist() == [True] + [False] * 9


def test_a_valid_length_of_zero_changes_the_book_map_and_the_sentences(host, qtbot, lab):
    # The opening preset (valid lengths 2 and 6): the book's fill agrees with strict; only the
    # two bugs (float 1/0 mask, inverted polarity) differ.
    def book(sentences: list[str]) -> list[str]:
        return [s for s in sentences if s.startswith("d2l:")]

    assert book(lab.sentences()) == [] and lab.sentences() == lab_of(host.session.document.state).sentences()
    assert {s.split(":")[0] for s in lab.sentences()} == {"float01", "inverted"}
    assert not lab.outcome.conventions["d2l"].cells.any()

    set_cell(host, "valid_lens", 0, 0, 0)
    wait_lab(qtbot, host, lab)

    report = lab_of(host.session.document.state)
    shown = lab.cells["d2l"].heatmap.values
    # Batch 0 has no valid key: the book's fill gives 1/10 on each of the 10 keys.
    np.testing.assert_allclose(shown, report.conventions["d2l"].weights[0].numpy(), rtol=1e-6)
    np.testing.assert_allclose(shown, np.full((1, 10), 0.1), rtol=1e-6)
    np.testing.assert_array_equal(lab.cells["strict"].heatmap.values, np.zeros((1, 10)))
    assert lab.sentences() == report.sentences()
    assert book(lab.sentences()) == [
        "d2l: 1 row with no valid key get uniform weights (1/10 each) over padding where strict gives zero weights"
    ]
    # Shown under the convention's name, not its identifier.
    assert "<b>Book (-1e6 fill)</b>: 1 row" in lab.sentence_label.text() and "d2l:" not in lab.sentence_label.text()
    assert "uniform weights" in lab.sentence_label.text()
    np.testing.assert_array_equal(lab.outcome.conventions["d2l"].cells, report.disagreements["d2l"].cells.numpy())
    assert lab.outcome.conventions["d2l"].cells[0].all() and not lab.outcome.conventions["d2l"].cells[1].any()
    # Back to the original length: the disagreement is gone again.
    host.session.undo_stack.undo()
    wait_lab(qtbot, host, lab)
    assert book(lab.sentences()) == [] and not lab.outcome.conventions["d2l"].cells.any()


def test_every_convention_has_a_map_titled_with_its_label_and_causal_adds_alignments(host, qtbot, lab):
    # The reference first, then the conventions that differ from it (the opening preset: the two
    # bugs), then those that agree.
    assert lab._order == ["strict", "float01", "inverted", "d2l", "neg_inf", "sdpa"]
    assert [lab.grid.indexOf(lab.cells[n]) for n in lab._order] == sorted(
        lab.grid.indexOf(c) for c in lab.cells.values()
    )
    for name, cell in lab.cells.items():
        assert cell.title.text().startswith(MASK_MODES[name].label)
    assert "(reference)" in lab.cells["strict"].title.text()

    host.session.push(SetSettings({"causal": "bottom_right"}))
    wait_lab(qtbot, host, lab)
    assert len(lab.cells) == 2 * len(MASK_MODES)
    assert list(lab.cells)[:2] == ["strict/bottom_right", "strict/top_left"]
    assert lab.outcome.reference == "strict/bottom_right"
    report = lab_of(host.session.document.state)
    for name, conv in report.conventions.items():
        np.testing.assert_allclose(lab.cells[name].heatmap.values, conv.weights[0].numpy(), rtol=1e-6, equal_nan=True)
    assert lab.sentences() == report.sentences()


def test_the_lab_follows_the_batch_selector(host, qtbot, lab):
    report = lab_of(host.session.document.state)
    host.session.set_batch(1)
    np.testing.assert_allclose(
        lab.cells["neg_inf"].heatmap.values, report.conventions["neg_inf"].weights[1].numpy(), rtol=1e-6
    )
    assert "batch element 1 of 2" in lab.header.text()
    assert lab.batch_spin.value() == 1 and lab.batch_spin.maximum() == 1


def test_the_batch_element_is_picked_on_the_lab_itself(host, qtbot, lab):
    """Presentation mode hides the input tables' picker: the lab has its own, the session's."""
    report = lab_of(host.session.document.state)
    lab.batch_spin.setValue(1)
    assert host.session.selection.batch == 1
    qtbot.waitUntil(
        lambda: np.allclose(
            lab.cells["inverted"].heatmap.values, report.conventions["inverted"].weights[1].numpy(), equal_nan=True
        )
    )


def test_the_maps_keep_their_places_whatever_differs(host, qtbot, lab):
    """The reference first, then one fixed order: a lecture's lessons never move the maps."""
    first = list(lab._order)
    host.session.push(SetSettings({"lens_mode": "none"}))  # now every convention agrees
    wait_lab(qtbot, host, lab)
    assert lab._order == first == ["strict", "float01", "inverted", "d2l", "neg_inf", "sdpa"]


def test_when_all_conventions_agree_the_lab_says_so(host, qtbot, lab):
    host.session.push(SetSettings({"lens_mode": "none"}))
    wait_lab(qtbot, host, lab)
    assert lab.sentences() == [] and set(lab_of(host.session.document.state).agreeing()) == set(lab._order[1:])
    assert "Every convention gives Strict" in lab.sentence_label.text()
    assert all(not cell.overlay.isVisible() for cell in lab.cells.values())


def test_the_overlay_outlines_exactly_the_differing_cells():
    cells = np.array([[True, False, False], [False, False, True]])
    leaked = np.array([[False, True, False], [False, False, False]])
    img, k = disagreement_image(cells, leaked)
    assert img.shape == (2 * k, 3 * k, 4) and k > 1
    red = np.all(img[..., :3] == DIFF_COLOR, axis=-1) & (img[..., 3] > 0)
    for r in range(2):
        for c in range(3):
            block = red[r * k : (r + 1) * k, c * k : (c + 1) * k]
            assert block.any() == cells[r, c], (r, c)
            if cells[r, c]:
                # An outline, not a fill: the edge is red, the centre shows the weight's colour.
                assert block[0].all() and block[-1].all() and not block[k // 2, k // 2]
    # The leaked cell gets translucent stripes (it stays readable), nothing else does.
    striped = (img[..., 3] > 0) & ~red
    assert striped[0:k, k : 2 * k].any() and not striped[k:, :].any()
    assert (img[..., 3][striped] < 255).all()
    # Rows whose output differs (weights equal: 0 x NaN) get a red bar at their right edge only.
    img, k = disagreement_image(np.zeros((2, 3), dtype=bool), np.zeros((2, 3), dtype=bool), np.array([False, True]))
    red = np.all(img[..., :3] == DIFF_COLOR, axis=-1) & (img[..., 3] == 255)
    assert not red[:k].any() and red[k:, -1].all() and not red[k:, 0].any()
    # A big matrix gets a red tint per cell instead of outlines too thin to see.
    big = np.zeros((100, 100), dtype=bool)
    big[3, 7] = True
    img, k = disagreement_image(big, np.zeros_like(big))
    assert k == 10 and img[3 * k : 4 * k, 7 * k : 8 * k, 3].min() > 0 and img[..., 3].sum() == 150 * k * k


def test_the_disagreeing_cells_are_drawn_on_the_map(host, qtbot, lab):
    set_cell(host, "valid_lens", 0, 0, 0)
    wait_lab(qtbot, host, lab)
    d2l, sdpa = lab.cells["d2l"], lab.cells["sdpa"]
    assert d2l.overlay.isVisible() and d2l.overlay.image is not None
    assert not sdpa.overlay.isVisible()  # SDPA agrees with strict here
    # The real mask stays visible under the outline: the map still hatches masked cells where the
    # convention gives them nothing (strict), and lets the leaked weights (d2l) show through.
    assert lab.cells["strict"].heatmap.overlay_item.isVisible()
    assert "10 weights and 1 output differ" in d2l.verdict.text()
    assert "same as Strict" in sdpa.verdict.text()


def test_an_input_error_is_shown_and_recovered_from(host, qtbot, lab):
    good = lab.outcome
    host.session.push(SetBlock("queries", 0, 0, 0, np.array([[np.nan]])))
    wait_lab(qtbot, host, lab)
    assert lab.error is not None and "NaN" in lab.error
    assert lab.outcome is good and lab.status.isVisibleTo(lab)
    host.session.undo_stack.undo()
    wait_lab(qtbot, host, lab)
    assert lab.error is None and not lab.status.isVisibleTo(lab)


def test_the_labs_thread_stops_with_the_window(host, qtbot, lab):
    set_cell(host, "valid_lens", 0, 0, 0)  # a computation may still be running at close
    host.close()
    scheduler = lab.lab.scheduler
    assert scheduler._closed  # shut down by the close, not by the fixture
    assert scheduler._pool.activeThreadCount() == 0
    qtbot.waitUntil(lambda: not scheduler.busy, timeout=5000)  # the last "finished" is queued
    started = scheduler.started_count
    lab.lab.request()  # after shutdown: ignored
    assert scheduler.started_count == started and not scheduler.busy


def test_the_documents_own_convention_matches_the_main_view_with_edited_params(host, qtbot, lab):
    # The lab runs with the document's settings and learnable parameters: its column for the
    # document's mask mode (the book's) is exactly what the main heatmaps show. Exercise 1:
    # additive attention over distinct keys, so the parameters matter.
    window = host
    window.session.push(ReplaceState(LESSONS["exercise-1-keys"].preset.build(), "exercise 1"))
    wait_session(qtbot, window.session)
    wait_lab(qtbot, window, lab)
    np.testing.assert_allclose(
        lab.outcome.conventions["d2l"].weights, window.session.last_outcome.view.weights, rtol=1e-6
    )
    state = window.session.document.state.copy()
    rng = np.random.default_rng(5)
    state.params = {k: rng.standard_normal(v.shape) for k, v in window.session.last_outcome.view.params.items()}
    window.session.push(ReplaceState(state, "edit params"))
    wait_session(qtbot, window.session)
    wait_lab(qtbot, window, lab)
    shown = window.session.last_outcome.view.weights
    before = lab_of(LESSONS["exercise-1-keys"].preset.build()).conventions["d2l"].weights.numpy()
    assert not np.allclose(shown, before, atol=1e-3)  # the new parameters changed the weights
    np.testing.assert_allclose(lab.outcome.conventions["d2l"].weights, shown, rtol=1e-6)


def test_every_button_of_the_shown_lab_has_a_tooltip_in_a_tab_and_in_its_own_window(host, lab):
    from PySide6.QtWidgets import QAbstractButton

    tool = host.dock(MASKING_LAB_DOCK)
    assert tool.is_current_tab()
    assert "Tools menu" in tool.close_button().toolTip()
    tool.setFloating(True)  # its own window, with a button to come back
    window = lab.window()
    assert window is not host and window.isVisible() and tool.isVisible()
    buttons = [b for b in window.findChildren(QAbstractButton) if b.isVisibleTo(window)]
    assert buttons and [b.text() for b in buttons if not b.toolTip()] == []
    tool.setFloating(False)
    assert lab.window() is host and tool.is_current_tab()


def test_on_a_slide_the_maps_come_three_a_page_in_their_order_and_the_clicker_walks_them(host, qtbot, lab):
    """Six maps on one 1280x720 slide in slide type were 49-57 px high (issue 37): a slide shows
    a page of three, in the lab's fixed order, each map at least 150 px high, and the clicker's
    steps walk the pages before they go on to the lecture's next slide."""
    order = list(lab._order)
    host.session.set_presenting(True)
    qtbot.wait(50)
    assert lab.slide_pages.count == 2 and lab.slide_pages.page == 0
    assert lab.pages() == [order[:3], order[3:]]
    visible = [name for name, cell in lab.cells.items() if cell.isVisible()]
    assert visible == order[:3]
    assert all(lab.cells[name].heatmap.height() >= 150 for name in order[:3])
    # The findings of the maps on show only, one line per convention (the header names the page).
    assert "Maps 1–3 of 6" in lab.header.text()
    shown = lab.sentence_label.text()
    assert "Wrong polarity" in shown and "Book" not in shown
    # Page Down: the next page; at the last page the step is handed on (False), and back.
    assert host.session.step_slide(1) is True and lab.slide_pages.page == 1
    qtbot.wait(50)
    assert [name for name, cell in lab.cells.items() if cell.isVisible()] == order[3:]
    assert "Maps 4–6 of 6" in lab.header.text()
    assert host.session.step_slide(1) is False and lab.slide_pages.page == 1
    assert host.session.step_slide(-1) is True and lab.slide_pages.page == 0
    assert host.session.step_slide(-1) is False
    # A lecture coming back by Page Up enters at the last page.
    lab.slide_pages.enter(at_end=True)
    assert lab.slide_pages.page == 1
    host.session.set_presenting(False)
    qtbot.wait(50)
    assert lab.slide_pages.count == 1 and all(cell.isVisible() for cell in lab.cells.values())
    assert host.session.step_slide(1) is False  # off a slide the lab takes no clicker steps


def test_on_a_narrow_slide_a_page_holds_the_maps_its_width_does(host, qtbot, lab):
    """Beside a lesson's panel three maps in a row scrolled sideways: a page holds as many maps
    as the width does, and the header's legend is brief (the rest in its tooltip)."""
    host.session.set_presenting(True)
    try:
        lab.setFixedWidth(660)
        qtbot.waitUntil(lambda: lab.slide_pages.count == 3)
        assert [len(page) for page in lab.pages()] == [2, 2, 2]
        assert lab._order == [name for page in lab.pages() for name in page]  # the same order
        qtbot.wait(50)
        scroll = lab.grid_host.parentWidget().parentWidget()
        assert not scroll.horizontalScrollBar().isVisible()
        assert "light stripes" not in lab.header.text() and "light stripes" in lab.header.toolTip()
    finally:
        lab.setMinimumWidth(0)
        lab.setMaximumWidth(16777215)
        host.session.set_presenting(False)
