"""Every view fits and reads at 1280x720 (a projector) and 1920x1080, in English and Portuguese,
light and dark, in presentation mode too; the window fits a 1024x600 screen and never grows by
itself. tests/ui/layout_probe.py does the looking, in a child process per screen size."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

PROBE = Path(__file__).with_name("layout_probe.py")
ROOT = Path(__file__).resolve().parents[2]


def _probe(tmp_path: Path, width: int, height: int, *flags: str) -> dict:
    screen = tmp_path / "screen.json"
    screen.write_text(
        json.dumps(
            {
                "screens": [
                    {
                        "name": "S",
                        "x": 0,
                        "y": 0,
                        "width": width,
                        "height": height,
                        "logicalDpi": 96,
                        "logicalBaseDpi": 96,
                        "dpr": 1,
                    }
                ]
            }
        )
    )
    out = tmp_path / "probe.json"
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": f"offscreen:configfile={screen}",
        "ATTNVIZ_STATE_DIR": str(tmp_path / "state"),
        "PYTHONPATH": str(ROOT),
    }
    result = subprocess.run(
        [sys.executable, str(PROBE), str(out), *flags], env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(out.read_text())


@pytest.mark.slow
@pytest.mark.parametrize(("width", "height"), [(1280, 720), (1920, 1080)])
def test_every_view_fits_and_reads_in_both_languages_and_themes(tmp_path, width, height):
    report = _probe(tmp_path, width, height)
    # 2 languages x 2 themes x (main view, 4 teaching tabs, presentation mode, then 5 model views),
    # and in each language, in presentation mode, 3 teaching views and the 5 model views as slides;
    # first, the masked softmax 2-D preset's main view as a slide; then the pipeline presenting in
    # 2 languages: every stage, then the walk's 7 steps
    assert report["checked"] == 44 + 2 * (3 + 5) + 1 + 2 * 8
    assert report["problems"] == [], "\n".join(report["problems"])


@pytest.mark.slow
def test_the_window_fits_a_1024x600_screen_and_keeps_its_size(tmp_path):
    report = _probe(tmp_path, 1024, 600, "--window-only")
    assert report["problems"] == [], "\n".join(report["problems"])


def test_a_long_padded_input_shows_its_structure_under_the_default_scale(window, qtbot):
    """512 queries x 512 keys with 400 valid: every valid weight is near 1/400. On a 0-1 scale they
    were all the colour of zero; the default scale must spread them over the colour map."""
    from dataclasses import replace

    from attnviz.state.document import ReplaceState, State

    from .conftest import wait_current

    rng = np.random.default_rng(0)
    queries, keys, values = (rng.standard_normal((1, 512, 64)) for _ in range(3))
    state = State.from_tensors(queries, keys, values)
    state.lens_1d = np.array([400])
    state.lens_2d = np.full((1, 512), 400)
    state.settings = replace(state.settings, scoring="scaled_dot")
    window.session.push(ReplaceState(state, "long padded"))
    wait_current(qtbot, window)
    heatmap = window.results.maps[0]
    valid = heatmap.values[:, :400]

    def colour_steps() -> np.ndarray:
        """The colour-table entry (of 256) each valid weight is drawn with; entry 0 is zero's."""
        lo, hi = heatmap.levels
        return (np.clip((valid - lo) / (hi - lo), 0, 1) * 255).astype(int)

    steps = colour_steps()
    assert np.mean(steps >= 8) > 0.75  # most weights visibly apart from the colour of zero
    assert steps.std() > 25  # and spread over the map: the structure shows
    assert np.mean(steps == 255) < 0.02  # only the few largest saturate
    window.session.set_color_range("unit")  # the old scale, for comparison
    # A map this big is drawn on another scale once prepared off the GUI thread.
    qtbot.waitUntil(lambda: heatmap.levels == (0.0, 1.0), timeout=10000)
    steps = colour_steps()
    assert np.mean(steps >= 8) < 0.01 and steps.std() < 2  # all but a few drawn like zero
