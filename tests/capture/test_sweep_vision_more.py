"""The capture sweep on the vision and OCR families whose small config did not build or run
(issue 35, N5b): a tuple the code concatenates as a list and a head declaring its backbone's
width (ViTMatte), per-layer kinds a default leaves unset (DeepSeek-OCR 2's text model), layer
indices past the layers kept (Mllama's tower), a SAM neck feeding a second encoder (DeepSeek-OCR
2's tower), M-RoPE sections as the modelling code defaults them (Ernie 4.5 VL), a clip the
config fixes (TVP), Granite 4 Vision's projectors its default leaves unset. Each family runs
transformers' own modelling code on a tiny config built here (nothing downloaded) and is held to
the sweep's verdict; every one was "not run" or "not offered" before these rules. The PP-OCR
detectors and UVDoc (convolutional: "no attention" once they run) need their neck's backbone as
declared, their unset intra-class blocks, their neck's channels, every stage's map. EoMT's count of
query layers, past the layers kept, is cut to leave one layer before them."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from attnviz.bench import capture_sweep, sweep_vision_more

from .sweep_support import small_config

#: family: the kind of inputs it must say it ran on (each exact on eager).
FAMILIES = {
    "vitmatte": "image",  # fusion sizes as a list, the head as wide as its backbone
    "deepseek_ocr2_text": "text",  # mlp_layer_types from its documented example
    "mllama_vision_model": "image",  # intermediate layers past the two kept
    "deepseek_ocr2_vision": "image",  # the SAM neck's channels the second encoder's width
    "ernie4_5_vl_moe": "image",  # height and width sections equal, as its code's default
    "granite4_vision": "image",  # its window Q-Former projectors set
    "tvp": "video",  # 4 frames of 128 px, one clip
}
#: Convolutional families whose default configs did not run: "no attention" on pixels.
CONVOLUTIONAL = (
    "pp_ocrv5_server_det",  # intra-class blocks and neck scales unset
    "pp_ocrv6_medium_det",  # the same, over the HGNetV2 its class declares
    "pp_ocrv6_small_det",  # PP-LCNetV3 as declared, the neck's channels the backbone's
    "uvdoc",  # every stage's map to the head that concatenates them
)


@pytest.fixture(scope="module")
def transformers() -> Any:
    return pytest.importorskip("transformers", reason="transformers is a test dependency (pip install .[test])")


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_family_is_captured_exactly(transformers, family):
    verdict = capture_sweep.sweep_implementation(small_config(transformers, family), "eager")
    assert verdict["status"] == "exact", verdict
    assert FAMILIES[family] in verdict["inputs"], verdict
    assert verdict["unverified"] == 0 and verdict["calls"] >= 1


def test_a_tuple_the_code_concatenates_to_a_list_becomes_a_list(transformers):
    config = small_config(transformers, "vitmatte")
    assert isinstance(config.fusion_hidden_sizes, list)
    assert config.hidden_size == config.backbone_config.hidden_size
    # a tuple no code concatenates stays a tuple (SAM's global attention indices)
    assert isinstance(small_config(transformers, "deepseek_ocr2_vision").sam_config.global_attn_indexes, tuple)


def test_unset_layer_kinds_follow_the_documented_example():
    class Config(SimpleNamespace):
        """
        mlp_layer_types (`list[str]`, *optional*):
            MLP type per layer, e.g. `["dense", "sparse", "sparse", ...]`.
        other (`int`):
            Something else.
        """

    config = Config(num_hidden_layers=3, mlp_layer_types=None, attn_layer_types=None)
    sweep_vision_more.documented_layer_kinds(config)
    assert config.mlp_layer_types == ["dense", "sparse", "sparse"]
    assert config.attn_layer_types is None  # no example documented: nothing guessed


def test_layer_indices_past_the_layers_kept_name_the_last_layer(transformers):
    config = small_config(transformers, "mllama_vision_model")
    layers = config.num_hidden_layers
    assert len(config.intermediate_layers_indices) == 5  # as many: the widths that count them hold
    assert all(0 <= i < layers for i in config.intermediate_layers_indices)


def test_mrope_sections_keep_the_equalities_of_the_codes_default(transformers):
    text = small_config(transformers, "ernie4_5_vl_moe").text_config
    sections = text.rope_parameters["mrope_section"]
    head = text.hidden_size // text.num_attention_heads
    assert sections[0] == sections[1] and sum(sections) == head // 2
    # sections that already keep them (a config's own) are left as they are
    rope = {"mrope_section": [2, 2, 4]}
    config = SimpleNamespace(rope_parameters=rope)
    sweep_vision_more.mrope_sections_as_coded(config)
    assert rope["mrope_section"] == [2, 2, 4]


def test_a_sam_neck_feeding_an_encoder_ends_at_its_width(transformers):
    config = small_config(transformers, "deepseek_ocr2_vision")
    assert config.sam_config.downsample_channels[-1] == config.encoder_config.hidden_size


def test_a_fixed_clip_is_shrunk_and_made_at_its_size(transformers):
    config = small_config(transformers, "tvp")
    assert config.num_frames == sweep_vision_more.CLIP_FRAMES
    assert config.max_img_size == sweep_vision_more.CLIP_SIZE > 2 * config.visual_prompt_size
    plans = list(sweep_vision_more.clip_plans(config, {"pixel_values": 0, "input_ids": 0, "attention_mask": 0}))
    assert len(plans) == 1
    inputs = plans[0][2]()
    assert tuple(inputs["pixel_values"].shape) == (1, config.num_frames, 3, config.max_img_size, config.max_img_size)
    assert inputs["attention_mask"].shape == inputs["input_ids"].shape


def test_granite4_visions_projectors_fit_its_image_and_layers(transformers):
    config = small_config(transformers, "granite4_vision")
    vision = config.vision_config
    side = vision.image_size // vision.patch_size
    query, window = (int(s) for s in config.downsample_rate.split("/"))
    assert side % window == 0 and side % 2 == 0 and query <= window
    assert config.image_grid_pinpoints == [[vision.image_size, vision.image_size]]
    assert all(v <= vision.num_hidden_layers for v, _ in config.deepstack_layer_map)
    assert all(t < config.text_config.num_hidden_layers for t in config.spatial_target_layers)


@pytest.mark.parametrize("family", CONVOLUTIONAL)
def test_the_convolutional_detector_runs_and_has_no_attention(transformers, family):
    verdict = capture_sweep.sweep_implementation(small_config(transformers, family), "eager")
    assert verdict["status"] == "no attention", verdict
    assert "image" in verdict["inputs"], verdict


def test_a_detector_neck_gets_the_declared_backbone_and_its_channels(transformers):
    config = small_config(transformers, "pp_ocrv6_small_det")
    declared = type(config).sub_configs_defaults["backbone_config"].model_type
    assert config.backbone_config.model_type == declared
    channels = transformers.AutoBackbone.from_config(config.backbone_config).channels
    assert list(config.layer_list_out_channels) == list(channels)
    # a DETR's default backbone (a timm one, not the declared ResNet) is left: no neck sized by its config
    assert small_config(transformers, "detr").backbone_config.model_type == "timm_backbone"


def test_intraclass_blocks_keep_the_maps_size():
    config = SimpleNamespace(intraclass_block_config=None, intraclass_block_number=4, scale_factor_list=None)
    sweep_vision_more.intraclass_blocks(config)
    blocks = config.intraclass_block_config
    assert blocks["vertical_long_to_small_conv_longratio"] == [[7, 1], [1, 1], [3, 0]]
    assert blocks["horizontal_small_to_long_conv_shortratio"] == [[1, 3], [1, 1], [0, 1]]
    assert blocks["symmetric_conv_long_midratio"] == [[5, 5], [1, 1], [2, 2]]
    assert config.scale_factor_list == [1, 2, 4, 8]


def test_a_head_over_every_stage_gets_every_stages_map(transformers):
    backbone = small_config(transformers, "uvdoc").backbone_config
    assert backbone.out_features == backbone.stage_names[1:]


def test_a_count_of_last_layers_past_the_layers_kept_leaves_the_first_layer_before_them(transformers):
    # EoMT adds its learned queries at layer num_hidden_layers - num_blocks: 2 - 4 is never
    # reached, and its mask head then reads the 0 image channels left after 200 queries.
    config = small_config(transformers, "eomt")
    assert config.num_hidden_layers == 2 and config.num_blocks == 1
    # the same rule on a sub-config: Fun-ASR-Nano's encoder counts its timestamp layers back
    audio = small_config(transformers, "fun_asr_nano").audio_config
    assert audio.num_timestamp_prediction_layers == audio.num_hidden_layers - 1
    # a count the code does not read back from the last layer is left alone
    assert small_config(transformers, "gemma4_text").num_kv_shared_layers == 0


@pytest.mark.parametrize("family", ["eomt", "videomt"])
def test_a_model_with_queries_in_its_last_layers_runs_them_and_is_exact(transformers, family):
    pytest.importorskip("scipy", reason="the sweep extra (pip install .[sweep]) is not installed")
    import torch

    from attnviz.bench import sweep_inputs
    from attnviz.capture import capture

    config = small_config(transformers, family)
    verdict = capture_sweep.sweep_implementation(config, "eager")
    assert verdict["status"] == "exact", verdict
    model = capture_sweep._build(config, "eager")
    built = sweep_inputs.build(model, config)
    with torch.no_grad(), capture(model) as cap:
        model(**built.inputs)
    # the last layer attends over the learned queries and the image tokens, the first without them
    lengths = [call.shape[2] for call in cap.calls]
    assert lengths[-1] == lengths[0] + config.num_queries, lengths
