"""One base for views (``SessionView``) and one way for a view to compute (``AppSession.register``):
every map of every view follows the colour map, the theme, presentation mode and the language;
a view's computation runs only while the view is on show; views talk through the session."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from attnviz.state.document import ReplaceState, SetBlock, State
from attnviz.state.run import Focus
from tests.ui.conftest import wait_current
from tests.ui.test_model_views import make_run

ROOT = Path(__file__).resolve().parents[2]


def _views(window) -> dict[str, object]:
    """Every view of the window by name: the main results panel and each tool's view."""
    return {"results": window.results, **{tool.objectName(): tool.view() for tool in window.tools()}}


def _settle(qtbot, window) -> None:
    wait_current(qtbot, window)
    qtbot.waitUntil(lambda: not any(c.busy for c in window.session.computations), timeout=60000)


def _open_every_view(qtbot, window) -> None:
    """Show each view once (so it has computed and made its maps), then the main view."""
    for tool in window.tools():
        tool.show()
        tool.raise_()
        qtbot.waitUntil(tool.view().isVisible)
        _settle(qtbot, window)
        view = tool.view()
        if tool.objectName() == "maskingLabDock":
            qtbot.waitUntil(lambda: view.outcome is not None, timeout=60000)  # noqa: B023 - waited for here
        if tool.objectName() == "long_context":
            qtbot.waitUntil(lambda: view.tile is not None, timeout=60000)  # noqa: B023 - waited for here
    window.tool_tabs.setCurrentIndex(0)
    _settle(qtbot, window)


@pytest.fixture
def model_window(window, qtbot):
    window.resize(1280, 720)
    window.session.push(ReplaceState(State.from_run(make_run(heads=4)), "a model", Focus(0, 0)))
    _open_every_view(qtbot, window)
    return window


def _maps(window) -> dict[str, list]:
    return {name: view.owned_maps() for name, view in _views(window).items()}


def test_every_view_is_a_session_view_and_owns_every_map_it_shows(model_window):
    from attnviz.ui.app.view_base import SessionView
    from attnviz.ui.heatmap import HeatmapWidget

    for name, view in _views(model_window).items():
        assert isinstance(view, SessionView), name
        shown = set(view.findChildren(HeatmapWidget))
        # The main panel also owns the output map, beside the tables (not one of its children).
        assert shown <= set(view.owned_maps()), name
    maps = _maps(model_window)
    counts = {name: len(found) for name, found in maps.items() if found}
    # The pipeline: its 7 stages, the score terms' stage (2b, hidden for a call without terms), and
    # the walk's stage and the stage it was computed from.
    assert counts["pipelineDock"] == 8 + 2 and counts["compareDock"] == 3 and counts["heads"] == 4
    assert counts["maskingLabDock"] >= 6 and counts["model_overview"] == 1 and counts["long_context"] == 2
    assert counts["results"] == 3  # two batch elements and the output


def test_every_map_follows_the_colour_map_the_theme_and_presentation_mode(model_window, qtbot):
    from attnviz.ui import theme
    from attnviz.ui.heatmap import PRESENTATION_SCALE
    from attnviz.ui.views.side_by_side import DivergingHeatmap

    window, session = model_window, model_window.session

    def every_map() -> list:
        return [m for found in _maps(window).values() for m in found]

    session.set_colormap("viridis")
    # A difference of two weights keeps its diverging scale: its sign must read at a glance.
    wrong = [m for m in every_map() if not isinstance(m, DivergingHeatmap) and m.colormap_name != "viridis"]
    assert wrong == [] and window.results.colormap.currentData() == "viridis"

    window.set_presentation_mode(True)
    try:
        assert {m.font_scale for m in every_map()} == {PRESENTATION_SCALE}
        # Maps made later follow too: a run with more heads gives the grid more maps.
        session.push(ReplaceState(State.from_run(make_run(heads=6)), "more heads", Focus(0, 0)))
        window.heads_dock.show()
        window.heads_dock.raise_()
        qtbot.waitUntil(lambda: len(window.heads_dock.view().maps) == 6, timeout=30000)
        assert {m.font_scale for m in every_map()} == {PRESENTATION_SCALE}
        # From the same size as the others: not from the application font presentation enlarged.
        ticks = {round(m.plot_item.getAxis("left").style["tickFont"].pointSizeF(), 2) for m in every_map()}
        assert len(ticks) == 1
        assert {m.colormap_name for m in window.heads_dock.view().maps} == {"viridis"}
    finally:
        window.set_presentation_mode(False)
    assert {m.font_scale for m in every_map()} == {1.0}

    try:
        theme.apply_theme("dark")
        assert {m.plot_colors for m in every_map()} == {theme.DARK_PLOT}
        plots = [p for view in _views(window).values() for p in view.owned_plots()]
        assert len(plots) >= 6  # tokens, long context, the pipeline's features
        assert {p.backgroundBrush().color().name() for p in plots} == {theme.DARK_PLOT.background}
        theme.apply_theme("light")
        assert {m.plot_colors for m in every_map()} == {theme.LIGHT_PLOT}
    finally:
        theme.apply_theme("system")


