"""The Python API explains itself: dir(attnviz) lists it, and the results print as summaries,
never their (memory-mapped) arrays (issue 36)."""

from __future__ import annotations

import inspect

import torch

import attnviz
from attnviz.compare.intervene import AblateHead

from .models import batch, bert, gpt2

PUBLIC = ("capture", "check_invariance", "compare", "intervene", "save_session", "show")


def test_dir_lists_the_lazy_public_api() -> None:
    names = dir(attnviz)
    for name in (*PUBLIC, "__version__"):
        assert name in names


def test_public_functions_have_docstrings_with_an_example() -> None:
    from attnviz.capture.recorder import capture
    from attnviz.compare import compare

    for function in (capture, compare, attnviz.check_invariance, attnviz.intervene.intervene, attnviz.save_session):
        text = inspect.getdoc(function) or ""
        assert "Example" in text or ">>>" in text, function.__name__


def test_capture_calls_and_comparison_print_as_summaries(tmp_path) -> None:  # noqa: ANN001
    model, given = bert(), batch()
    inverted = dict(given, attention_mask=1 - given["attention_mask"])
    paths = []
    for name, inputs in (("a", given), ("b", inverted)):
        with torch.no_grad(), attnviz.capture(model) as cap:
            model(**inputs)
        paths.append(tmp_path / f"{name}.attnviz-capture")
        cap.save(paths[-1])
    text = repr(cap)
    assert text.startswith("Capture(2 call(s): 'encoder.layer.0.attention.self'") and "MiB recorded" in text
    call = repr(cap.calls[0])
    assert call.startswith("CapturedCall('encoder.layer.0.attention.self'") and "(3, 4, " in call
    assert "tensor(" not in call

    result = attnviz.compare(*paths)
    summary = repr(result)
    assert summary.startswith("Comparison(2 call(s) matched, 0 only in a, 0 only in b, max weight diff")
    assert f"{result.max_weight_diff:.3g}" in summary and "worst 'encoder.layer" in summary
    assert "array(" not in summary and "memmap" not in summary and len(summary) < 300
    difference = repr(result.calls[0])
    assert difference.startswith("CallDifference('encoder.layer.0.attention.self', call 0, a (3, 4, ")
    assert f"{result.calls[0].max_weight_diff:.3g}" in difference and "array(" not in difference
    run = repr(result.a)
    assert run.startswith("ModelRun(2 call(s) from") and "array(" not in run and len(run) < 200
    assert repr(result.a.calls[0]).startswith("AttentionCall('encoder.layer.0.attention.self', B, H, L_q, L_k = (3, 4,")


def test_intervention_prints_as_a_summary() -> None:
    result = attnviz.intervene(gpt2(), batch(), [AblateHead(1, head=1)])
    text = repr(result)
    assert text.startswith("Intervention(1 edit(s), 2 call(s) recorded, max output diff") and "tensor(" not in text
