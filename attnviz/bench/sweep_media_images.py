"""Image inputs and config repairs for multimodal language models that the usual plans
(``sweep_inputs.image_layouts``) left on text only, each made from the config and the forward
signature alone:

* a resampler between the tower and the language model (Idefics2's perceiver) whose width the
  config ties to the language model's, left at its default when the shrinking narrowed the
  latter;
* hidden-state indices past the tower's layers kept (VipLlava's);
* a multimodal config's own width, its language model's by default (Ovis2's), or an adapter's
  ``text_hidden_size`` (Molmo2's);
* a tower's merged output width kept by the outer config (Muse Spark's ``out_hidden_size``);
* a projector's learned queries listed for the shrunk tower's count of patches (Aria's);
* a second tower's global-attention layers inside the layers kept (DeepSeek-VL hybrid's);
* key/value heads kept equal to heads where the eager attention never repeats them (Unlimited OCR's);
* a tower whose output joins several of its layers (Mllama's), its width not their sum;
* tiles with a mask of the real ones where the model requires one (Granite Docling's);
* NaFlex patches with their shapes and mask, the image's tokens in the text (LFM2-VL's);
* two images at once, one per tower's resolution (DeepSeek-VL hybrid's);
* merge blocks of a grid tower with their tokens, after the usual layouts (Inkling 2's);
* clip patches, channels last, for a tower with a temporal patch but no image size (Inkling's);
* crops cut into patches, pooled into image tokens by indices (Molmo2's);

Plans are (label, kinds, make) as ``sweep_plans.extra_plans`` yields them (``late_plans`` after the
usual layouts, from ``sweep_inputs.plans``); repairs run on every
config inside the model's (``sweep_repairs.repair``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from typing import Any

from attnviz.bench import sweep_config_build, sweep_inputs
from attnviz.bench.sweep_configs import is_int, modelling_module, put, read
from attnviz.bench.sweep_images import _CHANNELS, _VISION, Plan, _int  # the image plans' readers

#: Sub-configs of a resampler that reads the tower's features into the language model's width.
_RESAMPLERS = ("perceiver_config", "resampler_config", "connector_config")


def resampler_width(config: Any) -> None:
    """A resampler whose ``hidden_size`` is the language model's (Idefics2's perceiver: its
    config copies the text width in at construction, so the shrinking, which narrows the text
    model afterwards, leaves it 4096 against the text model's 64): the text width again."""
    if read(config, "text_config") is None:
        return
    width = read(sweep_config_build.text_config(config), "hidden_size")
    for name in _RESAMPLERS:
        sub = read(config, name)
        if sub is not None and is_int(width) and is_int(read(sub, "hidden_size")) and read(sub, "hidden_size") != width:
            put(sub, "hidden_size", width)


def stacked_output_width(config: Any) -> None:
    """A tower whose output joins its last hidden state with those of its
    ``intermediate_layers_indices`` (Mllama's: 1280 * (1 + 5) = 7680, ``vision_output_dim``, the
    width its projector takes): that product at the shrunk width."""
    layers, width, out = (read(config, n) for n in ("intermediate_layers_indices", "hidden_size", "vision_output_dim"))
    if isinstance(layers, (list, tuple)) and is_int(width) and is_int(out):
        put(config, "vision_output_dim", width * (1 + len(layers)))


def feature_layers_kept(config: Any) -> None:
    """A model that joins the tower's hidden states at several layers (VipLlava's
    ``vision_feature_layer``, (-2, -5, -8, -11, 6) of 24 layers: its projector takes their
    count times the width): each index past the layers kept wrapped into the ``layers + 1``
    hidden states the shrunk tower returns, so there are as many of them. The indices may be
    held by a sibling of the tower's config (Molmo2's ``adapter_config``)."""
    tower = read(config, "vision_config")
    layers = read(tower, "num_hidden_layers") if tower is not None else None
    if not isinstance(layers, int):
        return
    states = layers + 1  # the embeddings' output and each layer's
    for holder in (c for c in sweep_inputs.sub_configs(config) if c is not tower):
        indices = read(holder, "vision_feature_layer")
        if not isinstance(indices, (list, tuple)) or all(is_int(i) and -states <= i < states for i in indices):
            continue
        put(holder, "vision_feature_layer", type(indices)(i % states if is_int(i) else i for i in indices))


