"""The capture sweep on multimodal language models that ran on text only (issue 35, P6d): every
image plan failed on the shrunk config, so the sweep kept its last plan, text. Each rule of
``sweep_media_images`` is shown twice: the family runs on images and is captured exactly (its
verdict's "inputs"), and without the rule its config still holds the size that broke the image
path. Transformers' own modelling code on a tiny config built here (nothing downloaded)."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from attnviz.bench import capture_sweep, sweep_media_images

from .sweep_support import small_config

#: family: the rule that makes its image path run.
FAMILIES = {
    "idefics2": "resampler_width",  # the perceiver as wide as the text model
    "mllama": "stacked_output_width",  # the tower's output joins its intermediate layers
    "vipllava": "feature_layers_kept",  # hidden-state indices inside the layers kept
    "ovis2": "outer_width",  # the visual embedding table as wide as the text model
    "muse_spark": "merged_output_width",  # the merged tower width its projector takes
    "minimax_m3_vl": "merged_text_width",  # the merged text width its projector takes
    "aria": "queries_for_patches",  # learned queries for the shrunk patch count
    "granite_docling": "tile_mask_plans",  # tiles with the mask of real tiles it requires
    "inkling_mm_model": "clip_patch_plans",  # clip patches, channels last
    "lfm2_vl": "naflex_text_plans",  # NaFlex patches with the image's tokens in the text
    "deepseek_vl_hybrid": "paired_resolution_plans",  # two images, one per tower
    "inkling2": "merge_block_text_plans",  # merge blocks with their tokens, after the usual grids
    "unlimited_ocr": "heads_without_groups",  # eager with no repeat_kv; its SAM neck's tuple
    "molmo2": "pooled_crop_plans",  # crops pooled into tokens by indices; its adapter's widths
}


@pytest.fixture(scope="module")
def transformers() -> Any:
    return pytest.importorskip("transformers", reason="transformers is a test dependency (pip install .[test])")


#: Families transformers builds only with an optional library (the ``sweep`` extra).
NEEDS = {"inkling_mm_model": "scipy"}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_family_is_captured_exactly_on_images(transformers, family):
    if family in NEEDS:
        pytest.importorskip(NEEDS[family], reason="the sweep extra (pip install .[sweep]) is not installed")
    verdict = capture_sweep.sweep_implementation(small_config(transformers, family), "eager")
    assert verdict["status"] == "exact", verdict
    assert "image" in verdict["inputs"], verdict
    assert verdict["unverified"] == 0 and verdict["calls"] >= 1


def _without(transformers: Any, family: str, rule: str) -> Any:
    kept = tuple(r for r in sweep_media_images.REPAIRS if r.__name__ != rule)
    assert len(kept) == len(sweep_media_images.REPAIRS) - 1
    return small_config(transformers, family, kept, sweep_media_images)


def test_a_resampler_follows_the_text_width(transformers):
    assert _without(transformers, "idefics2", "resampler_width").perceiver_config.hidden_size != 64
    config = small_config(transformers, "idefics2")
    assert config.perceiver_config.hidden_size == config.text_config.hidden_size


def test_a_towers_stacked_output_is_its_width_times_the_layers_joined(transformers):
    config = small_config(transformers, "mllama")
    vision = config.vision_config
    assert vision.vision_output_dim == vision.hidden_size * (1 + len(vision.intermediate_layers_indices))
    broken = _without(transformers, "mllama", "stacked_output_width").vision_config
    assert broken.vision_output_dim != vision.vision_output_dim


def test_feature_layer_indices_fall_inside_the_hidden_states_kept(transformers):
    config = small_config(transformers, "vipllava")
    states = config.vision_config.num_hidden_layers + 1
    before = _without(transformers, "vipllava", "feature_layers_kept").vision_feature_layer
    assert any(not -states <= i < states for i in before)
    assert len(config.vision_feature_layer) == len(before)  # the projector takes their count
    assert all(-states <= i < states for i in config.vision_feature_layer)


def test_an_outer_width_follows_the_text_model_only_where_it_has_no_layers(transformers):
    config = small_config(transformers, "ovis2")
    assert config.hidden_size == config.text_config.hidden_size
    assert _without(transformers, "ovis2", "outer_width").hidden_size != config.hidden_size
    llava = small_config(transformers, "llava")  # no width of its own: untouched
    assert "hidden_size" not in vars(llava)


def test_a_merged_width_is_the_towers_times_the_merge(transformers):
    config = small_config(transformers, "muse_spark")
    tower = config.vision_config
    assert config.out_hidden_size == tower.hidden_size * tower.merge_size**2
    assert _without(transformers, "muse_spark", "merged_output_width").out_hidden_size != config.out_hidden_size


def test_the_projector_lists_queries_for_the_shrunk_patch_count(transformers):
    config = small_config(transformers, "aria")
    patches = (config.vision_config.image_size // config.vision_config.patch_size) ** 2
    assert patches not in _without(transformers, "aria", "queries_for_patches").projector_patch_to_query_dict
    queries = config.projector_patch_to_query_dict[patches]
    assert 0 < queries <= min(patches, config.max_value_projector_patch_to_query_dict)


def test_the_tile_mask_plan_is_offered_only_where_the_mask_is_required(transformers):
    def labels(family: str) -> list[str]:
        config = small_config(transformers, family)
        model = capture_sweep._build(config, "eager")
        params = inspect.signature(model.forward).parameters
        return [label for label, _, _ in sweep_media_images.plans(model, config, params)]

    assert any("mask of real tiles" in label for label in labels("granite_docling"))
    # Idefics3 makes its own mask; LFM2-VL wants spatial shapes besides: neither is offered it
    assert not any("mask of real tiles" in label for label in labels("idefics3"))
    assert not any("mask of real tiles" in label for label in labels("lfm2_vl"))


def test_a_second_towers_global_layers_fall_inside_the_layers_kept(transformers):
    config = small_config(transformers, "deepseek_vl_hybrid")
    tower = config.high_res_vision_config
    assert (
        max(
            _without(
                transformers, "deepseek_vl_hybrid", "second_tower_layers_kept"
            ).high_res_vision_config.global_attn_indexes
        )
        >= tower.num_hidden_layers
    )
    assert all(0 <= i < tower.num_hidden_layers for i in tower.global_attn_indexes)
    sam = small_config(transformers, "sam")  # a SAM model of its own: left as it is
    assert tuple(sam.vision_config.global_attn_indexes) == (2, 5, 8, 11)


def test_the_naflex_text_plan_is_not_offered_to_a_dual_encoder(transformers):
    config = small_config(transformers, "siglip2")
    model = capture_sweep._build(config, "eager")
    params = inspect.signature(model.forward).parameters
    assert not list(sweep_media_images.naflex_text_plans(model, config, params))


def test_key_value_heads_stay_heads_where_eager_never_repeats_them(transformers):
    config = small_config(transformers, "unlimited_ocr").text_config
    assert config.num_key_value_heads == config.num_attention_heads
    broken = _without(transformers, "unlimited_ocr", "heads_without_groups").text_config
    assert broken.num_key_value_heads < broken.num_attention_heads
    llama = small_config(transformers, "llama")  # its eager repeats them: grouped as shrunk
    assert llama.num_key_value_heads < llama.num_attention_heads


def test_a_sam_neck_given_as_a_tuple_ends_at_the_second_encoders_width(transformers):
    vision = small_config(transformers, "unlimited_ocr").vision_config
    assert isinstance(vision.sam_config.downsample_channels, tuple)
    assert vision.sam_config.downsample_channels[-1] == vision.encoder_config.hidden_size


def test_a_merged_width_derived_from_the_default_text_width_follows_the_shrunk_one(transformers):
    # MiniMax-M3-VL's __post_init__ sets merged_hidden_size = 6144 * 2 * 2 before the shrinking
    assert _without(transformers, "minimax_m3_vl", "merged_text_width").merged_hidden_size == 24576
    config = small_config(transformers, "minimax_m3_vl")
    assert config.merged_hidden_size == config.text_config.hidden_size * config.vision_config.spatial_merge_size**2


def test_an_adapters_text_width_and_feature_layers_follow_the_shrunk_models(transformers):
    # Molmo2: its adapter_config, a sibling of the tower's, holds the text width its projector
    # writes and the tower layers it joins; its image placeholder is named image_patch_id
    config = small_config(transformers, "molmo2")
    assert config.adapter_config.text_hidden_size == config.text_config.hidden_size
    states = config.vision_config.num_hidden_layers + 1
    assert all(-states <= i < states for i in config.adapter_config.vision_feature_layer)
    vocabulary = config.text_config.vocab_size + config.text_config.additional_vocab_size
    assert 0 <= config.image_token_id < vocabulary
    assert _without(transformers, "molmo2", "adapter_text_width").adapter_config.text_hidden_size == 3584
    broken = _without(transformers, "molmo2", "feature_layers_kept").adapter_config.vision_feature_layer
    assert any(not -states <= i < states for i in broken)
