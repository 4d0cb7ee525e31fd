"""Edit > Copy as code of a hostile run (issue 30, item 1 in the window): the call's name holds
code after a line break and the data file's folder code after a quote; the copied script of every
framework compiles, holds only printable lines, and the PyTorch and attnviz ones run without
creating the marker the hostile text would."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings

from attnviz.bench.safety_text import hostile_session, run_snippet
from attnviz.io.capture_file import load_capture
from attnviz.snippets import FRAMEWORKS
from attnviz.state.document import ReplaceState, State
from attnviz.text.safe import is_printable
from attnviz.ui.files.copy_code import install_copy_code

from .conftest import wait_session


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_copy_as_code_of_a_hostile_run_runs_nothing_but_its_own_code(host, qtbot, tmp_path, framework):
    window = host
    marker = tmp_path / "pwned"
    # 260 x 256 queries: too many for the script, so the path the user picks is written into it.
    run = load_capture(hostile_session(tmp_path, marker, length=260, size=256))
    folder = tmp_path / 'x"+__import__("pathlib").Path("pwned").touch()+"\x1b[2J'
    folder.mkdir()
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    copier = install_copy_code(
        window.session, window, ask_data_path=lambda _parent, _suggested: str(folder / "d.npz"), settings=settings
    )
    copier.framework_actions[framework].trigger()
    window.session.push(ReplaceState(State.from_run(run), "hostile"))
    wait_session(qtbot, window.session)
    code = copier.copy()
    assert code is not None and (folder / "d.npz").exists()
    assert all(is_printable(line) for line in code.split("\n"))
    compile(code, "snippet.py", "exec")
    if framework in ("pytorch", "attnviz"):
        run_snippet(code, tmp_path)
    assert not marker.exists()
    assert is_printable(window.statusBar().currentMessage())
