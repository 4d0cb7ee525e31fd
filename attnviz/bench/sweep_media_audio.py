"""Audio inputs for the multimodal models the sweep's first audio layouts leave on text only
(issue 35), each a rule read from the config or the forward signature, not a family's name:

* a config repair (``REPAIRS``): a cross-attending projector (a Q-Former's ``encoder_hidden_size``)
  reads the width its sibling audio or speech encoder outputs (Granite Speech's default config
  pairs a 1024-wide encoder with a 1408-wide Q-Former, which no checkpoint does);
* plans (``plans``, tried after ``sweep_inputs.audio_layouts``): features as wide as the model's
  first projection reads them, several frames of mel bins stacked (SeamlessM4T's
  ``feature_projection_input_dim``, 2 x 80; Fun-ASR-Nano's ``input_size``, 7 x 80), as many
  frames as a chunked encoder's window takes (Qwen3-ASR's ``n_window``: a multiple of
  ``2 * n_window``); with the per-frame mask, then without it (an optional mask over the
  projected features, not the frames: Granite Speech's ``input_features_mask``); and, for an
  encoder-decoder that reads either text or speech through its encoder (SeamlessM4T's), the
  features alone with their frame mask and the decoder's text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from attnviz.bench.sweep_configs import is_int, put, read

Plan = tuple[str, list[str], Callable[[], dict[str, Any]]]
#: ``sweep_inputs.plans``' maker of text around media: (label, kind, media, method) -> make.
WithText = Callable[[str, str, dict[str, Any], str], Callable[[], dict[str, Any]]]

BATCH = 2
#: Frames of features made where no window says otherwise.
FRAMES = 64
#: Sub-configs that hold an audio or speech encoder, whose output a projector reads.
_TOWERS = ("audio_config", "encoder_config", "speech_config", "audio_encoder_config")
#: Widths a model's first projection reads features at, several frames of bins stacked.
_STACKED = ("feature_projection_input_dim", "input_size", "input_feat_size")
_BINS = ("num_mel_bins", "feature_size", "n_mels", "input_dim")
_MASKS = ("input_features_mask", "feature_attention_mask", "audio_attention_mask")


def _int(value: Any) -> int | None:
    return int(value) if is_int(value) and value > 0 else None


# ----------------------------------------------------------------------------- config repair


def projector_reads_encoder(config: Any) -> None:
    """A projector that cross-attends to an audio encoder's output (``encoder_hidden_size``, a
    Q-Former's keys and values) as wide as that encoder outputs: its ``hidden_size`` (read
    through the config's own names: Granite Speech's ``hidden_dim``), times the layers it
    concatenates (Granite Speech Plus's ``cat_hidden_layers``). Only where the two disagree."""
    towers = [t for n in _TOWERS if (t := read(config, n)) is not None and hasattr(t, "to_dict")]
    if len(towers) != 1:  # one encoder to read from, or no rule
        return
    tower = towers[0]
    width = _int(read(tower, "hidden_size"))
    if width is None:
        return
    layers = read(tower, "cat_hidden_layers")
    width *= len(layers) + 1 if isinstance(layers, (list, tuple)) else 1
    for sub in list(vars(config).values()):
        if sub is tower or not hasattr(sub, "to_dict"):
            continue
        reads = _int(read(sub, "encoder_hidden_size"))
        if reads is not None and reads != width:
            put(sub, "encoder_hidden_size", width)


def tower_outputs_text_width(config: Any) -> None:
    """An ``audio_config`` tower's ``output_dim`` is the width its projector hands the language
    model as embeddings (Qwen2-Audio-like towers: Qwen2.5-Omni's, Qwen3-Omni's, Qwen3-ASR's): the
    text model's width. Qwen3-ASR's default config pairs a 3584-wide output with a 2048-wide text
    model (no checkpoint does), so the shrinking, which follows equal widths, leaves it at 3584.
    Only the ``audio_config`` name: an encoder's ``output_dim`` elsewhere is an inner width
    (Granite Speech's conformer's, 42; wav2vec2's)."""
    text = read(config, "text_config")
    tower = read(config, "audio_config")
    width = _int(read(text, "hidden_size")) if text is not None else None
    if width is None or tower is None or not hasattr(tower, "to_dict"):
        return
    if _int(read(tower, "output_dim")) not in (None, width):
        put(tower, "output_dim", width)


def speech_part_sizes(config: Any) -> None:
    """A speech or audio part's sizes named with its part's prefix in the model's own config
    (SeamlessM4T's ``speech_encoder_layers``, ``..._attention_heads``, ``..._intermediate_size``:
    24 layers, 16 heads, 4096 wide), which the shrinking does not know: no larger than the
    shrunk size of the same name without the prefix (``encoder_layers``; a width's
    ``encoder_ffn_dim``). A 24-layer speech encoder makes a capture that takes minutes to open."""
    for name in list(vars(config)):
        prefix = next((p for p in ("speech_", "audio_") if name.startswith(p)), None)
        value = _int(read(config, name))
        if prefix is None or value is None:
            continue
        rest = name[len(prefix) :]
        for sibling in (rest, rest.replace("intermediate_size", "ffn_dim")):
            small = _int(read(config, sibling)) if sibling != name else None
            if small is not None and small < value:
                put(config, name, small)
                break


#: This module's repairs, run by ``sweep_repairs.repair`` on every config and sub-config.
REPAIRS = (projector_reads_encoder, tower_outputs_text_width, speech_part_sizes)


# ----------------------------------------------------------------------------- plans


def _widths(configs: list[Any]) -> list[int]:
    """Feature widths worth trying, most likely first: a stacked width (a multiple of at least
    two of the bins the config names), then the bins."""
    from attnviz.bench.sweep_inputs import first

    bins = _int(first(configs, _BINS))
    # the projection's own input width says itself; another name only as a multiple of the bins
    named = [w for c in configs if (w := _int(read(c, "feature_projection_input_dim"))) is not None]
    stacked = [
        w
        for c in configs
        for n in _STACKED[1:]
        if bins is not None and (w := _int(read(c, n))) is not None and w % bins == 0 and w // bins >= 2
    ]
    return list(dict.fromkeys([*named, *stacked, *([bins] if bins is not None else [])]))


def _frames(configs: list[Any]) -> int:
    """Frames an encoder takes in whole chunks: a multiple of its chunk (Qwen3-ASR's
    ``2 * n_window``, which it requires) and of the block its attention runs in (Granite
    Speech's conformer's ``context_size``: a shorter input is padded to the block, and the padded
    rows attend to no key)."""
    import math

    from attnviz.bench.sweep_inputs import first

    window = _int(first(configs, ("n_window",)))
    chunks = [c for c in (2 * window if window else None, _int(first(configs, ("context_size",)))) if c]
    frames = math.lcm(*chunks) if chunks else FRAMES
    return frames if frames <= 1000 else FRAMES


#: Samples per clip a codec encodes (two 1920-sample frames of Mimi's at 24 kHz).
SAMPLES = 3840


def codec_plans(model: Any, config: Any, params: Any) -> Iterator[Plan]:
    """Speech a model encodes with its own codec into the text's audio tokens (CSM: one clip per
    row, ``input_values`` (B, 1, T), its end in ``input_values_cutoffs``): as many audio tokens
    as the codec makes frames of a clip (its own ``get_audio_codes_mask``), then the audio's end
    token. The cutoffs name this recipe: nothing else says the tokens are the codec's frames."""
    import torch

    from attnviz.bench.sweep_inputs import _placeholder, _token, sub_configs, text_with_media

    codec = getattr(getattr(model, "model", model), "codec_model", None) or getattr(model, "codec_model", None)
    token = _placeholder(config, "audio")
    if not {"input_ids", "input_values", "input_values_cutoffs"} <= set(params) or token is None:
        return
    count = getattr(codec, "get_audio_codes_mask", None)
    if not callable(count):
        return
    end = _token(sub_configs(config), ("audio_eos_token_id",))

    def make() -> dict[str, Any]:
        with torch.no_grad():
            frames = int(count(torch.ones(1, SAMPLES, dtype=torch.long)).sum())
        g = torch.Generator().manual_seed(0)
        blocks = [("audio", token, frames)] + ([("audio", end, 1)] if end is not None else [])
        text = text_with_media(config, params, blocks, g)
        samples = torch.randn(BATCH, 1, SAMPLES, generator=g)
        return {**text, "input_values": samples, "input_values_cutoffs": torch.tensor([[SAMPLES]] * BATCH)}

    yield "audio: samples (B, 1, T) its codec encodes, with their cutoffs", ["text", "audio"], make


def padded_sample_plans(config: Any, params: Any, with_text: WithText) -> Iterator[Plan]:
    """Samples with the padding mask their forward counts audio tokens from (VibeVoice:
    ``padding_mask.sum() / hop_length`` tokens; no mask, no count): (B, 1, T) mono clips, then
    (B, T), all kept, two hops long where the config names its hop."""
    import torch

    from attnviz.bench.sweep_inputs import _media_config, first

    if not {"input_values", "padding_mask"} <= set(params):
        return
    hop = _int(first(_media_config(config, _TOWERS), ("hop_length",)))
    samples = 2 * hop if hop is not None and hop <= 10000 else 4000
    text = "input_ids" in params
    g = torch.Generator().manual_seed(0)
    clips = torch.randn(BATCH, 1, samples, generator=g)
    kept = torch.ones(BATCH, samples, dtype=torch.bool)
    for label, values in (("(B, 1, T)", clips), ("(B, T)", clips[:, 0])):
        label = f"audio: samples {label} with their padding mask"
        media = {"input_values": values, "padding_mask": kept}
        yield label, (["text", "audio"] if text else ["audio"]), with_text(label, "audio", media, "get_audio_features")


def plans(model: Any, config: Any, params: Any, with_text: WithText) -> Iterator[Plan]:
    """Audio features for ``model`` as ``projector_reads_encoder``'s module docstring says, each
    (label, kinds, make); none where the forward takes no ``input_features``."""
    import torch

    from attnviz.bench.sweep_inputs import _media_config, _text_ids, _vocab

    yield from codec_plans(model, config, params)
    yield from padded_sample_plans(config, params, with_text)
    if "input_features" not in params:
        return
    configs = _media_config(config, _TOWERS)
    frames = _frames(configs)
    mask_name = next((n for n in _MASKS if n in params), None)
    text = "input_ids" in params
    for width in _widths(configs):
        for label, shape in (
            ("(B, frames, width)", (BATCH, frames, width)),
            ("(B, width, frames)", (BATCH, width, frames)),
        ):
            g = torch.Generator().manual_seed(0)
            features = torch.randn(*shape, generator=g)
            label = f"audio: features {label}, width {width}, {frames} frames"
            masked = {"input_features": features}
            if mask_name is not None:
                masked[mask_name] = torch.ones(BATCH, frames, dtype=torch.long)
                kinds = ["text", "audio"] if text else ["audio"]
                yield f"{label}, frame mask", kinds, with_text(label, "audio", masked, "get_audio_features")
            yield (
                label,
                (["text", "audio"] if text else ["audio"]),
                with_text(label, "audio", {"input_features": features}, "get_audio_features"),
            )
            if text and "decoder_input_ids" in params and getattr(config, "is_encoder_decoder", False):

                def speech(features: Any = features) -> dict[str, Any]:
                    g = torch.Generator().manual_seed(1)
                    out = {"input_features": features, "decoder_input_ids": _text_ids(config, _vocab(config), 5, g)}
                    if "attention_mask" in params:
                        out["attention_mask"] = torch.ones(BATCH, frames, dtype=torch.long)
                    return out

                yield f"{label}, speech alone to the decoder", ["audio", "text"], speech
