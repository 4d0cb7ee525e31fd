"""Issue 34's seven bug classes a third time, on transformers architectures and nn.Transformer
(``zoo_bugs``): ``attnviz check`` and ``attnviz doctor`` (on a capture) exit 1 on each bug with
a first line that names its cause and where (call, heads, batch, rows), and 0 on each twin (the
same weights, the mistake corrected) with nothing alarming said."""

from __future__ import annotations

from pathlib import Path

import pytest

from attnviz.cli.check import check_main
from attnviz.cli.doctor import doctor_main

from . import zoo_bugs as zoo

pytest.importorskip("transformers", reason="transformers is a test dependency (pip install .[test])")

TARGET = "tests.compare.zoo_bugs:{}"

#: case: (the check that sees it, words of the check's first line, words of the doctor's)
EXPECTED: dict[str, tuple[str, tuple[str | tuple[str, ...], ...], tuple[str, ...]]] = {
    "Phi-3 loop, positions from the step's mask": (
        "kv_cache",
        ("the positions of the step are wrong, not its mask", "the mask was ruled out"),
        ("positions, not the mask", "positions restart at 0 while 6 key(s) are cached", "rotary"),
    ),
    "GPT-J loop, offset by len(cache)": (
        "kv_cache",
        # the positions the step's rotary table was read with (``torch.gather`` on transformers
        # 5.23); where they are not read (5.24's GPT-J), the queries and keys the step computed
        # against the full forward's still name the positions and rule the mask out
        (
            "the positions of the step are wrong, not its mask",
            ("called with 2 where the full forward has 4", "the mask was ruled out"),
        ),
        ("positions, not the mask", "at 2 while 6 key(s) are cached", "rotary"),
    ),
    "Llama SDPA left in training mode": (
        "padding",
        ("two identical runs of the model differ", "training mode", "inner.layers.0.self_attn"),
        ("attention dropout (p = 0.2)", "model.eval()"),
    ),
    "DistilBERT, attention dropout only, training": (
        "padding",
        ("two identical runs of the model differ", "training mode", "inner.transformer.layer.0.attention.dropout"),
        ("attention dropout (p = 0.35)", "model.eval()"),
    ),
    "Qwen3, own eager kernel tiles KV heads (cat)": (
        "implementations",
        ("compute different attention for the same mask", "the grouping of KV heads", "[0, 1, 0, 1, 0, 1]"),
        ("the mask is not the cause", "the head grouping", "read KV heads [0, 1, 0, 1, 0, 1]", "with repeat where"),
    ),
    "Llama, own eager kernel reads KV head 0": (
        "implementations",
        ("compute different attention for the same mask", "the grouping of KV heads", "[0, 0, 0, 0]"),
        ("the head grouping", "every query head reads KV head 0", "multi-query"),
    ),
    "Llama, 4-D (B, H) mask stacked with repeat": (
        "padding",
        ("in the wrong order", "other elements' heads", "batch 0 hides real key(s) 0"),
        ("in the wrong order", "other elements' heads", "batch 1 attends to padding key(s) 0 '<pad>'"),
    ),
    "TransformerDecoderLayer, tgt_mask heads-first": (
        "padding",
        ("in the wrong order", "other elements' heads", "batch 1 hides real key(s) 4"),
        ("in the wrong order", "other elements' heads", "batch 1 hides real key(s) 4 'z5'"),
    ),
    "Llama eager, hand-made 4-D mask one pad short": (
        "padding",
        ("shifted by 1 position", "attends to padding key(s)"),
        ("shifted by 1 position", "attends to padding key(s)", "'<pad>'"),
    ),
    "RoBERTa, arange(n) <= lengths": (
        "padding",
        ("shifted by 1 position", "attends to padding key(s) 3"),
        ("shifted by 1 position", "attends to padding key(s) 3 '<pad>'"),
    ),
    "BART SDPA, decoder mask on cross keys": (
        "padding",
        ("a decoder's mask on encoder keys",),
        ("a decoder's mask on encoder keys",),
    ),
    "T5 relative bias, decoder mask on cross keys": (
        "padding",
        ("a decoder's mask on encoder keys",),
        ("a decoder's mask on encoder keys",),
    ),
    "nn.Transformer, memory_key_padding_mask = tgt's": (
        "padding",
        ("a decoder's mask on encoder keys",),
        ("a decoder's mask on encoder keys",),
    ),
    "RoBERTa left padded, arange + padding_idx + 1": (
        "padding",
        ("positions, not the mask", "position 5 in the batch and 2 alone", "count the pads"),
        ("positions, not the mask", "count the pads", "given position 5 where its sequence alone starts at 2"),
    ),
    "OPT left padded, arange position_ids": (
        "padding",
        ("positions, not the mask", "position 2 in the batch and 0 alone", "masks were ruled out"),
        ("positions, not the mask", "count the pads", "learned position embeddings"),
    ),
}


def test_every_zoo_case_is_expected():
    assert set(EXPECTED) == set(zoo.CASES)
    assert {kind for kind, _bug, _twin in zoo.CASES.values()} == {
        "positions",
        "dropout",
        "grouping",
        "mask order",
        "shift",
        "wrong source",
        "position_ids",
    }


@pytest.mark.parametrize("case", zoo.CASES)
def test_attnviz_check_names_the_cause_of_each_zoo_bug_and_passes_its_twin(case, capsys):
    _kind, bug, twin = zoo.CASES[case]
    checks, words, _doctor = EXPECTED[case]
    options = ["--checks", checks] + (["--implementations", "eager,sdpa"] if checks == "implementations" else [])
    assert check_main([TARGET.format(bug), *options]) == 1
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("error: call "), first  # where: a call, its heads, batch elements, rows
    for word in words:  # a tuple: either wording
        assert any(w in first for w in ((word,) if isinstance(word, str) else word)), first
    assert check_main([TARGET.format(twin), *options]) == 0
    out = capsys.readouterr().out
    # A warning may stand (BART's learned positions are a hazard when padded on the left, said
    # as one); no error.
    assert "0 errors" in out, out
    assert not any(line.startswith("error") for line in out.splitlines()), out


@pytest.mark.parametrize("case", zoo.CASES)
def test_attnviz_doctor_names_the_cause_of_each_zoo_bug_and_passes_its_twin(case, tmp_path: Path, capsys):
    _kind, bug, twin = zoo.CASES[case]
    words = EXPECTED[case][2]
    for factory, status in ((bug, 1), (twin, 0)):
        path = tmp_path / f"{factory}.attnviz-capture"
        zoo.captured(factory).save(path)
        assert doctor_main([str(path)]) == status
        lines = capsys.readouterr().out.splitlines()
        if status:
            assert lines[0].startswith("error: call "), lines
            for word in words:
                assert word in lines[0], lines[0]
        else:
            assert not any(line.startswith(("error", "warning")) for line in lines), lines
