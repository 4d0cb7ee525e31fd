"""A session written without the window, from the command line and from Python, opens as the
window would have saved it (issue 36)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import attnviz
from attnviz.cli.render import render_main
from attnviz.io.session_state import load_state_and_focus


def test_render_writes_a_session_that_renders_as_the_preset_did(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    session, direct, loaded = tmp_path / "work.attnviz", tmp_path / "direct.npy", tmp_path / "loaded.npy"
    settings = ["--mask-mode", "strict", "--window", "3"]
    assert render_main(["--preset", "dot-toy", *settings, "--save-session", str(session)]) == 0
    assert f"wrote {session}" in capsys.readouterr().out
    assert render_main(["--preset", "dot-toy", *settings, "--out", str(direct)]) == 0
    assert render_main(["--load", str(session), "--out", str(loaded)]) == 0
    capsys.readouterr()
    state, _focus = load_state_and_focus(session)
    assert state.settings.mask_mode == "strict" and state.settings.window == 3
    # The same inputs and settings, computed the same way twice: equal to float32 rounding.
    np.testing.assert_allclose(np.load(loaded), np.load(direct), rtol=0, atol=1e-7)


def test_render_saves_the_session_beside_a_picture(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    session, out = tmp_path / "lesson.attnviz", tmp_path / "w.npy"
    assert render_main(["--preset", "pitfall-zero-length", "--save-session", str(session), "--out", str(out)]) == 0
    assert "the session is in" in capsys.readouterr().out
    assert session.is_file() and out.is_file()


def test_python_save_session_from_tensors_with_settings(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((2, 5, 4)).astype(np.float32) for _ in range(3))
    path = attnviz.save_session(tmp_path / "t.attnviz", q, k, v, tokens=list("abcde"), mask_mode="strict", window=2)
    state, _focus = load_state_and_focus(path)
    head = state.head_view()
    np.testing.assert_array_equal(head.queries, q)
    assert state.settings.mask_mode == "strict" and state.settings.window == 2
    assert list(head.tokens(0)[0]) == list("abcde")


def test_python_save_session_from_a_preset_and_its_refusals(tmp_path: Path) -> None:
    path = attnviz.save_session(tmp_path / "p.attnviz", preset="masked-softmax-2d")
    state, _ = load_state_and_focus(path)
    assert state.settings.lens_mode == "2d"
    with pytest.raises(ValueError, match="unknown preset 'nope'"):
        attnviz.save_session(tmp_path / "x.attnviz", preset="nope")
    with pytest.raises(TypeError, match="q, k, v tensors"):
        attnviz.save_session(tmp_path / "x.attnviz", np.ones(3))
