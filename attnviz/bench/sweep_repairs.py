"""Sizes a config must keep consistent after the capture sweep shrinks it (``capture_sweep.shrink``
sets widths, heads and head dimensions one by one; some families tie them together), and the
defaults a few configs leave unset that their modelling code reads as numbers. Each repair names
the family kind it is for and what the modelling code requires; a config none applies to is
left as it is. Used by ``capture_sweep.shrink``."""

from __future__ import annotations

from typing import Any

from attnviz.bench import sweep_config_fill, sweep_named
from attnviz.bench.sweep_configs import put as _put
from attnviz.bench.sweep_configs import read as _read
from attnviz.bench.sweep_inputs import sub_configs


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _rope_factor(config: Any) -> float:
    rope = _read(config, "rope_parameters") or _read(config, "rope_scaling") or {}
    factor = rope.get("partial_rotary_factor") if isinstance(rope, dict) else None
    if factor is None and isinstance(rope, dict):  # one set per layer type (Dots 3 Note's): where all agree
        factors = {p.get("partial_rotary_factor") for p in rope.values() if isinstance(p, dict)}
        factor = factors.pop() if len(factors) == 1 else None
    factor = factor or _read(config, "partial_rotary_factor") or 1.0
    return float(factor)


def latent_attention(config: Any) -> None:
    """Multi-head latent attention (MiniCPM3, Mistral 4, Youtu, DeepSeek): the rotary part of a
    head is ``qk_rope_head_dim`` wide and the rotary tables are built ``head_dim`` wide, so
    ``head_dim`` is the rotary width (over the rotary fraction), not the shrunk 16; every head
    has its own keys (no grouped key/value heads: the latent is shared instead)."""
    rope_dim = _read(config, "qk_rope_head_dim")
    if _int(rope_dim) and _int(_read(config, "head_dim")):
        _put(config, "head_dim", int(round(rope_dim / _rope_factor(config))))
    if _int(rope_dim) and _int(_read(config, "num_key_value_heads")) and _int(_read(config, "num_attention_heads")):
        _put(config, "num_key_value_heads", _read(config, "num_attention_heads"))


