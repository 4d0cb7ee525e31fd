"""File menu: open/save sessions and tensors as one undoable edit, refusals, recent files,
exports and autosave. Dialogs are replaced through QFileDialog/QMessageBox static methods and
``FileActions.choose_roles``, so nothing here waits for a click."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QSettings
from PySide6.QtGui import QImage, QKeySequence
from PySide6.QtWidgets import QDialogButtonBox, QFileDialog, QMessageBox

from attnviz.io import (
    AutosaveSlot,
    claim_autosave,
    load_session,
    save_arrays,
    save_session,
    stale_autosaves,
)
from attnviz.io.session_state import load_state_file, save_state_file, state_to_session
from attnviz.state.document import SetBlock, SetSettings
from attnviz.teaching.presets import PRESETS
from attnviz.ui.files.file_actions import FileActions, install_file_actions
from attnviz.ui.files.open_dialog import RolesDialog

from .conftest import wait_session


@pytest.fixture
def messages(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Every QMessageBox.warning shown, as (title, text); no box ever opens."""
    shown: list[tuple[str, str]] = []
    monkeypatch.setattr(
        QMessageBox, "warning", staticmethod(lambda _parent, title, text, *a: shown.append((title, text)))
    )
    return shown


@pytest.fixture
def actions(host, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, messages) -> FileActions:  # noqa: ANN001
    monkeypatch.setenv("ATTNVIZ_STATE_DIR", str(tmp_path / "state"))
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    result = install_file_actions(host.session, host, settings=settings, autosave_ms=100)

    def no_dialog(*_args: object) -> None:
        raise AssertionError("the roles dialog was not expected")

    result.choose_roles = no_dialog  # type: ignore[assignment]
    yield result
    # Before monkeypatch restores ATTNVIZ_STATE_DIR: never touch the real autosave.
    result.shutdown()


def open_now(actions: FileActions, qtbot, path) -> bool:
    """Open ``path`` and wait until it is over: whether the inputs were replaced."""
    with qtbot.waitSignal(actions.openFinished, timeout=10000) as finished:
        assert actions.open_file(path)
    return bool(finished.args[0])


def states_equal(a, b) -> bool:  # noqa: ANN001
    """The same inputs: settings, lengths, and every call's tensors, causal flag and scale."""

    def same(x, y) -> bool:  # noqa: ANN001
        return (x is None) == (y is None) and (x is None or np.array_equal(x, y, equal_nan=True))

    calls = list(zip(a.run.calls, b.run.calls))
    return (
        a.settings == b.settings
        and same(a.lens_1d, b.lens_1d)
        and same(a.lens_2d, b.lens_2d)
        and len(a.run.calls) == len(b.run.calls)
        and all(same(getattr(x, r), getattr(y, r)) for x, y in calls for r in ("queries", "keys", "values"))
        and all((x.masks.causal, x.scale) == (y.masks.causal, y.scale) for x, y in calls)
    )


def test_menu_has_the_standard_shortcuts_above_quit(window) -> None:  # noqa: ANN001
    actions = window.file_actions
    assert actions.open_action.shortcut() == QKeySequence("Ctrl+O")
    assert actions.save_action.shortcut() == QKeySequence("Ctrl+S")
    assert actions.save_as_action.shortcut() == QKeySequence("Ctrl+Shift+S")
    texts = [a.text() for a in window.menu("file").actions()]
    assert texts.index("&Open…") < texts.index("Open &Recent") < texts.index("&Save") < texts.index("&Quit")
    assert texts[-1] == "&Quit"
    assert texts.count("&Open…") == 1
    assert len(actions.export_menu.actions()) == 6


def test_save_then_open_restores_everything_as_one_undoable_edit(host, actions, qtbot, tmp_path) -> None:  # noqa: ANN001
    window = host
    window.session.push(SetSettings({"mask_mode": "strict", "causal": "top_left"}))
    wait_session(qtbot, window.session)
    saved = window.session.document.state.copy()
    path = tmp_path / "work.attnviz"
    assert actions.save_as(path)
    assert window.session.undo_stack.isClean()
    assert actions.current_path == path
    assert window.windowTitle().startswith("work.attnviz")

    window.session.load_preset("masked-softmax-2d")
    wait_session(qtbot, window.session)
    assert not states_equal(window.session.document.state, saved)
    version, depth = window.session.document.version, window.session.undo_stack.count()
    assert open_now(actions, qtbot, path)
    assert window.session.document.version == version + 1
    assert window.session.undo_stack.count() == depth + 1
    assert states_equal(window.session.document.state, saved)
    wait_session(qtbot, window.session)
    assert window.session.last_outcome.view is not None
    window.session.undo_stack.undo()
    assert window.session.document.state.settings.lens_mode == "2d"  # the preset is back


