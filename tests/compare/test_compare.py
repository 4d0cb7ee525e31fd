"""attnviz.compare and attnviz diff: a run against itself, and against an inverted padding mask."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import attnviz
from attnviz.cli.diff import diff_main

from .models import batch, bert, gpt2


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    model, given = bert(), batch()
    inverted = dict(given, attention_mask=1 - given["attention_mask"])
    folder = tmp_path_factory.mktemp("runs")
    paths = {}
    for name, inputs in (("a", given), ("again", given), ("inverted", inverted)):
        with torch.no_grad(), attnviz.capture(model) as cap:
            model(**inputs)
        paths[name] = folder / f"{name}.attnviz-capture"
        cap.save(paths[name])
    return paths


def test_a_capture_against_itself_is_all_zeros(runs):
    result = attnviz.compare(runs["a"], runs["again"])
    assert result.matched and len(result.calls) == 2
    assert result.max_weight_diff == 0.0 and result.max_output_diff == 0.0
    for each in result.calls:
        assert each.weights.shape == (3, 4) and not each.weights.any() and not each.outputs.any()
    assert result.worst() == [] and result.within(0.0)


def test_an_inverted_padding_mask_is_named_call_by_call(runs):
    result = attnviz.compare(runs["a"], runs["inverted"])
    names = [c.name for c in result.worst()]
    assert sorted(names) == ["encoder.layer.0.attention.self", "encoder.layer.1.attention.self"]
    assert result.max_weight_diff > 0.1
    # The rows of the padded elements differ; batch element 0 has no padding but its mask is all
    # "pad" now: every key equally hidden, the weights uniform where they were not.
    first = result.calls[0]
    assert first.weights[1].min() > 0.1 and first.weights[2].min() > 0.1
    assert not result.within(1e-5)


def test_diff_exit_status(runs, capsys):
    assert diff_main([str(runs["a"]), str(runs["again"])]) == 0
    assert "agree within" in capsys.readouterr().out
    assert diff_main([str(runs["a"]), str(runs["inverted"]), "--tol", "1e-3"]) == 1
    out = capsys.readouterr().out
    assert "encoder.layer.0.attention.self" in out and "encoder.layer.1.attention.self" in out
    assert diff_main([str(runs["a"]), str(runs["inverted"]), "--tol", "10"]) == 0


def test_diff_usage_and_unreadable_files(runs, tmp_path, capsys):
    assert diff_main([str(runs["a"])]) == 2
    assert diff_main([str(runs["a"]), str(runs["a"]), "--tol", "nan"]) == 2
    broken = tmp_path / "broken.attnviz-capture"
    broken.write_bytes(b"not a capture")
    assert diff_main([str(runs["a"]), str(broken)]) == 3
    assert diff_main([str(runs["a"]), str(tmp_path / "missing.attnviz-capture")]) == 3
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 4


def test_the_attnviz_command_dispatches_diff(runs):
    from attnviz.cli.gui import main

    assert main(["diff", str(runs["a"]), str(runs["again"])]) == 0


def test_calls_on_one_side_only_are_listed_and_fail_the_diff(tmp_path):
    model, given = gpt2(layers=2), batch()
    with torch.no_grad(), attnviz.capture(model) as whole:
        model(**given)
    with torch.no_grad(), attnviz.capture(model, modules=["transformer.h.0"]) as part:
        model(**given)
    result = attnviz.compare(whole, part)
    assert result.only_a == ("transformer.h.1.attn",) and result.only_b == ()
    assert result.max_weight_diff == 0.0 and not result.within(1.0)


def test_other_shapes_are_not_compared_position_by_position():
    model = gpt2(layers=1)
    with torch.no_grad(), attnviz.capture(model) as long:
        model(**batch((6, 4)))
    with torch.no_grad(), attnviz.capture(model) as short:
        model(**batch((5, 4)))
    (call,) = attnviz.compare(long, short).calls
    assert np.isinf(call.max_weight_diff) and "nothing compared" in call.note


def test_anything_else_is_refused_in_one_line():
    with pytest.raises(TypeError, match="must be a capture"):
        attnviz.compare(1, 2)
