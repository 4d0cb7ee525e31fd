"""App benchmark: how long from typing into a cell until the heatmap on screen shows it.

Everything runs in-process with the real ``MainWindow`` on Qt's offscreen platform. One timed
edit is a real ``setData`` on an inputs-table model, so it takes the user's path: the undo
stack, the document, the tables redrawn, a snapshot to the compute thread, the engine, the
outcome queued back to the GUI thread, ``set_data`` of the heatmaps, and finally the paint.

"Painted" means that the event loop's own paint pass (the posted ``UpdateRequest`` that Qt sends
after a widget is marked dirty) has run ``ImageItem.paint`` for the data image of every visible
heatmap: that is where pyqtgraph maps the values through the colour table into a QImage and
draws it. We count those paint calls (a wrapper on ``ImageItem.paint``) instead of calling
``grab()``, which would paint a second, private copy of the widget and add its cost on top.
If the paint pass has not drawn a heatmap after a few rounds of ``processEvents`` the heatmap
is repainted by force and the edit is reported as "forced", so a broken paint path shows up
in the output rather than as a too-good number.

Timestamps come from ``time.perf_counter`` on both threads (the compute function is wrapped
through ``AppSession(compute=...)``); cold-start and window-construction figures come from
child processes and use ``time.monotonic``, which is one system-wide clock.
"""

from __future__ import annotations

import math
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from PySide6.QtWidgets import QApplication

    from attnviz.compute.attention import Outcome
    from attnviz.state.document import Snapshot, State
    from attnviz.ui.window.main_window import MainWindow

# One frame at 60 Hz: the budget for the GUI thread to be blocked.
FRAME_MS = 16.0
# An edit of a small input must be on screen well within a frame (p95).
EDIT_P95_MS = 10.0
# Building the main window, to its first paint (imports and torch excluded).
CONSTRUCTION_S = 0.35
# With a model loaded and no view of its heads open, an edit costs at most this many times the
# book's toy edit (issue 20): only the head on show is computed.
MODEL_EDIT_RATIO = 1.5
# A compute of a big case plus its drawing takes seconds; anything past this is a hang.
WAIT_TIMEOUT_S = 120.0
# Rounds of processEvents to let the paint pass happen before forcing a repaint (a dirty mark
# posts an UpdateRequest that the *next* round delivers, and the graphics scene adds one hop).
PAINT_ROUNDS = 20


# ------------------------------------------------------------------------------ instruments


class Probe:
    """Timestamps from both threads: compute start/end per version, show_view spans, paints."""

    def __init__(self) -> None:
        self.compute: dict[int, tuple[float, float]] = {}
        self.shows: list[tuple[float, float]] = []
        self.paints: list[tuple[int, float]] = []  # (id of the ImageItem, end of its paint)
        self.shown_at: dict[int, float] = {}

    def timed_compute(self, compute: Callable[[Snapshot], Outcome]) -> Callable[[Snapshot], Outcome]:
        def run(snapshot: Snapshot) -> Outcome:
            start = time.perf_counter()
            outcome = compute(snapshot)
            self.compute[snapshot.version] = (start, time.perf_counter())
            return outcome

        return run

    def painted_since(self, item_ids: set[int], since: float) -> bool:
        done = {i for i, t in self.paints if t >= since}
        return item_ids <= done


@contextmanager
def count_image_paints(probe: Probe) -> Iterator[None]:
    """Record every ``ImageItem.paint`` (the QImage render and draw) while the block runs."""
    import pyqtgraph as pg

    original = pg.ImageItem.paint

    def paint(item: Any, painter: Any, *args: Any) -> None:
        original(item, painter, *args)
        probe.paints.append((id(item), time.perf_counter()))

    pg.ImageItem.paint = paint
    try:
        yield
    finally:
        pg.ImageItem.paint = original


class CpuMeter:
    """How busy *other* processes kept the CPUs over an interval (Linux ``/proc/stat``).

    Printed next to each figure: on a small shared machine a test run in another process
    doubles latencies, and a reader must be able to tell that from a slow app.
    """

    def __init__(self) -> None:
        self._start = self._read()

    @staticmethod
    def _read() -> tuple[float, float, float] | None:
        try:
            with open("/proc/stat", encoding="ascii") as f:
                ticks = [int(x) for x in f.readline().split()[1:9]]
            hz = os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, AttributeError):
            return None
        busy = (sum(ticks) - ticks[3] - ticks[4]) / hz  # everything but idle and iowait
        times = os.times()  # this process and its finished children (cold-start runs)
        own = times.user + times.system + times.children_user + times.children_system
        return busy, own, time.monotonic()

    def share(self) -> float | None:
        """Fraction of all CPUs' time since construction spent in other processes."""
        end = self._read()
        if self._start is None or end is None or end[2] <= self._start[2]:
            return None
        busy = end[0] - self._start[0]
        own = end[1] - self._start[1]
        return max(0.0, busy - own) / ((end[2] - self._start[2]) * (os.cpu_count() or 1))

    def percent(self) -> str:
        share = self.share()
        return "  ?" if share is None else f"{share:3.0%}"

    def others(self) -> str:
        share = self.share()
        return (
            "other processes' CPU use unknown"
            if share is None
            else f"other processes used {share:.0%} of the CPUs meanwhile"
        )


# ------------------------------------------------------------------------------ one edit


