"""Sink logits per query (issue 35): Inkling 2 projects one sink logit per query and head from
the hidden state and puts it in the softmax as an extra logit of zero value (its eager
function concatenates it to the scores and drops its column). Recorded in that convention, the
capture's weights are the model's reported maps; the engine takes such sinks directly, and a
shape that is neither per head nor per query is refused in one line.

Tolerance: our engine against the model's own float32 matmul and softmax: a few ulps of 1, so
1e-5 (far below the 2.2 the calls were off by when the sinks were left out)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import attnviz
from attnviz.engine import AttentionInputError, Sinks, attend

transformers = pytest.importorskip("transformers")

TOL = 1e-5


def _inkling2() -> tuple[torch.nn.Module, object]:
    from attnviz.bench.capture_sweep import shrink

    if "inkling2_text" not in transformers.CONFIG_MAPPING:
        pytest.skip("this transformers has no Inkling 2")
    config = transformers.CONFIG_MAPPING["inkling2_text"]()
    shrink(config)
    # The sliding layers' own sizes and the experts', which the sweep's shrinking leaves: a few
    # heads and a small width keep the test under seconds.
    config.swa_num_attention_heads, config.swa_num_key_value_heads, config.swa_head_dim = 4, 2, 16
    config.moe_intermediate_size = 32
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    model = transformers.AutoModel.from_config(config, attn_implementation="eager").eval()
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "sink_proj" in name:
                parameter.normal_(std=2.0)  # sinks that take a visible share of every row
    return model, config


def test_inkling2_sinks_per_query_are_recorded_and_the_weights_are_the_models(tmp_path) -> None:
    model, _config = _inkling2()
    ids = torch.randint(3, 100, (2, 8))
    with torch.no_grad(), attnviz.capture(model) as cap:
        out = model(input_ids=ids, output_attentions=True)
    calls = [c for c in cap.calls if c.sinks is not None]
    assert len(calls) == len(out.attentions) >= 1
    for call, reported in zip(calls, out.attentions):
        b, h, n_q, _n_k = reported.shape
        assert tuple(call.sinks.shape) == (b, h, n_q)
        assert "a sink logit per query of each head" in call.note
        ours = call.weights()
        assert torch.allclose(ours.double(), reported.double(), atol=TOL)
        assert float(ours.sum(-1).min()) < 0.9  # the sink's share is real
        assert call.fidelity is not None and call.fidelity < TOL
        # The test can fail: the same call without its sinks is far from the model's maps.
        call.sinks = None
        assert float((call.weights().double() - reported.double()).abs().max()) > 1e-2
    # Saved, read back and shown one head at a time (the window's and render's computation):
    # the sinks keep their shape and each head's weights are the model's.
    path = tmp_path / "inkling2.attnviz-capture"
    with torch.no_grad(), attnviz.capture(model) as cap:
        model(input_ids=ids)
    cap.save(path)
    run = attnviz.io.load_capture(path)
    from attnviz.compute import run_state
    from attnviz.state.document import State

    state = State.from_run(run)
    layers = [i for i, c in enumerate(run.calls) if c.sinks is not None]
    for layer, reported in zip(layers, out.attentions):
        assert run.calls[layer].sinks.shape == tuple(reported.shape[:3])
        for head in (0, reported.shape[1] - 1):
            outcome = run_state(state, 0, attnviz.state.run.Focus(layer, head))
            assert outcome.error is None and outcome.view is not None
            np.testing.assert_allclose(outcome.view.weights, reported[:, head].double().numpy(), atol=TOL)


def test_the_engine_takes_sinks_per_query_and_refuses_other_shapes() -> None:
    torch.manual_seed(1)
    q, k, v = torch.randn(2, 3, 5, 4), torch.randn(2, 3, 6, 4), torch.randn(2, 3, 6, 4)
    sinks = torch.randn(2, 3, 5)
    result = attend(q, k, v, score_terms=[Sinks(sinks)])
    scores = q @ k.transpose(-1, -2) / 2.0
    expected = torch.softmax(torch.cat([scores, sinks[..., None]], -1), -1)[..., :-1]
    assert torch.allclose(result.weights, expected, atol=TOL)
    # Per head, as before: one logit for every query of the head.
    per_head = attend(q, k, v, score_terms=[Sinks(torch.tensor([0.5, -1.0, 2.0]))])
    broadcast = attend(q, k, v, score_terms=[Sinks(torch.tensor([0.5, -1.0, 2.0])[None, :, None].expand(2, 3, 5))])
    assert torch.allclose(per_head.weights, broadcast.weights, atol=TOL)
    with pytest.raises(AttentionInputError, match="per query of each head"):
        attend(q, k, v, score_terms=[Sinks(torch.randn(2, 3, 4))])
