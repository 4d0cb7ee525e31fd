"""The sweep's Perception Encoder families (issue 35): PE video and its encoder, PE audio-video's
encoder and PerceptionLM, each over a timm vision transformer (PE core) that transformers' default
config fixes at 336 px or leaves unsized. The tests that build a timm tower skip where timm is not
installed (the ``sweep`` extra; CI does not install it): that is the honest outcome there. The
retry that gives a clip beside audio needs no optional library. Small configs, built here; nothing
is downloaded."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from attnviz.bench import capture_sweep, sweep_inputs, sweep_named
from tests.capture.sweep_support import small_config


@pytest.fixture(scope="module")
def transformers() -> Any:
    return pytest.importorskip("transformers", reason="transformers is a test dependency (pip install .[test])")


@pytest.fixture(scope="module")
def timm() -> Any:
    return pytest.importorskip("timm", reason="the sweep extra (pip install .[sweep]) is not installed")


def test_a_timm_tower_fixed_to_a_large_image_is_built_small(transformers, timm):
    # PE video's tower is PE core at 336 px (300 M parameters) and refuses any other frame size
    # ("Input height (32) doesn't match model (336)"): its model_args make it 64 wide, 2 deep,
    # at 4 x 4 patches of 14 px, and the sweep reads that size for the frames it makes.
    from attnviz.bench import sweep_timm

    assert transformers.PeVideoEncoderConfig().vision_config.model_args is None  # as shipped
    config = small_config(transformers, "pe_video_encoder")
    args = config.vision_config.model_args
    assert args["img_size"] == (56, 56) and args["embed_dim"] == 64 and args["depth"] == 2
    assert config.vision_config.image_size == 56
    tower = timm.create_model(config.vision_config.architecture, pretrained=False, **args)
    assert sum(p.numel() for p in tower.parameters()) < 1_000_000
    # without the rule, the tower keeps its 336 px
    unsized = small_config(
        transformers,
        "pe_video_encoder",
        tuple(r for r in sweep_timm.REPAIRS if r is not sweep_timm.timm_tower_small),
        sweep_timm,
    )
    assert unsized.vision_config.model_args is None


def test_a_timm_tower_of_no_fixed_size_or_already_sized_is_left_as_it_is(transformers, timm):
    from attnviz.bench import sweep_timm

    resnet = transformers.TimmWrapperConfig(architecture="resnet50")  # any image size: nothing to fix
    sweep_timm.timm_tower_small(resnet)
    assert resnet.model_args is None
    sized = transformers.TimmWrapperConfig(
        architecture=sweep_timm.VIT_TOWER, model_args={"img_size": (28, 28), "embed_dim": 32}
    )
    sweep_timm.timm_tower_small(sized)
    assert sized.model_args == {"img_size": (28, 28), "embed_dim": 32}


@pytest.mark.parametrize("family", ["pe_video_encoder", "pe_video"])
def test_pe_video_runs_on_a_small_clip_and_is_exact(transformers, timm, family):
    config = small_config(transformers, family)
    verdict = capture_sweep.sweep_implementation(config, "eager")
    assert verdict["status"] == "exact", verdict
    assert "video" in verdict["inputs"]
    # the tower's 2 blocks and its attention pool are recorded beside the encoder's own layers
    assert verdict["calls"] >= 2 + 1 + 2 and verdict["unverified"] == 0, verdict


def test_perception_lm_gets_a_vision_transformer_whose_width_its_projector_reads(transformers, timm):
    # PerceptionLM sizes its projector by vision_config.model_args["embed_dim"]; its default names
    # the wrapper's ResNet-50 with no model_args ("'NoneType' object is not subscriptable").
    from attnviz.bench import sweep_timm

    assert transformers.PerceptionLMConfig().vision_config.model_args is None  # as shipped
    config = small_config(transformers, "perception_lm")
    assert config.vision_config.architecture == sweep_timm.VIT_TOWER
    assert config.vision_config.model_args["embed_dim"] == sweep_timm.SMALL_TOWER["embed_dim"]
    verdict = capture_sweep.sweep_implementation(config, "sdpa")
    assert verdict["status"] == "exact", verdict
    assert verdict["inputs"] == ["text", "image"] and verdict["calls"] >= 2 + 1 + 2, verdict


def test_pe_audio_video_encoder_runs_on_audio_with_a_clip(transformers, timm):
    config = small_config(transformers, "pe_audio_video_encoder")
    model = capture_sweep._build(config, "eager")
    built = sweep_inputs.build(model, config)
    assert not isinstance(built, str), built
    assert built.inputs["input_values"] is not None and built.inputs["pixel_values_videos"] is not None
    assert built.kinds == ["audio", "video"]
    verdict = capture_sweep.sweep_implementation(config, "eager")
    assert verdict["status"] == "exact", verdict


class _TwoTowers(torch.nn.Module):
    def forward(self, input_values: torch.Tensor | None = None, pixel_values_videos: torch.Tensor | None = None) -> Any:
        r"""
        input_values (`torch.Tensor` of shape `(batch_size, sequence_length)`):
            Samples.
        pixel_values_videos (`torch.Tensor` of shape `(batch_size, num_frames, num_channels, frame_size, frame_size)`):
            Frames.
        """
        return input_values.sum() + pixel_values_videos.shape[0]


def test_a_clip_is_made_beside_audio_where_the_forward_dereferences_the_one_it_lacks():
    # A forward whose audio and video are both optional by signature but both read (PE audio-video's
    # encoder): a plan with audio alone fails on the missing clip, and the retry makes it at the
    # frame size the config gives.
    model = _TwoTowers()
    config = type("Config", (), {"image_size": 28, "num_frames": 3})()
    inputs = {"input_values": torch.randn(2, 100)}
    params = sweep_inputs.inspect.signature(model.forward).parameters
    try:
        model(**inputs)
    except AttributeError as exc:
        message = str(exc)
    assert "'NoneType' object has no attribute" in message
    again = sweep_named.retried(inputs, params, message, config, model)
    assert again is not None and again["input_values"] is inputs["input_values"]
    assert tuple(again["pixel_values_videos"].shape) == (2, 3, 3, 28, 28)
    model(**again)