def test_save_uses_the_current_file_and_save_as_adds_the_extension(host, actions, tmp_path, monkeypatch) -> None:  # noqa: ANN001
    window = host
    asked: list[str] = []

    def fake_save_dialog(_parent, _title, start, _filter):  # noqa: ANN001, ANN202
        asked.append(start)
        return str(tmp_path / "named"), _filter

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(fake_save_dialog))
    assert actions.save()  # no current file yet: asks
    assert actions.current_path == tmp_path / "named.attnviz"
    assert load_state_file(tmp_path / "named.attnviz").settings == window.session.document.state.settings
    window.session.push(SetSettings({"dropout": 0.5}))
    assert actions.save()  # now silently to the same file
    assert len(asked) == 1
    assert load_state_file(tmp_path / "named.attnviz").settings.dropout == 0.5


def _bad_files(tmp_path: Path) -> list[tuple[Path, str]]:
    garbage = tmp_path / "garbage.attnviz"
    garbage.write_bytes(b"PK\x03\x04 definitely not a zip")
    inconsistent = tmp_path / "inconsistent.attnviz"
    session = state_to_session(PRESETS["dot-toy"].build())
    session.arrays["run/0/values"] = np.zeros((2, 1, 3, 4))
    save_session(inconsistent, session)
    corrupt = tmp_path / "corrupt.npy"
    corrupt.write_bytes(b"\x93NUMPY\x01\x00{'descr': '<f8', 'fortran_order': False, 'shape': (9, 9), }")
    too_big_batch = tmp_path / "batch.npz"
    save_arrays(
        too_big_batch, {"queries": np.zeros((3, 1, 20)), "keys": np.zeros((3, 10, 2)), "values": np.zeros((2, 10, 4))}
    )
    return [
        (tmp_path / "missing.attnviz", "missing.attnviz: does not exist"),
        (garbage, "garbage.attnviz: "),
        (inconsistent, "keys (2, 1, 10, 2) and values (2, 1, 3, 4) do not fit together"),
        (corrupt, "corrupt.npy: "),
        (too_big_batch, "batch sizes disagree"),
    ]


def test_a_refused_file_shows_one_line_and_changes_nothing(host, actions, qtbot, messages, tmp_path) -> None:  # noqa: ANN001
    window = host
    before = window.session.document.state.copy()
    for path, needle in _bad_files(tmp_path):
        version, depth = window.session.document.version, window.session.undo_stack.count()
        assert not open_now(actions, qtbot, path)
        assert window.session.document.version == version, path
        assert window.session.undo_stack.count() == depth
        title, text = messages[-1]
        assert title == "Cannot open file"
        assert needle in text and "\n" not in text, text
    assert len(messages) == 5
    assert states_equal(window.session.document.state, before)


def test_a_refused_file_is_explained_in_the_portuguese_ui(host, actions, qtbot, messages, tmp_path, qapp) -> None:
    window = host
    from attnviz.ui.i18n import install_language

    truncated = tmp_path / "cut.npy"
    np.save(truncated, np.zeros((9, 9)))
    truncated.write_bytes(truncated.read_bytes()[:200])
    assert install_language(qapp, "pt_BR")
    try:
        before = window.session.document.version
        assert not open_now(actions, qtbot, truncated)
        assert not open_now(actions, qtbot, tmp_path / "gone.attnviz")
        assert actions.save_as(tmp_path / "no-such-folder" / "s.attnviz") is False
    finally:
        install_language(qapp, "en")
    assert window.session.document.version == before
    assert messages[0] == (
        "Não foi possível abrir o arquivo",
        ("cut.npy: está truncado: seu cabeçalho promete 648 bytes de dados, mas só 72 bytes vêm depois dele"),
    )
    assert messages[1] == ("Não foi possível abrir o arquivo", "gone.attnviz: não existe")
    title, text = messages[2]
    assert title == "Não foi possível salvar"
    assert text.startswith("s.attnviz: não pode ser gravado (") and "cannot" not in text


