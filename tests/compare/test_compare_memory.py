"""Comparisons inside the memory budget (issue 30): ``compare`` takes one head at a time, and that
head's difference a block of rows at a time; a head recomputed alone is the call's head."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import attnviz
from attnviz.compare import call_weights, head_weights, largest_per_row_block
from attnviz.state.run import AttentionCall, CallTerm, MaskArguments, ModelRun

ROOT = Path(__file__).resolve().parents[2]
# float32 weights of the same head computed in a call of 4 heads and alone: other matmul shapes
# round differently (a few ulps of 1.0, ~1e-7); far below any difference a comparison reports.
ATOL = 1e-6


def _call(*, mask_mod=None, score_mod=None) -> AttentionCall:
    g = np.random.default_rng(3)
    b, h, kv, n, d = 2, 4, 2, 5, 3  # grouped-query: two key/value heads for four query heads
    q = g.standard_normal((b, h, n, d)).astype(np.float32)
    k, v = (g.standard_normal((b, kv, n, d)).astype(np.float32) for _ in range(2))
    attn_mask = g.random((b, h, n, n)) > 0.3
    attn_mask[..., 0] = True  # every row keeps a key
    bias = g.standard_normal((1, h, n, n)).astype(np.float32)
    terms = [CallTerm("bias", "position_bias", values=bias), CallTerm("softcap", "softcap", cap=5.0)]
    if score_mod is not None:
        terms.append(CallTerm("score_mod", "score_mod", fn=score_mod))
    masks = MaskArguments(attn_mask=attn_mask, key_padding_mask=np.array([[False] * n, [False] * (n - 1) + [True]]))
    masks = MaskArguments(**{**masks.__dict__, "mask_mod": mask_mod})
    return AttentionCall("layer", q, k, v, masks, terms=tuple(terms), sinks=np.arange(h, dtype=np.float32) / 4)


@pytest.mark.parametrize("live", [False, True])
def test_a_head_recomputed_alone_is_the_calls_head(live: bool) -> None:
    def mask_mod(b, h, q_idx, kv_idx):
        return (kv_idx <= q_idx) | (h == 2)

    def score_mod(score, b, h, q_idx, kv_idx):
        return score + 0.1 * h * (q_idx - kv_idx)

    call = _call(mask_mod=mask_mod, score_mod=score_mod) if live else _call()
    whole = call_weights(call)
    for head in range(call.shape[1]):
        alone = head_weights(call, head).double().numpy()
        np.testing.assert_allclose(alone, whole[:, head], rtol=0, atol=ATOL)
    # The head index the functions see is the call's, not 0: head 2 attends everywhere.
    if live:
        n = call.shape[2]
        above = np.triu(np.ones((n, n), bool), 1)
        for head, seen in ((2, True), (0, False)):
            allowed = call.masks.attn_mask[:, head] & ~call.masks.key_padding_mask[:, None, :] & above
            assert allowed.any() and (
                (whole[:, head][allowed] > 0).all() if seen else not whole[:, head][allowed].any()
            )


def test_recorded_weights_are_read_one_head_at_a_time_without_a_copy() -> None:
    weights = np.random.default_rng(0).random((2, 3, 4, 4)).astype(np.float32)
    call = AttentionCall("w", None, None, None, weights=weights)
    head = head_weights(call, 1)
    assert np.shares_memory(head.numpy(), weights) and head.shape == (2, 4, 4)


def test_the_streamed_difference_counts_nan_and_infinity_as_compare_does() -> None:
    a = np.zeros((2, 3000, 700))
    b = a.copy()
    b[0, 2999, 5] = 0.25  # in the last block of rows
    a[1, 10, 10] = b[1, 10, 10] = np.nan  # NaN in both: no difference
    a[1, 20, 3] = b[1, 20, 3] = np.inf
    assert largest_per_row_block(a, b).tolist() == [0.25, 0.0]
    b[1, 1500, 1] = np.nan  # NaN in one: infinite
    assert largest_per_row_block(a, b).tolist() == [0.25, np.inf]


def test_a_calls_difference_is_its_heads(tmp_path: Path) -> None:
    a, b = _call(), _call()
    q = a.queries.copy()
    q[1, 3] += 1.0  # head 3 of batch element 1 moves
    b = AttentionCall(**{**b.__dict__, "queries": q})
    result = attnviz.compare(ModelRun((a,)), ModelRun((b,)))
    (diff,) = result.calls
    expected = np.abs(call_weights(a) - call_weights(b)).max(axis=(2, 3))
    np.testing.assert_allclose(diff.weights, expected, rtol=0, atol=ATOL)
    assert diff.weights[1, 3] > 0.01 and diff.weights[0].max() == 0 and not diff.outputs_compared


_DIFF = r"""
import sys
from attnviz.cli.diff import diff_main
cap(int(sys.argv[3]))
base = start_peak()
started = time.perf_counter()
status = diff_main([sys.argv[1], sys.argv[2]])
print(json.dumps({"status": status, "seconds": time.perf_counter() - started, "peak_mb": peak_mb(base)}))
"""


@pytest.mark.skipif(sys.platform != "linux", reason="peak memory read from /proc")
def test_diff_of_two_long_captures_stays_within_300_mb(tmp_path: Path) -> None:
    from attnviz.bench.safety_outputs import long_captures, probe_diff

    a, b = long_captures(tmp_path)
    assert a.stat().st_size < 1_000_000  # small files: 8 heads of 4096 queries of one dimension
    found = probe_diff(a, b)
    assert found["status"] == 1, found  # they differ, and say so
    assert found["peak_mb"] < 300, found
    # Neither capture recorded outputs: said so, never "outputs by up to 0".
    assert "outputs not compared" in found["stdout"] and "outputs by up to" not in found["stdout"]


def test_recorded_weights_against_their_recomputation_stream_in_step() -> None:
    # One side recorded weights only, the other recomputed: blocks of both sides line up (rows of
    # one batch element at a time), and a call compared with its own recomputed weights agrees.
    live = _call()
    recorded = AttentionCall("layer", None, None, None, weights=call_weights(live).astype(np.float32))
    result = attnviz.compare(ModelRun((live,)), ModelRun((recorded,)))
    assert result.max_weight_diff <= ATOL and result.calls[0].weights.shape == (2, 4)
    moved = call_weights(live).astype(np.float32)
    moved[1, 2, 4, 0] += 0.5  # the last row of a head: in the last block
    result = attnviz.compare(ModelRun((live,)), ModelRun((AttentionCall("layer", None, None, None, weights=moved),)))
    assert result.calls[0].worst == (1, 2) and abs(result.max_weight_diff - 0.5) < ATOL


def test_a_comparison_streams_weights_and_never_keeps_a_stage(monkeypatch) -> None:
    # attend keeps (N, L_q, L_k) stages and computes diagnostics (54.8 s for issue 30's two long
    # captures): a comparison takes the weights only, a block of rows at a time.
    import attnviz.capture.calls as calls
    import attnviz.engine.streamed as streamed

    def refused(*_args, **_kwargs):
        raise AssertionError("compare called attend")

    monkeypatch.setattr(calls, "attend", refused)
    blocks: list[tuple[int, ...]] = []
    original = streamed.weight_blocks

    def counted(*args, **kwargs):
        for block in original(*args, **kwargs):
            blocks.append(tuple(block[3].shape))
            yield block

    monkeypatch.setattr(streamed, "weight_blocks", counted)
    a, b = _call(), _call()
    result = attnviz.compare(ModelRun((a,)), ModelRun((b,)))
    assert result.max_weight_diff == 0.0  # the same inputs, the same path: no difference at all
    # Both sides, every batch element and head, in blocks of rows of every key.
    assert len(blocks) == 2 * 2 * 4 and {shape[1] for shape in blocks} == {5}


def test_a_comparison_leaves_the_callers_torch_threads_alone() -> None:
    # The blocks run on a thread of their own with one torch thread (short operations on two
    # threads spent 20-40 s in barriers on a loaded machine); the caller's setting is untouched.
    import torch

    before = torch.get_num_threads()
    attnviz.compare(ModelRun((_call(),)), ModelRun((_call(),)))
    assert torch.get_num_threads() == before
