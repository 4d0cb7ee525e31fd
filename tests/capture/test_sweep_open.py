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


def test_the_opening_limit_counts_the_childs_cpu_time_not_the_machines_load() -> None:
    # A child that waits (for its share of a loaded machine, or in sleep) spends wall time, not
    # CPU time: the limit is on the latter, so a busy machine does not fail a capture that is quick.
    import subprocess
    import sys
    import time

    code = "import time\nend = time.process_time() + 1.5\nwhile time.process_time() < end: pass\ntime.sleep(30)"
    child = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline = time.monotonic() + 60
        while sweep_open._cpu_seconds(child.pid) < 1.4 and time.monotonic() < deadline:
            time.sleep(0.2)
        spun = sweep_open._cpu_seconds(child.pid)
        assert spun >= 1.4  # its CPU time is counted
        time.sleep(2.0)  # now asleep: 2 s of wall time, next to nothing of CPU
        assert sweep_open._cpu_seconds(child.pid) - spun < 0.5
    finally:
        child.kill()
        child.wait()