@dataclass
class EditTiming:
    """Milliseconds of one edit, split where the work changes hands."""

    total: float  # setData called -> heatmaps painted
    gui_edit: float  # setData returning: undo stack, document, tables, snapshot, submit
    compute: float  # on the compute thread: engine + numpy conversion
    set_data: float  # ResultsPanel.show_view on the GUI thread
    paint: float  # outcomeShown -> paint pass done
    gui_cpu: float  # CPU time of the GUI thread over the whole edit (robust to other processes)
    computations: int  # computations started for this edit (1 expected)
    forced: bool  # the paint pass did not draw a heatmap by itself


@dataclass
class Series:
    name: str
    timings: list[EditTiming] = field(default_factory=list)

    def values(self, attr: str = "total") -> list[float]:
        return [getattr(t, attr) for t in self.timings]

    def median(self, attr: str = "total") -> float:
        return statistics.median(self.values(attr))

    def p95(self, attr: str = "total") -> float:
        return float(np.percentile(self.values(attr), 95))


def wait_shown(app: QApplication, win: MainWindow, version: int, timeout_s: float = WAIT_TIMEOUT_S) -> None:
    """Run the event loop until the window has drawn the outcome of ``version`` and is idle.

    A nested QEventLoop sleeps in the OS instead of spinning: on a 2-core machine a busy wait
    would take a core from the compute thread it is waiting for.
    """
    from PySide6.QtCore import QEventLoop, QTimer

    def done() -> bool:
        return win.session.shown_version >= version and not win.session.scheduler.busy

    deadline = time.perf_counter() + timeout_s
    while not done():
        if time.perf_counter() > deadline:
            raise TimeoutError(f"no result for document version {version} after {timeout_s:.0f} s")
        loop = QEventLoop()
        win.session.outcomeShown.connect(loop.quit)
        win.session.scheduler.busyChanged.connect(loop.quit)
        QTimer.singleShot(50, loop.quit)  # re-check even if a signal was missed
        if not done():
            loop.exec()
        win.session.outcomeShown.disconnect(loop.quit)
        win.session.scheduler.busyChanged.disconnect(loop.quit)


def visible_image_ids(win: MainWindow) -> set[int]:
    return {id(m.image_item) for m in win.results.maps if m.isVisible()}


def flush_paint(app: QApplication, win: MainWindow, probe: Probe, since: float) -> bool:
    """Let the event loop paint; return True if a repaint had to be forced."""
    want = visible_image_ids(win)
    for _ in range(PAINT_ROUNDS):
        app.processEvents()
        if probe.painted_since(want, since):
            return False
    win.results.repaint()
    return not probe.painted_since(want, since)  # still not painted: reported as forced too


def timed_edit(
    app: QApplication, win: MainWindow, probe: Probe, role: str, row: int, col: int, text: str
) -> EditTiming:
    model = win.inputs.models[role]
    index = model.index(row, col)
    started = win.session.scheduler.started_count
    shows_before = len(probe.shows)
    cpu0 = time.thread_time()
    t0 = time.perf_counter()
    if not model.setData(index, text):
        raise RuntimeError(f"the {role} table refused {text!r}")
    t1 = time.perf_counter()
    version = win.session.document.version
    wait_shown(app, win, version)
    t_shown = probe.shown_at[version]
    forced = flush_paint(app, win, probe, t_shown)
    t_end = time.perf_counter()
    cpu1 = time.thread_time()
    c0, c1 = probe.compute[version]
    s0, s1 = probe.shows[-1] if len(probe.shows) > shows_before else (t_shown, t_shown)
    ms = 1e3
    return EditTiming(
        total=(t_end - t0) * ms,
        gui_edit=(t1 - t0) * ms,
        compute=(c1 - c0) * ms,
        set_data=(s1 - s0) * ms,
        paint=(t_end - t_shown) * ms,
        gui_cpu=(cpu1 - cpu0) * ms,
        computations=win.session.scheduler.started_count - started,
        forced=forced,
    )


def edit_series(app: QApplication, win: MainWindow, probe: Probe, name: str, edits: int, warmup: int = 3) -> Series:
    """``edits`` timed edits of query (0, 0) after ``warmup`` untimed ones, one after another."""
    series = Series(name)
    base = float(win.session.head_view().queries[0, 0, 0])
    for i in range(warmup + edits):
        # A new value every time: setting the stored value again is (rightly) not an edit.
        timing = timed_edit(app, win, probe, "queries", 0, 0, repr(base + 0.01 * (i + 1)))
        if i >= warmup:
            series.timings.append(timing)
    return series


# ------------------------------------------------------------------------------ states


