"""Leaving the interpreter with a window open while its labs compute: no crash, no traceback.

A script (or a notebook kernel shutting down) may end without closing the window. Every worker
thread must then be stopped, and the windows deleted, while Python is still whole: before that
was done, the lab's thread finished into objects already deleted ("Signal source has been
deleted"), and Qt's own clean-up deleted pyqtgraph's items during finalisation (a segfault in 1
run of 5-10). The child below opens the window, starts the masking lab and side by side on a
slow computation, and ends mid-compute; it runs ``ATTNVIZ_EXIT_RUNS`` times (10 by default).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import sys, time
from PySide6.QtWidgets import QApplication
app = QApplication([])
import attnviz.ui.views.masking_lab as masking_lab
lab = masking_lab.run_masking_lab

def slow_lab(snapshot):
    time.sleep(1.5)  # a computation that takes a while; the interpreter ends meanwhile
    return lab(snapshot)

masking_lab.run_masking_lab = slow_lab
from attnviz.ui.window.main_window import MainWindow
window = MainWindow()
window.show()
window.compare_dock.show()
window.masking_lab_dock.show()
view = window.masking_lab_dock.view()
deadline = time.monotonic() + 30
while not view.busy and time.monotonic() < deadline:
    app.processEvents()
time.sleep(float(sys.argv[1]))
print("leaving while the lab computes:", view.busy, flush=True)
"""

# The children are forked from one interpreter that has imported what a child's script imports
# before anything runs (Qt, pyqtgraph, numpy, the window's modules: a second of CPU per child),
# in one thread and without a QApplication. PyTorch is not among them: a child's first
# computation imports it, as the app's does, and may still be importing when the child ends.
# Each child runs CHILD in the interpreter's own ``__main__`` (its window and application live
# until finalisation, as a script's do) and ends as a script ends.
ZYGOTE = r"""
import os, sys
import numpy, pyqtgraph
from PySide6 import QtWidgets
import attnviz.ui.window.main_window, attnviz.ui.views.masking_lab

child, out, runs, at_once = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
code = compile(open(child).read(), "child", "exec")
running = {}
for run in range(runs + at_once):
    while running and (len(running) >= at_once or run >= runs):
        pid, status = os.wait()
        with open(os.path.join(out, f"{running.pop(pid)}.rc"), "w") as rc:
            rc.write(str(os.waitstatus_to_exitcode(status)))
    if run >= runs:
        continue
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        for fd, name in ((1, "out"), (2, "err")):
            os.dup2(os.open(os.path.join(out, f"{run}.{name}"), os.O_WRONLY | os.O_CREAT), fd)
        sys.argv = ["child", str(0.1 * (run % 5))]
        del running, pid
        exec(code, globals())
        sys.exit(0)
    running[pid] = run
"""
CHILDREN_AT_ONCE = 5
FAILURES = ("Fatal Python error", "Segmentation fault", "Traceback", "Exception ignored", "terminate called")


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "fork"), reason="the children are forked; the failure was seen on Linux")
def test_leaving_the_interpreter_mid_computation_exits_cleanly(tmp_path: Path) -> None:
    runs = int(os.environ.get("ATTNVIZ_EXIT_RUNS", "10"))
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "ATTNVIZ_STATE_DIR": str(tmp_path),
        "PYTHONFAULTHANDLER": "1",
    }
    child, out = tmp_path / "child.py", tmp_path / "runs"
    child.write_text(CHILD)
    out.mkdir()
    # Five children at a time: most of a child's life is spent waiting for the lab's thread.
    zygote = subprocess.run(
        [sys.executable, "-c", ZYGOTE, str(child), str(out), str(runs), str(CHILDREN_AT_ONCE)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert zygote.returncode == 0, zygote.stderr[-3000:]
    for run in range(runs):
        stdout, stderr = ((out / f"{run}.{name}").read_text() for name in ("out", "err"))
        returncode = int((out / f"{run}.rc").read_text())
        problems = [word for word in FAILURES if word in stderr]
        assert "leaving while the lab computes: True" in stdout, stdout + stderr[-2000:]
        assert returncode == 0 and not problems, f"run {run}: {returncode} {problems}\n{stderr[-3000:]}"
    assert not list(tmp_path.glob("autosave*"))  # the windows ended as a quit does: nothing to recover
