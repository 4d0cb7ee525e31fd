"""The doctor's sentences of issue 23: a causal mask dropped in 1 of 2 layers (a tie is not a
majority, and was missed); a mask inverted in a causal, left-padded model (its allowed keys are
padding and the future, so it was named "nothing masks the padding"); left padding masked as
right padding (real keys hidden, which was not said); asking for the weights that changed a
call's path."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import attnviz
from attnviz.capture import diagnose_run

from .models import TinySdpa, ids

#: Left padded: element 1 by 2, element 2 by 4 (a causal model's batch).
LEFT = torch.tensor([[1] * 6, [0, 0] + [1] * 4, [0] * 4 + [1] * 2]).bool()
TOKENS = [[f"w{j}" if LEFT[i, j] else "<pad>" for j in range(6)] for i in range(3)]
CAUSAL = torch.ones(6, 6, dtype=torch.bool).tril()
GOOD = CAUSAL & LEFT[:, None, None, :]


def findings(masks: list[tuple[torch.Tensor | None, bool]], layers: int = 3) -> list[Any]:
    model = TinySdpa(layers=layers)
    with attnviz.capture(model, tokens=TOKENS) as cap, torch.no_grad():
        model(ids(), masks)
    return diagnose_run(cap.to_run())


def test_the_correct_causal_left_padded_model_is_clean():
    assert findings([(GOOD, False)] * 3) == []


def test_a_causal_mask_dropped_in_one_of_two_layers():
    found = findings([(GOOD, False), (LEFT[:, None, None, :], False)], layers=2)
    assert [(f.kind, f.call) for f in found] == [("future_attended", 1)]
    assert "1 of the 2 calls of this stack are causal" in found[0].message


def test_an_inverted_mask_in_a_causal_left_padded_model_is_named_inverted():
    # nn.MultiheadAttention's convention (True = masked) handed to SDPA (True = attend): it allows
    # the padding and the future, and hides the real past.
    inverted = ~GOOD
    found = findings([(inverted, False)] * 3)
    assert {(f.kind, f.call) for f in found} == {("inverted_polarity", i) for i in range(3)}
    assert "polarity is inverted, built as True = masked" in found[0].message
    assert not any("nothing masks them" in f.message for f in found)


def test_left_padding_masked_as_right_padding_says_real_keys_were_hidden():
    right = torch.tensor([[1] * 6, [1] * 4 + [0, 0], [1] * 2 + [0] * 4]).bool()
    found = findings([(CAUSAL & right[:, None, None, :], False)] * 3)
    assert {(f.kind, f.call) for f in found} == {("padding_side", i) for i in range(3)}
    assert found[0].batch == (1, 2) and "6 real keys hidden" in found[0].message
    assert "left padding was masked as right padding" in found[0].message


@pytest.fixture(scope="module")
def transformers() -> Any:
    return pytest.importorskip("transformers", reason="transformers is a test dependency (pip install .[test])")


def test_asking_for_weights_that_changed_the_path_is_said(transformers):
    config = transformers.LlamaConfig(
        vocab_size=60,
        hidden_size=32,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
    )
    config._attn_implementation = "sdpa"
    torch.manual_seed(0)
    model = transformers.LlamaModel(config).eval()
    batch = {"input_ids": torch.randint(1, 60, (2, 5)), "attention_mask": torch.ones(2, 5, dtype=torch.long)}
    with torch.no_grad(), attnviz.capture(model) as cap:
        model(**batch)
        model.config._attn_implementation = "eager"  # what asking for weights does to some models
        model(**batch, output_attentions=True)
    run = cap.to_run()
    assert [c.path.implementation for c in run.calls] == ["sdpa", "sdpa", "eager", "eager"]
    found = [f for f in diagnose_run(run) if f.kind == "weights_path"]
    assert [f.call for f in found] == [2, 3] and found[0].severity == "warning"
    assert "ran this call on the eager path while the other calls of its stack ran sdpa" in found[0].message
