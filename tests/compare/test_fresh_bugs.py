"""Issue 34's seven bug classes in constructions written apart from ``bug_models`` (see
``fresh_bugs``): each bug is an error of ``attnviz check`` and of ``attnviz doctor`` (on a
capture) that names its cause and where; each twin (the same weights) passes both, exit 0."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

import attnviz
from attnviz.capture import diagnose_run, format_finding
from attnviz.cli.check import check_main
from attnviz.cli.doctor import doctor_main

from . import fresh_bugs as fresh

pytest.importorskip("transformers", reason="transformers is a test dependency (pip install .[test])")

TARGET = "tests.compare.fresh_bugs:{}"

#: case: (checks run, words of the check's first line, words of the doctor's first line)
EXPECTED: dict[str, tuple[str, tuple[str, ...], tuple[str, ...] | None]] = {
    "hand-written rotary decoder, restart": (
        "kv_cache",
        ("positions of the step are wrong, not its mask", "rotary embedding was called with 0", "mask was ruled out"),
        ("positions, not the mask", "positions restart at 0 while 6 key(s) are cached", "batch 0-2, rows 0"),
    ),
    "Qwen2 linear RoPE, arange positions": (
        "kv_cache",
        ("positions of the step are wrong, not its mask",),
        ("positions restart at 0 while 5 key(s) are cached", "rotary embedding"),
    ),
    "Meta-style freqs_cis table sliced at 0": (
        "kv_cache",
        ("positions of the step are wrong, not its mask", "rotary embedding was called with 0"),
        ("positions restart at 0 while 4 key(s) are cached", "rotary embedding"),
    ),
    "BERT in training mode": (
        "padding",
        ("two identical runs of the model differ", "training mode", "encoder.layer.0.attention.self.dropout"),
        ("attention dropout (p = 0.25)", "model.eval()"),
    ),
    "nn.MultiheadAttention in training mode": (
        "padding",
        ("two identical runs of the model differ", "training mode", "dropout is active in attn"),
        ("attention dropout (p = 0.3)",),
    ),
    "hand-written GQA, eager tiles KV heads": (
        "implementations",
        ("compute different attention for the same mask", "the grouping of KV heads", "[0, 1, 0, 1, 0, 1]"),
        ("heads 1, 4:", "grouped by tiling (repeat) where repeat_interleave is meant", "KV heads [0, 1, 0, 1, 0, 1]"),
    ),
    "Mistral, edited repeat_kv tiles KV heads": (
        "implementations",
        ("compute different attention for the same mask", "the grouping of KV heads", "[0, 1, 0, 1]"),
        ("cannot reproduce this call", "the head grouping", "KV heads [0, 1, 0, 1]"),
    ),
    "TransformerEncoderLayer, heads-first (B*H)": (
        "padding",
        ("in the wrong order", "other elements' heads"),
        ("in the wrong order", "other elements' heads"),
    ),
    "MHA, torch.cat([m] * H)": (
        "padding",
        ("in the wrong order", "other elements' heads"),
        ("in the wrong order", "other elements' heads"),
    ),
    "GPT-NeoX left padded, mask shifted right": (
        "padding",
        ("shifted by 1 position", "attends to padding"),
        ("shifted by 1 position", "attends to padding key(s) 0 '<pad>'", "hides real key(s) 2 "),
    ),
    "BERT right padded, mask shifted left": (
        "padding",
        ("shifted by 1 position", "hides real key(s) 5"),
        ("shifted by 1 position", "hides real key(s) 5 "),
    ),
    "MHA seq2seq, decoder mask on cross keys": (
        "padding",
        ("a decoder's mask on encoder keys", "real encoder keys wrongly hidden"),
        ("a decoder's mask on encoder keys", "encoder key(s) 4 't"),
    ),
    "GPT-2 left padded, arange position_ids": (
        "padding",
        ("position_ids are not each sequence's own", "masks were ruled out"),
        ("positions, not the mask", "position_ids count the pads", "learned position embeddings"),
    ),
    "learned-position decoder, arange": (
        "padding",
        ("positions, not the mask", "learned position embedding", "position 3 in the batch and 0 alone"),
        ("positions, not the mask", "position_ids count the pads", "learned position embeddings"),
    ),
}


def test_every_fresh_case_is_expected():
    assert set(EXPECTED) == set(fresh.CASES)


@pytest.mark.parametrize("case", fresh.CASES)
def test_attnviz_check_names_the_cause_of_each_fresh_bug_and_passes_its_twin(case, capsys):
    _kind, bug, twin = fresh.CASES[case]
    checks, words, _doctor = EXPECTED[case]
    options = ["--checks", checks] + (["--implementations", "eager,sdpa"] if checks == "implementations" else [])
    assert check_main([TARGET.format(bug), *options]) == 1
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("error: call "), first  # where: a call, its heads, batch elements, rows
    for word in words:
        assert word in first, first
    assert check_main([TARGET.format(twin), *options]) == 0
    assert "0 errors" in capsys.readouterr().out


@pytest.mark.parametrize("case", [case for case in fresh.CASES if EXPECTED[case][2] is not None])
def test_attnviz_doctor_names_the_cause_of_each_fresh_bug_and_passes_its_twin(case, tmp_path: Path, capsys):
    _kind, bug, twin = fresh.CASES[case]
    words = EXPECTED[case][2]
    assert words is not None
    for factory, status in ((bug, 1), (twin, 0)):
        path = tmp_path / f"{factory}.attnviz-capture"
        fresh.captured(factory).save(path)
        assert doctor_main([str(path)]) == status
        lines = capsys.readouterr().out.splitlines()
        if status:
            assert lines[0].startswith("error: call "), lines
            for word in words:
                assert word in lines[0], lines[0]
        else:
            assert not any(line.startswith(("error", "warning")) for line in lines), lines


def test_a_softmax_of_its_own_shows_its_grouping_in_the_values_it_multiplies():
    # The hand-written eager path records only its weights (its own softmax); the product that
    # follows multiplies them by the expanded values, whose copies show the grouping it used.
    bug = fresh.captured("grouped").to_run()
    assert [call.path.value_heads for call in bug.calls] == [(0, 1, 0, 1, 0, 1)] * 2
    found = [f for f in diagnose_run(bug) if f.severity == "error"]
    assert [(f.kind, f.call, f.heads) for f in found] == [("grouping", 0, (1, 4)), ("grouping", 1, (1, 4))]
    twin = fresh.captured("grouped_twin").to_run()
    assert [call.path.value_heads for call in twin.calls] == [(0, 0, 0, 1, 1, 1)] * 2
    assert list(diagnose_run(twin)) == []


def test_a_static_cache_step_whose_positions_restart_is_named_from_its_capture():
    t = pytest.importorskip("transformers")
    torch.manual_seed(0)
    config = t.LlamaConfig(
        vocab_size=fresh.VOCAB,
        hidden_size=32,
        intermediate_size=48,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        attn_implementation="sdpa",
    )
    model = t.LlamaModel(config).eval()
    ids = fresh.batch((6, 6))["input_ids"]
    for restart in (True, False):
        cache = t.StaticCache(config=config, max_cache_len=16)
        with torch.no_grad():
            model(input_ids=ids[:, :5], past_key_values=cache, use_cache=True, cache_position=torch.arange(5))
            # The step's cache_position is right (5): the cache is written in place; its position_ids not.
            positions = torch.zeros(2, 1, dtype=torch.long) if restart else torch.full((2, 1), 5)
            with attnviz.capture(model) as cap:
                model(
                    input_ids=ids[:, 5:],
                    past_key_values=cache,
                    use_cache=True,
                    cache_position=torch.tensor([5]),
                    position_ids=positions,
                )
        run = cap.to_run()
        assert run.calls[0].shape == (2, 4, 1, 16)  # the static cache's keys, unfilled ones masked
        found = diagnose_run(run)
        if not restart:
            assert found == [] and found.notes == [], "\n".join(map(format_finding, found))
            continue
        (finding,) = found
        assert (finding.kind, finding.severity, finding.call, finding.batch) == ("positions", "error", 0, (0, 1))
        assert "positions restart at 0 while 5 key(s) are cached" in finding.message


def test_a_call_whose_fidelity_was_never_measured_is_not_passed(tmp_path: Path, capsys):
    # A run shown before its fidelity is measured (the window's): the doctor measures it.
    model, inputs = fresh.mistral_regrouped()
    with attnviz.capture(model) as cap, torch.no_grad():
        model(**inputs)
    run = cap.to_run(fidelity=False)
    assert run.calls[0].fidelity is None
    found = [f for f in diagnose_run(run) if f.severity == "error"]
    assert found and {f.kind for f in found} == {"fidelity"}, "\n".join(map(format_finding, found))
    assert "the head grouping" in found[0].message


def recorded(factory: Any) -> Any:
    model, inputs = factory()
    with attnviz.capture(model) as cap, torch.no_grad():
        model(**inputs)
    return cap.to_run().calls[0]


def test_positions_are_read_from_a_rotary_modules_tables_and_arguments():
    # HandDecoder's Rope(length, start) takes no tensor: read back from its cos and sin tables.
    model, inputs = fresh.hand_restart_twin()
    with attnviz.capture(model) as cap, torch.no_grad():
        model(input_ids=inputs["input_ids"][:, :4], attention_mask=inputs["attention_mask"][:, :4])
    call = cap.to_run().calls[0]
    assert call.positions_from == "rotary" and call.positions.tolist() == [[0, 1, 2, 3]]
    # GPT-2's wpe (named like positions) and LearnedDecoder's "where" (ids that count, not the tokens).
    assert recorded(fresh.gpt2_arange).positions_from == "learned"
    assert recorded(fresh.gpt2_arange).positions.tolist() == [[0, 1, 2, 3, 4, 5]] * 3
    twin = recorded(fresh.learned_arange_twin)
    assert twin.positions_from == "learned" and twin.positions.tolist() == [[0, 1, 2, 3, 4], [0, 0, 0, 0, 1]]
    # Token embeddings are never read as positions; a model without positions records none.
    assert recorded(fresh.cat_order).positions is None
