"""The snippets benchmark runs its cases and prints its table; here with PyTorch only (installing
TensorFlow, JAX and MXNet is the benchmark's job, not the suite's)."""

from __future__ import annotations

import sys

import pytest

from attnviz.bench import snippets_bench


@pytest.mark.slow
def test_the_snippets_bench_runs_the_pytorch_snippets_and_prints_the_table(capsys):
    assert snippets_bench.run(frameworks=("pytorch",), cases=("dot-toy", "model-masks", "additive-bfloat16")) == 0
    out = capsys.readouterr().out
    assert "largest difference from the app: weights | worst stage" in out
    lines = {line.split()[0]: line for line in out.splitlines() if line.split()}
    assert lines["dot-toy"].split()[1:] == ["yes", "0", "|", "0"]
    assert lines["model-masks"].split()[1:] == ["0", "|", "0"]
    assert "PyTorch: 3/3 cases within tolerance; book's cases: largest weight difference 0" in out


def test_mxnet_may_be_tried_with_every_python_found_this_one_first():
    pythons = snippets_bench._pythons()
    assert pythons[0] == sys.executable and len(set(pythons)) == len(pythons)
