"""The sweep's check on the maps banded and block-sparse models report (issue 35), on the inputs
their upstream testers build: a global token last, padding mid-sequence.

* Longformer and LED report each query's weights on the global keys, then on its band,
  (B, H, L, G + 2w + 1), with the global queries' rows zero there and given apart in
  ``global_attentions`` (B, H, L, G): the call's (L, L) map is read back both ways.
* A map whose rows are mostly zero (the queries a random mask pads, which the model zeroes) is a
  map to compare, not "no distribution".
* BigBird's map of a padded query's row keeps the random copies of a key block (zero, masked for
  that query) in place of the copy its softmax weighs: those rows, whose output the model zeroes,
  are left out; every other row is compared.

Each test alters one reported map and sees the check find it: the readings can fail."""

from __future__ import annotations

import pytest
import torch

import attnviz
from attnviz.bench import sweep_check
from attnviz.capture.doctor import diagnose_run

from .models import small_bigbird

transformers = pytest.importorskip("transformers")


def _captured(model: torch.nn.Module, **inputs: object) -> tuple[attnviz.Capture, object]:
    with torch.no_grad():
        out = model(**inputs, output_attentions=True)
    with torch.no_grad(), attnviz.capture(model) as cap:
        model(**inputs, output_attentions=True)
    return cap, out


def _altered(maps: list[tuple[str, torch.Tensor]], where: str, change: object) -> list[tuple[str, torch.Tensor]]:
    out = []
    for name, value in maps:
        if name == where:
            value = value.clone()
            change(value)  # type: ignore[operator]
        out.append((name, value))
    return out


def _led() -> torch.nn.Module:
    config = transformers.LEDConfig(
        vocab_size=99,
        d_model=16,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=8,
        decoder_ffn_dim=8,
        max_position_embeddings=32,
        attention_window=4,
    )
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    return transformers.LEDModel(config).eval()


def test_led_encoder_maps_with_a_global_key_are_read_back_from_the_call() -> None:
    model = _led()
    ids = torch.randint(3, 99, (3, 11))  # padded to 12 inside the model, its maps cut back to 11
    mask = torch.ones_like(ids)
    mask[1, 6:] = 0
    mask[1, -1] = 1  # the tester's random mask keeps its last token
    global_tokens = torch.zeros_like(ids)
    global_tokens[:, -1] = 1
    global_tokens[2, 3] = 1  # one element with two global tokens: the others' second slot is empty
    cap, out = _captured(
        model, input_ids=ids, decoder_input_ids=ids, attention_mask=mask, global_attention_mask=global_tokens
    )
    assert out.encoder_attentions[0].shape == (3, 4, 11, 2 + 5)  # G = 2 global columns, then 2w + 1
    assert out.encoder_global_attentions[0].shape == (3, 4, 12, 2)
    maps = sweep_check.reported_maps(out)
    names = [where for where, _ in maps]
    assert "encoder_attentions[0]" in names and "encoder_global_attentions[1]" in names
    status, detail = sweep_check.classify(cap, maps)
    assert (status, detail["unmatched"], detail["maps"]) == ("exact", 0, len(maps))

    def global_key_moved(value: torch.Tensor) -> None:  # a query's weight on its global key, moved into its band
        value[0, :, 2, 0], value[0, :, 2, 4] = value[0, :, 2, 4].clone(), value[0, :, 2, 0].clone()

    def global_row_changed(value: torch.Tensor) -> None:  # element 2's first global query's row
        value[2, :, :, 0] = value[2, :, :, 0].flip(-1)

    for where, change in (
        ("encoder_attentions[0]", global_key_moved),
        ("encoder_global_attentions[1]", global_row_changed),
    ):
        status, detail = sweep_check.classify(cap, _altered(maps, where, change))
        assert status == "partial" and where in detail["why"]