def test_a_language_switch_there_and_back_keeps_every_axis_title(model_window):
    window = model_window

    def titles() -> dict[tuple[str, int], tuple[str, str, str]]:
        return {
            (name, i): (m.title, m.plot_item.getAxis("bottom").labelText, m.plot_item.getAxis("left").labelText)
            for name, found in _maps(window).items()
            for i, m in enumerate(found)
        }

    english = titles()
    assert ("Value dimension" in {x for _, x, _ in english.values()}) and (
        "Keys" in {x for _, x, _ in english.values()}
    )
    try:
        window.set_language("pt_BR")
        portuguese = titles()
        window.set_language("en")
        assert titles() == english
        window.set_language("pt_BR")
        assert titles() == portuguese
    finally:
        window.set_language("en")
    names = {x for _, x, _ in portuguese.values()} | {y for _, _, y in portuguese.values()}
    assert {"Chaves", "Consultas"} <= names and "Keys" not in names and "Queries" not in names
    # The output's axis is the value dimension, in both languages, whatever the switches.
    output = next(key for key, value in english.items() if value[1] == "Value dimension" and key[0] == "results")
    assert portuguese[output][1] not in ("Keys", "Chaves", "Value dimension")


def test_with_no_view_of_its_heads_open_an_edit_computes_one_head(window, qtbot, monkeypatch):
    from attnviz.compute import heads as heads_module

    window.session.push(ReplaceState(State.from_run(make_run(layers=3, heads=4)), "a model", Focus(0, 0)))
    wait_current(qtbot, window)
    # A model opens its heads and the overview: closed, the main view in front.
    window.heads_dock.hide()
    window.overview_dock.hide()
    window.tool_tabs.setCurrentIndex(0)
    _settle(qtbot, window)
    calls: list[int] = []
    original = heads_module._attend_call

    def counted(state, layer, *args, **kwargs):
        calls.append(layer)
        return original(state, layer, *args, **kwargs)

    monkeypatch.setattr(heads_module, "_attend_call", counted)
    window.session.push(SetBlock("queries", 0, 0, 0, np.array([[0.5]])))
    wait_current(qtbot, window)
    window.session.set_focus(1, 2)
    wait_current(qtbot, window)
    assert calls == []  # only the head on show was computed, by the main computation
    # The heads grid shown: every head of the layer, once, without the main outcome computed again.
    started = window.session.scheduler.started_count
    computed = window.session.shown_version
    window.heads_dock.show()
    grid = window.heads_dock.view()
    qtbot.waitUntil(lambda: grid.shown_heads is not None and grid.shown_heads.layer == 1 and not grid.heads.busy)
    assert calls == [1] and window.session.scheduler.started_count == started + 1
    assert window.session.shown_version == computed and window.session.dropped_outcomes == 0
    np.testing.assert_allclose(grid.shown_heads.weights[:, 2], window.session.current_view().weights, atol=1e-6)


def test_a_views_computation_runs_only_while_it_is_on_show(host, qtbot):
    """On its own thread or with the main computation: not while hidden, caught up when shown,
    again when what it follows changes, the latest request winning."""
    from attnviz.text.tr import QT_TRANSLATE_NOOP
    from attnviz.ui.app.host import DockSpec
    from attnviz.ui.app.view_base import SessionView

    session = host.session

    class Probe(SessionView):
        def __init__(self) -> None:
            super().__init__(session)
            self.own_results: list[tuple[int, int, str]] = []
            self.main_results: list[int] = []
            self.own = self.while_shown(
                session.register(
                    "probe", lambda job: (job.snapshot.version, job.batch, job.params), follows="selection", params="a"
                )
            )
            self.own.on_result(self.own_results.append)
            self.main = self.while_shown(session.register("probe main", lambda job: job.main.version, thread="main"))
            self.main.on_result(self.main_results.append)

    spec = DockSpec("probe", QT_TRANSLATE_NOOP("Test", "Probe"), QT_TRANSLATE_NOOP("Test", "Probe"), "")
    tool = host.add_dock(spec, Probe)
    probe = tool.view()  # built, hidden
    session.start()
    qtbot.waitUntil(lambda: session.is_current and not session.busy, timeout=30000)
    session.push(SetBlock("valid_lens", 0, 0, 0, np.array([[3]])))
    qtbot.waitUntil(lambda: session.is_current and not session.busy, timeout=30000)
    assert probe.own.runs == probe.main.runs == 0 and probe.own_results == probe.main_results == []

    started = session.scheduler.started_count
    tool.show()
    qtbot.waitUntil(lambda: bool(probe.own_results) and bool(probe.main_results), timeout=30000)
    version = session.document.version
    assert probe.own_results == [(version, 0, "a")] and probe.main_results == [version]
    # The main outcome was current: only the view's computation ran on the main thread.
    assert session.scheduler.started_count == started + 1 and session.shown_version == version

    session.set_batch(1)  # the probe follows the selection on its thread, the head with the main one
    qtbot.waitUntil(lambda: len(probe.own_results) == 2, timeout=30000)
    assert probe.own_results[-1] == (version, 1, "a") and probe.main.runs == 1
    probe.own.request("b")
    probe.own.request("c")  # latest wins: "b" is never delivered
    qtbot.waitUntil(lambda: probe.own_results[-1][2] == "c" and not probe.own.busy, timeout=30000)
    assert "b" not in [params for _, _, params in probe.own_results]

    tool.hide()
    session.push(SetBlock("valid_lens", 0, 0, 0, np.array([[2]])))
    qtbot.waitUntil(lambda: session.is_current and not session.busy, timeout=30000)
    runs = (probe.own.runs, probe.main.runs)
    assert runs == (4, 1)  # nothing while hidden
    tool.show()
    version = session.document.version
    qtbot.waitUntil(lambda: probe.main_results[-1] == version and probe.own_results[-1][0] == version, timeout=30000)
    assert (probe.own.runs, probe.main.runs) == (5, 2)


