"""The capture sweep on families whose forward requires inputs by name beyond ids, pixels and audio
(issue 35, N35a): each rule of ``sweep_named`` on one family whose own modelling code
(transformers', on a tiny config built here, nothing downloaded) did not run before it:
inputs sized by the docstring's shape line (SAM 3's parts fed their sibling's features), patches
with their positions (Gemma 4's tower), retries as a refusal asks (X-MOD's language, ViLT's
pixels, UDOP's boxes, Qwen3-Omni's embeddings, a width the weights ask for), a vocoder's
spectrogram, a stated reason for a video tracker's session."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
import torch

from attnviz.bench import capture_sweep, sweep_inputs, sweep_named

from .sweep_support import small_config

#: family: the inputs its forward required that the sweep made for it (by rule).
FAMILIES = {
    "sam3_detr_encoder": "vision_features",  # a list of feature maps and their positions
    "sam3_detr_decoder": "vision_pos_encoding",  # the docstring's [batch_size, height*width, hidden_size]
    "sam3_mask_decoder": "prompt_features",  # levels finest first; the prompt it cross-attends to
    "gemma4_vision": "pixel_position_ids",  # patches with their (x, y)
    "xmod": "lang_ids",  # "Input language unknown": the first language per token
    "vilt": "pixel_values",  # "specify either pixel_values or image_embeds": the first named
    "udop": "bbox",  # integer boxes cannot be averaged: boxes as fractions
    "qwen3_omni_moe_talker_code_predictor": "inputs_embeds",  # "`input_ids` is expected to be `None`"
    "muse_glimmer_assistant": "context_hidden_states",  # the width the layer's weights ask for
}


@pytest.fixture(scope="module")
def transformers() -> Any:
    return pytest.importorskip("transformers", reason="transformers is a test dependency (pip install .[test])")


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_family_runs_on_inputs_made_by_name_and_every_call_is_exact(transformers, family, monkeypatch):
    made: list[Any] = []
    build = sweep_inputs.build
    monkeypatch.setattr(sweep_inputs, "build", lambda model, config: made.append(build(model, config)) or made[-1])
    verdict = capture_sweep.sweep_implementation(small_config(transformers, family), "eager")
    assert verdict["status"] == "exact", verdict
    assert made[-1].inputs.get(FAMILIES[family]) is not None, sorted(made[-1].inputs)
    assert verdict["unverified"] == 0 and verdict["calls"] >= 1


def test_a_vocoder_runs_on_a_spectrogram_and_is_said_to_have_no_attention(transformers):
    verdict = capture_sweep.sweep_implementation(small_config(transformers, "speecht5_hifigan"), "eager")
    assert verdict["status"] == "no attention", verdict
    assert verdict["inputs"] == ["audio"]


def test_the_docstrings_shape_lines_are_read_in_both_formats(transformers):
    from transformers.models.neucodec import modeling_neucodec

    from attnviz.bench import sweep_models

    codec = sweep_named.doc_shapes(modeling_neucodec.NeuCodecModel.forward)
    assert codec["input_values"][1] == ["batch_size", "1", "sequence_length"]
    assert codec["input_features"][1] == ["batch_size", "mel_bins", "time_steps"]
    # the class as the sweep finds it: read from ``modeling_sam3`` by name, it is transformers'
    # placeholder until a SAM 3 model was built (torchvision missing), and the test depended on
    # running after the family tests in one worker
    sam3 = sweep_models.model_class(transformers.CONFIG_MAPPING["sam3_detr_decoder"]())
    assert sam3.__name__ == "Sam3DetrDecoder"
    decoder = sweep_named.doc_shapes(sam3.forward)
    assert decoder["vision_features"][1] == ["batch_size", "height*width", "hidden_size"]


def test_a_dimension_is_sized_by_the_input_beside_it_then_by_the_config():
    config = type("Config", (), {"hidden_size": 24, "n_docs": 3, "to_dict": None})()
    shapes = {"features": ("torch.Tensor", ["batch_size", "time_steps", "hidden_size"])}
    sizes = sweep_named.Sizes(config, shapes, {"features": torch.zeros(2, 7, 24)})
    assert sizes.size("time_steps", "other") == 7  # bound by the features made
    assert sizes.size("hidden_size", "other") == 24
    assert sizes.size("batch_size * config.n_docs", "context_input_ids") == 2 * 3
    assert sizes.size("sequence_length", "other") == sweep_named.LENGTH


def test_a_required_input_that_may_be_none_is_none_and_a_count_is_a_count():
    def forward(inputs_embeds: torch.Tensor, num_patches: int, mask: torch.Tensor | None) -> None: ...

    params = inspect.signature(forward).parameters
    model = type("Model", (), {"forward": staticmethod(forward)})()
    made = sweep_named.fill(model, object(), params, {"inputs_embeds": torch.zeros(2, 10, 4)})
    assert made["mask"] is None
    assert made["num_patches"] == 5  # the leading half of the sequence


def test_a_forward_that_reads_the_first_of_each_input_is_given_a_batch_axis_of_one():
    inputs = {"input_ids": torch.ones(2, 8, dtype=torch.long), "marks": torch.tensor([1, 2])}
    again = sweep_named.retried(inputs, {}, "IndexError: too many indices for tensor of dimension 0", object())
    assert again is not None and again["marks"].shape == (1, 2)
    assert again["input_ids"].shape == (2, 8)


def test_a_refusal_the_sweep_does_not_know_is_not_retried():
    assert sweep_named.retried({"input_ids": torch.ones(2, 8)}, {}, "something else entirely", object()) is None


def test_a_heads_width_follows_its_text_models_when_shrunk(transformers):
    config = small_config(transformers, "jev")  # 4096 beside 4096 by default; the head was left at 4096
    assert config.hidden_size == config.text_config.hidden_size < 4096


def test_a_video_trackers_session_is_the_stated_reason_it_does_not_run(transformers):
    params = inspect.signature(transformers.Sam2VideoModel.forward).parameters
    said = sweep_named.reason(params)
    assert said is not None and "inference session" in said and "\n" not in said
    assert sweep_named.reason(inspect.signature(transformers.BertModel.forward).parameters) is None
