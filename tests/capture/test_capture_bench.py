"""The capture benchmark runs and prints its figures side by side (no timing is asserted: that
is its job), and writes a capture file other benchmarks can open."""

from __future__ import annotations

import pytest

pytest.importorskip("transformers", reason="the benchmark's model is a Hugging Face BertModel")

from attnviz.bench.capture_bench import run, write_bench_capture  # noqa: E402
from attnviz.io import load_capture  # noqa: E402


@pytest.mark.slow
def test_quick_capture_benchmark_prints_every_figure(capsys):
    assert run(repeats=1, quick=True) == 0
    out = capsys.readouterr().out
    for words in (
        "with capture ms",
        "fidelity check of the 2 calls",
        "capture file:",
        "open (memory-mapped)",
        "mask doctor",
        "peak memory above the model",
        "stopped and said so",
    ):
        assert words in out, out


def test_the_bench_capture_file_opens(tmp_path):
    run_ = load_capture(write_bench_capture(tmp_path / "bench.attnviz-capture", quick=True))
    assert run_.layers == 2 and run_.query_tokens is not None and all(c.fidelity <= 1e-5 for c in run_.calls)
