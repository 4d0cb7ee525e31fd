"""Config repairs and inputs for the vision and OCR families the capture sweep's small configs
did not build or run (issue 35), grouped by why they failed:

* a default config that leaves unset what its modelling code reads (a per-layer list of MLP
  kinds: DeepSeek-OCR 2's text model), or holds a tuple the code concatenates to a list
  (ViTMatte's ``fusion_hidden_sizes``);
* layer indices past the layers the shrinking kept (Mllama's tower reads hidden states at
  layers 3 ... 30 of 2), and counts of last layers as many as the layers kept (EoMT's 4 query
  layers of 2, which never add the queries);
* sizes tied across sub-configs the shrinking narrowed apart (a SAM encoder's neck feeding a
  second encoder its embeddings: DeepSeek-OCR 2), M-RoPE sections that must stay equal where the
  modelling code's own default has them equal (Ernie 4.5 VL's height and width);
* a video model whose frame count and frame size the config fixes (TVP's 48 frames of 448
  pixels, which ran out of memory): fewer, smaller frames, and the clip made at that size;
* a feature pyramid's neck whose input channels must be its backbone's (the PP-OCR detectors,
  UVDoc), which their default configs do not match.

Each repair is a rule for a kind of model, named in its docstring with what the modelling code
requires; ``REPAIRS`` run on every config inside the model's (``sweep_image_repairs``). The
plans (``plans``) are (label, kinds, make) as ``sweep_images.image_plans`` yields them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from attnviz.bench.sweep_configs import is_int, modelling_source, put, read

Plan = tuple[str, list[str], Callable[[], dict[str, Any]]]


def concatenated_lists(config: Any) -> None:
    """A size list the modelling code concatenates to a list (ViTMatte's ``[config.hidden_size] +
    config.fusion_hidden_sizes``) held as a tuple (its dataclass default): a list, as a checkpoint's
    JSON makes it."""
    tuples = [n for n, v in vars(config).items() if isinstance(v, tuple) and not n.startswith("_")]
    if not tuples:
        return
    source = modelling_source(config)
    for name in tuples:
        if re.search(r"\]\s*\+\s*(?:self\.)?config\." + re.escape(name) + r"\b", source):
            put(config, name, list(read(config, name)))


def documented_layer_kinds(config: Any) -> None:
    """A per-layer list of kinds a default config leaves None (DeepSeek-OCR 2's
    ``mlp_layer_types``, which its decoder layers index), documented with an example (``e.g.
    ["dense", "sparse", "sparse", ...]``): the example's kinds for the layers kept (its last kind
    repeated), so the kept layers hold one of each kind as a checkpoint's first layers do."""
    layers = read(config, "num_hidden_layers")
    doc = type(config).__doc__ or ""
    if not is_int(layers) or layers < 1:
        return
    for name in [n for n in vars(config) if n.endswith("_layer_types") and read(config, n) is None]:
        said = re.search(re.escape(name) + r" \(.*?\n(.*?)(?:\n    \w|\Z)", doc, re.S)
        example = re.search(r"\[((?:\s*\"\w+\",?)+)", said.group(1)) if said else None
        kinds = re.findall(r"\"(\w+)\"", example.group(1)) if example else []
        if kinds:
            put(config, name, (kinds + [kinds[-1]] * layers)[:layers])


#: Lists of layer indices a tower or a model acts at (Mllama's tower outputs the hidden states
#: of ``intermediate_layers_indices``; Granite 4 Vision injects features at the language model's
#: ``spatial_target_layers``).
_LAYER_LISTS = ("intermediate_layers_indices", "spatial_target_layers")


def layer_lists_kept(config: Any) -> None:
    """Layer indices past the layers kept (Mllama's tower's 3, 7, 15, 23, 30 of 2): each the
    last layer kept instead (index ``num_hidden_layers - 1``, a layer's output whether or not the
    model counts its embeddings among its hidden states, as Mllama's tower does not), as many as
    before, so the widths that count them stay right."""
    layers = read(config, "num_hidden_layers")
    if not is_int(layers) or layers < 1:
        return
    for name in _LAYER_LISTS:
        value = read(config, name)
        if isinstance(value, (list, tuple)) and all(is_int(i) for i in value) and any(i >= layers for i in value):
            put(config, name, type(value)(min(int(i), layers - 1) for i in value))


