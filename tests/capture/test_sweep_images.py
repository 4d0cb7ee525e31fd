"""The capture sweep on image and video families whose pixels or configs need more than the usual
(B, C, H, W) image (issue 35, N35b): packed NaViT patches with their grids, video frames of the
config's clip length, SAM's parts on one width and grid, a staged backbone cut with its layers,
answer tokens past the shrunk vocabulary, a grouped two-stage detector, a pooler's width, a
model whose own reporting of its maps fails. Each runs transformers' own modelling code on a
tiny config built here (nothing downloaded) and is held to the sweep's verdict; every one of
them was "not run" before these rules."""

from __future__ import annotations

from typing import Any

import pytest

from attnviz.bench import capture_sweep, sweep_image_repairs, sweep_images

from .sweep_support import small_config

#: family: (the verdict, the kind of inputs it must say it ran on).
FAMILIES = {
    "minicpm_ocr_vision": ("exact", "image"),  # packed patches with target_sizes
    "minicpmv4_6": ("exact", "image"),  # the same with text holding their placeholders (was text only)
    "video_llama_3": ("exact", "image"),  # grid patches with each image's merge size (was text only)
    "xclip_vision_model": ("exact", "video"),  # frames as a batch of num_frames
    "sam": ("exact", "image"),  # prompt encoder, mask decoder and neck on one width and grid
    "shieldgemma2": ("exact", "image"),  # yes/no tokens its code names past the vocabulary
    "lw_detr": ("exact", "image"),  # a grouped detector's queries and its one scale
    "vision-text-dual-encoder": ("exact", "image"),  # ViT's pooler as wide as the tower
    "llama4_vision_model": ("exact", "image"),  # shuffled adapter; its output_attentions fails
    "convnext": ("no attention", "image"),  # a staged backbone's lists cut with its stages
}


@pytest.fixture(scope="module")
def transformers() -> Any:
    return pytest.importorskip("transformers", reason="transformers is a test dependency (pip install .[test])")


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_family_runs_on_pixels_made_for_it(transformers, family):
    status, kind = FAMILIES[family]
    verdict = capture_sweep.sweep_implementation(small_config(transformers, family), "eager")
    assert verdict["status"] == status, verdict
    assert kind in verdict["inputs"], verdict
    if status == "exact":
        assert verdict["unverified"] == 0 and verdict["calls"] >= 1


def test_a_model_whose_maps_fail_is_run_without_asking_for_them_and_says_so(transformers):
    verdict = capture_sweep.sweep_implementation(small_config(transformers, "llama4_vision_model"), "eager")
    assert verdict["maps"] == 0 and "tuple index out of range" in verdict["skipped"], verdict


def test_a_staged_backbone_keeps_one_width_and_depth_per_stage(transformers):
    config = small_config(transformers, "convnext")
    assert len(config.hidden_sizes) == len(config.depths) == config.num_stages
    assert max(config.out_indices) <= config.num_stages
    assert config.stage_names == ["stem"] + [f"stage{i}" for i in range(1, config.num_stages + 1)]


def test_sam_kins_parts_share_the_necks_width_and_the_prompt_grid(transformers):
    config = small_config(transformers, "sam2")
    neck = config.vision_config.fpn_hidden_size
    assert config.prompt_encoder_config.hidden_size == config.mask_decoder_config.hidden_size == neck
    grid = config.prompt_encoder_config.image_size // config.prompt_encoder_config.patch_size
    assert config.vision_config.backbone_feature_sizes[-1] == [grid, grid]
    backbone = config.vision_config.backbone_config
    assert backbone.hidden_size == backbone.embed_dim_per_stage[0]
    assert backbone.image_size == [config.prompt_encoder_config.image_size] * 2


def test_depth_pros_patch_model_and_hooks_follow_the_shrinking(transformers):
    config = small_config(transformers, "depth_pro")
    assert config.patch_size == config.patch_model_config.image_size
    layers = config.patch_model_config.num_hidden_layers
    assert all(0 <= h < layers for h in config.intermediate_hook_ids)
    # the deeper hook of the default (11, 5) is still the deeper one
    assert config.intermediate_hook_ids[0] > config.intermediate_hook_ids[1]
    plans = list(sweep_images.scaled_plans(config, {"pixel_values": None}))
    pixels = plans[0][2]()["pixel_values"]
    assert pixels.shape[-1] * min(config.scaled_images_ratios) >= config.patch_size


def test_a_vq_autoencoders_image_makes_its_latent_grid(transformers):
    config = small_config(transformers, "janus_vqgan")
    assert config.num_patches == sweep_image_repairs.VQ_GRID
    (label, _, make), *_ = sweep_images.latent_plans(config, {"pixel_values": None})
    assert make()["pixel_values"].shape[-1] == config.num_patches * 2 ** (len(config.channel_multiplier) - 1)


def test_a_layer_index_past_the_layers_kept_moves_to_the_last(transformers):
    config = small_config(transformers, "minicpmv4_6_vision")
    assert config.insert_layer_id == config.num_hidden_layers - 1


def test_a_video_tower_is_shrunk_to_a_short_clip_of_small_frames(transformers):
    config = small_config(transformers, "videoprism_vision_model")
    assert config.num_frames == sweep_image_repairs.VIDEO_FRAMES
    assert config.image_size == 8 * config.tubelet_size[1]
    assert config.num_spatial_layers == config.num_temporal_layers == 2


def test_a_grid_tower_takes_merge_blocks_counted_in_merged_tokens(transformers):
    config = small_config(transformers, "inkling2_vision")
    (label, _, make), *_ = sweep_images.merge_block_plans(config, {"pixel_values": None, "image_grid_thw": None})
    made = make()
    merge, patch = config.spatial_merge_size, config.patch_size
    assert made["pixel_values"].shape[1:] == (merge * patch, merge * patch, config.num_channels)
    # one block per merged token: the grid's tokens over every image
    assert made["pixel_values"].shape[0] == int(made["image_grid_thw"].prod(-1).sum())
