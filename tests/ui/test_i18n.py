"""English and Brazilian Portuguese: the catalogue is complete and current, the Portuguese UI shows
no English, and switching language keeps the document and its undo history."""

from __future__ import annotations

import html
import os
import re
import shutil
import string
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QLocale, QTranslator
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QComboBox,
    QDockWidget,
    QGroupBox,
    QLabel,
    QMenu,
    QTabWidget,
    QWidget,
)

from attnviz.text.tr import QT_TRANSLATE_NOOP, Message, message, plural
from attnviz.ui.i18n import (
    current_language,
    install_language,
    qm_path,
    saved_language,
    system_language,
    tr_text,
    translate,
)

from .conftest import wait_current

ROOT = Path(__file__).resolve().parents[2]
TS = ROOT / "resources" / "translations" / "attnviz_pt_BR.ts"
QM = ROOT / "resources" / "translations" / "attnviz_pt_BR.qm"
#: The commands of attnviz/i18n.py's docstring, without the file arguments.
LUPDATE_ARGS = ["-silent", "-extensions", "py", "-locations", "none", "-no-obsolete"]


def _tool(name: str) -> str | None:
    """A Qt tool from the interpreter's environment (the venv's bin), else from PATH."""
    here = Path(sys.executable).parent / name
    return str(here) if here.exists() else shutil.which(name)


def _messages(path: Path) -> dict[tuple[str, str], tuple[str, str | None]]:
    """(context, source) -> (translation, its type attribute) of a .ts file."""
    out = {}
    for context in ET.parse(path).getroot().iter("context"):
        name = context.findtext("name") or ""
        for msg in context.iter("message"):
            tr = msg.find("translation")
            assert tr is not None
            out[(name, msg.findtext("source") or "")] = (tr.text or "", tr.get("type"))
    return out


def _accelerators(text: str) -> int:
    """How many '&' mark a shortcut letter (not an HTML entity such as &gt;)."""
    return len(re.findall(r"&(?!amp;|gt;|lt;|nbsp;|#)", text))


def _fields(text: str) -> list[str]:
    return sorted({f for _, f, _, _ in string.Formatter().parse(text) if f is not None})


def _norm_literal(text: str) -> str:
    """``_norm`` for a piece of a template: the spaces at its ends belong to the sentence."""
    text = html.unescape(re.sub(r"<[^>]+>", " ", text)).replace("&", "")
    return re.sub(r"\s+", " ", text)


def _norm(text: str) -> str:
    """What a reader sees: no accelerator marks, tags or entities, one space between words."""
    text = re.sub(r"<[^>]+>", " ", text)
    text = html.unescape(text).replace("&", "")
    return " ".join(text.split())


@pytest.fixture
def portuguese(qapp):
    assert install_language(qapp, "pt_BR"), "attnviz_pt_BR.qm could not be loaded"
    yield
    install_language(qapp, "en")  # the other tests expect English


# --------------------------------------------------------------------------- the catalogue


def test_every_message_is_translated_with_the_same_fields_and_accelerators():
    messages = _messages(TS)
    assert len(messages) > 500  # the UI, the presets, the lessons and the engine's sentences
    problems = []
    for (context, source), (translation, kind) in messages.items():
        if kind is not None or not translation:
            problems.append(f"{context}: {source!r} is {kind or 'empty'}")
        elif _fields(source) != _fields(translation):
            # str.format would raise on the translation (tr_text then falls back to the English).
            problems.append(
                f"{context}: {source!r} has fields {_fields(source)}, the translation {_fields(translation)}"
            )
        elif _accelerators(source) != _accelerators(translation):
            problems.append(f"{context}: {source!r} and {translation!r} differ in '&' accelerators")
    assert problems == []


