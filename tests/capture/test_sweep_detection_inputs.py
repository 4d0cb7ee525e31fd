"""The sweep's inputs for OmDet-Turbo and Inkling's vision tower (issue 35), from the forward's
signature and the config alone: class names flattened across the batch with their per-image
counts (``sweep_grouped``), the detector's sizes the shrink broke (``sweep_image_repairs``), its
text-embedding caches emptied before the captured forward, its maps grouped by kind and its
deformable sampling weights compared (``sweep_check``); Inkling's patches as channels-last cubes
(``sweep_images.patch_cube_plans``). The sweep's own OmDet-Turbo runs a timm backbone and
Inkling's tower plans its layers with scipy: those tests skip without them (the ``sweep`` extra);
the others build OmDet-Turbo over transformers' own Swin. Small configs; nothing is downloaded."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
import torch

from attnviz.bench import (
    capture_sweep,
    sweep_check,
    sweep_config_build,
    sweep_grouped,
    sweep_image_repairs,
    sweep_images,
    sweep_inputs,
)
from tests.capture.sweep_support import small_config


@pytest.fixture(scope="module")
def transformers() -> Any:
    return pytest.importorskip("transformers", reason="transformers is a test dependency (pip install .[test])")


class _Detector:
    """A forward that takes class names flattened across the batch, documented as transformers
    documents OmDet-Turbo's (its mask's shape line is wrong there too)."""

    main_input_name = "pixel_values"

    def forward(
        self,
        pixel_values: torch.Tensor,
        classes_input_ids: torch.LongTensor,
        classes_attention_mask: torch.LongTensor,
        classes_structure: torch.LongTensor,
    ) -> None:
        r"""
        classes_input_ids (`torch.LongTensor` of shape `(total_classes (>= batch_size), sequence_length)`):
            Flattened class names.
        classes_attention_mask (`torch.BoolTensor` of shape `(total_classes, num_classes, sequence_length)`):
            Their mask.
        classes_structure (torch.LongTensor of shape `(batch_size)`):
            Classes per image.
        """


def test_flattened_items_get_counts_that_add_up_and_a_mask_shaped_as_their_ids(transformers) -> None:
    model = _Detector()
    params = inspect.signature(model.forward).parameters
    group = ("classes_input_ids", "classes_attention_mask", "classes_structure")
    assert sweep_grouped.grouped(model, params) == [group]
    config = transformers.CLIPTextConfig(vocab_size=100)
    made = sweep_grouped.fill(model, config, params, {"pixel_values": torch.zeros(3, 3, 8, 8)})
    ids, mask, counts = made["classes_input_ids"], made["classes_attention_mask"], made["classes_structure"]
    assert counts.tolist() == [sweep_grouped.ITEMS] * 3  # one count per image of the inputs made
    assert ids.shape == (int(counts.sum()), sweep_grouped.LENGTH)
    assert mask.shape == ids.shape and bool(mask.all())  # not the docstring's 3-D shape
    assert int(ids.min()) >= 0 and int(ids.max()) < 100
    assert not set(ids.flatten().tolist()) & sweep_inputs.special_ids(config)
    # what is already given is kept, and a forward without such a group is left alone
    assert sweep_grouped.fill(model, config, params, made) is made
    plain = {"pixel_values": torch.zeros(1, 3, 8, 8)}
    assert sweep_grouped.fill(model, config, {"pixel_values": None}, plain) is plain


def test_the_shrunk_detector_keeps_its_widths_tied(transformers) -> None:
    config = small_config(transformers, "omdet-turbo")
    width = config.encoder_hidden_dim
    assert list(config.vision_features_channels) == [width] * config.num_feature_levels
    # the decoder's task projection exists only where the class width is not the decoder's
    assert config.class_embed_dim != config.decoder_hidden_dim
    assert config.class_embed_dim == config.text_config.hidden_size == config.text_projection_in_dim
    assert config.text_projection_out_dim == config.class_embed_dim
    assert config.num_queries <= sweep_image_repairs.DETECTOR_QUERIES
    without = tuple(r for r in sweep_image_repairs.REPAIRS if r is not sweep_image_repairs.level_channels)
    broken = small_config(transformers, "omdet-turbo", without, sweep_image_repairs)
    assert max(broken.vision_features_channels) > broken.encoder_hidden_dim
    assert broken.class_embed_dim == broken.decoder_hidden_dim


def _omdet_over_swin(transformers: Any) -> tuple[Any, Any]:
    """The sweep's small OmDet-Turbo with transformers' own Swin as its backbone (no timm)."""
    config = small_config(transformers, "omdet-turbo")
    config.use_timm_backbone = False
    config.backbone = None
    config.backbone_config = transformers.SwinConfig(
        embed_dim=16, depths=(1, 1, 1, 1), num_heads=(1, 1, 1, 1), window_size=7, image_size=224, out_indices=(2, 3, 4)
    )
    config.encoder_in_channels = [32, 64, 128]  # Swin's channels at stages 2, 3, 4
    config.image_size = 224
    config.apply_layernorm_after_vision_backbone = False  # its norms take timm's channels-last maps
    config.timm_kwargs = {}  # the image size it hands timm's backbone
    torch.manual_seed(0)
    model = transformers.OmDetTurboForObjectDetection(config).eval()
    return model, config


def test_the_detector_runs_and_every_call_and_map_is_checked(transformers) -> None:
    from attnviz.capture import capture

    model, config = _omdet_over_swin(transformers)
    built = sweep_inputs.build(model, config)
    assert not isinstance(built, str), built
    assert built.inputs["classes_input_ids"].shape[0] == int(built.inputs["classes_structure"].sum())
    maps = sweep_check.reported_maps(built.output)
    # the decoder's maps are grouped (self-attention, then cross-attention): every one is read
    assert {w.split("[")[0] for w, _ in maps} == {"decoder_attentions", "encoder_attentions"}
    sampled = [m for w, m in maps if m.dim() == 5]  # deformable sampling weights per level and point
    assert len(sampled) == config.decoder_num_layers

    def captured(forget: bool) -> Any:
        if forget:
            sweep_grouped.forget_earlier_forwards(model)
        with torch.no_grad(), capture(model) as cap:
            model(**built.inputs, **sweep_inputs.ask_for_maps(model, built.inputs))
        return cap

    # the first forward cached the text embeddings: run again as it is, the text tower is skipped
    skipped = captured(forget=False)
    assert not [c for c in skipped.calls if c.name.startswith("language_backbone")]
    cap = captured(forget=True)
    assert [c for c in cap.calls if c.name.startswith("language_backbone")]
    status, detail = sweep_check.classify(cap, maps)
    assert status == "exact", detail
    assert detail["maps"] == len(maps) and detail["unmatched"] == 0  # the 5-D maps compared too


def test_the_sweeps_own_detector_over_timm_is_exact(transformers) -> None:
    pytest.importorskip("timm", reason="OmDet-Turbo's default backbone is timm's (the sweep extra)")
    config = sweep_config_build.default_config("omdet-turbo")
    capture_sweep.shrink(config)
    result = capture_sweep.sweep_implementation(config, "eager")
    assert result["status"] == "exact", result
    assert result["maps"] > 0 and result["unmatched"] == 0


def test_a_tower_of_patch_cubes_runs_on_channels_last_cubes(transformers) -> None:
    pytest.importorskip("scipy", reason="Inkling's tower plans its layers with scipy (the sweep extra)")
    config = small_config(transformers, "inkling_vision")
    torch.manual_seed(0)
    model = capture_sweep._build(config, "eager")
    built = sweep_inputs.build(model, config)
    assert not isinstance(built, str), built
    assert built.tried[-1].startswith("patch cubes"), built.tried
    pixels = built.inputs["pixel_values"]
    size = (config.temporal_patch_size, config.patch_size, config.patch_size, config.num_channels)
    assert tuple(pixels.shape[1:]) == size
    # one embedding per patch, at the text model's width
    assert tuple(built.output.last_hidden_state.shape) == (pixels.shape[0], 1, config.text_hidden_size)
    # a hierarchical MLP: nothing to capture, said as such
    assert capture_sweep.sweep_implementation(config, "eager")["status"] == "no attention"


def test_patch_cubes_are_offered_only_to_a_tower_without_a_grid(transformers) -> None:
    config = small_config(transformers, "inkling_vision")
    assert [label for label, *_ in sweep_images.patch_cube_plans(config, {"pixel_values": None})]
    assert not list(sweep_images.patch_cube_plans(config, {"pixel_values": None, "grid_thw": None}))
    assert not list(sweep_images.patch_cube_plans(config, {"pixel_values": None, "input_ids": None}))
    qwen = small_config(transformers, "qwen2_vl_vision")  # a temporal patch too, but given with its grid
    params = {"hidden_states": None, "grid_thw": None}
    assert not list(sweep_images.patch_cube_plans(qwen, params))
