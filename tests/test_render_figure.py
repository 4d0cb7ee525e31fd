"""``attnviz render`` as a figure tool: colour ranges, dropout in training, a subtitle that
states every setting changed, print resolution, every preset and lesson (issue 36)."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pytest

from attnviz.cli.render import color_levels, render_main
from attnviz.state.document import SetSettings
from attnviz.teaching.lessons import ALL_PRESETS, LESSONS
from attnviz.teaching.presets import PRESETS


def _args(**given: object) -> argparse.Namespace:
    return argparse.Namespace(**{"color_range": None, "vmin": None, "vmax": None, **given})


def _state(**settings: object):  # noqa: ANN202
    state = PRESETS["dot-toy"].build()
    return SetSettings(settings).apply(state, (0, 0))[0] if settings else state


def test_color_levels_fixed_auto_shared_and_ends() -> None:
    maps = [np.array([[0.1, 0.14, 0.9]]), np.array([[0.11, 0.13, 0.2]])]
    masks = [np.array([[False, False, True]]), np.zeros((1, 3), bool)]  # 0.9 is masked: left out
    state = _state()
    assert color_levels(maps, masks, state, _args()) == [(0.0, 1.0)] * 2
    auto = color_levels(maps, masks, state, _args(color_range="auto"))
    np.testing.assert_allclose(auto, [(0.1, 0.14), (0.11, 0.2)])
    shared = color_levels(maps, masks, state, _args(color_range="shared"))
    np.testing.assert_allclose(shared, [(0.1, 0.2)] * 2)
    ends = color_levels(maps, masks, state, _args(color_range="auto", vmin=0.0, vmax=0.5))
    assert ends == [(0.0, 0.5)] * 2
    # Training with dropout p: a kept weight is scaled by 1/(1-p), the fixed range follows.
    trained = color_levels(maps, masks, _state(dropout=0.5, train=True), _args())
    assert trained == [(0.0, 2.0)] * 2


def _near_uniform_file(tmp_path: Path) -> Path:
    # A BERT-like head of weights near 1/8: on a fixed 0-1 scale every cell is the same dark.
    rng = np.random.default_rng(0)
    path = tmp_path / "flat.npz"
    q = rng.standard_normal((1, 8, 16)).astype(np.float32) * 0.3
    k = rng.standard_normal((1, 8, 16)).astype(np.float32) * 0.3
    np.savez(path, queries=q, keys=k, values=rng.standard_normal((1, 8, 4)).astype(np.float32))
    return path


def _cell_spread(path: Path, data: Path) -> float:
    """The spread of the cells' brightness in the PNG (0-255), read at a corner of each cell
    (its centre holds the value's label), where the same layout puts them."""
    from PySide6.QtGui import QImage

    from attnviz.cli.command_inputs import command_state
    from attnviz.cli.render import build_parser, figure_for
    from attnviz.compute.attention import run_state

    args = build_parser().parse_args(["--load", str(data), "--out", "x.png"])
    state, focus, source = command_state(args, [], file_head=None)
    view = run_state(state, 0, focus).view
    assert view is not None
    figure = figure_for(view, state, source=source, focus=focus, size=(500, 400))
    image = QImage(str(path))
    try:
        brightness = []
        for row in range(8):
            for col in range(8):
                point = figure.cell_point(0, row, col, 0.2, 0.2)
                brightness.append(image.pixelColor(point.x(), point.y()).lightness())
    finally:
        figure.close()
    return float(np.ptp(brightness))


def test_auto_colour_range_spreads_weights_near_one_eighth(qapp, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    data = _near_uniform_file(tmp_path)
    fixed, auto = tmp_path / "fixed.png", tmp_path / "auto.png"
    assert render_main(["--load", str(data), "--out", str(fixed), "--size", "500x400"]) == 0
    assert render_main(["--load", str(data), "--out", str(auto), "--size", "500x400", "--color-range", "auto"]) == 0
    capsys.readouterr()
    # Fixed 0-1: weights within a few hundredths of 1/8 are nearly one colour; auto spans the map.
    assert _cell_spread(fixed, data) < 40 < _cell_spread(auto, data)


def test_training_dropout_changes_the_weights_drawn(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    plain, dropped = tmp_path / "plain.npy", tmp_path / "dropped.npy"
    base = ["--preset", "additive-toy", "--dropout", "0.5"]
    assert render_main([*base, "--out", str(plain)]) == 0  # evaluation mode: dropout ignored
    assert render_main([*base, "--train", "--out", str(dropped)]) == 0
    capsys.readouterr()
    w, d = np.load(plain), np.load(dropped)
    kept = d != 0
    assert (w > 0).any() and (~kept & (w > 0)).any(), "p = 0.5 drops some weight"
    # Every kept weight is scaled by 1/(1-p) = 2 (float32: a few ulps).
    np.testing.assert_allclose(d[kept], 2 * w[kept], rtol=1e-6)


def test_subtitle_states_every_setting_changed(qapp) -> None:  # noqa: ANN001
    from attnviz.ui.files.export import figure_subtitle

    assert "window" not in figure_subtitle(_state())
    text = figure_subtitle(_state(window=4, dropout=0.1, train=True, scale=0.5))
    for part in ("sliding window 4", "dropout 0.1", "training mode on", "score multiplier 0.5"):
        assert part in text, text


@pytest.mark.parametrize("name", list(ALL_PRESETS))
def test_every_preset_and_lesson_renders(name: str, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    out = tmp_path / "w.npy"
    assert render_main(["--preset", name, "--out", str(out)]) == 0, capsys.readouterr().err
    assert np.load(out).ndim == 3
    assert f"wrote {out}" in capsys.readouterr().out


def test_the_lessons_are_among_the_presets() -> None:
    assert set(LESSONS) <= set(ALL_PRESETS) and set(PRESETS) <= set(ALL_PRESETS)


def test_a_lesson_draws_as_a_picture(qapp, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    out = tmp_path / "lesson.svg"
    assert render_main(["--preset", "pitfall-zero-length", "--out", str(out)]) == 0
    assert "pitfall-zero-length" in out.read_text(encoding="utf-8")
    capsys.readouterr()


def test_dpi_draws_more_pixels_and_says_the_resolution(qapp, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    from PySide6.QtGui import QImage

    out = tmp_path / "print.png"
    assert render_main(["--preset", "dot-toy", "--out", str(out), "--size", "500x500", "--dpi", "192"]) == 0
    capsys.readouterr()
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1000, 1000)
    assert round(image.dotsPerMeterX() * 0.0254) == 192


def test_old_scale_option_still_works_with_a_note(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    old, new = tmp_path / "old.npy", tmp_path / "new.npy"
    assert render_main(["--preset", "dot-toy", "--scale", "0.5", "--out", str(old)]) == 0
    assert "--scale is now --score-multiplier" in capsys.readouterr().out
    assert render_main(["--preset", "dot-toy", "--score-multiplier", "0.5", "--out", str(new)]) == 0
    assert "--scale" not in capsys.readouterr().out
    np.testing.assert_array_equal(np.load(old), np.load(new))


@pytest.mark.parametrize(
    "argv, line",
    [
        (["--vmin", "0.5", "--vmax", "0.2"], "--vmin 0.5 must be below --vmax 0.2"),
        (["--dpi", "0"], "--dpi 0: expected a whole number from 1 to 1200"),
        (["--color-range", "log"], "invalid choice: 'log'"),
    ],
)
def test_bad_range_options_are_one_line(argv: list[str], line: str, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    assert render_main(["--preset", "dot-toy", "--out", str(tmp_path / "x.png"), *argv]) == 2
    err = capsys.readouterr().err
    assert line in err and err.count("\n") == 1


def test_a_figure_is_freed_when_render_returns(qapp, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    # A process that renders again and again with no event loop (the sweep's opener: every call
    # of a capture in turn) kept each figure's maps alive, and with them the capture file they
    # view mapped: 170 MB more address space per render of a 158 MB capture, until it ran out.
    import gc

    from attnviz.ui.heatmap.widget import HeatmapWidget

    def alive() -> int:
        gc.collect()
        return sum(isinstance(o, HeatmapWidget) for o in gc.get_objects())

    before = alive()
    for n in range(2):
        assert render_main(["--preset", "dot-toy", "--out", str(tmp_path / f"{n}.png")]) == 0
    assert alive() == before
    capsys.readouterr()
