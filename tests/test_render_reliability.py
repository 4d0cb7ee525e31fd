"""``attnviz render`` on issue 22's inputs: scores that overflow are one warning line on stderr (no
block of Python warnings), and the width bomb is refused in one line, quickly and within memory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attnviz.bench.safety import HOSTILE_PEAK_MB, render_probe, width_bomb_capture, width_bomb_session
from attnviz.io import save_arrays, save_capture
from attnviz.state.run import AttentionCall, MaskArguments, ModelRun

ROOT = Path(__file__).parents[1]


def render(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LANG": "C", "LANGUAGE": "", "LC_ALL": "C"}
    env["QT_QPA_PLATFORM"] = "offscreen"
    return subprocess.run(
        [sys.executable, "-m", "attnviz", "render", *argv], capture_output=True, text=True, env=env, timeout=120
    )


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("overflow")
    rng = np.random.default_rng(0)
    k, v = (rng.standard_normal((2, 9, 3)).astype(np.float32) for _ in range(2))
    save_arrays(folder / "big.npz", {"queries": np.full((2, 4, 3), 3e38, np.float32), "keys": k, "values": v})
    q = rng.standard_normal((1, 2, 4, 3)).astype(np.float32)
    call = AttentionCall("layer 0", q, k[None, :1].repeat(2, 1), v[None, :1].repeat(2, 1), MaskArguments(), scale=1e300)
    save_capture(folder / "scale.attnviz-capture", ModelRun((call,), source="capture"))
    return {"big": folder / "big.npz", "scale": folder / "scale.attnviz-capture"}


@pytest.mark.parametrize(("name", "out"), [("big", "w.npy"), ("scale", "w.npy"), ("big", "w.png")])
def test_overflowing_scores_are_one_warning_line(inputs: dict[str, Path], tmp_path: Path, name: str, out: str) -> None:
    result = render("--load", str(inputs[name]), "--out", str(tmp_path / out))
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("attnviz render: warning: ") and "overflowed to Inf or NaN in float32" in lines[0]
    assert "although every input is finite" in lines[0]
    if out.endswith(".npy"):
        assert np.isnan(np.load(tmp_path / out)).any()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc for the peak")
@pytest.mark.parametrize("build", [width_bomb_capture, width_bomb_session], ids=["capture", "session"])
def test_the_width_bomb_is_refused_in_one_line(tmp_path: Path, build) -> None:  # noqa: ANN001
    path = build(tmp_path / ("bomb.attnviz-capture" if build is width_bomb_capture else "bomb.attnviz"))
    result = render_probe(path, tmp_path / "w.png", headroom_mb=1024)
    assert result["status"] == 1 and result["stderr"].count("\n") == 1, result
    assert result["stderr"].startswith(f"attnviz render: {path.name}: ")
    assert "1,000,000 characters wide" in result["stderr"]
    assert result["peak_mb"] < HOSTILE_PEAK_MB, result


@pytest.mark.parametrize("language", ["C", "en_US.UTF-8", "pt_BR.UTF-8"])
def test_a_refused_render_loads_qt_only_to_speak_another_language(tmp_path: Path, language: str) -> None:
    """Learning that the terminal speaks English took importing Qt (0.9 s of a 1.6 s refusal
    under load): the environment says it where Qt itself reads it. Portuguese still loads the
    catalogue, through Qt."""
    bomb = width_bomb_session(tmp_path / "wide.attnviz")
    code = (
        "import sys\n"
        "from attnviz.cli.render import render_main\n"
        f"status = render_main(['--load', {str(bomb)!r}, '--out', {str(tmp_path / 'w.png')!r}])\n"
        "print(status, 'PySide6' in sys.modules, 'torch' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LANG": language, "LANGUAGE": "", "LC_ALL": language}
    env["QT_QPA_PLATFORM"] = "offscreen"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    portuguese = language.startswith("pt")
    assert done.stdout.split() == ["1", str(portuguese), "False"], done.stderr
    assert ("caracteres de largura" if portuguese else "characters wide") in done.stderr