def test_lupdate_finds_no_string_missing_from_the_committed_catalogue(tmp_path):
    lupdate = _tool("pyside6-lupdate")
    if lupdate is None:
        pytest.skip("pyside6-lupdate is not installed (it comes with PySide6-Essentials)")
    fresh = tmp_path / "attnviz_pt_BR.ts"
    subprocess.run(
        [lupdate, *LUPDATE_ARGS, "attnviz", "-ts", str(fresh)], cwd=ROOT, check=True, capture_output=True, timeout=120
    )
    found = set(_messages(fresh))
    committed = _messages(TS)
    missing = sorted(found - set(committed))
    unfinished = sorted(key for key in found & set(committed) if committed[key][1] is not None or not committed[key][0])
    vanished = sorted(set(committed) - found)
    assert len(found) > 500
    assert missing == [], f"new strings: run the commands in attnviz/i18n.py and translate them: {missing}"
    assert unfinished == []
    assert vanished == [], f"strings no longer in the code: run lupdate with -no-obsolete: {vanished}"


def test_the_committed_qm_is_the_compiled_ts(qapp, tmp_path):
    translator = QTranslator()
    assert translator.load(str(QM))
    stale = [
        (context, source)
        for (context, source), (translation, _kind) in _messages(TS).items()
        if translator.translate(context, source) != translation
    ]
    assert stale == [], "resources/translations/attnviz_pt_BR.qm is older than the .ts: run pyside6-lrelease"
    lrelease = _tool("pyside6-lrelease")
    if lrelease is not None:
        subprocess.run(
            [lrelease, "-silent", str(TS), "-qm", str(tmp_path / "fresh.qm")],
            check=True,
            capture_output=True,
            timeout=120,
        )
        assert (tmp_path / "fresh.qm").read_bytes() == QM.read_bytes()
    assert qm_path("pt_BR") is not None and Path(qm_path("pt_BR")).samefile(QM)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- text from non-Qt modules


def test_messages_are_english_strings_that_translate_with_their_numbers(portuguese):
    rows = plural(
        3, QT_TRANSLATE_NOOP("Diagnostics", "{n} query row"), QT_TRANSLATE_NOOP("Diagnostics", "{n} query rows")
    )
    warning = message(
        QT_TRANSLATE_NOOP("Diagnostics", "{rows} with no valid key: zero weights and zero output"), rows=rows
    )
    assert warning == "3 query rows with no valid key: zero weights and zero output"
    assert isinstance(warning, str) and isinstance(warning, Message)
    assert tr_text(warning) == "3 linhas de consulta sem chave válida: pesos zero e saída zero"
    assert tr_text("plain English from elsewhere") == "plain English from elsewhere"
    import copy
    import pickle

    for clone in (pickle.loads(pickle.dumps(warning)), copy.deepcopy(warning)):
        assert clone == warning and tr_text(clone) == tr_text(warning)


def test_engine_warnings_and_lab_sentences_are_shown_in_portuguese(portuguese):
    from attnviz.compute.attention import run_state
    from attnviz.engine.lab import compare_conventions
    from attnviz.teaching.lessons import LESSONS

    state = LESSONS["pitfall-zero-length"].preset.build()
    view = run_state(state).view
    assert view is not None and view.warnings
    assert view.warnings[0].startswith("2 query rows with no valid key")  # scripts keep the English
    assert tr_text(view.warnings[0]).startswith("2 linhas de consulta sem chave válida")
    import torch

    report = compare_conventions(
        torch.from_numpy(state.head_view().queries),
        torch.from_numpy(state.head_view().keys),
        torch.from_numpy(state.head_view().values),
        torch.from_numpy(state.lens_1d),
    )
    sentences = report.sentences()
    assert sentences and all(tr_text(s) != s for s in sentences)
    assert any("sem chave válida" in tr_text(s) for s in sentences), [tr_text(s) for s in sentences]


# --------------------------------------------------------------------------- the Portuguese window