def test_a_cancelled_or_replaced_request_is_not_run_and_busy_follows_the_latest(host, qtbot):
    """Cancel drops what waits (never run) and what runs (its result unseen), busy says so at
    once, and the next request is busy again while the dropped one still runs."""
    import threading

    session = host.session
    gates = {"first": threading.Event(), "second": threading.Event()}
    ran: list[str] = []

    def slow(job):  # noqa: ANN001, ANN202
        ran.append(job.params)
        if job.params in gates:
            gates[job.params].wait(10)
        return job.params

    computation = session.register("slow probe", slow, follows="document", auto=False, params="first")
    results: list[str] = []
    computation.on_result(results.append)
    busy: list[bool] = []
    computation.busyChanged.connect(busy.append)
    computation.set_on_show(True)
    computation.request()
    qtbot.waitUntil(lambda: ran == ["first"], timeout=10000)
    computation.request("waiting")  # waits behind "first"
    computation.cancel()
    assert not computation.busy and busy == [True, False]
    gates["first"].set()
    qtbot.wait(300)
    assert ran == ["first"] and results == []  # "waiting" never ran, "first" was not shown

    computation.request("second")
    qtbot.waitUntil(lambda: ran[-1] == "second", timeout=10000)
    computation.cancel()
    computation.request("next")  # while "second" still runs: busy again at once
    assert computation.busy and busy == [True, False, True, False, True]
    gates["second"].set()
    qtbot.waitUntil(lambda: results == ["next"], timeout=10000)
    assert not computation.busy and busy[-1] is False and ran == ["first", "second", "next"]


def test_a_view_shown_while_the_main_computation_runs_gets_its_result_after_it(qtbot):
    import threading
    import time

    from attnviz.compute import run_snapshot
    from attnviz.ui.app.host import HostWindow
    from attnviz.ui.app.session import AppSession

    running = threading.Event()

    def slow(snapshot):
        running.set()
        time.sleep(0.3)
        return run_snapshot(snapshot)

    session = AppSession(compute=slow)
    win = HostWindow(session)
    qtbot.addWidget(win)
    results: list[int] = []
    probe = session.register("probe", lambda job: job.main.version, thread="main")
    probe.on_result(results.append)
    session.start()
    qtbot.waitUntil(running.is_set)
    assert session.scheduler.running
    probe.set_on_show(True)  # its view shown meanwhile: computed once the main thread is free
    qtbot.waitUntil(lambda: results == [session.document.version], timeout=10000)
    assert session.scheduler.started_count == 2
    win.close()


def test_views_talk_through_the_session_not_the_window(model_window, qtbot):
    window, session = model_window, model_window.session
    tokens = window.tokens_dock.view()
    session.select_query(3, False)
    session.select_query(1, True)
    assert tokens.queries.selected() == [1, 3]
    session.outline_rows((2,))
    assert window.tool_tabs.currentIndex() == 0  # the weights come to the front with the outlines
    assert [m.highlighted_rows for m in window.results.maps] == [1, 0]
    session.outline_rows(())
    assert [m.highlighted_rows for m in window.results.maps] == [0, 0]


def test_the_views_share_one_base_and_stay_small():
    """No view handles its own show events, presentation mode or colour map; the host finds no
    method by name; no module of the UI is over 800 lines."""
    views = sorted((ROOT / "attnviz" / "ui" / "views").glob("*.py"))
    own = {}
    for path in views:
        defined = {
            n.name for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(n, ast.FunctionDef)
        }
        own[path.name] = defined & {"showEvent", "set_font_scale", "set_colormap", "_on_colormap"}
    assert {name: found for name, found in own.items() if found and name != "side_by_side.py"} == {}
    assert own["side_by_side.py"] <= {"set_colormap"}  # the diverging map refuses the sequential ones
    host = (ROOT / "attnviz" / "ui" / "app" / "host.py").read_text(encoding="utf-8")
    main_window = (ROOT / "attnviz" / "ui" / "window" / "main_window.py").read_text(encoding="utf-8")
    assert "set_font_scale" not in host and "getattr(" not in host
    assert ".view()." not in main_window and "findingChosen" not in main_window
    long = {
        str(path.relative_to(ROOT)): n
        for path in (ROOT / "attnviz" / "ui").rglob("*.py")
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > 800
    }
    assert long == {}
