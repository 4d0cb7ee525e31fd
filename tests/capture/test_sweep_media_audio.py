"""The capture sweep on multimodal models that take audio features the sweep's first audio layouts
do not make (issue 35, ``sweep_media_audio``): they ran on text only. Configs repaired where the
shrinking (or the default config itself) leaves an encoder and the part reading its output at
different widths, and features made as the model reads them (stacked frames of bins, whole
chunks of frames, no frame mask where the mask is over projected features, speech alone to an
encoder-decoder). Each family runs transformers' own modelling code on a tiny config built here
(nothing downloaded) and is held to the sweep's verdict: its audio among the inputs."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest

from attnviz.bench import capture_sweep, sweep_media_audio

from . import sweep_support

#: family: the rule it stands for; each ran on text only before (its audio plans all refused).
FAMILIES = {
    "granite_speech": "a Q-Former over its encoder's width; frames in whole attention blocks; no frame mask",
    "granite_speech_plus": "the same, with the encoder's concatenated layers",
    "seamless_m4t": "features as wide as the projection reads (2 x 80 bins); speech alone to the decoder",
    "seamless_m4t_v2": "the same; its 24-layer speech encoder shrunk",
    "qwen3_asr": "frames a multiple of 2 * n_window; the tower's output as wide as the text model",
    "fun_asr_nano": "7 stacked frames of bins (input_size), with the frame mask it requires",
    "csm": "clips its codec encodes, as many audio tokens as the codec makes frames, with their cutoffs",
}


@pytest.fixture(scope="module")
def transformers() -> Any:
    return pytest.importorskip("transformers", reason="transformers is a test dependency (pip install .[test])")


def small_config(transformers: Any, family: str, repairs: tuple[Any, ...] | None = None) -> Any:
    return sweep_support.small_config(transformers, family, repairs, sweep_media_audio)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_family_runs_on_audio_and_every_call_is_exact(transformers, family):
    verdict = capture_sweep.sweep_implementation(small_config(transformers, family), "eager")
    assert verdict["status"] == "exact", verdict
    assert verdict["unverified"] == 0 and verdict["calls"] >= 1
    assert "audio" in verdict["inputs"], verdict  # the media path ran, not the text plan after it


def test_samples_with_the_padding_mask_the_forward_counts_audio_tokens_from(transformers):
    # VibeVoice: its tokenizers' convolution stages narrowed here (the sweep's config builds a
    # 1.2-billion-parameter model in a minute); the audio path is the same
    config = small_config(transformers, "vibevoice")
    for tower in (config.audio_config, config.semantic_model_config):
        tower.num_filters, tower.depths = 2, [1] * len(tower.depths)
    verdict = capture_sweep.sweep_implementation(config, "eager")
    assert verdict["status"] == "exact" and verdict["unverified"] == 0, verdict
    assert "audio" in verdict["inputs"], verdict


def test_without_its_repairs_the_audio_does_not_run(transformers):
    # a Q-Former reading 1408-wide keys from a 64-wide encoder; a 3584-wide tower for a 64-wide
    # text model: the audio plans are all refused and the text plan is kept
    for family in ("granite_speech", "qwen3_asr"):
        verdict = capture_sweep.sweep_implementation(small_config(transformers, family, repairs=()), "eager")
        assert "audio" not in verdict["inputs"], (family, verdict)


def test_each_repair_on_the_sizes_it_is_for(transformers):
    granite = small_config(transformers, "granite_speech")
    assert granite.projector_config.encoder_hidden_size == granite.encoder_config.hidden_dim
    asr = small_config(transformers, "qwen3_asr")
    assert asr.audio_config.output_dim == asr.text_config.hidden_size
    seamless = small_config(transformers, "seamless_m4t_v2")
    assert seamless.speech_encoder_layers == seamless.encoder_layers
    assert seamless.speech_encoder_attention_heads == seamless.encoder_attention_heads
    assert seamless.speech_encoder_intermediate_size == seamless.encoder_ffn_dim
    assert small_config(transformers, "seamless_m4t_v2", repairs=()).speech_encoder_layers > seamless.encoder_layers


def test_concatenated_encoder_layers_widen_what_the_projector_reads():
    tower = SimpleNamespace(hidden_size=64, cat_hidden_layers=[0, 1], to_dict=dict)
    projector = SimpleNamespace(encoder_hidden_size=1408, to_dict=dict)
    config = SimpleNamespace(encoder_config=tower, projector_config=projector)
    sweep_media_audio.projector_reads_encoder(config)
    assert projector.encoder_hidden_size == 64 * 3


def test_the_repairs_leave_families_they_are_not_for_as_they_were(transformers):
    # look-alikes: BLIP-2's Q-Former already reads its tower's width; Qwen2.5-Omni's and
    # Qwen2-Audio's towers already output the text width; SpeechT5's speech_ sizes have no
    # unprefixed twin; wav2vec2's output_dim is an inner width, not an audio_config's
    for family in ("blip-2", "qwen2_5_omni", "qwen2_audio", "speecht5", "wav2vec2", "whisper"):
        bare = small_config(transformers, family, repairs=())
        repaired = small_config(transformers, family)
        assert json.dumps(bare.to_dict(), sort_keys=True, default=str) == json.dumps(
            repaired.to_dict(), sort_keys=True, default=str
        ), family


def test_frames_fill_whole_chunks_and_attention_blocks():
    assert sweep_media_audio._frames([SimpleNamespace(n_window=50)]) == 100
    assert sweep_media_audio._frames([SimpleNamespace(context_size=200)]) == 200
    assert sweep_media_audio._frames([SimpleNamespace(n_window=3, context_size=4)]) == 12
    assert sweep_media_audio._frames([SimpleNamespace()]) == sweep_media_audio.FRAMES
    assert sweep_media_audio._frames([SimpleNamespace(context_size=5000)]) == sweep_media_audio.FRAMES


def test_feature_widths_put_stacked_frames_first():
    stacked = SimpleNamespace(num_mel_bins=80, input_size=560)
    assert sweep_media_audio._widths([stacked]) == [560, 80]
    assert sweep_media_audio._widths([SimpleNamespace(feature_projection_input_dim=160)]) == [160]
    # an input_size that is no multiple of the bins is some other size (an LSTM's, an image's)
    assert sweep_media_audio._widths([SimpleNamespace(num_mel_bins=80, input_size=100)]) == [80]