def _visible_texts(window: QWidget) -> list[tuple[str, str]]:
    """(where, text) for everything a user can read in a window (a main window's menus and docks
    included), and every tooltip."""
    texts: list[tuple[str, str]] = [("window title", window.windowTitle().replace("[*]", ""))]

    def add(where: str, text: str | None) -> None:
        if text:
            texts.append((where, text))

    for widget in window.findChildren(QWidget):
        name = f"{type(widget).__name__} {widget.objectName()}".strip()
        add(f"tooltip of {name}", widget.toolTip())
        if not widget.isVisible():
            continue
        if isinstance(widget, QLabel):
            add(name, widget.text())
        elif isinstance(widget, QAbstractButton):
            add(name, widget.text())
        elif isinstance(widget, QGroupBox):
            add(name, widget.title())
        elif isinstance(widget, QDockWidget):
            add(name, widget.windowTitle())
        if isinstance(widget, QTabWidget):
            for i in range(widget.count()):
                add(f"tab of {name}", widget.tabText(i))
                add(f"tab tooltip of {name}", widget.tabToolTip(i))
        if isinstance(widget, QComboBox):
            for i in range(widget.count()):
                add(f"item of {name}", widget.itemText(i))
        heatmap = getattr(widget, "plot_item", None)
        if heatmap is not None:
            add(f"title of {name}", heatmap.titleLabel.text)
            for side in ("left", "bottom"):
                add(f"axis of {name}", heatmap.getAxis(side).labelText)
    scaling_dock = getattr(window, "scaling_lab_dock", None)
    for plot in getattr(scaling_dock.view(), "plots", {}).values() if scaling_dock is not None else ():
        add("scaling lab plot", plot.titleLabel.text)
        for side in ("left", "bottom"):
            add("scaling lab axis", plot.getAxis(side).labelText)

    def walk(menu: QMenu) -> None:
        add("menu", menu.title())
        menu.aboutToShow.emit()  # menus that fill themselves when opened (Open Recent)
        for action in menu.actions():
            if action.menu() is not None:
                walk(action.menu())
            elif not action.isSeparator():
                add(f"action in {menu.title()}", action.text())
                if action.toolTip() != action.text().replace("&", ""):
                    add(f"tooltip of action {action.text()}", action.toolTip())
                add(f"status tip of action {action.text()}", action.statusTip())

    menu_bar = getattr(window, "menuBar", None)
    for action in menu_bar().actions() if menu_bar is not None else ():
        if action.menu() is not None:
            walk(action.menu())
    return texts


def _english_sources() -> tuple[dict[str, str], list[tuple[re.Pattern[str], str]]]:
    """Normalised English sources whose translation differs, and regexes for the templates among
    them (so a formatted message left in English is found too)."""
    plain: dict[str, str] = {}
    patterns: list[tuple[re.Pattern[str], str]] = []
    for (context, source), (translation, _kind) in _messages(TS).items():
        if _norm(source) == _norm(translation):
            continue  # the same in both languages (names, formulas)
        plain[_norm(source)] = f"{context}: {source!r}"
        parts = [p for p in string.Formatter().parse(source)]
        if any(field is not None for _, field, _, _ in parts):
            regex = "".join(
                re.escape(_norm_literal(literal)) + ("(.+?)" if field is not None else "")
                for literal, field, _, _ in parts
            )
            patterns.append((re.compile(regex), f"{context}: {source!r}"))
    return plain, patterns


def _untranslated(texts: list[tuple[str, str]]) -> list[str]:
    """The texts (or lines of them) that are an English source, or an English template filled in."""
    plain, patterns = _english_sources()
    offenders = []
    for where, text in texts:
        for line in [text, *text.splitlines()]:
            seen = _norm(line)
            if seen in plain:
                offenders.append(f"{where}: {seen!r} (source {plain[seen]})")
                break
            match = next((origin for pattern, origin in patterns if pattern.fullmatch(seen)), None)
            if match is not None:
                offenders.append(f"{where}: {seen!r} (template {match})")
                break
    return offenders


