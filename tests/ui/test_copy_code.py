"""Copy as code in the window: the script of the framework chosen (remembered) reproduces the
weights the window shows; big inputs go to a data file; nothing is computed on the GUI thread."""

from __future__ import annotations

import os
from dataclasses import replace

import numpy as np
import pytest
from PySide6.QtCore import QSettings
from PySide6.QtGui import QGuiApplication, QKeySequence
from PySide6.QtWidgets import QToolButton

from attnviz.snippets import FRAMEWORKS, make_snippet
from attnviz.state.document import ReplaceState, SetBlock, State, make_state
from attnviz.state.run import AttentionCall, Focus, MaskArguments, ModelRun
from attnviz.teaching.lessons import LESSONS
from attnviz.ui.files.copy_code import FRAMEWORK_KEY, install_copy_code

from .conftest import wait_session


@pytest.fixture
def settings(tmp_path) -> QSettings:
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


def run_snippet(code: str, cwd) -> dict:
    here = os.getcwd()
    os.chdir(cwd)
    try:
        namespace: dict = {"__name__": "snippet"}
        exec(compile(code, "snippet.py", "exec"), namespace)  # noqa: S102 - the app's own output
        return namespace
    finally:
        os.chdir(here)


def test_copy_as_code_action_framework_menu_and_toolbar(host, settings):
    window = host
    copier = install_copy_code(window.session, window, settings=settings)
    edit = window.menu("edit").actions()
    assert copier.action in edit and copier.framework_menu.menuAction() in edit
    assert copier.action.shortcut() == QKeySequence("Ctrl+Shift+C") and "PyTorch" in copier.action.toolTip()
    assert copier.action in copier.toolbar.actions() and copier.toolbar.objectName() == "codeToolBar"
    # The toolbar's button copies; its arrow opens the same framework menu.
    assert isinstance(copier.button, QToolButton) and copier.button.menu() is copier.framework_menu
    assert copier.button.popupMode() == QToolButton.ToolButtonPopupMode.MenuButtonPopup
    texts = [a.text() for a in copier.framework_menu.actions()]
    assert texts == ["PyTorch", "TensorFlow", "MXNet", "JAX", "attnviz (a call of attnviz.engine.attend)"]
    assert [n for n, a in copier.framework_actions.items() if a.isChecked()] == ["pytorch"]


def test_the_framework_chosen_is_remembered(host, settings):
    window = host
    copier = install_copy_code(window.session, window, settings=settings)
    copier.framework_actions["jax"].trigger()
    assert copier.framework == "jax" and settings.value(FRAMEWORK_KEY) == "jax"
    assert "JAX" in copier.action.toolTip()
    again = install_copy_code(window.session, window, settings=settings)
    assert again.framework == "jax" and again.framework_actions["jax"].isChecked()
    settings.setValue(FRAMEWORK_KEY, "cobol")  # an unknown value (an older or newer app): the default
    assert install_copy_code(window.session, window, settings=settings).framework == "pytorch"
    with pytest.raises(ValueError, match="unknown framework"):
        copier.set_framework("keras")


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_the_copied_script_is_the_snippet_of_the_framework_chosen(host, qtbot, settings, framework):
    window = host
    copier = install_copy_code(window.session, window, settings=settings)
    copier.set_framework(framework)
    window.session.push(ReplaceState(LESSONS["exercise-1-keys"].preset.build(), "lesson"))
    wait_session(qtbot, window.session)
    code = copier.copy()
    assert code is not None and QGuiApplication.clipboard().text() == code
    state, outcome = window.session.document.state, window.session.current_outcome()
    assert code == make_snippet(state, framework, outcome=outcome, focus=window.session.selection.focus).code
    title = {"pytorch": "PyTorch", "tensorflow": "TensorFlow", "mxnet": "MXNet", "jax": "JAX"}.get(framework, "attnviz")
    assert f"-line {title}" in window.statusBar().currentMessage()


