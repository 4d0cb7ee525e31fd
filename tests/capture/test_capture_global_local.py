"""PEGASUS-X's global-local attention recorded as the maps it means (issue 35, found on its
upstream tester's inputs): each block of queries over the global tokens and its own block, as one
(L, G + L) map, not its (B * H, blocks, block, G + block) softmax with batch and heads folded; its
maps, reported as a dict per layer ({"global", "local"}), compared by the sweep's check. The
expected map is built here with this test's own index arithmetic from the model's own
``output_attentions``."""

from __future__ import annotations

import pytest
import torch

import attnviz
from attnviz.bench import sweep_check
from attnviz.capture.doctor import diagnose_run

transformers = pytest.importorskip("transformers")

BLOCK, GLOBAL, HEADS = 4, 3, 2


def _model(stagger: bool) -> torch.nn.Module:
    config = transformers.PegasusXConfig(
        vocab_size=50,
        d_model=16,
        encoder_layers=2,
        decoder_layers=1,
        encoder_attention_heads=HEADS,
        decoder_attention_heads=HEADS,
        encoder_ffn_dim=8,
        decoder_ffn_dim=8,
        max_position_embeddings=64,
        block_size=BLOCK,
        num_global_tokens=GLOBAL,
        stagger_local_blocks=stagger,
    )
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    return transformers.PegasusXModel(config).eval()


@pytest.mark.parametrize("stagger", [False, True])
def test_blocks_over_global_tokens_are_one_map_per_call(stagger: bool) -> None:
    model = _model(stagger)
    ids = torch.randint(3, 50, (2, 7), generator=torch.Generator().manual_seed(1))
    mask = torch.ones_like(ids)
    mask[1, 5:] = 0
    inputs = {"input_ids": ids, "decoder_input_ids": ids, "attention_mask": mask}
    with torch.no_grad():
        out = model(**inputs, output_attentions=True)
    with torch.no_grad(), attnviz.capture(model) as cap:
        model(**inputs, output_attentions=True)
    encoder = [c for c in cap.calls if c.name.startswith("encoder.")]
    assert len(encoder) == 4  # per layer: the global tokens' softmax, then the blocks'
    for layer, reported in enumerate(out.encoder_attentions):
        local = reported["local"]  # (B, H, blocks, block, G + block), the model's own
        blocks = local.shape[2]
        n = blocks * BLOCK
        expected = torch.zeros(2, HEADS, n, GLOBAL + n)
        for index in range(blocks):
            for row in range(BLOCK):
                expected[:, :, index * BLOCK + row, :GLOBAL] = local[:, :, index, row, :GLOBAL]
                start = GLOBAL + index * BLOCK
                expected[:, :, index * BLOCK + row, start : start + BLOCK] = local[:, :, index, row, GLOBAL:]
        global_call, local_call = encoder[2 * layer], encoder[2 * layer + 1]
        assert local_call.shape == (2, HEADS, n, GLOBAL + n)  # batch and heads apart, not folded
        assert torch.equal(local_call.weights(), expected)
        assert torch.equal(global_call.weights(), reported["global"])
        assert "global-local attention of its own" in local_call.note
        # the padded keys (after the global tokens): element 1's last two tokens, and the
        # block's own padding; never a global token
        padding = local_call.key_padding_mask
        assert padding is not None and not padding[:, :GLOBAL].any() and bool(padding[1].any())
    maps = sweep_check.reported_maps(out)
    assert {"encoder_attentions[0].local", "encoder_attentions[1].global"} <= {where for where, _ in maps}
    status, detail = sweep_check.classify(cap, maps)
    assert (status, detail["unmatched"], detail["maps"]) == ("exact", 0, len(maps))
    altered = [(w, m.flip(-1) if w == "encoder_attentions[1].local" else m) for w, m in maps]
    status, detail = sweep_check.classify(cap, altered)
    assert status == "partial" and "encoder_attentions[1].local" in detail["why"]
    assert diagnose_run(cap.to_run()) == []
