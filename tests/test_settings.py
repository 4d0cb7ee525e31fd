"""Every setting declared once (attnviz.state.settings): the document's Settings, the session reader,
undo texts and the command lines (render, code) all read the declarations."""

from __future__ import annotations

import math
from dataclasses import fields, replace
from pathlib import Path

import numpy as np
import pytest

from attnviz.cli.code import code_main
from attnviz.cli.command_inputs import add_setting_options, setting_changes
from attnviz.cli.render import build_parser, render_main
from attnviz.compute import run_state
from attnviz.io import SessionFileError
from attnviz.io.session_state import session_to_state, state_to_session
from attnviz.output.terminal import OneLineParser
from attnviz.state import catalog
from attnviz.state.document import CALL_SETTINGS, SetSettings, Settings
from attnviz.state.settings import (
    SETTINGS,
    Choice,
    DeviceName,
    Flag,
    Number,
    Whole,
    change_text,
    in_group,
    settings_problem,
)
from attnviz.teaching.presets import PRESETS

# ------------------------------------------------------------------------ the declarations


def test_the_documents_settings_are_the_declared_ones_with_their_defaults() -> None:
    of_call = [s.name for s in SETTINGS.values() if s.of_call]
    assert [f.name for f in fields(Settings)] == sorted(
        (s.name for s in SETTINGS.values() if not s.of_call), key=[f.name for f in fields(Settings)].index
    )
    assert {f.name for f in fields(Settings)} == {s.name for s in SETTINGS.values()} - set(of_call)
    defaults = Settings()
    for field in fields(Settings):
        setting = SETTINGS[field.name]
        assert getattr(defaults, field.name) == setting.default, field.name
        assert setting.problem(setting.default) is None, field.name
    assert CALL_SETTINGS == tuple(of_call) == ("causal", "scale")


def test_every_declaration_is_complete() -> None:
    for setting in SETTINGS.values():
        assert setting.undo_name, setting.name
        if setting.group:
            assert setting.label and setting.tooltip, setting.name
        assert setting.command_option is not None and setting.command_option.startswith("--"), setting.name


def test_the_choices_are_the_engines() -> None:
    # The declarations read the catalogue so that the GUI thread need not import torch; the
    # engine's registries must say the same.
    from attnviz.engine import CAUSAL_ALIGNMENTS, DTYPES, MASK_MODES, SCORINGS

    def choices(name: str) -> set[object]:
        setting = SETTINGS[name]
        assert isinstance(setting, Choice)
        return set(setting.choices())

    assert choices("scoring") == set(SCORINGS)
    assert choices("mask_mode") == set(MASK_MODES)
    assert choices("causal") == {None, *CAUSAL_ALIGNMENTS}
    assert choices("dtype") == set(DTYPES)


@pytest.mark.parametrize(
    ("name", "good", "bad"),
    [
        ("scoring", ["additive", "gaussian"], ["cosine", None, 1, ["additive"]]),
        ("causal", [None, "top_left", "bottom_right"], ["top", True]),
        ("num_hiddens", [1, 1024], [0, 1025, 2.0, True, "8"]),
        ("window", [0, 2**31 - 1], [-1, 2**31, False]),
        ("dropout", [0, 0.5, 1.0], [-0.1, 1.5, math.nan, True, "0.1"]),
        ("scale", [None, 0.125, 3], [0, -1, math.inf, "2"]),
        ("train", [True, False], [0, "yes", None]),
        ("device", ["cpu", "cuda:1"], ["", "  ", 0, None]),
    ],
)
def test_each_kind_of_setting_accepts_its_values_and_names_what_it_expects(name, good, bad) -> None:  # noqa: ANN001
    for value in good:
        assert settings_problem(name, value) is None, value
    for value in bad:
        problem = settings_problem(name, value)
        assert problem is not None and problem.startswith(f"setting '{name}' is {value!r}; expected "), value
    assert settings_problem("colormap", "magma") == "'colormap' is not a setting"


def test_kinds_and_panels() -> None:
    kinds = {name: type(SETTINGS[name]) for name in SETTINGS}
    assert kinds["device"] is DeviceName and kinds["dropout"] is Number and kinds["train"] is Flag
    assert kinds["window"] is Whole and kinds["mask_mode"] is Choice
    assert [s.name for s in in_group("long_masks")] == ["window", "sinks", "prefix", "chunk"]
    assert "allow_nonfinite" not in {s.name for s in in_group("attention")}


# ---------------------------------------------------------------------------- their rules


def test_undo_texts_name_the_settings_changed() -> None:
    assert change_text({"dropout": 0.1}) == "Change dropout"
    assert change_text({"num_hiddens": 3, "window": 4}) == "Change hidden size, sliding window"
    assert SetSettings({"mask_mode": "strict"}).text == "Change mask mode"
    assert SetSettings({"mask_mode": "strict"}, "Lesson").text == "Lesson"


def test_the_settings_declared_to_reset_the_parameters_do() -> None:
    state = PRESETS["additive-toy"].build()
    with_params = replace(state, params={"W_q": np.ones((8, 20)), "W_k": np.ones((8, 2)), "w_v": np.ones(8)})
    for name in SETTINGS:
        if name in ("causal", "scale"):
            continue
        value = {"scoring": "bilinear", "num_hiddens": 4, "param_seed": 3, "device": "cpu"}.get(name)
        setting = SETTINGS[name]
        if value is None:
            value = not setting.default if isinstance(setting, Flag) else setting.default
        after, _undo = SetSettings({name: value}).apply(with_params)
        assert (after.params == {}) == setting.resets_params, name


