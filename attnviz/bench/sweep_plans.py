"""Inputs for the models whose forward takes none of the usual ``input_ids`` / ``pixel_values`` /
``input_features`` alone: a vision tower given its patches flattened with their grid
(``grid_thw``: Qwen2-VL's tower and its kin), a NaFlex tower given its patches with their
shapes and mask (SigLIP 2), a forecaster given a window of past values (PatchTST, TimesFM), and
the retries a model's own refusal asks for (a hybrid model whose cache holds only linear-attention
layers run without a cache; an encoder that takes no integer mask run without one).

Each plan is (label, kinds, make) as in ``sweep_inputs.plans``, which yields these first.
The sizes come from the config alone, as the rest of the sweep's inputs do."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from attnviz.bench import sweep_config_fill, sweep_lengths, sweep_named
from attnviz.bench.sweep_inputs import BATCH, _media_config, first

Plan = tuple[str, list[str], Callable[[], dict[str, Any]]]

_VISION = ("vision_config", "visual_config", "image_config", "backbone_config")


def _int(value: Any, default: int) -> int:
    if isinstance(value, (list, tuple)):
        value = value[-1] if value else None
    return int(value) if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default


def grid_plans(config: Any, params: Any) -> Iterator[Plan]:
    """A tower that takes every image's patches flattened into one sequence with each image's
    (t, h, w) grid: (patches, C * T * P * P) first, then the patch as (C, P, P) or (C, T, P, P)."""
    import torch

    if "grid_thw" not in params:
        return
    name = "hidden_states" if "hidden_states" in params else "pixel_values"
    configs = _media_config(config, _VISION)
    channels = _int(first(configs, ("num_channels", "in_channels", "in_chans")), 3)
    patch = _int(first(configs, ("patch_size",)), 14)
    temporal = _int(first(configs, ("temporal_patch_size",)), 1)
    merge = _int(first(configs, ("spatial_merge_size", "merge_size")), 2)
    side = 2 * merge  # a multiple of every merge: the patches merge to (side / merge)^2 tokens
    count = BATCH * side * side
    grid = torch.tensor([[1, side, side]] * BATCH)
    extra: dict[str, Any] = {}
    if "merge_sizes" in params:  # VideoLLaMA 3: each image's own merge
        extra["merge_sizes"] = torch.tensor([merge] * BATCH)
    # a tower without a temporal patch of its own may still stack two frames per patch (2)
    shapes: list[tuple[int, ...]] = [(channels * t * patch * patch,) for t in (temporal, 2)]
    shapes += [(channels, patch, patch), (channels, temporal, patch, patch)]

    def make(patches: Any) -> Callable[[], dict[str, Any]]:
        return lambda: {name: patches, "grid_thw": grid, **extra}

    for shape in dict.fromkeys(shapes):
        patches = torch.randn(count, *shape, generator=torch.Generator().manual_seed(0))
        label = "x".join(str(n) for n in shape)
        yield f"grid patches ({count}, {label})", ["image"], make(patches)
    # PaddleOCR-VL's tower: every image's patches in one row, (1, patches, C, P, P)
    one = torch.randn(1, count, channels, patch, patch, generator=torch.Generator().manual_seed(0))
    yield f"grid patches (1, {count}, C, P, P)", ["image"], lambda: {name: one, "grid_thw": grid, **extra}


def naflex_plans(config: Any, params: Any) -> Iterator[Plan]:
    """SigLIP 2's tower: patches (B, N, C * P * P) with each image's (h, w) in patches and a
    mask of the real ones (the second image's last row of patches padding)."""
    import torch

    if not ("spatial_shapes" in params and "pixel_attention_mask" in params and "pixel_values" in params):
        return
    configs = _media_config(config, _VISION)
    channels = _int(first(configs, ("num_channels",)), 3)
    patch = _int(first(configs, ("patch_size",)), 16)
    patches = _int(first(configs, ("num_patches",)), 16)
    side = max(1, int(patches**0.5))
    g = torch.Generator().manual_seed(0)
    pixels = torch.randn(BATCH, side * side, channels * patch * patch, generator=g)
    shapes = torch.tensor([[side, side]] * BATCH)
    mask = torch.ones(BATCH, side * side, dtype=torch.long)

    def make() -> dict[str, Any]:
        out = {"pixel_values": pixels, "spatial_shapes": shapes, "pixel_attention_mask": mask}
        if "input_ids" in params:
            out["input_ids"] = torch.randint(3, 100, (BATCH, 8), generator=torch.Generator().manual_seed(1))
        return out

    yield "patches with shapes (B, N, C * P * P)", ["image", "text"] if "input_ids" in params else ["image"], make


def series_plans(config: Any, params: Any) -> Iterator[Plan]:
    """A forecaster's window of past values: (B, context, channels) where the config names its
    channels (PatchTST, PatchTSMixer), else (B, context) with its padding and frequency (TimesFM)."""
    import torch

    if "past_values" not in params:
        return
    context = _int(first([config], ("context_length", "context_len", "max_position_embeddings")), 64)
    context = min(context, 512)
    channels = first([config], ("num_input_channels",))
    g = torch.Generator().manual_seed(0)
    if channels is not None:
        values = torch.randn(BATCH, context, _int(channels, 1), generator=g)
    else:
        values = torch.randn(BATCH, context, generator=g)

    def make() -> dict[str, Any]:
        out: dict[str, Any] = {"past_values": values}
        if "past_observed_mask" in params:
            out["past_observed_mask"] = torch.ones_like(values)
        if "observed_mask" in params:
            out["observed_mask"] = torch.ones_like(values)
        if "past_values_padding" in params:
            out["past_values_padding"] = torch.zeros(values.shape[:2])
        if "freq" in params:
            out["freq"] = torch.zeros(BATCH, 1, dtype=torch.long)
        return out

    yield "past values", ["series"], make


#: Inputs the usual plans make (``sweep_inputs.plans``): a forward that requires nothing else
#: is left to them.
_USUAL = {"input_ids", "pixel_values", "input_features", "input_values", "attention_mask"}
#: Required inputs that are a sequence of vectors of the model's width.
_SEQUENCES = ("inputs_embeds", "hidden_states", "inputs", "noise_embeds", "context_hidden_states")
_WIDTHS = ("hidden_size", "d_model", "embed_dim", "d_latents", "dim")
#: The length of every sequence made here.
LENGTH = 8


def _named(name: str, config: Any, generator: Any) -> Any:
    """A tensor for the required input ``name`` (None where the name says nothing we can
    size): sequences of the model's width, video clips, Pix2Struct's flattened patches."""
    import torch

    configs = _media_config(config, _VISION)
    if name in _SEQUENCES:
        width = _int(first([config], _WIDTHS), 64)
        return torch.randn(BATCH, LENGTH, width, generator=generator)
    if name == "pixel_values_videos":
        channels = _int(first(configs, ("num_channels", "in_chans")), 3)
        size = _int(first(configs, ("image_size", "crop_size")), 32)
        tubelet = _int(first(configs, ("tubelet_size",)), 1)
        frames = max(tubelet, min(_int(first(configs, ("num_frames", "frames_per_clip")), 2), 2 * tubelet))
        return torch.randn(BATCH, frames, channels, size, size, generator=generator)
    if name == "flattened_patches":  # (row, column, C * P * P) per patch, rows and columns from 1
        patch = _int(first(configs, ("patch_embed_hidden_size",)), 768)
        side = 4
        rows = torch.arange(1, side + 1).repeat_interleave(side).float()
        cols = torch.arange(1, side + 1).repeat(side).float()
        values = torch.randn(BATCH, side * side, patch, generator=generator)
        index = torch.stack([rows, cols], -1).expand(BATCH, -1, -1)
        return torch.cat([index, values], -1)
    return None


def named_plans(model: Any, config: Any, params: Any) -> Iterator[Plan]:
    """A forward that requires inputs the usual plans do not make (a decoder on embeddings, a
    video tower, Pix2Struct's patches), each made from its name and the config; no plan where
    one of them is a name we cannot size."""
    import inspect

    import torch

    required = [
        n
        for n, p in params.items()
        if p.default is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    # a tower's own media (a video tower, Pix2Struct's): a language model's are the usual plans'
    media = ("pixel_values_videos", "flattened_patches")
    optional_media = [n for n in media if n in params and "input_ids" not in params]
    wanted = [n for n in dict.fromkeys(required + optional_media) if n not in _USUAL]
    if not wanted or (set(required) <= _USUAL and not optional_media):
        return
    g = torch.Generator().manual_seed(0)
    made = {n: _named(n, config, g) for n in wanted}
    if any(v is None for v in made.values()):
        return
    if "input_ids" in required:
        made["input_ids"] = torch.randint(3, 100, (BATCH, LENGTH), generator=g)
    if "decoder_input_ids" in params:  # an encoder-decoder (Pix2Struct): a few decoder tokens
        made["decoder_input_ids"] = torch.randint(3, 100, (BATCH, 5), generator=g)
    kinds = ["video"] if "pixel_values_videos" in made else ["image"] if "flattened_patches" in made else ["embeddings"]
    yield f"named inputs ({', '.join(made)})", kinds + (["text"] if "input_ids" in made else []), lambda: dict(made)


def sized_image_plans(config: Any, params: Any) -> Iterator[Plan]:
    """Pixels at a config's own (height, width) where the two differ (ViTPose's 256 x 192,
    MGP-STR's 32 x 128): the usual plans make square images."""
    import torch

    if "pixel_values" not in params:
        return
    configs = _media_config(config, _VISION)
    size = first(configs, ("image_size", "img_size"))
    if not (isinstance(size, (list, tuple)) and len(size) == 2 and size[0] != size[1]):
        return
    channels = _int(first(configs, ("num_channels", "in_channels", "in_chans")), 3)
    pixels = torch.randn(BATCH, channels, int(size[0]), int(size[1]), generator=torch.Generator().manual_seed(0))
    yield f"pixels (B, C, {size[0]}, {size[1]})", ["image"], lambda: {"pixel_values": pixels}


def extra_plans(model: Any, config: Any, params: Any) -> Iterator[Plan]:
    """The plans of this module that ``model``'s forward takes, most specific first."""
    from attnviz.bench import sweep_images, sweep_media_images  # pixel layouts of image and video models

    yield from sweep_lengths.block_sparse_plans(config, params)
    yield from sweep_lengths.chunked_plans(config, params)
    yield from sweep_images.image_plans(model, config, params)
    yield from sweep_media_images.plans(model, config, params)  # multimodal models' own image inputs
    yield from grid_plans(config, params)
    yield from naflex_plans(config, params)
    yield from sweep_config_fill.forecast_plans(config, params)  # lags, time features, horizon
    yield from series_plans(config, params)
    yield from sized_image_plans(config, params)
    yield from named_plans(model, config, params)
    yield from sweep_named.plans(model, config, params)  # inputs by what each parameter means


def retried(inputs: dict[str, Any], params: Any, message: str) -> dict[str, Any] | None:
    """The inputs changed as the model's refusal asks, or None where it asks nothing we know:
    a hybrid model whose cache holds only linear-attention layers at the first step is run
    without a cache (``use_cache=False``; attention is the same either way); an encoder that
    hands an integer padding mask to SDPA (which takes bool or float only), or adds a mask of
    every frame to scores over its convolutions' fewer positions (the Qwen2-Audio-like encoders:
    "the size of tensor a (1500) must match ... b (3000)"), is run without the mask (every frame
    is real: the mask said nothing)."""
    if "get_seq_length" in message and "use_cache" in params and inputs.get("use_cache") is not False:
        return {**inputs, "use_cache": False}
    names = [n for n in ("attention_mask", "feature_attention_mask", "input_features_mask") if n in inputs]
    if names and "attn_mask dtype" in message:
        return {k: v for k, v in inputs.items() if k not in names}
    if names and "must match the size of tensor" in message:
        frames = [n for n in names if _every_frame(inputs[n]) and f"({inputs[n].shape[-1]})" in message]
        if frames:
            return {k: v for k, v in inputs.items() if k not in frames}
    return None


def _every_frame(mask: Any) -> bool:
    """Whether ``mask`` is a (B, frames) mask of nothing but real frames."""
    import torch

    return isinstance(mask, torch.Tensor) and mask.dim() == 2 and bool((mask == 1).all())
