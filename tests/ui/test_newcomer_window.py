"""A newcomer's window (issue 36): First steps offered once, the Output table's last column in
view at 1280x720, no "0.00" over the hatching of masked cells, a heatmap title on one line where
it fits."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QDialog, QWidget

from tests.ui.conftest import wait_current


def test_first_steps_is_offered_once_and_remembered(qtbot, tmp_path: Path) -> None:
    from attnviz.ui.window.first_launch import FIRST_STEPS_OFFERED, offer_first_steps

    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    window = QWidget()
    qtbot.addWidget(window)
    window.show()
    assert offer_first_steps(window, settings)
    dialogs = [d for d in window.findChildren(QDialog) if d.windowTitle() == "First steps"]
    assert len(dialogs) == 1 and dialogs[0].isVisible()
    dialogs[0].close()
    # Remembered on disk: a later launch (new settings object) does not offer it again.
    again = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    assert again.value(FIRST_STEPS_OFFERED, False, type=bool)
    assert not offer_first_steps(window, again)
    assert len([d for d in window.findChildren(QDialog) if d.windowTitle() == "First steps" and d.isVisible()]) == 0


def test_the_output_tables_last_column_is_in_view_at_1280x720(qtbot) -> None:
    from attnviz.ui.window.main_window import MainWindow

    window = MainWindow("dot-toy")
    qtbot.addWidget(window)
    window.resize(1280, 720)
    window.show()
    qtbot.waitExposed(window)
    wait_current(qtbot, window)
    table = window.output.table
    qtbot.waitUntil(lambda: table.model().columnCount() == 4)
    header = table.horizontalHeader()
    right = header.sectionViewportPosition(3) + header.sectionSize(3)
    assert right <= table.viewport().width(), (right, table.viewport().width())
    assert table.horizontalScrollBar().maximum() == 0  # nothing to scroll to: every column shows
    # The book's output: d3 of batch element 0 is 5.
    assert table.model().index(0, 3).data() == "5"
    window.close()


def test_masked_zero_weights_print_no_value_and_leaking_ones_do(qapp) -> None:  # noqa: ANN001
    from attnviz.ui.heatmap.widget import HeatmapWidget

    heatmap = HeatmapWidget()
    heatmap.resize(500, 300)
    heatmap.show_masked_values = True  # as every weights map draws them
    weights = np.array([[0.5, 0.5, 0.0, 0.0], [0.0, 0.25, 0.25, 0.5]], dtype=np.float32)
    allowed = np.array([[True, True, False, False], [True, True, True, False]])  # (1, 3) leaks 0.5
    heatmap.set_data(weights, mask=allowed, levels=(0.0, 1.0))
    texts = {(cell.row, cell.col): cell for cell in heatmap.annotations}
    assert texts[(0, 2)].text == "" and texts[(0, 3)].text == ""  # masked, weight 0: the hatching says it
    assert texts[(1, 0)].text == "0.00"  # allowed and 0: a value worth printing
    assert texts[(1, 3)].text == "0.50" and texts[(1, 3)].halo  # masked yet weighted: shown, outlined
    assert not texts[(0, 2)].on_mask  # and no grey patch over the stripes for a blank
    heatmap.close()


def test_a_title_that_fits_stays_on_one_line(qapp) -> None:  # noqa: ANN001
    from attnviz.ui.heatmap.widget import HeatmapWidget

    heatmap = HeatmapWidget()
    heatmap.resize(1200, 500)
    heatmap.show()
    heatmap.set_data(np.random.default_rng(0).random((12, 12)), levels=(0.0, 1.0))
    heatmap.set_title("Entropy, batch 0 (on show: layer 0, head 0)")
    label = heatmap.plot_item.titleLabel.item
    one_line = label.boundingRect().height()
    assert label.boundingRect().width() > 300  # laid out as one line, not in a narrow block
    # Too narrow for it: wrapped (the map keeps its width), two lines or more.
    heatmap.resize(260, 400)
    qapp.processEvents()
    assert label.boundingRect().height() > 1.5 * one_line
    heatmap.close()


def test_compare_runs_before_a_comparison_says_what_to_do_and_draws_no_empty_maps(qtbot, window) -> None:  # noqa: ANN001
    window.resize(1280, 720)
    window.run_compare_dock.show()
    window.run_compare_dock.raise_()
    view = window.run_compare_dock.view()
    qtbot.waitUntil(lambda: view.isVisible())
    assert "Compare with" in view.title.text() and "capture" in view.title.text()
    assert not any(m.isVisibleTo(view) for m in (view.overview, view.map_a, view.map_b, view.map_diff))
