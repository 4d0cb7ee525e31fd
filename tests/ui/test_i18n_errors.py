"""Refusals and engine errors reach a Portuguese user in Portuguese, and ``attnviz render`` speaks
the system's language; scripts keep exactly the English they had."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attnviz.io import (
    AttnvizFileError,
    SessionFileError,
    load_session,
    load_tensor_file,
    save_arrays,
)
from attnviz.io.errors import TensorFileError
from attnviz.io.roles import select_head
from attnviz.io.session_state import load_state_file
from attnviz.io.tensor_import import state_from_tensor_file
from attnviz.teaching.presets import PRESETS
from attnviz.text.tr import QT_TRANSLATE_NOOP, Message, Source, exception_message, message
from attnviz.ui.i18n import current_language, error_text, install_language, tr_text

from .test_i18n import TS, _messages, _untranslated

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def portuguese(qapp):
    assert install_language(qapp, "pt_BR"), "attnviz_pt_BR.qm could not be loaded"
    yield
    install_language(qapp, "en")  # the other tests expect English


def _bad_files(tmp_path: Path) -> dict[str, Path]:
    """One file per kind of refusal: damaged, unsafe, not what it claims, too large."""
    truncated = tmp_path / "truncated.npy"
    np.save(truncated, np.zeros((9, 9)))
    truncated.write_bytes(truncated.read_bytes()[:200])
    pickled = tmp_path / "pickled.npy"
    np.save(pickled, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    not_session = tmp_path / "tensors.attnviz"
    save_arrays(tmp_path / "tensors.npz", {"q": np.zeros((2, 3))})  # a valid .npz, but no session manifest
    (tmp_path / "tensors.npz").rename(not_session)
    huge = tmp_path / "huge.npy"  # the header promises 10^12 elements in a 100-byte file
    huge.write_bytes(
        b"\x93NUMPY\x01\x00"
        + b"v\x00"
        + b"{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, 1000000), }".ljust(117)
        + b"\n"
    )
    header = tmp_path / "header.safetensors"  # claims a 2^40-byte JSON header
    header.write_bytes((1 << 40).to_bytes(8, "little") + b"{}")
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"certainly not a pickle")
    return {
        "truncated": truncated,
        "pickled": pickled,
        "not_session": not_session,
        "huge": huge,
        "header": header,
        "garbage": garbage,
        "missing": tmp_path / "missing.npz",
    }


def _refusal(path: Path) -> AttnvizFileError:
    with pytest.raises(AttnvizFileError) as caught:
        if path.suffix == ".attnviz":
            load_session(path)
        else:
            load_tensor_file(path)
    return caught.value


def _english_words(source: str) -> set[str]:
    """Words of an English template (its fields left out) that its translation does not share
    (loanwords such as "array", "dtype", "Python" read the same in both)."""
    translation = _messages(TS)[(source.context, str(source))][0] if isinstance(source, Source) else ""
    words = set(re.findall(r"[A-Za-z]{4,}", re.sub(r"\{[^}]*\}", " ", str(source))))
    return {w for w in words if not re.search(rf"\b{w}\b", translation)}


# --------------------------------------------------------------------------- English stays as it was


def test_the_english_of_every_refusal_is_as_before(tmp_path: Path) -> None:
    files = _bad_files(tmp_path)
    expected = {
        "truncated": "truncated.npy: is truncated: its header promises 648 bytes of data but only 72 bytes follow",
        "pickled": "pickled.npy: holds Python objects (dtype object), which can only be loaded by running code "
        "from the file",
        "not_session": "tensors.attnviz: is not an attnviz session (no '__session__' member)",
        "huge": "huge.npy: holds 1,000,000,000,000 elements (4.0 TB), more than the 67,108,864 allowed",
        "header": "header.safetensors: is not a valid .safetensors file: it claims a 1,099,511,627,776-byte header "
        "(at most 100,000,000 allowed)",
        "missing": "missing.npz: does not exist",
    }
    for kind, text in expected.items():
        exc = _refusal(files[kind])
        assert str(exc) == text
        assert exc.reason == text.split(": ", 1)[1]
        # The reason is kept translatable, and so is the whole line (the exception's argument).
        assert isinstance(exc.reason, (Source, Message)), kind
        assert isinstance(exception_message(exc), Message) and exception_message(exc) == text


def test_the_english_of_loading_errors_and_engine_errors_is_as_before(tmp_path: Path) -> None:
    base = PRESETS["dot-toy"].build()
    tf = load_tensor_file(_saved(tmp_path / "qk.npz", {"q": np.zeros((3, 2, 4)), "v": np.zeros((2, 5, 3))}))
    with pytest.raises(TensorFileError) as caught:
        state_from_tensor_file(tf, {"queries": "q", "values": "v"}, None, base)
    assert str(caught.value) == (
        f"qk.npz: batch sizes disagree: queries (3, 2, 4), keys {base.head_view().keys.shape}, values (2, 5, 3) "
        "(keys kept from the current inputs)"
    )
    with pytest.raises(ValueError, match=r"^head 5 is out of range: the array has 2 heads on axis 1 \(valid: 0-1\)$"):
        select_head(np.zeros((1, 2, 3, 4)), 5)

    from attnviz.engine import AttentionInputError, attend

    with pytest.raises(AttentionInputError) as engine:
        attend(np.zeros((2, 3, 4)), np.zeros((2, 5, 4)), np.zeros((2, 5, 1)), np.array([1, 2, 3]))
    assert str(engine.value) == ("valid_lens must have shape (2,) or (2, 3), that is (batch, queries); got shape (3,)")
    with pytest.raises(AttentionInputError) as scoring:
        attend(np.zeros((1, 2, 3)), np.zeros((1, 2, 3)), np.zeros((1, 2, 3)), scoring="cosine")
    assert str(scoring.value) == (
        "unknown scoring function 'cosine': expected one of dot, scaled_dot, additive, bilinear, gaussian, summation"
    )


def test_multi_line_reasons_become_one_line_and_stay_translatable(portuguese) -> None:
    reason = message(QT_TRANSLATE_NOOP("FileErrors", "is damaged ({error})"), error="first\n   second\tthird")
    exc = AttnvizFileError("/some/where/x.pt", reason)
    assert str(exc) == "x.pt: is damaged (first second third)"
    assert isinstance(exc.reason, Message)
    assert error_text(exc) == "x.pt: está danificado (first second third)"
    # A plain str reason (from a caller outside attnviz) is squeezed as before, and shown as it is.
    plain = AttnvizFileError("y.npy", "  no\nluck ")
    assert str(plain) == "y.npy: no luck" and error_text(plain) == "y.npy: no luck"


def _saved(path: Path, arrays: dict[str, np.ndarray]) -> Path:
    save_arrays(path, arrays)
    return path


# --------------------------------------------------------------------------- Portuguese in the UI


def test_refusals_read_in_portuguese(portuguese, tmp_path: Path) -> None:
    for kind, path in _bad_files(tmp_path).items():
        exc = _refusal(path)
        shown = error_text(exc)
        reason = tr_text(exc.reason)
        assert shown == f"{path.name}: {reason}", kind
        assert shown != str(exc) and reason != exc.reason, (kind, shown)
        assert _untranslated([(kind, reason)]) == [], (kind, reason)
        template = exc.reason.source if isinstance(exc.reason, Message) else exc.reason
        leftover = {w for w in _english_words(template) if re.search(rf"\b{w}\b", reason)}
        assert leftover == set(), (kind, reason, leftover)


def test_loading_errors_notes_and_engine_errors_read_in_portuguese(portuguese, tmp_path: Path) -> None:
    base = PRESETS["dot-toy"].build()
    tf = load_tensor_file(_saved(tmp_path / "qk.npz", {"q": np.zeros((3, 2, 4)), "v": np.zeros((2, 5, 3))}))
    with pytest.raises(TensorFileError) as caught:
        state_from_tensor_file(tf, {"queries": "q", "values": "v"}, None, base)
    kept = base.head_view().keys.shape
    assert error_text(caught.value) == (
        f"qk.npz: os tamanhos de lote não batem: consultas (3, 2, 4), chaves {kept}, valores (2, 5, 3) "
        "(das entradas atuais: chaves)"
    )

    notes: list[str] = []
    tf = load_tensor_file(
        _saved(
            tmp_path / "three.npz",
            {"queries": np.zeros((1, 2, 3)), "keys": np.zeros((1, 4, 3)), "values": np.zeros((1, 4, 2))},
        )
    )
    state_from_tensor_file(tf, {"queries": "queries", "keys": "keys", "values": "values"}, None, base, notes=notes)
    assert [tr_text(n) for n in notes] == [
        "sem comprimentos válidos no arquivo: todas as chaves são válidas",
        "o arquivo não traz configurações de pontuação: pontuação por produto escalar escalonado, como usam os "
        "modelos reais",
    ]

    session = tmp_path / "s.attnviz"
    from attnviz.io import save_session
    from attnviz.io.session_state import state_to_session

    data = state_to_session(base)
    data.settings["scoring"] = "cosine"
    save_session(session, data)
    with pytest.raises(SessionFileError) as bad_setting:
        load_state_file(session)
    assert error_text(bad_setting.value).startswith("s.attnviz: a configuração 'scoring' é 'cosine'; esperava-se")

    from attnviz.engine import AttentionInputError, attend

    with pytest.raises(AttentionInputError) as engine:
        attend(np.zeros((2, 3, 4)), np.zeros((2, 5, 4)), np.zeros((2, 5, 1)), np.array([1.5, 2]))
    assert error_text(engine.value) == "os comprimentos válidos devem ser números inteiros; veio 1.5"


def test_the_scaling_lab_note_reads_in_portuguese(portuguese) -> None:
    from attnviz.compute.labs import run_scaling_lab
    from attnviz.state.document import Snapshot

    state = PRESETS["additive-toy"].build()  # d_q = 20, d_k = 2: no dot products to compare
    outcome = run_scaling_lab(Snapshot(0, state))
    assert outcome.point_note is not None and outcome.point_note.startswith("the scaling view compares")
    assert tr_text(outcome.point_note).startswith("o laboratório de escala compara produtos escalares")


def test_the_roles_dialog_says_why_a_choice_cannot_load_in_portuguese(portuguese, qtbot, tmp_path) -> None:
    from attnviz.ui.files.open_dialog import RolesDialog

    tf = load_tensor_file(
        _saved(
            tmp_path / "m.npz",
            {
                "q": np.zeros((1, 2, 3)),
                "k": np.zeros((1, 4, 3)),
                "v": np.zeros((1, 4, 2)),
                "pad": np.ones((1, 4), bool),
            },
        )
    )
    # A boolean mask chosen as valid lengths: refused, the reason in Portuguese.
    dialog = RolesDialog(
        tf, {"queries": "q", "keys": "k", "values": "v", "valid_lens": "pad"}, PRESETS["dot-toy"].build()
    )
    qtbot.addWidget(dialog)
    text = dialog.preview.text()
    assert "Não é possível carregar" in text or "não" in text.lower(), text
    assert "deve conter números inteiros (comprimentos válidos), não bool" in text, text
    assert "must hold" not in text


# --------------------------------------------------------------------------- the catalogue


def test_every_marked_string_is_a_literal_the_catalogue_holds_exactly() -> None:
    """lupdate reads the literals itself (implicit concatenation included); what Python builds at
    run time must be the same text, or the translation is silently never found."""
    catalogue = set(_messages(TS))
    problems = []
    for path in sorted((ROOT / "attnviz").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "QT_TRANSLATE_NOOP":
                where = f"{path.relative_to(ROOT)}:{node.lineno}"
                try:
                    key = tuple(ast.literal_eval(arg) for arg in node.args)
                except ValueError:
                    problems.append(f"{where}: not string literals")
                    continue
                if key not in catalogue:
                    problems.append(f"{where}: {key!r} is not in the catalogue")
    assert problems == []


# --------------------------------------------------------------------------- attnviz render


def _render(
    args: list[str], lang: str, cwd: Path, language: str | None = None, state_dir: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``attnviz render`` as a user runs it: its own process, no display, the given locale."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env.update(
        LANG=lang,
        LC_ALL=lang,
        LANGUAGE=lang.split(".")[0] if language is None else language,
        PYTHONPATH=str(ROOT) + os.pathsep + env.get("PYTHONPATH", ""),
    )
    if state_dir is not None:
        env["ATTNVIZ_STATE_DIR"] = str(state_dir)
    return subprocess.run(
        [sys.executable, "-m", "attnviz", "render", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_render_speaks_the_systems_language(tmp_path: Path) -> None:
    files = _bad_files(tmp_path)
    portuguese = _render(["--load", str(files["truncated"]), "--out", "x.png"], "pt_BR.UTF-8", tmp_path)
    assert portuguese.returncode == 1
    assert portuguese.stdout == ""
    assert portuguese.stderr.splitlines() == [
        (
            "attnviz render: truncated.npy: está truncado: seu cabeçalho promete 648 bytes de dados, mas só 72 bytes "
            "vêm depois dele"
        )
    ]
    english = _render(["--load", str(files["truncated"]), "--out", "x.png"], "C", tmp_path, language="")
    assert english.returncode == 1
    assert english.stderr.splitlines() == [
        "attnviz render: truncated.npy: is truncated: its header promises 648 bytes of data but only 72 bytes follow"
    ]
    # Usage errors: still exit status 2 and one line; argparse's own words stay English.
    usage = _render(["--preset", "dot-toy"], "pt_BR.UTF-8", tmp_path)
    assert usage.returncode == 2
    assert usage.stderr.splitlines() == ["attnviz render: --out FILE é obrigatório (veja attnviz render --help)"]
    assert "Traceback" not in portuguese.stderr + english.stderr + usage.stderr


@pytest.mark.slow
def test_render_prints_its_notes_in_the_systems_language_not_the_apps(tmp_path: Path) -> None:
    tensors = _saved(
        tmp_path / "qkv.npz",
        {"queries": np.zeros((1, 2, 3)), "keys": np.zeros((1, 4, 3)), "values": np.zeros((1, 4, 2))},
    )
    ok = _render(["--load", str(tensors), "--out", "w.png"], "pt_BR.UTF-8", tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert ok.stderr == ""
    assert ok.stdout.splitlines() == [
        "nota: sem comprimentos válidos no arquivo: todas as chaves são válidas",
        "nota: o arquivo não traz configurações de pontuação: pontuação por produto escalar escalonado, como usam os "
        "modelos reais",
        "gravado: w.png",
    ]
    # The app's saved choice does not apply: a script that sets LANG=C gets English.
    state = tmp_path / "state"
    state.mkdir()
    (state / "settings.ini").write_text("[General]\nlanguage=pt_BR\n")
    english = _render(["--load", str(tensors), "--out", "w.png"], "C", tmp_path, language="", state_dir=state)
    assert english.returncode == 0, english.stderr
    assert english.stdout.splitlines() == [
        "note: no valid lengths in the file: every key is valid",
        "note: the file brings no scoring settings: scaled dot-product scoring, as real models use",
        "wrote w.png",
    ]


def test_render_inside_the_app_leaves_the_apps_language_alone(portuguese, tmp_path, capsys, monkeypatch) -> None:
    from attnviz.cli.render import render_main
    from attnviz.ui import i18n

    # The system says English while the app is in Portuguese: render prints English...
    monkeypatch.setattr(i18n, "system_language", lambda locale=None: "en")
    assert render_main(["--load", str(tmp_path / "nope.npz"), "--out", str(tmp_path / "x.png")]) == 1
    assert capsys.readouterr().err == "attnviz render: nope.npz: does not exist\n"
    assert current_language() == "pt_BR"  # ...and puts the app's language back
    # The other way round.
    install_language(None, "en")
    monkeypatch.setattr(i18n, "system_language", lambda locale=None: "pt_BR")
    assert render_main(["--load", str(tmp_path / "nope.npz"), "--out", str(tmp_path / "x.png")]) == 1
    assert capsys.readouterr().err == "attnviz render: nope.npz: não existe\n"
    assert current_language() == "en"
