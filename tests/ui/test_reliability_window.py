"""The window on issue 22's inputs: a file name with control characters is shown escaped in the
title, the status bar and the recent files (point 9); scores that overflow are one warning line
under the weights (point 4); the width bomb is refused, within memory, in a capped child (point 2)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtWidgets import QMessageBox

from attnviz.bench.safety import HOSTILE_PEAK_MB, width_bomb_capture, width_bomb_session, window_probe
from attnviz.io.names import display_name
from attnviz.io.session_state import save_state_file
from attnviz.state.document import Settings, State, make_state

from .conftest import wait_current

CONTROL = re.compile(r"[\x00-\x1f\x7f\u202e]")


@pytest.fixture
def refusals(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    shown: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", staticmethod(lambda _parent, _title, text, *a: shown.append(text)))
    return shown


def open_in(window, qtbot, path: Path) -> bool:  # noqa: ANN001
    with qtbot.waitSignal(window.file_actions.openFinished, timeout=20000) as finished:
        assert window.file_actions.open_file(path)
    return bool(finished.args[0])


@pytest.mark.skipif(sys.platform == "win32", reason="such names are not allowed there")
def test_control_characters_in_a_file_name_are_shown_escaped(window, qtbot, tmp_path: Path, refusals) -> None:  # noqa: ANN001
    path = tmp_path / "work\x1b[31m\nred\u202etxt.attnviz"
    save_state_file(path, make_state(batch=1, n_queries=2, n_keys=3, d_q=2, d_k=2, d_v=2))
    assert open_in(window, qtbot, path) and refusals == []
    shown = [window.windowTitle(), window.statusBar().currentMessage()]
    shown += [action.text() for action in window.file_actions.recent_menu.actions()]
    assert not any(CONTROL.search(text) for text in shown), shown
    assert shown[0].startswith("work\\x1b[31m red\\u202etxt.attnviz")
    assert "work\\x1b[31m red\\u202etxt.attnviz" in shown[1]


def test_display_name_escapes_and_bounds() -> None:
    assert display_name("/a/b\x07c.npz") == "b\\x07c.npz"
    long = display_name("/x/" + "n" * 500 + ".attnviz")
    assert len(long) == 79 and long.startswith("nnn") and long.endswith("n.attnviz") and "\u2026" in long


def test_overflowing_scores_are_one_line_under_the_weights(window, qtbot, tmp_path: Path, refusals) -> None:  # noqa: ANN001
    state = State.from_tensors(
        np.full((2, 3, 2), 3e38),
        np.linspace(0.5, 1.5, 2 * 4 * 2).reshape(2, 4, 2),
        np.zeros((2, 4, 2)),
        settings=Settings(scoring="scaled_dot"),  # additive scores are bounded
    )
    path = tmp_path / "overflow.attnviz"
    save_state_file(path, state)
    assert open_in(window, qtbot, path) and refusals == []
    wait_current(qtbot, window)
    lines = window.results.warnings.text().splitlines()
    overflow = [line for line in lines if "overflowed to Inf or NaN" in line]
    assert len(overflow) == 1 and "although every input is finite" in overflow[0], lines


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc for the peak")
@pytest.mark.parametrize("build", [width_bomb_capture, width_bomb_session], ids=["capture", "session"])
def test_the_window_refuses_the_width_bomb_within_memory(tmp_path: Path, build) -> None:  # noqa: ANN001
    path = build(tmp_path / ("bomb.attnviz-capture" if build is width_bomb_capture else "bomb.attnviz"))
    result = window_probe(path, headroom_mb=1024)
    assert result["opened"] == [False] and len(result["refusals"]) == 1, result
    assert result["refusals"][0].startswith(f"{path.name}: ") and "1,000,000 characters wide" in result["refusals"][0]
    assert result["peak_mb"] < HOSTILE_PEAK_MB, result