@pytest.mark.parametrize("framework", ["pytorch", "attnviz"])
def test_the_copied_script_is_of_the_head_on_show(host, qtbot, tmp_path, settings, framework):
    """A model's head other than the first: the script reproduces that head, as the window shows it."""
    window = host
    copier = install_copy_code(
        window.session, window, ask_data_path=lambda *_: pytest.fail("no data file needed"), settings=settings
    )
    copier.set_framework(framework)
    rng = np.random.default_rng(8)
    pad = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])
    calls = tuple(
        AttentionCall(
            f"layer.{i}",
            *(rng.standard_normal((2, 3, 5, 4)).astype(np.float32) for _ in range(3)),
            MaskArguments(attention_mask=pad, is_causal=i == 1),
            scale=0.3 if i == 1 else None,
        )
        for i in range(2)
    )
    window.session.push(ReplaceState(State.from_run(ModelRun(calls)), "model"))
    window.session.set_focus(1, 2)
    wait_session(qtbot, window.session)
    code = copier.copy()
    assert code is not None and "head 2 of call 1 (layer.1)" in code
    state, outcome = window.session.document.state, window.session.current_outcome()
    assert outcome.focus == Focus(1, 2)
    assert code == make_snippet(state, framework, outcome=outcome, focus=Focus(1, 2)).code
    shown = outcome.view.weights
    got = run_snippet(code, tmp_path)["weights"].detach().float().numpy()
    np.testing.assert_allclose(got, shown, rtol=0, atol=1e-6)
    # Not the first head's weights (what a snippet of the document without its focus would give).
    assert not np.allclose(got, run_state_weights(state, Focus(0, 0)))


def run_state_weights(state: State, focus: Focus) -> np.ndarray:
    from attnviz.compute import run_state

    return run_state(state, 0, focus).view.weights


@pytest.mark.parametrize("lesson", [None, "pitfall-float16", "pitfall-nan-padding", "exercise-1-keys"])
def test_the_copied_pytorch_script_reproduces_the_weights_the_window_shows(host, qtbot, tmp_path, settings, lesson):
    window = host
    copier = install_copy_code(
        window.session, window, ask_data_path=lambda *_: pytest.fail("no data file needed"), settings=settings
    )
    if lesson is not None:
        window.session.push(ReplaceState(LESSONS[lesson].preset.build(), "lesson"))
    wait_session(qtbot, window.session)
    code = copier.copy()
    assert code is not None and "import torch" in code and "import attnviz" not in code and "from attnviz" not in code
    assert "Copied a" in window.statusBar().currentMessage()
    namespace = run_snippet(code, tmp_path)
    shown = window.session.last_outcome.view.weights
    got = namespace["weights"].detach().float().numpy()
    assert got.shape == shown.shape
    np.testing.assert_allclose(got, shown, rtol=0, atol=1e-6 if lesson != "pitfall-float16" else 1e-3)


def test_what_a_script_leaves_out_is_said_in_the_status_bar(host, qtbot, settings):
    window = host
    copier = install_copy_code(window.session, window, settings=settings)
    copier.set_framework("mxnet")
    window.session.push(ReplaceState(LESSONS["exercise-1-keys"].preset.build(), "lesson"))
    window.session.push(ReplaceState(replace_dtype(window.session.document.state, "bfloat16"), "bf16"))
    wait_session(qtbot, window.session)
    code = copier.copy()
    assert code is not None and "# Left out: MXNet has no bfloat16" in code
    assert "its first lines say what it leaves out" in window.statusBar().currentMessage()


def replace_dtype(state, dtype):
    new = state.copy()
    new.settings = replace(state.settings, dtype=dtype)
    return new


def test_inputs_that_cannot_be_written_leave_the_clipboard_alone(host, qtbot, settings):
    from attnviz.capture import from_output_attentions

    window = host
    copier = install_copy_code(window.session, window, settings=settings)
    run = from_output_attentions([np.full((1, 2, 3, 3), 1 / 3)])
    window.session.push(ReplaceState(State.from_run(run), "weights only"))
    wait_session(qtbot, window.session)
    QGuiApplication.clipboard().setText("before")
    assert copier.copy() is None
    assert QGuiApplication.clipboard().text() == "before"
    assert "Could not write the script: this call recorded its attention weights only" in (
        window.statusBar().currentMessage()
    )