def test_complete_tensor_files_open_without_asking(host, actions, qtbot, tmp_path) -> None:  # noqa: ANN001
    window = host
    rng = np.random.default_rng(3)
    arrays = {
        "Q": rng.standard_normal((1, 3, 4)),
        "K": rng.standard_normal((1, 5, 4)),
        "V": rng.standard_normal((1, 5, 2)),
        "valid_lens": np.array([4]),
    }
    path = tmp_path / "qkv.npz"
    save_arrays(path, arrays)
    assert open_now(actions, qtbot, path)  # choose_roles would raise if called
    state = window.session.document.state
    np.testing.assert_array_equal(state.head_view().queries, arrays["Q"])
    assert state.settings.lens_mode == "1d" and state.lens_1d.tolist() == [4]
    assert actions.current_path is None  # Save must not overwrite the tensor file with a session
    assert "qkv.npz" in window.windowTitle()
    wait_session(qtbot, window.session)
    assert window.session.last_outcome.view.weights.shape == (1, 3, 5)
    np.testing.assert_allclose(window.session.last_outcome.view.weights[0, :, 4], 0.0)  # key 4 is past the length


def test_a_file_of_heads_loads_whole_and_the_chooser_asks_only_for_unknown_names(
    host, actions, qtbot, tmp_path
) -> None:  # noqa: ANN001
    window = host
    rng = np.random.default_rng(4)
    q, k, v = rng.standard_normal((2, 3, 4, 6)), rng.standard_normal((2, 3, 7, 6)), rng.standard_normal((2, 3, 7, 2))
    path = tmp_path / "heads.npz"
    save_arrays(path, {"q": q, "k": k, "v": v})
    assert open_now(actions, qtbot, path)  # names tell: no dialog, every head loaded
    state = window.session.document.state
    assert state.run.heads(0) == 3 and window.session.selection.focus == (0, 0)
    np.testing.assert_array_equal(state.head_view().queries, q[:, 0])

    odd = tmp_path / "odd.npz"
    save_arrays(odd, {"a": q, "b": k, "c": v})
    calls: list[dict[str, str]] = []

    def choose(parent, tf, guess, base):  # noqa: ANN001, ANN202
        # The inputs the file's missing roles would come from: the head on show.
        assert parent is window and base.settings == window.session.document.state.settings
        np.testing.assert_array_equal(base.head_view().keys, window.session.head_view().keys)
        calls.append(dict(guess))
        return None if len(calls) == 1 else ({"queries": "a", "keys": "b", "values": "c"}, 1, None)

    actions.choose_roles = choose
    version = window.session.document.version
    assert not open_now(actions, qtbot, odd)  # cancelled
    assert window.session.document.version == version
    assert open_now(actions, qtbot, odd)
    assert len(calls) == 2
    np.testing.assert_array_equal(window.session.head_view().queries, q[:, 1])
    np.testing.assert_array_equal(window.session.head_view().values, v[:, 1])


def test_roles_dialog_previews_and_only_accepts_a_choice_that_loads(host, tmp_path, qtbot) -> None:  # noqa: ANN001
    window = host
    from attnviz.io import guess_roles, load_tensor_file

    path = tmp_path / "mixed.npz"
    # np.savez: attnviz's own writer stores numbers only, a model's script writes tokens too.
    np.savez(
        path,
        **{
            "attn.q": np.zeros((2, 4, 3, 8), np.float32),
            "attn.k": np.zeros((2, 4, 6, 8), np.float32),
            "layer0_value": np.zeros((2, 4, 6, 5), np.float32),
            "lengths": np.array([6, 4]),
            "attention_mask": np.ones((2, 6), bool),
            "tokens": np.array(list("abcdef")),
        },
    )
    tf = load_tensor_file(path)
    dialog = RolesDialog(tf, guess_roles(tf), window.session.document.state)
    qtbot.addWidget(dialog)
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    # A mask is offered under the argument its name says, tokens under theirs.
    assert dialog.combos["attention_mask"].currentData() == "attention_mask"
    assert dialog.combos["tokens"].findData("tokens") > 0
    assert not ok.isEnabled()  # values kept (2, 10, 4) cannot go with keys of 6 entries
    assert "Cannot load" in dialog.preview.text()
    dialog.combos["values"].setCurrentIndex(dialog.combos["values"].findData("layer0_value"))
    assert dialog.head.isEnabled() and dialog.head.maximum() == 3 and not dialog.layer.isEnabled()
    dialog.head.setValue(2)
    assert ok.isEnabled(), dialog.preview.text()
    assert "queries (2, 3, 8), keys (2, 6, 8), values (2, 6, 5)" in dialog.preview.text()
    assert "layer 0, head 2" in dialog.preview.text()
    roles, head = dialog.choice()
    assert head == 2 and roles["values"] == "layer0_value" and roles["attention_mask"] == "attention_mask"
    dialog.show()
    dialog.grab().save(str(tmp_path / "roles_dialog.png"))
    assert QImage(str(tmp_path / "roles_dialog.png")).width() >= 500


