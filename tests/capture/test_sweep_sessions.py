"""The capture sweep on video trackers whose forward takes an inference session (issue 35, N5a):
SAM 2's, EdgeTAM's and SAM 3's video models, built from the shrunk config with the sweep's
repairs, given a session made from a random clip with a prompt on frame 0 (no processor), and
captured on frame 1. Each runs transformers' own modelling code on a tiny config built here
(nothing downloaded); every one of them was "not run" before these rules."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from attnviz.bench import capture_sweep, sweep_sessions

from .sweep_support import small_config

#: family: the parts of the model whose attention the captured forward on frame 1 must record
#: (the image encoder on the new frame, the memory attention over frame 0, the mask decoder).
FAMILIES = {
    "sam2_video": ("vision_encoder", "memory_attention", "mask_decoder"),  # a point on frame 0
    "edgetam_video": ("vision_encoder", "memory_attention", "mask_decoder"),  # 2-D latents per window
    "sam3_video": (  # a text prompt: its encoder, the detector and the tracker it feeds
        "detector_model.text_encoder",
        "detector_model.detr_decoder",
        "tracker_model.memory_attention",
        "tracker_model.mask_decoder",
    ),
}


@pytest.fixture(scope="module")
def transformers() -> Any:
    return pytest.importorskip("transformers", reason="transformers is a test dependency (pip install .[test])")


def test_sam2_video_is_captured_exactly_from_a_session_made_from_its_config(transformers):
    verdict = capture_sweep.sweep_implementation(small_config(transformers, "sam2_video"), "eager")
    assert verdict["status"] == "exact", verdict
    assert verdict["inputs"] == ["video"] and verdict["unverified"] == 0 and verdict["unmatched"] == 0
    assert verdict["calls"] >= 10, verdict  # the tower's, the memory attention's and the decoder's


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_frame_one_runs_every_kind_of_attention_the_same_on_each_forward(transformers, family):
    import torch

    from attnviz.capture import capture

    config = small_config(transformers, family)
    torch.manual_seed(0)
    model = capture_sweep._build(config, "eager")
    params = inspect.signature(model.forward).parameters
    (label, kinds, make), *_ = sweep_sessions.plans(model, config, params)
    inputs = make()
    with torch.no_grad():
        first = model(**inputs)
        with capture(model) as cap:
            second = model(**inputs)
    # the session given is left as it was after frame 0: each forward tracks frame 1 afresh
    assert 1 not in inputs["inference_session"].cache._vision_features
    names = [call.name for call in cap.calls]
    for part in FAMILIES[family]:
        assert any(part in name for name in names), (part, names)
    # the same masks twice (same kernels, same shapes: float32's rounding only)
    masks = [getattr(out, "pred_masks", None) for out in (first, second)]
    if masks[0] is None:  # SAM 3's video model: a mask per object id
        masks = [torch.stack(list(out.obj_id_to_mask.values())) for out in (first, second)]
        assert first.object_ids and first.object_ids == second.object_ids
    torch.testing.assert_close(masks[0], masks[1], rtol=1e-5, atol=1e-5)


def test_a_trackers_features_stay_wider_than_its_memory(transformers):
    config = small_config(transformers, "sam2_video")
    neck = config.vision_config.fpn_hidden_size
    assert neck > config.memory_encoder_output_channels  # the pointers split into memory-wide pieces
    assert config.memory_attention_hidden_size == config.memory_encoder_hidden_size == neck
    assert config.mask_downsampler_embed_dim == config.memory_fuser_embed_dim == neck
    assert config.prompt_encoder_config.hidden_size == config.mask_decoder_config.hidden_size == neck
    prompt = config.prompt_encoder_config
    assert config.image_size == prompt.image_size
    assert config.memory_attention_rope_feat_sizes == [prompt.image_size // prompt.patch_size] * 2


def test_edgetams_latents_keep_their_window_on_the_smaller_grid(transformers):
    config = small_config(transformers, "edgetam_video")
    grid = config.prompt_encoder_config.image_size // config.prompt_encoder_config.patch_size
    side = config.memory_attention_rope_k_sizes[0]
    assert config.perceiver_resampler_num_latents_2d == side * side
    assert 1 <= side and grid // side == 4  # the default's window: 64 // 16


def test_sam3_videos_detector_feeds_its_tracker_and_detects_with_random_weights(transformers):
    config = small_config(transformers, "sam3_video")
    tracker_width = config.tracker_config.vision_config.fpn_hidden_size
    assert config.detector_config.vision_config.fpn_hidden_size == tracker_width
    assert config.detector_config.detr_encoder_config.hidden_size == tracker_width
    assert config.score_threshold_detection == config.new_det_thresh == 0.0
    assert config.detector_config.detr_decoder_config.num_queries == sweep_sessions.DETECTIONS


def test_a_forward_without_a_session_gets_no_session_plan(transformers):
    model = transformers.BertModel(transformers.BertConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2))
    params = inspect.signature(model.forward).parameters
    assert list(sweep_sessions.plans(model, model.config, params)) == []
