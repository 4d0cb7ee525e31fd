"""The capture sweep on families whose inputs or configs need more than text, pixels or audio
features (issue 35, families m-z): a head-only family built with its own class, a tower given
grid patches, a forecaster given past values, a decoder given embeddings, configs whose sizes are
tied together kept consistent after shrinking, a model that samples noise in its forward, a
model whose code assumes as many key heads as heads. Each runs transformers' own modelling code
on a tiny config built here (nothing downloaded) and is held to the sweep's verdict: exact."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
import torch

from attnviz.bench import capture_sweep, sweep_inputs, sweep_models, sweep_plans, sweep_repairs

from .sweep_support import small_config

#: family: the kind of inputs its verdict must say it ran on.
FAMILIES = {
    "qwen2_vl_vision": "image",  # grid patches with their (t, h, w)
    "paddleocr_vl_vision": "image",  # grid patches as (1, N, C, P, P)
    "siglip2_vision_model": "image",  # NaFlex patches with shapes and mask
    "vitpose_backbone": "image",  # a non-square image size
    "patchtst": "series",  # past values
    "nemotron3_5_transcribe_word_timestamp": "embeddings",  # a decoder on embeddings
    "minicpm3": "text",  # latent attention: rotary width and a key per head kept
    "qwen3_next": "text",  # a hybrid keeps an attention layer, run without a cache
    "nemotron": "text",  # key/value heads left unset by its default config
    "prompt_depth_anything": "image",  # a DPT neck reads layers the shrinking removed
    "qwen2_audio_encoder": "audio",  # eager adds a mask of every frame to scores over half as many
}


@pytest.fixture(scope="module")
def transformers() -> Any:
    return pytest.importorskip("transformers", reason="transformers is a test dependency (pip install .[test])")


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_family_runs_on_inputs_made_for_it_and_every_call_is_exact(transformers, family):
    verdict = capture_sweep.sweep_implementation(small_config(transformers, family), "eager")
    assert verdict["status"] == "exact", verdict
    assert FAMILIES[family] in verdict["inputs"], verdict
    assert verdict["unverified"] == 0 and verdict["calls"] >= 1


def test_a_head_only_family_is_built_with_its_own_class_not_the_pretrained_base(transformers):
    # TrOCR has no bare model in AutoModel: its PreTrainedModel base takes no input at all
    chosen = sweep_models.model_class(transformers.CONFIG_MAPPING["trocr"]())
    assert "PreTrained" not in chosen.__name__
    assert chosen.forward is not torch.nn.Module.forward


def test_a_parts_config_is_said_unbuilt_not_tried(transformers):
    with pytest.raises(sweep_models.PartOnly, match="part of another model"):
        sweep_models.model_class(transformers.CONFIG_MAPPING["sam_mask_decoder"]())
    result = capture_sweep.sweep_one("sam_mask_decoder")
    assert result["built"].startswith("PartOnly")
    # a model that only generates through its parts (each its own family) is said as such
    with pytest.raises(sweep_models.PartOnly, match="has no forward"):
        sweep_models.model_class(transformers.CONFIG_MAPPING["qwen2_5_omni"]())


def test_latent_attention_keeps_its_rotary_width_and_a_key_per_head(transformers):
    config = small_config(transformers, "minicpm3")
    assert config.head_dim == config.qk_rope_head_dim
    assert config.num_key_value_heads == config.num_attention_heads
    # without the repair the shrinking's 16-wide head breaks the rotary tables
    bare = transformers.CONFIG_MAPPING["minicpm3"]()
    bare.head_dim = 16
    sweep_repairs.latent_attention(bare)
    assert bare.head_dim == bare.qk_rope_head_dim


def test_keys_sized_by_the_heads_are_rebuilt_with_as_many_key_heads(transformers):
    # Nemotron 3's audio encoder sizes v_proj by its heads and k_proj by its key/value heads:
    # shrunk to 2 of 4, its keys and values reached SDPA with different head counts
    config = small_config(transformers, "nemotron3_diarization_audio")
    assert config.num_key_value_heads < config.num_attention_heads
    verdict = capture_sweep.sweep_implementation(config, "sdpa")
    assert config.num_key_value_heads == config.num_attention_heads
    assert verdict["status"] == "exact" and verdict["unverified"] == 0, verdict


class _Noisy(torch.nn.Module):
    """A model that samples in its forward (as VibeVoice's sigma-VAE does)."""

    def forward(self, input_ids: Any, attention_mask: Any = None, output_attentions: bool = False) -> dict[str, Any]:
        return {"noise": torch.randn(4)}


def test_the_run_whose_maps_are_compared_is_seeded_as_the_captured_run():
    built = sweep_inputs.build(_Noisy(), SimpleNamespace(vocab_size=100))
    assert not isinstance(built, str), built
    torch.manual_seed(sweep_inputs.FORWARD_SEED)  # what the capture's run does
    again = _Noisy()(**built.inputs)
    # the same generator state on the same kernel and shape: the very same numbers
    assert torch.equal(built.output["noise"], again["noise"])


def test_a_refusal_for_a_linear_only_cache_is_retried_without_a_cache():
    params = {"use_cache": None}
    message = "`get_seq_length` can only be called on Attention layers"
    assert sweep_plans.retried({"input_ids": 1}, params, message) == {"input_ids": 1, "use_cache": False}
    assert sweep_plans.retried({"input_ids": 1, "use_cache": False}, params, message) is None
    assert sweep_plans.retried({"input_ids": 1}, params, "something else") is None


def test_a_mask_of_every_frame_refused_for_its_length_is_dropped_and_a_mask_of_padding_is_not():
    # Qwen2-Audio's encoder (and Voxtral's, MOSS's) adds its attention_mask to scores over its
    # convolutions' 1500 positions: a (B, 3000) mask of real frames said nothing, so it is dropped
    message = "The size of tensor a (1500) must match the size of tensor b (3000) at non-singleton dimension 3"
    features = torch.zeros(2, 8, 3000)
    every = {"input_features": features, "attention_mask": torch.ones(2, 3000, dtype=torch.long)}
    assert sweep_plans.retried(every, {}, message) == {"input_features": features}
    padded = {"input_features": features, "attention_mask": torch.ones(2, 3000, dtype=torch.long)}
    padded["attention_mask"][1, -5:] = 0  # a mask that says something is never dropped
    assert sweep_plans.retried(padded, {}, message) is None
    other = {"input_features": features, "attention_mask": torch.ones(2, 64, dtype=torch.long)}
    assert sweep_plans.retried(other, {}, message) is None  # a mismatch of other tensors
