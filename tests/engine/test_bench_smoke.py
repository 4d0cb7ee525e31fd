"""The engine benchmark runs and prints its table (no timing is asserted: that is its job)."""

from __future__ import annotations

from attnviz.bench.engine_bench import bench_size, run


def test_quick_engine_benchmark_prints_the_comparison(capsys):
    assert run(sizes=(128,), repeats=2, memory=False) == 0
    out = capsys.readouterr().out
    assert "book/attnviz" in out and "(1, 128, 128, 64)" in out


def test_bench_size_reports_every_figure():
    figures = bench_size(64, 8, repeats=2)
    for name in ("book", "attnviz", "attnviz_all_stages", "qk", "softmax", "wv", "parts"):
        assert figures[name] > 0
    assert figures["parts"] == figures["qk"] + figures["softmax"] + figures["wv"]