def test_big_inputs_go_to_a_data_file_where_the_user_says(host, qtbot, tmp_path, settings):
    window = host
    asked: list[str] = []
    target = tmp_path / "chosen" / "inputs.npz"
    target.parent.mkdir()

    def ask(_parent, suggested: str) -> str:
        asked.append(suggested)
        return str(target)

    copier = install_copy_code(window.session, window, ask_data_path=ask, settings=settings)
    rng = np.random.default_rng(0)
    state = State.from_tensors(
        rng.standard_normal((1, 300, 256)) * 0.1,
        rng.standard_normal((1, 300, 256)) * 0.1,
        rng.standard_normal((1, 300, 4)),
    )
    state.settings = replace(state.settings, scoring="scaled_dot")
    window.session.push(ReplaceState(state, "big"))
    wait_session(qtbot, window.session)
    code = copier.copy()
    assert asked and code is not None and target.exists()
    assert str(target.as_posix()) in code and str(target) in window.statusBar().currentMessage()
    namespace = run_snippet(code, tmp_path)  # another directory: the script finds the file by path
    np.testing.assert_allclose(
        namespace["weights"].numpy(), window.session.last_outcome.view.weights, rtol=0, atol=1e-6
    )


def test_cancelling_the_data_file_copies_nothing(host, qtbot, settings):
    window = host
    copier = install_copy_code(window.session, window, ask_data_path=lambda *_: None, settings=settings)
    state = make_state(batch=1, n_queries=300, n_keys=10, d_q=256, d_k=256, d_v=2)
    window.session.push(ReplaceState(state, "big"))
    wait_session(qtbot, window.session)
    QGuiApplication.clipboard().setText("before")
    assert copier.copy() is None
    assert QGuiApplication.clipboard().text() == "before"
    assert "cancelled" in window.statusBar().currentMessage()


def test_copy_as_code_uses_the_shown_result_and_never_computes_on_the_gui_thread(host, qtbot, monkeypatch, settings):
    window = host
    import threading

    import attnviz.compute.attention

    copier = install_copy_code(
        window.session, window, ask_data_path=lambda *_: pytest.fail("no data file needed"), settings=settings
    )
    copier.set_framework("attnviz")  # the script whose closing check holds the weights shown
    wait_session(qtbot, window.session)
    original = attnviz.compute.attention.run_state
    on_gui_thread: list[int] = []

    def run_state(*args, **kwargs):
        if threading.current_thread() is threading.main_thread():
            on_gui_thread.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(attnviz.compute.attention, "run_state", run_state)
    code = copier.copy()
    assert code is not None and "expected" in code and not on_gui_thread
    # While the current inputs are still being computed there is nothing to write them from yet:
    # nothing is copied, and the status bar says why.
    QGuiApplication.clipboard().setText("before")
    window.session.push(SetBlock("queries", 0, 0, 0, np.array([[0.125]])))
    assert window.session.last_outcome.version != window.session.document.version
    assert copier.copy() is None
    assert QGuiApplication.clipboard().text() == "before"
    assert "still being computed" in window.statusBar().currentMessage()
    assert not on_gui_thread


def test_the_framework_choice_speaks_portuguese():
    """Run alone in a child process. The language switch reaches every widget the process holds,
    and after the command-line and figure tests of the same pytest worker (render, code, the
    README's blocks, in one process) it crashed that worker with a segmentation fault inside
    install_language (seen twice in the full suite, never alone). The crash is in what those
    tests leave behind, not in this feature; the cause is not found yet (said in the note)."""
    import subprocess
    import sys

    child = {**os.environ, "ATTNVIZ_COPY_CODE_CHILD": "1"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            f"{__file__}::test_the_framework_choice_speaks_portuguese_in_this_process",
        ],
        env=child,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "1 passed" in done.stdout


@pytest.mark.skipif(
    not os.environ.get("ATTNVIZ_COPY_CODE_CHILD"), reason="run by test_the_framework_choice_speaks_portuguese"
)
def test_the_framework_choice_speaks_portuguese_in_this_process(host, qtbot, qapp, settings):
    from attnviz.ui.i18n import install_language

    window = host
    copier = install_copy_code(window.session, window, settings=settings)
    copier.set_framework("tensorflow")
    assert install_language(qapp, "pt_BR")
    try:
        window.session.languageChanged.emit()
        assert copier.action.text() == "Copiar como &código"
        assert copier.framework_menu.title() == "&Framework do código"
        assert copier.framework_actions["attnviz"].text() == "attnviz (uma chamada de attnviz.engine.attend)"
        assert copier.action.toolTip().startswith("Copia um script TensorFlow que reconstrói estas entradas")
        wait_session(qtbot, window.session)
        assert copier.copy() is not None
        assert window.statusBar().currentMessage().startswith("Copiado um script TensorFlow de ")
    finally:
        install_language(qapp, "en")
        window.session.languageChanged.emit()
    assert copier.framework_menu.title() == "Code &framework"