def random_state(
    batch: int, n: int, d: int, *, scoring: str = "scaled_dot", valid_fraction: float = 0.75, seed: int = 0
) -> State:
    """Random Q, K, V (batch, n, d) with 1-D valid lengths (a padded batch) and ``scoring``."""
    from attnviz.state.document import State

    rng = np.random.default_rng(seed)
    queries, keys, values = (rng.standard_normal((batch, n, d)) for _ in range(3))
    state = State.from_tensors(queries, keys, values)
    if batch > 1:
        # Different lengths per batch element, as in a real padded batch; never 0 (no empty rows).
        state.lens_1d = rng.integers(max(1, n // 4), n + 1, size=batch).astype(np.int64)
    else:
        state.lens_1d = np.array([max(1, int(n * valid_fraction))], dtype=np.int64)
    state.lens_2d = np.repeat(state.lens_1d[:, None], n, axis=1)
    state.settings = replace(state.settings, scoring=scoring, lens_mode="1d", dropout=0.0, train=False)
    return state


def load_state(app: QApplication, win: MainWindow, state: State, text: str) -> None:
    from attnviz.state.document import ReplaceState

    win.session.push(ReplaceState(state, text))
    wait_shown(app, win, win.session.document.version)


# ------------------------------------------------------------------------------ scenarios


@dataclass
class HeartbeatResult:
    edit_gap: float  # longest gap overlapping setData (GUI thread)
    compute_gap: float  # longest gap overlapping the computation (compute thread busy)
    draw_gap: float  # longest gap overlapping outcome arrival -> painted (GUI thread drawing)
    compute_ms: float
    set_data_ms: float
    paint_ms: float
    beats: int
    prepare_ms: float = 0.0  # engine done -> outcome on the GUI thread (display preparation)


class Heartbeat:
    """A 5 ms precise timer on the GUI thread and the times it ticked: a gap between ticks is
    time the GUI thread could not answer. ``run`` pumps the event loop for a while."""

    def __init__(self, app: QApplication) -> None:
        from PySide6.QtCore import Qt, QTimer

        self.app = app
        self.beats: list[float] = []
        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(5)
        self.timer.timeout.connect(lambda: self.beats.append(time.perf_counter()))

    def start(self) -> None:
        self.timer.start()
        self.run(0.05)  # a baseline of beats before what is measured

    def run(self, seconds: float) -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            self.app.processEvents()
            time.sleep(0.001)

    def stop(self) -> None:
        self.timer.stop()

    def longest_gaps(self, phases: dict[str, tuple[float, float]]) -> dict[str, float]:
        """The longest gap (ms) overlapping each phase (start, end); a gap overlapping several
        counts for the first of them in ``phases``' order."""
        longest = dict.fromkeys(phases, 0.0)
        for a, b in zip(self.beats, self.beats[1:]):
            for phase, (lo, hi) in phases.items():
                if min(b, hi) > max(a, lo):
                    longest[phase] = max(longest[phase], (b - a) * 1e3)
                    break
        return longest


def heartbeat_edit(app: QApplication, win: MainWindow, probe: Probe, text: str) -> HeartbeatResult:
    """One edit of a cell while a 5 ms timer ticks on the GUI thread; gaps split by phase.

    A gap that overlaps the GUI thread's own work (the setData of the edit, or drawing the
    result: from the engine's end, through the display preparation, until it is painted and the
    result it replaced is freed) is counted there; the computation is charged only with gaps
    during which the GUI thread had nothing of its own to do, which is what "the GUI stays
    responsive while the engine runs" means.
    """
    heartbeat = Heartbeat(app)
    heartbeat.start()
    model = win.inputs.models["queries"]
    t0 = time.perf_counter()
    model.setData(model.index(0, 0), text)
    t1 = time.perf_counter()
    version = win.session.document.version
    wait_shown(app, win, version)
    t_shown = probe.shown_at[version]
    flush_paint(app, win, probe, t_shown)
    t_end = time.perf_counter()
    # Beats after the paint close the last gap; the replaced result is freed (off the GUI
    # thread) 100 ms after the new one arrived, and that is part of drawing too.
    heartbeat.run(0.2)
    tail = time.perf_counter()
    heartbeat.stop()
    c0, c1 = probe.compute[version]
    s0, s1 = probe.shows[-1]
    # Drawing starts when the engine is done (the display is then prepared on the compute thread)
    # and ends once the previous result is freed.
    longest = heartbeat.longest_gaps({"edit": (t0, t1), "draw": (c1, tail), "compute": (c0, c1)})
    return HeartbeatResult(
        longest["edit"],
        longest["compute"],
        longest["draw"],
        (c1 - c0) * 1e3,
        (s1 - s0) * 1e3,
        (t_end - t_shown) * 1e3,
        len(heartbeat.beats),
        (s0 - c1) * 1e3,
    )


@dataclass
class BurstResult:
    edits: int
    computations: int
    final_ok: bool
    detail: str
    loop_ms: float  # the setData calls themselves
    until_final_ms: float  # first setData -> final state painted
    after_last_ms: float  # last setData -> final state painted


def burst(app: QApplication, win: MainWindow, probe: Probe, edits: int) -> BurstResult:
    """``edits`` setData calls in a tight loop on one cell; the last one must be what is shown."""
    from attnviz.compute.attention import run_state

    model = win.inputs.models["queries"]
    index = model.index(0, 0)
    started = win.session.scheduler.started_count
    t0 = time.perf_counter()
    for i in range(edits):
        model.setData(index, str(i))
    t1 = time.perf_counter()
    version = win.session.document.version
    wait_shown(app, win, version)
    flush_paint(app, win, probe, probe.shown_at[version])
    t_end = time.perf_counter()
    state = win.session.document.state
    expected = run_state(state).view
    shown = [m.values for m in win.results.maps]
    problems = []
    held = state.head_view().queries[0, 0, 0]
    if held != edits - 1:
        problems.append(f"document holds {held}, last edit was {edits - 1}")
    if win.session.shown_version != win.session.document.version:
        problems.append(f"shown version {win.session.shown_version} != document version {win.session.document.version}")
    if (
        expected is None
        or len(shown) == 0
        or any(
            v is None or not np.allclose(v, expected.weights[b], rtol=1e-5, atol=1e-7, equal_nan=True)
            for b, v in enumerate(shown)
        )
    ):
        problems.append("the heatmaps differ from the weights of the final state")
    return BurstResult(
        edits,
        win.session.scheduler.started_count - started,
        not problems,
        "; ".join(problems) or "shown = last edit",
        (t1 - t0) * 1e3,
        (t_end - t0) * 1e3,
        (t_end - t1) * 1e3,
    )


# Child process for cold start: the same steps as ``attnviz.cli.gui.main`` (QApplication,
# MainWindow, show, exec), plus stamps. "painted" is the end of the first paint pass that
# reached the main window; "result" is when the data image of every visible heatmap has been
# painted after the first outcome was shown.
_COLD_CHILD = textwrap.dedent(
    """
    import os, sys, time
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QEvent, QObject, QTimer
    from PySide6.QtWidgets import QApplication
    import pyqtgraph as pg

    paints = []
    original = pg.ImageItem.paint
    def paint(item, painter, *args):
        original(item, painter, *args)
        paints.append(id(item))
    pg.ImageItem.paint = paint

    app = QApplication.instance() or QApplication(sys.argv[:1])
    from attnviz.ui.window.main_window import MainWindow

    stamps = {}
    def stamp(name):
        if name not in stamps:
            stamps[name] = time.monotonic()
            print(name, repr(stamps[name]), flush=True)
        if len(stamps) == 2:
            window.close()
            app.quit()

    class FirstPaint(QObject):
        def eventFilter(self, obj, event):
            if event.type() == QEvent.Type.Paint and "painted" not in stamps:
                QTimer.singleShot(0, lambda: stamp("painted"))  # after this paint pass
            return False

    window = MainWindow()
    first_paint = FirstPaint()
    window.installEventFilter(first_paint)

    def on_shown(_outcome):
        want = {id(m.image_item) for m in window.results.maps if m.isVisible()}
        for _ in range(50):
            app.processEvents()
            if want <= set(paints):
                break
        else:
            window.results.repaint()
            print("forced", flush=True)
        stamp("result")

    window.session.outcomeShown.connect(on_shown)
    window.show()
    QTimer.singleShot(120000, lambda: (print("timeout", flush=True), app.exit(3)))
    sys.exit(app.exec())
    """
)


# Child process for window construction: modules imported first (not timed), then
# MainWindow() and show() until the end of the first paint pass. The child exits right after,
# before the first computation would import torch: construction never waits for PyTorch.
_CONSTRUCT_CHILD = textwrap.dedent(
    """
    import os, sys, time
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QEvent, QObject, QTimer
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    from attnviz.ui.window.main_window import MainWindow

    class FirstPaint(QObject):
        def eventFilter(self, obj, event):
            if event.type() == QEvent.Type.Paint and not done:
                done.append(1)
                QTimer.singleShot(0, finish)  # after this paint pass
            return False

    def finish():
        print("built", repr(built - t0), "painted", repr(time.monotonic() - t0), "torch", "torch" in sys.modules,
              flush=True)
        app.exit(0)

    done = []
    t0 = time.monotonic()
    window = MainWindow()
    built = time.monotonic()
    first_paint = FirstPaint()
    window.installEventFilter(first_paint)
    window.show()
    QTimer.singleShot(60000, lambda: (print("timeout", flush=True), app.exit(3)))
    code = app.exec()
    window.session.shutdown()
    sys.exit(code)
    """
)


def _child_env() -> dict[str, str]:
    """The children's environment: offscreen Qt, and byte code cached as in any installed copy
    (with PYTHONDONTWRITEBYTECODE set, as on some CI machines, every child compiled the modules
    the window imports again: +100-200 ms that no user's start has)."""
    env = dict(os.environ)
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def window_construction(runs: int) -> tuple[list[float], list[float], list[str]]:
    """(constructor, constructor -> first paint) in ms for ``runs`` child processes, and notes."""
    env = _child_env()
    built: list[float] = []
    painted: list[float] = []
    notes: list[str] = []
    for _ in range(runs):
        proc = subprocess.run(
            [sys.executable, "-c", _CONSTRUCT_CHILD], capture_output=True, text=True, env=env, timeout=120
        )
        words = proc.stdout.split()
        if proc.returncode != 0 or "built" not in words:
            notes.append(f"child exit {proc.returncode}: {proc.stderr.strip()[-300:]}")
            continue
        built.append(float(words[words.index("built") + 1]) * 1e3)
        painted.append(float(words[words.index("painted") + 1]) * 1e3)
        if words[words.index("torch") + 1] != "False":
            notes.append("torch was imported before the first paint")
    return built, painted, notes


@dataclass
class ColdStart:
    painted_ms: list[float]
    result_ms: list[float]
    torch_ms: list[float]
    notes: list[str]


def cold_start(runs: int) -> ColdStart:
    env = _child_env()
    painted: list[float] = []
    result: list[float] = []
    torch_ms: list[float] = []
    notes: list[str] = []
    for _ in range(runs):
        start = time.monotonic()
        proc = subprocess.run([sys.executable, "-c", _COLD_CHILD], capture_output=True, text=True, env=env, timeout=180)
        stamps = {}
        for line in proc.stdout.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] in ("painted", "result"):
                stamps[parts[0]] = (float(parts[1]) - start) * 1e3
            elif line.strip():
                notes.append(f"child said: {line.strip()}")
        if proc.returncode != 0 or len(stamps) != 2:
            notes.append(f"child exit {proc.returncode}: {proc.stderr.strip()[-300:]}")
            continue
        painted.append(stamps["painted"])
        result.append(stamps["result"])
    for _ in range(runs):
        start = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-c", "import time, torch; print(repr(time.monotonic()))"],
            capture_output=True,
            text=True,
            env=env,
            timeout=180,
        )
        if proc.returncode == 0:
            torch_ms.append((float(proc.stdout.split()[-1]) - start) * 1e3)
        else:
            notes.append(f"import torch failed: {proc.stderr.strip()[-300:]}")
    return ColdStart(painted, result, torch_ms, notes)


