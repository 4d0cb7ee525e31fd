"""The sweep's ``--open DIR``: every capture the sweep makes is saved to ``DIR`` and opened the
ways a user opens it, each failure one line in the family's verdict:

* ``attnviz doctor FILE``: it must be silent on a model that is right (a finding on a sweep
  capture is a false alarm: the models are transformers' own, run as their authors meant), save
  the findings it checked against the model's own output (``TRUE_FINDINGS``: rows the model's
  mask leaves no key, NaN in its output), said apart as ``found``;
* ``attnviz render --load FILE --layer N --heads all`` for every call, drawn into a PNG;
* the window's File > Open (the loader the menu uses), then every call shown in turn: no refusal,
  no error in the main view; a call too long for every stage at once goes to the long-context
  view, as the window does with it, and that view must draw its overview without an error.

The commands run in-process in one long-lived child per sweep worker (importing torch, Qt and the
window costs seconds, more than a family): a fresh interpreter under a capped address space
(``children.PRELUDE``), offscreen, in English, with a state directory of its own, fed one file
per line on stdin. A child that crashes or outlives its limit is replaced and the file it was
opening is said to have crashed it. The commands are the front ends' (``attnviz.cli``, a layer
above the benchmarks): the child imports them, this module does not.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .children import PRELUDE, ROOT

__all__ = ["MARK", "Opener", "capture_path", "close_opener", "open_capture"]

#: A reply of the child starts with this (the commands it runs print too, to their own streams).
MARK = "@@opened "
#: CPU seconds the opening child may spend on one capture, opened three ways (every call drawn
#: and shown). CPU, not wall-clock time: on a machine shared by other work a capture's wall time
#: grows with the load (Florence-2's 30 calls took over 600 s of wall time at a load of 12 on 2
#: CPUs) while the work it takes does not.
LIMIT_S = 600.0
#: Wall-clock seconds per CPU second of the limit before a child that waits on nothing it can
#: finish (a dialog, a deadlock) is given up.
WALL_PER_CPU = 6.0

_CHILD = r"""
import contextlib, io, os
from PySide6.QtWidgets import QApplication, QMessageBox
app = QApplication([])
import torch
import attnviz.cli.render, attnviz.cli.doctor
from attnviz.io import load_capture
from attnviz.ui.window.main_window import MainWindow

refusals = []
for kind in ("warning", "critical", "information"):
    setattr(QMessageBox, kind, staticmethod(lambda _parent, _title, text, *a: refusals.append(str(text))))
window = MainWindow()
window.resize(1280, 720)
window.show()
session = window.session
long_view = window.long_dock.view()

def wait(test, limit):
    deadline = time.monotonic() + limit
    while not test() and time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.002)
    return test()

def idle():
    return session.is_current and not session.busy

def one_line(text):
    return " ".join(str(text).split())[:240]