def test_the_portuguese_window_shows_no_english(portuguese, qtbot):
    from attnviz.ui.window.main_window import MainWindow

    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    wait_current(qtbot, win)
    win.lessons.load("pitfall-zero-length")  # a lesson, a warning above the maps, an empty row
    win.lessons.view.answer_button.setChecked(True)
    wait_current(qtbot, win)
    docks = [win.pipeline_dock, win.compare_dock, win.masking_lab_dock, win.scaling_lab_dock]
    for dock in docks:
        dock.setFloating(True)  # all visible at once
        dock.show()
    labs = [win.masking_lab_dock.view(), win.scaling_lab_dock.view(), win.compare_dock.view()]
    qtbot.waitUntil(
        lambda: (
            all(getattr(v, "shown_version", -1) == win.session.document.version for v in labs[:2])
            and win.compare_dock.view().shown_doc_version == win.session.document.version
        ),
        timeout=60000,
    )
    qtbot.waitUntil(lambda: not any(v.busy for v in labs), timeout=60000)

    texts = _visible_texts(win)
    assert len(texts) > 300
    offenders = _untranslated(texts)
    assert offenders == [], "untranslated:\n" + "\n".join(offenders)
    # Within a menu, no two entries share a shortcut letter (Alt+letter must pick one).
    clashes = []

    def letters(menu: QMenu) -> None:
        seen: dict[str, str] = {}
        for action in menu.actions():
            text = action.menu().title() if action.menu() is not None else action.text()
            found = re.search(r"&([^&])", text)
            if found:
                key = found.group(1).lower()
                if key in seen:
                    clashes.append(f"{menu.title()}: {seen[key]!r} and {text!r}")
                seen[key] = text
            if action.menu() is not None:
                letters(action.menu())

    for action in win.menuBar().actions():
        letters(action.menu())
    assert clashes == []
    # And it is Portuguese, not merely not English.
    assert win.menu("file").title() == "&Arquivo" and win.results.title.text() == "Pesos de atenção"
    assert "sem chave válida" in win.results.warnings.text()


def test_the_open_dialog_speaks_portuguese_and_so_do_qts_own_buttons(portuguese, qtbot, tmp_path):
    from PySide6.QtWidgets import QDialogButtonBox

    from attnviz.io import guess_roles, load_tensor_file, save_arrays
    from attnviz.teaching.presets import PRESETS
    from attnviz.ui.files.open_dialog import RolesDialog

    path = tmp_path / "mixed.npz"
    save_arrays(
        path,
        {
            "attn.q": np.zeros((2, 4, 3, 8), np.float32),
            "attn.k": np.zeros((2, 4, 6, 8), np.float32),
            "layer0_value": np.zeros((2, 4, 6, 5), np.float32),
            "lengths": np.array([6, 4]),
        },
    )
    tf = load_tensor_file(path)
    dialog = RolesDialog(tf, guess_roles(tf), PRESETS["dot-toy"].build())
    qtbot.addWidget(dialog)
    dialog.combos["values"].setCurrentIndex(dialog.combos["values"].findData("layer0_value"))
    dialog.show()
    assert _untranslated(_visible_texts(dialog)) == []
    assert dialog.windowTitle() == "Abrir mixed.npz" and "Carrega como" in dialog.preview.text()
    # Qt's own catalogue (qtbase_pt_BR.qm) translates the standard buttons.
    assert dialog.buttons.button(QDialogButtonBox.StandardButton.Cancel).text().replace("&", "") == "Cancelar"


def test_qts_file_dialog_speaks_portuguese_too(portuguese, qtbot):
    """Qt's own catalogue lacks two labels Qt 6.11 renamed ("&Look in:"); ours supplies them."""
    from PySide6.QtWidgets import QFileDialog

    for mode in (QFileDialog.AcceptMode.AcceptOpen, QFileDialog.AcceptMode.AcceptSave):
        dialog = QFileDialog()
        qtbot.addWidget(dialog)
        dialog.setOption(QFileDialog.Option.DontUseNativeDialog, True)
        dialog.setAcceptMode(mode)
        texts = [label.text() for label in dialog.findChildren(QLabel)]
        texts += [button.text() for button in dialog.findChildren(QAbstractButton) if button.text()]
        assert texts and not [
            text
            for text in texts
            if text.replace("&", "") in {"Look in:", "Files of type:", "File name:", "Open", "Save", "Cancel"}
        ], texts


# --------------------------------------------------------------------------- switching