# ------------------------------------------------------------------------------ the run


@dataclass(frozen=True)
class Plan:
    toy_edits: int
    medium: tuple[int, int, int]  # batch, n, d for the p95 < 10 ms case
    medium_edits: int
    large_n: int
    large_edits: int
    heartbeat_n: int
    heartbeat_edits: int
    burst_edits: int
    cold_runs: int
    construction_runs: int
    heads: tuple[int, int, int, int]  # layers, heads, tokens, batch of the model-run case
    model: tuple[int, int, int, int]  # layers, heads, tokens, batch of the model edit case (no heads view open)
    model_edits: int
    head_switches: int
    long_n: int  # tokens of the long-context case (its overview, then an exact tile)


FULL = Plan(50, (8, 64, 64), 50, 1024, 15, 4096, 5, 200, 3, 7, (6, 12, 128, 3), (6, 12, 64, 1), 50, 15, 32768)
QUICK = Plan(5, (2, 16, 8), 5, 64, 3, 256, 1, 20, 1, 1, (2, 4, 16, 2), (2, 4, 16, 1), 5, 3, 1024)


def _ensure_app() -> QApplication:
    # Before the first Qt import that creates anything: a benchmark must not open windows.
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        app = QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    return app


def _make_window(probe: Probe) -> MainWindow:
    from attnviz.ui.app.session import AppSession
    from attnviz.ui.scheduler import run_in_app
    from attnviz.ui.window.main_window import MainWindow

    # The app's own compute function (it also sets torch's thread count for the app), timed.
    win = MainWindow(session=AppSession(compute=probe.timed_compute(run_in_app)))
    original_show = win.results.show_view

    def show_view(view: Any, batch: int) -> None:
        s0 = time.perf_counter()
        original_show(view, batch)
        probe.shows.append((s0, time.perf_counter()))

    win.results.show_view = show_view  # type: ignore[method-assign]
    win.session.outcomeShown.connect(lambda outcome: probe.shown_at.__setitem__(outcome.version, time.perf_counter()))
    return win