#: A count of the last layers that do something of their own, as the modelling code reads it
#: (EoMT's ``num_hidden_layers - self.config.num_blocks``: where its learned queries join).
_COUNTED_FROM_LAST = re.compile(r"num_hidden_layers\s*-\s*(?:self\.)?config\.(\w+)")


def last_layers_kept(config: Any) -> None:
    """A count of last layers (EoMT's ``num_blocks``, 4, the layers its queries and masked
    attention run in; Fun-ASR-Nano's timestamp layers, 20) that the modelling code counts back
    from ``num_hidden_layers`` and that the shrinking left at or past the layers kept (2): the
    first layer index it names is then never reached (EoMT never adds its queries, and its mask
    head reads 0 image channels). All the kept layers but the first, so both kinds of layer run."""
    layers = read(config, "num_hidden_layers")
    if not is_int(layers) or layers < 2:
        return
    for name in dict.fromkeys(_COUNTED_FROM_LAST.findall(modelling_source(config))):
        value = read(config, name)
        if is_int(value) and value >= layers:
            put(config, name, layers - 1)


def neck_feeds_encoder(config: Any) -> None:
    """A SAM encoder whose neck downsamples into the embeddings of a second encoder (DeepSeek-OCR
    2's ``sam_config`` and ``encoder_config``, concatenated with that encoder's learned queries):
    the neck's last channels are the second encoder's (shrunk) width."""
    sam, encoder = read(config, "sam_config"), read(config, "encoder_config")
    channels, width = read(sam, "downsample_channels"), read(encoder, "hidden_size")
    # a list (DeepSeek-OCR 2's) or a tuple (Unlimited OCR's), kept as given
    if isinstance(channels, (list, tuple)) and channels and is_int(width) and channels[-1] != width:
        put(sam, "downsample_channels", type(channels)([*channels[:-1], width]))


