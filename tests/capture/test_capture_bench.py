"""The capture benchmark runs and prints its figures side by side (no timing is asserted: that
is its job), and writes a capture file other benchmarks can open."""

from __future__ import annotations

from typing import Any

import pytest

from attnviz.io import load_capture


def _bench() -> Any:
    """The benchmark module, imported by the test that uses it: importing transformers took 3 s
    of every parallel worker's collection, though one worker runs these tests."""
    pytest.importorskip("transformers", reason="the benchmark's model is a Hugging Face BertModel")
    from attnviz.bench import capture_bench

    return capture_bench


@pytest.mark.slow
def test_quick_capture_benchmark_prints_every_figure(capsys):
    assert _bench().run(repeats=1, quick=True) == 0
    out = capsys.readouterr().out
    for words in (
        "with capture ms",
        "fidelity check of the 2 calls",
        "capture file:",
        "open (memory-mapped)",
        "mask doctor",
        "peak memory above the model",
        "stopped and said so",
        "eager (interface)",
        "flex_attention",
        "4 layers x 256 tokens",
    ):
        assert words in out, out


def test_the_bench_capture_file_opens(tmp_path):
    run_ = load_capture(_bench().write_bench_capture(tmp_path / "bench.attnviz-capture", quick=True))
    assert run_.layers == 2 and run_.query_tokens is not None and all(c.fidelity <= 1e-5 for c in run_.calls)
