"""The capture sweep on a latent-attention (MLA) family whose layers differ in size (issue 35,
N5f): Dots 3 Note's text model declares its sliding layers' heads and latent ranks per layer
(transformers' heterogeneous configs), and a global read of those sizes refuses
(``AmbiguousGlobalPerLayerAttributeError``). The shrink left the text model full width with its
rotary fraction of the full head (64 / 256) over a shrunk head, and the family was "not run" on
both implementations ("size of tensor a (32) must match the size of tensor b (8)"). Tiny configs,
nothing downloaded; the verdicts come from transformers' own modelling code."""

from __future__ import annotations

from typing import Any

import pytest

from attnviz.bench import capture_sweep

from . import sweep_support

#: family: (the verdict, the kinds of inputs it must say it ran on).
FAMILIES = {
    "dots3_note": ("exact", ("text", "image")),  # text and image through the per-layer text model
    "dots3_note_text": ("exact", ("text",)),  # the text model of its own
}


@pytest.fixture(scope="module")
def transformers() -> Any:
    return pytest.importorskip("transformers", reason="transformers is a test dependency (pip install .[test])")


def small_config(transformers: Any, family: str) -> Any:
    if family not in transformers.CONFIG_MAPPING:
        pytest.skip(f"transformers {transformers.__version__} has no {family}")
    return sweep_support.small_config(transformers, family)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_family_with_per_layer_latent_sizes_runs(transformers, family):
    status, kinds = FAMILIES[family]
    verdict = capture_sweep.sweep_implementation(small_config(transformers, family), "eager")
    assert verdict["status"] == status, verdict
    for kind in kinds:
        assert kind in verdict["inputs"], verdict
    assert verdict["unverified"] == 0 and verdict["calls"] >= 1


def test_per_layer_latent_sizes_shrink_with_the_rest(transformers):
    text = small_config(transformers, "dots3_note").text_config
    # every size reads globally again (no override refuses it) and is the small one
    assert not text.is_heterogeneous
    assert text.hidden_size == 64 and text.num_attention_heads == text.num_key_value_heads == 4
    assert text.kv_lora_rank == 16 and text.qk_nope_head_dim == 8 and text.qk_rope_head_dim == 8
    # the rotary tables (head_dim times each layer type's rotary fraction) are as wide as the
    # queries' rotary part
    for layer_type in set(text.layer_types):
        layer = text.per_layer_config[layer_type]
        rotary = int(layer.head_dim * text.rope_parameters[layer_type]["partial_rotary_factor"])
        assert rotary == layer.qk_rope_head_dim


def test_per_layer_sizes_outside_latent_attention_are_kept(transformers):
    # Gemma 4's full-attention layers have a head_dim of their own: not latent attention, left as
    # it was (its family runs with it)
    config = small_config(transformers, "gemma4_text")
    assert config.is_heterogeneous and "head_dim" in config.per_layer_attributes