def _yes(ok: bool) -> str:
    return "yes" if ok else "NO"


def _row(name: str, s: Series, target: str, ok: bool, meter: CpuMeter) -> str:
    forced = sum(t.forced for t in s.timings)
    extra = sum(t.computations for t in s.timings) - len(s.timings)
    flags = (f" forced:{forced}" if forced else "") + (f" extra computations:{extra}" if extra else "")
    return (
        f"{name:<38} {len(s.timings):>5} {s.median():>8.1f} {s.p95():>7.1f}  {target:<15} {_yes(ok):>4}  |"
        f" {s.median('gui_edit'):>6.1f} {s.median('compute'):>8.1f} {s.median('set_data'):>8.1f}"
        f" {s.median('paint'):>6.1f} {s.median('gui_cpu'):>7.1f}  {meter.percent():>6}{flags}"
    )


def run(quick: bool = False) -> int:
    """Run the app benchmark and print the table; 0 when it ran and the checks held (the
    final burst state is the last edit, every edit painted without forcing), else 1. Missed
    timing targets are printed as NO but do not change the exit status: they are numbers of
    this machine, not bugs."""
    plan = QUICK if quick else FULL
    # A private preferences folder: the user's saved layout (docks left open, a language)
    # would otherwise change what every edit redraws, and the benchmark must not write it.
    os.environ["ATTNVIZ_STATE_DIR"] = tempfile.mkdtemp(prefix="attnviz-bench-")
    app = _ensure_app()
    import pyqtgraph as pg
    import PySide6
    import torch

    print(
        f"attnviz app benchmark{' (quick: small sizes, few edits)' if quick else ''}: "
        f"Qt platform {app.platformName()}, PySide6 {PySide6.__version__}, pyqtgraph {pg.__version__}, "
        f"torch {torch.__version__} CPU with {torch.get_num_threads()} threads, {os.cpu_count()} CPUs"
    )
    print(
        "One edit = model.setData on one input cell -> undo stack -> document -> tables -> compute thread -> "
        "engine -> outcome back on the GUI thread -> heatmap set_data -> the event loop's paint pass has run "
        "ImageItem.paint (colour-table render to QImage + draw) for every visible heatmap. Edits run one after "
        "another, 3 untimed warm-up edits per case."
    )
    ok = True
    probe = Probe()
    try:
        with count_image_paints(probe):
            win = _make_window(probe)
            try:
                win.show()
                wait_shown(app, win, win.session.document.version)
                ok &= _edit_cases(app, win, probe, plan)
                ok &= _heartbeat_case(app, win, probe, plan)
                ok &= _burst_case(app, win, probe, plan)
                ok &= _heads_case(app, win, probe, plan)
                ok &= _long_case(app, win, plan)
            finally:
                win.close()  # also waits for the compute thread to end
                win.deleteLater()
                app.processEvents()
        from .live_bench import live_case

        ok &= live_case(app, 4 if quick else 20)
        ok &= _construction_case(plan)
        ok &= _cold_case(plan)
    except (TimeoutError, RuntimeError, subprocess.TimeoutExpired) as exc:
        print(f"app benchmark stopped: {exc}")
        return 1
    return 0 if ok else 1


