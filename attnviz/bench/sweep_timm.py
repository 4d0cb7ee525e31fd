"""Config repairs for families built on timm (the ``sweep`` extra): a timm backbone's default
config names no model (``backbone=None``, which TimmBackbone refuses); it gets a small timm vision
transformer, built without weights (nothing is downloaded: TimmBackbone's ``pretrained`` is off
unless ``from_pretrained`` asks), so the sweep sees its attention."""

from __future__ import annotations

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


REPAIRS = (timm_backbone_named, timm_architecture_misspelled)