def test_switching_language_keeps_the_document_the_undo_history_and_the_autosave(window, qtbot, qapp, tmp_path):
    try:
        window.session.load_preset("masked-softmax-2d")
        window.edits.on_settings({"dropout": 0.25})  # what the dropout spin box does
        wait_current(qtbot, window)
        state_before = window.session.document.state.copy()
        version, depth = window.session.document.version, window.session.undo_stack.count()
        window.file_actions.autosave_now()
        window.session.set_batch(1)
        assert window.menu("file").title() == "&File"
        window.file_actions.save_as(str(tmp_path / "switch.attnviz"))
        assert not window.isWindowModified()

        window.set_language("pt_BR")  # the same window, retranslated in place
        assert current_language() == "pt_BR" and saved_language() == "pt_BR"
        assert window.isVisible() and window.session.document.version == version  # nothing was edited
        assert window.session.undo_stack.count() == depth and not window.isWindowModified()
        assert window.windowTitle().startswith("switch.attnviz")
        assert window.file_actions.autosave.writer.slot.path.exists()
        assert window.menu("file").title() == "&Arquivo" and window.results.title.text() == "Pesos de atenção"
        assert window.inputs.batch.value() == 1 and window.session.selection.batch == 1
        assert window.undo_action.text() == "&Desfazer Alterar dropout"  # the old edit, retold in Portuguese
        np.testing.assert_array_equal(window.session.head_view().queries, state_before.head_view().queries)

        window.session.undo_stack.undo()  # the dropout change, made in English, undoes in Portuguese
        assert window.session.document.state.settings.dropout == 0.0
        window.session.undo_stack.undo()  # and the preset before it
        assert window.session.head_view().queries.shape != state_before.head_view().queries.shape
        window.session.undo_stack.redo()
        np.testing.assert_array_equal(window.session.head_view().queries, state_before.head_view().queries)
        assert "Carregar a predefinição" in window.session.undo_stack.undoText()
        wait_current(qtbot, window)

        # An edit in Portuguese, then back to English.
        window.edits.on_settings({"dropout": 0.5})
        assert window.session.undo_stack.undoText() == "Alterar dropout"
        window.set_language("en")
        assert window.menu("file").title() == "&File"
        assert window.session.undo_stack.undoText() == "Change dropout"
        window.session.undo_stack.undo()
        assert window.session.document.state.settings.dropout == 0.0
        wait_current(qtbot, window)
    finally:
        install_language(qapp, "en")


def _live_counts(window) -> dict[str, int]:
    from attnviz.state import catalog
    from attnviz.ui.window.main_window import MainWindow

    session = window.session
    return {
        "document listeners": len(session.document._listeners),
        "scoring catalogue listeners": catalog.SCORINGS.listener_count,
        "main windows": sum(isinstance(w, MainWindow) for w in QApplication.topLevelWidgets()),
        "documentChanged receivers": session.receivers("2documentChanged(PyObject)"),
        "outcomeShown receivers": session.receivers("2outcomeShown(PyObject)"),
        "languageChanged receivers": session.receivers("2languageChanged()"),
    }


def test_ten_language_switches_keep_listeners_windows_document_docks_and_selection(window, qtbot, qapp):
    try:
        window.session.load_preset("masked-softmax-2d")
        for dock in (window.pipeline_dock, window.masking_lab_dock, window.compare_dock):
            dock.show()  # built, and listening
        window.session.set_batch(1)
        wait_current(qtbot, window)
        before = _live_counts(window)
        assert before["document listeners"] == 1 and before["main windows"] == 1
        state, version, depth = (
            window.session.document.state,
            window.session.document.version,
            window.session.undo_stack.count(),
        )
        docks = {
            d.objectName(): d.isVisible()
            for d in (window.pipeline_dock, window.masking_lab_dock, window.compare_dock, window.scaling_lab_dock)
        }
        for i in range(10):
            window.set_language("pt_BR" if i % 2 == 0 else "en")
            assert window.menu("file").title() == ("&Arquivo" if i % 2 == 0 else "&File")
        assert _live_counts(window) == before
        assert window.session.document.state is state and window.session.document.version == version
        assert window.session.undo_stack.count() == depth
        assert {d: window.dock(d).isVisible() for d in docks} == docks
        assert window.session.selection.batch == 1 and window.inputs.batch.value() == 1
        assert window.pipeline_dock.view().batch == 1
    finally:
        install_language(qapp, "en")