def _edit_cases(app: QApplication, win: MainWindow, probe: Probe, plan: Plan) -> bool:
    print()
    print(
        f"{'case':<38} {'edits':>5} {'median':>8} {'p95':>7}  {'target':<15} {'met':>4}  |"
        f" {'edit':>6} {'compute':>8} {'set_data':>8} {'paint':>6} {'GUI cpu':>7}  {'others':>6}"
    )
    meter = CpuMeter()
    toy = edit_series(app, win, probe, "toy (2,1,10) additive preset", plan.toy_edits)
    print(_row(toy.name, toy, "p95 < 10 ms", toy.p95() < EDIT_P95_MS, meter))
    model = _model_edit_series(app, win, probe, plan)
    ratio = model.median() / toy.median()
    target = f"<= {MODEL_EDIT_RATIO:g}x toy"
    print(_row(model.name, model, target, ratio <= MODEL_EDIT_RATIO, meter) + f"  ({ratio:.2f}x the toy's median)")
    b, n, d = plan.medium
    load_state(app, win, random_state(b, n, d, scoring="scaled_dot"), "benchmark medium")
    meter = CpuMeter()
    medium = edit_series(app, win, probe, f"({b},{n},{n}) d={d} scaled_dot, lens", plan.medium_edits)
    print(_row(medium.name, medium, "p95 < 10 ms", medium.p95() < EDIT_P95_MS, meter))
    n = plan.large_n
    load_state(app, win, random_state(1, n, 64, scoring="scaled_dot"), "benchmark large")
    meter = CpuMeter()
    large = edit_series(app, win, probe, f"(1,{n},{n}) d=64 scaled_dot, lens 3/4", plan.large_edits, warmup=2)
    print(_row(large.name, large, "median < 100 ms", large.median() < 100.0, meter))
    print(
        "All times in ms. Right of | the medians of the parts: edit = setData returning (undo stack, document, "
        "tables, snapshot, submit); compute = on the compute thread (engine + numpy copies); set_data = "
        "ResultsPanel.show_view; paint = outcomeShown -> paint pass done; GUI cpu = CPU time the GUI thread "
        "used per edit (what a faster GUI path would save, little affected by other load); others = CPU share "
        "other processes took meanwhile (high: wall-clock figures are inflated by them)."
    )
    forced = sum(t.forced for s in (toy, model, medium, large) for t in s.timings)
    if forced:
        print(f"WARNING: {forced} edits were not painted by the event loop and had to be repainted by force")
    return forced == 0


def _model_edit_series(app: QApplication, win: MainWindow, probe: Probe, plan: Plan) -> Series:
    """Edits of a model run's head on show, with no view of the model's heads open: a model's
    many heads must not make an edit of one of them cost more than the book's toy."""
    layers, heads, tokens, batch = plan.model
    load_state(app, win, model_run_state(layers, heads, tokens, batch), "benchmark model edits")
    # A model that arrives opens its heads and the layers x heads overview: closed again, the
    # main view in front, as a user editing one head would have it.
    for tool in (win.heads_dock, win.overview_dock):
        tool.hide()
    win.tool_tabs.setCurrentIndex(0)
    wait_shown(app, win, win.session.document.version)
    name = f"model {layers}x{heads} heads ({batch},{tokens},{tokens}) d=64"
    return edit_series(app, win, probe, name, plan.model_edits)


def _heartbeat_case(app: QApplication, win: MainWindow, probe: Probe, plan: Plan) -> bool:
    n = plan.heartbeat_n
    print()
    print(
        f"GUI thread responsiveness, (1,{n},{n}) d=64 scaled_dot, lens 3/4: a 5 ms PreciseTimer ticks on the "
        f"GUI thread while one cell is edited; longest gap between ticks, by what was happening "
        f"({plan.heartbeat_edits} edit{'s' if plan.heartbeat_edits > 1 else ''}, worst shown):"
    )
    from attnviz.ui.scheduler import set_app_memory_budget

    # The GUI thread drawing every stage of a (4096, 4096) head is what is measured: over the
    # window's memory budget (the long-context view would take it), so the budget is raised.
    set_app_memory_budget(math.inf)
    try:
        load_state(app, win, random_state(1, n, 64, scoring="scaled_dot"), "benchmark heartbeat")
        meter = CpuMeter()
        results = [heartbeat_edit(app, win, probe, repr(0.5 + 0.01 * i)) for i in range(plan.heartbeat_edits)]
    finally:
        set_app_memory_budget(None)
    worst = HeartbeatResult(
        max(r.edit_gap for r in results),
        max(r.compute_gap for r in results),
        max(r.draw_gap for r in results),
        statistics.median(r.compute_ms for r in results),
        statistics.median(r.set_data_ms for r in results),
        statistics.median(r.paint_ms for r in results),
        sum(r.beats for r in results),
        statistics.median(r.prepare_ms for r in results),
    )
    typical = statistics.median(r.compute_gap for r in results)
    print(
        f"  while computing ({worst.compute_ms:.0f} ms on the compute thread, GUI thread idle): longest gap "
        f"{worst.compute_gap:.1f} ms (median over the edits {typical:.1f} ms)   target < 16 ms: "
        f"{_yes(worst.compute_gap < FRAME_MS)}"
    )
    print(
        f"  while drawing the result on the GUI thread (after the engine, its pictures prepared on the compute "
        f"thread {worst.prepare_ms:.0f} ms; set_data {worst.set_data_ms:.0f} ms, outcomeShown -> painted "
        f"{worst.paint_ms:.0f} ms; until the replaced result is freed): longest gap {worst.draw_gap:.1f} ms   "
        f"target < 16 ms: {_yes(worst.draw_gap < FRAME_MS)}"
    )
    print(
        f"  during the edit itself (setData on the GUI thread, any gap that overlaps it): longest gap "
        f"{worst.edit_gap:.1f} ms"
    )
    print(f"  ({meter.others()})")
    return True


