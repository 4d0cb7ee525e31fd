"""Inputs a forward requires by name beyond the usual ones (``input_ids``, ``pixel_values``,
``input_features``, ``input_values``), made from what each parameter means: its name, its
annotation, its default and the shape line of the forward's own docstring
(``name (`torch.Tensor` of shape `(batch_size, 1, sequence_length)`)`` or ``name: ...
[batch_size, seq_len, hidden_size]``), each dimension sized from the config (its width, its mel
bins, its channels) or from an input already made that names the same dimension (a prompt image
the size of the image).

Used by the capture sweep: ``fill`` completes the inputs of every plan with what the forward still
requires (``sweep_inputs.build``), ``plans`` makes whole inputs for a forward that takes none of
the usual ones (a vocoder's spectrogram, a resampler's context, SAM 3's parts fed their sibling's
features), ``retried`` changes the inputs as a model's refusal asks (a language it needs, ids it
takes only as embeddings). A family that cannot run from its config alone is said in one line
(``reason``).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterator
from typing import Any

from attnviz.bench.sweep_configs import is_int, read

Plan = tuple[str, list[str], Callable[[], dict[str, Any]]]

BATCH = 2
#: The length of every sequence made here (tokens, frames, queries).
LENGTH = 8
#: A grid of patches or features made here: SIDE x SIDE.
SIDE = 4
_USUAL = ("input_ids", "pixel_values", "input_features", "input_values")

# "name (`torch.LongTensor` of shape `(batch_size, 1, sequence_length)`" (transformers' own format)
_DOC = re.compile(r"^\s*(\w+) \(`([^`]*)`[^\n]*?of shape `\(([^`]*)\)`", re.M)
# "name: Text prompt features [batch_size, seq_len, hidden_size]" (SAM 3's parts)
_DOC_BRACKETS = re.compile(r"^\s*(\w+): [^\n\[]*\[([\w*, ]+)\]", re.M)

_BATCH_DIMS = {"batch", "batch_size", "num_audios", "num_crops", "num_images", "num_chunks", "bsz"}
_WIDTH_DIMS = {"hidden_size", "embed_dim", "dim", "d_model", "hidden_dim"}
_BIN_DIMS = {"mel_bins", "n_mel_bins", "num_mel_bins", "n_mels", "feature_size"}
_CHANNEL_DIMS = {"num_channels", "channels"}
_IMAGE_DIMS = {"height", "width"}
_GRID_DIMS = {"grid_height", "grid_width", "h", "w"}
_WIDTHS = ("hidden_size", "d_model", "embed_dim", "dim", "hidden_dim")
_BINS = ("num_mel_bins", "n_mels", "mel_dim", "model_in_dim", "feature_size", "n_mel_bins", "num_mels")
_CHANNELS = ("num_channels", "in_channels", "in_chans")
_INPUT_WIDTHS = ("input_size", "input_feat_size")  # input_dim: sweep_extras.embedding_plans'


def _first(config: Any, names: tuple[str, ...], default: int) -> int:
    from attnviz.bench.sweep_inputs import sub_configs

    for c in sub_configs(config):
        for name in names:
            value = read(c, name)
            if is_int(value) and value > 0:
                return int(value)
    return default


def _read_any(config: Any, name: str) -> Any:
    from attnviz.bench.sweep_inputs import sub_configs

    return next((v for c in sub_configs(config) if (v := read(c, name)) is not None), None)


def doc_shapes(fn: Callable[..., Any]) -> dict[str, tuple[str, list[str]]]:
    """Each parameter the docstring gives a shape: name -> (its type, its dimensions' names)."""
    doc = inspect.getdoc(fn) or ""
    out: dict[str, tuple[str, list[str]]] = {}
    for name, kind, dims in _DOC.findall(doc):
        out.setdefault(name, (kind, [d.strip() for d in dims.split(",") if d.strip()]))
    for name, dims in _DOC_BRACKETS.findall(doc):
        out.setdefault(name, ("torch.Tensor", [d.strip() for d in dims.split(",") if d.strip()]))
    return out


def _annotation(param: inspect.Parameter) -> str:
    a = param.annotation
    return "" if a is inspect.Parameter.empty else a if isinstance(a, str) else str(getattr(a, "__name__", a))


def _optional(param: inspect.Parameter) -> bool:
    """Required but allowed to be None (``mask: torch.Tensor | None``): None is a valid input."""
    text = str(param.annotation)
    return param.default is inspect.Parameter.empty and ("None" in text or "Optional" in text)


class Sizes:
    """The size of each named dimension: bound by an input already made, else from the config."""

    def __init__(self, config: Any, shapes: dict[str, tuple[str, list[str]]], inputs: dict[str, Any]) -> None:
        self.config = config
        self.bound: dict[str, int] = {}
        for name, value in inputs.items():
            dims = shapes.get(name, ("", []))[1]
            if hasattr(value, "shape") and len(dims) == value.dim():
                for dim, size in zip(dims, value.shape, strict=True):
                    self.bound.setdefault(dim, int(size))
        masks = [v for n, v in inputs.items() if n.endswith("features_mask") and hasattr(v, "shape")]
        #: frames of the features beside a waveform (a codec encodes both and joins them frame by frame)
        self.frames = int(masks[0].shape[-1]) if masks else 4 * LENGTH
        pixels: Any = inputs.get("pixel_values")
        if (
            pixels is not None and hasattr(pixels, "dim") and pixels.dim() == 4
        ):  # a second image (a prompt) is the image's size
            for dim, size in zip(("num_channels", "height", "width"), pixels.shape[1:], strict=True):
                self.bound.setdefault(dim, int(size))

    def size(self, dim: str, param: str) -> int:
        if dim.isdigit():
            return int(dim)
        if dim.startswith("config."):  # "config.n_docs": the config's own size
            value = _read_any(self.config, dim[len("config.") :])
            return int(value) if is_int(value) and 0 < value <= 4096 else LENGTH
        if dim in self.bound:
            return self.bound[dim]
        if "*" in dim:  # "hidden_size * len(vision_feature_layer)", "height*width": a product
            product = 1
            for factor in (f.strip() for f in dim.split("*")):
                listed = re.fullmatch(r"len\((\w+)\)", factor)
                value = _read_any(self.config, listed.group(1)) if listed else None
                if listed:
                    product *= len(value) if isinstance(value, (list, tuple)) else 1
                else:
                    product *= SIDE if factor in _IMAGE_DIMS | _GRID_DIMS else self.size(factor, param)
            return product
        if dim in _BATCH_DIMS:
            size = BATCH
        elif dim in _WIDTH_DIMS:
            size = _first(self.config, _WIDTHS, 64)
        elif dim in _BIN_DIMS:
            size = _first(self.config, _BINS, 80)
        elif dim in _CHANNEL_DIMS:
            size = _first(self.config, _CHANNELS, 3)
        elif dim in _IMAGE_DIMS or dim in ("image_size", "frame_size"):  # TVP's frames are padded to max_img_size
            size = _first(self.config, ("max_img_size", "image_size"), 32)
        elif dim in _GRID_DIMS:
            size = SIDE
        elif dim == "sequence_length" and param == "input_values":  # a waveform: the features' frames of samples
            size = self.frames * _first(self.config, ("hop_length", "hop_size"), 320)
        elif 0 < _first(self.config, (dim,), 0) <= 4096:  # a size the config names (num_queries)
            size = _first(self.config, (dim,), 0)
        else:  # a sequence: the config's own length for it (OneFormer's task_seq_len), else a few items
            prefix = param.split("_")[0]
            size = _first(self.config, (f"{prefix}_seq_len", f"{prefix}_sequence_length", f"{prefix}_length"), LENGTH)
        self.bound[dim] = size
        return size


def _tensor(name: str, kind: str, shape: list[int], generator: Any, image: bool = False) -> Any:
    """A tensor of ``shape`` for the parameter ``name``: a mask of ones (every item real), small
    ids (indices valid for any table of 4 or more), else random values."""
    import torch

    if "mask" in name and image:  # a mask drawn as a picture (SegGPT's prompt masks)
        return torch.ones(*shape)
    if "mask" in name:
        return torch.ones(*shape, dtype=torch.bool if "Bool" in kind else torch.long)
    if "Long" in kind or name.endswith(("_ids", "_idx", "_index")):
        return torch.randint(1, 3, tuple(shape), generator=generator)  # 1 or 2: no padding id, any table of 3
    return torch.randn(*shape, generator=generator)


def required(params: Any) -> list[str]:
    return [
        n
        for n, p in params.items()
        if p.default is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]


def fill(model: Any, config: Any, params: Any, inputs: dict[str, Any]) -> dict[str, Any]:
    """``inputs`` with every parameter the forward requires and they lack: None where its
    annotation allows it, a count of the leading items for an ``int`` (DeepSeek-OCR 2's
    ``num_patches``), samples per item for ``*_lengths``, patch positions for
    ``*_position_ids`` of patches, else a tensor of the docstring's shape (a prompt image the
    size of the image, ids of a task, a waveform beside its spectrogram)."""
    import torch

    missing = [n for n in required(params) if n not in inputs]
    if not missing:
        return inputs
    out = dict(inputs)
    shapes = doc_shapes(model.forward)
    sizes = Sizes(config, shapes, out)
    g = torch.Generator().manual_seed(3)
    # lists of feature maps first: a sequence beside them holds their last map's positions
    missing.sort(key=lambda n: not str(params[n].annotation).startswith("list[torch.Tensor]"))
    for name in missing:
        param = params[name]
        made = _known(name, config, out, g, param)
        if made is not None:
            out[name] = made
            if isinstance(made, list):  # SAM 3's encoder: the levels' positions beside them
                sizes.bound.setdefault("seq_len", int(made[-1].shape[-1] * made[-1].shape[-2]))
                twin = name.replace("_features", "_pos_embeds")
                if twin != name and twin in params and twin not in out:
                    out[twin] = [torch.randn(m.shape, generator=g) for m in made]
        elif _optional(param):
            out[name] = None
        elif _annotation(param) == "int":  # how many of the sequence's items lead (an image's patches)
            length = next((v.shape[1] for v in out.values() if hasattr(v, "dim") and v.dim() >= 2), LENGTH)
            out[name] = max(1, int(length) // 2)
        elif name in shapes:
            kind, dims = shapes[name]
            out[name] = _tensor(name, kind, [sizes.size(d, name) for d in dims], g, "num_channels" in dims)
        elif "Long" in str(param.annotation):  # ids with no shape said: two per item, each 1 or 2
            # (valid positions, counts and indices for any sequence of 3 or more; Jev's marks)
            out[name] = torch.randint(1, 3, (BATCH, 2), generator=g)
    return out


def _known(name: str, config: Any, inputs: dict[str, Any], generator: Any, param: Any = None) -> Any:
    """Inputs whose meaning no shape line gives: sized by the inputs beside them, or a list of
    feature maps (B, width, S, S) where the forward takes a list of tensors (SAM 3's parts fed
    their sibling's levels: finest first, one more than the upsampling stages)."""
    import torch

    if param is not None and str(param.annotation).startswith("list[torch.Tensor]"):
        width = _first(config, _WIDTHS, 64)
        levels = 1 + _first(config, ("num_upsampling_stages",), 0) if "backbone" in name else 1
        return [
            torch.randn(BATCH, width, SIDE * 2**k, SIDE * 2**k, generator=generator) for k in reversed(range(levels))
        ]

    if name.endswith("_lengths"):  # samples per item: every frame real (Dots3's chunk_sample_lengths)
        main = next((v for v in inputs.values() if hasattr(v, "dim") and v.dim() >= 2), None)
        if main is None:
            return None
        hop = _first(config, ("hop_length", "hop_size"), 1)
        return torch.full((main.shape[0],), int(main.shape[-1]) * hop, dtype=torch.long)
    if name.endswith("position_ids") and "pixel_values" in inputs:  # each patch's (x, y), row by row
        pixels = inputs["pixel_values"]
        patches = int(pixels.shape[1])
        side = max(1, int(patches**0.5))
        grid = torch.stack(torch.meshgrid(torch.arange(side), torch.arange(side), indexing="xy"), -1).reshape(-1, 2)
        return grid.expand(pixels.shape[0], -1, -1).clone()
    return None


def _pixels(config: Any, generator: Any) -> Any:
    import torch

    channels = _first(config, _CHANNELS, 3)
    size = _first(config, ("image_size",), 32)
    return torch.randn(BATCH, channels if channels <= 4 else 3, size, size, generator=generator)


def _filled(model: Any, config: Any, params: Any, made: dict[str, Any]) -> Callable[[], dict[str, Any]]:
    return lambda: fill(model, config, params, made)


def plans(model: Any, config: Any, params: Any, last: bool = False) -> Iterator[Plan]:
    """Whole inputs for a forward that requires none of the usual ones, each made from what its
    parameters mean; also a tower's patches with their positions (Gemma 4's). ``last``: only
    the plan made from the docstring alone, tried after every other plan of the sweep."""
    import torch

    if last:
        yield from _docstring_plan(model, config, params)
        return

    need = required(params)
    if "pixel_position_ids" in need and "pixel_values" in need:  # patches (B, N, C * P * P) and their (x, y)
        patch = _first(config, ("patch_size",), 16)
        pool = _first(config, ("pooling_kernel_size",), 1)
        side = SIDE * pool  # whole pooling windows
        g = torch.Generator().manual_seed(0)
        pixels = torch.randn(BATCH, side * side, 3 * patch * patch, generator=g)

        def patches() -> dict[str, Any]:
            return fill(model, config, params, {"pixel_values": pixels})

        yield f"patches with positions (B, {side * side}, C * P * P)", ["image"], patches
    size = _read_any(config, "image_size")
    if "prompt_pixel_values" in need and isinstance(size, (list, tuple)) and len(size) == 2:
        # SegGPT stacks the prompt above the image: each is half the model's height
        g = torch.Generator().manual_seed(0)
        pixels = torch.randn(BATCH, _first(config, _CHANNELS, 3), int(size[0]) // 2, int(size[1]), generator=g)
        yield (
            "image and prompt (B, C, H / 2, W)",
            ["image"],
            lambda: fill(model, config, params, {"pixel_values": pixels}),
        )
    if set(_USUAL) & set(need) or (not need and set(_USUAL) & set(params)):
        return
    main = getattr(model, "main_input_name", "")
    spectrogram = next((n for n in ("spectrogram", "mel_spectrogram") if n in need), None)
    if spectrogram is not None:  # a vocoder: (B, frames, bins) or (B, bins, frames)
        bins = _first(config, _BINS, 80)
        g = torch.Generator().manual_seed(0)
        for label, shape in (("frames, bins", (BATCH, 4 * LENGTH, bins)), ("bins, frames", (BATCH, bins, 4 * LENGTH))):
            made: dict[str, Any] = {spectrogram: torch.randn(*shape, generator=g)}
            yield f"spectrogram (B, {label})", ["audio"], _filled(model, config, params, made)
    if main == "pixel_values" and "hidden_states" in need:  # a backbone that names its pixels hidden_states
        pixels = _pixels(config, torch.Generator().manual_seed(0))
        yield (
            "pixels as hidden_states (B, C, H, W)",
            ["image"],
            lambda: fill(model, config, params, {"hidden_states": pixels}),
        )
    for name in (n for n in ("hidden_states", "inputs_embeds") if n in need):
        # features into an encoder's own embedding (Phi-4's audio: input_size), not its width
        for width in dict.fromkeys(_first(config, (w,), 0) for w in _INPUT_WIDTHS):
            if width:
                states = torch.randn(BATCH, 4 * LENGTH, width, generator=torch.Generator().manual_seed(0))
                yield (
                    f"states (B, L, {width})",
                    ["states"],
                    _filled(model, config, params, {name: states}),
                )


def _docstring_plan(model: Any, config: Any, params: Any) -> Iterator[Plan]:
    import torch

    need = required(params)
    if set(_USUAL) & set(need) or (not need and set(_USUAL) & set(params)):
        return
    shapes = doc_shapes(model.forward)
    lists = [n for n in need if str(params[n].annotation).startswith("list[torch.Tensor]")]
    if need and all(n in shapes or n in lists or _optional(params[n]) for n in need):
        # a part's optional features from its sibling too (SAM 3's mask decoder attends only to a prompt)
        features = [n for n in params if n.endswith("_features") and n not in need and n in shapes]
        features += [n.replace("_features", "_mask") for n in features if n.replace("_features", "_mask") in shapes]

        def named() -> dict[str, Any]:
            made = fill(model, config, params, {})
            sizes, g = Sizes(config, shapes, made), torch.Generator().manual_seed(8)
            for n in features:
                kind, dims = shapes[n]
                made[n] = _tensor(n, kind, [sizes.size(d, n) for d in dims], g)
            return made

        yield f"named by the docstring ({', '.join(need)})", ["named"], named


def _named_in(message: str, params: Any, inputs: dict[str, Any]) -> list[str]:
    """Parameters the refusal names that the inputs lack, in the order it names them."""
    found = [(m.start(), n) for n in params if n not in inputs for m in [re.search(rf"\b{n}\b", message)] if m]
    return [n for _, n in sorted(found)]


def retried(inputs: dict[str, Any], params: Any, message: str, config: Any, model: Any = None) -> dict[str, Any] | None:
    """The inputs changed as the model's refusal asks: an input it names (RAG's context without
    a retriever, ViLT's pixels: the first named, made from the docstring's shape), pixels where a
    forward dereferences the ones it was not given (TVP's), a language per token where it knows
    none (X-MOD's adapters: the first language), embeddings of the model's width where it takes
    no ids (Qwen3-Omni's code predictor), boxes as fractions where integer ones cannot be
    averaged (UDOP's), a vector of the width a layer's weights ask for (a forward with no
    docstring: the last input of the width the refusal quotes)."""
    import torch

    if model is not None:
        shapes = doc_shapes(model.forward)
        asked = [n for n in _named_in(message, params, inputs) if n in shapes]
        if not asked and "'NoneType' object has no attribute" in message:
            # pixels dereferenced; where the forward takes none, a clip (PE audio-video's encoder
            # reads its video beside the audio it was given)
            if "pixel_values" in shapes:
                asked = [n for n in ("pixel_values",) if n not in inputs]
            elif "pixel_values_videos" in shapes and "pixel_values_videos" not in inputs:
                asked = ["pixel_values_videos"]
        if asked:
            kind, dims = shapes[asked[0]]
            sizes = Sizes(config, shapes, inputs)
            shape = [sizes.size(d, asked[0]) for d in dims]
            frames = _first(config, ("num_frames",), 0)
            if asked[0] == "pixel_values" and len(shape) == 4 and frames:  # a video model's clip (TVP's)
                shape.insert(1, frames)
            made = _tensor(asked[0], kind, shape, torch.Generator().manual_seed(6), "num_channels" in dims)
            return {**inputs, asked[0]: made}

    ids = inputs.get("input_ids")
    if "language" in message.lower() and "lang_ids" in params and "lang_ids" not in inputs and ids is not None:
        return {**inputs, "lang_ids": torch.zeros_like(ids)}
    if "input_ids` is expected to be `None`" in message and ids is not None and "inputs_embeds" in params:
        width = _first(config, _WIDTHS, 64)
        g = torch.Generator().manual_seed(4)
        embeds = torch.randn(*ids.shape, width, generator=g)
        return {**{k: v for k, v in inputs.items() if k != "input_ids"}, "inputs_embeds": embeds}
    said = re.search(
        r"normalized_shape=\[(\d+)\], expected input with shape \[\*, \d+\], but got input of size\[([\d, ]+)\]",
        message,
    )
    # features of another width than the config's bins (a codec's semantic encoder): the width
    # asked; a waveform (B, T) has no width to change (SpeechT5's is resized by sweep_audio_text)
    if said and len(said.group(2).split(",")) >= 3:
        width, got = int(said.group(1)), [int(n) for n in said.group(2).split(",")]
        for name, value in inputs.items():
            if hasattr(value, "shape") and list(value.shape) == got and value.is_floating_point():
                g = torch.Generator().manual_seed(5)
                return {**inputs, name: torch.randn(*got[:-1], width, generator=g)}
    if "too many indices for tensor of dimension 0" in message:  # a forward of one prompt reads [0] of each
        ones = {n: v[None] for n, v in inputs.items() if hasattr(v, "dim") and v.dim() == 1}
        if ones:  # (Jev's marks, option counts and question types: the docstring leaves out that axis)
            return {**inputs, **ones}
    if "could not infer output dtype" in message and "Long" in message:  # boxes as fractions of the page
        boxes = [n for n, v in inputs.items() if "bbox" in n and hasattr(v, "dtype") and not v.is_floating_point()]
        if boxes:
            return {**inputs, **{n: inputs[n].float() / 1000 for n in boxes}}
    said = re.search(r"mat1 and mat2 shapes cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\)", message)
    if said:
        rows, cols, want = int(said.group(1)), int(said.group(2)), int(said.group(3))
        fits = [
            n
            for n, v in inputs.items()
            if hasattr(v, "dim")
            and v.is_floating_point()
            and v.dim() >= 2
            and v.shape[-1] == cols
            and v.numel() // cols == rows
        ]
        if fits and want != cols:
            value = inputs[fits[-1]]
            g = torch.Generator().manual_seed(7)
            return {**inputs, fits[-1]: torch.randn(*value.shape[:-1], want, generator=g)}
    return None


def reason(params: Any) -> str | None:
    """Why a forward cannot run from a config alone, in one line (None where nothing is known):
    a video tracker's forward takes an inference session, which ``sweep_sessions`` fills from
    frames and a prompt where the model's module defines the session class; this is said only of
    a tracker whose module does not (its image model is still captured as its own family)."""
    session = params.get("inference_session")
    if session is not None and session.default is inspect.Parameter.empty:
        return (
            "takes an inference session (frames and prompts a processor adds, frame by frame) and "
            "its module defines no session class to fill from a config; its image model is captured as its own family"
        )
    return None


def head_width(config: Any) -> None:
    """A head over a text model of its own (Jev's decision head: ``hidden_size`` beside
    ``text_config``, no other part) reads the text model's output: its width follows the text
    model's when the config is shrunk (the default pairs 4096 with 4096)."""
    from attnviz.bench.sweep_inputs import sub_configs

    text = read(config, "text_config")
    if text is None or len(sub_configs(config)) != 2 or "hidden_size" not in vars(config):
        return
    width = read(text, "hidden_size")
    if is_int(width) and read(config, "hidden_size") != width:
        config.hidden_size = width
