"""The sweep's image inputs for the models that read an image as discrete tokens or through an
aligner (issue 35, ``sweep_image_tokens``): Chameleon and Emu3 (a VQ tokenizer and no vision
tower), GLM-Image (a VQ over its tower's features, a target grid per sample) and Janus (an
aligner into the text embeddings) ran on text only; one test per rule, each showing that the
image path ran: the placeholders the text holds are the model's own image tokens, and the
language model's captured calls attend over them. The models are transformers' own, built from
the sweep's shrunk configs; nothing downloaded."""

from __future__ import annotations

from typing import Any

import pytest

from attnviz.bench import capture_sweep, sweep_image_tokens, sweep_inputs

from .sweep_support import small_config


@pytest.fixture(scope="module")
def transformers() -> Any:
    return pytest.importorskip("transformers", reason="transformers is a test dependency (pip install .[test])")


def _built(config: Any) -> tuple[Any, sweep_inputs.Built]:
    import torch

    torch.manual_seed(0)
    model = capture_sweep._build(config, "eager")
    built = sweep_inputs.build(model, config)
    assert not isinstance(built, str), built
    return model, built


def _text_calls(model: Any, inputs: dict[str, Any], prefix: str) -> list[Any]:
    """The calls a capture of ``model`` on ``inputs`` records under ``prefix`` (the language
    model's layers)."""
    import torch

    from attnviz.capture import capture

    with torch.no_grad(), capture(model) as cap:
        model(**inputs)
    calls = [c for c in cap.calls if c.name.startswith(prefix)]
    assert calls, [c.name for c in cap.calls]
    return calls


def _placeholders(config: Any, built: sweep_inputs.Built) -> list[int]:
    return (built.inputs["input_ids"] == config.image_token_id).sum(1).tolist()


def test_a_vq_tokenizer_is_an_image_input_given_a_small_grid_of_codes(transformers):
    config = small_config(transformers, "chameleon")
    vq = config.vq_config
    assert vq.base_channels == sweep_image_tokens.VQ_BASE_CHANNELS
    side = sweep_image_tokens.image_side(config)
    assert side == vq.resolution == sweep_image_tokens.VQ_LATENT_SIDE * 16  # 5 levels: 4 halvings
    model, built = _built(config)
    assert built.kinds == ["text", "image"]
    assert tuple(built.inputs["pixel_values"].shape[-2:]) == (side, side)
    codes = sweep_image_tokens.VQ_LATENT_SIDE**2
    assert _placeholders(config, built) == [codes] * sweep_inputs.BATCH
    length = built.inputs["input_ids"].shape[1]
    calls = _text_calls(model, built.inputs, "layers.")
    assert [c.shape[-2:] for c in calls] == [(length, length)] * config.num_hidden_layers
    # the model's own maps cover the image's codes too
    assert built.output.attentions[0].shape[-1] == length


def test_emu3s_vq_attends_as_wide_as_the_channels_of_its_level(transformers):
    config = small_config(transformers, "emu3")
    vq = config.vq_config
    level = vq.attn_resolutions[0]
    assert vq.hidden_size == vq.base_channels * vq.channel_multiplier[level] == 32 * 4
    model, built = _built(config)
    assert built.kinds == ["text", "image"] and "image_sizes" in built.inputs
    # each row of codes ends with an end-of-line token: side x (side + 1) placeholders
    side = sweep_image_tokens.VQ_LATENT_SIDE
    assert _placeholders(config, built) == [side * (side + 1)] * sweep_inputs.BATCH
    length = built.inputs["input_ids"].shape[1]
    calls = _text_calls(model, built.inputs, "text_model.")
    assert all(c.shape[-2:] == (length, length) for c in calls)


def test_janus_aligner_is_as_wide_as_its_text_model_one_that_is_not_an_aligner_is_left(transformers):
    config = small_config(transformers, "janus")
    assert config.vision_config.projection_dim == config.text_config.hidden_size
    model, built = _built(config)
    assert built.kinds == ["text", "image"]
    patches = (config.vision_config.image_size // config.vision_config.patch_size) ** 2
    assert _placeholders(config, built) == [patches] * sweep_inputs.BATCH
    length = built.inputs["input_ids"].shape[1]
    calls = _text_calls(model, built.inputs, "language_model.")
    assert all(c.shape[-2:] == (length, length) for c in calls)
    # LLaVA's CLIP tower has a projection_dim its projector never reads: left as the default
    llava = small_config(transformers, "llava")
    unshrunk = transformers.CONFIG_MAPPING["llava"]().vision_config.projection_dim
    assert llava.vision_config.projection_dim == unshrunk != llava.text_config.hidden_size
    assert not sweep_image_tokens.is_image_input(config)  # Janus's VQ only generates images


def test_glm_image_gets_a_target_grid_per_sample_and_codes_within_its_vocabulary(transformers):
    config = small_config(transformers, "glm_image")
    assert config.vq_config.num_embeddings <= sweep_image_tokens.CODEBOOK < config.text_config.vocab_size
    model, built = _built(config)
    assert built.kinds == ["text", "image"]
    grids, per_sample = built.inputs["image_grid_thw"], built.inputs["images_per_sample"]
    assert per_sample.tolist() == [2] * sweep_inputs.BATCH and grids.shape[0] == 2 * sweep_inputs.BATCH
    source = grids[0]  # each sample's source image, then the target it would generate
    assert _placeholders(config, built) == [int(source.prod())] * sweep_inputs.BATCH
    length = built.inputs["input_ids"].shape[1]
    calls = _text_calls(model, built.inputs, "language_model.")
    assert all(c.shape[-2:] == (length, length) for c in calls)


def test_text_stays_the_fallback_of_a_model_without_pixels(transformers):
    # Emu3's text model takes no pixels: its VQ rules do not apply, it runs on text
    config = small_config(transformers, "emu3_text_model")
    assert sweep_image_tokens.image_side(config) is None
    _, built = _built(config)
    assert built.kinds == ["text"]
    # a forward without images_per_sample keeps its grids as they are
    media = {"image_grid_thw": object()}
    assert sweep_image_tokens.with_target_grids({"pixel_values": None}, media) is media
