"""Big pastes and bursts of undo/redo: one edit, one computation, no Python call per cell."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PySide6.QtCore import QLocale

from attnviz.document import ReplaceState, SetBlock, resize_state
from attnviz.ui.tables import tensor_table
from attnviz.ui.tables.tensor_table import parse_block, parse_value

from .conftest import wait_current, wait_session

# Cells a user may paste: numbers in every spelling parse_value takes, and things it refuses.
TOKENS = [
    "0",
    "1.5",
    "-2",
    " 3.25 ",
    "−0.5",
    "–4",
    "1e3",
    "-1.5E-3",
    "nan",
    "inf",
    "-inf",
    "Infinity",
    "+.5",
    "1.",
    "1_000",
    "0,5",
    "1,5e2",
    "-0,25",
    "1,000",
    "",
    " ",
    "abc",
    "1.0.0",
    "0x10",
    "1e",
    "--1",
    "١٢",
]


def reference(text: str, minimum: float | None) -> np.ndarray | str:
    """What reading every cell with parse_value gives: the array, or the first error's text."""
    if not text.strip():
        return "there is nothing to paste"
    rows = [line.split("\t") for line in text.split("\n")]
    try:
        return np.array([[parse_value(cell, False, minimum) for cell in row] for row in rows], dtype=np.float64)
    except ValueError as err:
        return str(err)


@pytest.mark.parametrize("locale", ["en_US", "pt_BR"])
@settings(max_examples=150, deadline=None)
@given(
    grid=st.lists(st.lists(st.sampled_from(TOKENS), min_size=3, max_size=3), min_size=1, max_size=4),
    minimum=st.sampled_from([None, 0.0]),
)
def test_a_pasted_block_reads_every_cell_as_parse_value_does(
    locale: str, grid: list[list[str]], minimum: float | None
) -> None:
    before = QLocale()
    QLocale.setDefault(QLocale(locale))
    try:
        text = "\n".join("\t".join(row) for row in grid)
        expected = reference(text, minimum)
        try:
            got: np.ndarray | str = parse_block(text, minimum=minimum)
        except ValueError as err:
            got = str(err)
    finally:
        QLocale.setDefault(before)
    if isinstance(expected, str):
        assert isinstance(got, str) and got.endswith(expected), (got, expected)
    else:
        assert isinstance(got, np.ndarray), got
        np.testing.assert_array_equal(got, expected)


def test_a_big_paste_makes_no_python_call_per_cell(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = tensor_table.parse_value

    def counted(text: str, *args: object, **kwargs: object) -> float | int:
        calls.append(text)
        return real(text, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(tensor_table, "parse_value", counted)
    values = np.random.default_rng(0).standard_normal((500, 500))
    text = "\n".join("\t".join(map(repr, row)) for row in values.tolist())
    np.testing.assert_array_equal(parse_block(text), values)
    assert calls == []  # was 250,000 parse_value calls: 0.4-1.1 s of the GUI thread
    with pytest.raises(ValueError, match="row 500, column 3: 'x' is not a number"):
        parse_block(text[: text.rfind("\n") + 1] + "1\t2\tx" + "\t0" * 497)
    assert calls  # a bad cell is still found and named cell by cell


def test_a_500_by_500_paste_is_one_edit(window, qtbot) -> None:
    session = window.session
    session.push(ReplaceState(resize_state(session.document.state, batch=1, n_queries=500, d_q=500), "big"))
    wait_current(qtbot, window)
    values = np.random.default_rng(1).standard_normal((500, 500))
    view = window.inputs.views["queries"]
    view.setCurrentIndex(view.model().index(0, 0))
    before = session.head_view().queries
    version, depth, started = session.document.version, session.undo_stack.count(), session.scheduler.started_count
    assert view.paste("\n".join("\t".join(map(repr, row)) for row in values.tolist()))
    assert session.document.version == version + 1 and session.undo_stack.count() == depth + 1
    np.testing.assert_array_equal(session.head_view().queries[0], values)
    wait_current(qtbot, window)
    assert session.scheduler.started_count == started + 1
    session.undo_stack.undo()
    np.testing.assert_array_equal(session.head_view().queries, before)


def test_a_burst_of_undos_and_redos_computes_once_where_it_ends(window, qtbot) -> None:
    session = window.session
    for i in range(6):
        session.push(SetBlock("keys", 0, 0, 0, np.array([[float(i)]])))
    wait_current(qtbot, window)
    lab = session.new_scheduler(lambda snapshot: snapshot.version)  # a lab's thread follows the same rule
    lab_results: list[int] = []
    lab.finished.connect(lab_results.append)
    session.documentChanged.connect(lambda _edit: lab.submit(session.document.snapshot()))
    started = session.scheduler.started_count
    for _ in range(6):
        window.undo_action.trigger()
    for _ in range(4):
        window.redo_action.trigger()
    # Every step is applied at once (the tables and the Edit menu follow), only the computing waits.
    assert session.head_view().keys[0, 0, 0] == 3.0
    wait_current(qtbot, window)
    qtbot.waitUntil(lambda: not lab.busy, timeout=5000)
    assert session.scheduler.started_count == started + 1  # was 2: the first step's, then the last
    assert session.last_outcome.version == session.document.version
    assert lab.started_count == 1 and lab_results == [session.document.version]


def test_a_single_undo_still_computes_promptly(window, qtbot) -> None:
    session = window.session
    session.push(SetBlock("keys", 0, 0, 0, np.array([[9.0]])))
    wait_current(qtbot, window)
    window.undo_action.trigger()
    wait_session(qtbot, session, timeout=5000)
    assert session.last_outcome.version == session.document.version
