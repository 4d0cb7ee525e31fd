"""Cross-attention given the decoder's padding in transformers' encoder-decoders (issue 34's
variants, not the models the reading was built on): BART, mBART, Marian and T5, eager and SDPA,
with encoder and decoder of different lengths. The bug is the decoder's attention mask cut or
padded to the encoder's length and handed to the decoder as ``encoder_attention_mask``; its twin
is the model as it is. The doctor and the padding check name the wrong source in the
cross-attention call; the twins raise no error in the doctor, and the check names a BART-family
encoder's learned positions (counted over the pads) when it re-pads on the left, never the mask."""

from __future__ import annotations

import functools
from typing import Any

import pytest
import torch
import torch.nn.functional as F

import attnviz
from attnviz.capture import diagnose_run, format_finding

from . import bug_models as bugs
from .models import VOCAB, transformers


def model(kind: str, implementation: str) -> Any:
    t = transformers()
    torch.manual_seed(0)
    if kind == "t5":
        config = t.T5Config(
            vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=64, num_layers=1, num_heads=4, decoder_start_token_id=0
        )
        return t.T5Model(config).eval()
    classes = {"bart": (t.BartConfig, t.BartModel), "mbart": (t.MBartConfig, t.MBartModel)}
    classes["marian"] = (t.MarianConfig, t.MarianModel)
    config_class, model_class = classes[kind]
    config = config_class(
        vocab_size=VOCAB,
        d_model=32,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=64,
        pad_token_id=0,
        decoder_start_token_id=2,
        attn_implementation=implementation,
    )
    return model_class(config).eval()


def decoder_mask_on_encoder(model: Any) -> Any:
    """The bug: the decoder's attention mask, cut or padded with zeros to the encoder's length,
    given to the decoder as the encoder's."""
    decoder = model.get_decoder()
    forward = decoder.forward

    @functools.wraps(forward)
    def wrong(*args: Any, **kwargs: Any) -> Any:
        encoder, own = kwargs.get("encoder_attention_mask"), kwargs.get("attention_mask")
        if encoder is not None and own is not None:
            n = encoder.shape[1]
            kwargs["encoder_attention_mask"] = F.pad(own[:, :n], (0, max(0, n - own.shape[1])))
        return forward(*args, **kwargs)

    decoder.forward = wrong
    return model


def set_implementation(m: Any, implementation: str) -> Any:
    m.set_attn_implementation(implementation)
    return m


CASES = [(kind, impl) for kind in ("bart", "mbart", "marian", "t5") for impl in ("eager", "sdpa")]
LENGTHS = {"longer encoder": ((7, 3, 5), (4, 2, 3)), "longer decoder": ((4, 2, 3), (7, 3, 5))}


def diagnosis(m: Any, inputs: dict[str, Any]) -> Any:
    tokens = bugs.tokens(inputs["decoder_input_ids"], inputs["decoder_attention_mask"])
    encoder_tokens = bugs.tokens(inputs["input_ids"], inputs["attention_mask"])
    with attnviz.capture(m, tokens=tokens, encoder_tokens=encoder_tokens) as cap, torch.no_grad():
        m(**inputs)
    return diagnose_run(cap.to_run())


@pytest.mark.parametrize("lengths", LENGTHS)
@pytest.mark.parametrize(("kind", "implementation"), CASES)
def test_the_doctor_names_the_decoder_mask_on_encoder_keys(kind, implementation, lengths):
    inputs = bugs.seq2seq_lengths(*LENGTHS[lengths])
    found = diagnosis(decoder_mask_on_encoder(set_implementation(model(kind, "eager"), implementation)), inputs)
    errors = [f for f in found if f.severity == "error"]
    assert [(f.kind, f.call) for f in errors] == [("wrong_source", 2)], "\n".join(map(format_finding, found))
    assert "a decoder-length mask on encoder keys" in errors[0].message
    assert errors[0].name.endswith(("encoder_attn", "EncDecAttention"))
    twin = diagnosis(set_implementation(model(kind, "eager"), implementation), inputs)
    assert [f for f in twin if f.severity == "error"] == [], "\n".join(map(format_finding, twin))


@pytest.mark.parametrize("kind", ["bart", "t5"])
def test_the_padding_check_names_the_wrong_source_and_the_twin_blames_no_mask(kind):
    inputs = bugs.seq2seq_lengths(*LENGTHS["longer encoder"])
    (finding,) = attnviz.check_invariance(decoder_mask_on_encoder(model(kind, "sdpa")), inputs, ("padding",))
    assert finding.call == 2 and "a decoder-length mask on encoder keys" in finding.message
    twin = attnviz.check_invariance(model(kind, "sdpa"), inputs, ("padding",))
    if kind == "t5":
        assert list(twin) == []  # relative positions: padding moves nothing
    else:
        # BART's learned positions count from the first column: re-padded on the left, its
        # encoder's tokens move; named as positions, the masks ruled out.
        (finding,) = twin
        assert finding.call == 0 and finding.message.startswith("positions, not the mask: padded on the left")
        assert "takes no position_ids (or ignores them), so pad its inputs on the other side" in finding.message
