"""Diagnoses that name the cause (issue 34): for each class of bug, a tiny model with the bug and
its twin with the same weights; the invariance checks and the doctor report the bug as an error
naming its cause and where, say nothing on the twin, and ``attnviz check`` / ``attnviz doctor``
exit 1 on the bug and 0 on the twin."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

import attnviz
from attnviz.capture import diagnose_run, format_finding
from attnviz.cli.check import check_main
from attnviz.cli.doctor import doctor_main

from . import bug_models as bugs


def lines(findings: Any) -> str:
    return "\n".join(format_finding(f) for f in findings)


def check(factory: Any, checks: tuple[str, ...], **options: Any) -> Any:
    model, inputs = factory()
    return attnviz.check_invariance(model, inputs, checks, **options)


# ----------------------------------------------------------------------------- (a) positions, not mask


def test_restarted_rotary_positions_in_a_cached_step_are_blamed_on_the_positions():
    (finding,) = check(bugs.positions_restarted, ("kv_cache",))
    assert finding.kind == "kv_cache" and finding.severity == "error"
    assert finding.call == 0 and finding.name == "layers.0" and finding.rows == (3,)  # the one-token step
    assert finding.batch == (0, 1, 2) and finding.heads == (0, 1, 2, 3)
    assert "positions of the step are wrong, not its mask" in finding.message
    assert "3 cached token(s)" in finding.message
    assert "the mask was ruled out" in finding.message and "aligned bottom-right" not in finding.message
    assert list(check(bugs.positions_offset, ("kv_cache",))) == []


def test_restarted_positions_in_a_transformers_llama_with_a_padded_batch():
    from .models import batch, llama

    model = llama()
    rotary = model.model.rotary_emb.forward
    # Each call's positions counted from its own first token: a step starts again at 0.
    model.model.rotary_emb.forward = lambda x, position_ids: rotary(x, position_ids - position_ids[:, :1])
    # Right padded: the full forward expands the KV heads for its mask, the cached step does not.
    (finding,) = attnviz.check_invariance(model, batch((6, 4, 3)), ("kv_cache",))
    assert finding.call == 0 and finding.batch == (0, 1) and finding.rows == (3,)  # 3 is padding in batch 2
    assert "positions of the step are wrong, not its mask" in finding.message


def test_a_top_left_mask_is_still_the_mask_with_positions_ruled_out():
    from .models import batch, llama, transformers
    from .test_invariance import top_left_step

    transformers().AttentionInterface.register("attnviz_top_left", top_left_step)
    (finding,) = attnviz.check_invariance(llama(implementation="attnviz_top_left"), batch((6, 6, 6)), ("kv_cache",))
    assert "top-left" in finding.message and "positions ruled out" in finding.message


# ----------------------------------------------------------------------------- (b) dropout at inference


def test_dropout_left_on_is_an_error_naming_training_mode_and_the_modules_first():
    findings = check(bugs.dropout_on, ("padding", "kv_cache"))
    (finding,) = findings
    assert finding.kind == "determinism" and finding.severity == "error", lines(findings)
    assert "training mode" in finding.message and "model.eval()" in finding.message
    assert "layers.0, layers.1" in finding.message  # the modules whose dropout is active
    assert "padding" not in finding.message.split("(")[0]  # no padding blamed for the noise
    assert findings.notes and findings.notes[0].startswith("padding, kv_cache: not checked")
    model, inputs = bugs.dropout_on()
    assert model.training  # the check leaves the model as it was
    assert list(check(bugs.dropout_off, ("determinism", "padding", "kv_cache"))) == []


def test_the_doctor_names_dropout_in_a_capture():
    model, inputs = bugs.dropout_on()
    with attnviz.capture(model) as cap, torch.no_grad():
        model(**inputs)
    found = diagnose_run(cap.to_run())
    assert {f.kind for f in found} == {"dropout"} and all(f.severity == "error" for f in found), lines(found)
    assert "training mode" in found[0].message and "p = 0.2" in found[0].message


def test_dropout_on_the_weights_of_attention_code_of_its_own_is_named_too():
    inputs = bugs.padded((6, 4, 3))
    for training in (True, False):
        model = bugs.EagerEncoder().train(training)
        with attnviz.capture(model, tokens=bugs.tokens(inputs["input_ids"], inputs["attention_mask"])) as cap:
            with torch.no_grad():
                model(**inputs)
        found = diagnose_run(cap.to_run())
        assert [f.kind for f in found] == (["dropout"] if training else []), lines(found)
        findings = attnviz.check_invariance(model, inputs, ("padding",))
        assert [f.kind for f in findings] == (["determinism"] if training else []), lines(findings)
        if training:
            assert "attention.dropout" in findings[0].message and "training mode" in findings[0].message


# ----------------------------------------------------------------------------- (c) same mask, other computation


def test_paths_that_group_kv_heads_differently_compute_different_attention_for_the_same_mask():
    model, inputs = bugs.regrouped()
    (finding,) = attnviz.check_invariance(
        model, inputs, ("implementations",), implementations=("attnviz_regrouped", "sdpa")
    )
    assert finding.kind == "implementations" and finding.call == 0 and finding.severity == "error"
    assert "compute different attention for the same mask" in finding.message
    assert "builds its own mask" not in finding.message
    # Heads 0 and 3 read the same KV head either way (0 and 1); heads 1 and 2 are swapped.
    assert finding.heads == (1, 2) and "grouping of KV heads" in finding.message
    assert "[0, 1, 0, 1]" in finding.message and "[0, 0, 1, 1]" in finding.message
    assert list(attnviz.check_invariance(model, inputs, ("implementations",))) == []  # eager and sdpa agree


def test_the_odd_path_is_named_whichever_side_it_is_on():
    model, inputs = bugs.regrouped()
    # The reference is the first path run when SDPA is not among them: here the buggy one.
    findings = attnviz.check_invariance(
        model, inputs, ("implementations",), implementations=("attnviz_regrouped", "eager")
    )
    (finding,) = findings
    assert "compute different attention for the same mask" in finding.message, lines(findings)
    assert "in the attnviz_regrouped path: the grouping of KV heads" in finding.message


def test_a_path_that_does_not_scale_its_scores_is_named():
    model, inputs = bugs.regrouped()
    name = bugs.register_unscaled()
    (finding,) = attnviz.check_invariance(model, inputs, ("implementations",), implementations=(name, "sdpa"))
    assert "compute different attention for the same mask" in finding.message
    assert f"in the {name} path: the scale: the scores are scaled by 1 (1)" in finding.message
    assert finding.heads == (0, 1, 2, 3)


def test_the_doctor_does_not_pass_a_call_it_cannot_reproduce():
    model, inputs = bugs.regrouped()
    model.set_attn_implementation("attnviz_regrouped")
    with attnviz.capture(model) as cap, torch.no_grad():
        model(**inputs)
    found = [f for f in diagnose_run(cap.to_run()) if f.severity == "error"]
    assert found and {f.kind for f in found} == {"fidelity"}, lines(found)
    assert "cannot reproduce" in found[0].message and "0.001 allowed" in found[0].message
    assert "the head grouping" in found[0].message and "KV heads [0, 1, 0, 1]" in found[0].message
    model.set_attn_implementation("eager")
    with attnviz.capture(model) as cap, torch.no_grad():
        model(**inputs)
    assert diagnose_run(cap.to_run()) == []


# ----------------------------------------------------------------------------- (d), (e), (f): the mask's shape

SHAPES = {
    # class: (bug factory, twin factory, kind, words of the cause, call, heads, batch)
    "mask order": (
        bugs.mask_order,
        bugs.mask_order_twin,
        "mask_order",
        ("wrong order", "repeat_interleave", "attends to padding", "hides real key"),
        0,
        (1, 2),
        (0, 1, 2),
    ),
    "shifted by one": (
        bugs.shifted,
        bugs.shifted_twin,
        "mask_shift",
        ("shifted by 1 position", "hides real key(s) 0", "attends to padding key(s) 4"),
        0,
        (0, 1),
        (0, 1, 2),
    ),
    # Moved in with a 1: no real key hidden, one pad let through while the others are masked.
    "shifted by one, filled with 1": (
        bugs.shifted_filled,
        bugs.shifted_filled_twin,
        "mask_shift",
        ("shifted by 1 position", "batch 1 attends to padding key(s) 4", "batch 2 attends to padding key(s) 3"),
        0,
        (0, 1),
        (1, 2),
    ),
    # A causal decoder: the pad a shift lets through is later than every real query on the right.
    "shifted by one, causal, right padded": (
        bugs.shifted_causal_right,
        bugs.shifted_causal_right_twin,
        "mask_shift",
        ("shifted by 1 position", "batch 1 hides real key(s) 0", "batch 2 hides real key(s) 0"),
        0,
        (0, 1),
        (0, 1, 2),
    ),
    "shifted by one, causal, left padded": (
        bugs.shifted_causal_left,
        bugs.shifted_causal_left_twin,
        "mask_shift",
        ("shifted by 1 position", "batch 1 hides real key(s) 2", "batch 2 hides real key(s) 3"),
        0,
        (0, 1),
        (0, 1, 2),
    ),
    "decoder mask on encoder keys": (
        bugs.wrong_source,
        bugs.wrong_source_twin,
        "wrong_source",
        ("a decoder's mask on encoder keys", "batch 0: encoder key(s) 4", "batch 2: encoder key(s) 2"),
        2,
        (0, 1),
        (0, 1, 2),
    ),
    # Encoder and decoder of different lengths (issue 34's second half).
    "decoder's lengths on a longer encoder": (
        bugs.longer_encoder,
        bugs.longer_encoder_twin,
        "wrong_source",
        (
            "a decoder-length mask on encoder keys",
            "(4 positions, real lengths 4, 2, 3) padded with zeros to 7 keys",
            "real encoder keys wrongly hidden: batch 0: encoder key(s) 4 '",
            "encoder padding keys attended: none",
        ),
        2,
        (0, 1),
        (0, 1, 2),
    ),
    "decoder's mask cut to a shorter encoder": (
        bugs.longer_decoder,
        bugs.longer_decoder_twin,
        "wrong_source",
        (
            "a decoder-length mask on encoder keys",
            "(7 positions, real lengths 7, 3, 5) cut to 4 keys",
            "encoder padding keys attended: batch 1: encoder padding key(s) 2 '",
            "batch 2: encoder padding key(s) 3 '",
        ),
        2,
        (0, 1),
        (1, 2),
    ),
    "decoder's mask padded to the encoder's length": (
        bugs.fitted_mask,
        bugs.fitted_mask_twin,
        "wrong_source",
        ("a decoder-length mask on encoder keys", "padded with zeros to 7 keys", "batch 1: encoder key(s) 2 '"),
        2,
        (0, 1),
        (0, 1, 2),
    ),
    "decoder's lengths, left-padded decoder": (
        bugs.lengths_left_decoder,
        bugs.lengths_left_decoder_twin,
        "wrong_source",
        (
            "the decoder's padding on the encoder's keys",
            "arange(L_enc) < the decoder's lengths (4, 2, 3)",
            "batch 0: encoder key(s) 4 '",
        ),
        2,
        (0, 1),
        (0, 1, 2),
    ),
}


def capture_with_tokens(factory: Any) -> Any:
    model, inputs = factory()
    own = bugs.tokens(inputs["input_ids"], inputs["attention_mask"])
    if "decoder_input_ids" in inputs:
        tokens = bugs.tokens(inputs["decoder_input_ids"], inputs["decoder_attention_mask"])
        cap = attnviz.capture(model, tokens=tokens, encoder_tokens=own)
    else:
        cap = attnviz.capture(model, tokens=own)
    with cap, torch.no_grad():
        model(**inputs)
    return cap


@pytest.mark.parametrize("case", SHAPES)
def test_the_doctor_names_the_shape_of_the_mask_mistake(case):
    bug, twin, kind, words, call, heads, batch = SHAPES[case]
    found = diagnose_run(capture_with_tokens(bug).to_run())
    (finding,) = found
    assert (finding.kind, finding.severity, finding.call) == (kind, "error", call), lines(found)
    assert (finding.heads, finding.batch) == (heads, batch)
    for word in words:
        assert word in finding.message, finding.message
    assert "'w" in finding.message or "'[PAD]'" in finding.message  # keys named in tokens
    assert diagnose_run(capture_with_tokens(twin).to_run()) == []


@pytest.mark.parametrize("case", SHAPES)
def test_the_padding_check_names_the_shape_of_the_mask_mistake(case):
    bug, twin, _kind, words, call, heads, batch = SHAPES[case]
    found = check(bug, ("padding",))
    (finding,) = found
    assert (finding.kind, finding.severity, finding.call) == ("padding", "error", call), lines(found)
    assert (finding.heads, finding.batch) == (heads, batch)
    for word in words:
        assert word in finding.message, finding.message
    assert list(check(twin, ("padding",))) == []


def test_decoder_inputs_are_not_re_padded_as_encoder_text():
    # Decoder inputs as long as the encoder's: re-padding them with the encoder's padding would
    # hide real decoder tokens. A correct model stays silent through every re-padded run.
    model, inputs = bugs.wrong_source(False)
    assert inputs["decoder_input_ids"].shape == inputs["input_ids"].shape
    assert list(attnviz.check_invariance(model, inputs, ("padding",))) == []


# ----------------------------------------------------------------------------- (g) a batch's own positions


def test_arange_positions_on_a_left_padded_batch_are_named():
    (finding,) = check(bugs.arange_positions, ("padding",))
    assert finding.kind == "padding" and finding.severity == "error" and finding.call == 0
    assert finding.batch == (1, 2) and finding.rows == (2, 3, 4, 5)  # the real rows of the padded ones
    assert "position_ids are not each sequence's own" in finding.message
    assert "first real token is at position 2 in the batch and at 0 alone" in finding.message
    assert "masks were ruled out" in finding.message
    assert list(check(bugs.arange_positions_twin, ("padding",))) == []


# ----------------------------------------------------------------------------- the command lines

COMMANDS = {
    "positions": ("positions_restarted", "positions_offset", ["--checks", "kv_cache"]),
    "dropout": ("dropout_on", "dropout_off", ["--checks", "padding"]),
    "grouping": ("regrouped", "regrouped", ["--checks", "implementations"]),
    "mask order": ("mask_order", "mask_order_twin", ["--checks", "padding"]),
    "shift": ("shifted", "shifted_twin", ["--checks", "padding"]),
    "wrong source": ("wrong_source", "wrong_source_twin", ["--checks", "padding"]),
    "position_ids": ("arange_positions", "arange_positions_twin", ["--checks", "padding"]),
    "wrong source, longer encoder": ("longer_encoder", "longer_encoder_twin", ["--checks", "padding"]),
    "wrong source, longer decoder": ("longer_decoder", "longer_decoder_twin", ["--checks", "padding"]),
    "wrong source, same padding": ("same_padding", "same_padding_twin", ["--checks", "padding"]),
}


@pytest.mark.parametrize("case", COMMANDS)
def test_attnviz_check_exits_1_on_each_bug_and_0_on_its_twin(case, capsys):
    bug, twin, options = COMMANDS[case]
    target = "tests.compare.bug_models:{}"
    bug_options = [*options, "--implementations", "attnviz_regrouped,sdpa"] if case == "grouping" else options
    assert check_main([target.format(bug), *bug_options]) == 1
    out = capsys.readouterr().out
    assert out.startswith("error: ") and "1 error" in out
    assert check_main([target.format(twin), *options]) == 0
    assert "0 errors" in capsys.readouterr().out


DOCTOR = {
    "dropout": (bugs.dropout_on, bugs.dropout_off),
    "mask order": (bugs.mask_order, bugs.mask_order_twin),
    "shift": (bugs.shifted, bugs.shifted_twin),
    "wrong source": (bugs.wrong_source, bugs.wrong_source_twin),
    "wrong source, longer encoder": (bugs.longer_encoder, bugs.longer_encoder_twin),
    "wrong source, longer decoder": (bugs.longer_decoder, bugs.longer_decoder_twin),
}


@pytest.mark.parametrize("case", DOCTOR)
def test_attnviz_doctor_exits_1_on_each_bug_and_0_on_its_twin(case, tmp_path: Path, capsys):
    for factory, status in zip(DOCTOR[case], (1, 0)):
        path = tmp_path / f"{factory.__name__}.attnviz-capture"
        capture_with_tokens(factory).save(path)
        assert doctor_main([str(path)]) == status
        out = capsys.readouterr().out
        assert ("no mask problem found" in out) == (status == 0), out


def test_attnviz_doctor_exits_1_on_a_call_it_cannot_reproduce(tmp_path: Path, capsys):
    model, inputs = bugs.regrouped()
    for implementation, status in (("attnviz_regrouped", 1), ("eager", 0)):
        model.set_attn_implementation(implementation)
        with attnviz.capture(model) as cap, torch.no_grad():
            model(**inputs)
        path = tmp_path / f"{implementation}.attnviz-capture"
        cap.save(path)
        assert doctor_main([str(path)]) == status
        out = capsys.readouterr().out.splitlines()
        assert ("no mask problem found" in out[-1]) == (status == 0), out
    assert doctor_main([str(tmp_path / "attnviz_regrouped.attnviz-capture"), "--max-fidelity", "10"]) == 0


class HardCodedLength(torch.nn.Module):
    """A mask reshaped to a length written into the code: the batch runs, a shorter sequence not."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.embed = torch.nn.Embedding(bugs.VOCAB, bugs.WIDTH)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        x = self.embed(input_ids)
        keep = attention_mask.bool().reshape(input_ids.shape[0], 1, 1, 6)
        q = bugs.heads(x, 2)
        return x + bugs.merged(torch.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=keep))


def test_a_model_that_fails_on_a_sequence_alone_is_an_error_that_says_so():
    findings = attnviz.check_invariance(HardCodedLength(), bugs.padded((6, 4, 3)), ("padding",))
    (finding,) = findings
    assert finding.kind == "padding" and finding.severity == "error" and finding.call == -1
    assert finding.message.startswith("the model fails on batch element 1 alone though it runs on the batch")
    assert "RuntimeError" in finding.message


def test_a_decoder_mask_that_fits_the_batch_is_named_where_a_sequence_alone_fails():
    # The two paddings agree in the batch: the decoder's mask passes there, and fails on a
    # sequence alone, whose encoder is cut to its length and whose decoder is not.
    (finding,) = check(bugs.same_padding, ("padding",))
    assert finding.kind == "padding" and finding.severity == "error"
    assert "fails on batch element 1 alone in its cross-attention decoder.cross_attn" in finding.message
    assert "a decoder-length mask on the encoder's keys (the decoder's 6 positions against the encoder's 3 keys" in (
        finding.message
    )
    assert list(check(bugs.same_padding_twin, ("padding",))) == []
