"""Lessons: every pitfall preset shows, in numbers, the disagreement its explanation claims."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from attnviz.compute.attention import run_state
from attnviz.engine import attend
from attnviz.engine.lab import LabReport, compare_conventions
from attnviz.state.document import Settings, State
from attnviz.teaching.lessons import (
    EXERCISE_PRESETS,
    LESSONS,
    PITFALL_PRESETS,
    Lesson,
)
from attnviz.teaching.presets import PRESETS, Preset


def lab(state: State, **kwargs: object) -> LabReport:
    s = state.settings
    lens = state.valid_lens(state.head_view())
    return compare_conventions(
        torch.from_numpy(np.array(state.head_view().queries)),
        torch.from_numpy(np.array(state.head_view().keys)),
        torch.from_numpy(np.array(state.head_view().values)),
        None if lens is None else torch.from_numpy(lens),
        scoring=s.scoring,
        dtype=s.dtype,
        causal=state.head_view().causal,
        **kwargs,
    )


def run(state: State, **changes: object):
    """attend() exactly as the app calls it for ``state`` (plus ``changes``)."""
    s = state.settings
    lens = state.valid_lens(state.head_view())
    kw = dict(
        scoring=s.scoring,
        mask_mode=s.mask_mode,
        causal=state.head_view().causal,
        num_hiddens=s.num_hiddens,
        seed=s.param_seed,
        dtype=s.dtype,
    )
    kw.update(changes)
    return attend(
        torch.from_numpy(np.array(state.head_view().queries)),
        torch.from_numpy(np.array(state.head_view().keys)),
        torch.from_numpy(np.array(state.head_view().values)),
        None if lens is None else torch.from_numpy(lens),
        **kw,
    )


def test_catalogue():
    assert set(LESSONS) == set(PITFALL_PRESETS) | set(EXERCISE_PRESETS)
    assert not set(PITFALL_PRESETS) & set(EXERCISE_PRESETS) and not set(LESSONS) & set(PRESETS)
    assert len(PITFALL_PRESETS) == 7 and len(EXERCISE_PRESETS) == 3
    for name, lesson in LESSONS.items():
        assert isinstance(lesson, Lesson) and isinstance(lesson.preset, Preset)
        assert lesson.name == name == lesson.preset.name
        assert lesson.kind == ("pitfall" if name in PITFALL_PRESETS else "exercise")
        assert lesson.question.strip() and lesson.explanation.strip() and lesson.title
        state = lesson.preset.build()
        assert isinstance(state, State) and isinstance(state.settings, Settings)
        assert state.run.single_head and state.lens_2d.shape == (state.batch, state.head_view().n_queries)
        # A fresh state every time: editing one must not change the preset.
        assert not np.shares_memory(state.head_view().queries, lesson.preset.build().head_view().queries)


def test_every_lesson_runs_in_the_app():
    for name, lesson in LESSONS.items():
        outcome = run_state(lesson.preset.build())
        assert outcome.error is None, (name, outcome.error)


def test_zero_length_uniform_in_book_nan_with_inf_fill_zero_in_sdpa():
    state = PITFALL_PRESETS["pitfall-zero-length"].build()
    report = lab(state)
    c = report.conventions
    assert c["d2l"].row_kinds[0].tolist() == ["uniform_over_padding"] * 2
    assert c["d2l"].weights[0].tolist() == [[0.25] * 4] * 2
    assert c["d2l"].output[0].tolist() == [[3.0, 4.0]] * 2  # the mean of all value vectors
    assert c["neg_inf"].row_kinds[0].tolist() == ["nan_row"] * 2
    assert c["sdpa"].row_kinds[0].tolist() == ["zero_row"] * 2
    assert c["sdpa"].output[0].abs().sum() == 0
    assert report.disagreements["d2l"].sentences[0] == (
        "d2l: 2 rows with no valid key get uniform weights (1/4 each) over padding where strict gives zero weights"
    )
    assert report.compare("sdpa", "d2l").sentences == (
        "sdpa: 2 rows with no valid key get zero weights where d2l gives uniform weights (1/4 each) over padding",
    )
    # PyTorch's own SDPA agrees with the sdpa convention on the empty rows.
    q, k, v = (
        torch.from_numpy(a).float()
        for a in (state.head_view().queries, state.head_view().keys, state.head_view().values)
    )
    mask = torch.arange(4)[None, None, :] < torch.from_numpy(state.lens_1d)[:, None, None]
    assert F.scaled_dot_product_attention(q, k, v, attn_mask=mask)[0].abs().sum() == 0


def test_wrong_polarity_attends_padding_and_nans_full_rows():
    state = PITFALL_PRESETS["pitfall-wrong-polarity"].build()
    assert state.settings.mask_mode == "inverted"
    report = lab(state)
    inv = report.conventions["inverted"]
    w = inv.weights
    assert (w[0, :, :2] == 0).all() and torch.allclose(w[0, :, 2:].sum(-1), torch.ones(2))
    assert inv.row_kinds[0].tolist() == ["padding_attended"] * 2
    assert inv.row_kinds[1].tolist() == ["nan_row"] * 2
    assert torch.isnan(inv.output[1]).all()
    sentences = report.disagreements["inverted"].sentences
    assert sentences[0].startswith("inverted: 2 rows with valid keys are NaN")
    assert (
        "inverted: 2 rows with valid keys put weight on 4 masked keys, up to all of a row's weight, where strict gives "
        "them none" in sentences
    )


def test_float_mask_masks_nothing():
    state = PITFALL_PRESETS["pitfall-float-mask"].build()
    report = lab(state)
    f01 = report.conventions["float01"]
    assert f01.row_kinds.tolist() == [["padding_attended"] * 2] * 2
    assert (f01.weights[0, :, 1:] > 0).all() and (f01.weights[1, :, 3] > 0).all()
    # Against a kept key with the same score a padded key gets 1/e of its weight: the +1 is all.
    no_mask = attend(
        torch.from_numpy(np.array(state.head_view().queries)),
        torch.from_numpy(np.array(state.head_view().keys)),
        torch.from_numpy(np.array(state.head_view().values)),
        scoring="scaled_dot",
        dtype="float64",
    )
    scores = no_mask.scores
    expected = torch.softmax(scores + (torch.arange(4) < torch.tensor([1, 3])[:, None, None]), -1)
    torch.testing.assert_close(run(state, dtype="float64").weights, expected)
    assert (
        report.disagreements["float01"]
        .sentences[0]
        .startswith("float01: 4 rows with valid keys put weight on 8 masked keys")
    )


def test_float16_fill_overflows_and_empty_row_is_nan():
    state = PITFALL_PRESETS["pitfall-float16"].build()
    assert state.settings.dtype == "float16"
    r16 = run(state)
    assert r16.masked_scores[0, 0, 0].item() == float("-inf")  # -1e6 does not fit in float16
    assert torch.isnan(r16.weights[0]).all() and not torch.isnan(r16.weights[1]).any()
    report = lab(state)
    assert report.conventions["d2l"].row_kinds[0].tolist() == ["nan_row"] * 2
    assert report.disagreements["d2l"].sentences[0] == (
        "d2l: 2 rows with no valid key get NaN weights where strict gives zero weights"
    )
    r32 = run(state, dtype="float32")
    assert r32.weights[0].tolist() == [[0.25] * 4] * 2


def test_fill_too_small_gives_the_weight_to_padding():
    state = PITFALL_PRESETS["pitfall-fill-too-small"].build()
    r = run(state)
    assert float(r.scores.max()) > 0 and float(r.scores[0, :, :2].max()) <= -1.45e6
    assert r.weights[0].tolist() == [[0.0, 0.0, 0.5, 0.5]] * 2
    assert any("at or below the -1e6 fill" in w for w in r.diagnostics.warnings)
    report = lab(state)
    assert report.conventions["strict"].weights[0].tolist() == [[0.0, 1.0, 0.0, 0.0]] * 2
    assert report.conventions["d2l"].row_kinds[0].tolist() == ["padding_attended"] * 2
    assert report.disagreements["d2l"].sentences[0] == (
        "d2l: 2 rows with valid keys put weight on 4 masked keys, up to all of a row's weight, where strict gives them "
        "none"
    )


def test_query_padding_rows_still_get_weights_and_outputs():
    state = PITFALL_PRESETS["pitfall-query-padding"].build()
    assert (state.head_view().queries[0, 2:] == 0).all() and state.lens_1d.tolist() == [2, 4]
    report = lab(state)
    # Every convention that masks keys correctly (the two buggy ones have their own lessons).
    for name in ("strict", "d2l", "neg_inf", "sdpa"):
        conv = report.conventions[name]
        # Padded query rows 2 and 3: half of the weight on each real key, the mean of their values.
        assert conv.weights[0, 2:].tolist() == [[0.5, 0.5, 0.0, 0.0]] * 2, name
        assert conv.output[0, 2:].tolist() == [[2.0, 3.0]] * 2, name
        assert conv.row_kinds[0, 2] == "ok"  # nothing a key mask can see is wrong with them
    # With 2-D lengths of 0 for the padded queries the book's fill still gives them an output.
    state.settings = Settings(**{**state.settings.as_dict(), "lens_mode": "2d"})
    report2 = lab(state)
    assert report2.conventions["d2l"].row_kinds[0, 2:].tolist() == ["uniform_over_padding"] * 2
    assert report2.conventions["d2l"].output[0, 2].tolist() == [1.0, 1.5]  # mean of [1,2],[3,4],[0,0],[0,0]
    assert report2.conventions["strict"].output[0, 2:].abs().sum() == 0
    assert report2.conventions["sdpa"].output[0, 2:].abs().sum() == 0


def test_nan_in_padded_values_survives_the_mask():
    state = PITFALL_PRESETS["pitfall-nan-padding"].build()
    assert np.isnan(state.head_view().values[0, 2:]).all() and state.lens_1d.tolist() == [2, 3]
    assert state.settings.allow_nonfinite is True
    report = lab(state, allow_nonfinite=True)
    d2l = report.conventions["d2l"]
    assert (d2l.weights[0, :, 2:] == 0).all() and (d2l.weights[1, :, 3] == 0).all()
    assert torch.isnan(d2l.output).all()  # every output row of both batch elements
    assert torch.isnan(report.conventions["neg_inf"].output).all()
    assert torch.isfinite(report.conventions["strict"].output).all()
    assert report.disagreements["d2l"].sentences == (
        "d2l: 4 rows have a non-finite output although their weights match strict's: a NaN or Inf in the value "
        "vector of a key with zero weight gets through (0 x NaN = NaN)",
    )
    # The explanation's claim about PyTorch's own SDPA.
    q, k, v = (
        torch.from_numpy(a).float()
        for a in (state.head_view().queries, state.head_view().keys, state.head_view().values)
    )
    mask = torch.arange(4)[None, None, :] < torch.from_numpy(state.lens_1d)[:, None, None]
    assert torch.isnan(F.scaled_dot_product_attention(q, k, v, attn_mask=mask)).all()


def test_exercise_1_distinct_keys_break_the_agreement():
    state = EXERCISE_PRESETS["exercise-1-keys"].build()
    assert state.head_view().queries.shape[2] == state.head_view().keys.shape[2] == 2
    assert len({tuple(k) for k in state.head_view().keys[0]}) == 10
    additive, dot = run(state, scoring="additive"), run(state, scoring="scaled_dot")
    assert float((additive.weights - dot.weights).abs().max()) > 0.05
    # Both still mask the same keys, and identical keys would make them agree.
    assert ((additive.weights == 0) == (dot.weights == 0)).all()
    state = state.with_head((0, 0), "keys", np.ones_like(state.head_view().keys))
    torch.testing.assert_close(run(state, scoring="additive").weights, run(state, scoring="scaled_dot").weights)


def test_exercise_2_bilinear_scores_different_lengths():
    state = EXERCISE_PRESETS["exercise-2-bilinear"].build()
    assert state.head_view().queries.shape[2] == 3 and state.head_view().keys.shape[2] == 5
    dot = run_state(
        State.from_tensors(
            state.head_view().queries,
            state.head_view().keys,
            state.head_view().values,
            state.lens_1d,
            state.lens_2d,
            Settings(**{**state.settings.as_dict(), "scoring": "scaled_dot"}),
        )
    )
    assert dot.error_field == "shape" and "d_q = 3, d_k = 5" in (dot.error or "")
    assert state.settings.scoring != "bilinear"  # the answer is not chosen for the student
    r = run(state, scoring="bilinear")
    q, k = torch.from_numpy(state.head_view().queries).float(), torch.from_numpy(state.head_view().keys).float()
    torch.testing.assert_close(r.raw_scores, q @ r.params["W"] @ k.transpose(1, 2))


def test_exercise_3_summation_weights_ignore_the_query():
    state = EXERCISE_PRESETS["exercise-3-summation"].build()
    assert len({tuple(q) for q in state.head_view().queries[0]}) == 3
    w = run(state).weights[0]
    # Equal up to the rounding of sum(q) + sum(k) in float32.
    torch.testing.assert_close(w[0], w[1], rtol=0, atol=1e-6)
    torch.testing.assert_close(w[1], w[2], rtol=0, atol=1e-6)
    wd = run(state, scoring="dot").weights[0]
    assert float((wd[0] - wd[1]).abs().max()) > 0.05


@pytest.mark.parametrize("name", sorted(LESSONS))
def test_explanations_quote_numbers_the_preset_shows(name):
    # Guard against an edited preset silently contradicting its explanation.
    lesson = LESSONS[name]
    quoted = {
        "pitfall-zero-length": ("1/4", "[3, 4]"),
        "pitfall-query-padding": ("1/2", "[2, 3]"),
        "pitfall-fill-too-small": ("-2e6", "-1e6"),
        "exercise-1-keys": ("2 and 6",),
        "exercise-2-bilinear": ("(3, 5)",),
    }.get(name, ())
    for text in quoted:
        assert text in lesson.explanation or text in lesson.question, text
