"""BigBird's block-sparse attention recorded as the (L, L) map the model means (issue 35): the
map the model assembles from its global, sliding-window and random key blocks, one call per
layer, equal to its ``output_attentions`` (the same tensor: compared exactly, no kernel apart),
not the pieces its softmaxes run over. And a banded model's own padding (LED pads to a multiple
of its window) read by the doctor as the padding it is: silent."""

from __future__ import annotations

import math

import pytest
import torch

import attnviz
from attnviz.bench.sweep_lengths import block_sparse_length
from attnviz.capture.doctor import diagnose_run
from attnviz.capture.paths import block_sparse

from .models import small_bigbird

transformers = pytest.importorskip("transformers")


def test_bigbird_block_sparse_is_one_exact_square_map_per_layer() -> None:
    model = small_bigbird(transformers)
    ids = torch.randint(3, 100, (2, 24))  # more than (5 + 2 r) blocks: block-sparse runs
    padding = torch.ones_like(ids)
    padding[1, -2:] = 0  # the last block's queries padded (the sweep's text pads so)
    with torch.no_grad(), attnviz.capture(model) as cap:
        out = model(input_ids=ids, attention_mask=padding, output_attentions=True)
    assert type(model.encoder.layer[0].attention.self).__name__ == "BigBirdBlockSparseAttention"
    assert len(cap.calls) == len(out.attentions) == 2
    for call, reported in zip(cap.calls, out.attentions):
        assert not call.weights_only and "block-sparse attention of its own" in call.note
        # Recomputed from its queries, keys and values against the model's own function's output:
        # float32 sums over 24 keys, 1e-5 apart at most.
        assert call.fidelity is not None and call.fidelity < 1e-5
        weights = call.weights()
        zero = weights == 0
        assert zero.any() and not zero.all(-1).any()  # sparse, and every query attends somewhere
        # The map the output mixes sums to 1 per row; the model's own keeps a block its softmax
        # gathered twice (eval mode: every random block is the first) once, summing to less.
        assert torch.allclose(weights.sum(-1), torch.ones(()), atol=1e-5)
        assert float(reported.sum(-1).min()) < 0.99
        repeats = next(t for t in call.terms if t.name == block_sparse.REPEATS).values
        assert repeats is not None and float(repeats.max()) == pytest.approx(math.log(2))
        # ... and is this map read back as the model assembles it (each repeat once)
        ours = block_sparse.assembled(call, weights)
        assert ours is not None and torch.allclose(ours, reported, atol=1e-5)
    assert diagnose_run(cap.to_run()) == []


def test_bigbird_at_the_sweeps_block_sparse_length_runs_block_sparse() -> None:
    config = transformers.BigBirdConfig()
    assert block_sparse_length(config) == (6 + 2 * config.num_random_blocks) * config.block_size
    assert block_sparse_length(transformers.BertConfig()) is None
    for blocks, sparse in ((0, True), (-1, False)):  # the length, then one block shorter: full attention
        model = small_bigbird(transformers)
        length = block_sparse_length(model.config) + blocks * model.config.block_size
        with torch.no_grad(), attnviz.capture(model) as cap:
            model(input_ids=torch.randint(3, 100, (2, length)))
        notes = ["block-sparse attention of its own" in c.note for c in cap.calls]
        assert notes == [sparse] * 2


def test_led_padding_to_its_window_is_padding_to_the_doctor() -> None:
    config = transformers.LEDConfig(
        d_model=32,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=37,
        decoder_ffn_dim=37,
        vocab_size=50,
        attention_window=8,
        max_encoder_position_embeddings=64,
        max_decoder_position_embeddings=64,
    )
    torch.manual_seed(0)
    model = transformers.LEDModel(config).eval()
    ids = torch.randint(3, 50, (2, 5))  # padded to 8 by the model
    with torch.no_grad(), attnviz.capture(model) as cap:
        model(input_ids=ids, decoder_input_ids=torch.randint(3, 50, (2, 3)))
    band = next(c for c in cap.calls if "padded query rows zeroed" in c.note)
    assert band.key_padding_mask is not None and band.key_padding_mask[:, 5:].all()
    assert [f for f in diagnose_run(cap.to_run()) if f.kind == "empty_rows"] == []
    # Without the model's padding on the call the doctor would warn: the test can fail.
    band.key_padding_mask = None
    assert [f for f in diagnose_run(cap.to_run()) if f.kind == "empty_rows"]


def test_pegasus_x_global_local_encoder_is_no_missing_causal_mask_to_the_doctor() -> None:
    # Pegasus-X's encoder attention of its own, seen at its softmaxes: its global tokens over
    # every key, and each local block over the global tokens and the block. Neither key axis is
    # positions, so neither is read for causality (the sweep's --open found the false alarm:
    # "misses its causal mask" on a bidirectional encoder).
    config = transformers.PegasusXConfig(
        d_model=32,
        encoder_layers=2,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=37,
        decoder_ffn_dim=37,
        vocab_size=50,
        max_position_embeddings=64,
        block_size=16,  # the 8 tokens padded to one block, as the sweep's 8 are to 512
        num_global_tokens=2,
    )
    torch.manual_seed(0)
    model = transformers.PegasusXModel(config).eval()
    with torch.no_grad(), attnviz.capture(model) as cap:
        model(input_ids=torch.randint(3, 50, (2, 8)), decoder_input_ids=torch.randint(3, 50, (2, 5)))
    run = cap.to_run()
    pieces = [c for c in run.calls if c.weights_only and c.shape[2] != c.shape[3]]
    assert len(pieces) >= 2
    assert [f for f in diagnose_run(run) if f.kind == "future_attended"] == []