def outer_width(config: Any) -> None:
    """A multimodal config with a width of its own but no layers or heads (Ovis2's
    ``hidden_size``: its visual embedding table is that wide, and its rows join the text
    embeddings, so it must be the language model's width; the default's 1536 matches neither
    its default tower nor its default text model), left wide where the shrinking narrowed the
    language model: the text width. (PaliGemma, ColPali, Pi0, FLAVA, Voxtral hold such a width
    too, by default their text model's, unread or read alike: their verdicts are unchanged.)"""
    text = read(config, "text_config")
    width, own = read(text, "hidden_size") if text is not None else None, read(config, "hidden_size")
    if not (is_int(width) and is_int(own) and own != width):
        return
    if any(read(config, n) is not None for n in ("num_attention_heads", "num_hidden_layers")):
        return
    put(config, "hidden_size", width)


def merged_output_width(config: Any) -> None:
    """A multimodal config whose ``out_hidden_size`` is its tower's width after merging
    ``merge_size`` x ``merge_size`` patches (Muse Spark's: 1536 * 2 * 2 = 6144 by default, what
    its projector takes), left at the default where the shrinking narrowed the tower: the shrunk
    width times the merge, where the default config holds that product."""
    tower, out = read(config, "vision_config"), read(config, "out_hidden_size")
    if tower is None or not is_int(out):
        return
    width, merge = read(tower, "hidden_size"), read(tower, "merge_size")
    if not (is_int(width) and is_int(merge)) or out == width * merge**2:
        return
    default = sweep_config_build.default_config(config.model_type)
    d_tower = read(default, "vision_config")
    d_width, d_merge = read(d_tower, "hidden_size"), read(d_tower, "merge_size")
    if is_int(d_width) and is_int(d_merge) and read(default, "out_hidden_size") == d_width * d_merge**2:
        put(config, "out_hidden_size", width * merge**2)


def adapter_text_width(config: Any) -> None:
    """A sub-config that names the text model's width as its own ``text_hidden_size`` (Molmo2's
    adapter: its projector writes rows of that width into the text embeddings; the default
    config's 3584 does not even match its own default text model's 4096), left wide after the
    shrinking narrowed the text model: the shrunk width."""
    text = read(config, "text_config")
    width = read(text, "hidden_size") if text is not None else None
    if not is_int(width):
        return
    for sub in sweep_inputs.sub_configs(config)[1:]:
        if sub is not text and is_int(read(sub, "text_hidden_size")) and read(sub, "text_hidden_size") != width:
            put(sub, "text_hidden_size", width)


def merged_text_width(config: Any) -> None:
    """A multimodal config whose ``merged_hidden_size`` its ``__post_init__`` derives from the
    text model's width times ``spatial_merge_size`` squared (MiniMax-M3-VL's: 6144 * 2 * 2 =
    24576, what its projector takes), derived before the shrinking narrowed the text model: the
    shrunk width times the merge, where the default config holds that product."""
    text, tower, merged = read(config, "text_config"), read(config, "vision_config"), read(config, "merged_hidden_size")
    if text is None or tower is None or not is_int(merged):
        return
    width, merge = read(text, "hidden_size"), read(tower, "spatial_merge_size")
    if not (is_int(width) and is_int(merge)) or merged == width * merge**2:
        return
    default = sweep_config_build.default_config(config.model_type)
    d_width = read(read(default, "text_config"), "hidden_size")
    d_merge = read(read(default, "vision_config"), "spatial_merge_size")
    if is_int(d_width) and is_int(d_merge) and read(default, "merged_hidden_size") == d_width * d_merge**2:
        put(config, "merged_hidden_size", width * merge**2)


