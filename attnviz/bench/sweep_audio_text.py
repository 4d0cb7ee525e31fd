"""Inputs for audio and text models the usual plans cannot feed (``sweep_inputs.plans``), made
from the config and the model's own refusals alone (no processor, no download):

* audio sized as the model's refusal states it: a feature width its first layer names
  (``normalized_shape=[160]``, a projection ``320 x 64``, a convolution's channels), a length
  padded to the multiple it names (a hop of 1920 samples, chunks of ``n_window * 2`` frames);
* audio codes: token ids per codebook, (B * codebooks, L), (B, codebooks, L) or (B, L, codebooks)
  (MusicGen's decoder, Dia's, Kyutai's text-and-audio rows), and a depth decoder's codebook
  steps with the main decoder's states (Moshi's);
* concatenated features with their lengths (the Omni audio encoders: (bins, frames of every
  item), ``feature_lens``);
* a decoder stack built as an encoder (Pop2Piano's) run without a cache, as its refusal asks.

``late_plans`` are tried after the text plan (a text model that runs on plain ids keeps them);
``retried`` is asked after ``sweep_plans.retried``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from typing import Any

from attnviz.bench.sweep_configs import modelling_source
from attnviz.bench.sweep_configs import put as _put
from attnviz.bench.sweep_configs import read as _read
from attnviz.bench.sweep_inputs import BATCH, first, sub_configs

Plan = tuple[str, list[str], Callable[[], dict[str, Any]]]

#: Length (steps, frames) of the sequences made here.
LENGTH = 8
#: Inputs that hold audio, in the order a refusal is applied to them.
AUDIO_INPUTS = ("input_features", "input_values", "hidden_states", "audio_mel")
_CODEBOOKS = ("num_codebooks", "num_channels", "codebooks", "n_q")
_CODE_VOCAB = ("codebook_vocab_size", "audio_vocab_size", "codebook_size", "vocab_size")
_MASKS = ("attention_mask", "input_features_mask", "feature_attention_mask", "padding_mask")


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


# ----------------------------------------------------------------------------- audio codes


def codebooks(config: Any) -> int | None:
    """How many codebooks a decoder's ids carry per step, where its config says (at most 64:
    a larger ``num_channels`` is an image's or a signal's)."""
    count = _int(first(sub_configs(config), _CODEBOOKS))
    return count if count is not None and count <= 64 else None


def _code_vocab(config: Any) -> int:
    """The smallest vocabulary any of the config's codebook or text vocabularies names: ids below
    it are valid in each (Kyutai's rows hold a text token and one code per codebook)."""
    sizes = [_int(first([c], (name,))) for c in sub_configs(config) for name in _CODE_VOCAB]
    return min([s for s in sizes if s is not None] or [1000])


def _codes(config: Any, shape: tuple[int, ...], generator: Any) -> Any:
    import torch

    top = max(4, min(_code_vocab(config), 1000))
    return torch.randint(3, top, shape, generator=generator)


def codebook_plans(config: Any, params: Any) -> Iterator[Plan]:
    """Ids of audio codes in each layout a codebook decoder takes them, with a text row first
    where its config has a text vocabulary too (Kyutai's (B, L, 1 + codebooks)). An
    encoder-decoder (Dia) reads text in its encoder and codes in its decoder."""
    import torch

    count = codebooks(config)
    if count is None or "input_ids" not in params:
        return
    name = "decoder_input_ids" if "decoder_input_ids" in params else "input_ids"
    cross = _int(first([config], ("cross_hidden_size", "encoder_hidden_size")))
    layouts = {
        "(B * codebooks, L)": (BATCH * count, LENGTH),
        "(B, L, codebooks)": (BATCH, LENGTH, count),
        "(B, L, 1 + codebooks)": (BATCH, LENGTH, 1 + count),
        "(B, codebooks, L)": (BATCH, count, LENGTH),
    }

    def make(shape: tuple[int, ...]) -> Callable[[], dict[str, Any]]:
        def inputs() -> dict[str, Any]:
            g = torch.Generator().manual_seed(0)
            out: dict[str, Any] = {name: _codes(config, shape, g)}
            if name == "decoder_input_ids":
                out["input_ids"] = _codes(config, (BATCH, LENGTH), g)
            elif "encoder_hidden_states" in params and cross is not None:  # a decoder of its own (Dia's)
                out["encoder_hidden_states"] = torch.randn(BATCH, LENGTH, cross, generator=g)
            return out

        return inputs

    for label, shape in layouts.items():
        yield f"audio codes {label}", ["audio codes"], make(shape)


def depth_plans(config: Any, params: Any) -> Iterator[Plan]:
    """A depth decoder (Moshi's) predicts one step's codebooks from the main decoder's last
    states: a text token then codes, one per codebook, with a state of ``input_size`` each."""
    import torch

    count = codebooks(config)
    if count is None or not {"input_ids", "last_hidden_state"} <= set(params):
        return
    width = _int(first([config], ("input_size", "hidden_size"))) or 64
    steps = min(count, LENGTH)

    def make() -> dict[str, Any]:
        g = torch.Generator().manual_seed(0)
        states = torch.randn(BATCH, steps, width, generator=g)
        return {"input_ids": _codes(config, (BATCH, steps), g), "last_hidden_state": states}

    yield "codebook steps with states", ["audio codes"], make


# ----------------------------------------------------------------------------- audio with lengths


def concatenated_plans(config: Any, params: Any) -> Iterator[Plan]:
    """An audio encoder that takes every item's features concatenated along time, with each
    item's frame count (Qwen2.5-Omni's and Qwen3-Omni's: (bins, frames of every item),
    ``feature_lens``): each item one chunk of ``n_window * 2`` frames, where the config says."""
    import torch

    if not {"input_features", "feature_lens"} <= set(params):
        return
    configs = sub_configs(config)
    bins = _int(first(configs, ("num_mel_bins", "feature_size", "n_mels"))) or 80
    window = _int(first(configs, ("n_window",)))
    frames = 2 * window if window is not None and window <= 200 else 64
    g = torch.Generator().manual_seed(0)
    features = torch.randn(bins, BATCH * frames, generator=g)
    lens = torch.tensor([frames] * BATCH)
    yield (
        "features concatenated (bins, frames) with lengths",
        ["audio"],
        lambda: {
            "input_features": features,
            "feature_lens": lens,
        },
    )


def patch_plans(config: Any, params: Any) -> Iterator[Plan]:
    """A byte model's local encoder or decoder swept alone (BLT's): the bytes cut into patches of
    ``patch_size`` (4 where the config has none), the encoder given each byte's patch and the
    patch count, the decoder the bytes' states and one state per patch from the global model
    (``hidden_size_global`` wide)."""
    import torch

    if "input_ids" not in params or not ({"patch_ids", "patch_embeds"} & set(params)):
        return
    size = _int(first([config], ("patch_size",))) or 4
    patches = max(1, LENGTH // size)
    width = _int(first([config], ("hidden_size",))) or 64
    outer = _int(first([config], ("hidden_size_global",))) or width
    vocab = max(4, min(_int(first([config], ("vocab_size",))) or 256, 1000))

    def make() -> dict[str, Any]:
        g = torch.Generator().manual_seed(0)
        out: dict[str, Any] = {"input_ids": torch.randint(3, vocab, (BATCH, LENGTH), generator=g)}
        if "patch_ids" in params:  # an encoder: which patch each byte is in
            out["patch_ids"] = (torch.arange(LENGTH) // size).clamp(max=patches - 1).expand(BATCH, LENGTH)
            out["num_patches"] = patches
        else:  # a decoder: the bytes' states and the patches' global states it cross-attends
            out["inputs_embeds"] = torch.randn(BATCH, LENGTH, width, generator=g)
            out["patch_embeds"] = torch.randn(BATCH, patches, outer, generator=g)
        return out

    yield f"bytes in patches of {size}", ["text"], make


def late_plans(model: Any, config: Any, params: Any) -> Iterator[Plan]:
    """This module's plans, tried after the usual ones."""
    yield from patch_plans(config, params)
    yield from concatenated_plans(config, params)
    yield from depth_plans(config, params)
    yield from codebook_plans(config, params)


# ----------------------------------------------------------------------------- refusals


def hop_length(config: Any) -> int:
    """Samples per frame of a codec or a tokenizer of signals: its ``hop_length`` or the product
    of its downsampling ratios (1 where it names neither)."""
    for c in sub_configs(config):
        hop = _int(first([c], ("hop_length", "frame_size")))
        if hop is not None:
            return hop
        ratios = first([c], ("downsampling_ratios", "upsampling_ratios", "ratios"))
        if isinstance(ratios, (list, tuple)) and ratios and all(_int(r) for r in ratios):
            return int(math.prod(ratios))
    return 1


def _audio_name(inputs: dict[str, Any]) -> str | None:
    return next((n for n in AUDIO_INPUTS if n in inputs and hasattr(inputs[n], "shape")), None)


def _masks_resized(inputs: dict[str, Any], old: int, new: int) -> dict[str, Any]:
    """Every mask over ``old`` frames made one over ``new`` (all real)."""
    import torch

    out = dict(inputs)
    for name in _MASKS:
        mask = inputs.get(name)
        if isinstance(mask, torch.Tensor) and mask.dim() == 2 and mask.shape[1] == old:
            out[name] = torch.ones(mask.shape[0], new, dtype=mask.dtype)
    return out


def _reshaped(inputs: dict[str, Any], name: str, shape: tuple[int, ...]) -> dict[str, Any]:
    import torch

    old = inputs[name]
    frames = old.shape[-2] if old.dim() >= 3 else None
    out = {**inputs, name: torch.randn(*shape, generator=torch.Generator().manual_seed(3))}
    new_frames = shape[-2] if len(shape) >= 3 else None
    if frames is not None and new_frames is not None and frames != new_frames:
        out = _masks_resized(out, frames, new_frames)
    return out


def _width(inputs: dict[str, Any], name: str, width: int, params: Any = ()) -> dict[str, Any]:
    """The audio input with ``width`` as its last size: (B, frames, width) from samples (B, T),
    or the same frames with a new width. An encoder-decoder whose encoder takes frames of that
    width (SpeechT5's, without its speech pre-nets) is given decoder frames of it too."""
    import torch

    value = inputs[name]
    shape = (value.shape[0], 2 * LENGTH, width) if value.dim() == 2 else (*value.shape[:-1], width)
    out = _reshaped(inputs, name, shape)
    if len(shape) == 3:  # (B, frames, width): a mask over the old last axis now covers the frames
        for mask_name in _MASKS:
            mask = out.get(mask_name)
            if isinstance(mask, torch.Tensor) and mask.dim() == 2 and mask.shape[1] != shape[1]:
                out[mask_name] = torch.ones(mask.shape[0], shape[1], dtype=mask.dtype)
    if name == "input_values" and "decoder_input_values" in params:
        g = torch.Generator().manual_seed(4)
        out["decoder_input_values"] = torch.randn(value.shape[0], LENGTH, width, generator=g)
    return out


def _ids_in_every_vocabulary(inputs: dict[str, Any], config: Any) -> dict[str, Any] | None:
    """Token ids folded below the smallest vocabulary any of the config's parts names, where an
    embedding refused one: a text-to-speech model's phoneme table (FastSpeech 2's 78) or a
    text encoder's (CLVP's 256) is smaller than the vocabulary the ids were drawn from."""
    sizes = [_int(_read(c, "vocab_size")) for c in sub_configs(config)]
    smallest = min([s for s in sizes if s is not None and s > 4] or [0])
    names = [n for n in ("input_ids", "decoder_input_ids") if hasattr(inputs.get(n), "shape")]
    if not smallest or not any(int(inputs[n].max()) >= smallest for n in names):
        return None
    out = dict(inputs)
    for n in names:
        out[n] = 3 + (inputs[n] - 3).clamp(min=0) % (smallest - 3)
    return out


def retried(inputs: dict[str, Any], params: Any, message: str, config: Any) -> dict[str, Any] | None:
    """The inputs changed as the model's refusal asks, or None where it asks nothing this module
    knows (see the module's docstring)."""
    cache_refused = "`use_cache` can only be set to `True`" in message  # a decoder stack built as an encoder
    cache_refused |= "object has no attribute 'num_hidden_layers'" in message  # a cache sized from no layer count
    if cache_refused and "use_cache" in params and inputs.get("use_cache") is not False:
        return {**inputs, "use_cache": False}
    if "index out of range in self" in message:
        return _ids_in_every_vocabulary(inputs, config)
    name = _audio_name(inputs)
    if name is None:
        return None
    value = inputs[name]
    # "a multiple of 1920", "a multiple of `n_window * 2` (100)": the number in parentheses first
    multiple = re.search(r"multiple of (?:[^()\n]*?\((\d+)\)|(\d+))", message)
    if multiple:  # a length padded up to a multiple of a hop or a chunk
        got = re.search(r"(?:got|length) (\d+)", message)
        size = int(got.group(1)) if got else value.shape[-1]
        step = int(multiple.group(1) or multiple.group(2))
        axes = [a for a in range(1, value.dim()) if value.shape[a] == size]
        if not axes or step <= 0:
            return None
        axis, padded = axes[-1], -(-size // step) * step
        shape = list(value.shape)
        shape[axis] = padded
        out = _reshaped(inputs, name, tuple(shape))
        return _masks_resized(out, size, padded)
    norm = re.search(r"normalized_shape=\[(\d+)\], expected input with shape \[\*, \d+\], but got", message)
    if norm:  # a layer norm on the input: its width
        return _width(inputs, name, int(norm.group(1)), params)
    mat = re.search(r"mat1 and mat2 shapes cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\)", message)
    if mat and value.dim() >= 2:  # a projection of the input (frames stacked k at a time: cols = k * width)
        cols, rows = int(mat.group(2)), int(mat.group(3))
        last = value.shape[-1]
        if cols % last == 0 and rows % (cols // last) == 0 and cols != rows:
            return _width(inputs, name, rows // (cols // last), params)
        return None
    conv = re.search(r"weight of size \[\d+, (\d+), \d+\], expected input\[\d+, (\d+), (\d+)\]", message)
    if conv:  # a convolution over time: (B, channels, time); one channel is samples, a hop per step
        channels, frames = int(conv.group(1)), int(conv.group(3))
        signal = channels == _int(first(sub_configs(config), ("channels", "audio_channels")))
        # a signal of a few frames (a codec's convolutions up to 2048 channels wide are slow)
        length = hop_length(config) * 4 if signal else min(frames, 4)
        return _reshaped(inputs, name, (value.shape[0], channels, length))
    size = re.search(r"size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\)", message)
    if size and value.dim() >= 2:  # a feature width the model's first layer sets (Fun-ASR's stacked frames)
        have, wanted = int(size.group(1)), int(size.group(2))
        if value.shape[-1] == have and wanted > have:
            return _width(inputs, name, wanted, params)
    return None


# ----------------------------------------------------------------------------- config repairs


def expert_widths(config: Any) -> None:
    """An expert's width the shrinking does not read (DeepSeek-V2's ``moe_intermediate_size``,
    1407) made a multiple of 4: the grouped matrix product the experts run takes rows of a
    multiple of 16 bytes. (Other expert widths run as they are and are left so.)"""
    for name in ("moe_intermediate_size", "shared_expert_intermediate_size"):
        value = _int(_read(config, name))
        if value is not None and value % 4:
            _put(config, name, max(4, value - value % 4))


def stack_slots(config: Any) -> None:
    """A recurrent model that runs one stack of layers several times (HRM's ``H_cycles`` times
    ``L_cycles + 1``) keeps a cache slot per run of a layer, ``num_hidden_layers`` of them; the
    shrinking cut that count, not the stack: one layer per stack, as many slots as runs."""
    per_stack, high, low = (_int(_read(config, n)) for n in ("num_layers_per_stack", "H_cycles", "L_cycles"))
    if per_stack is None or high is None or low is None:
        return
    _put(config, "num_layers_per_stack", 1)
    _put(config, "num_hidden_layers", high * (low + 1))


def factored_head_dims(config: Any) -> None:
    """Head sizes a config computes from its width times a factor, rounded up to a multiple
    (xLSTM's ``qk_dim``: 64 * 0.5 rounded to 64), where its layers take the product unrounded:
    a factor of 1 makes the two agree at the shrunk width."""
    width = _int(_read(config, "hidden_size"))
    for name in ("qk_dim", "v_dim"):
        factor = _read(config, f"{name}_factor")
        computed = _read(config, name)
        if width is None or not isinstance(factor, float) or not isinstance(computed, int):
            continue
        if computed != int(width * factor):
            _put(config, f"{name}_factor", 1.0)


def derived_sizes(config: Any) -> None:
    """Sizes a config computes from its width when it is made (Zamba's attention width, twice the
    width; Zamba 2's Mamba head size) that the shrinking left at the default width's values:
    computed again from the shrunk sizes. Which sizes are derived is found by making the config
    at two widths and seeing which change."""
    cls, width = type(config), _int(_read(config, "hidden_size"))
    if width is None:
        return
    try:
        default, doubled = cls(), cls(hidden_size=2 * int(_read(cls(), "hidden_size")))
    except Exception:  # noqa: BLE001 - a config that cannot be made alone keeps its sizes
        return
    # attention and Mamba head sizes only: other derived sizes (a pooler's, SAM's scale) run as
    # they are in families already captured, and are left so
    names = [
        n
        for n, v in vars(default).items()
        if ("attention" in n or n.endswith("headdim") or n == "kv_channels")
        and _int(v) is not None
        and _read(doubled, n) != v
    ]
    # the ones still at the default width's value: another repair's choice is kept
    names = [n for n in names if _read(config, n) == _read(default, n)]
    if not names:
        return
    given = {n: v for n, v in config.to_dict().items() if n not in names and not isinstance(v, dict)}
    try:
        fresh = cls(**{k: v for k, v in given.items() if k in vars(default)})
    except Exception:  # noqa: BLE001
        return
    for name in names:
        if _read(config, name) != _read(fresh, name):
            _put(config, name, _read(fresh, name))


def stage_lists(config: Any) -> None:
    """Per-stage tuples (Muse Spark's audio tower: ``hidden_sizes``, ``depths``, ``patch_sizes``)
    longer than the ``num_hidden_layers`` the shrinking cut: the first stages'. (The shrinking
    cuts per-layer lists, not tuples.)"""
    layers = _int(_read(config, "num_hidden_layers"))
    sizes = _read(config, "hidden_sizes")
    # (ConvNeXt's and SegFormer's count their stages by their lists: no layer count of their own)
    if "num_hidden_layers" not in vars(config) or layers is None or not isinstance(sizes, tuple):
        return
    if len(sizes) <= layers:
        return
    for name, value in list(vars(config).items()):
        if isinstance(value, tuple) and len(value) == len(sizes) and not name.startswith("_"):
            _put(config, name, value[:layers])


def default_rope_sections(config: Any) -> None:
    """M-RoPE sections the modelling code defaults to when the config has none (PaddleOCR-VL's
    text model: ``.get("mrope_section", [16, 24, 24])``), made explicit and scaled to half the
    shrunk head size as the shrinking scales declared ones."""

    rope, head_dim = _read(config, "rope_parameters"), _int(_read(config, "head_dim"))
    if not isinstance(rope, dict) or rope.get("mrope_section") or head_dim is None:
        return
    found = re.search(r"get\(\s*\"mrope_section\",\s*\[([\d,\s]+)\]\s*\)", modelling_source(config))
    if not found:
        return
    sections = [int(s) for s in found.group(1).split(",") if s.strip()]
    half = head_dim // 2
    if sum(sections) == half:
        return
    scaled = [max(1, s * half // sum(sections)) for s in sections]
    scaled[0] += half - sum(scaled)
    rope["mrope_section"] = scaled


def layer_count_aliases(config: Any) -> None:
    """A layer count kept under a second name (xLSTM's ``num_blocks``, equal to
    ``num_hidden_layers`` by default; its cache has a state per ``num_hidden_layers``, its model
    a block per ``num_blocks``): the shrunk count under both."""
    layers = _int(_read(config, "num_hidden_layers"))
    if layers is None:
        return
    try:
        default = type(config)()
    except Exception:  # noqa: BLE001 - a config that cannot be made alone keeps its counts
        return
    for name in ("num_blocks",):
        value = _int(_read(config, name))
        if value is not None and value != layers and _read(default, name) == _read(default, "num_hidden_layers"):
            _put(config, name, layers)


def hybrid_layer_indices(config: Any) -> None:
    """The indices of a hybrid's attention layers that its config computes from
    ``layers_block_type`` when made (Zamba 2's ``hybrid_layer_ids``), computed again from the
    cut list; and a hybrid that ties one shared attention block across its attention layers
    (Zamba's, whose tying refuses a single one) keeps two of them."""

    kinds = _read(config, "layers_block_type")
    if not isinstance(kinds, list) or "hybrid" not in kinds:
        return
    ids = _read(config, "hybrid_layer_ids")
    if isinstance(ids, list):
        _put(config, "hybrid_layer_ids", [i for i, kind in enumerate(kinds) if kind == "hybrid"])
    if kinds.count("hybrid") != 1:
        return
    if "(?!{layer_id}" in modelling_source(config):
        _put(config, "layers_block_type", kinds + ["hybrid"])
        _put(config, "num_hidden_layers", len(kinds) + 1)


def keys_shaped_by_query_heads(config: Any) -> None:
    """An attention whose keys are shaped with the query head count (Granite Speech 5's blocks:
    ``(..., num_attention_heads, -1)`` for queries, keys and values alike) takes as many
    key/value heads as heads, as its default config has; the shrinking's 2 for 4 makes keys of
    half the head size there."""

    heads = _int(_read(config, "num_attention_heads"))
    if heads is None or _int(_read(config, "num_key_value_heads")) in (None, heads):
        return
    if "config.num_attention_heads, -1)" in modelling_source(config):
        _put(config, "num_key_value_heads", heads)


def bucket_vocabularies(config: Any) -> None:
    """A vocabulary the shrinking does not read (BLT's hashed n-gram buckets,
    ``encoder_hash_byte_group_vocab``: 500002 per n-gram size, 3 million rows whose
    initialisation alone outlasted the sweep's time limit): at most 1000, as every vocabulary."""
    for name in list(vars(config)):
        value = _int(_read(config, name))
        if name.endswith("_vocab") and value is not None and value > 1000:
            _put(config, name, 1000)


def byte_patch_widths(config: Any) -> None:
    """BLT's parts name each other's widths: a local encoder's and decoder's
    ``hidden_size_global`` is the global transformer's width, and the global transformer
    projects the encoder's ``hidden_size * cross_attn_k`` where it differs from its own width
    (``encoder_cross_output_size``, which the composite config derives once, when made, from the
    default widths, where the two agree). Derived again from the shrunk widths."""
    global_config, encoder = _read(config, "global_config"), _read(config, "encoder_config")
    if global_config is not None and encoder is not None and _int(_read(config, "cross_attn_k")) is not None:
        width = _int(_read(global_config, "hidden_size"))
        cross = int(_read(encoder, "hidden_size")) * int(_read(config, "cross_attn_k"))
        _put(global_config, "encoder_cross_output_size", cross if cross != width else None)
        for part in (encoder, _read(config, "decoder_config")):
            if part is not None and width is not None and _int(_read(part, "hidden_size_global")) is not None:
                _put(part, "hidden_size_global", width)
    elif global_config is None:  # a local encoder or decoder swept alone: the global width shrunk as widths are
        width, outer = _int(_read(config, "hidden_size")), _int(_read(config, "hidden_size_global"))
        if width is not None and outer is not None and width <= 64 < outer:
            _put(config, "hidden_size_global", 64)


def speech_tokens_read(config: Any) -> None:
    """CLVP's speech encoder reads the tokens its speech decoder writes (the argmax of the
    decoder's logits), so its vocabulary is the decoder's: the default config pairs a 256-token
    encoder with an 8194-token decoder, which random weights overrun at once; and its encoders'
    rotary takes at least 32 dimensions per head (``max(projection_dim // (2 * heads), 32)``):
    heads of 64. (CLVP's own recipe: no other family names these parts.)"""
    for part in (_read(config, "text_config"), _read(config, "speech_config")):
        # its encoders' rotary takes at least 32 dimensions of each head: heads of 64
        if part is not None and _read(part, "model_type") == "clvp_encoder" and _int(_read(part, "hidden_size")) == 64:
            _put(part, "hidden_size", 128)
            _put(part, "num_attention_heads", 2)
    speech, decoder = _read(config, "speech_config"), _read(config, "decoder_config")
    vocab = _int(_read(decoder, "vocab_size")) if decoder is not None else None
    if speech is not None and vocab is not None and _int(_read(speech, "vocab_size")) not in (None, vocab):
        _put(speech, "vocab_size", vocab)


def codebook_width(config: Any) -> None:
    """A codec whose codebook is as wide as its two encoders together (X-Codec's
    ``codebook_dim``, derived once when the config is made as the acoustic plus the semantic
    width) follows the shrunk widths (its ``hidden_size`` is that sum, read live)."""
    dim, width = _int(_read(config, "codebook_dim")), _int(_read(config, "hidden_size"))
    if dim is None or width is None or dim == width or "hidden_size" in vars(config):
        return
    try:
        default = type(config)()
    except Exception:  # noqa: BLE001 - a config that cannot be made alone keeps its sizes
        return
    if _read(default, "codebook_dim") == _read(default, "hidden_size"):
        _put(config, "codebook_dim", width)


#: The repairs of this module, run by ``sweep_repairs.repair`` on every config.
REPAIRS = (
    expert_widths,
    stack_slots,
    factored_head_dims,
    derived_sizes,
    stage_lists,
    default_rope_sections,
    layer_count_aliases,
    hybrid_layer_indices,
    keys_shaped_by_query_heads,
    bucket_vocabularies,
    byte_patch_widths,
    speech_tokens_read,
    codebook_width,
)