def test_switching_to_portuguese_in_place_leaves_no_english(qtbot, qapp):
    """Built in English, every dock open, then switched: every text retranslates itself."""
    from attnviz.ui.window.main_window import MainWindow

    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    wait_current(qtbot, win)
    try:
        win.lessons.load("pitfall-zero-length")
        win.lessons.view.answer_button.setChecked(True)
        wait_current(qtbot, win)
        docks = [win.pipeline_dock, win.compare_dock, win.masking_lab_dock, win.scaling_lab_dock]
        for dock in docks:
            dock.setFloating(True)
            dock.show()
        labs = [win.masking_lab_dock.view(), win.scaling_lab_dock.view(), win.compare_dock.view()]
        qtbot.waitUntil(
            lambda: (
                not any(v.busy for v in labs)
                and labs[0].outcome is not None
                and labs[1].outcome is not None
                and labs[2].last_result is not None
            ),
            timeout=60000,
        )
        win.set_language("pt_BR")
        offenders = _untranslated(_visible_texts(win))
        assert offenders == [], "untranslated after switching:\n" + "\n".join(offenders)
    finally:
        install_language(qapp, "en")


# --------------------------------------------------------------------------- the default


def test_english_unless_the_system_is_portuguese():
    assert system_language(QLocale("de_DE")) == "en"
    assert system_language(QLocale("en_US")) == "en"
    assert system_language(QLocale("pt_BR")) == "pt_BR"
    assert system_language(QLocale("pt_PT")) == "pt_BR"  # the only Portuguese there is


@pytest.mark.parametrize(
    ("lang", "saved", "expected"),
    [
        ("de_DE.UTF-8", None, ("en", "&File")),
        ("pt_BR.UTF-8", None, ("pt_BR", "&Arquivo")),
        ("pt_BR.UTF-8", "en", ("en", "&File")),
        ("C", "pt_BR", ("pt_BR", "&Arquivo")),
    ],
)
def test_the_app_starts_in_the_saved_language_else_the_systems(tmp_path, lang, saved, expected):
    code = (
        "import sys\n"
        "from PySide6.QtWidgets import QApplication\n"
        "from attnviz.ui.i18n import save_language, startup_language, translate\n"
        "app = QApplication([])\n"
        f"if {saved!r}: save_language({saved!r})\n"
        "print(startup_language(app), translate('MainWindow', '&File'))\n"
    )
    env = {
        **os.environ,
        "LANG": lang,
        "LC_ALL": lang,
        "LANGUAGE": "",
        "ATTNVIZ_STATE_DIR": str(tmp_path),
        "QT_QPA_PLATFORM": "offscreen",
        "PYTHONPATH": str(ROOT),
    }
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert tuple(out.stdout.split()) == expected


def test_a_missing_catalogue_leaves_english(qapp):
    assert not install_language(qapp, "xx")
    assert current_language() == "en" and translate("MainWindow", "&File") == "&File"


def test_engine_errors_are_shown_in_portuguese(portuguese):
    from dataclasses import replace

    from attnviz.compute.attention import run_state
    from attnviz.teaching.presets import PRESETS

    state = PRESETS["additive-toy"].build()  # d_q = 20, d_k = 2
    state.settings = replace(state.settings, scoring="scaled_dot")
    outcome = run_state(state)
    assert outcome.error.startswith("Scaled dot product scoring needs")  # scripts keep the English
    assert tr_text(outcome.error) == (
        "a pontuação Produto escalar escalonado exige consultas e chaves do mesmo comprimento: "
        "d_q = 20, d_k = 2 (as pontuações aditiva e bilinear aceitam comprimentos diferentes)"
    )
    state = PRESETS["dot-toy"].build()
    values = np.array(state.head_view().values)
    values[0, 3, 1] = float("nan")
    state = state.with_head((0, 0), "values", values)
    assert tr_text(run_state(state).error) == "NaN em valores, no índice (0, 3, 1)"


def test_undo_texts_of_undescribed_edits_are_translated(portuguese):
    """Edits made without a description fall back to marked defaults, never to English; a change
    of settings is named by the settings' declarations."""
    from attnviz.state.document import Edit, ReplaceState, SetSettings
    from attnviz.teaching.presets import PRESETS
    from attnviz.ui.app.undo import command_text

    texts = [
        command_text(ReplaceState(PRESETS["dot-toy"].build())),
        command_text(SetSettings({"dropout": 0.1})),
        command_text(SetSettings({})),
        command_text(Edit()),
    ]
    assert texts == ["Alterar", "Alterar dropout", "Alterar configuração", "Editar"]