def _longformer() -> torch.nn.Module:
    config = transformers.LongformerConfig(
        vocab_size=99,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=37,
        max_position_embeddings=64,
        attention_window=4,
    )
    torch.manual_seed(0)
    return transformers.LongformerModel(config).eval()


def test_longformer_maps_under_a_mask_of_mostly_padding_are_compared() -> None:
    model = _longformer()
    ids = torch.randint(3, 99, (2, 7))
    mask = torch.tensor([[0, 1, 0, 0, 0, 0, 1], [1, 0, 0, 1, 0, 0, 1]])  # most query rows zeroed by the model
    global_tokens = torch.zeros_like(ids)
    global_tokens[:, -1] = 1
    cap, out = _captured(model, input_ids=ids, attention_mask=mask, global_attention_mask=global_tokens)
    local = out.attentions[0]
    assert float((local.sum(-1) == 0).float().mean()) > 0.5
    maps = sweep_check.reported_maps(out)
    assert sorted(where for where, _ in maps) == [
        "attentions[0]",
        "attentions[1]",
        "global_attentions[0]",
        "global_attentions[1]",
    ]
    status, detail = sweep_check.classify(cap, maps)
    assert (status, detail["unmatched"]) == ("exact", 0)

    def live_row_changed(value: torch.Tensor) -> None:  # element 0's live query 1
        value[0, :, 1] = value[0, :, 1].flip(-1)

    status, detail = sweep_check.classify(cap, _altered(maps, "attentions[1]", live_row_changed))
    assert status == "partial" and "attentions[1]" in detail["why"]


def test_a_map_of_zero_rows_is_kept_and_a_map_of_nothing_is_not() -> None:
    rows = torch.softmax(torch.randn(1, 2, 6, 6), dim=-1)
    rows[..., :4, :] = 0  # four of six query rows zeroed, as a model zeroes the queries it pads
    assert sweep_check._distribution(rows)
    assert not sweep_check._distribution(torch.zeros(1, 2, 6, 6))
    state = torch.randn(1, 2, 6, 6)  # a linear attention's state: no weights over keys
    state[..., :4, :] = 0
    assert not sweep_check._distribution(state)


def test_bigbird_rows_of_padded_queries_are_left_out_of_its_maps() -> None:
    model = small_bigbird(transformers)
    ids = torch.randint(3, 100, (2, 24))
    mask = torch.ones_like(ids)
    mask[1, 7:15] = 0  # padding mid-sequence, as the tester's random mask makes it
    cap, out = _captured(model, input_ids=ids, attention_mask=mask)
    assert all("block-sparse attention of its own" in c.note for c in cap.calls)
    maps = sweep_check.reported_maps(out)
    assert len(maps) == 2
    status, detail = sweep_check.classify(cap, maps)
    assert (status, detail["unmatched"]) == ("exact", 0)
    # What is left out, and why: in a padded query's row the model's map is zero on the first key
    # block (its random copies, masked for that query, written over the global copy), which the
    # softmax weighs.
    from attnviz.capture.paths import block_sparse

    call = cap.calls[0]
    ours = block_sparse.assembled(call, call.weights())
    assert ours is not None
    padded_rows = ours[1, :, 8:14, :2]  # padded queries in the blocks with random keys, first key block
    assert float(padded_rows.min()) > 1e-3
    assert torch.all(out.attentions[0][1, :, 8:14, :2] == 0)
    padded = ~mask.bool()[:, None, :, None].expand_as(ours)
    assert torch.allclose(ours.masked_fill(padded, 0), out.attentions[0].masked_fill(padded, 0), atol=1e-5)
    assert diagnose_run(cap.to_run()) == []

    def live_row_changed(value: torch.Tensor) -> None:  # element 1's live query 16
        value[1, :, 16] = value[1, :, 16].flip(-1)

    status, detail = sweep_check.classify(cap, _altered(maps, "attentions[0]", live_row_changed))
    assert status == "partial" and "attentions[0]" in detail["why"]
