"""Inputs a transformers model accepts, made from its forward signature and its config alone (no
processor, no download): text ids that avoid the config's special tokens, image pixels with as
many image tokens in the text as the model's own vision features have rows, audio features with
the sizes the config declares, video frames, decoder ids for an encoder-decoder.

Where a model could take its pixels or features in more than one layout (4-D or 5-D pixels, a
spectrogram as (bins, frames) or (frames, bins)), the layouts are tried in order and the first
that the model runs is kept: ``build(model, config)`` returns those inputs and the model's
output on them, or the first layout's failure as one line. Used by the capture sweep
(``capture_sweep.py``) and its tests.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from attnviz.bench import (
    sweep_config_build,
    sweep_extras,
    sweep_grouped,
    sweep_image_tokens,
    sweep_named,
    sweep_sessions,
)

#: Text tokens around the media: a few before, the rest after (the second row's last two are
#: padding, so the media are never padding).
TEXT_BEFORE, TEXT_AFTER, PADDED = 3, 5, 2
BATCH = 2
#: The seed set before every forward the sweep runs: a model that samples in its forward
#: (VibeVoice's sigma-VAE noise on its acoustic latents) reports maps of the same run the
#: capture records.
FORWARD_SEED = 0
#: Families whose ``token_type_ids`` mark the prefix (0) and suffix (1) of a prefix-LM, where the
#: others mark image tokens with 1 (Gemma 3's bidirectional blocks).
PREFIX_TOKEN_TYPES = ("paligemma", "colpali", "shieldgemma2")

_CHANNELS = ("num_channels", "in_channels", "in_chans", "num_input_channels", "channels")
_BINS = ("num_mel_bins", "feature_size", "n_mels", "input_feat_size", "num_mel_filters", "input_dim")
_START = ("vision_start_token_id", "boi_token_id", "boi_token_index", "image_start_token_id")
_END = ("vision_end_token_id", "eoi_token_id", "eoi_token_index", "image_end_token_id")


@dataclass
class Built:
    """Inputs a model ran on, what kinds they hold ("text", "image", "audio", ...), and the
    model's output on them (``output_attentions=True``)."""

    inputs: dict[str, Any]
    kinds: list[str]
    output: Any = None
    tried: list[str] = field(default_factory=list)
    #: The first layout tried that failed, when another was kept (why a model ran on text only).
    skipped: str = ""
    failures: list[str] = field(default_factory=list)


def _read(config: Any, name: str) -> Any:
    try:
        return getattr(config, name, None)
    except Exception:  # noqa: BLE001 - per-layer attributes refuse a global read
        return None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def sub_configs(config: Any) -> list[Any]:
    """``config`` and every config inside it, outer first."""
    out: list[Any] = []
    pending = [config]
    while pending:
        c = pending.pop(0)
        if c is None or any(c is seen for seen in out):
            continue
        out.append(c)
        for value in list(vars(c).values()):
            for sub in value if isinstance(value, (list, tuple)) else (value,):
                if hasattr(sub, "to_dict") and hasattr(sub, "model_type"):
                    pending.append(sub)
    return out


def first(configs: list[Any], names: tuple[str, ...], default: Any = None) -> Any:
    """The first of ``names`` set in the first config that has one."""
    for c in configs:
        for name in names:
            value = _read(c, name)
            if value is not None:
                return value
    return default


def special_ids(config: Any) -> set[int]:
    """Every token id the config names (``*_token_id``, ``*_token_index``): random text avoids
    them, so a model never finds an image token it was not given."""
    ids: set[int] = set()
    for c in sub_configs(config):
        for name in dir(c):
            if name.endswith(("_token_id", "_token_index", "_token_ids")) and not name.startswith("_"):
                value = _read(c, name)
                for v in value if isinstance(value, (list, tuple)) else (value,):
                    if _is_int(v):
                        ids.add(int(v))
    return ids


def _vocab(config: Any) -> int:
    text = sweep_config_build.text_config(config)
    for c in (text, config):
        value = _read(c, "vocab_size")
        if _is_int(value) and value > 0:
            return int(value)
    return 1000


def _size(value: Any, default: int = 224) -> int:
    if isinstance(value, dict):
        value = value.get("height") or value.get("shortest_edge") or next(iter(value.values()), None)
    if isinstance(value, (list, tuple)):
        value = value[-1] if value else None
    return int(value) if _is_int(value) and value > 0 else default


