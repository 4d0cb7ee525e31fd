"""The long-context benchmark runs end to end at tiny sizes (no timing is asserted: that is its job)."""

from __future__ import annotations

import pytest
import torch

from attnviz.bench.__main__ import main
from attnviz.bench.long_bench import child_peak, floor, make_inputs


@pytest.mark.slow
def test_quick_long_benchmark_prints_every_figure(capsys):
    assert main(["long", "--quick"]) == 0
    out = capsys.readouterr().out
    for words in (
        "overview/floor",
        "2048 x 2048",
        "4096 x 4096",
        "exact 256 x 256 tile",
        "peak memory of the",
        "above the inputs",
        "quick mode",
    ):
        assert words in out, words


def test_child_reports_peak_memory_and_time():
    figures = child_peak(1024, 128)
    assert 0 < figures["peak_above_inputs_mib"] < 512 and figures["seconds"] > 0
    assert 0 < figures["computed_share"] < 0.5  # the window and the padding skip most blocks


def test_floor_computes_every_cell(monkeypatch):
    q, k, attention_mask = make_inputs(100)
    cells = []
    real_mm = torch.mm

    def counting_mm(a, b, out=None):
        cells.append(a.shape[0] * b.shape[1])
        return real_mm(a, b, out=out)

    monkeypatch.setattr(torch, "mm", counting_mm)
    floor(q, k, rows=30)()
    assert sum(cells) == 100 * 100
    assert attention_mask[:90].all() and not attention_mask[-8:].any()
