"""Image inputs of the models that read an image as discrete tokens or through an aligner
(issue 35): Chameleon and Emu3, whose only image input is a VQ-GAN tokenizer (``vq_config``, no
vision tower), GLM-Image, whose VQ turns its vision tower's features into token ids written into
``input_ids``, and Janus, whose aligner maps its tower's rows into the text embeddings.

Config repairs (``REPAIRS``, run by ``sweep_image_repairs`` on every config inside the model's):
a VQ tokenizer made small with its tied widths kept, a codebook written into ``input_ids`` kept
inside the vocabulary, an aligner's output as wide as the text model. Input rules, hooked into
``sweep_inputs``: a VQ tokenizer is an image input (``is_image_input``), its image is a small
latent grid times its downsampling (``image_side``), a model that makes discrete image tokens
gets one placeholder per token (``token_rows``), and a forward that counts the grid of the image
it generates among its grids gets one per sample (``with_target_grids``).
"""

from __future__ import annotations

import inspect
from typing import Any

from attnviz.bench.sweep_configs import is_int, modelling_source, put, read

#: GroupNorm's 32 groups: the narrowest a VQ-GAN's first level can be.
VQ_BASE_CHANNELS = 32
#: Latent positions per side of the image a VQ tokenizer is given: 4 x 4 codes (Chameleon's
#: 16, Emu3's 4 x (4 + 1) with its end-of-row tokens): seconds on one CPU where the default
#: 512-pixel image takes minutes.
VQ_LATENT_SIDE = 4
#: A codebook whose codes are written into ``input_ids`` (GLM-Image's), shrunk to fit below the
#: (shrunk) vocabulary's special ids.
CODEBOOK = 64


def _vq_tokenizer(config: Any) -> Any:
    """The VQ-GAN that tokenizes a model's pixels itself (Chameleon's, Emu3's: a ``vq_config``
    and no vision tower), else None (Janus's VQ only generates images; GLM-Image's encodes its
    tower's features)."""
    vq = read(config, "vq_config")
    if vq is None or read(config, "vision_config") is not None:
        return None
    return vq if isinstance(read(vq, "channel_multiplier"), (list, tuple)) else None


def is_image_input(config: Any) -> bool:
    """Whether ``config`` takes pixels through a VQ tokenizer of its own (an image input where
    a multimodal model would name a ``vision_config``)."""
    return _vq_tokenizer(config) is not None


def image_side(config: Any) -> int | None:
    """The side in pixels of the image a VQ tokenizer is given: ``VQ_LATENT_SIDE`` codes, each
    its encoder's downsampling (2 per level after the first) wide; None without one."""
    vq = _vq_tokenizer(config)
    if vq is None:
        return None
    return int(VQ_LATENT_SIDE * 2 ** (len(read(vq, "channel_multiplier")) - 1))


def small_vq(config: Any) -> None:
    """A model's VQ tokenizer (``_vq_tokenizer``) at ``VQ_BASE_CHANNELS``, its ``resolution``
    (the image it is documented to take) that of ``image_side``, and its attention width
    (Emu3's ``hidden_size``) still the channels of the level it attends at: base channels times
    that level's multiplier (the default's 1024 is 256 x 4; left at the shrunk 64, the attention
    refuses the 128 channels the level has)."""
    vq = _vq_tokenizer(config)
    if vq is None or not is_int(read(vq, "base_channels")):
        return
    put(vq, "base_channels", min(read(vq, "base_channels"), VQ_BASE_CHANNELS))
    side = image_side(config)
    if is_int(read(vq, "resolution")) and side is not None:
        put(vq, "resolution", side)
    multipliers = list(read(vq, "channel_multiplier"))
    levels = read(vq, "attn_resolutions") or []
    attended = {int(multipliers[i]) for i in levels if is_int(i) and 0 <= i < len(multipliers)}
    if is_int(read(vq, "hidden_size")) and len(attended) == 1:
        put(vq, "hidden_size", read(vq, "base_channels") * attended.pop())


def codes_as_ids(config: Any) -> None:
    """A VQ whose codes the model writes into ``input_ids`` in place of its image placeholders
    (GLM-Image's ``input_ids.masked_scatter``) and then embeds as text: its codebook within the
    (shrunk) vocabulary, or the embedding reads past its table."""
    vq, text = read(config, "vq_config"), read(config, "text_config")
    if vq is None or text is None or not is_int(read(vq, "num_embeddings")):
        return
    if "input_ids.masked_scatter(" in modelling_source(config):
        put(vq, "num_embeddings", min(read(vq, "num_embeddings"), CODEBOOK))


def aligner_width(config: Any) -> None:
    """A vision tower whose rows an aligner maps into the text model's embeddings (Janus's
    ``aligner``: ``Linear(hidden_size, projection_dim)``) projects to the text model's width;
    the default pairs a 2048-wide aligner with a 4096-wide text model (a checkpoint never
    does), so the image's rows were counted 32 times over."""
    vision, text = read(config, "vision_config"), read(config, "text_config")
    width = read(text, "hidden_size") if text is not None else None
    if vision is None or not is_int(width) or not is_int(read(vision, "projection_dim")):
        return
    if read(vision, "projection_dim") != width and "self.aligner(" in modelling_source(config):
        put(vision, "projection_dim", width)


REPAIRS = (small_vq, codes_as_ids, aligner_width)


def with_target_grids(params: Any, media: dict[str, Any]) -> dict[str, Any]:
    """Grid-patch inputs for a forward that counts, per sample, its source images' grids and
    then the grid of the image it generates (GLM-Image's ``images_per_sample``: "including target
    grids"): each sample's grid followed by a target grid of the same size, two per sample.
    Other forwards' inputs are returned as they are."""
    import torch

    grid_name = next((n for n in ("image_grid_thw", "grid_thw") if n in media), None)
    if "images_per_sample" not in params or grid_name is None:
        return media
    grids = media[grid_name]
    paired = torch.stack([grids, grids], 1).reshape(-1, grids.shape[-1])  # source, target, per sample
    per_sample = torch.full((grids.shape[0],), 2, dtype=torch.long)
    return {**media, grid_name: paired, "images_per_sample": per_sample}


def token_rows(model: Any, media: dict[str, Any]) -> int | None:
    """Discrete image tokens (in all) a model's own ``get_image_tokens`` makes of ``media``: the
    placeholders its text must hold (its ``get_image_features`` may return a (C, H, W) map per
    image, GLM-Image's, whose rows are not its tokens). From the pixels, or (GLM-Image's) from
    the features its ``get_image_features`` makes of them. None for a model without one."""
    import torch

    from attnviz.bench.sweep_inputs import _call_kwargs, _owner

    owner = _owner(model, "get_image_tokens")
    if owner is None:
        return None
    tokens_of = owner.get_image_tokens
    with torch.no_grad():
        if "pixel_values" in inspect.signature(tokens_of).parameters:
            tokens = tokens_of(**_call_kwargs(tokens_of, media))
        else:
            features_of = getattr(owner, "get_image_features", None)
            if features_of is None:
                return None
            features = features_of(**_call_kwargs(features_of, media))
            tokens = tokens_of(getattr(features, "pooler_output", features))
    return int(tokens.numel()) if isinstance(tokens, torch.Tensor) else None
