"""The capture sweep on audio, codec and named-input families the other sweep modules leave
unbuilt or unrun (issue 35, ``sweep_audio_more``): configs the shrinking breaks (convolution
groups, a quantizer over two joined widths, key heads a config or its rotary ties to the head
count, sizes its validation ties, attributes a config class omits) and inputs made by what a
forward's parameters mean (embeddings by a name of their own, a flow decoder's inputs, cameras
with their mask, a drafter's shared keys and values, a conditioning its layers take through
``**kwargs``). Each family runs transformers' own modelling code on a tiny config built here
(nothing downloaded) and is held to the sweep's verdict."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
import torch
from torch import nn

from attnviz.bench import capture_sweep, sweep_audio_more

from . import sweep_support

#: family: (implementation, the kind of inputs its verdict must say it ran on): each stands for
#: one rule, and each was "not run" or "not offered" before it.
FAMILIES = {
    "mimi_decoder": ("eager", "named"),  # upsampling groups the shrunk width divides
    "neucodec": ("eager", "audio"),  # a quantizer over two joined widths; rotary over heads
    "dots3_note_audio_encoder": ("eager", "audio"),  # key heads its class ties; sizes its validation ties
    "moonshine_streaming": ("eager", "audio"),  # num_key_value_heads its class omits, set at the build
    "qwen3_omni_moe_talker_text": ("eager", "text"),  # an omitted expert width; embeddings for no id table
    "qwen2_5_omni_dit": ("sdpa", "audio codes"),  # a flow step's named inputs (its eager path is missing)
    "pi0": ("eager", "image"),  # one camera's image with its mask; action embeddings by name
    "voxtral_realtime_text": ("eager", "text"),  # a conditioning its layers take through **kwargs
    "gemma4_unified_assistant": ("eager", "states"),  # the main model's keys and values per layer type
    "esmfold2": ("sdpa", "structure"),  # reference atoms from the bundle's docstring; a head for its rotary pairs
}


@pytest.fixture(scope="module")
def transformers() -> Any:
    return pytest.importorskip("transformers", reason="transformers is a test dependency (pip install .[test])")


def small_config(transformers: Any, family: str, repairs: tuple[Any, ...] | None = None) -> Any:
    return sweep_support.small_config(transformers, family, repairs, sweep_audio_more)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_family_runs_on_inputs_made_for_it_and_every_call_is_exact(transformers, family):
    implementation, kind = FAMILIES[family]
    verdict = capture_sweep.sweep_implementation(small_config(transformers, family), implementation)
    assert verdict["status"] in ("exact", "no attention"), verdict
    if verdict["status"] == "exact":
        assert verdict["unverified"] == 0 and verdict["calls"] >= 1
    assert kind in verdict["inputs"], verdict


def test_without_its_repairs_a_codec_the_shrinking_breaks_does_not_build(transformers):
    # the same family, only this module's repairs left out: 512 upsampling groups on 64 channels
    verdict = capture_sweep.sweep_implementation(small_config(transformers, "mimi_decoder", repairs=()), "eager")
    assert verdict["status"] == "not offered" and "divisible by groups" in verdict["why"], verdict


def test_the_repairs_leave_families_they_are_not_for_as_they_were(transformers):
    # look-alikes: MiniMax's ALiBi slopes count heads (not positions), Mask2Former's MLP width
    # equals two widths summed, CLAP's and VibeVoice's __post_init__ set sizes other than key heads,
    # wav2vec2's positional convolution groups divide the width already
    for family in ("minimax", "mask2former", "clap", "vibevoice", "wav2vec2", "llama", "qwen2_vl"):
        bare = small_config(transformers, family, repairs=())
        repaired = small_config(transformers, family)
        assert json.dumps(bare.to_dict(), sort_keys=True, default=str) == json.dumps(
            repaired.to_dict(), sort_keys=True, default=str
        ), family


def test_each_repair_on_the_sizes_it_is_for(transformers):
    groups = SimpleNamespace(hidden_size=64, upsample_groups=512, num_groups=3, conv_groups=16)
    sweep_audio_more.divisible_groups(groups)
    assert groups.upsample_groups == 64 and groups.conv_groups == 16 and groups.num_groups == 3
    codec = small_config(transformers, "neucodec")
    assert codec.quantization_dim == codec.hidden_size + codec.semantic_model_config.hidden_size
    assert codec.num_key_value_heads == codec.num_attention_heads
    atoms = small_config(transformers, "esmfold2").atom_encoder
    pairs = 3 * atoms.num_spatial_rope_pairs_per_axis + atoms.num_uid_rope_pairs
    assert atoms.head_dim // 2 >= pairs
    dots = small_config(transformers, "dots3_note_audio_encoder")
    assert dots.adapter_input_size == dots.hidden_size and dots.num_key_value_heads == dots.num_attention_heads


def test_an_attribute_a_config_class_omits_is_set_where_the_build_asks():
    class TalkerConfig(SimpleNamespace):
        pass

    config = TalkerConfig(hidden_size=64, moe_intermediate_size=32, to_dict=dict, model_type="talker")
    built: list[int] = []

    def build(c: Any, implementation: str) -> str:
        if getattr(c, "shared_expert_intermediate_size", None) is None:
            raise AttributeError("'TalkerConfig' object has no attribute 'shared_expert_intermediate_size'")
        built.append(c.shared_expert_intermediate_size)
        return "model"

    assert sweep_audio_more.build_reading_unset(build, config, "eager") == "model"
    assert built == [32]

    def other(c: Any, implementation: str) -> str:
        raise AttributeError("'TalkerConfig' object has no attribute 'something_else'")

    with pytest.raises(AttributeError, match="something_else"):  # a name it knows no meaning for
        sweep_audio_more.build_reading_unset(other, config, "eager")


class _Layer(nn.Module):
    def forward(
        self, hidden_states: torch.Tensor, t_cond: torch.Tensor | None = None, attention_mask: Any = None
    ) -> torch.Tensor:
        return hidden_states * (1 + t_cond)  # type: ignore[operator] - None fails, as a model's would


class _Decoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList([_Layer()])

    def forward(self, input_ids: torch.Tensor, **kwargs: Any) -> torch.Tensor:
        hidden = torch.zeros(*input_ids.shape, 8)
        for layer in self.layers:
            hidden = layer(hidden, **kwargs)
        return hidden


def test_a_conditioning_layers_take_through_kwargs_is_made_where_one_meets_none():
    model = _Decoder()
    import inspect

    params = inspect.signature(model.forward).parameters
    inputs = {"input_ids": torch.ones(2, 4, dtype=torch.long)}
    said = "unsupported operand type(s) for +: 'int' and 'NoneType'"
    again = sweep_audio_more.retried(inputs, params, said, SimpleNamespace(hidden_size=8), model)
    assert again is not None and tuple(again["t_cond"].shape) == (2, 1, 8)
    model(**again)  # it runs now
    assert sweep_audio_more.retried(inputs, params, "something else", SimpleNamespace(hidden_size=8), model) is None


def test_embeddings_are_made_where_the_id_table_is_missing():
    inputs = {"input_ids": torch.ones(2, 4, dtype=torch.long), "attention_mask": torch.ones(2, 4)}
    said = "'TalkerModel' object has no attribute 'embed_tokens'"
    params = {"input_ids": None, "inputs_embeds": None, "attention_mask": None}
    again = sweep_audio_more.retried(inputs, params, said, SimpleNamespace(hidden_size=16))
    assert again is not None and "input_ids" not in again
    assert tuple(again["inputs_embeds"].shape) == (2, 4, 16)


def test_a_model_without_an_eager_path_says_so_on_eager(transformers):
    verdict = capture_sweep.sweep_implementation(small_config(transformers, "qwen2_5_omni_dit"), "eager")
    assert verdict["status"] == "not run" and "no eager path" in verdict["why"], verdict
    assert sweep_audio_more.stated(["text: TypeError: missing 4 required positional arguments"]) is None
