"""Pixel layouts for the image and video models the usual plans (``sweep_inputs.image_layouts``)
do not fit, each made from the forward signature and the config alone, grouped by what the model
expects of its pixels:

* packed patches with each image's grid (``target_sizes``: MiniCPM-V's NaViT towers): every
  image's patches in one row, (1, C, P, N * P);
* video clips as frames of a batch, (B * T, C, H, W) (X-CLIP's tower, which reshapes the batch
  by ``num_frames``), or (B, T, C, H, W) with as many frames as the config's position table holds
  (VideoPrism's, whose temporal positions are sized by ``num_frames``);
* images at the size a config fixes elsewhere than ``image_size`` (a multi-scale encoder whose
  smallest scale must hold a patch: DepthPro);

Each plan is (label, kinds, make) as ``sweep_plans.extra_plans`` yields them (this module's
first). The config repairs these models need are in ``sweep_image_repairs.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from attnviz.bench import sweep_vision_more
from attnviz.bench.sweep_inputs import BATCH, _media_config, first

Plan = tuple[str, list[str], Callable[[], dict[str, Any]]]

_VISION = ("vision_config", "visual_config", "image_config", "backbone_config")
_CHANNELS = ("num_channels", "in_channels", "in_chans")


def _int(value: Any, default: int) -> int:
    if isinstance(value, (list, tuple)):
        value = value[-1] if value else None
    return int(value) if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default


def _kinds(params: Any, kind: str) -> list[str]:
    return [kind, "text"] if "input_ids" in params else [kind]


def packed_plans(config: Any, params: Any) -> Iterator[Plan]:
    """A NaViT tower (MiniCPM-V's) whose images are packed into one row of patches (``packed``);
    a model that also takes text gets them among ``sweep_inputs.image_layouts``, with its
    placeholders."""
    if "target_sizes" in params and "pixel_values" in params and "input_ids" not in params:
        label, media = packed(config)
        yield label, _kinds(params, "image"), lambda: media


def packed(config: Any) -> tuple[str, dict[str, Any]]:
    """Images packed into one row of patches, (1, C, P, N * P), with each image's (h, w) in
    patches (``target_sizes``): two images of 4 x 4 patches, a multiple of the 2 x 2 windows its
    merger takes (MiniCPM-V's)."""
    import torch

    configs = _media_config(config, _VISION)
    channels = _int(first(configs, _CHANNELS), 3)
    patch = _int(first(configs, ("patch_size",)), 14)
    window = first(configs, ("window_kernel_size", "merge_kernel_size"), (2, 2))
    window = int(window[0]) if isinstance(window, (list, tuple)) and window else 2
    side = 2 * window
    sizes = torch.tensor([[side, side]] * BATCH, dtype=torch.int32)
    g = torch.Generator().manual_seed(0)
    pixels = torch.randn(1, channels, patch, BATCH * side * side * patch, generator=g)
    return f"packed patches (1, C, P, {BATCH * side * side} * P)", {"pixel_values": pixels, "target_sizes": sizes}


def video_plans(config: Any, params: Any) -> Iterator[Plan]:
    """A video model whose clip length the config fixes (``num_frames``): its frames as a batch of
    images (B * T, C, H, W) where the model folds them back by ``num_frames`` (X-CLIP's tower,
    which takes ``pixel_values`` only), and (B, T, C, H, W) for one taking
    ``pixel_values_videos``."""
    import torch

    configs = _media_config(config, _VISION)
    frames = first(configs, ("num_frames",))
    if not (isinstance(frames, int) and 0 < frames <= 32):
        return
    channels = _int(first(configs, _CHANNELS), 3)
    size = _int(first(configs, ("image_size", "crop_size")), 32)
    g = torch.Generator().manual_seed(0)
    if "pixel_values_videos" in params:
        clip = torch.randn(BATCH, frames, channels, size, size, generator=g)

        def make_clip() -> dict[str, Any]:
            out: dict[str, Any] = {"pixel_values_videos": clip}
            if "input_ids" in params:
                out["input_ids"] = torch.randint(3, 100, (BATCH, 8), generator=torch.Generator().manual_seed(1))
            return out

        yield f"video (B, {frames}, C, H, W)", _kinds(params, "video"), make_clip
    elif "pixel_values" in params and "input_ids" not in params:
        flat = torch.randn(BATCH * frames, channels, size, size, generator=g)
        yield f"frames as a batch (B * {frames}, C, H, W)", ["video"], lambda: {"pixel_values": flat}


def scaled_plans(config: Any, params: Any) -> Iterator[Plan]:
    """A multi-scale encoder (DepthPro's) that cuts each of its scaled images into patches of
    ``patch_size`` pixels: the image as large as the smallest scale needs to hold one patch."""
    import torch

    ratios = first([config], ("scaled_images_ratios",))
    patch = first([config], ("patch_size",))
    if not (isinstance(ratios, (list, tuple)) and ratios and isinstance(patch, int) and "pixel_values" in params):
        return
    size = int(round(patch / min(float(r) for r in ratios)))
    channels = _int(first(_media_config(config, _VISION), _CHANNELS), 3)
    pixels = torch.randn(BATCH, channels, size, size, generator=torch.Generator().manual_seed(0))
    yield f"pixels (B, C, {size}, {size}) for scales {tuple(ratios)}", ["image"], lambda: {"pixel_values": pixels}


def latent_plans(config: Any, params: Any) -> Iterator[Plan]:
    """A VQ autoencoder (Janus's) whose decoder takes a fixed grid of ``num_patches`` latents
    per side: an image of that grid times its encoder's downsampling (a halving between each
    of its ``channel_multiplier`` levels)."""
    import torch

    levels, grid = first([config], ("channel_multiplier",)), first([config], ("num_patches",))
    if not (isinstance(levels, (list, tuple)) and levels and isinstance(grid, int) and "pixel_values" in params):
        return
    size = grid * 2 ** (len(levels) - 1)
    channels = _int(first([config], _CHANNELS), 3)
    pixels = torch.randn(BATCH, channels, size, size, generator=torch.Generator().manual_seed(0))
    yield f"pixels (B, C, {size}, {size}) for {grid} x {grid} latents", ["image"], lambda: {"pixel_values": pixels}


def flat_patch_plans(config: Any, params: Any) -> Iterator[Plan]:
    """A tower that embeds patches already cut and flattened (Molmo 2's, a linear layer over
    P * P * C values) with one position per patch of its fixed grid (``num_position_embeddings``):
    (B, positions, P * P * C)."""
    import torch

    positions, patch = first([config], ("num_position_embeddings",)), first([config], ("patch_size",))
    if not (isinstance(positions, int) and isinstance(patch, int) and "pixel_values" in params):
        return
    if "input_ids" in params or not 0 < positions <= 4096:
        return
    channels = _int(first([config], _CHANNELS), 3)
    g = torch.Generator().manual_seed(0)
    patches = torch.randn(BATCH, positions, patch * patch * channels, generator=g)
    yield f"flattened patches (B, {positions}, P * P * C)", ["image"], lambda: {"pixel_values": patches}


def merge_block_plans(config: Any, params: Any) -> Iterator[Plan]:
    """A grid tower (Inkling 2's) that takes its patches as channels-last blocks of merge x merge
    patches, (blocks, m * P, m * P, C), one per language-model token, with each image's
    (t, h, w) grid counted in those tokens."""
    import torch

    grid_name = next((n for n in ("image_grid_thw", "grid_thw") if n in params), None)
    if grid_name is None or "pixel_values" not in params or "input_ids" in params:
        return
    configs = _media_config(config, _VISION)
    patch = _int(first(configs, ("patch_size",)), 14)
    merge = _int(first(configs, ("spatial_merge_size", "merge_size")), 2)
    channels = _int(first(configs, _CHANNELS), 3)
    side = 2 * merge
    blocks = BATCH * (side // merge) ** 2
    grid = torch.tensor([[1, side // merge, side // merge]] * BATCH)
    g = torch.Generator().manual_seed(0)
    pixels = torch.randn(blocks, merge * patch, merge * patch, channels, generator=g)
    yield (
        f"grid patches as merge blocks ({blocks}, m * P, m * P, C)",
        ["image"],
        lambda: {
            "pixel_values": pixels,
            grid_name: grid,
        },
    )


def patch_cube_plans(config: Any, params: Any) -> Iterator[Plan]:
    """A tower that takes its patches one by one with no grid (Inkling's hierarchical MLP, which
    folds time and space into depth, one embedding per patch): each patch a channels-last cube of
    ``temporal_patch_size`` frames of ``patch_size`` x ``patch_size`` pixels, (N, T, P, P, C)."""
    import torch

    temporal, patch = first([config], ("temporal_patch_size",)), first([config], ("patch_size",))
    if not (isinstance(temporal, int) and isinstance(patch, int) and temporal > 0 and patch > 0):
        return
    if "pixel_values" not in params or {"input_ids", "grid_thw", "image_grid_thw"} & set(params):
        return
    channels = _int(first([config], _CHANNELS), 3)
    count = BATCH * 4  # a few patches per image
    cubes = torch.randn(count, temporal, patch, patch, channels, generator=torch.Generator().manual_seed(0))
    yield f"patch cubes ({count}, T, P, P, C)", ["image"], lambda: {"pixel_values": cubes}


def image_plans(model: Any, config: Any, params: Any) -> Iterator[Plan]:
    """The plans of this module that ``model``'s forward takes."""
    yield from packed_plans(config, params)
    yield from video_plans(config, params)
    yield from scaled_plans(config, params)
    yield from latent_plans(config, params)
    yield from flat_patch_plans(config, params)
    yield from merge_block_plans(config, params)
    yield from patch_cube_plans(config, params)
    yield from sweep_vision_more.plans(model, config, params)