def test_recent_files_are_remembered_and_missing_ones_forgotten(host, actions, qtbot, tmp_path) -> None:  # noqa: ANN001
    first, second = tmp_path / "a.attnviz", tmp_path / "b.attnviz"
    save_state_file(first, PRESETS["dot-toy"].build())
    save_state_file(second, PRESETS["dot-toy"].build())
    assert open_now(actions, qtbot, first) and open_now(actions, qtbot, second) and open_now(actions, qtbot, first)
    assert actions.recent_files() == [str(first.resolve()), str(second.resolve())]
    actions.recent_menu.aboutToShow.emit()
    entries = [a for a in actions.recent_menu.actions() if a.data()]
    assert [a.data() for a in entries] == actions.recent_files()
    assert entries[0].text().startswith("&1 a.attnviz")
    second.unlink()
    with qtbot.waitSignal(actions.openFinished):
        entries[1].trigger()  # opening a vanished file: refused and dropped from the list
    assert actions.recent_files() == [str(first.resolve())]


def test_exports_write_the_shown_weights_and_output(host, actions, qtbot, tmp_path) -> None:  # noqa: ANN001
    window = host
    window.session.load_preset("masked-softmax-1d")
    wait_session(qtbot, window.session)
    view = window.session.last_outcome.view
    assert actions.export_array("weights", ".csv", tmp_path / "w.csv")
    text = (tmp_path / "w.csv").read_text()
    assert text.count("# batch") == 2
    np.testing.assert_allclose(np.loadtxt(tmp_path / "w.csv", delimiter=",").reshape(view.weights.shape), view.weights)
    assert actions.export_array("output", ".npy", tmp_path / "o.npy")
    np.testing.assert_array_equal(np.load(tmp_path / "o.npy"), view.output)
    assert actions.export_weights_image(tmp_path / "w.png")
    image = QImage(str(tmp_path / "w.png"))
    assert image.width() >= 480 and image.height() >= 2 * 200
    assert actions.export_weights_image(tmp_path / "w.svg", suffix=".svg")
    assert ET.parse(tmp_path / "w.svg").getroot().tag.endswith("svg")


def test_an_export_over_the_open_session_or_a_fifo_is_refused(host, actions, messages, qtbot, tmp_path) -> None:  # noqa: ANN001
    import os

    session = tmp_path / "work.attnviz"
    save_state_file(session, PRESETS["dot-toy"].build())
    assert open_now(actions, qtbot, session)
    wait_session(qtbot, host.session)
    before = session.read_bytes()
    link = tmp_path / "weights.npy"
    link.symlink_to(session)
    assert not actions.export_array("weights", ".npy", link)
    assert session.read_bytes() == before
    assert messages[-1][0] == "Cannot export" and "an input of this command: nothing was written" in messages[-1][1]
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / "weights.png"
        os.mkfifo(fifo)
        assert not actions.export_weights_image(fifo)  # refused before opening: never blocks
        assert "a FIFO (a named pipe), not a regular file" in messages[-1][1]


def test_no_export_without_a_result_for_the_current_inputs(host, actions, messages, qtbot, tmp_path) -> None:  # noqa: ANN001
    window = host
    window.session.push(SetSettings({"scoring": "dot"}))  # the additive toy has d_q 20, d_k 2: an engine error
    wait_session(qtbot, window.session)
    assert window.session.last_outcome.error
    assert not actions.export_array("weights", ".csv", tmp_path / "w.csv")
    assert not (tmp_path / "w.csv").exists()
    assert messages[-1][0] == "Nothing to export" and "error" in messages[-1][1]


def test_export_menu_asks_for_a_name_and_adds_the_extension(host, actions, qtbot, monkeypatch, tmp_path) -> None:  # noqa: ANN001
    window = host
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *_a: (str(tmp_path / "weights_out"), "")))
    wait_session(qtbot, window.session)
    actions.export_actions["weights.npy"].trigger()
    np.testing.assert_array_equal(np.load(tmp_path / "weights_out.npy"), window.session.last_outcome.view.weights)


