"""The main view and the long-context view bind the state's one mask description
(``engine_args.state_mask``), so they cannot disagree on a mask: valid lengths, causal, a
model's masks, window, sinks, prefix, chunk and documents all reach both."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.compute.attention import run_state
from attnviz.compute.long_view import LongRequest, compute_overview
from attnviz.state.document import Settings, State
from attnviz.state.run import MaskArguments

N = 36


def masked_state(settings: dict, masks: MaskArguments | None, documents: bool):
    rng = np.random.default_rng(7)
    queries, keys = rng.standard_normal((2, N, 8)), rng.standard_normal((2, N, 8))
    values = rng.standard_normal((2, N, 4))
    lens_2d = rng.integers(0, N + 1, (2, N))
    causal = settings.pop("causal", None)
    return State.from_tensors(
        queries,
        keys,
        values,
        lens_2d=lens_2d,
        settings=Settings(scoring="scaled_dot", mask_mode="strict", dtype="float64", **settings),
        masks=masks,
        causal=causal,
        documents=np.stack([np.repeat([0, 1, 2], 12), np.tile([0, 1, 2], 12)]) if documents else None,
    )


PAD = np.ones((2, N), np.int64)
PAD[1, -7:] = 0
BAND = np.abs(np.arange(N)[:, None] - np.arange(N)[None, :]) < 9

CASES = {
    "causal window, padding, documents": (
        {"causal": "top_left", "window": 6, "lens_mode": "none"},
        MaskArguments(attention_mask=PAD),
        True,
    ),
    "bottom-right window, 2-D lengths": ({"causal": "bottom_right", "window": 5, "lens_mode": "2d"}, None, False),
    "sinks, full attn_mask": (
        {"causal": "top_left", "window": 4, "sinks": 2, "lens_mode": "none"},
        MaskArguments(attn_mask=BAND),
        False,
    ),
    "prefix, chunk, additive padding": (
        {"prefix": 5, "chunk": 11, "lens_mode": "1d"},
        MaskArguments(key_padding_mask=np.where(PAD == 1, 0.0, -np.inf)),
        True,
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_the_long_context_view_shows_the_main_views_mask_and_weights(name):
    settings, masks, documents = CASES[name]
    settings = dict(settings)
    state = masked_state(settings, masks, documents)
    outcome = run_state(state)
    assert outcome.error is None, outcome.error
    view = outcome.view
    assert (~view.mask).any() and view.mask.any()
    for batch in range(2):
        result = compute_overview(LongRequest(1, state, batch, (N, N), 1))  # one cell per bin
        assert result.error is None, result.error
        np.testing.assert_array_equal(result.masked_share, (~view.mask[batch]).astype(np.float64))
        np.testing.assert_allclose(result.mean, view.weights[batch], rtol=0, atol=1e-12)


def test_copy_as_code_writes_the_mask_the_app_applies_a_mask_mod_too():
    """The snippet's mask is the app's description of the call's mask (less the valid lengths and
    the causal flag, which the chapter's code writes itself): a call's mask_mod is in it (a copy
    of that description had left it out)."""
    from attnviz.snippets.inputs import snippet_input

    def band(b, h, q, k):
        return (q - k).abs() < 3

    state = masked_state(
        {"window": 0, "lens_mode": "none"}, MaskArguments(attention_mask=PAD, mask_mod=band), documents=False
    )
    outcome = run_state(state)
    given = snippet_input(state, outcome)
    assert given.mask is not None
    q, k = np.arange(N)[:, None], np.arange(N)[None, :]
    expected = (np.abs(q - k) < 3)[None] & (PAD[:, None, :] == 1)
    np.testing.assert_array_equal(given.mask, expected)
    np.testing.assert_array_equal(given.mask, outcome.view.mask.astype(bool))
