"""Config repairs for image and video models whose sizes the capture sweep's shrinking breaks
(``capture_sweep.shrink``, then ``sweep_repairs.repair``, which runs these on every config inside
the model's): a layer index past the layers kept, ... Each repair is a rule for a kind of model,
named in its docstring with what the modelling code requires; a config none applies to is left
as it is."""

from __future__ import annotations

from typing import Any

from attnviz.bench.sweep_configs import is_int, put, read

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


REPAIRS = (layer_index_kept, promptable_segmenter, hiera_stages, feature_sizes)
