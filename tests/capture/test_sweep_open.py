"""The sweep's ``--open`` (issue 35): a capture the sweep makes is saved and opened by
``attnviz doctor``, ``attnviz render`` (every call) and the window's File > Open (every call
shown), in one child; a right capture gives no problem, an unreadable one a single line. One
child serves both files (starting it, with torch and the window, is most of the time)."""

from __future__ import annotations

from typing import Any

import pytest

from attnviz.bench import capture_sweep, sweep_open


@pytest.fixture(scope="module")
def transformers() -> Any:
    return pytest.importorskip("transformers", reason="transformers is a test dependency (pip install .[test])")


def test_a_sweep_capture_opens_every_way_and_a_broken_file_says_why_in_one_line(transformers, tmp_path):
    config = transformers.CONFIG_MAPPING["gpt2"]()
    capture_sweep.shrink(config)
    path = sweep_open.capture_path(tmp_path, "gpt2", "eager")
    try:
        verdict = capture_sweep.sweep_implementation(config, "eager", save_to=path)
        assert path.exists()
        assert verdict["status"] == "exact", verdict
        assert verdict["opened"]["problems"] == [], verdict["opened"]
        broken = tmp_path / "broken.attnviz-capture"
        broken.write_bytes(b"not a capture")
        opened = sweep_open.open_capture(broken)
    finally:
        sweep_open.close_opener()
    assert len(opened["problems"]) == 1, opened
    line = opened["problems"][0]
    assert line.startswith("opening: ") and "\n" not in line and "Traceback" not in line