def _burst_case(app: QApplication, win: MainWindow, probe: Probe, plan: Plan) -> bool:
    from attnviz.teaching.presets import DEFAULT_PRESET

    win.session.load_preset(DEFAULT_PRESET)
    wait_shown(app, win, win.session.document.version)
    meter = CpuMeter()
    r = burst(app, win, probe, plan.burst_edits)
    print()
    print(f"Burst: {r.edits} setData calls in a tight loop on one cell (values 0..{r.edits - 1}), toy preset:")
    print(
        f"  computations run: {r.computations} of {r.edits} edits; final shown state equals the last edit: "
        f"{_yes(r.final_ok)} ({r.detail})"
    )
    print(
        f"  the {r.edits} setData calls took {r.loop_ms:.0f} ms ({r.loop_ms / r.edits:.2f} ms each); first edit -> "
        f"final state painted {r.until_final_ms:.0f} ms; last edit -> painted {r.after_last_ms:.0f} ms "
        f"({meter.others()})"
    )
    return r.final_ok


def model_run_state(layers: int, heads: int, tokens: int, batch: int, d: int = 64, seed: int = 0) -> State:
    """A random encoder run: ``layers`` calls of ``heads`` heads over ``tokens`` tokens, a padded
    batch (Hugging Face attention_mask), tokens on the axes; head 0 of call 0 on show."""
    from attnviz.state.document import State
    from attnviz.state.run import AttentionCall, MaskArguments, ModelRun

    rng = np.random.default_rng(seed)
    lengths = [tokens - (tokens // 4) * i for i in range(batch)]
    mask = np.array([[1] * n + [0] * (tokens - n) for n in lengths])

    def qkv() -> np.ndarray:
        return rng.standard_normal((batch, heads, tokens, d)).astype(np.float32)

    calls = tuple(
        AttentionCall(
            f"encoder.layer.{i}.attention.self", qkv(), qkv(), qkv(), masks=MaskArguments(attention_mask=mask)
        )
        for i in range(layers)
    )
    words = np.array([[f"w{j}" if j < n else "[PAD]" for j in range(tokens)] for n in lengths])
    return State.from_run(ModelRun(calls, query_tokens=words, key_tokens=words))


def timed_focus(
    app: QApplication,
    win: MainWindow,
    probe: Probe,
    layer: int,
    head: int,
    heatmaps: Callable[[], list[Any]],
    *,
    new_data: bool = True,
) -> float:
    """ms from ``set_focus`` until the event loop has painted every heatmap ``heatmaps()`` lists
    (``new_data``), or, when the maps keep their pictures (another head of the grid's layer:
    only the marker moves), until the posted repaints have been delivered."""
    t0 = time.perf_counter()
    win.session.set_focus(layer, head)
    wait_shown(app, win, win.session.document.version)
    if not new_data:
        for _ in range(3):  # the dirty marks post an UpdateRequest; the scene adds one hop
            app.processEvents()
        return (time.perf_counter() - t0) * 1e3
    # Maps scrolled out of sight are not painted (nor do they need to be).
    want = {id(m.image_item) for m in heatmaps() if m.isVisible() and not m.visibleRegion().isEmpty()}
    for _ in range(PAINT_ROUNDS):
        app.processEvents()
        if probe.painted_since(want, t0):
            break
    else:
        raise RuntimeError("a heatmap was not painted after a head was selected")
    return (time.perf_counter() - t0) * 1e3


def _heads_case(app: QApplication, win: MainWindow, probe: Probe, plan: Plan) -> bool:
    layers, heads, tokens, batch = plan.heads
    load_state(app, win, model_run_state(layers, heads, tokens, batch), "benchmark model run")
    grid = win.heads_dock
    grid.show()
    grid.raise_()
    view: Any = grid.view()
    maps = lambda: view.maps  # noqa: E731
    meter = CpuMeter()
    # Another layer: a new grid of every head (new weights in all of them).
    layer_ms = [timed_focus(app, win, probe, (i + 1) % layers, 0, maps) for i in range(plan.head_switches)]
    # Another head of the same layer, grid on show: the grid marks it, the weights stay.
    head_ms = [
        timed_focus(app, win, probe, 0, (i + 1) % heads, maps, new_data=False) for i in range(plan.head_switches)
    ]
    win.tool_tabs.setCurrentIndex(0)  # the main maps (3 batch elements, tokens on the axes)
    main_ms = [
        timed_focus(app, win, probe, 0, i % heads, lambda: win.results.maps) for i in range(1, plan.head_switches + 1)
    ]
    print()
    print(
        f"Model run: {layers} layers x {heads} heads, {tokens} tokens, batch {batch} (padded), d = 64, tokens on the "
        f"axes; {plan.head_switches} selections each, set_focus -> every heatmap of the view painted by the event "
        f"loop:"
    )
    lm, hm, mm = (statistics.median(v) for v in (layer_ms, head_ms, main_ms))
    print(
        f"  another layer, heads grid of {heads} maps redrawn: median {lm:.1f} ms (max {max(layer_ms):.1f})   "
        f"target < 150 ms: {_yes(lm < 150)}"
    )
    print(
        f"  another head, heads grid on show: median {hm:.1f} ms (max {max(head_ms):.1f})   target < 50 ms: "
        f"{_yes(hm < 50)}"
    )
    print(
        f"  another head, main window's {len(win.results.maps)} maps: median {mm:.1f} ms (max {max(main_ms):.1f})   "
        f"target < 50 ms: {_yes(mm < 50)}"
    )
    print(f"  ({meter.others()})")
    grid.hide()
    return True


def long_state(n: int, d: int = 64, window: int = 4096, seed: int = 0) -> State:
    """``n`` tokens of self-attention, float32, scaled dot product, a causal sliding window of
    ``window`` keys and the last 8.5% of the keys padding (a Hugging Face attention_mask), as
    the long-context benchmark's input."""
    from attnviz.state.document import Settings, State
    from attnviz.state.run import MaskArguments

    rng = np.random.default_rng(seed)
    pad = np.ones((1, n), np.int64)
    pad[0, n - int(0.085 * n) :] = 0
    queries, keys, values = (rng.standard_normal((1, n, d)).astype(np.float32) for _ in range(3))
    return State.from_tensors(
        queries,
        keys,
        values,
        settings=Settings(scoring="scaled_dot", lens_mode="none", window=min(window, n // 4)),
        masks=MaskArguments(attention_mask=pad),
        causal="top_left",
    )


def _long_case(app: QApplication, win: MainWindow, plan: Plan) -> bool:
    """A long input opens the long-context view; a 5 ms timer ticks on the GUI thread from the
    edit that loads it until its overview and first exact tile are drawn. Gaps while the overview
    computes (on its thread) and while the results are drawn (overview, lines, tile), apart."""

    from attnviz.engine import set_default_memory_budget
    from attnviz.state.document import ReplaceState
    from attnviz.ui.views.long_context import MAX_BINS

    n = plan.long_n
    view: Any = win.long_dock.view()  # built now, so its computations can be watched
    state = long_state(n)
    heartbeat = Heartbeat(app)
    meter = CpuMeter()
    # Every stage of the full matrix at once is over the budget, so the main view refuses and the
    # long-context view takes over (at 32768 tokens the default budget does; smaller, one is set).
    set_default_memory_budget(None if n >= 16384 else 8 * n * n)
    try:
        heartbeat.start()
        t0 = time.perf_counter()
        win.session.push(ReplaceState(state, "benchmark long context"))
        t1 = time.perf_counter()
        deadline = t0 + WAIT_TIMEOUT_S
        while view.tile is None:
            failed = view.result is not None and view.result.error
            if failed:
                raise RuntimeError(f"the long-context view could not show {n} tokens: {failed}")
            if time.perf_counter() > deadline:
                raise TimeoutError(f"the long-context view showed no tile of {n} tokens in {WAIT_TIMEOUT_S:.0f} s")
            app.processEvents()
            time.sleep(0.001)
        t_end = time.perf_counter()
        heartbeat.run(0.2)
        tail = time.perf_counter()
        heartbeat.stop()
    finally:
        set_default_memory_budget(None)
    # When the overview reached the GUI thread, before the view drew it.
    t_overview = view.overview.arrived_at
    longest = heartbeat.longest_gaps({"edit": (t0, t1), "compute": (t1, t_overview), "draw": (t_overview, tail)})
    print()
    print(
        f"Long context: {n} x {n} tokens, d = 64, float32, causal sliding window {state.settings.window} + padding; "
        f"the edit that loads it -> the main view refuses (over the memory budget) -> the long-context view opens, "
        f"its overview ({MAX_BINS} x {MAX_BINS} bins) -> an exact tile, a 5 ms timer ticking on the GUI thread "
        f"throughout:"
    )
    print(
        f"  while the overview computes ({(t_overview - t0) * 1e3:.0f} ms from the edit; on the GUI thread "
        f"meanwhile the main view refuses and the long-context tab opens): longest gap "
        f"{longest['compute']:.1f} ms   target < 16 ms: {_yes(longest['compute'] < FRAME_MS)}"
    )
    print(
        f"  while the overview, its lines and the tile are computed and drawn ({(t_end - t_overview) * 1e3:.0f} ms): "
        f"longest gap {longest['draw']:.1f} ms   target < 16 ms: {_yes(longest['draw'] < FRAME_MS)}"
    )
    print(
        f"  during the edit itself (the new document's {n} rows into the tables, on the GUI thread, "
        f"{(t1 - t0) * 1e3:.0f} ms): longest gap {longest['edit']:.1f} ms"
    )
    print(f"  ({meter.others()})")
    win.long_dock.hide()
    return True


def _construction_case(plan: Plan) -> bool:
    meter = CpuMeter()
    built, painted, notes = window_construction(plan.construction_runs)
    print()
    if not painted:
        print("Window construction: failed", *notes)
        return False
    print(
        f"Window construction, median of {len(painted)} child processes (modules already imported; the first "
        f"computation, which imports torch, starts after the first paint):"
    )
    med = statistics.median(painted) / 1e3
    print(
        f"  MainWindow() -> end of the first paint pass: {med:.3f} s (range {min(painted) / 1e3:.3f}-"
        f"{max(painted) / 1e3:.3f} s; the constructor alone {statistics.median(built) / 1e3:.3f} s)   "
        f"target <= {CONSTRUCTION_S:.2f} s: {_yes(med <= CONSTRUCTION_S)}"
    )
    print(f"  ({meter.others()})")
    for note in notes:
        print(f"  {note}")
    return not any("torch" in n for n in notes)


def _cold_case(plan: Plan) -> bool:
    meter = CpuMeter()
    c = cold_start(plan.cold_runs)
    print()
    print(
        f"Cold start, median of {plan.cold_runs} child processes each (launch of the interpreter -> stamp): "
        "the child does what `python -m attnviz` does (QApplication, MainWindow, show, exec)"
    )

    def med(values: list[float]) -> str:
        return f"{statistics.median(values):8.0f} ms" if values else "  failed"

    print(f"  window painted (end of the first paint pass):    {med(c.painted_ms)}")
    print(f"  first result drawn (heatmaps painted):           {med(c.result_ms)}")
    print(f"  python -c 'import torch' (to the end of import): {med(c.torch_ms)}")
    print(f"  ({meter.others()})")
    for note in c.notes:
        print(f"  {note}")
    return bool(c.painted_ms and c.result_ms and c.torch_ms)