def unset_heads(config: Any) -> None:
    """``head_dim`` or ``num_key_value_heads`` left None by a default config (Ministral,
    Nemotron) where the modelling code divides by them: the values the config's documentation
    gives as their meaning (width over heads; as many key/value heads as heads)."""
    names = vars(config)
    heads, width = _read(config, "num_attention_heads"), _read(config, "hidden_size")
    if not (_int(heads) and _int(width)):
        return
    if "head_dim" in names and _read(config, "head_dim") is None:
        _put(config, "head_dim", width // heads)
    if "num_key_value_heads" in names and _read(config, "num_key_value_heads") is None:
        _put(config, "num_key_value_heads", heads)


def state_space_heads(config: Any) -> None:
    """Mamba 2's heads tile its inner width: ``num_heads * head_dim == expand * hidden_size``."""
    expand, width, head_dim = _read(config, "expand"), _read(config, "hidden_size"), _read(config, "head_dim")
    if all(_int(v) for v in (expand, width, head_dim)) and _int(_read(config, "num_heads")) and head_dim:
        heads = expand * width // head_dim
        groups = _read(config, "n_groups")
        if _int(groups) and groups and heads % groups:
            _put(config, "n_groups", 1)
        _put(config, "num_heads", heads)


def embedding_width(config: Any) -> None:
    """An embedding wider than the (shrunk) hidden width (SqueezeBERT's must equal it)."""
    size, width = _read(config, "embedding_size"), _read(config, "hidden_size")
    if _int(size) and _int(width) and size > width:
        _put(config, "embedding_size", width)


def attention_layers_kept(config: Any) -> None:
    """A hybrid whose attention layers come every few layers (Qwen3-Next: one in four) keeps one
    among the first ``num_hidden_layers``: the last kept layer becomes the first attention kind
    of its pattern, so the two layers the sweep keeps still hold attention."""
    kinds, count = _read(config, "layer_types"), _read(config, "num_hidden_layers")
    if not (isinstance(kinds, list) and kinds and _int(count) and 0 < count <= len(kinds)):
        return
    attention = [k for k in kinds if isinstance(k, str) and "attention" in k and "linear" not in k]
    kept = kinds[:count]
    if attention and not any(k in attention for k in kept):
        _put(config, "layer_types", kept[:-1] + [attention[0]] + kinds[count:])


def sliding_window_set(config: Any) -> None:
    """A config whose layers slide a window it leaves unset (Step 3.5's default, whose model
    makes the sliding mask whatever its layers are): the window its sibling families default to,
    longer than any input the sweep makes."""
    kinds = _read(config, "layer_types") or []
    sliding = any(isinstance(k, str) and "sliding" in k for k in kinds)
    if "sliding_window" in vars(config) and _read(config, "sliding_window") is None:
        if sliding or _read(config, "num_sliding_attention_heads") is not None:
            _put(config, "sliding_window", 4096)


def tower_output_width(config: Any) -> None:
    """A vision or audio tower whose output is projected to the language model's width
    (``out_hidden_size``: Qwen3.5's, Qwen3-Omni's) outputs the text model's (shrunk) width;
    their default configs pair a 3584-wide output with a 4096- or 2048-wide text model, which a
    checkpoint never does (the text model takes the tower's output as its embeddings)."""
    try:
        text = config.get_text_config() if hasattr(config, "get_text_config") else None
    except ValueError:  # MusicGen's names two text configs: no one text width to follow
        return
    width = _read(text, "hidden_size") if text is not None and text is not config else None
    if not _int(width):
        return
    for name in ("vision_config", "audio_config"):
        tower = _read(config, name)
        out = _read(tower, "out_hidden_size") if tower is not None else None
        if _int(out) and out != width:
            _put(tower, "out_hidden_size", width)


def token_indexer(config: Any) -> None:
    """Qwen4-Exp's indexed attention layers build a token indexer whatever the config says, and
    its default config leaves the indexer unset (it cannot build an attention layer): the sizes
    its documentation requires (one key head, a budget divisible by the compression), with a
    budget longer than any input the sweep makes, so every token stays selected."""
    names = ("indexer_n_heads", "indexer_kv_heads", "indexer_head_dim", "indexer_budget", "indexer_compress_ratio")
    kinds = _read(config, "layer_types") or []
    if all(n in vars(config) and _read(config, n) is None for n in names) and "indexed_attention" in kinds:
        head_dim = _read(config, "head_dim")
        for name, value in zip(names, (2, 1, head_dim if _int(head_dim) else 16, 4096, 4), strict=True):
            _put(config, name, value)


def stacked_layers(config: Any) -> None:
    """Stacks the shrinking's names miss (V-JEPA 2's ``pred_num_hidden_layers``, Perceiver's
    ``num_self_attends_per_block``): two layers each, as every other stack, so that a small
    config runs in the sweep's time limit."""
    for name in list(vars(config)):
        value = _read(config, name)
        if name.endswith(("_num_hidden_layers", "num_self_attends_per_block")) and _int(value) and value > 2:
            _put(config, name, 2)


def decoder_inputs(config: Any) -> None:
    """RT-DETR's kin feed the decoder the hybrid encoder's maps, each ``encoder_hidden_dim``
    wide (``decoder_in_channels``, a list the shrinking does not read): as wide as the shrunk
    encoder."""
    width, inputs = _read(config, "encoder_hidden_dim"), _read(config, "decoder_in_channels")
    if _int(width) and isinstance(inputs, (list, tuple)) and inputs and any(c != width for c in inputs):
        _put(config, "decoder_in_channels", type(inputs)([width] * len(inputs)))


def backbone_outputs(config: Any) -> None:
    """A backbone whose outputs are taken from layers the shrinking removed (a DPT neck reads
    BEiT's layers 6, 12, 18, 24): at least as many layers as outputs, the outputs taken from the
    last layers, each once. Layers are never cut here: a staged backbone (ConvNeXt, whose
    ``num_hidden_layers`` is its ``num_stages``) keeps its per-stage lists as long as its stages."""
    indices, layers = _read(config, "out_indices"), _read(config, "num_hidden_layers")
    if not (isinstance(indices, (list, tuple)) and indices and _int(layers)):
        return
    if max(int(i) for i in indices) <= layers:
        return
    count = len(indices)
    if count > layers:
        _put(config, "num_hidden_layers", count)
    total = max(count, layers)
    _put(config, "stage_names", ["stem"] + [f"stage{i}" for i in range(1, total + 1)])
    _put(config, "out_indices", list(range(total - count + 1, total + 1)))
    _put(config, "out_features", [f"stage{i}" for i in range(total - count + 1, total + 1)])


def windowed_stages(config: Any) -> None:
    """A Swin-like tower (windows of ``window_size`` patches, halved resolution per stage): an
    image whose last stage is one window wide, as its default's is, with windows of at most 4 x 4
    patches (the sweep's time limit); the shrinking's 8 x 8 patches made stages smaller than a
    window, where Swin shrinks the window but keeps the relative-position table of the full one
    (16 against 49)."""
    window, patch, depths = _read(config, "window_size"), _read(config, "patch_size"), _read(config, "depths")
    # Swin2SR's stages keep their resolution (it upscales): its small image fits every window
    staged = isinstance(depths, (list, tuple)) and bool(depths) and _read(config, "upscale") is None
    if _int(window) and _int(patch) and staged and _int(_read(config, "image_size")):
        window = min(window, 4)
        _put(config, "window_size", window)
        _put(config, "image_size", patch * window * 2 ** (len(depths) - 1))


def vision_start_named(config: Any) -> None:
    """The Omni thinkers' position index reads ``vision_start_token_id``, which their default
    configs do not define (a checkpoint's does): an id of its own, below the ones the sweep
    moves to the top of the vocabulary, so the inputs put it before the image tokens."""
    from attnviz.bench.sweep_inputs import special_ids

    if not str(_read(config, "model_type") or "").endswith("_thinker") or hasattr(config, "vision_start_token_id"):
        return
    taken = special_ids(config)
    _put(config, "vision_start_token_id", next(i for i in range(900, 0, -1) if i not in taken))


REPAIRS = (
    vision_start_named,
    windowed_stages,
    backbone_outputs,
    decoder_inputs,
    stacked_layers,
    token_indexer,
    latent_attention,
    unset_heads,
    state_space_heads,
    embedding_width,
    attention_layers_kept,
    sliding_window_set,
)


def repair(config: Any) -> None:
    """Every repair, on ``config`` and each config inside it."""
    # (imported here: their repairs read the sizes these leave, and import this module)
    from attnviz.bench import sweep_audio_more, sweep_audio_text, sweep_media_audio, sweep_sessions, sweep_timm
    from attnviz.bench.sweep_image_repairs import REPAIRS as IMAGE_REPAIRS
    from attnviz.bench.sweep_media_images import REPAIRS as MEDIA_IMAGE_REPAIRS

    for sub in sub_configs(config):
        repairs = sweep_sessions.REPAIRS + REPAIRS + IMAGE_REPAIRS + sweep_audio_text.REPAIRS + sweep_audio_more.REPAIRS
        for fix in repairs + sweep_media_audio.REPAIRS + sweep_timm.REPAIRS + MEDIA_IMAGE_REPAIRS:
            fix(sub)
        tower_output_width(sub)
    sweep_named.head_width(config)  # a head's width follows its text model's
    sweep_config_fill.fill(config)  # fields the default leaves unset that the model reads
