"""``attnviz render``: images of the weights, without a window; one stderr line per failure."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from attnviz.cli.render import figure_for, render_main
from attnviz.compute.attention import run_state
from attnviz.io import save_arrays
from attnviz.io.session_state import save_state_file
from attnviz.teaching.lessons import ALL_PRESETS
from attnviz.teaching.presets import PRESETS

ROOT = Path(__file__).parents[1]


def rgb(image, x: int, y: int) -> np.ndarray:  # noqa: ANN001 - a QImage
    colour = image.pixelColor(x, y)
    return np.array([colour.red(), colour.green(), colour.blue()], dtype=float)


def near(pixel: np.ndarray, colour: tuple[int, ...], tol: float = 30.0) -> bool:
    return float(np.abs(pixel - np.array(colour[:3], dtype=float)).max()) <= tol


def run_ok(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    status = render_main(list(argv))
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert captured.err == ""
    return captured.out


def test_png_shows_the_masked_columns_hatched_and_the_weights_in_colour(
    qapp,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],  # noqa: ANN001
) -> None:
    from PySide6.QtGui import QImage

    from attnviz.ui.heatmap.colormaps import MASK_COLOR, MASK_HATCH_COLOR, lookup_table

    out = tmp_path / "x.png"
    assert f"wrote {out}" in run_ok(capsys, "--preset", "masked-softmax-1d", "--out", str(out), "--size", "800x700")
    image = QImage(str(out))
    assert not image.isNull()

    # The same arguments give the same layout: that tells where each cell landed in the PNG.
    state = PRESETS["masked-softmax-1d"].build()
    view = run_state(state).view
    assert view is not None
    figure = figure_for(view, state, source="masked-softmax-1d", size=(800, 700))
    try:
        scale = image.width() / figure.widget.width()
        assert image.height() == pytest.approx(figure.widget.height() * scale, abs=1)
        lut = lookup_table("cividis")
        lens = state.lens_1d  # [2, 3]: keys at or past the valid length are masked
        # Sample a 4x4 grid in the upper-left part of each cell: clear of the value printed in
        # the middle, and wide enough to cross the hatching of a masked cell.
        fractions = (0.12, 0.2, 0.28, 0.36)
        for index, b in enumerate(figure.batches):
            for r in range(view.weights.shape[1]):
                for c in range(view.weights.shape[2]):
                    pixels = []
                    for fy in fractions:
                        for fx in fractions:
                            point = figure.cell_point(index, r, c, fx, fy)
                            pixels.append(rgb(image, int(point.x() * scale), int(point.y() * scale)))
                    if c >= lens[b]:
                        # Light grey with dark stripes: both colours, and nothing else.
                        assert all(near(p, MASK_COLOR) or near(p, MASK_HATCH_COLOR) for p in pixels), (b, r, c)
                        assert sum(near(p, MASK_COLOR, 8) for p in pixels) >= 8, (b, r, c)
                        assert any(near(p, MASK_HATCH_COLOR, 8) for p in pixels), (b, r, c)
                    else:
                        # One flat colour, the colour map's colour for this weight: no hatching.
                        expected = tuple(int(x) for x in lut[int(round(float(view.weights[b, r, c]) * 255))])
                        for p in pixels:
                            assert near(p, expected, 6), (b, r, c, p, expected)
                        assert not near(pixels[0], MASK_COLOR, 30), (b, r, c)
    finally:
        figure.close()


def test_svg_is_valid_xml_with_the_heatmaps_and_renders(qapp, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    from PySide6.QtGui import QColor, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    out = tmp_path / "x.svg"
    run_ok(capsys, "--preset", "masked-softmax-2d", "--out", str(out), "--colormap", "viridis")
    root = ET.parse(out).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    ns = {"svg": "http://www.w3.org/2000/svg"}
    assert len(root.findall(".//svg:image", ns)) >= 4  # per map: cells and mask overlay at least
    texts = ["".join(t.itertext()).strip() for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert "batch 0 of 2" in texts and "batch 1 of 2" in texts
    assert root.find("svg:title", ns).text == "masked-softmax-2d: attention weights"
    renderer = QSvgRenderer(str(out))
    assert renderer.isValid()
    picture = QImage(renderer.defaultSize(), QImage.Format.Format_ARGB32)
    picture.fill(QColor("white"))
    painter = QPainter(picture)
    renderer.render(painter)
    painter.end()
    # The SVG draws the heatmaps: a good part of the picture is neither background white nor grey.
    colours = {
        picture.pixelColor(x, y).name() for x in range(0, picture.width(), 7) for y in range(0, picture.height(), 7)
    }
    assert len(colours) > 20


def test_list_presets(capsys) -> None:  # noqa: ANN001
    out = run_ok(capsys, "--list-presets")
    # The book's presets, then every lesson: each one renderable by --preset.
    assert [line.split()[0] for line in out.splitlines()] == list(ALL_PRESETS)
    assert list(ALL_PRESETS)[: len(PRESETS)] == list(PRESETS) and "pitfall-zero-length" in ALL_PRESETS


def test_a_session_and_a_tensor_file_render_with_options(qapp, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    from PySide6.QtGui import QImage

    session = tmp_path / "work.attnviz"
    save_state_file(session, PRESETS["dot-toy"].build())
    out = tmp_path / "s.png"
    run_ok(
        capsys, "--load", str(session), "--out", str(out), "--mask-mode", "strict", "--batch", "1", "--size", "640x420"
    )
    image = QImage(str(out))
    assert (image.width(), image.height()) == (640, 420)  # offscreen renders at 1 pixel per pixel

    rng = np.random.default_rng(0)
    tensors = tmp_path / "heads.npz"
    save_arrays(
        tensors,
        {
            "q": rng.standard_normal((1, 3, 2, 4)),
            "k": rng.standard_normal((1, 3, 5, 4)),
            "v": rng.standard_normal((1, 3, 5, 2)),
            "valid_lens": np.array([3]),
        },
    )
    out2 = tmp_path / "t.png"
    run_ok(capsys, "--load", str(tensors), "--head", "2", "--scoring", "scaled_dot", "--out", str(out2))
    assert not QImage(str(out2)).isNull()

    masked = tmp_path / "masked.npz"
    save_arrays(
        masked,
        {
            "Q": np.zeros((1, 2, 3)),
            "K": np.zeros((1, 4, 3)),
            "V": np.zeros((1, 4, 2)),
            "attn_mask": np.ones((1, 2, 4), dtype=bool),
        },
    )
    run_ok(capsys, "--load", str(masked), "--role", "mask=", "--out", str(tmp_path / "m.svg"))
    assert (tmp_path / "m.svg").stat().st_size > 0


def _bad_inputs(tmp_path: Path) -> list[tuple[list[str], str]]:
    corrupt = tmp_path / "corrupt.npy"
    corrupt.write_bytes(b"\x93NUMPY\x01\x00garbage")
    unnamed = tmp_path / "unnamed.npz"
    save_arrays(unnamed, {"a": np.zeros((1, 2, 3)), "b": np.zeros((1, 4, 3))})
    heads = tmp_path / "heads.npz"
    save_arrays(heads, {"q": np.zeros((1, 2, 2, 3)), "k": np.zeros((1, 2, 4, 3)), "v": np.zeros((1, 2, 4, 3))})
    mismatch = tmp_path / "mismatch.npz"  # dot scoring needs d_q = d_k: the engine refuses
    save_arrays(mismatch, {"q": np.zeros((1, 2, 3)), "k": np.zeros((1, 4, 5)), "v": np.zeros((1, 4, 2))})
    masked = tmp_path / "masked.npz"  # a mask for 3 queries where there are 2
    save_arrays(
        masked,
        {
            "q": np.zeros((1, 2, 3)),
            "k": np.zeros((1, 4, 3)),
            "v": np.zeros((1, 4, 2)),
            "mask": np.ones((3, 4), dtype=bool),
        },
    )
    flat = tmp_path / "flat.npz"
    save_arrays(flat, {"q": np.zeros((1, 2, 3)), "k": np.zeros((1, 4, 3)), "v": np.zeros((1, 4, 2))})
    out = str(tmp_path / "x.png")
    return [
        (["--preset", "no-such-preset", "--out", out], "unknown preset 'no-such-preset'"),
        (["--load", str(tmp_path / "missing.npz"), "--out", out], "missing.npz: does not exist"),
        (["--load", str(corrupt), "--out", out], "corrupt.npy:"),
        (["--load", str(unnamed), "--out", out], "cannot tell which array is queries / keys / values"),
        (["--load", str(heads), "--head", "2", "--out", out], "head 2 is out of range: layer 0 has 2 heads (0 to 1)"),
        (["--load", str(heads), "--layer", "1", "--out", out], "layer 1 is out of range: the file has 1 layer (0)"),
        (["--load", str(heads), "--head", "1", "--heads", "all", "--out", out], "not allowed with argument"),
        (["--load", str(flat), "--layer", "1", "--out", out], "the tensors have no layers"),
        (
            ["--preset", "dot-toy", "--head", "1", "--out", out],
            "--head 1 is out of range: layer 0 of dot-toy has 1 head, 0",
        ),
        (["--load", str(mismatch), "--scoring", "dot", "--out", out], "mismatch.npz:"),
        (
            ["--load", str(masked), "--out", out],
            "'mask' (attn_mask) has shape (3, 4), which does not broadcast to (1, 2, 4) (batch, queries, keys)",
        ),
        (
            ["--load", str(masked), "--role", "valid_lens=mask", "--role", "mask=", "--out", out],
            "'mask' is a mask by its name, not valid lengths",
        ),
        (["--load", str(heads), "--role", "nope=q", "--out", out], "--role 'nope=q': expected ROLE=NAME"),
        (["--preset", "dot-toy", "--scoring", "cosine", "--out", out], "invalid choice: 'cosine'"),
        (["--preset", "dot-toy", "--colormap", "jet", "--out", out], "unknown colour map 'jet'"),
        (["--preset", "dot-toy", "--size", "big", "--out", out], "expected WIDTHxHEIGHT"),
        (["--preset", "dot-toy", "--size", "100x100", "--out", out], "too small"),
        (["--preset", "dot-toy", "--batch", "7", "--out", out], "--batch 7 is out of range"),
        (
            ["--preset", "dot-toy", "--out", str(tmp_path / "x.jpg")],
            "must end in .png or .svg (a picture), or .npy or .csv (the weights)",
        ),
        (["--preset", "dot-toy", "--out", str(tmp_path / "nowhere" / "x.png")], "does not exist"),
        (["--preset", "dot-toy"], "--out FILE is required"),
        (["--preset", "dot-toy", "--load", str(heads), "--out", out], "not allowed with argument"),
        (["--out", out], "one of the arguments --preset --load --list-presets is required"),
        (["--preset", "dot-toy", "--head", "x", "--out", out], "invalid int value: 'x'"),
    ]


def test_every_bad_input_fails_with_one_stderr_line(qapp, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    for argv, needle in _bad_inputs(tmp_path):
        status = render_main(argv)
        captured = capsys.readouterr()
        lines = captured.err.splitlines()
        assert status != 0, argv
        assert len(lines) == 1, (argv, captured.err)
        assert lines[0].startswith("attnviz render: "), lines
        assert needle in lines[0], (argv, lines[0])
        assert "Traceback" not in captured.err
        assert not (tmp_path / "x.png").exists()


def _clean_env() -> dict[str, str]:
    # As a user's terminal without a display: no DISPLAY, no QT_QPA_PLATFORM set by the tests.
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def test_as_a_program_without_a_display(tmp_path: Path) -> None:
    out = tmp_path / "cli.png"
    ok = subprocess.run(
        [sys.executable, "-m", "attnviz.cli.render", "--preset", "additive-toy", "--out", str(out)],
        cwd=tmp_path,
        env=_clean_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ok.returncode == 0, ok.stderr
    assert ok.stderr == ""  # Qt's chatter about the offscreen platform stays out of stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bad = subprocess.run(
        [sys.executable, "-m", "attnviz.cli.render", "--load", "nope.attnviz", "--out", str(out)],
        cwd=tmp_path,
        env=_clean_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 1
    assert bad.stderr.splitlines() == ["attnviz render: nope.attnviz: does not exist"]


# --- what reaches the terminal: names from outside, escaped and bounded -------------------------


def test_an_undecodable_out_name_is_written_and_reported(qapp, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    out = tmp_path / os.fsdecode(b"pesos\xff.png")  # a Latin-1 byte in a UTF-8 system: a lone surrogate
    lines = run_ok(capsys, "--preset", "dot-toy", "--out", str(out)).splitlines()
    assert os.listdir(os.fsencode(tmp_path)) == [b"pesos\xff.png"]
    assert lines == [f"wrote {tmp_path}/pesos\\xff.png"]


def test_a_session_setting_key_cannot_forge_output_lines(qapp, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    from attnviz.io import save_session
    from attnviz.io.session_state import state_to_session

    session = state_to_session(PRESETS["dot-toy"].build())
    session.settings["x\nwrote /tmp/forged.png\x1b[2K"] = 1
    save_session(tmp_path / "forged.attnviz", session)
    out = tmp_path / "x.png"
    lines = run_ok(capsys, "--load", str(tmp_path / "forged.attnviz"), "--out", str(out)).splitlines()
    assert lines == ["note: ignored the unknown setting 'x wrote /tmp/forged.png\\x1b[2K'", f"wrote {out}"]


def test_an_unreadable_list_of_many_arrays_is_one_short_line(qapp, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    for suffix, count in ((".npz", 2_000), (".safetensors", 20_000)):
        path = tmp_path / f"many{suffix}"
        save_arrays(path, {f"a{i}": np.zeros(1, np.float32) for i in range(count)})
        status = render_main(["--load", str(path), "--out", str(tmp_path / "x.png")])
        err = capsys.readouterr().err
        assert status == 1
        assert len(err.splitlines()) == 1 and len(err) < 1200, len(err)
        assert err.startswith(
            f"attnviz render: many{suffix}: cannot tell which array is queries / keys / values "
            "(arrays: a0 (1,), a1 (1,),"
        )
        assert "characters left out" in err and f"a{count - 1} (1,)); name them with --role" in err
