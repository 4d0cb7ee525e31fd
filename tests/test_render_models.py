"""``attnviz render`` on a model's files: --layer, --head, --heads all (the grid), tokens on the
axes, the weights of the selection as .npy or .csv, and the one-line notes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from attnviz.cli.render import figure_for, grid_for, render_main
from attnviz.compute.attention import run_state
from attnviz.io import guess_roles, load_tensor_file
from attnviz.io.session_state import save_state_file
from attnviz.io.tensor_import import state_from_tensor_file, tensor_file_focus
from attnviz.state.run import Focus
from attnviz.teaching.presets import DEFAULT_PRESET, PRESETS

NOTE = "note: the file brings no scoring settings: scaled dot-product scoring, as real models use"


def run_ok(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    status = render_main(list(argv))
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert captured.err == ""
    return captured.out.splitlines()


def softmax_reference(q: np.ndarray, k: np.ndarray, keep: np.ndarray) -> np.ndarray:
    scores = np.where(keep, q.astype(np.float64) @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1]), -np.inf)
    e = np.exp(scores - scores.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


@pytest.fixture
def model_file(tmp_path: Path) -> tuple[Path, dict[str, np.ndarray]]:
    """A Hugging Face style file with layers: (layers, B, H, L, d) tensors, a 0/1 attention_mask
    with padding, and a token per position of each batch element."""
    rng = np.random.default_rng(3)
    arrays = {
        "q": rng.standard_normal((2, 2, 3, 40, 8)).astype(np.float32),
        "k": rng.standard_normal((2, 2, 3, 40, 8)).astype(np.float32),
        "v": rng.standard_normal((2, 2, 3, 40, 4)).astype(np.float32),
        "attention_mask": np.ones((2, 40), np.int64),
    }
    arrays["attention_mask"][1, 30:] = 0
    tokens = np.array([[f"tok{i}" for i in range(40)], [f"w{i}" for i in range(30)] + ["[PAD]"] * 10])
    path = tmp_path / "model.npz"
    np.savez(path, **arrays, tokens=tokens)
    return path, arrays


def test_layer_head_and_the_weights_of_the_selection(model_file, tmp_path, capsys) -> None:  # noqa: ANN001
    path, arrays = model_file
    keep = arrays["attention_mask"].astype(bool)[:, None, :]
    out = tmp_path / "w.npy"
    lines = run_ok(capsys, "--load", str(path), "--layer", "1", "--head", "2", "--out", str(out))
    assert lines == [NOTE, f"wrote {out}"]
    expected = softmax_reference(arrays["q"][1][:, 2], arrays["k"][1][:, 2], keep)  # (B, L, L)
    np.testing.assert_allclose(np.load(out), expected, atol=1e-6)
    run_ok(capsys, "--load", str(path), "--layer", "1", "--head", "2", "--batch", "1", "--out", str(out))
    np.testing.assert_allclose(np.load(out), expected[1], atol=1e-6)

    lines = run_ok(capsys, "--load", str(path), "--out", str(out))  # no choice: layer 0, head 0, said
    assert lines[:2] == ["note: the file has 2 layers: layer 0 is shown", "note: the file has 3 heads: head 0 is shown"]
    np.testing.assert_allclose(
        np.load(out), softmax_reference(arrays["q"][0][:, 0], arrays["k"][0][:, 0], keep), atol=1e-6
    )

    grid = tmp_path / "grid.npy"
    lines = run_ok(capsys, "--load", str(path), "--layer", "1", "--heads", "all", "--out", str(grid))
    assert "note: batch element 0 of 2 is shown (choose one with --batch)" in lines
    assert "head 0 is shown" not in " ".join(lines)
    every = np.stack([softmax_reference(arrays["q"][1][0, h], arrays["k"][1][0, h], keep[0]) for h in range(3)])
    np.testing.assert_allclose(np.load(grid), every, atol=1e-6)

    csv = tmp_path / "grid.csv"
    run_ok(capsys, "--load", str(path), "--layer", "1", "--heads", "all", "--out", str(csv))
    text = csv.read_text()
    assert text.startswith("# head 0: 40 rows x 40 columns\n") and "# head 2: 40 rows x 40 columns" in text
    np.testing.assert_allclose(np.loadtxt(csv, delimiter=",").reshape(3, 40, 40), every, atol=1e-6)


def test_a_session_of_a_model_renders_the_layer_and_head_asked(model_file, tmp_path, capsys) -> None:  # noqa: ANN001
    path, arrays = model_file
    tf = load_tensor_file(path)
    state = state_from_tensor_file(tf, guess_roles(tf), None, PRESETS[DEFAULT_PRESET].build())
    session = tmp_path / "model.attnviz"
    save_state_file(session, state)
    out = tmp_path / "s.npy"
    run_ok(capsys, "--load", str(session), "--layer", "1", "--head", "1", "--out", str(out))
    keep = arrays["attention_mask"].astype(bool)[:, None, :]
    np.testing.assert_allclose(
        np.load(out), softmax_reference(arrays["q"][1][:, 1], arrays["k"][1][:, 1], keep), atol=1e-6
    )
    status = render_main(["--load", str(session), "--head", "3", "--out", str(out)])
    err = capsys.readouterr().err.splitlines()
    assert status == 2 and err == [
        "attnviz render: --head 3 is out of range: layer 0 of model.attnviz has 3 heads, 0-2"
    ]


def test_tokens_label_the_axes_without_overlapping(qapp, model_file) -> None:  # noqa: ANN001
    from PySide6.QtGui import QFontMetricsF

    path, _ = model_file
    tf = load_tensor_file(path)
    state = state_from_tensor_file(tf, guess_roles(tf), 1, PRESETS[DEFAULT_PRESET].build())
    focus = tensor_file_focus(state, None, 1)
    view = run_state(state, 0, focus).view
    figure = figure_for(view, state, source="model.npz", focus=focus, size=(720, 900))
    try:
        for heatmap, batch in zip(figure.maps, figure.batches, strict=True):
            tokens = state.head_view(focus).key_tokens[batch].tolist()
            for side in ("left", "bottom"):
                axis = heatmap.plot_item.getAxis(side)
                assert axis.cell_labels == tokens  # every token is a label (none is longer than the cut)
                # The labels drawn (every step-th when all 40 do not fit) never overprint.
                ((spacing, shown),) = axis.tickValues(0, 40, axis.width() if side == "bottom" else axis.height())
                pixels = (axis.width() if side == "bottom" else axis.height()) / 40 * spacing
                metrics = QFontMetricsF(axis.style["tickFont"])
                need = max(metrics.horizontalAdvance(t) for t in tokens) if side == "bottom" else metrics.height()
                assert pixels >= need, (side, spacing, pixels, need)
                assert len(shown) >= 40 // spacing
    finally:
        figure.close()


def test_the_heads_grid_one_map_per_head_one_colour_scale(qapp, model_file, tmp_path, capsys) -> None:  # noqa: ANN001
    import pyqtgraph as pg
    from PySide6.QtGui import QImage

    from attnviz.ui.heatmap.colormaps import lookup_table

    path, _ = model_file
    out = tmp_path / "grid.png"
    lines = run_ok(capsys, "--load", str(path), "--layer", "1", "--heads", "all", "--batch", "1", "--out", str(out))
    assert lines == [NOTE, f"wrote {out}"]
    image = QImage(str(out))
    assert not image.isNull()

    tf = load_tensor_file(path)
    state = state_from_tensor_file(tf, guess_roles(tf), 0, PRESETS[DEFAULT_PRESET].build(), layer=1)
    views = [run_state(state, 0, (1, h)).view for h in range(3)]
    figure = grid_for(views, [0, 1, 2], 1, state, source="model.npz", focus=Focus(1, 0))
    try:
        assert [m.plot_item.titleLabel.text for m in figure.maps] == ["head 0", "head 1", "head 2"]
        assert not any(m.colorbar.isVisible() for m in figure.maps)  # one bar for the grid instead
        bars = [
            item
            for view in figure.widget.findChildren(pg.GraphicsLayoutWidget)
            for item in view.ci.items
            if isinstance(item, pg.ColorBarItem)
        ]
        assert len(bars) == 1 and tuple(bars[0].levels()) == (0.0, 1.0)
        assert figure.maps[0].plot_item.getAxis("left").cell_labels == state.head_view((1, 0)).key_tokens[1].tolist()
        assert (image.width(), image.height()) == (figure.widget.width(), figure.widget.height())
        # Each map shows its own head: the PNG's cells have the colour of that head's weights.
        lut = lookup_table("cividis")
        for index in range(3):
            for row, col in ((2, 3), (10, 20), (29, 0)):
                point = figure.cell_point(index, row, col, 0.5, 0.5)
                colour = image.pixelColor(point.x(), point.y())
                expected = lut[int(round(float(views[index].weights[1, row, col]) * 255))]
                assert np.abs(np.array([colour.red(), colour.green(), colour.blue()]) - expected[:3]).max() <= 8
            # Padded keys are hatched in every head.
            point = figure.cell_point(index, 5, 35, 0.3, 0.3)
            colour = image.pixelColor(point.x(), point.y())
            assert colour.red() > 150 and abs(colour.red() - colour.blue()) < 30  # grey, not a colour of the map
    finally:
        figure.close()


@pytest.mark.slow
def test_render_reads_a_capture_and_writes_the_models_own_weights(tmp_path):
    """A BERT captured with attnviz.capture, rendered with --layer/--head/--out: the weights are
    the model's own attention probabilities (eager, output_attentions)."""
    import subprocess
    import sys

    import torch
    import transformers

    import attnviz

    torch.manual_seed(0)
    config = transformers.BertConfig(
        num_hidden_layers=2, hidden_size=64, num_attention_heads=4, intermediate_size=64, attn_implementation="sdpa"
    )
    model = transformers.BertModel(config).eval()
    ids, mask = torch.randint(1000, (2, 8)), torch.tensor([[1] * 8, [1] * 5 + [0] * 3])
    with torch.no_grad(), attnviz.capture(model) as cap:
        model(input_ids=ids, attention_mask=mask)
    path = tmp_path / "bert.attnviz-capture"
    cap.save(path)
    out = tmp_path / "w.npy"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "attnviz",
            "render",
            "--load",
            str(path),
            "--layer",
            "1",
            "--head",
            "2",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    model.config._attn_implementation = "eager"
    with torch.no_grad():
        expected = model(input_ids=ids, attention_mask=mask, output_attentions=True).attentions[1][:, 2]
    np.testing.assert_allclose(np.load(out), expected.numpy(), atol=1e-5)