def queries_for_patches(config: Any) -> None:
    """A projector that reads a fixed number of learned queries per count of patches
    (Aria's ``projector_patch_to_query_dict``, {1225: 128, 4900: 256}: 35 and 70 patches a
    side) and refuses any other count: the shrunk tower's count of patches, ``(image_size //
    patch_size) ** 2``, given as many queries as it has patches, at most the fewest listed."""
    table, tower = read(config, "projector_patch_to_query_dict"), read(config, "vision_config")
    if not (isinstance(table, dict) and table) or tower is None:
        return
    size, patch = read(tower, "image_size"), read(tower, "patch_size")
    if not (is_int(size) and is_int(patch) and patch > 0):
        return
    patches = (size // patch) ** 2
    if patches and patches not in table:
        table[patches] = min(patches, *table.values())


def second_tower_layers_kept(config: Any) -> None:
    """A second (high-resolution) tower whose ``global_attn_indexes`` the outer model reads as
    indices of its hidden states (DeepSeek-VL hybrid's SAM tower: ``[2, 5, 8, 11]``, the first
    read): indices past the layers kept moved to its last layer. Only here: a SAM model of its
    own reads them as a set (past the layers kept, none), which the sweep leaves as it is."""
    tower = read(config, "high_res_vision_config")
    indices = read(tower, "global_attn_indexes") if tower is not None else None
    layers = read(tower, "num_hidden_layers") if tower is not None else None
    if isinstance(indices, (list, tuple)) and isinstance(layers, int) and layers > 0:
        put(tower, "global_attn_indexes", sorted({min(int(i), layers - 1) for i in indices}))


def heads_without_groups(config: Any) -> None:
    """A model whose eager attention function never repeats key/value heads (Unlimited OCR's
    ``eager_attention_forward``: no ``repeat_kv``, so a query of 4 heads meets keys of 2) and
    whose config has as many key/value heads as heads: the shrinking's 2 key/value heads made
    equal to the heads again (its SDPA path would run either way; eager needs them equal)."""

    heads, groups = read(config, "num_attention_heads"), read(config, "num_key_value_heads")
    if not (is_int(heads) and is_int(groups) and groups < heads):
        return
    forward = getattr(modelling_module(config), "eager_attention_forward", None)
    try:
        eager = inspect.getsource(forward) if forward is not None else ""
    except (OSError, TypeError):
        return
    if not eager:
        return
    if "repeat_kv" in eager or "num_key_value_groups" in eager or "enable_gqa" in eager:
        return
    default = type(config)()
    if read(default, "num_key_value_heads") in (None, read(default, "num_attention_heads")):
        put(config, "num_key_value_heads", heads)


REPAIRS = (
    resampler_width,
    heads_without_groups,
    second_tower_layers_kept,
    queries_for_patches,
    merged_output_width,
    merged_text_width,
    adapter_text_width,
    outer_width,
    stacked_output_width,
    feature_layers_kept,
)


def with_placeholders(model: Any, config: Any, params: Any, media: dict[str, Any]) -> dict[str, Any]:
    """``media`` with text around as many image placeholder tokens as the model's own
    ``get_image_features`` makes rows of it (``sweep_inputs.text_with_media``)."""
    import torch

    token = sweep_inputs._placeholder(config, "image")
    blocks: list[tuple[str, int, int]] = []
    if token is not None:
        rows = sweep_inputs.media_rows(model, "get_image_features", media) or 0
        blocks = [("image", token, rows // sweep_inputs.BATCH)]
    text = sweep_inputs.text_with_media(config, params, blocks, torch.Generator().manual_seed(0))
    return {**text, **media}


def _requires(model: Any, method: str, name: str) -> bool:
    """Whether ``model``'s ``method`` (its own or its inner model's) takes ``name`` with no default."""
    owner = sweep_inputs._owner(model, method)
    if owner is None:
        return False
    param = inspect.signature(getattr(owner, method)).parameters.get(name)
    return param is not None and param.default is inspect.Parameter.empty


def _required(model: Any, method: str) -> set[str]:
    """The parameters ``model``'s ``method`` takes with no default."""
    owner = sweep_inputs._owner(model, method)
    if owner is None:
        return set()
    params = inspect.signature(getattr(owner, method)).parameters.values()
    kinds = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    return {p.name for p in params if p.default is inspect.Parameter.empty and p.kind not in kinds}


def tile_mask_plans(model: Any, config: Any, params: Any) -> Iterator[Plan]:
    """A model that takes its image as tiles, (B, tiles, C, H, W), and requires a mask of the
    real ones, (B, tiles), True where real (Granite Docling's ``pixel_attention_mask``: its
    ``get_image_features`` has no default for it, where Idefics3's makes one): one real tile."""
    import torch

    if not ("input_ids" in params and "pixel_attention_mask" in params):
        return
    if not _requires(model, "get_image_features", "pixel_attention_mask"):
        return
    if _required(model, "get_image_features") - {"pixel_values", "pixel_attention_mask"}:
        return  # it wants more than the tiles and their mask (LFM2-VL's spatial shapes)
    configs = sweep_inputs._media_config(config, _VISION)
    channels = _int(sweep_inputs.first(configs, _CHANNELS), 3)
    size = _int(sweep_inputs.first(configs, ("image_size",)), 224)
    g = torch.Generator().manual_seed(0)
    pixels = torch.randn(sweep_inputs.BATCH, 1, channels, size, size, generator=g)
    mask = torch.ones(sweep_inputs.BATCH, 1, dtype=torch.bool)
    media = {"pixel_values": pixels, "pixel_attention_mask": mask}
    yield (
        "tiles with a mask of real tiles (B, 1, C, H, W)",
        ["text", "image"],
        lambda: with_placeholders(model, config, params, media),
    )


def clip_patch_plans(model: Any, config: Any, params: Any) -> Iterator[Plan]:
    """A language model whose tower takes pixels already cut into clip patches, one token each,
    (patches, T, P, P, C) channels last (Inkling's: its layers fold time and space into depth),
    told by a tower config with a ``temporal_patch_size`` but no image size or grid (a grid
    tower's patches are the grid plans'): four patches, each one image token; the channels-first
    layout next, for a tower that wants it."""
    import torch

    if not ("input_ids" in params and "pixel_values" in params) or {"image_grid_thw", "grid_thw"} & set(params):
        return
    tower = read(config, "vision_config")
    temporal, patch = read(tower, "temporal_patch_size"), read(tower, "patch_size")
    if tower is None or not (is_int(temporal) and is_int(patch)) or read(tower, "image_size") is not None:
        return
    channels = _int(read(tower, "num_channels"), 3)
    g = torch.Generator().manual_seed(0)
    last = torch.randn(4, temporal, patch, patch, channels, generator=g)
    for label, pixels in (("T, P, P, C", last), ("C, T, P, P", last.permute(0, 4, 1, 2, 3).contiguous())):
        media = {"pixel_values": pixels}
        yield f"clip patches (4, {label})", ["text", "image"], _placeholders_later(model, config, params, media)


def _with_placeholders_of(
    model: Any, config: Any, params: Any, make: Callable[[], dict[str, Any]]
) -> Callable[[], dict[str, Any]]:
    return lambda: with_placeholders(model, config, params, make())


def _placeholders_later(model: Any, config: Any, params: Any, media: dict[str, Any]) -> Callable[[], dict[str, Any]]:
    return lambda: with_placeholders(model, config, params, media)


def naflex_text_plans(model: Any, config: Any, params: Any) -> Iterator[Plan]:
    """A language model over a NaFlex tower (LFM2-VL's SigLIP 2): patches (B, N, C * P * P) with
    each image's (h, w) in patches and a mask of the real ones, as ``sweep_plans.naflex_plans``
    makes them for the tower alone, here with the image's placeholder tokens in the text (that
    plan's text holds none). A side of patches that is even, for a projector that unshuffles
    2 x 2 of them."""
    import torch

    if not {"input_ids", "pixel_values", "spatial_shapes", "pixel_attention_mask"} <= set(params):
        return
    if sweep_inputs._placeholder(config, "image") is None:
        return  # a dual encoder (SigLIP 2's): its text holds no image, naflex_plans serves it
    configs = sweep_inputs._media_config(config, _VISION)
    channels = _int(sweep_inputs.first(configs, ("num_channels",)), 3)
    patch = _int(sweep_inputs.first(configs, ("patch_size",)), 16)
    side = max(2, int(_int(sweep_inputs.first(configs, ("num_patches",)), 16) ** 0.5) // 2 * 2)
    batch = sweep_inputs.BATCH
    g = torch.Generator().manual_seed(0)
    media = {
        "pixel_values": torch.randn(batch, side * side, channels * patch * patch, generator=g),
        "spatial_shapes": torch.tensor([[side, side]] * batch),
        "pixel_attention_mask": torch.ones(batch, side * side, dtype=torch.bool),
    }
    yield (
        f"NaFlex patches with shapes (B, {side * side}, C * P * P)",
        ["text", "image"],
        _placeholders_later(model, config, params, media),
    )


def paired_resolution_plans(model: Any, config: Any, params: Any) -> Iterator[Plan]:
    """A model with two towers, one per resolution, that requires both images at once (DeepSeek-VL
    hybrid's ``pixel_values`` and ``high_res_pixel_values``): each (B, C, S, S) at its own tower's
    ``image_size``, the second tower's config named as its pixels are (``high_res_vision_config``)."""
    import torch

    if not ("input_ids" in params and "pixel_values" in params):
        return
    for name in params:
        prefix = name.removesuffix("pixel_values")
        if name == "pixel_values" or not name.endswith("_pixel_values"):
            continue
        towers = (read(config, "vision_config"), read(config, f"{prefix}vision_config"))
        if any(t is None for t in towers):
            continue
        g = torch.Generator().manual_seed(0)
        media: dict[str, Any] = {}
        for key, tower in zip(("pixel_values", name), towers):
            size, channels = _int(read(tower, "image_size"), 224), _int(read(tower, "num_channels"), 3)
            media[key] = torch.randn(sweep_inputs.BATCH, channels, size, size, generator=g)
        sizes = " and ".join(str(tuple(m.shape[-2:])) for m in media.values())
        yield (
            f"pixels at two resolutions, {sizes}",
            ["text", "image"],
            _placeholders_later(model, config, params, media),
        )


def merge_block_text_plans(model: Any, config: Any, params: Any) -> Iterator[Plan]:
    """A language model over a grid tower that takes channels-last blocks of merge x merge
    patches (Inkling 2's), as ``sweep_images.merge_block_plans`` makes them for the tower alone,
    here with each image's placeholder tokens in the text; offered after the usual grid patches
    (``sweep_inputs.image_layouts``) fail, so a Qwen2-VL-like model keeps its own."""
    from attnviz.bench import sweep_images

    if "input_ids" not in params or sweep_inputs._placeholder(config, "image") is None:
        return
    tower_params = {n: None for n in params if n != "input_ids"}
    for label, _, make in sweep_images.merge_block_plans(config, tower_params):
        yield label, ["text", "image"], _with_placeholders_of(model, config, params, make)


def pooled_crop_plans(model: Any, config: Any, params: Any) -> Iterator[Plan]:
    """A model whose tower takes crops already cut into patches, (crops, N, P * P * C), and whose
    adapter pools them into image tokens by indices (Molmo2's ``image_token_pooling``, (tokens,
    pool), -1 where a pool runs past the crop, and ``image_grids``, each image's (h, w) of
    low-resolution tokens and (h, w) of high-resolution ones): one crop per image of as many
    patches as the tower has positions, pooled 2 x 2 into a grid of low-resolution tokens, as
    many image tokens in the text, their ``mm_token_type_ids`` 1."""
    import math

    import torch

    if not {"input_ids", "pixel_values", "image_token_pooling", "image_grids"} <= set(params):
        return
    tower = read(config, "vision_config")
    patches, patch = read(tower, "num_position_embeddings"), read(tower, "patch_size")
    token = sweep_inputs._placeholder(config, "image")
    if tower is None or not (is_int(patches) and is_int(patch)) or token is None:
        return
    side = math.isqrt(patches)
    if side * side != patches:
        return
    channels, batch = _int(read(tower, "num_channels"), 3), sweep_inputs.BATCH
    rows = (side + 1) // 2  # 2 x 2 pools; an odd side's last pools hold padding (-1)
    pools = []
    for crop in range(batch):
        for r in range(rows):
            for c in range(rows):
                cells = [(2 * r + i, 2 * c + j) for i in range(2) for j in range(2)]
                pools.append([crop * patches + y * side + x if y < side and x < side else -1 for y, x in cells])
    g = torch.Generator().manual_seed(0)
    media = {
        "pixel_values": torch.randn(batch, patches, patch * patch * channels, generator=g),
        "image_token_pooling": torch.tensor(pools),
        "image_grids": torch.tensor([[rows, rows, 0, 0]] * batch),
    }

    def make() -> dict[str, Any]:
        blocks = [("image", token, rows * rows)]
        return {**sweep_inputs.text_with_media(config, params, blocks, torch.Generator().manual_seed(0)), **media}

    yield f"pooled crops ({batch}, {patches}, P * P * C), {rows} x {rows} tokens each", ["text", "image"], make


def plans(model: Any, config: Any, params: Any) -> Iterator[Plan]:
    """The plans of this module that ``model``'s forward takes."""
    yield from pooled_crop_plans(model, config, params)
    yield from paired_resolution_plans(model, config, params)
    yield from tile_mask_plans(model, config, params)
    yield from naflex_text_plans(model, config, params)
    yield from clip_patch_plans(model, config, params)


def late_plans(model: Any, config: Any, params: Any) -> Iterator[Plan]:
    """The plans of this module offered after the usual image layouts, before text alone."""
    yield from merge_block_text_plans(model, config, params)
