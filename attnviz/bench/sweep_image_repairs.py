"""Config repairs for image and video models whose sizes the capture sweep's shrinking breaks
(``capture_sweep.shrink``, then ``sweep_repairs.repair``, which runs these on every config inside
the model's): a layer index past the layers kept, ... Each repair is a rule for a kind of model,
named in its docstring with what the modelling code requires; a config none applies to is left
as it is."""

from __future__ import annotations

from typing import Any

from attnviz.bench import sweep_config_build, sweep_image_tokens, sweep_vision_more
from attnviz.bench.sweep_configs import is_int, modelling_source, put, read

#: Single layer indices a tower acts at (MiniCPM-V's merger after layer ``insert_layer_id``).
_LAYER_INDICES = ("insert_layer_id",)


def layer_index_kept(config: Any) -> None:
    """A tower that acts after a given layer (MiniCPM-V's window merger after layer 6 of 27)
    acts after its last layer where the shrinking removed that one, so the (two) layers kept
    still run the step."""
    layers = read(config, "num_hidden_layers")
    if not is_int(layers) or layers < 1:
        return
    for name in _LAYER_INDICES:
        value = read(config, name)
        if is_int(value) and value >= layers:
            put(config, name, layers - 1)


def _square(value: Any) -> int | None:
    if isinstance(value, (list, tuple)) and value:
        value = value[0]
    return int(value) if is_int(value) and value > 0 else None