# -------------------------------------------------------------- a declaration changed here


@pytest.fixture
def narrow_window():
    """The sliding window declared again with another range, caption and name, as a new rule
    of the project would be: every reader of the declarations must follow."""
    before = SETTINGS["window"]
    SETTINGS.register(replace(before, high=50, label="&Narrow window", undo_name="narrow window"))
    yield SETTINGS["window"]
    SETTINGS.register(before)


def test_a_changed_declaration_is_what_the_session_reader_checks(narrow_window) -> None:  # noqa: ANN001
    session = state_to_session(PRESETS["dot-toy"].build())
    session.settings["window"] = 50
    assert session_to_state(session).settings.window == 50
    session.settings["window"] = 60
    with pytest.raises(SessionFileError, match="setting 'window' is 60; expected a whole number from 0 to 50"):
        session_to_state(session, source="narrow.attnviz")


def test_a_changed_declaration_names_the_undo_text(narrow_window) -> None:  # noqa: ANN001
    assert SetSettings({"window": 4}).text == "Change narrow window"


def test_a_changed_declaration_is_what_render_and_code_check(narrow_window, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    out = tmp_path / "w.npy"
    assert render_main(["--preset", "dot-toy", "--window", "60", "--out", str(out)]) == 2
    assert capsys.readouterr().err == "attnviz render: --window 60: expected a whole number from 0 to 50\n"
    assert not out.exists()
    assert code_main(["--preset", "dot-toy", "--window", "51"]) == 2
    assert capsys.readouterr().err == "attnviz code: --window 51: expected a whole number from 0 to 50\n"


def test_a_choice_registered_in_the_catalogue_is_one_everywhere() -> None:
    info = catalog.ScoringInfo("cosine_settings_test", "Cosine (test)", r"a = \cos")
    catalog.SCORINGS.register(info)
    try:
        assert settings_problem("scoring", "cosine_settings_test") is None
        session = state_to_session(PRESETS["dot-toy"].build())
        session.settings["scoring"] = "cosine_settings_test"
        assert session_to_state(session).settings.scoring == "cosine_settings_test"
        args = build_parser().parse_args(["--preset", "dot-toy", "--out", "x.png", "--scoring", "cosine_settings_test"])
        assert setting_changes(args) == {"scoring": "cosine_settings_test"}
    finally:
        catalog.SCORINGS.unregister("cosine_settings_test")
    assert settings_problem("scoring", "cosine_settings_test") is not None


# ------------------------------------------------------------------------- the command line


def parsed(*argv: str) -> dict[str, object]:
    parser = OneLineParser(prog="test")
    add_setting_options(parser)
    return setting_changes(parser.parse_args(list(argv)))


def test_every_setting_has_an_option_read_as_its_kind() -> None:
    assert parsed() == {}
    assert parsed(
        "--scoring", "dot", "--causal", "off", "--hidden-size", "3", "--dropout", "0.25", "--train", "--scale", "0.5"
    ) == {"scoring": "dot", "causal": None, "num_hiddens": 3, "dropout": 0.25, "train": True, "scale": 0.5}
    assert parsed("--no-train", "--allow-nonfinite", "--device", "cuda:1") == {
        "train": False,
        "allow_nonfinite": True,
        "device": "cuda:1",
    }


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["--dropout", "1.5"], "--dropout 1.5: expected a number from 0 to 1"),
        (["--dropout", "nan"], "--dropout nan: expected a number from 0 to 1"),
        (["--score-multiplier", "0"], "--score-multiplier 0.0: expected a number above 0"),
        (["--scale", "0"], "--score-multiplier 0.0: expected a number above 0"),  # its old name
        (["--hidden-size", "0"], "--hidden-size 0: expected a whole number from 1 to 1024"),
        (["--sinks", "-2"], "--sinks -2: expected a whole number from 0 to 2147483647"),
        (["--device", " "], "--device ' ': expected a device name such as \"cpu\""),
    ],
)
def test_render_refuses_a_setting_out_of_its_rules_in_one_line(argv, line, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    out = tmp_path / "w.npy"
    assert render_main(["--preset", "dot-toy", "--out", str(out), *argv]) == 2
    assert capsys.readouterr().err == f"attnviz render: {line}\n"
    assert not out.exists()


def test_render_computes_with_the_settings_given(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    out = tmp_path / "w.npy"
    argv = ["--preset", "masked-softmax-2d", "--out", str(out), "--window", "2", "--causal", "top_left"]
    assert render_main([*argv, "--mask-mode", "strict"]) == 0, capsys.readouterr().err
    state = PRESETS["masked-softmax-2d"].build()
    expected = SetSettings({"window": 2, "causal": "top_left", "mask_mode": "strict"}).apply(state)[0]
    view = run_state(expected).view
    assert view is not None
    np.testing.assert_array_equal(np.load(out), view.weights)
    plain = run_state(state).view
    assert plain is not None and not np.array_equal(plain.weights, view.weights)  # the options did something


def test_code_writes_the_script_of_the_settings_given(capsys) -> None:  # noqa: ANN001
    from attnviz.snippets import make_snippet

    assert code_main(["--preset", "dot-toy", "--scoring", "dot"]) == 0
    out = capsys.readouterr().out
    state = SetSettings({"scoring": "dot"}).apply(PRESETS["dot-toy"].build())[0]
    assert out == make_snippet(state, "pytorch").code != make_snippet(PRESETS["dot-toy"].build(), "pytorch").code