def test_autosave_follows_changes_once_per_burst_and_is_cleared_on_exit(host, actions, qtbot, monkeypatch) -> None:  # noqa: ANN001
    window = host
    import threading

    writes: list[int] = []
    on_gui_thread: list[int] = []
    real_write = AutosaveSlot.write

    def write(slot, session):
        writes.append(1)
        if threading.current_thread() is threading.main_thread():
            on_gui_thread.append(1)
        return real_write(slot, session)

    monkeypatch.setattr(AutosaveSlot, "write", write)
    assert actions.autosave.writer.slot is None  # nothing claimed before the first change
    for i in range(5):  # five keystrokes in a row
        window.session.push(SetBlock("keys", 0, 0, 0, np.array([[0.5 + i]])))
    assert writes == []  # nothing written while typing
    qtbot.waitUntil(lambda: actions.autosave.writer.written == 1, timeout=5000)
    assert writes == [1] and not on_gui_thread  # the file is written off the GUI thread
    path = actions.autosave.writer.slot.path
    saved = load_session(path)
    assert saved.arrays["run/0/keys"][0, 0, 0, 0] == 4.5
    window.close()
    qtbot.waitUntil(lambda: not path.exists(), timeout=5000)
    assert list(path.parent.iterdir()) == []  # its lock file went with it


def stale_autosave(state) -> AutosaveSlot:
    """An autosave left by a window that is gone (released here, as a crash would)."""
    slot = claim_autosave()
    slot.write(state_to_session(state))
    slot.release()
    return slot


def test_offer_restore_brings_back_the_autosave_as_one_edit(host, actions, monkeypatch) -> None:  # noqa: ANN001
    window = host
    crashed = PRESETS["masked-softmax-2d"].build()
    left = stale_autosave(crashed)
    monkeypatch.setattr(QMessageBox, "question", staticmethod(lambda *_a: QMessageBox.StandardButton.Yes))
    depth = window.session.undo_stack.count()
    assert actions.offer_restore()
    assert states_equal(window.session.document.state, crashed)
    assert window.session.undo_stack.count() == depth + 1
    # The restored work stays on disk as this window's own autosave until the window closes.
    slot = actions.autosave.writer.slot
    assert slot is not None and slot.path == left.path and left.path.exists()
    assert stale_autosaves() == []
    actions.shutdown()
    assert not left.path.exists()


def test_declining_or_a_damaged_autosave_discards_it(host, actions, messages, monkeypatch) -> None:  # noqa: ANN001
    window = host
    declined = stale_autosave(PRESETS["dot-toy"].build())
    monkeypatch.setattr(QMessageBox, "question", staticmethod(lambda *_a: QMessageBox.StandardButton.No))
    version = window.session.document.version
    assert not actions.offer_restore()
    assert window.session.document.version == version and not declined.path.exists()

    damaged = stale_autosave(PRESETS["dot-toy"].build())
    damaged.path.write_bytes(b"damaged")
    assert not actions.offer_restore()
    assert messages[-1][0] == "Autosave unreadable" and not damaged.path.exists()

    def never(*_a: object) -> None:
        raise AssertionError("nothing to restore: no question")

    monkeypatch.setattr(QMessageBox, "question", staticmethod(never))
    assert not actions.offer_restore()
    assert window.session.document.version == version


def test_a_failing_autosave_is_reported_in_the_status_bar_and_editing_goes_on(
    host, actions, qtbot, monkeypatch
) -> None:
    window = host
    from attnviz.io import SessionFileError

    def failing(_slot, _session):
        raise SessionFileError("/full/disk/autosave.attnviz", "cannot be written (No space left on device)")

    monkeypatch.setattr(AutosaveSlot, "write", failing)
    window.session.push(SetBlock("keys", 0, 0, 0, np.array([[0.25]])))
    qtbot.waitUntil(lambda: "Autosave failed" in window.statusBar().currentMessage(), timeout=5000)
    assert "No space left on device" in window.statusBar().currentMessage()
    window.session.push(SetBlock("keys", 0, 0, 0, np.array([[0.5]])))  # the app keeps working
    wait_session(qtbot, window.session)
    assert window.session.head_view().keys[0, 0, 0] == 0.5


def test_a_capture_opens_whole_from_the_open_command(host, actions, qtbot, tmp_path) -> None:  # noqa: ANN001
    from attnviz.io import save_capture
    from attnviz.state.run import AttentionCall, MaskArguments, ModelRun

    rng = np.random.default_rng(0)
    calls = tuple(
        AttentionCall(
            f"layer.{i}",
            *(rng.standard_normal((1, 2, 4, 3)).astype(np.float32) for _ in range(3)),
            MaskArguments(is_causal=True),
            fidelity=1e-7,
        )
        for i in range(2)
    )
    path = tmp_path / "run.attnviz-capture"
    save_capture(
        path,
        ModelRun(calls, query_tokens=np.array([list("abcd")]), key_tokens=np.array([list("abcd")]), source="capture"),
    )
    assert open_now(actions, qtbot, path)
    state = host.session.document.state
    head = host.session.head_view()
    assert state.run.layers == 2 and head.causal == "top_left"
    assert head.tokens(0) == (list("abcd"), list("abcd"))