def promptable_segmenter(config: Any) -> None:
    """SAM and its kin (a config with a prompt encoder and a mask decoder): the three parts meet
    on the image embeddings, so after the shrinking (which narrowed the mask decoder, whose heads
    it sees, but not the prompt encoder, and shrank the image) they share the vision neck's
    width (``output_channels``, ``fpn_hidden_size``), the prompt encoder's embedding grid is
    its image over its patches, the neck's feature sizes are that grid at each level (their
    ratios kept), and a Hiera backbone (SAM 2's) takes the same image, its first stage as wide
    as its ``hidden_size``."""
    prompt, decoder = read(config, "prompt_encoder_config"), read(config, "mask_decoder_config")
    vision = read(config, "vision_config")
    if prompt is None or decoder is None or vision is None:
        return
    neck = next((read(vision, n) for n in ("output_channels", "fpn_hidden_size") if is_int(read(vision, n))), None)
    if neck is not None:
        put(prompt, "hidden_size", neck)
        put(decoder, "hidden_size", neck)
        if is_int(read(decoder, "iou_head_hidden_dim")):
            put(decoder, "iou_head_hidden_dim", neck)
        if is_int(read(vision, "num_pos_feats")):  # SAM's positions: sines and cosines of the neck's width
            put(vision, "num_pos_feats", neck // 2)
    image, patch = _square(read(prompt, "image_size")), _square(read(prompt, "patch_size"))
    if image is None or patch is None:
        return
    grid = image // patch
    if "image_embedding_size" in vars(prompt):
        put(prompt, "image_embedding_size", grid)
    sizes = read(vision, "backbone_feature_sizes")
    if isinstance(sizes, list) and sizes and all(isinstance(s, (list, tuple)) and s for s in sizes):
        last = sizes[-1][0]
        put(vision, "backbone_feature_sizes", [[grid * s[0] // last, grid * s[-1] // last] for s in sizes])
    backbone = read(vision, "backbone_config")
    if backbone is not None and isinstance(read(backbone, "image_size"), (list, tuple)):
        put(backbone, "image_size", [image, image])


#: The image a Hiera backbone is shrunk to: 32 x 32 positions after its 4-pixel stride, each
#: stage's windows then still fit.
HIERA_IMAGE = 128


def hiera_stages(config: Any) -> None:
    """A Hiera backbone (SAM 2's) whose first stage is ``embed_dim_per_stage[0]`` wide, which its
    ``hidden_size`` must equal (the shrinking narrowed only the latter), at an image of
    ``HIERA_IMAGE`` pixels (its default's 1024 make a million positions in the first stage)."""
    stages, size = read(config, "embed_dim_per_stage"), read(config, "image_size")
    if not (isinstance(stages, (list, tuple)) and stages and is_int(read(config, "hidden_size"))):
        return
    put(config, "hidden_size", stages[0])
    if isinstance(size, (list, tuple)) and size and is_int(size[0]) and size[0] > HIERA_IMAGE:
        put(config, "image_size", [HIERA_IMAGE, HIERA_IMAGE])


def feature_sizes(config: Any) -> None:
    """A vision neck that reshapes each level of its backbone to ``backbone_feature_sizes``
    (SAM 2's): the first level the backbone's image over its stride, the others in the ratios the
    default gives them."""
    sizes, backbone = read(config, "backbone_feature_sizes"), read(config, "backbone_config")
    image, stride = read(backbone, "image_size"), read(backbone, "patch_stride")
    image, stride = _square(image), _square(stride)
    if image is None or stride is None or not isinstance(sizes, list) or not sizes:
        return
    if not all(isinstance(s, (list, tuple)) and s and is_int(s[0]) for s in sizes):
        return
    top, first_level = sizes[0][0], image // stride
    put(config, "backbone_feature_sizes", [[first_level * s[0] // top, first_level * s[-1] // top] for s in sizes])


def scaled_patches(config: Any) -> None:
    """A multi-scale encoder (DepthPro) that cuts its scaled images into patches of
    ``patch_size`` pixels, each one image of its patch model (whose ``image_size`` must be that
    size: the shrinking made it smaller), and reads the patch model's hidden states at
    ``intermediate_hook_ids`` (layers the shrinking removed: the last layers kept, in order)."""
    ratios, patch_model = read(config, "scaled_images_ratios"), read(config, "patch_model_config")
    if not isinstance(ratios, (list, tuple)) or patch_model is None:
        return
    size = _square(read(patch_model, "image_size"))
    if size is not None and is_int(read(config, "patch_size")):
        put(config, "patch_size", size)
    hooks, layers = read(config, "intermediate_hook_ids"), read(patch_model, "num_hidden_layers")
    if isinstance(hooks, (list, tuple)) and is_int(layers) and any(h >= layers for h in hooks):
        kept = sorted(range(layers), reverse=True)[: len(hooks)]
        kept += [0] * (len(hooks) - len(kept))
        order = sorted(range(len(hooks)), key=lambda i: -hooks[i])  # the deepest hook the last layer
        new = [0] * len(hooks)
        for rank, i in enumerate(order):
            new[i] = kept[rank]
        put(config, "intermediate_hook_ids", type(hooks)(new))


def answer_tokens(config: Any) -> None:
    """A classifier that reads the logits of answer tokens its modelling code names by a default
    the config does not hold (ShieldGemma 2's ``getattr(config, "yes_token_index", 10_784)``):
    each such token an id of its own inside the shrunk vocabulary, set in the config."""
    import re

    from attnviz.bench.sweep_inputs import special_ids

    source = modelling_source(config)
    if not source:
        return
    text = sweep_config_build.text_config(config)
    vocab = read(text, "vocab_size")
    if not is_int(vocab):
        return
    taken = special_ids(config)
    for name, default in re.findall(r'getattr\(\s*config,\s*"(\w+_token_(?:index|id))",\s*([\d_]+)\s*\)', source):
        if name in vars(config) or int(default) < vocab:
            continue
        free = next(i for i in range(min(vocab, 1000) - 100, 0, -1) if i not in taken)
        put(config, name, free)
        taken.add(free)


#: Queries a grouped two-stage detector keeps: fewer than the positions of the sweep's small images.
DETECTOR_QUERIES = 16
#: A detector's image over a timm backbone: the size its default Swin was trained at, 7 x 7
#: windows at the last stage.
DETECTOR_IMAGE = 224


def grouped_detector(config: Any) -> None:
    """LW-DETR and RF-DETR (``group_detr``), and two-stage detectors (Grounding DINO): their
    queries are the encoder's best ``num_queries`` positions, more (300) than the shrunk image has (64), so at most
    ``DETECTOR_QUERIES``; and a projector with no scale at all (LW-DETR's default, empty
    ``projector_scale_factors``, which its model concatenates) gets the one scale its
    documentation allows without resampling (1.0), with the channels its ``__post_init__``
    derives from the scales."""
    if read(config, "two_stage") is True:  # Grounding DINO's queries: its encoder's best positions too
        if is_int(read(config, "num_queries")) and read(config, "num_queries") > DETECTOR_QUERIES:
            put(config, "num_queries", DETECTOR_QUERIES)
        return
    if not is_int(read(config, "group_detr")):
        return
    if is_int(read(config, "num_queries")) and read(config, "num_queries") > DETECTOR_QUERIES:
        put(config, "num_queries", DETECTOR_QUERIES)
    scales = read(config, "projector_scale_factors")
    if isinstance(scales, (list, tuple)) and not scales and is_int(read(config, "d_model")):
        put(config, "projector_scale_factors", [1.0])
        put(config, "projector_in_channels", [read(config, "d_model")])
        put(config, "num_feature_levels", 1)


def level_channels(config: Any) -> None:
    """A detector whose encoder hands every feature level to the decoder at its own width
    (OmDet-Turbo's ``vision_features_channels``, one entry per level, each ``encoder_hidden_dim``
    by default: a list the shrinking leaves at 256 when it narrows the encoder to 64): the
    encoder's width for each level; its image at most ``DETECTOR_IMAGE`` (the Swin it is built on
    takes 224 px; 640 by default); and its decoder's queries (900), the encoder's best positions
    as a two-stage detector's, at most ``DETECTOR_QUERIES``. Its decoder reads a projection of
    the class embeddings that its code makes only where they are not the decoder's width (both
    64 once shrunk; 512 and 256 by default): twice the decoder's width, for the text tower too,
    whose width the class embeddings (projected) and the task embeddings (not) both have."""
    width, levels = read(config, "encoder_hidden_dim"), read(config, "vision_features_channels")
    if not (is_int(width) and isinstance(levels, (list, tuple)) and levels and all(is_int(v) for v in levels)):
        return
    if len(set(levels)) == 1 and levels[0] > width:
        put(config, "vision_features_channels", [width] * len(levels))
    if is_int(read(config, "num_queries")) and read(config, "num_queries") > DETECTOR_QUERIES:
        put(config, "num_queries", DETECTOR_QUERIES)
    timm = read(config, "timm_kwargs")  # its timm Swin at 640 px: 1058 windows a layer, a 158 MB capture
    if isinstance(timm, dict) and is_int(timm.get("img_size")) and timm["img_size"] > DETECTOR_IMAGE:
        timm["img_size"] = DETECTOR_IMAGE
        put(config, "image_size", DETECTOR_IMAGE)
        put(read(config, "backbone_config"), "img_size", DETECTOR_IMAGE)
    decoder, classes = read(config, "decoder_hidden_dim"), read(config, "class_embed_dim")
    text = read(config, "text_config")
    if is_int(decoder) and classes == decoder and text is not None and is_int(read(text, "hidden_size")):
        for name in ("class_embed_dim", "text_projection_in_dim", "text_projection_out_dim"):
            put(config, name, 2 * decoder)
        put(text, "hidden_size", 2 * decoder)


def pooler_width(config: Any) -> None:
    """A tower whose pooler's width its config derived from the width at construction (ViT's
    ``pooler_output_size``, 768, left there when the shrinking narrowed the tower): the width,
    which a dual encoder's projection takes (``vision_embed_dim`` is the tower's width)."""
    width, pooled = read(config, "hidden_size"), read(config, "pooler_output_size")
    if is_int(width) and is_int(pooled) and pooled > width:
        put(config, "pooler_output_size", width)


def shuffled_adapter(config: Any) -> None:
    """Llama 4's vision adapter: its pixel shuffle makes each token ``1 / ratio**2`` times as wide
    as the tower (what ``intermediate_size`` must be: 1408 * 4 = 5632 in the default), then
    projects to ``projector_input_dim`` / ``projector_output_dim``, the tower's output
    (``vision_output_dim``, which the multimodal projector takes): all tied to the shrunk width."""
    ratio, width = read(config, "pixel_shuffle_ratio"), read(config, "hidden_size")
    if not (isinstance(ratio, float) and 0 < ratio < 1 and is_int(width)) or "projector_input_dim" not in vars(config):
        return
    put(config, "intermediate_size", int(round(width / ratio**2)))
    for name in ("projector_input_dim", "projector_output_dim", "vision_output_dim"):
        if is_int(read(config, name)):
            put(config, name, width)


#: Latent positions per side a VQ autoencoder is shrunk to (Janus's 32: 1024 per image).
VQ_GRID = 8


def vq_grid(config: Any) -> None:
    """A VQ autoencoder (Janus's) whose decoder takes ``num_patches`` x ``num_patches`` latent
    tokens: at most ``VQ_GRID`` per side (its image, ``sweep_images.latent_plans``, is that grid
    times the encoder's downsampling)."""
    if isinstance(read(config, "channel_multiplier"), (list, tuple)) and is_int(read(config, "num_patches")):
        if read(config, "num_patches") > VQ_GRID:
            put(config, "num_patches", VQ_GRID)


#: Frames a video tower is shrunk to.
VIDEO_FRAMES = 4


def short_clip(config: Any) -> None:
    """A video tower cut into tubelets (VideoPrism's (1, 18, 18)), whose position tables are
    sized by ``num_frames`` and ``image_size``: ``VIDEO_FRAMES`` frames of 8 x 8 tubelets, and
    every stack of its own (``num_spatial_layers``, ``num_temporal_layers``...) two layers, as
    the shrinking makes the others; its default (16 frames of 16 x 16) gives a 4096-token
    attention the sweep's opening of the capture refuses to render whole."""
    frames, tubelet = read(config, "num_frames"), read(config, "tubelet_size")
    if not (is_int(frames) and isinstance(tubelet, (list, tuple)) and len(tubelet) == 3):
        return
    put(config, "num_frames", min(frames, VIDEO_FRAMES * int(tubelet[0])))
    if is_int(read(config, "image_size")) and is_int(tubelet[1]):
        put(config, "image_size", min(read(config, "image_size"), 8 * int(tubelet[1])))
    for name in list(vars(config)):
        value = read(config, name)
        if name.startswith("num_") and name.endswith("_layers") and is_int(value) and value > 2:
            put(config, name, 2)


REPAIRS = (
    (
        short_clip,
        vq_grid,
        pooler_width,
        shuffled_adapter,
        layer_index_kept,
        promptable_segmenter,
        hiera_stages,
        feature_sizes,
        scaled_patches,
        answer_tokens,
        grouped_detector,
        level_channels,
    )
    + sweep_vision_more.REPAIRS
    + sweep_image_tokens.REPAIRS
)  # the vision and OCR families', the VQ and aligner's