def _media_config(config: Any, names: tuple[str, ...]) -> list[Any]:
    """The configs of a tower (``vision_config``, ``audio_config``...) first, then the model's."""
    towers = [_read(config, n) for n in names]
    return [c for c in towers if c is not None] + sub_configs(config)


def _feature_rows(features: Any) -> int:
    """How many embedding rows a ``get_*_features`` result holds (a tensor, a list of them, or
    an output whose ``pooler_output`` or ``last_hidden_state`` is one)."""
    import torch

    for attr in ("pooler_output", "last_hidden_state"):
        inner = getattr(features, attr, None) if not isinstance(features, (torch.Tensor, list, tuple)) else None
        if inner is not None:
            features = inner
            break
    if isinstance(features, torch.Tensor):
        return int(features.numel() // max(1, features.shape[-1])) if features.dim() >= 2 else int(features.numel())
    if isinstance(features, (list, tuple)):
        return sum(_feature_rows(f) for f in features)
    raise TypeError(f"unexpected features: {type(features).__name__}")


def _owner(model: Any, method: str) -> Any:
    for candidate in (model, getattr(model, "model", None)):
        if candidate is not None and callable(getattr(candidate, method, None)):
            return candidate
    return None


def _call_kwargs(fn: Callable[..., Any], given: dict[str, Any]) -> dict[str, Any]:
    params = inspect.signature(fn).parameters
    accepts_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    return {k: v for k, v in given.items() if k in params or (accepts_any and k.endswith(("_thw", "_sizes")))}


def media_rows(model: Any, method: str, media: dict[str, Any]) -> int | None:
    """Rows of embeddings the model's own ``get_image_features`` (or audio, video) makes of
    ``media``: the number of placeholder tokens the text must hold. None where it has none."""
    import torch

    owner = _owner(model, method)
    if owner is None:
        return None
    fn = getattr(owner, method)
    with torch.no_grad():
        return _feature_rows(fn(**_call_kwargs(fn, media)))


# ----------------------------------------------------------------------------- media layouts


def image_layouts(config: Any, params: Any, generator: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """Pixel inputs a model may take, in the order they are tried."""
    import torch

    configs = _media_config(config, ("vision_config", "visual_config", "image_config", "backbone_config"))
    channels = int(first(configs, _CHANNELS, 3))
    channels = channels if 0 < channels <= 4 else 3
    # a VQ tokenizer's image is a small grid of its codes (sweep_image_tokens)
    size = _size(first(configs, ("image_size", "img_size", "input_size")), sweep_image_tokens.image_side(config) or 224)
    patch = _size(first(configs, ("patch_size",)), 16)
    grid_name = next((n for n in ("image_grid_thw", "grid_thw") if n in params), None)
    if grid_name is not None:  # Qwen2-VL's flattened patches: (patches, C * T * P * P)
        # a vision tower of its own takes them as ``hidden_states`` (Qwen2-VL's, GLM-4V's)
        name = "pixel_values" if "pixel_values" in params else "hidden_states"
        temporal = int(first(configs, ("temporal_patch_size", "patch_temporal"), 1))  # Muse Spark's name
        merge = first(configs, ("spatial_merge_size", "merge_size", "merge_kernel_size"), 2)
        merge = int(merge[0] if isinstance(merge, (list, tuple)) else merge)  # Kimi's is (2, 2)
        side = 2 * merge
        grid = {grid_name: torch.tensor([[1, side, side]] * BATCH)}
        if "image_merge_sizes" in params:  # VideoLLaMA 3: each image's own merge
            grid["image_merge_sizes"] = torch.tensor([merge] * BATCH)
        flat = torch.randn(BATCH * side * side, channels * temporal * patch * patch, generator=generator)
        # with a target grid per sample where the forward counts the one it generates (GLM-Image's)
        yield "grid patches", sweep_image_tokens.with_target_grids(params, {name: flat, **grid})
        # patches kept as pictures, (patches, C, P, P) (Kimi-K2.5's tower)
        square = torch.randn(BATCH * side * side, channels, patch, patch, generator=generator)
        yield "grid patches (N, C, P, P)", {name: square, **grid}
    if "target_sizes" in params:  # NaViT-packed images (MiniCPM-V's), with text around them
        from attnviz.bench.sweep_images import packed

        yield packed(config)
    pixels = torch.randn(BATCH, channels, size, size, generator=generator)
    yield "pixels (B, C, H, W)", {"pixel_values": pixels}
    extra: dict[str, Any] = {}
    if "image_sizes" in params:  # Pixtral's, LLaVA-NeXT's: each image's own size
        extra["image_sizes"] = torch.tensor([[size, size]] * BATCH)
        yield "pixels (B, C, H, W) with sizes", {"pixel_values": pixels, **extra}
    frames = first(configs, ("num_frames", "frames_per_clip"))
    if _is_int(frames) and frames > 0:  # a video model's clip: (B, T, C, H, W)
        yield "frames (B, T, C, H, W)", {"pixel_values": torch.randn(BATCH, int(frames), channels, size, size)}
    tiles = first(configs, ("max_num_tiles",))
    if "aspect_ratio_ids" in params and _is_int(tiles):  # Mllama's tiles: (B, images, tiles, C, H, W)
        tiled = torch.randn(BATCH, 1, int(tiles), channels, size, size, generator=generator)
        ratio_mask = torch.zeros(BATCH, 1, int(tiles), dtype=torch.long)
        ratio_mask[:, :, 0] = 1
        yield (
            "tiles",
            {
                "pixel_values": tiled,
                "aspect_ratio_ids": torch.ones(BATCH, 1, dtype=torch.long),
                "aspect_ratio_mask": ratio_mask,
            },
        )
    for patches in (1, 5, 3, 2):  # one image as patches (Idefics3, LLaVA-NeXT's crops), a pair (LightGlue's)
        five = torch.randn(BATCH, patches, channels, size, size, generator=generator)
        yield f"pixels (B, {patches}, C, H, W)", {"pixel_values": five, **extra}


def audio_layouts(config: Any, model: Any, params: Any, generator: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """Audio inputs a model may take: features (spectrogram) or raw samples."""
    import torch

    configs = _media_config(config, ("audio_config", "encoder_config", "speech_config", "audio_encoder_config"))
    main = getattr(model, "main_input_name", "")
    if "input_features" in params:
        bins = int(first(configs, _BINS, 80))
        positions = first(configs, ("max_source_positions",))
        frames = 2 * int(positions) if _is_int(positions) and positions <= 3000 else 64
        mask_name = next(
            (n for n in ("feature_attention_mask", "input_features_mask", "audio_attention_mask") if n in params), None
        )
        for label, shape in (
            ("(B, bins, frames)", (BATCH, bins, frames)),
            ("(B, frames, bins)", (BATCH, frames, bins)),
            ("(B, 1, frames, bins)", (BATCH, 1, frames, bins)),  # CLAP's
        ):
            features = torch.randn(*shape, generator=generator)
            extra: dict[str, Any] = {}
            if mask_name is not None:
                extra[mask_name] = torch.ones(BATCH, frames, dtype=torch.long)
            elif main == "input_features" and "attention_mask" in params:
                extra["attention_mask"] = torch.ones(BATCH, frames, dtype=torch.long)
            yield f"features {label}", {"input_features": features, **extra}
    if "input_values" in params:
        yield "samples (B, T)", {"input_values": torch.randn(BATCH, 4000, generator=generator)}
        yield "samples (B, 1, T)", {"input_values": torch.randn(BATCH, 1, 4000, generator=generator)}
        bins, frames = first(configs, _BINS), first(configs, ("max_length",))
        if _is_int(bins) and _is_int(frames) and frames <= 3000:  # the AST's spectrogram, (B, frames, bins)
            features = torch.randn(BATCH, int(frames), int(bins), generator=generator)
            yield "features as values (B, frames, bins)", {"input_values": features}
    if "audio_mel" in params:  # Gemma 3n's audio tower: (B, frames, bins), True where padded
        bins = int(first(configs, _BINS + ("input_feat_size",), 128))
        mel = torch.randn(BATCH, 64, bins, generator=generator)
        yield "mel (B, frames, bins)", {"audio_mel": mel, "audio_mel_mask": torch.zeros(BATCH, 64, dtype=torch.bool)}


# ----------------------------------------------------------------------------- text around media


def _text_ids(config: Any, vocab: int, length: int, generator: Any) -> Any:
    import torch

    avoid = special_ids(config)
    top = max(4, min(vocab, 1000))
    pool = torch.tensor([i for i in range(3, top) if i not in avoid] or [3])
    return pool[torch.randint(0, len(pool), (BATCH, length), generator=generator)]


def _token(configs: list[Any], names: tuple[str, ...]) -> int | None:
    value = first(configs, names)
    return int(value) if _is_int(value) and value >= 0 else None


def text_with_media(
    config: Any, params: Any, placeholders: list[tuple[str, int, int]], generator: Any
) -> dict[str, Any]:
    """``input_ids`` (B, L) with each placeholder block (kind, token id, count) between a few
    random tokens, the second row's last tokens padding; ``token_type_ids`` and
    ``mm_token_type_ids`` where the forward takes them and media are present."""
    import torch

    configs = sub_configs(config)
    vocab = _vocab(config)
    ids = [_text_ids(config, vocab, TEXT_BEFORE, generator)]
    kinds = [torch.zeros(BATCH, TEXT_BEFORE, dtype=torch.long)]
    kind_code = {"image": 1, "video": 2, "audio": 3}
    for kind, token, count in placeholders:
        start, end = (_token(configs, _START), _token(configs, _END)) if kind == "image" else (None, None)
        block = ([start] if start is not None else []) + [token] * count + ([end] if end is not None else [])
        ids.append(torch.tensor([block] * BATCH))
        codes = [0] * (start is not None) + [kind_code[kind]] * count + [0] * (end is not None)
        kinds.append(torch.tensor([codes] * BATCH))
    ids.append(_text_ids(config, vocab, TEXT_AFTER, generator))
    kinds.append(torch.zeros(BATCH, TEXT_AFTER, dtype=torch.long))
    input_ids, media = torch.cat(ids, 1), torch.cat(kinds, 1)
    out: dict[str, Any] = {"input_ids": input_ids}
    if "attention_mask" in params:
        mask = torch.ones_like(input_ids)
        mask[1, -PADDED:] = 0
        out["attention_mask"] = mask
    if placeholders and "image_embeds_position_mask" in params:  # Kosmos-2: where the image goes
        out["image_embeds_position_mask"] = (media == 1).long()
    if placeholders and "mm_token_type_ids" in params:
        out["mm_token_type_ids"] = media
    if placeholders and "token_type_ids" in params:
        if getattr(config, "model_type", "") in PREFIX_TOKEN_TYPES:  # prefix (media and prompt) 0, suffix 1
            types = torch.zeros_like(input_ids)
            types[:, -TEXT_AFTER + 1 :] = 1
        else:
            types = (media == 1).long()
        out["token_type_ids"] = types
    return out


def _placeholder(config: Any, kind: str) -> int | None:
    names = {
        "image": ("image_token_id", "image_token_index", "image_token"),
        "video": ("video_token_id", "video_token_index"),
        "audio": ("audio_token_id", "audio_token_index", "audio_token"),
    }[kind]
    return _token(sub_configs(config), names)


# ----------------------------------------------------------------------------- the plans


def _rows_said(model: Any, inputs: dict[str, Any]) -> int:
    """Placeholder tokens per batch element, as the model's own refusal states them ("...
    features and ... tokens do not match, tokens: 2, features: 64"), for a model whose feature
    count has no method of its own (Qwen2-Audio's comes from its convolutions' lengths)."""
    import re

    import torch

    try:
        with torch.no_grad():
            model(**inputs)
    except Exception as exc:  # noqa: BLE001 - the refusal is the answer
        said = re.search(r"tokens: (\d+), features: (\d+)", str(exc))
        if said:
            return int(said.group(2)) // BATCH
        raise
    return 1


def plans(model: Any, config: Any) -> Iterator[tuple[str, list[str], Callable[[], dict[str, Any]]]]:
    """Every set of inputs worth trying for ``model``, most likely first: (label, kinds, make)."""
    import torch

    params = inspect.signature(model.forward).parameters
    main = getattr(model, "main_input_name", "input_ids")

    def decoder(out: dict[str, Any]) -> dict[str, Any]:
        if getattr(config, "is_encoder_decoder", False) and "decoder_input_ids" in params:
            g = torch.Generator().manual_seed(1)
            out["decoder_input_ids"] = _text_ids(config, _vocab(config), 5, g)
        return out

    def with_text(label: str, kind: str, media: dict[str, Any], method: str) -> Callable[[], dict[str, Any]]:
        def make() -> dict[str, Any]:
            token = _placeholder(config, kind)
            positions = sweep_extras.image_positions(config, params) if kind == "image" else None
            if positions is not None and "input_ids" in params:  # positions marked by a mask, any token
                return assemble([(kind, min(set(range(3, 1000)) - special_ids(config)), positions)])
            if token is None or "input_ids" not in params:
                return assemble([])
            try:  # one placeholder per discrete token, where the model makes them (a VQ's)
                rows = sweep_image_tokens.token_rows(model, media) if kind == "image" else None
                rows = media_rows(model, method, media) if rows is None else rows
            except Exception:  # noqa: BLE001 - the forward's own count is the next way to ask
                rows = None
            if rows is None and "cross_attention_mask" in params:
                return assemble([(kind, token, 1)])  # Mllama: one token per image, cross-attended
            if rows is None:
                rows = BATCH * _rows_said(model, assemble([(kind, token, 1)]))
            return assemble([(kind, token, rows // BATCH)])

        def assemble(blocks: list[tuple[str, int, int]]) -> dict[str, Any]:
            g = torch.Generator().manual_seed(0)
            text = text_with_media(config, params, blocks, g) if "input_ids" in params else {}
            if blocks and "cross_attention_mask" in params and "aspect_ratio_mask" in media:
                tiles = media["aspect_ratio_mask"].shape[-1]
                cross = torch.zeros(BATCH, text["input_ids"].shape[1], 1, tiles, dtype=torch.long)
                cross[:, :, :, 0] = 1
                text["cross_attention_mask"] = cross
            return sweep_extras.complete(config, params, decoder({**text, **media}), torch.Generator().manual_seed(2))

        return make

    from attnviz.bench import (  # they use this module's helpers
        sweep_audio_more,
        sweep_audio_text,
        sweep_media_audio,
        sweep_media_images,
        sweep_plans,
    )

    yield from sweep_sessions.plans(model, config, params)  # a video tracker's inference session
    yield from sweep_plans.extra_plans(model, config, params)
    g = torch.Generator().manual_seed(0)
    # a vision tower of its own takes pixels without text; a multimodal model says so in its config
    tower = "input_ids" not in params and ("pixel_values" in params or {"hidden_states", "grid_thw"} <= set(params))
    wants_image = tower or (
        "pixel_values" in params
        and (
            main == "pixel_values"
            or _read(config, "vision_config") is not None
            or sweep_image_tokens.is_image_input(config)  # a VQ tokenizer (Chameleon's, Emu3's)
        )
    )
    wants_audio = bool({"input_features", "input_values", "audio_mel"} & set(params))
    # a tower that names its pixels ``image`` (BridgeTower's)
    pixels_name = "image" if "image" in params and "pixel_values" not in params else "pixel_values"
    wants_image = wants_image or pixels_name == "image"
    if wants_image:
        for label, media in image_layouts(config, params, g):
            media = {pixels_name if k == "pixel_values" else k: v for k, v in media.items()}
            yield (
                f"image: {label}",
                ["text", "image"] if "input_ids" in params else ["image"],
                with_text(label, "image", media, "get_image_features"),
            )
    if wants_image:
        yield from sweep_media_images.late_plans(model, config, params)  # after the usual layouts
    if wants_audio:
        for label, media in audio_layouts(config, model, params, g):
            yield (
                f"audio: {label}",
                ["text", "audio"] if "input_ids" in params else ["audio"],
                with_text(label, "audio", media, "get_audio_features"),
            )
        yield from sweep_media_audio.plans(model, config, params, with_text)  # stacked widths, windows
    if "input_ids" in params:
        yield "text", ["text"], lambda: decoder(text_with_media(config, params, [], torch.Generator().manual_seed(0)))
    yield from sweep_audio_text.late_plans(model, config, params)  # audio codes, concatenated features
    if not {"input_ids", "pixel_values", "input_features", "input_values"} & set(params):
        yield from sweep_extras.embedding_plans(config, params)
        yield from sweep_extras.trajectory_plans(config, params)
    yield from sweep_audio_more.plans(model, config, params)  # a flow decoder's named inputs
    yield from sweep_named.plans(model, config, params, last=True)  # from the docstring alone, last


def ask_for_maps(model: Any, inputs: dict[str, Any] | None = None) -> dict[str, Any]:
    """``output_attentions=True`` where the forward takes it (a codec's, EnCodec's or DAC's, does
    not: it has no maps to report) and the inputs do not already say (``False`` where the
    model's own reporting of its maps fails: ``build``)."""
    if inputs is not None and "output_attentions" in inputs:
        return {}
    params = inspect.signature(model.forward).parameters
    takes = "output_attentions" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    return {"output_attentions": True} if takes else {}


def _with_maps_then_without(model: Any, config: Any) -> Iterator[tuple[str, list[str], Callable[[], dict[str, Any]]]]:
    """``plans``, then (where the forward takes ``output_attentions``) the same plans again
    without asking for the maps: a model whose own code for reporting them fails (Llama 4's
    tower reads ``output[2]`` of a layer that returns one tensor; MaskFormer's Swin subscripts
    the maps its layers return as None) runs and is captured, its calls checked against the
    recomputation alone. A forward that passes ``**kwargs`` on is asked for the maps too
    (``ask_for_maps``), so it gets the second round as well (EdgeTAM's timm tower refuses them)."""
    yield from plans(model, config)
    if not ask_for_maps(model):
        return
    for label, kinds, make in plans(model, config):
        yield f"{label}, no maps asked for", kinds, _maps_off(make)


def _maps_off(make: Callable[[], dict[str, Any]]) -> Callable[[], dict[str, Any]]:
    return lambda: {**make(), "output_attentions": False}


def build(model: Any, config: Any) -> Built | str:
    """The first of ``plans`` the model runs on (``output_attentions=True``, no grad), with its
    output; else one line: the first plan's failure."""
    import torch

    from attnviz.bench import sweep_audio_more, sweep_audio_text, sweep_plans

    params = inspect.signature(model.forward).parameters
    failures: list[str] = []
    tried: list[str] = []
    # the plans as made (and as sweep_plans.retried and sweep_named.retried ask), then, where none
    # ran, each resized as its refusal states (sweep_audio_text.retried): a model that runs on a
    # plan as made keeps it
    for resized in (False, True):
        for label, kinds, make in _with_maps_then_without(model, config):
            if not resized:
                tried.append(label)
            inputs, output = None, None
            for _ in range(4):  # the inputs, then as the model's refusal asks
                try:
                    if inputs is None:  # what the forward also takes by name (sweep_extras)
                        inputs = sweep_extras.complete(config, params, make(), torch.Generator().manual_seed(2))
                        inputs = sweep_grouped.fill(model, config, params, inputs)  # items per image
                        inputs = sweep_named.fill(model, config, params, inputs)  # what it still requires
                        inputs = sweep_audio_more.fill(model, config, params, inputs)  # embeddings by name
                    torch.manual_seed(FORWARD_SEED)  # as the capture's run: a model that samples noise
                    with torch.no_grad():
                        output = model(**inputs, **ask_for_maps(model, inputs))
                    break
                except Exception as exc:  # noqa: BLE001 - the next layout may be the one
                    again = None if inputs is None else sweep_plans.retried(inputs, params, str(exc))
                    if again is None and inputs is not None:
                        again = sweep_named.retried(inputs, params, str(exc), config, model)
                    if again is None and inputs is not None:
                        again = sweep_audio_more.retried(inputs, params, str(exc), config, model)
                    if again is None and resized and inputs is not None:
                        again = sweep_audio_text.retried(inputs, params, str(exc), config)
                    if again is None:
                        said = str(exc).splitlines()[0][:140] if str(exc) else ""
                        if not resized:
                            failures.append(f"{label}: {type(exc).__name__}: {said}")
                        break
                    inputs = again
            if output is None or inputs is None:
                continue
            if resized:
                tried.append(f"{label}, resized as refused")
            if inputs.get("pixel_values_videos") is not None and "video" not in kinds:  # a clip a retry added
                kinds = [*kinds, "video"]
            return Built(inputs, kinds, output, tried, failures[0] if failures else "", failures)
    if not failures:  # a stated reason where the forward cannot run from a config (sweep_named.reason)
        return sweep_named.reason(params) or (
            "its forward takes none of input_ids, pixel_values, input_features, input_values, hidden_states"
        )
    return sweep_audio_more.stated(failures) or failures[0]
