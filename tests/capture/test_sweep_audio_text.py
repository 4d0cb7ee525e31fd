"""The capture sweep on audio and text families whose inputs or shrunk configs need more than
the usual plans (issue 35, ``sweep_audio_text``): audio codes per codebook, audio sized as the
model's refusal states it, concatenated features with lengths, bytes in patches, a decoder stack
run without a cache, and configs whose sizes the shrinking breaks (derived attention widths,
recurrent stacks, factored head sizes, hybrid indices). Each family runs transformers' own
modelling code on a tiny config built here (nothing downloaded) and is held to the sweep's verdict."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
import torch
from torch import nn

from attnviz.bench import capture_sweep, sweep_audio_text
from attnviz.capture import capture
from attnviz.capture.paths import softmax as softmax_path

from . import sweep_support

#: family: the kind of inputs its verdict must say it ran on (each stands for one rule).
FAMILIES = {
    "musicgen_decoder": "audio codes",  # ids (B * codebooks, L)
    "kyutai_speech_to_text": "audio codes",  # a text token and a code per codebook, (B, L, 1 + codebooks)
    "moshi_depth": "audio codes",  # a depth decoder's codebook steps with the main decoder's states
    "qwen3_asr_encoder": "audio",  # frames padded to the multiple its refusal names
    "gemma4_audio": "audio",  # mel bins read from its projection's refusal
    "wav2vec2-bert": "audio",  # feature width read from its layer norm's refusal
    "speecht5": "audio",  # the same from a waveform (B, T): (B, T', width), not a cut (B, width)
    "qwen2_5_omni_audio_encoder": "audio",  # features concatenated with their lengths
    "blt_local_decoder": "text",  # bytes in patches, with the global model's states per patch
    "pop2piano": "text",  # a decoder stack built as an encoder, run without a cache
    "zamba2": "text",  # attention and Mamba sizes derived again from the shrunk width
    "falcon_h1": "text",  # its Mamba mixer's width set apart (mamba_d_ssm), as heads x head size
    "hrm_text": "text",  # one layer per recurrent stack, a cache slot per run
    "paddleocr_vl_text": "text",  # M-RoPE sections its modelling code defaults to, scaled
    "deepseek_v2": "text",  # expert widths of rows a multiple of 16 bytes
}


@pytest.fixture(scope="module")
def transformers() -> Any:
    return pytest.importorskip("transformers", reason="transformers is a test dependency (pip install .[test])")


def small_config(transformers: Any, family: str, repairs: tuple[Any, ...] | None = None) -> Any:
    return sweep_support.small_config(transformers, family, repairs, sweep_audio_text)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_family_runs_on_inputs_made_for_it_and_every_call_is_exact(transformers, family):
    verdict = capture_sweep.sweep_implementation(small_config(transformers, family), "eager")
    assert verdict["status"] == "exact", verdict
    assert FAMILIES[family] in verdict["inputs"], verdict
    assert verdict["unverified"] == 0 and verdict["calls"] >= 1


def test_without_its_repairs_a_family_the_shrinking_breaks_does_not_run(transformers):
    # the same family, the same inputs, only this module's repairs left out: Zamba 2's 640-wide
    # Mamba heads on a 64-wide model
    verdict = capture_sweep.sweep_implementation(small_config(transformers, "zamba2", repairs=()), "eager")
    assert verdict["status"] == "not run", verdict


def test_the_repairs_leave_families_they_are_not_for_as_they_were(transformers):
    # families already captured exactly whose configs hold look-alike sizes: a pooler derived from
    # the width, Jamba's dt rank, OLMo-hybrid's linear heads, ConvNeXt's stage tuples, experts
    # of widths already a multiple of 4
    for family in ("jamba", "olmo_hybrid", "convnext", "segformer", "vit", "qwen3_moe", "granite_speech"):
        bare = small_config(transformers, family, repairs=())
        repaired = small_config(transformers, family)
        assert json.dumps(bare.to_dict(), sort_keys=True, default=str) == json.dumps(
            repaired.to_dict(), sort_keys=True, default=str
        ), family


def test_derived_sizes_and_hybrid_indices_follow_the_shrunk_width(transformers):
    config = small_config(transformers, "zamba2")
    assert config.attention_hidden_size == 2 * config.hidden_size
    assert config.mamba_headdim == config.mamba_expand * config.hidden_size // config.n_mamba_heads
    assert config.hybrid_layer_ids == [i for i, kind in enumerate(config.layers_block_type) if kind == "hybrid"]
    zamba = small_config(transformers, "zamba")  # its tied shared block needs two attention layers
    assert zamba.layers_block_type.count("hybrid") == 2 and zamba.num_hidden_layers == 3


def test_blt_is_small_enough_to_build_quickly(transformers):
    # 500002 hashed n-gram buckets per n-gram size made BLT's build outlast the time limit
    config = small_config(transformers, "blt")
    assert config.encoder_hash_byte_group_vocab <= 1000
    assert config.decoder_config.hidden_size_global == config.global_config.hidden_size


def _audio(frames: int, bins: int = 8) -> dict[str, Any]:
    return {"input_features": torch.zeros(2, bins, frames), "attention_mask": torch.ones(2, frames, dtype=torch.long)}


def test_a_length_is_padded_to_the_multiple_the_refusal_names():
    said = "Qwen3ASREncoder expects `padded_feature_length` to be a multiple of `n_window * 2` (100), but got 64."
    again = sweep_audio_text.retried(_audio(64), {}, said, SimpleNamespace())
    assert again is not None
    assert tuple(again["input_features"].shape) == (2, 8, 100)
    assert tuple(again["attention_mask"].shape) == (2, 100)
    said = "`input_values` length 4000 is not a multiple of 1920. Prepare the audio with the feature extractor."
    again = sweep_audio_text.retried({"input_values": torch.zeros(2, 4000)}, {}, said, SimpleNamespace())
    assert again is not None and tuple(again["input_values"].shape) == (2, 5760)


def test_a_width_is_read_from_the_layer_that_refused_it():
    said = "Given normalized_shape=[160], expected input with shape [*, 160], but got input of size[2, 8, 64]"
    again = sweep_audio_text.retried(_audio(64), {}, said, SimpleNamespace())
    assert again is not None and again["input_features"].shape[-1] == 160
    assert again["attention_mask"].shape[1] == again["input_features"].shape[1]  # the mask covers the frames
    # frames stacked by 8 into a projection of 1024 inputs: 128 bins
    said = "mat1 and mat2 shapes cannot be multiplied (32x640 and 1024x64)"
    again = sweep_audio_text.retried({"input_features": torch.zeros(2, 64, 80)}, {}, said, SimpleNamespace())
    assert again is not None and again["input_features"].shape[-1] == 128
    # a convolution of one channel over samples: a few hops of the config's ratios
    said = "Given groups=1, weight of size [32, 1, 7], expected input[2, 8, 70] to have 1 channels, but got 8"
    config = SimpleNamespace(channels=1, downsampling_ratios=[2, 5])
    again = sweep_audio_text.retried({"hidden_states": torch.zeros(2, 8, 64)}, {}, said, config)
    assert again is not None and tuple(again["hidden_states"].shape) == (2, 1, 40)


def test_refusals_it_does_not_know_are_left_alone():
    assert sweep_audio_text.retried(_audio(64), {}, "something else went wrong", SimpleNamespace()) is None
    assert sweep_audio_text.retried({"input_ids": torch.ones(2, 8, dtype=torch.long)}, {}, "boom", None) is None


def test_a_cache_refused_is_turned_off_once():
    said = "`use_cache` can only be set to `True` if Pop2PianoStack(...) is used as a decoder"
    inputs = {"input_ids": torch.ones(2, 8, dtype=torch.long)}
    again = sweep_audio_text.retried(inputs, {"use_cache": None}, said, None)
    assert again is not None and again["use_cache"] is False
    assert sweep_audio_text.retried(again, {"use_cache": None}, said, None) is None


def test_ids_are_folded_below_the_smallest_vocabulary():
    config = SimpleNamespace(vocab_size=1000, model_type="x", text_config=None)
    part = SimpleNamespace(vocab_size=78, model_type="phonemes", to_dict=dict)
    config.text_config = part
    config.to_dict = dict
    inputs = {"input_ids": torch.arange(900, 916).reshape(2, 8)}
    again = sweep_audio_text.retried(inputs, {}, "IndexError: index out of range in self", config)
    assert again is not None and int(again["input_ids"].max()) < 78 and int(again["input_ids"].min()) >= 3


class _NextToken(nn.Module):
    """A language model's head and the entropy of its next-token distribution (BLT's patcher)."""

    def __init__(self) -> None:
        super().__init__()
        self.config = SimpleNamespace(vocab_size=10)
        self.embed = nn.Linear(4, 4)
        self.lm_head = nn.Linear(4, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        probabilities = self.lm_head(self.embed(x)).softmax(dim=-1)
        return -(probabilities * probabilities.log()).sum(-1)


class _OwnAttention(nn.Module):
    """Attention code of its own whose keys are as many as the vocabulary is long (its weights
    are 4-D, heads apart: a next-token distribution is (batch, length, vocabulary))."""

    def __init__(self) -> None:
        super().__init__()
        self.config = SimpleNamespace(vocab_size=10)
        self.lm_head = nn.Linear(4, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q = x.view(1, 1, 10, 4)
        weights = (q @ q.transpose(-1, -2)).softmax(dim=-1)  # (1, 1, 10, 10): 10 keys
        return weights @ q


def test_a_softmax_over_the_vocabulary_is_not_recorded_as_attention():
    model = _NextToken()
    with torch.no_grad(), capture(model) as cap:
        model(torch.randn(2, 5, 4))
    assert cap.calls == []
    assert softmax_path.over_vocabulary(model, torch.zeros(2, 5, 10))


def test_attention_of_its_own_is_still_recorded_whatever_its_key_count():
    model = _OwnAttention()
    with torch.no_grad(), capture(model) as cap:
        model(torch.randn(10, 4))
    assert len(cap.calls) == 1


class _VisualTokenizer(nn.Module):
    """Ovis2's visual tokenizer: a head over the visual vocabulary less its indicator tokens, whose
    softmax gives each patch's visual-word probabilities."""

    def __init__(self) -> None:
        super().__init__()
        self.config = SimpleNamespace(vocab_size=12, num_visual_indicator_tokens=2)
        self.head_linear = nn.Linear(4, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head_linear(x).softmax(dim=-1)


def test_a_softmax_over_a_visual_vocabulary_less_its_indicators_is_not_attention():
    model = _VisualTokenizer()
    with torch.no_grad(), capture(model) as cap:
        model(torch.randn(2, 5, 4))
    assert cap.calls == []
    # without indicator tokens to leave out, 10 of 12 is no vocabulary: a call as before
    model.config.num_visual_indicator_tokens = 0
    with torch.no_grad(), capture(model) as cap:
        model(torch.randn(2, 5, 4))
    assert len(cap.calls) == 1
