"""Reformer's attention recorded as the (L, L) maps it means (issue 35): its local and LSH
attention compute ``exp(dots - logsumexp(dots))`` over chunks in the model's own code (no softmax,
no SDPA), which no other path sees. Each map is checked against the model's own
``output_attentions``, un-chunked here with this test's own index arithmetic (local: a chunk and
the one before it, wrapping around; LSH: the bucket sort of the buckets the module returned), not
with the capture's code."""

from __future__ import annotations

import pytest
import torch

import attnviz
from attnviz.bench.sweep_check import classify, reported_maps
from attnviz.bench.sweep_lengths import chunked_length, chunked_plans
from attnviz.capture.doctor import diagnose_run
from attnviz.capture.paths import reformer

transformers = pytest.importorskip("transformers")

CHUNK, HEADS, HASHES = 4, 2, 2
# float32 weights of softmaxes over at most 2 x 4 x 2 keys, recomputed from Q, K, V by another
# kernel than the model's matmul: 1e-6 apart in practice, 1e-5 allowed.
ATOL = 1e-5


def _model(decoder: bool = False) -> object:
    config = transformers.ReformerConfig(
        hidden_size=16,
        attention_head_size=4,
        num_attention_heads=HEADS,
        attn_layers=["local", "lsh"],
        local_attn_chunk_length=CHUNK,
        lsh_attn_chunk_length=CHUNK,
        local_num_chunks_before=1,
        local_num_chunks_after=0,
        lsh_num_chunks_before=1,
        lsh_num_chunks_after=0,
        num_hashes=HASHES,
        num_buckets=4,
        axial_pos_embds=False,
        max_position_embeddings=64,
        vocab_size=50,
        feed_forward_size=16,
        is_decoder=decoder,
        pad_token_id=0,
    )
    torch.manual_seed(0)
    return transformers.ReformerModel(config).eval()


def _run(model: object, n: int) -> tuple[object, object, list[torch.Tensor]]:
    """The model under capture on two rows of ``n`` tokens (the second's last 3 padded), with its
    maps; and the buckets its LSH module returned (a hook of this test's own)."""
    ids = torch.randint(1, 50, (2, n), generator=torch.Generator().manual_seed(1))
    padding = torch.ones_like(ids)
    padding[1, -3:] = 0
    buckets: list[torch.Tensor] = []
    lsh = model.encoder.layers[1].attention.self_attention  # type: ignore[attr-defined]
    hook = lsh.register_forward_hook(lambda _m, _a, out: buckets.append(out.buckets))
    try:
        with torch.no_grad(), attnviz.capture(model) as cap:
            out = model(input_ids=ids, attention_mask=padding, output_attentions=True, use_cache=False)  # type: ignore[operator]
    finally:
        hook.remove()
    return cap, out, buckets


def _unchunk(reported: torch.Tensor, queries: torch.Tensor, keys: torch.Tensor, n: int) -> torch.Tensor:
    """A chunked map (B, H, C, c, K) in token order, (B, H, L, L): each gathered key's weight
    added at (its query's token, its token)."""
    b, h = reported.shape[:2]
    index = (queries.unsqueeze(-1) * n + keys.unsqueeze(-2)).expand(reported.shape)
    flat = torch.zeros(b, h, n * n, dtype=reported.dtype)
    flat.scatter_add_(-1, index.reshape(b, h, -1), reported.reshape(b, h, -1))
    return flat.reshape(b, h, n, n)


def _with_previous(chunks: torch.Tensor) -> torch.Tensor:
    """(B, H, C, c) tokens per chunk -> (B, H, C, 2c): the previous chunk's (circular), then its own."""
    return torch.cat([chunks.roll(1, dims=2), chunks], dim=-1)


