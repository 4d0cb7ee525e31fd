"""``attnviz code``: the snippet on stdout, one line on stderr when it cannot, render's exit codes."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attnviz.bench.snippet_cases import CASES
from attnviz.cli.code import code_main
from attnviz.cli.gui import main as cli_main
from attnviz.compute import run_state
from attnviz.io.session_state import save_state_file
from attnviz.snippets import make_snippet
from attnviz.snippets.harness import run_traced
from attnviz.teaching.presets import PRESETS

ROOT = Path(__file__).resolve().parents[1]


def code(args: list[str], capsys) -> tuple[int, str, str]:
    status = cli_main(["code", *args])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("framework", ["pytorch", "tensorflow", "mxnet", "jax", "attnviz"])
def test_a_preset_is_printed_as_the_snippet_of_that_framework(framework, capsys):
    status, out, err = code(["--framework", framework, "--preset", "additive-toy"], capsys)
    assert status == 0 and err == ""
    assert out == make_snippet(PRESETS["additive-toy"].build(), framework).code


def test_the_default_framework_is_pytorch_and_the_script_runs(capsys):
    status, out, _err = code(["--preset", "masked-softmax-2d"], capsys)
    assert status == 0 and "import torch" in out
    with contextlib.redirect_stdout(io.StringIO()):
        namespace, _ = run_traced(out, {})
    # The snippet's plain PyTorch against attnviz's engine: the same arithmetic, not promised to be
    # the same kernels on every CPU, so float32's tolerance for weights in [0, 1].
    expected = run_state(PRESETS["masked-softmax-2d"].build()).view.weights
    np.testing.assert_allclose(namespace["weights"].numpy(), expected, rtol=0, atol=1e-6)


def test_a_session_file_is_read_as_render_reads_it(tmp_path, capsys):
    state = CASES["causal-bottom-right-2d"].build()
    save_state_file(tmp_path / "work.attnviz", state)
    status, out, err = code(["--framework", "jax", "--load", str(tmp_path / "work.attnviz")], capsys)
    assert status == 0, err
    assert "causal_mask(4, 6, bottom_right=True)" in out and "import jax" in out


def test_a_models_head_is_chosen_with_layer_and_head(tmp_path, capsys):
    case = CASES["model-run-head"]
    save_state_file(tmp_path / "run.attnviz", case.build(), case.focus)  # saved showing head 3
    # Without --layer/--head: the head the session was saved showing, as render draws it.
    status, out, err = code(["--load", str(tmp_path / "run.attnviz")], capsys)
    assert status == 0, err
    assert "# The tensors are head 3 of call 0 (decoder.layers.0.self_attn)" in out
    status, out, err = code(["--load", str(tmp_path / "run.attnviz"), "--head", "1"], capsys)
    assert status == 0, err
    assert "# The tensors are head 1 of call 0 (decoder.layers.0.self_attn)" in out
    status, _out, err = code(["--load", str(tmp_path / "run.attnviz"), "--head", "9"], capsys)
    assert status == 2 and err.count("\n") == 1 and "--head 9 is out of range" in err


@pytest.mark.parametrize(
    ("args", "status", "words"),
    [
        (["--framework", "jax"], 2, "one of the arguments --preset --load is required"),
        (["--preset", "nope"], 2, "unknown preset 'nope'"),
        (["--framework", "keras", "--preset", "dot-toy"], 2, "invalid choice: 'keras'"),
        (["--load", "missing.npz"], 1, "missing.npz: does not exist"),
        (["--preset", "dot-toy", "--layer", "1"], 2, "--layer 1 is out of range: dot-toy has 1 layer, 0"),
        (["--preset", "dot-toy", "--data", "no/such/folder/x.npz"], 2, "the folder no/such/folder does not exist"),
    ],
)
def test_what_goes_wrong_is_one_line_on_stderr(args, status, words, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    got, out, err = code(args, capsys)
    assert got == status and out == ""
    assert err.startswith("attnviz code: ") and err.count("\n") == 1 and words in err, err


def test_an_input_that_cannot_be_written_says_why(tmp_path, capsys):
    bad = PRESETS["dot-toy"].build()
    bad.lens_1d = np.array([-3, 2])
    save_state_file(tmp_path / "bad.attnviz", bad)
    status, out, err = code(["--load", str(tmp_path / "bad.attnviz")], capsys)
    assert status == 1 and out == ""
    assert err == "attnviz code: bad.attnviz: attnviz cannot compute these inputs: valid lengths must be >= 0; got -3\n"


def test_big_inputs_need_a_data_file_which_the_script_loads(tmp_path, capsys, monkeypatch):
    from attnviz.bench.snippet_cases import book_state

    state = book_state(1, scoring="scaled_dot", lens_mode="1d", batch=1, n_queries=300, n_keys=300, d=250)
    save_state_file(tmp_path / "big.attnviz", state)
    status, out, err = code(["--load", str(tmp_path / "big.attnviz")], capsys)
    assert status == 2 and out == "" and "give --data FILE" in err
    data = tmp_path / "inputs.npz"
    status, out, err = code(["--load", str(tmp_path / "big.attnviz"), "--data", str(data)], capsys)
    assert status == 0 and data.exists()
    assert f'data = np.load("{data.resolve().as_posix()}")' in out
    assert err == f"attnviz code: note: the script loads its larger arrays from {data.resolve().as_posix()}\n".replace(
        "attnviz code: ", ""
    )
    monkeypatch.chdir(ROOT)  # anywhere: the script finds the file by its path
    with contextlib.redirect_stdout(io.StringIO()):
        namespace, _ = run_traced(out, {})
    np.testing.assert_allclose(namespace["weights"].numpy(), run_state(state).view.weights, rtol=0, atol=1e-6)


def test_attnviz_code_runs_as_a_command():
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.update(LANG="C", LC_ALL="C", LANGUAGE="", PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-m", "attnviz", "code", "--framework", "mxnet", "--preset", "dot-toy"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0 and done.stderr == ""
    assert "class DotProductAttention(nn.Block):" in done.stdout
    done = subprocess.run(
        [sys.executable, "-m", "attnviz", "code", "--preset", "nope"], capture_output=True, text=True, env=env
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert code_main(["--help"]) == 0
