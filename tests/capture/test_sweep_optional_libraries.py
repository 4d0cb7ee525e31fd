"""The sweep's families that transformers builds only with an optional library (issue 35): DETR
over a timm backbone, Gemma 3n's and EdgeTAM's timm towers. Those tests skip where timm is not
installed (the ``sweep`` extra; CI does not install it): that is the honest outcome there. The
deformable attention's layout needs no optional library (its backbone is transformers' own ResNet).
Tiny random configs, built here; nothing is downloaded."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from attnviz.bench import capture_sweep, sweep_inputs


@pytest.fixture(scope="module")
def transformers() -> Any:
    return pytest.importorskip("transformers", reason="transformers is a test dependency (pip install .[test])")


def test_deformable_sampling_weights_are_recorded_with_their_heads_second(transformers):
    # Deformable DETR's softmax is over each query's sampled points, laid out (B, L, H, points):
    # read as it was, its 1045 encoder positions became 1045 heads, and opening the capture ran
    # the window out of memory. Its heads are the module's n_heads, its queries the positions.
    from attnviz.capture import capture

    config = transformers.DeformableDetrConfig(
        use_timm_backbone=False,
        backbone_config=transformers.ResNetConfig(
            hidden_sizes=[16, 32, 48, 64],
            embedding_size=16,
            depths=[1, 1, 1, 1],
            out_features=["stage2", "stage3", "stage4"],  # three levels, the fourth a conv past the last
        ),
        d_model=32,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        num_queries=10,
        encoder_n_points=2,
        decoder_n_points=2,
    )
    torch.manual_seed(0)
    model = transformers.DeformableDetrModel(config).eval()
    pixels = torch.randn(1, 3, 128, 128)
    with torch.no_grad(), capture(model) as cap:
        model(pixel_values=pixels)
    sampled = [c for c in cap.calls if "self_attn" in c.name and c.name.startswith("encoder")]
    assert sampled, [c.name for c in cap.calls]
    for call in sampled:
        weights = call.weights()
        assert weights.shape[1] == config.encoder_attention_heads, weights.shape
        # the positions of every feature level, each over its levels x points samples
        assert weights.shape[-1] == config.num_feature_levels * config.encoder_n_points, weights.shape
        assert weights.shape[2] > weights.shape[1]
        sums = weights.sum(-1)
        assert torch.allclose(sums, torch.ones_like(sums), atol=1e-5)  # float32 softmax rows


@pytest.mark.parametrize("family", ["detr", "conditional_detr"])
def test_a_detector_over_a_timm_backbone_builds_without_weights_and_is_exact(transformers, family):
    pytest.importorskip("timm", reason="the sweep extra (pip install .[sweep]) is not installed")
    config = transformers.CONFIG_MAPPING[family]()
    capture_sweep.shrink(config)
    # the default backbone names a timm model (resnet50) and no pretrained weights are fetched
    assert getattr(config.backbone_config, "model_type", None) == "timm_backbone"
    verdict = capture_sweep.sweep_implementation(config, "eager")
    assert verdict["status"] == "exact", verdict
    assert "image" in verdict["inputs"] and verdict["calls"] >= 2


def test_a_forward_that_passes_keywords_on_is_retried_without_asking_for_maps():
    # EdgeTAM's forward takes **kwargs and hands output_attentions to its timm tower, which
    # refuses it ("Cannot set `output_attentions` for timm models"): its plans are tried again
    # with the maps not asked for, as a forward that names the argument gets them.
    from torch import nn

    class Passes(nn.Module):
        def forward(self, input_ids: torch.Tensor, **kwargs: Any) -> torch.Tensor:
            return input_ids

    class Takes(nn.Module):
        def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
            return input_ids

    config = type("Config", (), {"vocab_size": 10})()
    labels = [label for label, _kinds, _make in sweep_inputs._with_maps_then_without(Passes(), config)]
    assert labels and any(label.endswith("no maps asked for") for label in labels), labels
    without = [
        make for label, _kinds, make in sweep_inputs._with_maps_then_without(Passes(), config) if "no maps" in label
    ]
    assert without[0]()["output_attentions"] is False
    labels = [label for label, _kinds, _make in sweep_inputs._with_maps_then_without(Takes(), config)]
    assert not any("no maps" in label for label in labels), labels


def test_a_timm_backbone_config_that_names_no_model_gets_a_small_transformer(transformers):
    # TimmBackbone refuses a config with no timm model name ("backbone is not set in the config"):
    # the sweep names a small ViT, built without weights, and its 12 attention calls are exact.
    pytest.importorskip("timm", reason="the sweep extra (pip install .[sweep]) is not installed")
    from attnviz.bench import sweep_timm

    config = transformers.TimmBackboneConfig()
    assert config.backbone is None
    capture_sweep.shrink(config)
    assert config.backbone == sweep_timm.TIMM_BACKBONE
    verdict = capture_sweep.sweep_implementation(config, "sdpa")
    assert verdict["status"] == "exact", verdict
    assert verdict["calls"] == 12 and verdict["unverified"] == 0


def test_a_timm_wrapper_config_that_misspells_its_architecture_builds_the_model_it_meant(transformers):
    # EdgeTAM's default names RepViT under "archirecture": the wrapper would build its default
    # ResNet-50 (1024 channels), which the neck, sized for RepViT's 384, refuses.
    config = transformers.CONFIG_MAPPING["edgetam_vision_model"]()
    assert config.backbone_config.architecture == "resnet50"  # transformers' own default, as shipped
    capture_sweep.shrink(config)
    assert config.backbone_config.architecture == "repvit_m1"
    assert config.backbone_channel_list[0] == 384  # the neck it was sized for, untouched
