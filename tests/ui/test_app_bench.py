"""Smoke test of the app benchmark: ``run(quick=True)`` runs every scenario and its checks hold.

No timing is asserted (timings depend on the machine); what is asserted is what the benchmark
itself checks and prints: every timed edit was painted by the event loop, the burst ends on
its last edit after exactly two computations, the cold-start children reported both stamps.
"""

from __future__ import annotations

import re
import threading

import pytest

from attnviz.bench.app_bench import QUICK, run


def _numbers(line: str) -> list[float]:
    return [float(x) for x in re.findall(r"\d+(?:\.\d+)?", line)]


@pytest.mark.slow
def test_quick_app_benchmark_runs_every_scenario(qapp, capsys):
    threads_before = threading.active_count()
    assert run(quick=True) == 0
    out = capsys.readouterr().out

    # The three edit-latency rows, each with as many edits as planned and positive times.
    rows = [line for line in out.splitlines() if re.match(r"^(toy|\(\d)", line)]
    assert [line.split()[0] for line in rows] == ["toy", "(2,16,16)", "(1,64,64)"]
    edits = [QUICK.toy_edits, QUICK.medium_edits, QUICK.large_edits]
    for line, n in zip(rows, edits):
        assert "forced" not in line  # every edit was painted by the event loop itself
        m = re.search(r"\s(\d+)\s+(\d+\.\d)\s+(\d+\.\d)\s+(?:p95|median) < ", line)
        assert m, line
        assert int(m.group(1)) == n
        median, p95 = float(m.group(2)), float(m.group(3))
        assert 0 < median <= p95

    # A model's head edited with no view of its heads open: next to the toy, with the ratio.
    model = next(line for line in out.splitlines() if line.startswith("model "))
    assert "forced" not in model and re.search(r"<= 1\.5x toy .*\((\d+\.\d+)x the toy's median\)$", model), model
    assert int(model.split()[5]) == QUICK.model_edits

    # The burst: the first edit computes, the other 19 collapse into one pending computation.
    assert f"computations run: 2 of {QUICK.burst_edits} edits" in out
    assert "final shown state equals the last edit: yes (shown = last edit)" in out

    # Heartbeat gaps are reported for the computation and, separately, for the drawing.
    assert re.search(r"while computing \(\d+ ms on the compute thread, GUI thread idle\): longest gap \d+\.\d ms", out)
    assert re.search(r"while drawing the result on the GUI thread .*longest gap \d+\.\d ms", out)
    # The long-context view took over an input over the budget and drew its overview and a tile.
    assert f"Long context: {QUICK.long_n} x {QUICK.long_n} tokens" in out
    assert re.search(r"while the overview computes \(\d+ ms from the edit; .*\): longest gap \d+\.\d ms", out)
    assert re.search(r"its lines and the tile are computed and drawn \(\d+ ms\): longest gap \d+\.\d ms", out)

    # Cold start: both stamps and the torch baseline came back from the child processes.
    for label in ("window painted", "first result drawn", "import torch"):
        line = next(line for line in out.splitlines() if label in line)
        assert "failed" not in line
        assert _numbers(line.split(":")[-1])[0] > 0

    # The benchmark's window is gone and its compute thread stopped.
    assert threading.active_count() <= threads_before + 1