def mrope_sections_as_coded(config: Any) -> None:
    """M-RoPE sections the modelling code defaults itself (Ernie 4.5 VL's ``get("mrope_section",
    [22, 22, 20])``, height and width equal because it interleaves them), where the shrinking
    scaled another family's default and so broke an equality the code's default holds: the
    code's own, scaled to the same half head, the sections equal in it kept equal (the
    rounding's remainder to the last). Sections that keep those equalities are left as they
    are (a config's own, which the shrinking scaled)."""
    rope = read(config, "rope_parameters")
    if not (isinstance(rope, dict) and isinstance(rope.get("mrope_section"), list)):
        return
    coded = re.search(r"get\(\s*\"mrope_section\",\s*\[([\d,\s]+)\]\s*\)", modelling_source(config))
    if coded is None:
        return
    default = [int(s) for s in coded.group(1).split(",") if s.strip()]
    half = sum(rope["mrope_section"])
    if len(default) != len(rope["mrope_section"]) or len(default) < 2:
        return
    current = rope["mrope_section"]
    pairs = [(i, j) for i in range(len(default)) for j in range(i + 1, len(default)) if default[i] == default[j]]
    if all(current[i] == current[j] for i, j in pairs):
        return  # the config's own sections (or scaled ones) already keep what the code needs equal
    scaled = [max(1, s * half // sum(default)) for s in default]
    scaled[-1] += half - sum(scaled)
    if scaled[-1] >= 1:
        rope["mrope_section"] = scaled


def backbone_width(config: Any) -> None:
    """A head over a backbone that declares the backbone's width as its own ``hidden_size``
    (ViTMatte's 384, a ViTDet's; the config has no heads, so the shrinking left it while it
    narrowed the backbone): the backbone's width."""
    backbone = read(config, "backbone_config")
    width, own = read(backbone, "hidden_size"), read(config, "hidden_size")
    if is_int(width) and is_int(own) and own != width and read(config, "num_attention_heads") is None:
        put(config, "hidden_size", width)


def deepstack_projector(config: Any) -> None:
    """Granite 4 Vision's window Q-Former projectors, which its default config leaves unset
    (``downsample_rate`` and ``deepstack_layer_map`` None; a checkpoint sets them): the values its
    own tests use, a 1/2 rate over windows of 2 x 2 patches and one deepstack projection from the
    tower's last layer kept into the language model's first, on an image of 4 x 4 patches (an even
    side its 2 x 2 spatial offsets and its windows both divide; the tower's 7 x 7 did not) that
    is also its one tiling (``image_grid_pinpoints``); its spatial groups go to layers kept."""
    if "deepstack_layer_map" not in vars(config) or read(config, "deepstack_layer_map") is not None:
        return
    vision, text = read(config, "vision_config"), read(config, "text_config")
    patch, layers = read(vision, "patch_size"), read(vision, "num_hidden_layers")
    if not (is_int(patch) and is_int(layers) and is_int(read(text, "num_hidden_layers"))):
        return
    put(vision, "image_size", 4 * patch)
    put(config, "image_grid_pinpoints", [[4 * patch, 4 * patch]])
    if read(config, "downsample_rate") is None:
        put(config, "downsample_rate", "1/2")
    put(config, "deepstack_layer_map", [(layers, 0)])
    last = read(text, "num_hidden_layers") - 1
    targets = read(config, "spatial_target_layers")
    if isinstance(targets, list):
        put(config, "spatial_target_layers", [min(int(t), last) for t in targets])


#: Lists of a neck's input channels, one per feature map of its backbone.
_NECK_INPUTS = ("layer_list_out_channels",)


def declared_backbone(config: Any) -> None:
    """A backbone the default config builds of another model than the one its own class declares
    (PP-OCRv6's detectors: ``sub_configs_defaults`` names PP-LCNetV3 or HGNetV2 with their
    stages, the ``__post_init__`` builds a PP-LCNetV4 text-recognition backbone whose strides and
    one stage their necks cannot take): the declared one, shrunk as every config is."""
    if not any(n in vars(config) for n in _NECK_INPUTS + ("intraclass_block_config",)):
        return  # only under a neck the config sizes (a recognizer's, a DETR's default is left)
    declared = (getattr(type(config), "sub_configs_defaults", None) or {}).get("backbone_config")
    backbone, kind = read(config, "backbone_config"), getattr(declared, "model_type", None)
    if backbone is None or not isinstance(kind, str) or read(backbone, "model_type") == kind:
        return
    from transformers import AutoConfig

    from attnviz.bench import capture_sweep  # the sweep's shrinking, which runs these repairs

    try:
        new = AutoConfig.for_model(kind, **(getattr(declared, "init_kwargs", None) or {}))
    except Exception:  # noqa: BLE001 - a declaration this transformers cannot build is left alone
        return
    capture_sweep.shrink(new)
    put(config, "backbone_config", new)


def intraclass_blocks(config: Any) -> None:
    """The PP-OCR detectors' intra-class blocks, which the modelling code builds whatever the
    config says and their default leaves unset (``intraclass_block_config`` None): each
    convolution as its name says, (kernel, stride, padding) keeping the map's size: 1 x 1 to
    reduce and return the channels, (k, 1) vertical, (1, k) horizontal and (k, k) symmetric with
    k 7, 5, 3 for the long, mid and short ratios; and the neck's upsampling of each of its stages
    (``scale_factor_list``, unset too) 1, 2, 4, 8, as its feature pyramid halves per stage."""
    blocks = read(config, "intraclass_block_number")
    if "intraclass_block_config" not in vars(config) or read(config, "intraclass_block_config") is not None:
        return
    if not is_int(blocks):
        return
    recipe: dict[str, Any] = {"reduce_channel": [1, 1, 0], "return_channel": [1, 1, 0]}
    kernels = {  # a convolution's kernel from its name: vertical (k, 1), horizontal (1, k), symmetric
        "vertical_long_to_small_conv": lambda k: [k, 1],
        "horizontal_small_to_long_conv": lambda k: [1, k],
        "symmetric_conv_long": lambda k: [k, k],
    }
    for name, kernel_of in kernels.items():
        for ratio, k in (("long", 7), ("mid", 5), ("short", 3)):
            kernel = kernel_of(k)
            recipe[f"{name}_{ratio}ratio"] = [kernel, [1, 1], [n // 2 for n in kernel]]
    put(config, "intraclass_block_config", recipe)
    if read(config, "scale_factor_list") is None:
        put(config, "scale_factor_list", [2**i for i in range(blocks)])


def neck_channels(config: Any) -> None:
    """A neck whose input channels are listed in the config (PP-OCRv6 small's
    ``layer_list_out_channels``, 12, 18, 42, 360, which no default backbone makes): the channels
    of its backbone's feature maps, as the backbone built from its config reports them."""
    backbone = read(config, "backbone_config")
    names = [n for n in _NECK_INPUTS if isinstance(read(config, n), (list, tuple))]
    if backbone is None or not names:
        return
    try:
        from transformers import AutoBackbone

        channels = list(AutoBackbone.from_config(backbone).channels)
    except Exception:  # noqa: BLE001 - a backbone that does not build says nothing
        return
    for name in names:
        if len(read(config, name)) == len(channels):
            put(config, name, channels)


def every_stage_out(config: Any) -> None:
    """A head that concatenates one map per stage of its backbone (UVDoc's ``bridge_connector``
    takes ``bridge_connector[0]`` channels from each of its ``stage_configs``) over a default
    backbone that outputs its last stage only: every stage out."""
    backbone = read(config, "backbone_config")
    stages = read(backbone, "stage_configs")
    names = read(backbone, "stage_names")
    if not (isinstance(read(config, "bridge_connector"), (list, tuple)) and isinstance(stages, (list, tuple))):
        return
    if isinstance(names, list) and len(names) == len(stages) + 1 and read(backbone, "out_features") != names[1:]:
        try:
            backbone.set_output_features_output_indices(out_features=names[1:], out_indices=None)
        except Exception:  # noqa: BLE001 - a backbone that guards its stages keeps them
            return


#: Frames and frame size a video model whose clip the config fixes is shrunk to.
CLIP_FRAMES, CLIP_SIZE = 4, 128


def framed_clip(config: Any) -> None:
    """A video model whose prompter pads every frame to ``max_img_size`` and holds a prompt per
    frame (TVP: 48 frames of 448 x 448, out of memory on the sweep's limit): ``CLIP_FRAMES``
    frames of ``CLIP_SIZE`` pixels, its prompt band an eighth of the frame (the default's 96 of
    448 left none of a small one)."""
    frames, size, band = read(config, "num_frames"), read(config, "max_img_size"), read(config, "visual_prompt_size")
    if not (is_int(frames) and is_int(size) and is_int(band)):
        return
    put(config, "num_frames", min(frames, CLIP_FRAMES))
    if size > CLIP_SIZE:
        put(config, "max_img_size", CLIP_SIZE)
        put(config, "visual_prompt_size", CLIP_SIZE // 8)


REPAIRS = (
    concatenated_lists,
    backbone_width,
    documented_layer_kinds,
    layer_lists_kept,
    last_layers_kept,
    neck_feeds_encoder,
    mrope_sections_as_coded,
    framed_clip,
    deepstack_projector,
    declared_backbone,
    intraclass_blocks,
    neck_channels,
    every_stage_out,
)


def clip_plans(config: Any, params: Any) -> Iterator[Plan]:
    """A clip of ``num_frames`` frames of ``max_img_size`` pixels (TVP's, whose prompter pads to
    that size) with a few text tokens: (1, T, C, S, S), one clip, as TVP's own tests run it (its
    column positions are viewed with the batch's size: a batch of two fails)."""
    import torch

    frames, size = read(config, "num_frames"), read(config, "max_img_size")
    if not (is_int(frames) and is_int(size) and "pixel_values" in params and "input_ids" in params):
        return
    g = torch.Generator().manual_seed(0)
    clip = torch.randn(1, frames, 3, size, size, generator=g)
    ids = torch.randint(3, 100, (1, 8), generator=torch.Generator().manual_seed(1))

    def make() -> dict[str, Any]:
        out: dict[str, Any] = {"pixel_values": clip, "input_ids": ids}
        if "attention_mask" in params:
            out["attention_mask"] = torch.ones_like(ids)
        return out

    yield f"clip (1, {frames}, C, {size}, {size}) with text", ["video", "text"], make


def plans(model: Any, config: Any, params: Any) -> Iterator[Plan]:
    """The plans of this module that ``model``'s forward takes."""
    del model  # the plans read the forward's names and the config only
    yield from clip_plans(config, params)
