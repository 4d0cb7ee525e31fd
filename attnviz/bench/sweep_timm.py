"""Config repairs for families built on timm (the ``sweep`` extra): a timm backbone's default
config names no model (``backbone=None``, which TimmBackbone refuses); it gets a small timm vision
transformer, built without weights (nothing is downloaded: TimmBackbone's ``pretrained`` is off
unless ``from_pretrained`` asks), so the sweep sees its attention."""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from attnviz.bench.sweep_configs import put, read

#: A timm model with attention and a features-only path (5.5 M parameters), and the image it takes.
TIMM_BACKBONE = "vit_tiny_patch16_224"
TIMM_IMAGE = 224


def timm_backbone_named(config: Any) -> None:
    """A timm backbone config that names no timm model gets ``TIMM_BACKBONE``, and the image size
    that model is fixed to (its position table has 14 x 14 patches)."""
    if read(config, "model_type") != "timm_backbone" or read(config, "backbone") is not None:
        return
    put(config, "backbone", TIMM_BACKBONE)
    put(config, "image_size", TIMM_IMAGE)


def timm_architecture_misspelled(config: Any) -> None:
    """A timm wrapper config whose default names its model under a misspelled key (EdgeTAM's
    ``"archirecture": "repvit_m1"`` in transformers 5.23): the wrapper reads ``architecture``,
    builds its default ResNet-50, whose 1024 channels the neck (sized for RepViT's 384) refuses.
    The model the config meant is built."""
    meant = vars(config).get("archirecture")
    if (
        read(config, "model_type") == "timm_wrapper"
        and isinstance(meant, str)
        and read(config, "architecture") != meant
    ):
        put(config, "architecture", meant)


#: A timm vision transformer's size for the sweep (upstream's PE testers use the same width and
#: depth): its keyword names are the ones timm's vision transformers take (ViT, Eva/PE).
SMALL_TOWER: dict[str, Any] = {"embed_dim": 64, "depth": 2, "num_heads": 4}
#: Patches on each side of the small tower's image: 16 patch tokens, a square for any pooling.
TOWER_PATCHES = 4
#: The tower a model gets that reads a vision transformer's ``model_args`` but names none: PE
#: core, the timm transformer transformers' Perception Encoder families name (shrunk by the rule
#: below like any tower fixed to a large image).
VIT_TOWER = "vit_pe_core_large_patch14_336"


def _fixed_size(architecture: str) -> bool:
    """Whether timm's own config for ``architecture`` fixes its input image size (a position table
    or rotary grid built for one size; its patch embedding refuses any other)."""
    try:  # (imported by name: timm is the optional ``sweep`` extra, which the type check lacks)
        models = importlib.import_module("timm.models")
    except ImportError:
        return False
    try:
        cfg = models.get_pretrained_cfg(architecture)
    except Exception:  # noqa: BLE001 - a name timm does not know (a hub path): nothing to say
        return False
    return bool(cfg is not None and getattr(cfg, "fixed_input_size", False))


def _patch_size(architecture: str, args: dict[str, Any]) -> tuple[int, int] | None:
    """The patch size of ``architecture`` built at ``args`` (a small probe, no weights), or None
    where timm refuses those arguments (not a vision transformer: a ResNet has no ``embed_dim``)."""
    timm = importlib.import_module("timm")
    try:
        probe = timm.create_model(architecture, pretrained=False, **args)
    except Exception:  # noqa: BLE001 - any refusal (a ResNet has no embed_dim): not a transformer to shrink
        return None
    patch = getattr(getattr(probe, "patch_embed", None), "patch_size", None)
    if not isinstance(patch, (tuple, list)) or len(patch) != 2:
        return None
    return int(patch[0]), int(patch[1])


def timm_tower_small(config: Any) -> None:
    """A timm wrapper tower fixed to a large image size (PE core at 336 px: 300 M parameters, and
    any other frame size refused: "Input height (32) doesn't match model (336)") is built small
    through its ``model_args``: ``SMALL_TOWER``'s width and depth at ``TOWER_PATCHES`` patches a
    side. The image size is written on the wrapper's config too, where the sweep reads the size of
    the images and frames it makes. Model arguments the config already sets are kept."""
    if read(config, "model_type") != "timm_wrapper":
        return
    architecture = read(config, "architecture")
    args = dict(read(config, "model_args") or {})
    if not isinstance(architecture, str) or "img_size" in args or not _fixed_size(architecture):
        return
    small = {**SMALL_TOWER, **{k: v for k, v in args.items() if k not in SMALL_TOWER}}
    patch = _patch_size(architecture, small)
    if patch is None:
        return
    side = (TOWER_PATCHES * patch[0], TOWER_PATCHES * patch[1])
    put(config, "model_args", {**small, "img_size": side})
    put(config, "image_size", side[0])


def _reads_model_args(model_type: str) -> bool:
    """Whether a family's modelling code reads its timm tower's ``model_args`` (PerceptionLM's
    projector is sized ``vision_config.model_args["embed_dim"]``)."""
    name = model_type.replace("-", "_")
    try:
        module = importlib.import_module(f"transformers.models.{name}.modeling_{name}")
        return ".model_args[" in inspect.getsource(module)
    except (ImportError, OSError, TypeError):
        return False


def timm_tower_named(config: Any) -> None:
    """A model whose code reads its timm tower's ``model_args`` (a vision transformer's width) whose
    default config sets none and names only the wrapper's default ResNet-50 (PerceptionLM: "'NoneType'
    object is not subscriptable" at build) gets ``VIT_TOWER``; ``timm_tower_small`` then sizes it."""
    model_type = read(config, "model_type")
    if not isinstance(model_type, str):
        return
    towers = [
        value
        for value in vars(config).values()
        if read(value, "model_type") == "timm_wrapper" and read(value, "model_args") is None
    ]
    if towers and _reads_model_args(model_type):
        for tower in towers:
            put(tower, "architecture", VIT_TOWER)


REPAIRS = (timm_backbone_named, timm_architecture_misspelled, timm_tower_named, timm_tower_small)