def command(main, argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue().splitlines(), err.getvalue().splitlines()

#: A finding the doctor checked against the model's own output: rows the model's mask leaves no
#: key and what its output holds there, NaN (transformers' eager NeMo ASR encoders read their float
#: mask as boolean and mask every key), zeros, or the mean of the values that a finite fill spreads
#: evenly (BLT pads its patches with an empty last one, whose cross-attention row sees no byte).
#: And a 0/1 float mask the model added to its scores, masking (nearly) nothing: the capture is
#: exact, so that mask is what the model computed with. Grounding DINO hands its BERT text backbone
#: a 4-D boolean block mask, which transformers' eager BERT (5.23) adds as 0 and 1: its output
#: with that mask is 5.7e-3 from the unmasked and 6.6e-3 from the block-masked one (a bug of the
#: model, found by the doctor).
#: And -inf next to finfo.min in an additive mask, read from the mask the model built: Kosmos-2's
#: text model adds its causal and its padding masks, each filled with finfo.min, and their sum
#: overflows (on the upstream tester's right-padded mask: 194 -inf beside 179 finfo.min, no row
#: left without a key, so its weights are those of boolean masks: a warning, true and harmless).
#: What the model computed, not a false alarm: said apart.
TRUE_FINDINGS = (
    "the model produced NaN there",
    "no key left to attend to and came out as zeros",
    "no key left to attend to, so a finite fill",
    "which is added to the scores: it masks nothing",
    "fills were added and overflowed",
)

def doctor(path, found):
    status, out, err = command(attnviz.cli.doctor.doctor_main, [path])
    # The last line is the summary; notes say what could not be checked (never a finding).
    findings = [line for line in out[:-1] if not line.startswith("note: ")]
    found += ["doctor: " + one_line(f) for f in findings if any(t in f for t in TRUE_FINDINGS)]
    findings = [f for f in findings if not any(t in f for t in TRUE_FINDINGS)]
    if findings or (status != 0 and not found):
        return ["doctor: " + one_line((findings or err or out or ["exit %d" % status])[0])]
    return []

def render(path, calls, out_dir):
    problems = []
    for layer in range(calls):
        png = os.path.join(out_dir, "render.png")
        status, out, err = command(
            attnviz.cli.render.render_main, ["--load", path, "--layer", str(layer), "--heads", "all", "--out", png]
        )
        if status != 0:
            problems.append("render: call %d: %s" % (layer, one_line((err or ["exit %d" % status])[0])))
            break
    return problems

def in_window(path, calls):
    refusals.clear()
    finished = []
    window.file_actions.openFinished.connect(finished.append)
    try:
        window.file_actions.open_file(path)
        if not wait(lambda: finished, 120):
            return ["window: File > Open did not finish in 120 s"]
    finally:
        window.file_actions.openFinished.disconnect(finished.append)
    if not finished[-1]:
        return ["window: File > Open refused it: " + one_line(refusals[0] if refusals else "no reason shown")]
    for layer in range(calls):
        session.set_focus(layer, 0)
        if not wait(idle, 120):
            return ["window: call %d was still computing after 120 s" % layer]
        outcome = session.last_outcome
        if outcome is not None and outcome.too_large:
            # The window streams it in the long-context view instead: its overview is the picture.
            def drawn():
                result = long_view.result
                return (
                    window.long_dock.isVisible() and not long_view.busy and result is not None
                    and tuple(result.focus) == (layer, 0) and result.version == session.document.version
                )
            if not wait(drawn, 240):
                return ["window: call %d: too long for the main view, and the long-context view drew nothing" % layer]
            if long_view.result.error is not None:
                return ["window: call %d: long-context view: %s" % (layer, one_line(long_view.result.error))]
        elif outcome is not None and outcome.error is not None:
            return ["window: call %d: %s" % (layer, one_line(outcome.error))]
    if refusals:
        return ["window: " + one_line(refusals[0])]
    return []

def forget():
    # Each File > Open is an edit Undo takes back: the undo stack would keep every capture opened
    # so far (the child's address space is capped), so the steps are dropped between files.
    session.undo_stack.clear()
    import gc
    gc.collect()

wait(idle, 60)
cap(int(sys.argv[1]))
for line in sys.stdin:
    job = json.loads(line)
    path, started, problems, found = job["path"], time.perf_counter(), [], []
    try:
        calls = load_capture(path).layers
        problems += doctor(path, found)
        problems += render(path, calls, job["out"])
        problems += in_window(path, calls)
        forget()
    except BaseException as exc:  # the child's own failure: one line, the next file goes on
        problems.append("opening: %s: %s" % (type(exc).__name__, one_line(exc)))
    reply = {"problems": problems, "found": found, "seconds": round(time.perf_counter() - started, 2)}
    print(MARK + json.dumps(reply), flush=True)
"""


class Opener:
    """One child that opens capture files (see the module's text), started on first use and
    replaced after a crash or a file that outlived ``limit_s``."""

    def __init__(self, headroom_mb: int = 3072, limit_s: float = LIMIT_S) -> None:
        self.headroom_mb, self.limit_s = headroom_mb, limit_s
        self.process: subprocess.Popen[str] | None = None
        #: The last file's true findings: what the doctor found in the model itself (``TRUE_FINDINGS``).
        self.found: list[str] = []
        self._scratch = tempfile.TemporaryDirectory(prefix="attnviz-sweep-open-")
        self._log = Path(self._scratch.name) / "child.log"

    def _start(self) -> subprocess.Popen[str]:
        state = Path(self._scratch.name) / "state"
        state.mkdir(exist_ok=True)
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
            "QT_QPA_PLATFORM": "offscreen",
            "ATTNVIZ_STATE_DIR": str(state),  # no autosave, preference or recent file of the user's touched
            "LANGUAGE": "en",
            "LC_ALL": "C.UTF-8",
            "LANG": "C.UTF-8",
        }
        with open(self._log, "w") as log:
            return subprocess.Popen(
                [sys.executable, "-c", PRELUDE + f"MARK = {MARK!r}\n" + _CHILD, str(self.headroom_mb)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                env=env,
            )

    def open(self, path: str | os.PathLike[str]) -> tuple[list[str], float]:
        """The problems of opening ``path`` (one line each; none: opened every way) and seconds."""
        if self.process is None or self.process.poll() is not None:
            self.process = self._start()
        process = self.process
        assert process.stdin is not None and process.stdout is not None
        started, cpu_started = time.monotonic(), _cpu_seconds(process.pid)
        try:
            process.stdin.write(json.dumps({"path": str(path), "out": self._scratch.name}) + "\n")
            process.stdin.flush()
        except OSError:
            return self._lost("the opening child had died"), 0.0
        while True:
            cpu = _cpu_seconds(process.pid) - cpu_started
            if cpu > self.limit_s:
                return self._lost(f"opening took more than {self.limit_s:.0f} s of CPU time"), cpu
            wall = time.monotonic() - started
            if wall > self.limit_s * WALL_PER_CPU:
                return self._lost(f"opening took more than {self.limit_s * WALL_PER_CPU:.0f} s"), wall
            ready, _, _ = select.select([process.stdout], [], [], min(5.0, self.limit_s))
            if not ready:
                continue
            line = process.stdout.readline()
            if not line:  # the child died on this file
                return self._lost(f"the opening child crashed ({self._last_log_line()})"), time.monotonic() - started
            if line.startswith(MARK):
                reply = json.loads(line[len(MARK) :])
                self.found = list(reply.get("found", []))
                return list(reply["problems"]), float(reply["seconds"])

    def _lost(self, why: str) -> list[str]:
        self.close()
        return [f"opening: {why}"]

    def _last_log_line(self) -> str:
        try:
            lines = [line.strip() for line in self._log.read_text(errors="replace").splitlines() if line.strip()]
        except OSError:
            return "no log"
        return " ".join((lines[-1] if lines else "no output").split())[:200]

    def close(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        try:
            if process.stdin is not None:
                process.stdin.close()  # the child ends at the end of its input
            process.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


def _cpu_seconds(pid: int) -> float:
    """The CPU time (user and system) process ``pid`` has used; the wall clock where /proc does not
    say (a system without it: the limit is then wall-clock time)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return time.monotonic()


_OPENER: Opener | None = None


def capture_path(folder: str | os.PathLike[str], family: str, implementation: str) -> Path:
    """Where the sweep saves a family's capture on one implementation."""
    return Path(folder) / f"{family}-{implementation}.attnviz-capture"


def open_capture(path: str | os.PathLike[str]) -> dict[str, Any]:
    """``path`` opened by doctor, render and the window, in this process's opener child: the
    ``opened`` record of the sweep's verdict (``problems``: one line each, ``seconds``; ``found``:
    the doctor's true findings, where there are)."""
    global _OPENER
    if _OPENER is None:
        _OPENER = Opener()
    _OPENER.found = []
    problems, seconds = _OPENER.open(path)
    opened: dict[str, Any] = {"problems": problems, "seconds": round(seconds, 2)}
    if _OPENER.found:  # the model's own faults the doctor found (true findings), said beside
        opened["found"] = _OPENER.found
    return opened


def close_opener() -> None:
    """End this process's opener child (a worker's last family is done)."""
    global _OPENER
    if _OPENER is not None:
        _OPENER.close()
        _OPENER = None