@pytest.mark.parametrize("decoder", [False, True])
def test_local_and_lsh_attention_are_their_maps_in_token_order(decoder: bool) -> None:
    n = 16
    model = _model(decoder)
    cap, out, buckets = _run(model, n)
    local, lsh = out.attentions  # type: ignore[attr-defined]
    assert local.shape == (2, HEADS, n // CHUNK, CHUNK, 2 * CHUNK)
    assert lsh.shape == (2, HEADS, HASHES * n // CHUNK, CHUNK, 2 * CHUNK)
    assert [c.name for c in cap.calls] == [
        "encoder.layers.0.attention.self_attention",
        "encoder.layers.1.attention.self_attention",
        "encoder.layers.1.attention.self_attention #2",
    ]
    for call in cap.calls:
        assert not call.weights_only and call.fidelity is not None and call.fidelity < ATOL
        assert "rerun differs" not in call.note
    # Local: chunk c gathers chunk c - 1 (the last for the first) and itself.
    tokens = torch.arange(n).reshape(1, 1, n // CHUNK, CHUNK).expand(2, HEADS, -1, -1)
    expected = _unchunk(local, tokens, _with_previous(tokens), n)
    weights = cap.calls[0].weights()
    assert torch.allclose(weights, expected, atol=ATOL)
    assert "local attention of its own" in cap.calls[0].note
    # A band: the keys of two chunks only (the decoder's causal mask cuts the wrapped chunk).
    allowed = (weights > 0).sum(-1)
    assert int(allowed.max()) <= 2 * CHUNK and bool((weights == 0).any())
    # LSH: the buckets the module returned, sorted (stable, as the model's argsort) per round.
    flat = buckets[0].reshape(2, HEADS, -1)
    order = torch.sort(flat, dim=-1, stable=True).indices % n
    chunks = order.reshape(2, HEADS, -1, CHUNK)
    keys = _with_previous(chunks)  # circular over every round's chunks, as the model's
    per_round = n // CHUNK
    for r, call in enumerate(cap.calls[1:]):
        part = slice(r * per_round, (r + 1) * per_round)
        expected = _unchunk(lsh[:, :, part], chunks[:, :, part], keys[:, :, part], n)
        weights = call.weights()
        assert torch.allclose(weights, expected, atol=ATOL), float((weights - expected).abs().max())
        assert f"hash round {r + 1} of {HASHES}" in call.note
        assert torch.allclose(weights.sum(-1), torch.ones(()), atol=ATOL)
        # A token attends to itself only where it has no other key (the model's self-mask).
        itself = weights.diagonal(dim1=-2, dim2=-1)
        alone = (weights > 0).sum(-1) == 1
        assert bool((itself[~alone] == 0).all())
    # ... and every map the model reports is found by the sweep's check, read back in its layout.
    verdict, detail = classify(cap, reported_maps(out))
    assert verdict == "exact" and detail["maps"] == 2 and detail["unmatched"] == 0
    assert diagnose_run(cap.to_run()) == []


def test_the_sweeps_check_finds_a_chunked_map_the_calls_do_not_make() -> None:
    model = _model()
    cap, out, _ = _run(model, 16)
    maps = reported_maps(out)
    assert [m.dim() for _w, m in maps] == [5, 5]
    where, lsh = maps[1]
    changed = lsh.clone()
    changed[..., 0] = changed[..., 0] * 0.999 + 0.001 * changed[..., 1]  # weights moved between keys
    verdict, detail = classify(cap, [maps[0], (where, changed)])
    assert verdict == "partial" and detail["unmatched"] == 1
    # A model's chunked map with no call of its layout is said as such.
    assert classify(cap, [maps[0], (where, changed[:, :, :-1])])[0] == "partial"


def test_repeated_keys_count_twice_and_are_reported_once_each() -> None:
    """Two chunks, each looking one back (circular): chunk 0 gathers chunk 1 before itself, so the
    whole map; with LSH's two rounds a token can be gathered twice (its own chunk in one round, the
    previous round's last chunk): that key counts twice in the softmax, as in the model."""
    n = 2 * CHUNK
    cap, out, _ = _run(_model(), n)
    lsh_calls = cap.calls[1:]
    repeated = [c for c in lsh_calls if any(t.name == reformer.REPEATS for t in c.terms)]
    assert repeated and all("gathers twice" in c.note for c in repeated)
    for call in repeated:
        counts = reformer.counts_of(call, call.weights())
        assert float(counts.max()) == 2.0
    got = reformer.reported(lsh_calls, [c.weights() for c in lsh_calls])
    assert got is not None and torch.allclose(got, out.attentions[1], atol=ATOL)  # type: ignore[attr-defined]


def test_unchunked_attention_is_the_whole_map() -> None:
    """At most one chunk of tokens, Reformer attends over the whole sequence (one hash round)."""
    cap, out, _ = _run(_model(), CHUNK)
    assert len(cap.calls) == 2
    for call, reported in zip(cap.calls, out.attentions):  # type: ignore[attr-defined]
        assert reported.shape == (2, HEADS, CHUNK, CHUNK)
        assert call.fidelity is not None and call.fidelity < ATOL
        assert torch.allclose(call.weights(), reported, atol=ATOL)
    assert classify(cap, reported_maps(out))[0] == "exact"


def test_the_sweep_runs_reformer_in_four_chunks_hashed_twice() -> None:
    config = transformers.ReformerConfig()
    assert chunked_length(config) == 4 * 64
    assert chunked_length(transformers.BertConfig()) is None
    plans = list(chunked_plans(config, {"input_ids": None, "attention_mask": None, "num_hashes": None}))
    assert len(plans) == 1
    inputs = plans[0][2]()
    assert inputs["input_ids"].shape[-1] == 256 and inputs["num_hashes"] == 2
    assert not list(chunked_plans(transformers.BertConfig(), {"input_ids": None}))


def test_a_query_with_every_key_masked_is_said_at_the_call() -> None:
    """A left-padded decoder: the first chunk's padded queries see only padding and (wrapped) later
    keys. The model fills masked scores with -1e9, whose float32 logsumexp loses log(8): each of the
    8 keys weighs 1 (no softmax does that); the call draws 1/8 each and says why it differs there,
    and its output is compared with the model's as the model computes it there (8 times the
    softmax's: the sum of the 8 values), so the call is exact (the upstream tester's random mask
    makes such rows: its check had been 1.67 off). LSH attention is exact:
    such a query attends to itself (the self-mask's -1e5 over -1e9)."""
    model = _model(decoder=True)
    ids = torch.randint(1, 50, (2, 16), generator=torch.Generator().manual_seed(1))
    padding = torch.ones_like(ids)
    padding[1, :6] = 0
    with torch.no_grad(), attnviz.capture(model) as cap:
        out = model(input_ids=ids, attention_mask=padding, output_attentions=True, use_cache=False)  # type: ignore[operator]
    local = cap.calls[0]
    assert "12 query rows have every key they gather masked" in local.note  # 6 rows x 2 heads
    weights = local.weights()[1, :, :6]
    assert torch.allclose(weights[weights > 0], torch.full((), 1 / 8))
    assert torch.equal(out.attentions[0][1, :, 0], torch.ones(HEADS, CHUNK, 2 * CHUNK))  # type: ignore[attr-defined]
    assert local.row_factor is not None
    assert torch.equal(local.row_factor[1, :, :6], torch.full((HEADS, 6), 8.0))  # each of 8 keys weighs 1
    assert torch.equal(local.row_factor[1, :, 6:], torch.ones(HEADS, 10))
    assert local.fidelity is not None and local.fidelity < ATOL  # the sum of 8 values, as the model's
    assert "compared with the model's as it computes it" in local.note
    assert classify(cap, reported_maps(out))[0] == "exact"  # its maps too, rows of 1 each
    for call in cap.calls[1:]:
        assert call.fidelity is not None and call.fidelity < ATOL
        assert torch.equal(call.weights()[1, :, 0, 0], torch.ones(HEADS))  # token 0 alone: itself


def test_a_cached_generation_step_is_said_not_recorded() -> None:
    model = _model(decoder=True)
    ids = torch.randint(1, 50, (1, 16), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        first = model(input_ids=ids, use_cache=True)  # type: ignore[operator]
        with attnviz.capture(model) as cap:
            model(input_ids=ids[:, -1:], past_buckets_states=first.past_buckets_states, use_cache=True)  # type: ignore[operator]
    assert not cap.calls
    said = [w for w in cap.warnings if "cached generation step of Reformer" in w]
    assert len(said) == 2 and "local attention" in said[0] and "lsh attention" in said[1]


def test_maps_past_the_memory_budget_stop_the_recording_as_said(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each round's (L, L) map is built whole: past the capture's budget nothing is built (the
    keys each query gathers are never read) and the recording stops with the recorder's own
    warning."""

    def never(*_args: object) -> None:
        raise AssertionError("built past the budget")

    monkeypatch.setattr(reformer, "_gathered", never)
    model = _model()
    ids = torch.randint(1, 50, (2, 16), generator=torch.Generator().manual_seed(1))
    with torch.no_grad(), attnviz.capture(model, memory_budget=4096) as cap:
        model(input_ids=ids)  # type: ignore[operator]
    assert not cap.calls
    assert sum("recording stopped at attention call 0" in w for w in cap.warnings) == 1
    assert not any("built past the budget" in w for w in cap.warnings), cap.warnings


def test_the_sweep_captures_reformer_exactly_on_its_chunked_plan() -> None:
    """The sweep's own run (its config with the layers cut, as the sweep retries it; its plans):
    the local band and both hash rounds recorded, both chunked maps the model reports found."""
    from attnviz.bench import capture_sweep

    config = transformers.CONFIG_MAPPING["reformer"]()
    capture_sweep.shrink(config, True)
    verdict = capture_sweep.sweep_implementation(config, "eager")
    assert verdict["status"] == "exact", verdict
    assert verdict["calls"] == 3 and verdict["maps"] == 2 and verdict["unmatched"] == 0, verdict


def test_dropout_in_training_is_said_not_compared() -> None:
    model = _model()
    model.config.local_attention_probs_dropout_prob = 0.5  # type: ignore[attr-defined]
    model.encoder.layers[0].attention.self_attention.dropout = 0.5  # type: ignore[attr-defined]
    model.train()  # type: ignore[attr-defined]
    ids = torch.randint(1, 50, (2, 16), generator=torch.Generator().manual_seed(1))
    with torch.no_grad(), attnviz.capture(model) as cap:
        model(input_ids=ids)  # type: ignore[operator]
    local = cap.calls[0]
    assert local.dropout_p == 0.5 and local.fidelity is None and "dropout (p = 0.5)" in local.note
